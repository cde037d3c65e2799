//! `--format markdown`: GitHub-flavoured Markdown for a pull request
//! comment or a job summary, every value from a user's file passed through
//! [`crate::escape::markdown`].

use anyhow::Result;

use super::baseline::{HistoryView, ShowView};
use super::compare::CompareView;
use super::eval::EvalView;
use super::gate::{skewed, GateView, SKEW_HEADING};
use super::table::{f4, signed4, Table};
use super::{Exporter, Report};
use crate::escape::{markdown as md, markdown_code};
use crate::gate::{RetrieverOutcome, Verdict};

pub struct Markdown;

impl Exporter for Markdown {
    fn name(&self) -> &'static str {
        "markdown"
    }

    fn reports(&self) -> &'static [Report] {
        Report::ALL
    }

    fn gate(&self, v: &GateView) -> Result<String> {
        Ok(comment(v, COMMENT_LIMIT))
    }

    fn compare(&self, v: &CompareView) -> Result<String> {
        let mut out = format!("**{}**\n\n<sub>{}</sub>\n\n", md(&v.title()), v.settings_line());
        out += &v.means_table().markdown();
        out += &format!("\n{}\n", md(&v.statement()));
        if v.family.ranking.len() > 1 {
            out += &format!("\n**ranking by {}**\n\n", md(&v.family.metric.name()));
            out += &v.ranking_table().markdown();
        }
        for k in 0..v.comparisons.len() {
            out += &format!("\n**{} vs {}**\n\n", md(&v.runs[k + 1].name), md(&v.runs[0].name));
            out += &v.rows_table(k).markdown();
            let skewed = v.skewed(k);
            if !skewed.is_empty() {
                out += &format!("\n**{SKEW_HEADING}:**\n\n");
                for s in &skewed {
                    out += &format!("- {}\n", md(s));
                }
            }
        }
        Ok(out)
    }

    fn eval(&self, v: &EvalView) -> Result<String> {
        let mut out = format!("**rgate eval** · {}\n\n", md(&v.title()));
        out += &v.means_table().markdown();
        if let Some(note) = v.interval_note() {
            out += &format!("\n<sub>{}</sub>\n", md(&note));
        }
        if let Some(t) = v.ppi_table() {
            out += &format!("\n{}", t.markdown());
        }
        if let Some(sv) = &v.candidates {
            out += &format!("\n**{}**\n\n", md(&v.stage_title(sv)));
            out += &v.lost_table(sv).markdown();
            out.push('\n');
            out += &v.ceiling_table(sv).markdown();
        }
        for c in v.curves {
            out += &format!("\n**{}**\n\n", md(&v.curve_title(c)));
            out += &v.curve_table(c).markdown();
            let lines = v.target_lines(c);
            if let Some((head, rest)) = lines.split_first() {
                out += &format!("\n{}\n\n", md(head));
                for line in rest {
                    out += &format!("- {}\n", md(line));
                }
            }
        }
        if v.per_query {
            out.push('\n');
            out += &v.query_table().markdown();
        }
        Ok(out)
    }

    fn baseline_show(&self, v: &ShowView) -> Result<String> {
        Ok(format!(
            "**baseline {}**\n\n{}",
            markdown_code(&v.baseline.retriever),
            v.table().markdown()
        ))
    }

    fn baseline_history(&self, v: &HistoryView) -> Result<String> {
        Ok(v.table().markdown())
    }
}

/// The most a gate report in Markdown takes, in bytes: it is the pull
/// request comment and leads the job summary, and a reviewer reads it in
/// seconds. Lists are cut to fit (what was left out is counted, with where
/// to find it); the headline, the failed checks and the next steps never
/// are. GitHub's own limit is 65,536 characters.
pub const COMMENT_LIMIT: usize = 12 * 1000;

/// Lost queries listed per failing retriever (the rest are counted).
const LOST_SHOWN: usize = 8;

/// Failed checks in a retriever's first table (the rest are counted).
const FAILED_SHOWN: usize = 10;

/// Longest query text shown in the lost-query table, in characters.
const TEXT_SHOWN: usize = 60;

