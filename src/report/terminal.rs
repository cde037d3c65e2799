//! `--format table`: aligned text for a terminal or a CI log, every value
//! from a user's file passed through [`escape::terminal`].

use anyhow::Result;

use super::baseline::{scope_words, HistoryView, ShowView};
use super::compare::CompareView;
use super::eval::EvalView;
use super::gate::{flips, skewed, FlipSyntax, GateView, FAILED_CHECK, SKEW_HEADING};
use super::{Exporter, Report};
use crate::diag::count;
use crate::escape::{self, terminal};
use crate::gate::Flip;

pub struct Terminal;

impl Exporter for Terminal {
    fn name(&self) -> &'static str {
        "table"
    }

    fn reports(&self) -> &'static [Report] {
        Report::ALL
    }

    fn gate(&self, v: &GateView) -> Result<String> {
        if v.quiet {
            return Ok(quiet_gate(v));
        }
        let mut out = v.headline() + "\n" + &v.settings_line() + "\n";
        for w in &v.outcome.warnings {
            out += &format!("warning: {}\n", terminal(w));
        }
        for r in &v.outcome.retrievers {
            out += &format!(
                "\n{} {}: {}\n  run {} · {}\n",
                v.verdict_word(r.verdict()),
                terminal(&r.name),
                terminal(&v.summary(r)),
                terminal(&r.run),
                terminal(&GateView::baseline_desc(r))
            );
            if !r.checks.is_empty() {
                out.push('\n');
                // Lines 0 and 1 are the header and the rule; then one line
                // per check.
                for (i, line) in v.check_table(r).text().lines().enumerate() {
                    let failed = i
                        .checked_sub(2)
                        .and_then(|c| r.checks.get(c))
                        .is_some_and(|c| r.fails(c));
                    let line = if v.color && failed {
                        v.paint(line, FAILED_CHECK)
                    } else {
                        line.to_string()
                    };
                    out += &format!("  {line}\n");
                }
            }
            if let Some(t) = v.ppi_table(r) {
                out += "\n  Prediction-powered estimates of each delta, beside people's labels alone:\n";
                for line in t.text().lines() {
                    out += &format!("  {line}\n");
                }
            }
            if let Some(imp) = v.improvements(r) {
                out += &format!("\n{}\n", terminal(&imp));
            }
            let skewed = skewed(r);
            if !skewed.is_empty() {
                out += &format!("\n{SKEW_HEADING}:\n");
                for s in &skewed {
                    out += &format!("  - {}\n", terminal(s));
                }
            }
            if let Some(st) = &r.stages {
                out += &format!("\n{}\n", terminal(&GateView::stage_title(st)));
                for table in [GateView::lost_table(st), GateView::ceiling_table(st, true)] {
                    for line in table.text().lines() {
                        out += &format!("  {line}\n");
                    }
                    out.push('\n');
                }
                out += "  (ceilings per stratum: --format markdown or json)\n";
            }
            if !r.flips.is_empty() {
                out.push('\n');
                out += &flips(r, &Lines);
            }
            if !r.warnings.is_empty() {
                out += "\nWarnings:\n";
                for w in &r.warnings {
                    out += &format!("  - {}\n", terminal(w));
                }
            }
        }
        Ok(out)
    }

    fn compare(&self, v: &CompareView) -> Result<String> {
        let mut out = format!("{}\n{}\n\n", terminal(&v.title()), v.settings_line());
        out += &v.means_table().text();
        out += &format!("\n{}\n", terminal(&v.statement()));
        if v.family.ranking.len() > 1 {
            out += &format!("\nranking by {}\n", v.family.metric);
            out += &v.ranking_table().text();
        }
        for k in 0..v.comparisons.len() {
            out += &format!(
                "\n{} vs {}\n",
                terminal(&v.runs[k + 1].name),
                terminal(&v.runs[0].name)
            );
            out += &v.rows_table(k).text();
            let skewed = v.skewed(k);
            if !skewed.is_empty() {
                out += &format!("{SKEW_HEADING}:\n");
                for s in &skewed {
                    out += &format!("  - {}\n", terminal(s));
                }
            }
        }
        out += &format!(
            "\n* adjusted p < {}. d_z: mean delta / sd of the per-query deltas (paired effect size). W/T/L: queries where the run is better / equal / worse than {}.\n",
            crate::diag::number(v.settings.alpha),
            terminal(&v.runs[0].name)
        );
        Ok(out)
    }

    fn eval(&self, v: &EvalView) -> Result<String> {
        let mut out = terminal(&v.title()).into_owned() + "\n\n";
        if v.per_query {
            out += &v.query_table().text();
            out.push('\n');
        }
        out += &v.means_table().text();
        if let Some(note) = v.interval_note() {
            out += &format!("\n{note}\n");
        }
        if let Some(t) = v.ppi_table() {
            out += &format!("\n{}\n", t.text());
        }
        if let Some(sv) = &v.candidates {
            out += &format!("\n{}\n\n", terminal(&v.stage_title(sv)));
            out += &v.lost_table(sv).text();
            out.push('\n');
            out += &v.ceiling_table(sv).text();
        }
        for c in v.curves {
            out += &format!("\n{}\n\n", terminal(&v.curve_title(c)));
            out += &v.curve_table(c).text();
            for (i, line) in v.target_lines(c).iter().enumerate() {
                let pad = if i == 0 { "" } else { "  " };
                out += &format!("{pad}{}\n", terminal(line));
            }
        }
        Ok(out)
    }

    fn baseline_show(&self, v: &ShowView) -> Result<String> {
        let b = v.baseline;
        let t = escape::terminal;
        let head = format!(
            "baseline `{}` recorded {} by rgate {}\ncommit {} · note {}\ngold {} ({}, {}) · relevance level {} · rankings kept to depth {}{}\n\n",
            t(&b.retriever),
            t(&b.created_at),
            t(&b.rgate_version),
            t(b.commit.as_deref().unwrap_or("unknown")),
            t(b.note.as_deref().unwrap_or("-")),
            t(&b.gold_path),
            count(b.queries.len(), "query", "queries"),
            t(&b.gold_fingerprint),
            b.relevance_level,
            b.depth.map_or("all".to_string(), |d| d.to_string()),
            if b.has_candidates() {
                " · candidate lists kept whole"
            } else {
                ""
            }
        );
        Ok(head + &v.table().text())
    }

    fn baseline_history(&self, v: &HistoryView) -> Result<String> {
        Ok(format!(
            "history of `{}` ({}, {} means)\n\n{}",
            terminal(v.name),
            count(v.entries.len(), "entry", "entries"),
            terminal(&scope_words(v.scope)),
            v.table().text()
        ))
    }
}

