//! `baseline show` and `baseline history` output, and the history chart.

use std::fmt::Write as _;

use serde_json::{json, Value};

use super::table::{f4, short_commit, Table};
use crate::baseline::{Baseline, HistoryEntry};
use crate::diag::count;
use crate::escape;
use crate::metrics::Metric;
use crate::report::Format;

pub fn show(b: &Baseline, format: Format) -> String {
    if format == Format::Json {
        return escape::json(b.to_json_text());
    }
    let names: Vec<String> = b.metrics.iter().map(Metric::name).collect();
    let mut headers = vec!["scope".to_string(), "n".to_string()];
    headers.extend(names);
    let mut t = Table::new(headers, 1);
    for a in &b.aggregates {
        let mut row = vec![a.scope.clone(), a.n.to_string()];
        row.extend(a.means.iter().map(|v| f4(*v)));
        t.push(row);
    }
    let head = format!(
        "baseline `{}` recorded {} by rgate {}\ncommit {} · note {}\ngold {} ({}, {}) · relevance level {} · rankings kept to depth {}\n\n",
        escape::terminal(&b.retriever),
        escape::terminal(&b.created_at),
        escape::terminal(&b.rgate_version),
        escape::terminal(b.commit.as_deref().unwrap_or("unknown")),
        escape::terminal(b.note.as_deref().unwrap_or("-")),
        escape::terminal(&b.gold_path),
        count(b.queries.len(), "query", "queries"),
        escape::terminal(&b.gold_fingerprint),
        b.relevance_level,
        b.depth.map_or("all".to_string(), |d| d.to_string())
    );
    match format {
        Format::Markdown => format!(
            "**baseline {}**\n\n{}",
            escape::markdown_code(&b.retriever),
            t.markdown()
        ),
        Format::Csv => t.csv(),
        _ => head + &t.text(),
    }
}

/// Metric columns for the history table: the configured metrics first,
/// then any others the history holds.
fn columns(entries: &[HistoryEntry], metrics: &[Metric]) -> Vec<String> {
    let mut cols: Vec<String> = metrics.iter().map(Metric::name).collect();
    for e in entries {
        if let Some(all) = e.aggregates.get("all") {
            for k in all.keys() {
                if !cols.contains(k) {
                    cols.push(k.clone());
                }
            }
        }
    }
    cols
}

pub fn history(name: &str, entries: &[HistoryEntry], metrics: &[Metric], format: Format) -> String {
    if format == Format::Json {
        let v: Vec<Value> = entries.iter().map(HistoryEntry::to_json).collect();
        return escape::json(
            serde_json::to_string_pretty(&json!({"retriever": name, "history": v})).unwrap_or_default()
                + "\n",
        );
    }
    let cols = columns(entries, metrics);
    let mut headers = vec![
        "time".to_string(),
        "kind".into(),
        "commit".into(),
        "verdict".into(),
    ];
    headers.extend(cols.iter().cloned());
    headers.push("note".into());
    let mut t = Table::new(headers, 4);
    let last = t.headers.len() - 1;
    t.align[last] = super::table::Align::Left;
    for e in entries {
        let mut row = vec![
            e.time.clone(),
            e.kind.clone(),
            e.commit
                .as_deref()
                .map(short_commit)
                .unwrap_or_else(|| "-".into()),
            e.verdict.clone().unwrap_or_else(|| "-".into()),
        ];
        for c in &cols {
            row.push(
                e.aggregates
                    .get("all")
                    .and_then(|a| a.get(c))
                    .map_or("-".into(), |v| f4(*v)),
            );
        }
        row.push(e.note.clone().unwrap_or_default());
        t.push(row);
    }
    match format {
        Format::Markdown => t.markdown(),
        Format::Csv => t.csv(),
        _ => format!(
            "history of `{}` ({}, overall means)\n\n{}",
            escape::terminal(name),
            count(entries.len(), "entry", "entries"),
            t.text()
        ),
    }
}

