//! `baseline show` and `baseline history`: their views and the tables
//! their formats share, and the history chart.

use std::fmt::Write as _;

use anyhow::Result;

use super::table::{f4, short_commit, Table};
use crate::baseline::{Baseline, HistoryEntry, THIS_RUN};
use crate::diag::count;
use crate::escape;
use crate::metrics::Metric;
use crate::origin::{parse_rfc3339, rfc3339};
use crate::report::Format;

/// A stored baseline, for `baseline show`.
pub struct ShowView<'a> {
    pub baseline: &'a Baseline,
}

impl ShowView<'_> {
    pub fn render(&self, format: Format) -> Result<String> {
        format.exporter().baseline_show(self)
    }

    /// The stored means, one row per scope.
    pub(super) fn table(&self) -> Table {
        let b = self.baseline;
        let names: Vec<String> = b.metrics.iter().map(Metric::name).collect();
        let mut headers = vec!["scope".to_string(), "n".to_string()];
        headers.extend(names);
        let mut t = Table::new(headers, 1);
        for a in &b.aggregates {
            let mut row = vec![a.scope.clone(), a.n.to_string()];
            row.extend(a.means.iter().map(|v| f4(*v)));
            t.push(row);
        }
        t
    }
}

pub fn show(b: &Baseline, format: Format) -> Result<String> {
    ShowView { baseline: b }.render(format)
}

/// A retriever's history, for `baseline history`: the means of `scope`
/// (`all`, or a stratum).
pub struct HistoryView<'a> {
    pub name: &'a str,
    pub entries: &'a [HistoryEntry],
    pub metrics: &'a [Metric],
    pub scope: &'a str,
}

impl HistoryView<'_> {
    pub fn render(&self, format: Format) -> Result<String> {
        format.exporter().baseline_history(self)
    }

    /// Metric columns: the configured metrics first, then any others the
    /// history holds for the scope.
    fn columns(&self) -> Vec<String> {
        let mut cols: Vec<String> = self.metrics.iter().map(Metric::name).collect();
        for e in self.entries {
            if let Some(means) = e.aggregates.get(self.scope) {
                for k in means.keys() {
                    if !cols.contains(k) {
                        cols.push(k.clone());
                    }
                }
            }
        }
        cols
    }

    /// One row per entry.
    pub(super) fn table(&self) -> Table {
        let cols = self.columns();
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
        for e in self.entries {
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
                        .get(self.scope)
                        .and_then(|a| a.get(c))
                        .map_or("-".into(), |v| f4(*v)),
                );
            }
            row.push(e.note.clone().unwrap_or_default());
            t.push(row);
        }
        t
    }
}

/// The history table of the means of `scope` (`all`, or a stratum).
pub fn history(
    name: &str,
    entries: &[HistoryEntry],
    metrics: &[Metric],
    scope: &str,
    format: Format,
) -> Result<String> {
    HistoryView {
        name,
        entries,
        metrics,
        scope,
    }
    .render(format)
}

/// How a scope reads in a heading: `overall` or `stratum `x``.
pub(super) fn scope_words(scope: &str) -> String {
    if scope == "all" {
        "overall".into()
    } else {
        format!("stratum `{scope}`")
    }
}

const DAY: i64 = 86_400;

/// Tick steps for the time axis, in seconds: the smallest that puts at
/// most six ticks on the span is used.
const STEPS: &[i64] = &[
    60,
    300,
    900,
    3600,
    3 * 3600,
    6 * 3600,
    12 * 3600,
    DAY,
    2 * DAY,
    7 * DAY,
    14 * DAY,
    28 * DAY,
    91 * DAY,
    182 * DAY,
    364 * DAY,
];

/// Tick times on `[lo, hi]` (multiples of one step, so a day step ticks at
/// midnight UTC) and their labels: dates for steps of a day or more,
/// `MM-DD HH:MM` below (the span is then under three days, so no two
/// labels are alike).
fn time_ticks(lo: i64, hi: i64) -> Vec<(i64, String)> {
    let full = |t: i64| {
        let s = rfc3339(t);
        format!("{} {}", &s[..10], &s[11..16])
    };
    let span = hi - lo;
    let step = STEPS
        .iter()
        .copied()
        .find(|s| span / s <= 5)
        .unwrap_or_else(|| (span / (5 * 364 * DAY) + 1) * 364 * DAY);
    let first = lo.div_euclid(step) * step + if lo.rem_euclid(step) == 0 { 0 } else { step };
    let ticks: Vec<i64> = (0..).map(|k| first + k * step).take_while(|t| *t <= hi).collect();
    if ticks.is_empty() {
        // Under a minute apart, or a single time: name the first exactly.
        return vec![(lo, full(lo))];
    }
    ticks
        .into_iter()
        .map(|t| {
            let s = rfc3339(t);
            let label = if step >= DAY {
                s[..10].to_string()
            } else {
                format!("{} {}", &s[5..10], &s[11..16])
            };
            (t, label)
        })
        .collect()
}

