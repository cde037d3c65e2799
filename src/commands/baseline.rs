//! `rgate baseline update|show|history`.

use std::path::Path;

use anyhow::Result;

use super::gate::{emit_warnings, guard, overrides};
use super::output::Guard;
use super::{use_color, CliWatch};
use crate::baseline::Store;
use crate::cli::{BaselineCommand, Global, UpdateArgs};
use crate::config::{valid_retriever_name, Config};
use crate::diag::{usage_error, UserError};
use crate::fsutil::{emit, write_atomic};
use crate::origin::Ci;
use crate::pipeline::{self, UpdateOptions};
use crate::report::baseline as view;
use crate::report::gate::GateView;

pub fn run(cmd: &BaselineCommand, global: &Global) -> Result<u8> {
    match cmd {
        BaselineCommand::Update(a) => update(a, global),
        BaselineCommand::Show { name } => show(name, global),
        BaselineCommand::History { name, plot, stratum } => {
            history(name, plot.as_deref(), stratum.as_deref(), global)
        }
    }
}

fn update(args: &UpdateArgs, global: &Global) -> Result<u8> {
    let opts = UpdateOptions {
        names: args.names.clone(),
        overrides: overrides(&args.overrides),
        note: args.note.clone(),
        allow_regression: args.allow_regression,
        ci: Ci::from_env(),
    };
    opts.check()?;
    let config = Config::load(global.config.as_deref())?;
    guard(&config, &args.overrides).check(global.output.as_deref())?;
    let watch = CliWatch { quiet: global.quiet };
    let mut update = pipeline::baseline_update(&config, &opts, &watch)?;

    let format = global.format();
    emit_warnings(&update.outcome, format, global.quiet);
    let invocation = super::gate::invocation(&config, global);
    let refused = update.refusal();
    // Recorded before the report is printed, so that a report that says
    // "recorded" is true.
    if refused.is_none() {
        update.record(&watch)?;
    }
    let report = GateView {
        outcome: &update.outcome,
        command: "baseline update",
        color: use_color(global),
        quiet: false,
        invocation: Some(&invocation),
        width: super::gate::terminal_width(),
    };
    emit(global.output.as_deref(), &report.render(format)?)?;
    if let Some(refused) = refused {
        eprintln!("{refused}");
        return Ok(1);
    }
    Ok(0)
}

fn store_for(name: &str, global: &Global) -> Result<(Config, Store)> {
    if !valid_retriever_name(name) {
        return Err(usage_error(
            format!("retriever name `{name}` is not allowed"),
            "names match [A-Za-z0-9][A-Za-z0-9._-]{0,63}",
        ));
    }
    let config = Config::load(global.config.as_deref())?;
    let store = Store::new(&config.baselines);
    Ok((config, store))
}

/// `show` and `history` read the config and the store.
fn check_output(config: &Config, global: &Global, plot: Option<&Path>) -> Result<()> {
    let mut g = Guard::default();
    g.file(&config.path, "the config")
        .dir(&config.baselines, "the baselines directory")
        .maybe(plot, "the --plot chart");
    g.check(global.output.as_deref())
}

fn show(name: &str, global: &Global) -> Result<u8> {
    let (config, store) = store_for(name, global)?;
    check_output(&config, global, None)?;
    let b = store.load(name)?.ok_or_else(|| {
        anyhow::Error::new(UserError {
            message: format!(
                "{}: no baseline for `{name}`",
                store.baseline_path(name).display()
            ),
            hint: Some(format!("record one with `rgate baseline update {name}`")),
        })
    })?;
    let format = global.format();
    emit(global.output.as_deref(), &view::show(&b, format)?)?;
    Ok(0)
}

/// The chart is SVG: a name that says otherwise is refused.
fn check_plot_name(p: &Path) -> Result<()> {
    let svg = p
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("svg"));
    if !svg {
        return Err(usage_error(
            format!("--plot {}: the chart is SVG, and this name says otherwise", crate::escape::path(p)),
            format!(
                "name it {}; convert it afterwards if you need another format (rsvg-convert, inkscape, a browser)",
                crate::escape::path(&p.with_extension("svg"))
            ),
        ));
    }
    Ok(())
}

/// The scope a history shows: `all`, or a stratum it holds.
fn history_scope<'a>(
    name: &str,
    store: &Store,
    entries: &[crate::baseline::HistoryEntry],
    stratum: Option<&'a str>,
) -> Result<&'a str> {
    Ok(match stratum {
        None => "all",
        Some(s) => {
            let mut known: Vec<&str> = Vec::new();
            for e in entries {
                for k in e.aggregates.keys() {
                    if k != "all" && k != "macro" && !known.contains(&k.as_str()) {
                        known.push(k);
                    }
                }
            }
            if s == "all" || s == "macro" || !known.contains(&s) {
                let listed = if known.is_empty() {
                    "none".to_string()
                } else {
                    known
                        .iter()
                        .map(|k| format!("`{}`", crate::escape::terminal(k)))
                        .collect::<Vec<_>>()
                        .join(", ")
                };
                let hint = match crate::diag::suggest(s, &known) {
                    Some(near) => format!(
                        "did you mean `{}`? Strata in this history: {listed}",
                        crate::escape::terminal(near)
                    ),
                    None => format!(
                        "strata in this history: {listed}; without --stratum the overall means are shown"
                    ),
                };
                return Err(anyhow::Error::new(UserError {
                    message: format!(
                        "{}: no stratum `{}` in the history of `{name}`",
                        store.history_path(name).display(),
                        crate::escape::terminal(s)
                    ),
                    hint: Some(hint),
                }));
            }
            s
        }
    })
}

fn history(name: &str, plot: Option<&Path>, stratum: Option<&str>, global: &Global) -> Result<u8> {
    if let Some(p) = plot {
        check_plot_name(p)?;
    }
    let (config, store) = store_for(name, global)?;
    check_output(&config, global, plot)?;
    if let Some(p) = plot {
        let mut g = Guard::default();
        g.file(&config.path, "the config")
            .dir(&config.baselines, "the baselines directory");
        g.check_as(Some(p), "--plot", "the chart")?;
    }
    let entries = store.history(name)?;
    if entries.is_empty() {
        return Err(anyhow::Error::new(UserError {
            message: format!("{}: no history for `{name}`", store.history_path(name).display()),
            hint: Some(format!(
                "history grows with `rgate baseline update {name}` and `rgate gate --record`"
            )),
        }));
    }
    let scope = history_scope(name, &store, &entries, stratum)?;
    let gated: Vec<String> = {
        let mut v: Vec<String> = Vec::new();
        for r in &config.gate.rules {
            let n = r.metric.name();
            if !v.contains(&n) {
                v.push(n);
            }
        }
        v
    };
    let format = global.format();
    emit(
        global.output.as_deref(),
        &view::history(name, &entries, &config.metrics, scope, format)?,
    )?;
    if let Some(p) = plot {
        write_atomic(p, view::plot_svg(name, &entries, &gated, scope).as_bytes())?;
        if !global.quiet {
            eprintln!("wrote {}", crate::escape::path(p));
        }
    }
    Ok(0)
}
