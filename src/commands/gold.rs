//! `rgate gold validate|stats`.

use std::collections::{BTreeMap, HashMap};

use anyhow::Result;
use serde_json::json;

use crate::baseline::Store;
use crate::cli::{Global, GoldCommand, GoldPick};
use crate::config::Config;
use crate::diag::{count, name_some};
use crate::escape;
use crate::fsutil::emit;
use crate::gate;
use crate::gold::GoldSet;
use crate::judge::is_relevant;
use crate::report::table::{f4, Table};
use crate::report::Format;

/// The last line of defence for reports built here: JSON made safe to print,
/// and every other line kept from reading as a CI command. Values are
/// escaped where they enter; this catches what a line's layout exposes.
fn neutral(format: Format, out: String) -> String {
    match format {
        Format::Json => escape::json(out),
        Format::Markdown | Format::Csv => out,
        _ => escape::terminal_lines(&out).into_owned(),
    }
}

/// Strata smaller than this cannot carry a per-stratum test worth having.
const SMALL_STRATUM: usize = 10;

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

/// The gold set named on the command line, else the config's; the config
/// too when there is one (it holds the rules and the baselines).
fn load(pick: &GoldPick, global: &Global) -> Result<(GoldSet, Option<Config>, i32)> {
    let config = match (&pick.gold, &global.config) {
        (Some(_), None) if crate::config::discover_here().is_none() => None,
        (Some(_), None) => Config::load(None).ok(),
        _ => Some(Config::load(global.config.as_deref())?),
    };
    let (path, strata) = match (&pick.gold, &config) {
        (Some(g), _) => (g.clone(), pick.strata.clone()),
        (None, Some(c)) => (c.gold.clone(), pick.strata.clone().or_else(|| c.strata.clone())),
        (None, None) => unreachable!("a config is loaded when no --gold is given"),
    };
    let (gold, _warnings) = GoldSet::load(&path, strata.as_deref())?;
    let level = config.as_ref().map_or(1, |c| c.relevance_level);
    Ok((gold, config, level))
}

struct Finding {
    query: Option<String>,
    message: String,
}

fn validate(pick: &GoldPick, global: &Global) -> Result<u8> {
    let (gold, _, level) = load(pick, global)?;
    let mut findings: Vec<Finding> = Vec::new();
    let mut notes: Vec<String> = Vec::new();
    for q in &gold.queries {
        if !q.grades().any(|g| is_relevant(g, level)) {
            findings.push(Finding {
                query: Some(q.id.clone()),
                message: format!(
                    "no label with grade >= {level}: the query can never be hit, and drags every mean down"
                ),
            });
        }
    }
    let mut texts: HashMap<String, &str> = HashMap::new();
    for q in &gold.queries {
        if let Some(t) = &q.text {
            let folded = t.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase();
            if let Some(first) = texts.insert(folded, &q.id) {
                findings.push(Finding {
                    query: Some(q.id.clone()),
                    message: format!("same text as `{first}`: a duplicate counts twice in every mean"),
                });
            }
        }
    }
    for (name, n) in gold.strata.iter().zip(gold.stratum_sizes()) {
        if n < SMALL_STRATUM {
            notes.push(format!(
                "stratum `{name}` has {n} quer{}: too few for a per-stratum test to detect much",
                if n == 1 { "y" } else { "ies" }
            ));
        }
    }
    let untitled: Vec<&str> = gold
        .queries
        .iter()
        .filter(|q| q.text.is_none())
        .map(|q| q.id.as_str())
        .collect();
    if !untitled.is_empty() && gold.format != crate::gold::GoldFormat::Qrels {
        notes.push(format!(
            "{} quer{} no text (reports show text beside lost queries): {}",
            untitled.len(),
            if untitled.len() == 1 { "y has" } else { "ies have" },
            name_some(&untitled, 5)
        ));
    }
    let (built, built_json) = super::goldbuild::build_notes(&gold, pick)?;
    notes.extend(built);
    let format = global.format();
    let out = match format {
        Format::Json => {
            serde_json::to_string_pretty(&json!({
                "gold": gold.path.display().to_string(),
                "queries": gold.len(),
                "strata": gold.strata,
                "provenance": built_json,
                "valid": findings.is_empty(),
                "findings": findings.iter().map(|f| json!({"query_id": f.query, "message": f.message})).collect::<Vec<_>>(),
                "notes": notes,
            }))
            .unwrap_or_default()
                + "\n"
        }
        _ => {
            let mut s = format!(
                "gold {}: {}, {}, fingerprint {}\n",
                gold.path.display(),
                count(gold.len(), "query", "queries"),
                count(gold.strata.len(), "stratum", "strata"),
                gold.fingerprint()
            );
            for f in &findings {
                s += &format!(
                    "error: {}{}\n",
                    f.query.as_ref().map(|q| format!("`{}`: ", escape::terminal(q))).unwrap_or_default(),
                    escape::terminal(&f.message)
                );
            }
            for n in &notes {
                s += &format!("note: {}\n", escape::terminal(n));
            }
            s += &if findings.is_empty() {
                "valid\n".to_string()
            } else {
                format!(
                    "{} finding{}\n",
                    findings.len(),
                    if findings.len() == 1 { "" } else { "s" }
                )
            };
            s
        }
    };
    emit(global.output.as_deref(), &neutral(format, out))?;
    Ok(if findings.is_empty() { 0 } else { 1 })
}