/// A plain SVG line chart of the overall mean of each metric across the
/// history entries, one colour per metric, with a legend and date labels.
pub fn plot_svg(name: &str, entries: &[HistoryEntry], metrics: &[String]) -> String {
    const W: f64 = 760.0;
    const H: f64 = 380.0;
    const L: f64 = 60.0;
    const R: f64 = 170.0;
    const T: f64 = 40.0;
    const B: f64 = 60.0;
    let palette = [
        "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf",
    ];
    let series: Vec<(&String, Vec<Option<f64>>)> = metrics
        .iter()
        .map(|m| {
            (
                m,
                entries
                    .iter()
                    .map(|e| e.aggregates.get("all").and_then(|a| a.get(m)).copied())
                    .collect(),
            )
        })
        .collect();
    let values: Vec<f64> = series
        .iter()
        .flat_map(|(_, v)| v.iter().flatten().copied())
        .collect();
    let (mut lo, mut hi) = values
        .iter()
        .fold((1.0f64, 0.0f64), |(lo, hi), v| (lo.min(*v), hi.max(*v)));
    if values.is_empty() {
        lo = 0.0;
        hi = 1.0;
    }
    // Pad the range and snap to a 0.05 grid so the axis reads well.
    lo = ((lo - 0.02).max(0.0) * 20.0).floor() / 20.0;
    hi = ((hi + 0.02).min(1.0) * 20.0).ceil() / 20.0;
    if hi - lo < 0.05 {
        hi = (lo + 0.05).min(1.0);
        lo = hi - 0.05;
    }
    let n = entries.len().max(1);
    let x = |i: usize| {
        if n == 1 {
            L + (W - L - R) / 2.0
        } else {
            L + (W - L - R) * i as f64 / (n - 1) as f64
        }
    };
    let y = |v: f64| T + (H - T - B) * (1.0 - (v - lo) / (hi - lo));
    let esc = escape::xml;
    let mut s = String::new();
    let _ = writeln!(
        s,
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" font-family="Helvetica, Arial, sans-serif" font-size="12">"##
    );
    let _ = writeln!(s, r##"<rect width="100%" height="100%" fill="white"/>"##);
    let _ = writeln!(
        s,
        r##"<text x="{L}" y="24" font-size="15" font-weight="bold">{} — overall means over {} recorded result{}</text>"##,
        esc(name),
        entries.len(),
        if entries.len() == 1 { "" } else { "s" }
    );
    let steps = ((hi - lo) / 0.05).round() as usize;
    let every = steps.div_ceil(8).max(1);
    for k in (0..=steps).step_by(every) {
        let v = lo + 0.05 * k as f64;
        let yy = y(v);
        let _ = writeln!(
            s,
            r##"<line x1="{L}" y1="{yy:.1}" x2="{:.1}" y2="{yy:.1}" stroke="#e5e5e5"/><text x="{:.1}" y="{:.1}" text-anchor="end" fill="#555">{v:.2}</text>"##,
            W - R,
            L - 6.0,
            yy + 4.0
        );
    }
    let _ = writeln!(
        s,
        r##"<line x1="{L}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="#999"/>"##,
        H - B,
        W - R,
        H - B
    );
    let label_every = n.div_ceil(6).max(1);
    for (i, e) in entries.iter().enumerate() {
        if i % label_every == 0 || i + 1 == n {
            let _ = writeln!(
                s,
                r##"<text x="{:.1}" y="{:.1}" text-anchor="middle" fill="#555">{}</text>"##,
                x(i),
                H - B + 18.0,
                esc(e.time.get(..10).unwrap_or(&e.time))
            );
        }
        if e.kind.starts_with("baseline-update") {
            let _ = writeln!(
                s,
                r##"<line x1="{:.1}" y1="{T}" x2="{:.1}" y2="{:.1}" stroke="#bbb" stroke-dasharray="3,3"><title>baseline update{}</title></line>"##,
                x(i),
                x(i),
                H - B,
                e.note
                    .as_deref()
                    .map(|n| format!(": {}", esc(n)))
                    .unwrap_or_default()
            );
        }
    }
    for (k, (m, vals)) in series.iter().enumerate() {
        let color = palette[k % palette.len()];
        let pts: Vec<String> = vals
            .iter()
            .enumerate()
            .filter_map(|(i, v)| v.map(|v| format!("{:.1},{:.1}", x(i), y(v))))
            .collect();
        if pts.len() > 1 {
            let _ = writeln!(
                s,
                r##"<polyline fill="none" stroke="{color}" stroke-width="2" points="{}"/>"##,
                pts.join(" ")
            );
        }
        for (i, v) in vals.iter().enumerate() {
            if let Some(v) = v {
                let _ = writeln!(
                    s,
                    r##"<circle cx="{:.1}" cy="{:.1}" r="3" fill="{color}"><title>{} {}: {v:.4}</title></circle>"##,
                    x(i),
                    y(*v),
                    esc(m),
                    esc(&entries[i].time)
                );
            }
        }
        let ly = T + 10.0 + 20.0 * k as f64;
        let _ = writeln!(
            s,
            r##"<line x1="{:.1}" y1="{ly:.1}" x2="{:.1}" y2="{ly:.1}" stroke="{color}" stroke-width="3"/><text x="{:.1}" y="{:.1}">{}</text>"##,
            W - R + 16.0,
            W - R + 36.0,
            W - R + 42.0,
            ly + 4.0,
            esc(m)
        );
    }
    s.push_str("</svg>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn entry(t: &str, v: f64) -> HistoryEntry {
        let mut all = BTreeMap::new();
        all.insert("recall@10".to_string(), v);
        let mut agg = BTreeMap::new();
        agg.insert("all".to_string(), all);
        HistoryEntry {
            time: t.into(),
            commit: None,
            kind: "gate".into(),
            note: None,
            gold_fingerprint: None,
            verdict: Some("pass".into()),
            run: None,
            aggregates: agg,
        }
    }

    #[test]
    fn chart_has_a_line_per_metric_and_a_point_per_entry() {
        let es = vec![
            entry("2026-11-01T00:00:00Z", 0.8),
            entry("2026-11-02T00:00:00Z", 0.85),
        ];
        let svg = plot_svg("hybrid", &es, &["recall@10".to_string()]);
        assert!(svg.starts_with("<svg"));
        assert_eq!(svg.matches("<polyline").count(), 1);
        assert_eq!(svg.matches("<circle").count(), 2);
        assert!(svg.contains("2026-11-02"));
    }

    #[test]
    fn history_table_lists_entries() {
        let es = vec![entry("2026-11-01T00:00:00Z", 0.8)];
        let out = history("hybrid", &es, &["recall@10".parse().unwrap()], Format::Csv);
        assert_eq!(
            out,
            "time,kind,commit,verdict,recall@10,note\n2026-11-01T00:00:00Z,gate,-,pass,0.8000,\n"
        );
    }
}
