//! What `gold agreement` prints: one table of the figures (overall, then per
//! stratum) and the confusion matrix of the 0-3 grades, as terminal text,
//! Markdown or JSON.
//!
//! JSON, a stable interface: `{"schema_version": 1, "input", "kind"
//! ("sheet" or "gold"), "between": [A, B], "relevance_level", "pairs",
//! "only_a", "only_b", "several", "unusable", "dropped", "labelers": {"a": {name: n}, "b": ...},
//! "all": FIGURES, "strata": [{"stratum", ...FIGURES}]}` where FIGURES is
//! `{"n", "agreement", "kappa", "kappa_undefined", "weighted_kappa",
//! "weighted_kappa_undefined", "relevant_a", "relevant_b", "confusion"}`;
//! `confusion[i][j]` counts the pairs A graded `i` and B graded `j`. An
//! undefined kappa is `null`, its `*_undefined` key saying why (else that
//! key is `null`).

use std::fmt::Write;
use std::path::Path;

use serde_json::{json, Map, Value};

use super::json::num;
use super::table::Table;
use crate::diag::count;
use crate::escape;
use crate::goldbuild::agreement::{Agreement, Input, Measure, Stats, GRADES};
use crate::goldbuild::printable;

fn f3(v: Option<f64>) -> String {
    v.map_or_else(|| "-".into(), |v| format!("{v:.3}"))
}

fn measure(m: &Measure) -> String {
    match m {
        Measure::Value(v) => format!("{v:.3}"),
        Measure::Undefined(_) => "-".into(),
    }
}

fn kind(k: Input) -> &'static str {
    match k {
        Input::Sheet => "sheet",
        Input::Gold => "gold",
    }
}

/// The figures of every scope as one table.
fn figures(a: &Agreement) -> Table {
    let mut t = Table::new(
        [
            "stratum",
            "n",
            "agreement",
            "kappa",
            "weighted kappa",
            &format!("{} relevant", a.a.name()),
            &format!("{} relevant", a.b.name()),
        ]
        .iter()
        .map(|s| s.to_string())
        .collect(),
        1,
    );
    let mut row = |name: &str, s: &Stats| {
        t.push(vec![
            name.to_string(),
            s.n.to_string(),
            f3(s.agreement),
            measure(&s.kappa),
            measure(&s.weighted_kappa),
            f3(s.relevant_a),
            f3(s.relevant_b),
        ])
    };
    row("all", &a.all);
    for (name, s) in &a.strata {
        row(name, s);
    }
    t
}

/// Side A's grades down, side B's across.
fn confusion(a: &Agreement) -> Table {
    let mut headers = vec![format!("{} \\ {}", a.a.name(), a.b.name())];
    headers.extend((0..GRADES).map(|g| g.to_string()));
    let mut t = Table::new(headers, 1);
    for (i, r) in a.all.confusion.iter().enumerate() {
        let mut cells = vec![i.to_string()];
        cells.extend(r.iter().map(|c| c.to_string()));
        t.push(cells);
    }
    t
}

/// Why a kappa is missing, per scope, for the notes under the table.
fn undefined(a: &Agreement) -> Vec<String> {
    let mut out = Vec::new();
    let scopes = std::iter::once(("all", &a.all)).chain(a.strata.iter().map(|(n, s)| (n.as_str(), s)));
    for (name, s) in scopes {
        for (what, m) in [("kappa", &s.kappa), ("weighted kappa", &s.weighted_kappa)] {
            if let Some(r) = m.reason() {
                out.push(format!("{what} on {name} is undefined: {r}"));
            }
        }
    }
    out
}