/// An SVG line chart of the means of `scope` (`all`, or a stratum) of each
/// metric over time: x follows each entry's recorded time, gate records
/// are dots and baseline updates squares on a dashed line, and each gate
/// record's verdict is marked above the plot (✓ pass, ✗ fail). Entries
/// whose time does not read as RFC 3339 are left out, and the subtitle
/// says how many.
pub fn plot_svg(name: &str, entries: &[HistoryEntry], metrics: &[String], scope: &str) -> String {
    const W: f64 = 760.0;
    const H: f64 = 400.0;
    const L: f64 = 60.0;
    const R: f64 = 170.0;
    const T: f64 = 64.0;
    const B: f64 = 60.0;
    let palette = [
        "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf",
    ];
    let timed: Vec<(i64, &HistoryEntry)> = entries
        .iter()
        .filter_map(|e| Some((parse_rfc3339(&e.time)?, e)))
        .collect();
    let untimed = entries.len() - timed.len();
    let series: Vec<(&String, Vec<Option<f64>>)> = metrics
        .iter()
        .map(|m| {
            (
                m,
                timed
                    .iter()
                    .map(|(_, e)| e.aggregates.get(scope).and_then(|a| a.get(m)).copied())
                    .collect(),
            )
        })
        .collect();
    let values: Vec<f64> = series
        .iter()
        .flat_map(|(_, v)| v.iter().flatten().copied())
        .filter(|v| v.is_finite())
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
    let t_lo = timed.iter().map(|(t, _)| *t).min().unwrap_or(0);
    let t_hi = timed.iter().map(|(t, _)| *t).max().unwrap_or(0);
    let x = |t: i64| {
        if t_hi == t_lo {
            L + (W - L - R) / 2.0
        } else {
            L + (W - L - R) * (t - t_lo) as f64 / (t_hi - t_lo) as f64
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
        r##"<text x="{L}" y="22" font-size="15" font-weight="bold">{} — {} means over {} recorded result{}</text>"##,
        esc(name),
        esc(&scope_words(scope)),
        timed.len(),
        if timed.len() == 1 { "" } else { "s" }
    );
    if untimed > 0 {
        let _ = writeln!(
            s,
            r##"<text x="{L}" y="38" fill="#a00">{} without a readable time left out</text>"##,
            count(untimed, "entry", "entries")
        );
    }
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
    if !timed.is_empty() {
        for (t, label) in time_ticks(t_lo, t_hi) {
            let xx = x(t);
            let _ = writeln!(
                s,
                r##"<line x1="{xx:.1}" y1="{:.1}" x2="{xx:.1}" y2="{:.1}" stroke="#999"/><text class="tick" x="{xx:.1}" y="{:.1}" text-anchor="middle" fill="#555">{}</text>"##,
                H - B,
                H - B + 5.0,
                H - B + 19.0,
                esc(&label)
            );
        }
    }
    for (t, e) in &timed {
        let xx = x(*t);
        if e.kind.starts_with("baseline-update") {
            let _ = writeln!(
                s,
                r##"<line x1="{xx:.1}" y1="{T}" x2="{xx:.1}" y2="{:.1}" stroke="#bbb" stroke-dasharray="3,3"><title>{}{}</title></line>"##,
                H - B,
                esc(&e.kind),
                e.note
                    .as_deref()
                    .map(|n| format!(": {}", esc(n)))
                    .unwrap_or_default()
            );
        } else if let Some(v) = e.verdict.as_deref() {
            let (glyph, fill) = match v {
                "pass" => ("✓", "#2ca02c"),
                "fail" => ("✗", "#d62728"),
                _ => ("?", "#555"),
            };
            let _ = writeln!(
                s,
                r##"<text class="verdict {}" x="{xx:.1}" y="{:.1}" text-anchor="middle" font-weight="bold" fill="{fill}">{glyph}<title>gate {} at {}</title></text>"##,
                esc(v),
                T - 8.0,
                esc(v),
                esc(&e.time)
            );
        }
    }
    for (k, (m, vals)) in series.iter().enumerate() {
        let color = palette[k % palette.len()];
        let pts: Vec<String> = vals
            .iter()
            .zip(&timed)
            .filter_map(|(v, (t, _))| {
                v.filter(|v| v.is_finite())
                    .map(|v| format!("{:.1},{:.1}", x(*t), y(v)))
            })
            .collect();
        if pts.len() > 1 {
            let _ = writeln!(
                s,
                r##"<polyline fill="none" stroke="{color}" stroke-width="2" points="{}"/>"##,
                pts.join(" ")
            );
        }
        for (v, (t, e)) in vals.iter().zip(&timed) {
            let Some(v) = v.filter(|v| v.is_finite()) else {
                continue;
            };
            let (cx, cy) = (x(*t), y(v));
            let title = format!("{} {} {}: {v:.4}", esc(m), esc(&e.kind), esc(&e.time));
            if e.kind.starts_with("baseline-update") {
                let _ = writeln!(
                    s,
                    r##"<rect class="point baseline-update" x="{:.1}" y="{:.1}" width="7" height="7" fill="{color}"><title>{title}</title></rect>"##,
                    cx - 3.5,
                    cy - 3.5
                );
            } else if e.kind == THIS_RUN {
                let _ = writeln!(
                    s,
                    r##"<circle class="point current" cx="{cx:.1}" cy="{cy:.1}" r="5" fill="white" stroke="{color}" stroke-width="2.5"><title>{title}</title></circle>"##
                );
            } else {
                let _ = writeln!(
                    s,
                    r##"<circle class="point gate" cx="{cx:.1}" cy="{cy:.1}" r="3.5" fill="{color}"><title>{title}</title></circle>"##
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
    // What the marks mean, under the metrics.
    let ly = T + 20.0 + 20.0 * series.len() as f64;
    let (lx, tx) = (W - R + 26.0, W - R + 42.0);
    let _ = writeln!(
        s,
        r##"<circle cx="{lx:.1}" cy="{ly:.1}" r="3.5" fill="#555"/><text x="{tx:.1}" y="{:.1}">gate record</text>"##,
        ly + 4.0
    );
    let _ = writeln!(
        s,
        r##"<rect x="{:.1}" y="{:.1}" width="7" height="7" fill="#555"/><text x="{tx:.1}" y="{:.1}">baseline update</text>"##,
        lx - 3.5,
        ly + 16.5,
        ly + 24.0
    );
    let _ = writeln!(
        s,
        r##"<text x="{lx:.1}" y="{:.1}" text-anchor="middle" font-weight="bold" fill="#2ca02c">✓</text><text x="{tx:.1}" y="{:.1}">gate pass</text>"##,
        ly + 44.0,
        ly + 44.0
    );
    let _ = writeln!(
        s,
        r##"<text x="{lx:.1}" y="{:.1}" text-anchor="middle" font-weight="bold" fill="#d62728">✗</text><text x="{tx:.1}" y="{:.1}">gate fail</text>"##,
        ly + 64.0,
        ly + 64.0
    );
    if timed.iter().any(|(_, e)| e.kind == THIS_RUN) {
        let _ = writeln!(
            s,
            r##"<circle cx="{lx:.1}" cy="{:.1}" r="5" fill="white" stroke="#555" stroke-width="2.5"/><text x="{tx:.1}" y="{:.1}">this run</text>"##,
            ly + 80.0,
            ly + 84.0
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
        let svg = plot_svg("hybrid", &es, &["recall@10".to_string()], "all");
        assert!(svg.starts_with("<svg"));
        assert_eq!(svg.matches("<polyline").count(), 1);
        assert_eq!(svg.matches(r#"<circle class="point gate""#).count(), 2);
        assert!(svg.contains("2026-11-02"));
    }

    #[test]
    fn tick_labels_are_distinct_and_few() {
        let t0 = 11_017 * 86_400; // 2000-03-01
        let ticks = time_ticks(t0 + 3600, t0 + 10 * 86_400);
        let labels: Vec<&str> = ticks.iter().map(|(_, l)| l.as_str()).collect();
        // Two-day steps at multiples of two days since 1970: day 11,017 is odd.
        assert_eq!(
            labels,
            [
                "2000-03-02",
                "2000-03-04",
                "2000-03-06",
                "2000-03-08",
                "2000-03-10"
            ]
        );
        let ticks = time_ticks(t0 + 600, t0 + 5 * 3600);
        let labels: Vec<&str> = ticks.iter().map(|(_, l)| l.as_str()).collect();
        assert_eq!(
            labels,
            [
                "03-01 01:00",
                "03-01 02:00",
                "03-01 03:00",
                "03-01 04:00",
                "03-01 05:00"
            ]
        );
        assert_eq!(
            time_ticks(t0 + 5, t0 + 5),
            [(t0 + 5, "2000-03-01 00:00".to_string())]
        );
    }

    #[test]
    fn history_table_lists_entries() {
        let es = vec![entry("2026-11-01T00:00:00Z", 0.8)];
        let out = history("hybrid", &es, &["recall@10".parse().unwrap()], "all", Format::Csv).unwrap();
        assert_eq!(
            out,
            "time,kind,commit,verdict,recall@10,note\n2026-11-01T00:00:00Z,gate,-,pass,0.8000,\n"
        );
    }
}
