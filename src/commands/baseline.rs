//! `rgate baseline update|show|history`.

use std::path::Path;

use anyhow::Result;

use super::gate::{
    decide, emit_warnings, evaluate_runs, history_entry, prepare, use_color, Evaluated, Overrides,
};
use crate::baseline::{current_commit, now_utc, Baseline, Store, StoredQuery};
use crate::cli::{BaselineCommand, Global, UpdateArgs};
use crate::config::{valid_retriever_name, Config};
use crate::diag::{usage_error, UserError};
use crate::eval::Summary;
use crate::fsutil::{emit, write_atomic};
use crate::gate::Verdict;
use crate::prepared::Prepared;
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

fn build(config: &Config, prep: &Prepared, e: &Evaluated, note: Option<String>) -> Baseline {
    let summary = Summary::new(&e.scores, &prep.gold);
    let ids = e.judged.top_ids.as_ref();
    let cand_ids = e.candidates.as_ref().and_then(|c| c.top_ids.as_ref());
    let places = e.judged.top_places.as_ref();
    let cand_places = e.candidates.as_ref().and_then(|c| c.top_places.as_ref());
    Baseline {
        retriever: e.name.clone(),
        created_at: now_utc(),
        rgate_version: env!("CARGO_PKG_VERSION").to_string(),
        commit: current_commit(config.path.parent().unwrap_or(Path::new("."))),
        note,
        gold_path: prep.gold.path.display().to_string(),
        gold_fingerprint: prep.fingerprint().to_string(),
        relevance_level: prep.relevance_level,
        metrics: e.scores.metrics.clone(),
        depth: config.depth(),
        span_coverage: prep.gold.has_spans().then_some(prep.span_coverage),
        aggregates: summary.scope_means(),
        queries: prep
            .gold
            .queries
            .iter()
            .enumerate()
            .map(|(i, q)| StoredQuery {
                id: q.id.clone(),
                stratum: prep.gold.stratum_name(i).to_string(),
                values: e.scores.values.iter().map(|v| v[i]).collect(),
                ranking: ids.map(|ids| ids[i].clone()).unwrap_or_default(),
                candidates: cand_ids.map(|c| c[i].clone()),
                text_sha: q.text.as_deref().map(crate::baseline::text_sha),
                spans: places.map(|p| p[i].clone()).unwrap_or_default(),
                candidate_spans: cand_places.map(|p| p[i].clone()).unwrap_or_default(),
            })
            .collect(),
    }
}

fn update(args: &UpdateArgs, global: &Global) -> Result<u8> {
    if args.allow_regression && args.note.as_deref().is_none_or(|n| n.trim().is_empty()) {
        return Err(usage_error(
            "--allow-regression needs --note",
            "say why the regression is accepted: --note \"new chunker; recall drop reviewed in #123\"",
        ));
    }
    let config = Config::load(global.config.as_deref())?;
    let prep = prepare(&config)?;
    let selected = config.select(&args.names)?;
    let store = Store::new(&config.baselines);
    // Hold every lock from the gate check to the last write, so nobody
    // records in between; taken in name order, so two updates of
    // overlapping retrievers queue instead of each holding what the other
    // waits for.
    let mut names: Vec<&str> = selected.iter().map(|r| r.name.as_str()).collect();
    names.sort_unstable();
    let mut on_wait = |m: &str| {
        if !global.quiet {
            eprintln!("{m}");
        }
    };
    let locks = names
        .iter()
        .map(|n| store.lock(n, config.gate.lock_timeout, &mut on_wait))
        .collect::<Result<Vec<_>>>()?;
    let runs = evaluate_runs(
        &config,
        &prep,
        &selected,
        Overrides {
            runs: &args.runs,
            candidates: &args.candidates,
            chunks: &args.chunks,
        },
        true,
    )?;
    let outcome = decide(&config, &prep, &runs, false, true, None)?;

    let format = global.format();
    emit_warnings(&outcome, format, global.quiet);
    let report = GateView {
        outcome: &outcome,
        command: "baseline update",
        color: use_color(global),
    };
    emit(global.output.as_deref(), &report.render(format)?)?;

    let failing: Vec<&str> = outcome
        .retrievers
        .iter()
        .filter(|r| r.verdict() == Verdict::Fail)
        .map(|r| r.name.as_str())
        .collect();
    if !failing.is_empty() && !args.allow_regression {
        eprintln!(
            "{}",
            UserError {
                message: format!(
                    "refused: the gate fails for {}; no baseline was written",
                    failing.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ")
                ),
                hint: Some(format!(
                    "fix the regression, or accept it on purpose: rgate baseline update {} --allow-regression --note \"why\"",
                    failing.join(" ")
                )),
            }
        );
        return Ok(1);
    }
    let dir = config.path.parent().unwrap_or(Path::new("."));
    for e in &runs {
        let failed = failing.contains(&e.name.as_str());
        let kind = if failed {
            "baseline-update (regression accepted)"
        } else {
            "baseline-update"
        };
        // Both built before anything is written: `git rev-parse` runs here,
        // not between the two writes.
        let b = build(&config, &prep, e, args.note.clone());
        let entry = history_entry(&prep, e, kind, args.note.clone(), None, dir);
        let lock = names
            .iter()
            .position(|n| *n == e.name)
            .map(|i| &locks[i])
            .ok_or_else(|| anyhow::anyhow!("internal error: `{}` was not locked", e.name))?;
        let path = store.record(lock, &b, &entry)?;
        if !global.quiet {
            eprintln!(
                "recorded baseline for `{}`: {}",
                e.name,
                crate::escape::terminal(&path.display().to_string())
            );
        }
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

fn show(name: &str, global: &Global) -> Result<u8> {
    let (_, store) = store_for(name, global)?;
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

fn history(name: &str, plot: Option<&Path>, stratum: Option<&str>, global: &Global) -> Result<u8> {
    if let Some(p) = plot {
        let svg = p
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| e.eq_ignore_ascii_case("svg"));
        if !svg {
            return Err(usage_error(
                format!("--plot {}: the chart is SVG, and this name says otherwise", p.display()),
                format!(
                    "name it {}; convert it afterwards if you need another format (rsvg-convert, inkscape, a browser)",
                    p.with_extension("svg").display()
                ),
            ));
        }
    }
    let (config, store) = store_for(name, global)?;
    let entries = store.history(name)?;
    if entries.is_empty() {
        return Err(anyhow::Error::new(UserError {
            message: format!("{}: no history for `{name}`", store.history_path(name).display()),
            hint: Some(format!(
                "history grows with `rgate baseline update {name}` and `rgate gate --record`"
            )),
        }));
    }
    let scope = match stratum {
        None => "all",
        Some(s) => {
            let mut known: Vec<&str> = Vec::new();
            for e in &entries {
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
    };
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
            eprintln!("wrote {}", p.display());
        }
    }
    Ok(0)
}