/// The gate's report shaped as CI bots shape a pull request comment
/// (CodSpeed, Codecov, Bencher): the decision and its size in the
/// headline, a sentence of what was lost, a small table of what failed,
/// the significance in words, a few lost queries, the next steps as
/// commands, the passing retrievers in one line, and everything else
/// folded, all within `limit` bytes.
fn comment(v: &GateView, limit: usize) -> String {
    let o = v.outcome;
    let icon = match (o.verdict(), &o.recorded) {
        (Verdict::Fail, Some(_)) => "⚠️",
        (Verdict::Pass, _) => "✅",
        (Verdict::Fail, None) => "❌",
    };
    let word = match o.verdict() {
        Verdict::Pass => "**PASS**",
        Verdict::Fail => "**FAIL**",
    };
    let mut head = format!("## {icon} {}\n\n", v.headline_with(&|s: &str| md(s), word));
    if o.judge.as_ref().is_some_and(|j| j.fails()) {
        if let Some(line) = v.judge_line() {
            head += &format!("**Judge**: {}\n\n", md(&line));
        }
    }
    let ppi = ppi_share(v);
    if let Some(s) = &ppi {
        head += &format!("{}\n\n", md(s));
    }
    let failing: Vec<&RetrieverOutcome> = v
        .ordered()
        .into_iter()
        .filter(|r| r.verdict() == Verdict::Fail)
        .collect();
    let lost_each = if failing.len() > 1 {
        LOST_SHOWN / 2
    } else {
        LOST_SHOWN
    };
    for r in &failing {
        head += &failing_block(v, r, lost_each);
    }
    let steps = v.next_steps();
    if !steps.is_empty() {
        head += "**Next steps**\n\n";
        for (what, cmd) in &steps {
            head += &format!("- {what}:\n  ```sh\n  {}\n  ```\n", fence_safe(cmd));
        }
        if o.verdict() == Verdict::Fail && failing.iter().any(|r| r.baseline.is_some()) {
            head += "  The baseline change is reviewed like code; the gate of this pull request still compares with the target branch's baseline when run with `--baseline-ref`.\n";
        }
        head.push('\n');
    }
    if let Some(pass) = v.passing_line() {
        head += &format!("✅ Passed: {}\n\n", md(&pass));
    }
    for w in &o.warnings {
        head += &format!("> **Warning**: {}\n\n", md(&clip(w, 600)));
    }
    // Folded: each failing retriever's every check, while they fit; the
    // passing ones' are in the full report (report.html, --format json).
    let folds: Vec<String> = failing.iter().map(|r| details(v, r)).collect();
    let close = "\n";
    let mut out = head;
    let mut left_out: Vec<String> = Vec::new();
    for f in folds {
        if out.len() + f.len() + close.len() + 300 <= limit {
            out += &f;
        } else {
            left_out.push(f.lines().next().map(summary_title).unwrap_or_default());
        }
    }
    if !left_out.is_empty() {
        out += &format!(
            "\n<sub>Left out to keep this comment under {} KB: {}. The full report: report.html or `--format json`.</sub>\n",
            limit / 1000,
            md(&left_out.join(", "))
        );
    }
    out
}

/// The title of a `<details>` fold, from its first line.
fn summary_title(line: &str) -> String {
    let t = line
        .trim_start_matches("<details><summary>")
        .split("</summary>")
        .next()
        .unwrap_or_default();
    t.replace("<b>", "").replace("</b>", "")
}

