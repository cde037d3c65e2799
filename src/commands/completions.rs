//! `rgate completions SHELL` and `rgate man`: both are generated from the
//! clap definition in `cli.rs`, so they cannot drift from the real options.

use std::path::Path;

use anyhow::{Context, Result};
use clap::CommandFactory;
use clap_complete::Shell;

use crate::cli::{Cli, Global};
use crate::fsutil::{emit, write_atomic};

/// The name users type; completion scripts register themselves under it.
const BIN: &str = "rgate";

pub fn completions(shell: Shell, global: &Global) -> Result<u8> {
    let mut buf = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), BIN, &mut buf);
    emit(global.output.as_deref(), &to_text(buf)?)?;
    Ok(0)
}

/// The page for `rgate` alone to stdout; with `dir`, that page and one per
/// subcommand (`rgate-gate.1`, `rgate-baseline-update.1`, ...), which are
/// the pages the top one refers to.
pub fn man(dir: Option<&Path>, global: &Global) -> Result<u8> {
    let mut cmd = Cli::command();
    // `help` has no page of its own; listing it would name a missing one.
    disable_help_subcommands(&mut cmd);
    cmd.build();
    match dir {
        None => emit(global.output.as_deref(), &render(&cmd)?)?,
        Some(dir) => {
            let mut pages = Vec::new();
            collect(&cmd, &mut pages);
            for page in pages {
                let name = format!("{}.1", page.get_display_name().unwrap_or_else(|| page.get_name()));
                write_atomic(&dir.join(name), render(page)?.as_bytes())?;
            }
        }
    }
    Ok(0)
}

fn disable_help_subcommands(cmd: &mut clap::Command) {
    *cmd = std::mem::take(cmd).disable_help_subcommand(true);
    for sub in cmd.get_subcommands_mut() {
        disable_help_subcommands(sub);
    }
}

fn collect<'a>(cmd: &'a clap::Command, pages: &mut Vec<&'a clap::Command>) {
    pages.push(cmd);
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        collect(sub, pages);
    }
}

fn render(cmd: &clap::Command) -> Result<String> {
    let mut buf = Vec::new();
    clap_mangen::Man::new(cmd.clone())
        .source(format!("rgate {}", env!("CARGO_PKG_VERSION")))
        .render(&mut buf)
        .context("cannot render the man page")?;
    to_text(buf)
}

fn to_text(buf: Vec<u8>) -> Result<String> {
    String::from_utf8(buf).context("generated text is not UTF-8")
}