fn gold_stats(pick: &GoldPick, global: &Global) -> Result<u8> {
    let (gold, config, level) = load(pick, global)?;
    let (built, built_json) = super::goldbuild::build_notes(&gold, pick)?;
    let mut t = Table::new(
        [
            "stratum",
            "queries",
            "labels/q",
            "relevant/q",
            "min rel",
            "max rel",
            "graded",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect(),
        1,
    );
    let mut grade_mix: BTreeMap<i32, usize> = BTreeMap::new();
    let mut scopes: Vec<(String, Vec<usize>)> = vec![("all".into(), (0..gold.len()).collect())];
    for (s, name) in gold.strata.iter().enumerate() {
        scopes.push((
            name.clone(),
            (0..gold.len())
                .filter(|&i| gold.queries[i].stratum as usize == s)
                .collect(),
        ));
    }
    for q in &gold.queries {
        for g in q.grades() {
            *grade_mix.entry(g).or_default() += 1;
        }
    }
    for (name, idx) in &scopes {
        let n = idx.len().max(1) as f64;
        let labels: usize = idx.iter().map(|&i| gold.queries[i].label_count()).sum();
        let rel: Vec<usize> = idx
            .iter()
            .map(|&i| {
                gold.queries[i]
                    .grades()
                    .filter(|&g| is_relevant(g, level))
                    .count()
            })
            .collect();
        let graded = idx
            .iter()
            .filter(|&&i| gold.queries[i].grades().any(|g| g > 1))
            .count();
        t.push(vec![
            name.clone(),
            idx.len().to_string(),
            format!("{:.2}", labels as f64 / n),
            format!("{:.2}", rel.iter().sum::<usize>() as f64 / n),
            rel.iter().min().copied().unwrap_or(0).to_string(),
            rel.iter().max().copied().unwrap_or(0).to_string(),
            graded.to_string(),
        ]);
    }
    let mix: Vec<String> = grade_mix.iter().map(|(g, n)| format!("grade {g}: {n}")).collect();

    // Minimum detectable drop per gated check, as the gate computes it for
    // an unchanged run (the library's baseline_power), so the two agree.
    let mut mde = Table::new(
        [
            "retriever",
            "metric",
            "stratum",
            "n",
            "se",
            "mde",
            "tolerance",
            "enough queries?",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect(),
        3,
    );
    mde.align[7] = crate::report::table::Align::Left;
    let mut mde_json = Vec::new();
    let mut mde_note = String::new();
    match &config {
        None => mde_note = "no config: the minimum detectable drop needs the rules and a baseline".into(),
        Some(c) => {
            let store = Store::new(&c.baselines);
            for r in &c.retrievers {
                let Some(b) = store.load(&r.name)? else {
                    mde_note += &format!("`{}` has no baseline yet; ", r.name);
                    continue;
                };
                for p in gate::baseline_power(&gold, &c.gate, &b) {
                    let w = &p.power;
                    let enough = if w.spread == gate::Spread::Floor {
                        "unknown: no spread yet (mde is the floor the query count sets)".to_string()
                    } else if w.enforceable {
                        "yes".to_string()
                    } else {
                        w.queries_needed
                            .map_or("no".into(), |n| format!("no: ~{n} queries"))
                    };
                    mde.push(vec![
                        r.name.clone(),
                        p.metric.name(),
                        p.stratum.clone(),
                        p.n.to_string(),
                        if w.se.is_finite() { f4(w.se) } else { "-".into() },
                        w.mde.map_or("-".into(), |m| format!("{m:.3}")),
                        f4(p.tolerance),
                        enough,
                    ]);
                    mde_json.push(json!({"retriever": r.name, "metric": p.metric.name(), "stratum": p.stratum,
                        "n": p.n, "se": crate::report::num(w.se), "spread": w.spread.name(),
                        "mde": w.mde.map_or(serde_json::Value::Null, crate::report::num),
                        "tolerance": p.tolerance, "enforceable": w.enforceable,
                        "queries_needed": w.queries_needed,
                        "unchanged_fails": w.unchanged_fails.map_or(serde_json::Value::Null, crate::report::num)}));
                }
            }
        }
    }
    let format = global.format();
    let out = match format {
        Format::Json => {
            serde_json::to_string_pretty(&json!({
                "gold": gold.path.display().to_string(),
                "queries": gold.len(),
                "strata": gold.strata.iter().zip(gold.stratum_sizes()).map(|(s, n)| json!({"name": s, "queries": n})).collect::<Vec<_>>(),
                "grades": grade_mix.iter().map(|(g, n)| (g.to_string(), json!(n))).collect::<serde_json::Map<_, _>>(),
                "min_detectable_drop": mde_json,
                "provenance": built_json,
            }))
            .unwrap_or_default()
                + "\n"
        }
        Format::Markdown => format!("{}\n{}\n\n{}", t.markdown(), mix.join(", "), mde.markdown()),
        Format::Csv => t.csv(),
        _ => {
            let mut s = format!("gold {} · {}\n\n", gold.path.display(), gold.fingerprint());
            s += &t.text();
            s += &format!("\nlabels by grade: {}\n", mix.join(", "));
            if !mde.rows.is_empty() {
                s += &format!(
                    "\nsmallest drop each gated check fails with 80% probability ({}, alpha {} over the gated checks; enough: a drop of twice the tolerance is caught):\n",
                    config.as_ref().map_or("confident-drop", |c| c.gate.decision.name()),
                    config.as_ref().map_or(0.05, |c| c.gate.alpha)
                );
                s += &mde.text();
            }
            if !mde_note.is_empty() {
                s += &format!("\nnote: {}\n", mde_note.trim_end_matches("; "));
            }
            for n in &built {
                s += &format!("note: {n}\n");
            }
            s
        }
    };
    emit(global.output.as_deref(), &neutral(format, out))?;
    Ok(0)
}
