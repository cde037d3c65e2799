//! `rgate gold validate|stats`, and the gold-building subcommands.

use anyhow::Result;

use crate::cli::{Global, GoldCommand, GoldPick};
use crate::fsutil::emit;
use crate::pipeline::{self, GoldOptions};
use crate::report::gold as report;

pub fn run(cmd: &GoldCommand, global: &Global) -> Result<u8> {
    match cmd {
        GoldCommand::Validate(p) => validate(p, global),
        GoldCommand::Stats(p) => gold_stats(p, global),
        GoldCommand::Sample(a) => super::goldbuild::sample(a, global),
        GoldCommand::Pool(a) => super::goldbuild::pool(a, global),
        GoldCommand::Label(a) => super::goldbuild::label(a, global),
        GoldCommand::Suggest(a) => super::goldbuild::suggest(a, global),
        GoldCommand::Import(a) => super::goldbuild::import(a, global),
        GoldCommand::Migrate(a) => super::goldbuild::migrate(a, global),
    }
}

fn options(pick: &GoldPick, global: &Global) -> GoldOptions {
    GoldOptions {
        config: global.config.clone(),
        gold: pick.gold.clone(),
        strata: pick.strata.clone(),
        log: pick.log.clone(),
        stratum_field: pick.stratum_field.clone(),
        text_field: pick.text_field.clone(),
    }
}

/// Exit 0 valid, 1 findings.
fn validate(pick: &GoldPick, global: &Global) -> Result<u8> {
    let v = pipeline::gold_validate(&options(pick, global))?;
    emit(global.output.as_deref(), &report::validation(&v, global.format()))?;
    Ok(if v.valid() { 0 } else { 1 })
}

fn gold_stats(pick: &GoldPick, global: &Global) -> Result<u8> {
    let stats = pipeline::gold_stats(&options(pick, global))?;
    emit(global.output.as_deref(), &report::stats(&stats, global.format()))?;
    Ok(0)
}