/// A text cut to `n` characters, with an ellipsis when cut.
fn clip(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(n.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}

/// A command inside a fenced block: a line of its own, no fence in it.
fn fence_safe(s: &str) -> String {
    crate::escape::terminal(s)
        .replace("```", "'''")
        .replace('\n', " ")
}

/// Under `labels: ppi`, how much of the gate rests on the model: "Labels:
/// ppi. 70 of 90 queries rest on model grades alone; 20 were verified by
/// people." From the checks' own counts (the `all` check of the first
/// retriever that has one).
fn ppi_share(v: &GateView) -> Option<String> {
    let (model_only, n_model, n_verified) = v.ppi_share()?;
    Some(format!(
        "Labels: ppi. {model_only} of {n_model} queries rest on the model's grades alone ({:.0}%); {n_verified} verified by people correct the estimate.",
        100.0 * model_only as f64 / n_model.max(1) as f64,
    ))
}

/// A failing retriever: what it lost, the failed checks (at most seven
/// columns), their significance in a sentence and the test in one folded
/// line, a few lost queries.
fn failing_block(v: &GateView, r: &RetrieverOutcome, lost_shown: usize) -> String {
    let mut out = format!("### ❌ {}\n\n", md(&r.name));
    // Which stage lost the queries comes first, as in every report: a
    // broken reranker is named before its checks.
    if let Some(losses) = r.stages.as_ref().map(|s| &s.losses) {
        for l in losses {
            out += &format!("{}.\n\n", md(&super::gate::stage_loss_text(l)));
        }
    }
    if let Some(s) = GateView::lost_sentence(r, &|s: &str| s.to_string()) {
        out += &format!("{}\n\n", md(&s));
    }
    let fails: Vec<&crate::gate::Check> = r.checks.iter().filter(|c| r.fails(c)).collect();
    let mut t = Table::new(
        [
            "metric",
            "stratum",
            "n",
            "baseline",
            "current",
            "delta",
            "tolerance",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect(),
        2,
    );
    for c in fails.iter().take(FAILED_SHOWN) {
        t.push(vec![
            c.cmp.metric.name(),
            c.cmp.stratum.clone(),
            c.cmp.n.to_string(),
            f4(c.cmp.baseline),
            f4(c.cmp.current),
            signed4(c.cmp.delta),
            c.tolerance.map_or("-".into(), f4),
        ]);
    }
    out += &t.markdown();
    if fails.len() > FAILED_SHOWN {
        out += &format!(
            "\n…and {} more failed checks (in the details below).\n",
            fails.len() - FAILED_SHOWN
        );
    }
    out.push('\n');
    if let Some(s) = v.significance_sentence(r) {
        out += &format!("{}\n", md(&s));
    }
    let reasons: Vec<String> = fails.iter().take(FAILED_SHOWN).map(|c| v.reason(c, r)).collect();
    out += &format!(
        "<details><summary>Test and correction</summary>\n\n{}. {}.\n</details>\n\n",
        md(&v.settings_line()),
        md(&reasons.join("; "))
    );
    if !r.flips.is_empty() {
        out += &lost_queries(r, lost_shown);
    }
    out
}

/// The first lost queries with the rank of their first relevant result
/// before and after, then how many more and where they are.
fn lost_queries(r: &RetrieverOutcome, shown: usize) -> String {
    let verified = r.flips.iter().any(|f| f.verified.is_some());
    let mut headers = vec!["query", "stratum", "text", "rank before → now", "lost"];
    if verified {
        headers.push("labels");
    }
    let mut t = Table::new(headers.iter().map(|s| s.to_string()).collect(), 3);
    for f in r.flips.iter().take(shown) {
        let rank = |x: Option<u32>| x.map_or("none".to_string(), |k| k.to_string());
        let mut row = vec![
            f.query_id.clone(),
            f.stratum.clone(),
            clip(f.text.as_deref().unwrap_or(""), TEXT_SHOWN),
            format!("{} → {}", rank(f.ranks.0), rank(f.ranks.1)),
            f.lost.join(", "),
        ];
        if verified {
            row.push(match f.verified {
                Some(true) => "verified by a person".to_string(),
                Some(false) => "model only".to_string(),
                None => "-".to_string(),
            });
        }
        t.push(row);
    }
    let mut out = format!(
        "**Lost queries** ({} went from hit to miss; rank of the first relevant result, none = not in the ranking):\n\n",
        r.flips.len()
    );
    out += &t.markdown();
    if verified {
        let model_only = r.flips.iter().filter(|f| f.verified == Some(false)).count();
        out += &format!(
            "\n{model_only} of {} lost queries rest on the model's grades alone; a person verified the rest.\n",
            r.flips.len()
        );
    }
    if r.flips.len() > shown {
        out += &format!(
            "\n…and {} more: every lost query (anchored `#q-<id>`) is in report.html of the job's artifact, and in `rgate gate --format json`.\n",
            r.flips.len() - shown
        );
    }
    out.push('\n');
    out
}

/// One retriever's full detail, folded.
fn details(v: &GateView, r: &RetrieverOutcome) -> String {
    let mut out = format!(
        "<details><summary><b>{}</b> — {}: every check</summary>\n\n{} · {}\n\n",
        md(&r.name),
        r.verdict().name(),
        markdown_code(&r.run),
        md(&GateView::baseline_desc(r))
    );
    if !r.checks.is_empty() {
        out += &v.check_table(r).markdown();
        out.push('\n');
    }
    if let Some(t) = v.ppi_table(r) {
        out += &format!(
            "Prediction-powered estimates beside people's labels alone:\n\n{}\n",
            t.markdown()
        );
    }
    if let Some(imp) = v.improvements(r) {
        out += &format!("{}\n\n", md(&imp));
    }
    let skewed = skewed(r);
    if !skewed.is_empty() {
        out += &format!("**{SKEW_HEADING}:**\n\n");
        for s in &skewed {
            out += &format!("- {}\n", md(s));
        }
        out.push('\n');
    }
    if let Some(st) = &r.stages {
        out += &format!("**{}**\n\n", md(&GateView::stage_title(st)));
        out += &GateView::lost_table(st).markdown();
        out.push('\n');
        out += &GateView::ceiling_table(st, false).markdown();
        out.push('\n');
    }
    if !r.warnings.is_empty() {
        out += "**Warnings**\n\n";
        for w in &r.warnings {
            out += &format!("- {}\n", md(&clip(w, 600)));
        }
    }
    out += "\n</details>\n";
    out
}
