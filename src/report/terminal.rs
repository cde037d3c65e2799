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
        let w = v.width.max(40);
        let mut out = wrap(&v.headline(), w, "  ");
        if let Some(j) = v.judge_line() {
            out += &wrap(&terminal(&j), w, "  ");
        }
        if let Some(s) = ppi_share_line(v) {
            out += &wrap(&s, w, "  ");
        }
        out += &wrap(&v.settings_line(), w, "  ");
        for warn in &v.outcome.warnings {
            out += &wrap(&format!("warning: {}", terminal(warn)), w, "  ");
        }
        for r in v.ordered() {
            out.push('\n');
            out += &wrap(
                &format!(
                    "{} {}: {}",
                    v.verdict_word(r.verdict()),
                    terminal(&r.name),
                    terminal(&v.summary(r))
                ),
                w,
                "  ",
            );
            if let Some(s) = GateView::lost_sentence(r, &|s: &str| terminal(s).into_owned()) {
                out += &wrap(&format!("  {s}"), w, "    ");
            }
            out += &wrap(
                &format!(
                    "  run {} · {}",
                    terminal(&r.run),
                    terminal(&GateView::baseline_desc(r))
                ),
                w,
                "    ",
            );
            if !r.checks.is_empty() {
                out.push('\n');
                let (table, dropped) = v.check_table(r).fit(w.saturating_sub(2), CHECK_DROP_ORDER);
                // Lines 0 and 1 are the header and the rule; then one line
                // per check.
                for (i, line) in table.text().lines().enumerate() {
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
                if !dropped.is_empty() {
                    out += &wrap(
                        &format!(
                            "  (left out to fit {w} columns: {}; a wider terminal or --format json shows them)",
                            dropped.join(", ")
                        ),
                        w,
                        "   ",
                    );
                }
            }
            if let Some(t) = v.ppi_table(r) {
                out += "\n  Prediction-powered estimates of each delta, beside people's labels alone:\n";
                let (t, _) = t.fit(w.saturating_sub(2), &["effective n", "lambda"]);
                for line in t.text().lines() {
                    out += &format!("  {line}\n");
                }
            }
            if let Some(imp) = v.improvements(r) {
                out.push('\n');
                out += &wrap(&terminal(&imp), w, "  ");
            }
            let skewed = skewed(r);
            if !skewed.is_empty() {
                out.push('\n');
                out += &wrap(&format!("{SKEW_HEADING}:"), w, "  ");
                for s in &skewed {
                    out += &wrap(&format!("  - {}", terminal(s)), w, "    ");
                }
            }
            if let Some(st) = &r.stages {
                out.push('\n');
                out += &wrap(&terminal(&GateView::stage_title(st)), w, "  ");
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
                for line in flips(r, &Lines).lines() {
                    let pad: String = line.chars().take_while(|c| *c == ' ').collect();
                    out += &wrap(line, w, &format!("{pad}    "));
                }
            }
            if !r.warnings.is_empty() {
                out += "\nWarnings:\n";
                for warn in &r.warnings {
                    out += &wrap(&format!("  - {}", terminal(warn)), w, "    ");
                }
            }
        }
        out += &next_steps_text(v, w);
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

/// The quiet report: the headline (what failed, by how much), what each
/// failing retriever lost, and the next steps.
fn quiet_gate(v: &GateView) -> String {
    let w = v.width.max(40);
    let mut out = wrap(&v.headline(), w, "  ");
    if v.outcome.judge.as_ref().is_some_and(|j| j.fails()) {
        out += &wrap(&terminal(&v.judge_line().unwrap_or_default()), w, "  ");
    }
    let failed: Vec<_> = v
        .outcome
        .retrievers
        .iter()
        .filter(|r| r.verdict() == crate::gate::Verdict::Fail)
        .collect();
    for r in &failed {
        let words: Vec<String> = r
            .checks
            .iter()
            .filter(|c| r.fails(c))
            .map(super::gate::check_words)
            .collect();
        out += &wrap(
            &format!(
                "{} {}: {}",
                v.verdict_word(r.verdict()),
                terminal(&r.name),
                terminal(&words.join(", "))
            ),
            w,
            "  ",
        );
        if let Some(s) = GateView::lost_sentence(r, &|s: &str| terminal(s).into_owned()) {
            out += &wrap(&format!("  {s}"), w, "    ");
        }
    }
    if !failed.is_empty() {
        out += "(the full report, with the queries lost: rerun without --quiet)\n";
    }
    out += &next_steps_text(v, w);
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

/// The check table's columns in the order they give way when the terminal
/// is too narrow: what a reader can do without first (the test's name, the
/// unadjusted p, the level, the mde, the bound, n), never the metric, the
/// stratum, delta, tolerance, p_adj or the verdict.
const CHECK_DROP_ORDER: &[&str] = &[
    "test",
    "p (1-sided)",
    "level",
    "mde",
    "baseline",
    "current",
    "n",
    "upper bound",
    "lower bound",
];

/// The next steps as commands, when the gate failed.
fn next_steps_text(v: &GateView, w: usize) -> String {
    let steps = v.next_steps();
    if steps.is_empty() {
        return String::new();
    }
    let mut out = "\nNext steps:\n".to_string();
    for (what, cmd) in steps {
        out += &wrap(&format!("  {what}:"), w, "    ");
        out += &wrap_command(&terminal(&cmd), w);
    }
    out
}

/// Under `labels: ppi`, the share of queries resting on model grades.
fn ppi_share_line(v: &GateView) -> Option<String> {
    let (model_only, n_model, n_verified) = v.ppi_share()?;
    Some(format!(
        "labels: ppi: {model_only} of {n_model} queries rest on the model's grades alone ({:.0}%); {n_verified} verified by people correct the estimate",
        100.0 * model_only as f64 / n_model.max(1) as f64,
    ))
}

/// Columns `s` takes on a terminal, colour escapes (CSI `ESC [ ... m`)
/// counting none.
fn visible_width(s: &str) -> usize {
    let mut plain = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' && chars.peek() == Some(&'[') {
            for d in chars.by_ref() {
                if d.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            plain.push(c);
        }
    }
    super::table::display_width(&plain)
}

/// Each line of `s` wrapped at spaces to `width` columns, continuation
/// lines starting with `indent`; a word longer than a line stays whole on
/// its own. Ends with a newline.
pub(super) fn wrap(s: &str, width: usize, indent: &str) -> String {
    let mut out = String::new();
    for line in s.lines() {
        if visible_width(line) <= width {
            out += line;
            out.push('\n');
            continue;
        }
        let lead: String = line.chars().take_while(|c| *c == ' ').collect();
        let mut cur = lead.clone();
        let mut cur_w = visible_width(&cur);
        let mut empty = true;
        for word in line.trim_start_matches(' ').split(' ') {
            let ww = visible_width(word);
            if !empty && cur_w + 1 + ww > width {
                out += cur.trim_end();
                out.push('\n');
                cur = indent.to_string();
                cur_w = visible_width(indent);
                empty = true;
            }
            if !empty {
                cur.push(' ');
                cur_w += 1;
            }
            cur += word;
            cur_w += ww;
            empty = false;
        }
        out += cur.trim_end();
        out.push('\n');
    }
    out
}

/// A shell command wrapped to `width` with ` \\` continuations, so that
/// the lines pasted together are still the one command.
fn wrap_command(cmd: &str, width: usize) -> String {
    let mut lines: Vec<String> = Vec::new();
    let mut cur = "    ".to_string();
    for word in cmd.split(' ') {
        let fresh = cur.trim().is_empty();
        if !fresh && visible_width(&cur) + 1 + visible_width(word) + 2 > width {
            lines.push(cur + " \\");
            cur = "      ".to_string();
        } else if !fresh {
            cur.push(' ');
        }
        cur += word;
    }
    lines.push(cur);
    lines.join("\n") + "\n"
}