/// The quiet report: the verdict line, then each failed retriever with
/// why it failed, then where the rest is.
fn quiet_gate(v: &GateView) -> String {
    let mut out = v.headline() + "\n";
    let failed: Vec<_> = v
        .outcome
        .retrievers
        .iter()
        .filter(|r| r.verdict() == crate::gate::Verdict::Fail)
        .collect();
    for r in &failed {
        out += &format!(
            "{} {}: {}\n",
            v.verdict_word(r.verdict()),
            terminal(&r.name),
            terminal(&v.summary(r))
        );
    }
    if !failed.is_empty() {
        out += "(the full report, with the queries lost: rerun without --quiet)\n";
    }
    out
}

/// Flips as indented lines.
struct Lines;

impl FlipSyntax for Lines {
    fn heading(&self, n: usize) -> String {
        format!("Queries that went from hit to miss ({n}):\n")
    }

    fn group(&self, title: &str, n: usize) -> String {
        format!("  {title} ({n}):\n")
    }

    fn stratum(&self, pad: &str, stratum: &str) -> String {
        format!("{pad}  {}\n", terminal(stratum))
    }

    fn flip(&self, pad: &str, f: &Flip) -> String {
        let text = f
            .text
            .as_deref()
            .map(|t| format!(" \"{}\"", terminal(t)))
            .unwrap_or_default();
        format!(
            "{pad}    {}{text}: lost {}\n",
            terminal(&f.query_id),
            f.lost.join(", ")
        )
    }
}
