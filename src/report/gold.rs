//! `rgate gold validate` and `rgate gold stats` output.

use serde_json::json;

use super::table::{f4, Align, Table};
use super::Format;
use crate::diag::count;
use crate::escape;
use crate::gate;
use crate::pipeline::gold::{GoldStats, LabelingCounts, Validation};

/// The last line of defence for these reports: JSON made safe to print,
/// and every other line kept from reading as a CI command. Values are
/// escaped where they enter; this catches what a line's layout exposes.
fn neutral(format: Format, out: String) -> String {
    match format {
        Format::Json => escape::json(out),
        Format::Markdown | Format::Csv => out,
        _ => escape::terminal_lines(&out).into_owned(),
    }
}

fn headers(names: &[&str]) -> Vec<String> {
    names.iter().map(|s| s.to_string()).collect()
}

/// `gold validate` as JSON, or as text for every other format.
pub fn validation(v: &Validation, format: Format) -> String {
    let gold = &v.gold;
    let out = match format {
        Format::Json => {
            let mut doc = json!({
                "gold": gold.path.display().to_string(),
                "queries": gold.len(),
                "strata": gold.strata,
                "provenance": v.provenance,
                "valid": v.valid(),
                "findings": v.findings.iter().map(|f| json!({"query_id": f.query, "message": f.message})).collect::<Vec<_>>(),
                "no_relevant": v.no_relevant.iter().map(|f| json!({"query_id": f.query, "message": f.message})).collect::<Vec<_>>(),
                "notes": v.notes,
            });
            add_labeling(&mut doc, v.labeling.as_deref());
            serde_json::to_string_pretty(&doc).unwrap_or_default() + "\n"
        }
        _ => {
            let mut s = format!(
                "gold {}: {}, {}, fingerprint {}\n",
                escape::path(&gold.path),
                count(gold.len(), "query", "queries"),
                count(gold.strata.len(), "stratum", "strata"),
                gold.fingerprint()
            );
            if let Some(c) = &v.labeling {
                s += &labeling_table(c).text();
            }
            for f in &v.findings {
                s += &format!(
                    "error: {}{}\n",
                    f.query
                        .as_ref()
                        .map(|q| format!("`{}`: ", escape::terminal(q)))
                        .unwrap_or_default(),
                    escape::terminal(&f.message)
                );
            }
            for f in &v.no_relevant {
                s += &format!(
                    "warning: {}{}\n",
                    f.query
                        .as_ref()
                        .map(|q| format!("`{}`: ", escape::terminal(q)))
                        .unwrap_or_default(),
                    escape::terminal(&f.message)
                );
            }
            for n in &v.notes {
                s += &format!("note: {}\n", escape::terminal(n));
            }
            s += &if v.valid() && !v.no_relevant.is_empty() {
                format!(
                    "valid; {} without a relevant label (reported, not failing: label them or drop them)\n",
                    count(v.no_relevant.len(), "query", "queries")
                )
            } else if v.valid() {
                "valid\n".to_string()
            } else {
                format!(
                    "{} finding{}\n",
                    v.findings.len(),
                    if v.findings.len() == 1 { "" } else { "s" }
                )
            };
            s
        }
    };
    neutral(format, out)
}

/// Which labels each scope's queries carry: model grades, people's
/// (verified), both, and how far the verification draw has got.
fn labeling_table(counts: &[LabelingCounts]) -> Table {
    let mut t = Table::new(
        headers(&[
            "stratum",
            "queries",
            "model",
            "model only",
            "verified",
            "verified+model",
            "drawn",
            "drawn, unverified",
            "verified, not drawn",
            "pairs only the model graded on verified",
        ]),
        1,
    );
    for c in counts {
        t.push(vec![
            c.scope.clone(),
            c.queries.to_string(),
            c.model.to_string(),
            c.model_only.to_string(),
            c.verified.to_string(),
            c.verified_with_model.to_string(),
            c.drawn.to_string(),
            c.drawn_unverified.to_string(),
            c.verified_not_drawn.to_string(),
            c.model_pairs_on_verified.to_string(),
        ]);
    }
    t
}

fn labeling_json(counts: &[LabelingCounts]) -> serde_json::Value {
    counts
        .iter()
        .map(|c| {
            json!({"stratum": c.scope, "queries": c.queries, "model": c.model, "model_only": c.model_only,
                "verified": c.verified, "verified_with_model": c.verified_with_model,
                "drawn": c.drawn, "drawn_unverified": c.drawn_unverified,
                "verified_not_drawn": c.verified_not_drawn,
                "model_only_pairs_on_verified": c.model_pairs_on_verified})
        })
        .collect()
}

/// `labeling` beside the other keys, only for a gold set that has model
/// labels or verified queries (other gold sets' JSON is unchanged).
fn add_labeling(doc: &mut serde_json::Value, counts: Option<&[LabelingCounts]>) {
    if let (Some(c), Some(m)) = (counts, doc.as_object_mut()) {
        m.insert("labeling".into(), labeling_json(c));
    }
}

