//! `rgate gold validate|stats`, and the gold-building subcommands.

use anyhow::Result;

use super::output::Guard;
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
        GoldCommand::Judge(a) => super::goldbuild::judge(a, global),
        GoldCommand::Import(a) => super::goldbuild::import(a, global),
        GoldCommand::VerifySample(a) => super::goldbuild::verify_sample(a, global),
        GoldCommand::Migrate(a) => super::goldbuild::migrate(a, global),
        GoldCommand::Agreement(a) => super::goldbuild::agreement(a, global),
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

/// What `gold validate` and `gold stats` read: the config (found as the
/// pipeline finds it), the gold set, the strata file and the log.
fn guard(pick: &GoldPick, global: &Global) -> Guard {
    let mut g = Guard::default();
    let config = global.config.clone().or_else(crate::config::discover_here);
    g.maybe(config.as_ref(), "the config");
    let loaded = match &pick.gold {
        Some(_) => None,
        None => crate::config::Config::load(global.config.as_deref()).ok(),
    };
    g.maybe(
        pick.gold.as_ref().or(loaded.as_ref().map(|c| &c.gold)),
        "the gold set",
    )
    .maybe(
        pick.strata
            .as_ref()
            .or(loaded.as_ref().and_then(|c| c.strata.as_ref())),
        "the strata file",
    )
    .maybe(pick.log.as_ref(), "the log");
    g
}

/// Exit 0 valid, 1 findings.
fn validate(pick: &GoldPick, global: &Global) -> Result<u8> {
    guard(pick, global).check(global.output.as_deref())?;
    let v = pipeline::gold_validate(&options(pick, global))?;
    emit(global.output.as_deref(), &report::validation(&v, global.format()))?;
    Ok(if v.valid() { 0 } else { 1 })
}

fn gold_stats(pick: &GoldPick, global: &Global) -> Result<u8> {
    guard(pick, global).check(global.output.as_deref())?;
    let stats = pipeline::gold_stats(&options(pick, global))?;
    emit(global.output.as_deref(), &report::stats(&stats, global.format()))?;
    Ok(0)
}