fn labelers(l: &[(String, u64)]) -> String {
    l.iter()
        .map(|(n, c)| format!("{} ({c})", printable(n)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The lines under the figures: who was compared, what was left out.
fn notes(a: &Agreement) -> Vec<String> {
    let mut out = vec![format!(
        "{}: {}; {}: {}",
        printable(a.a.name()),
        labelers(&a.labelers_a),
        printable(a.b.name()),
        labelers(&a.labelers_b)
    )];
    if a.only_a + a.only_b > 0 {
        out.push(format!(
            "left out: {} graded by {} only, {} by {} only",
            count(a.only_a, "pair", "pairs"),
            printable(a.a.name()),
            a.only_b,
            printable(a.b.name())
        ));
    }
    if a.several > 0 {
        out.push(format!(
            "{} had several grades on one side; the first recorded was compared (name a labeler in --between to choose)",
            count(a.several, "pair", "pairs")
        ));
    }
    if a.unusable > 0 {
        out.push(format!(
            "left out: {} both sides graded, one of them outside 0..3 (an unjudged label)",
            count(a.unusable, "pair", "pairs")
        ));
    }
    if a.dropped > 0 {
        out.push(format!(
            "{} dropped: a labeler's second grade of a pair they had graded (the first recorded was compared)",
            count(a.dropped, "grade", "grades")
        ));
    }
    out.extend(undefined(a));
    out
}

fn head(path: &Path, a: &Agreement) -> String {
    format!(
        "gold agreement: {} vs {} on the {} of {} both graded, in {} (relevant = grade >= {})",
        printable(a.a.name()),
        printable(a.b.name()),
        a.all.n,
        count(a.pairs, "pair", "pairs"),
        escape::path(path),
        a.relevance_level
    )
}

pub fn text(path: &Path, a: &Agreement) -> String {
    let mut s = head(path, a);
    s.push_str("\n\n");
    s.push_str(&figures(a).text());
    s.push_str("\nconfusion of the grades (all strata):\n");
    s.push_str(&confusion(a).text());
    s.push('\n');
    for n in notes(a) {
        let _ = writeln!(s, "{n}");
    }
    s
}

pub fn markdown(path: &Path, a: &Agreement) -> String {
    let mut s = format!("### {}\n\n", escape::markdown(&head(path, a)));
    s.push_str(&figures(a).markdown());
    s.push_str("\nConfusion of the grades (all strata):\n\n");
    s.push_str(&confusion(a).markdown());
    s.push('\n');
    for n in notes(a) {
        let _ = writeln!(s, "- {}", escape::markdown(&n));
    }
    s
}

fn stats_json(s: &Stats) -> Map<String, Value> {
    let mut o = Map::new();
    o.insert("n".into(), json!(s.n));
    o.insert("agreement".into(), s.agreement.map_or(Value::Null, num));
    o.insert("kappa".into(), s.kappa.value().map_or(Value::Null, num));
    o.insert("kappa_undefined".into(), json!(s.kappa.reason()));
    o.insert(
        "weighted_kappa".into(),
        s.weighted_kappa.value().map_or(Value::Null, num),
    );
    o.insert(
        "weighted_kappa_undefined".into(),
        json!(s.weighted_kappa.reason()),
    );
    o.insert("relevant_a".into(), s.relevant_a.map_or(Value::Null, num));
    o.insert("relevant_b".into(), s.relevant_b.map_or(Value::Null, num));
    o.insert("confusion".into(), json!(s.confusion));
    o
}

pub fn json(path: &Path, input: Input, a: &Agreement) -> String {
    let names = |l: &[(String, u64)]| {
        l.iter()
            .map(|(n, c)| (n.clone(), json!(c)))
            .collect::<Map<_, _>>()
    };
    let strata: Vec<Value> = a
        .strata
        .iter()
        .map(|(name, s)| {
            let mut o = Map::new();
            o.insert("stratum".into(), json!(name));
            o.extend(stats_json(s));
            Value::Object(o)
        })
        .collect();
    let v = json!({
        "schema_version": 1,
        "input": path.display().to_string(),
        "kind": kind(input),
        "between": [a.a.name(), a.b.name()],
        "relevance_level": a.relevance_level,
        "pairs": a.pairs,
        "only_a": a.only_a,
        "only_b": a.only_b,
        "several": a.several,
        "unusable": a.unusable,
        "dropped": a.dropped,
        "labelers": {"a": names(&a.labelers_a), "b": names(&a.labelers_b)},
        "all": stats_json(&a.all),
        "strata": strata,
    });
    escape::json(serde_json::to_string_pretty(&v).unwrap_or_default() + "\n")
}