/// The label counts per scope.
fn scope_table(st: &GoldStats) -> Table {
    let mut t = Table::new(
        headers(&[
            "stratum",
            "queries",
            "labels/q",
            "relevant/q",
            "min rel",
            "max rel",
            "graded",
        ]),
        1,
    );
    for s in &st.scopes {
        t.push(vec![
            s.name.clone(),
            s.queries.to_string(),
            format!("{:.2}", s.labels_per_query),
            format!("{:.2}", s.relevant_per_query),
            s.min_relevant.to_string(),
            s.max_relevant.to_string(),
            s.graded.to_string(),
        ]);
    }
    t
}

/// The minimum detectable drop per gated check.
fn power_table(st: &GoldStats) -> Table {
    let mut mde = Table::new(
        headers(&[
            "retriever",
            "metric",
            "stratum",
            "n",
            "se",
            "mde",
            "tolerance",
            "enough queries?",
        ]),
        3,
    );
    mde.align[7] = Align::Left;
    for c in &st.power {
        let p = &c.planned;
        let w = &p.power;
        let enough = if w.spread == gate::Spread::Nothing {
            "no: every value is 0, nothing to lose".to_string()
        } else if !w.can_fail_alone {
            "no: too few queries to fail on its own".to_string()
        } else if w.enforceable {
            "yes".to_string()
        } else {
            w.queries_needed
                .map_or("no".into(), |n| format!("no: ~{n} queries"))
        };
        mde.push(vec![
            c.retriever.clone(),
            p.metric.name(),
            p.stratum.clone(),
            p.n.to_string(),
            if w.se.is_finite() { f4(w.se) } else { "-".into() },
            w.mde.map_or("-".into(), |m| format!("{m:.3}")),
            f4(p.tolerance),
            enough,
        ]);
    }
    mde
}

fn stats_json(st: &GoldStats) -> String {
    let gold = &st.gold;
    let mde: Vec<serde_json::Value> = st
        .power
        .iter()
        .map(|c| {
            let (p, w) = (&c.planned, &c.planned.power);
            json!({"retriever": c.retriever, "metric": p.metric.name(), "stratum": p.stratum,
                "n": p.n, "se": super::num(w.se), "spread": w.spread.name(),
                "mde": w.mde.map_or(serde_json::Value::Null, super::num),
                "tolerance": p.tolerance, "enforceable": w.enforceable,
                "queries_needed": w.queries_needed,
                "unchanged_fails": w.unchanged_fails.map_or(serde_json::Value::Null, super::num)})
        })
        .collect();
    let mut doc = json!({
        "gold": gold.path.display().to_string(),
        "queries": gold.len(),
        "strata": gold.strata.iter().zip(gold.stratum_sizes()).map(|(s, n)| json!({"name": s, "queries": n})).collect::<Vec<_>>(),
        "grades": st.grades.iter().map(|(g, n)| (g.to_string(), json!(n))).collect::<serde_json::Map<_, _>>(),
        "min_detectable_drop": mde,
        "provenance": st.provenance,
    });
    add_labeling(&mut doc, st.labeling.as_deref());
    serde_json::to_string_pretty(&doc).unwrap_or_default() + "\n"
}

/// Why some checks have no minimum detectable drop.
fn power_note(st: &GoldStats) -> String {
    if st.gate.is_none() {
        return "no config: the minimum detectable drop needs the rules and a baseline".into();
    }
    st.without_baseline
        .iter()
        .map(|n| format!("`{}` has no baseline yet; ", escape::terminal(n)))
        .collect()
}

/// `gold stats` in every format it has.
pub fn stats(st: &GoldStats, format: Format) -> String {
    let t = scope_table(st);
    let mde = power_table(st);
    let mix: Vec<String> = st.grades.iter().map(|(g, n)| format!("grade {g}: {n}")).collect();
    let out = match format {
        Format::Json => stats_json(st),
        Format::Markdown => {
            let labeling = st
                .labeling
                .as_deref()
                .map(|c| format!("\n{}", labeling_table(c).markdown()))
                .unwrap_or_default();
            format!(
                "{}\n{}\n{labeling}\n{}",
                t.markdown(),
                mix.join(", "),
                mde.markdown()
            )
        }
        Format::Csv => t.csv(),
        _ => {
            let mut s = format!(
                "gold {} · {}\n\n",
                escape::path(&st.gold.path),
                st.gold.fingerprint()
            );
            s += &t.text();
            s += &format!("\nlabels by grade: {}\n", mix.join(", "));
            if let Some(c) = &st.labeling {
                s += "\nmodel labels and verified queries:\n";
                s += &labeling_table(c).text();
            }
            if !mde.rows.is_empty() {
                s += &format!(
                    "\nsmallest drop each gated check fails with 80% probability ({}, alpha {} over the gated checks; enough: a drop of twice the tolerance is caught):\n",
                    st.gate.as_ref().map_or("confident-drop", |g| g.decision.name()),
                    crate::diag::number(st.gate.as_ref().map_or(0.05, |g| g.alpha))
                );
                s += &mde.text();
            }
            let note = power_note(st);
            if !note.is_empty() {
                s += &format!("\nnote: {}\n", note.trim_end_matches("; "));
            }
            for n in &st.notes {
                s += &format!("note: {n}\n");
            }
            s
        }
    };
    neutral(format, out)
}
