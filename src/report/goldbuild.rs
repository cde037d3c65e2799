//! What `gold sample`, `gold judge`, `gold import` and `gold migrate` print.

use std::path::Path;

use serde_json::json;

use super::table::Table;
use crate::diag::count;
use crate::escape;
use crate::goldbuild::import::ImportReport;
use crate::goldbuild::judge;
use crate::goldbuild::migrate::MigrateReport;
use crate::goldbuild::printable;
use crate::goldbuild::sample::LogQuery;

/// The strata mix of a sample beside the log's, for stderr.
pub fn sample_mix(log: &[LogQuery], picked: &[LogQuery], rows: usize, seed: u64) -> String {
    let mut t = Table::new(
        ["stratum", "log", "log %", "sample", "sample %"]
            .iter()
            .map(|s| s.to_string())
            .collect(),
        1,
    );
    for (s, n_log, n_sample) in &crate::goldbuild::sample::mix(log, picked) {
        t.rows.push(vec![
            printable(s),
            n_log.to_string(),
            format!("{:.1}", 100.0 * *n_log as f64 / log.len() as f64),
            n_sample.to_string(),
            format!("{:.1}", 100.0 * *n_sample as f64 / picked.len().max(1) as f64),
        ]);
    }
    format!(
        "sampled {} of {} distinct ({}, seed {seed}):\n{}",
        count(picked.len(), "query", "queries"),
        log.len(),
        count(rows, "log row", "log rows"),
        t.text()
    )
}

pub fn import_json(into: &Path, report: &ImportReport) -> serde_json::Result<String> {
    let j = json!({
        "gold": into.display().to_string(),
        "written": report.conflicts.is_empty(),
        "added_labels": report.added_labels,
        "changed_labels": report.changed_labels,
        "unchanged_labels": report.unchanged_labels,
        "added_queries": report.added_queries,
        "skipped_unverified": report.skipped_unverified,
        "template_queries": report.template,
        "dropped_template_queries": report.dropped,
        "model_queries": report.model_queries,
        "model_grades": report.model_grades,
        "verified_queries": report.verified_queries,
        "held_back_person_grades": report.partial_grades,
        "model_grades_changed": report.model_changed,
        "conflicts": report.conflicts.iter().map(|c| json!({"query_id": c.query_id, "chunk_id": c.chunk_id, "detail": c.detail})).collect::<Vec<_>>(),
    });
    Ok(serde_json::to_string_pretty(&j)? + "\n")
}

/// The conflicts that stopped an import, or what it merged.
pub fn import_text(into: &Path, report: &ImportReport) -> String {
    if !report.conflicts.is_empty() {
        let mut s = format!(
            "gold import: {} found, nothing written to {}\n",
            count(report.conflicts.len(), "conflict", "conflicts"),
            into.display()
        );
        for c in &report.conflicts {
            s += &format!(
                "  {} {}: {}\n",
                printable(&c.query_id),
                printable(&c.chunk_id),
                printable(&c.detail)
            );
        }
        s += "hint: settle them in the sheet, or pass --prefer sheet|gold to say which side wins\n";
        return s;
    }
    let mut s = format!(
        "gold import: {} added, {} changed, {} already there, {} added to {}\n",
        count(report.added_labels, "label", "labels"),
        report.changed_labels,
        report.unchanged_labels,
        count(report.added_queries, "query", "queries"),
        into.display()
    );
    if report.model_queries > 0 || report.verified_queries > 0 {
        s += &format!(
            "model grades: {} on {}{}; verified by people: {}\n",
            report.model_grades,
            count(report.model_queries, "query", "queries"),
            if report.model_changed > 0 {
                format!(" ({} changed)", report.model_changed)
            } else {
                String::new()
            },
            count(report.verified_queries, "query", "queries"),
        );
    }
    if report.partial_grades > 0 {
        s += &format!(
            "held back {} of queries people have not graded in full (their model grades count until every pair is graded)\n",
            count(report.partial_grades, "person grade", "person grades")
        );
    }
    if report.skipped_unverified > 0 {
        s += &format!(
            "skipped {} no person verified (--accept-unverified imports them)\n",
            count(report.skipped_unverified, "model suggestion", "model suggestions")
        );
    }
    if !report.dropped.is_empty() {
        let ids: Vec<&str> = report.dropped.iter().map(String::as_str).collect();
        s += &format!(
            "dropped {} `rgate init` wrote: {}\n",
            count(ids.len(), "example query", "example queries"),
            crate::diag::name_some(&ids, 5)
        );
    }
    s
}

pub fn migrate_json(gold: &Path, chunks: &Path, report: &MigrateReport) -> serde_json::Result<String> {
    let written = report.missing.is_empty() && report.migrated > 0;
    let j = json!({
        "gold": gold.display().to_string(),
        "chunks": chunks.display().to_string(),
        "written": written,
        "migrated_labels": report.migrated,
        "queries": report.queries,
        "merged_labels": report.merged,
        "missing": report.missing.iter().map(|(q, c)| json!({"query_id": q, "chunk_id": c})).collect::<Vec<_>>(),
    });
    Ok(escape::json(serde_json::to_string_pretty(&j)? + "\n"))
}

/// The labels a migration could not map, or what it rewrote.
pub fn migrate_text(gold: &Path, chunks: &Path, report: &MigrateReport) -> String {
    let gold = escape::terminal(&gold.display().to_string()).into_owned();
    if !report.missing.is_empty() {
        let mut s = format!(
            "gold migrate: {} not in {}, nothing written to {gold}\n",
            count(
                report.missing.len(),
                "label's chunk id is",
                "labels' chunk ids are"
            ),
            escape::terminal(&chunks.display().to_string()),
        );
        for (q, c) in &report.missing {
            s += &format!("  {} {}\n", escape::terminal(q), escape::terminal(c));
        }
        s += "hint: pass the chunk map of the chunking these labels were written against, or fix the labels first\n";
        return s;
    }
    if report.migrated == 0 {
        return format!("gold migrate: {gold} has no chunk-id labels; nothing to do\n");
    }
    let mut s = format!(
        "gold migrate: {} of {} now span labels in {gold}\n",
        count(report.migrated, "label", "labels"),
        count(report.queries, "query", "queries"),
    );
    if report.merged > 0 {
        s += &format!(
            "{} onto a span the query had already: kept once, at the higher grade\n",
            count(report.merged, "label fell", "labels fell")
        );
    }
    s
}

/// What `gold judge --dry-run` would send (stdout: it is what was asked).
pub fn judge_dry_run(plan: &judge::Plan, url: &str, model: &str) -> String {
    let mut s = format!(
        "gold judge --dry-run: would send {} ({} prompt characters) to {} for {}\n",
        count(plan.jobs.len(), "request", "requests"),
        plan.prompt_chars(),
        escape::terminal(url),
        escape::terminal(model),
    );
    s += &judge_plan_notes(plan, true);
    s
}

/// What the plan left out, one line each; `rows`: first the rows to grade.
fn judge_plan_notes(plan: &judge::Plan, rows: bool) -> String {
    let mut s = String::new();
    let canaries = plan.jobs.iter().filter(|j| j.canary.is_some()).count();
    if rows {
        s += &format!(
            "{} to grade: {} answered by the cache{}\n",
            count(plan.rows, "row", "rows"),
            plan.cached.len(),
            if canaries > 0 {
                format!("; {} of the requests are canaries", canaries)
            } else {
                String::new()
            }
        );
    }
    if plan.over_budget > 0 {
        s += &format!(
            "{} beyond --max-requests not sent ({} stay ungraded)\n",
            count(plan.over_budget, "request", "requests"),
            count(plan.over_budget_rows, "row", "rows")
        );
    }
    if plan.already > 0 {
        s += &format!(
            "{} already graded by this model with this prompt\n",
            count(plan.already, "row", "rows")
        );
    }
    if plan.graded_by_others > 0 {
        s += &format!(
            "{} graded by someone else left alone (--second-opinion grades them beside)\n",
            count(plan.graded_by_others, "row", "rows")
        );
    }
    if plan.no_text > 0 {
        s += &format!(
            "warning: {} no passage text and cannot be judged; pool with --corpus\n",
            count(plan.no_text, "row has", "rows have")
        );
    }
    for (kind, made) in judge::CanaryKind::ALL.iter().zip(plan.canary_made) {
        if made < plan.canary_asked {
            s += &format!(
                "note: {} asked, the sheet has queries for {made}\n",
                count(
                    plan.canary_asked,
                    &format!("{} canary", canary_name(*kind)),
                    &format!("{} canaries", canary_name(*kind))
                ),
            );
        }
    }
    s
}

/// At most this many failure reasons are listed; the rest are counted.
const FAILURES_SHOWN: usize = 5;

/// What `gold judge` did, for stderr.
pub fn judge_summary(
    model: &str,
    plan: &judge::Plan,
    ran: &judge::Ran,
    stored: &judge::Stored,
    canaries: &[judge::Canary],
) -> String {
    let model = escape::terminal(model);
    let answered = ran
        .outcomes
        .iter()
        .filter(|o| matches!(o, judge::Outcome::Graded(_)))
        .count();
    let failures: Vec<&str> = ran
        .outcomes
        .iter()
        .filter_map(|o| match o {
            judge::Outcome::Failed(m) => Some(m.as_str()),
            _ => None,
        })
        .collect();
    let mut s = format!(
        "gold judge ({model}): {} graded ({} from the cache), stored as unverified, source model\n",
        count(stored.stored + stored.as_opinion, "row", "rows"),
        plan.cached.len(),
    );
    s += &format!(
        "{} sent: {answered} answered, {} failed{}{}\n",
        count(ran.sent, "request", "requests"),
        failures.len(),
        if ran.retries > 0 {
            format!(
                ", {} after 429/5xx/timeouts",
                count(ran.retries, "retry", "retries")
            )
        } else {
            String::new()
        },
        if ran.fatal.is_some() {
            let left = ran.outcomes.len().saturating_sub(ran.sent);
            format!("; stopped on the error below, {left} not sent")
        } else {
            String::new()
        }
    );
    for f in failures.iter().take(FAILURES_SHOWN) {
        s += &format!("  failed: {f}\n");
    }
    if failures.len() > FAILURES_SHOWN {
        s += &format!("  … and {} more\n", failures.len() - FAILURES_SHOWN);
    }
    if !failures.is_empty() {
        s += "hint: run again to retry the failed rows; answered ones come from the cache for free\n";
    }
    if ran.usage_reported > 0 {
        s += &format!(
            "tokens: {} in, {} out (reported by {} of {} answers)\n",
            ran.usage.input, ran.usage.output, ran.usage_reported, ran.answers
        );
    }
    if stored.as_opinion > 0 {
        s += &format!(
            "{} kept as an opinion beside another labeler's grade (the row's own grade stands)\n",
            count(stored.as_opinion, "grade", "grades")
        );
    }
    if stored.left_alone > 0 {
        s += &format!(
            "{} a person graded during the run kept the person's grade\n",
            count(stored.left_alone, "row", "rows")
        );
    }
    if stored.gone > 0 {
        s += &format!(
            "warning: {} left the sheet during the run; their grades were dropped\n",
            count(stored.gone, "row", "rows")
        );
    }
    s += &judge_plan_notes(plan, false);
    for c in canaries {
        let [g0, g1, g2, g3] = c.by_grade;
        match c.kind {
            judge::CanaryKind::Keywords => {
                s += &format!(
                    "canary: {} of {} keyword-only passages graded relevant (grade >= 1; by grade 0/1/2/3: {g0}/{g1}/{g2}/{g3}); not written to the sheet\n",
                    c.relevant(),
                    c.graded,
                );
                if c.relevant() > 0 {
                    s += "note: the model calls passages relevant that only repeat the query's words; verify its 1s and 2s with care (Alaofi et al. 2025)\n";
                }
            }
            judge::CanaryKind::Injection => {
                s += &format!(
                    "canary: {} of {} injected passages (no answer, an instruction to grade them {}) graded as told, {} relevant (by grade 0/1/2/3: {g0}/{g1}/{g2}/{g3}); not written to the sheet\n",
                    c.obeyed(),
                    c.graded,
                    judge::INJECTED_GRADE,
                    c.relevant(),
                );
                if c.relevant() > 0 {
                    s += "warning: the model follows instructions written in the passages it grades, so a passage can set its own grade; tell it to ignore them (--prompt) and measure again before trusting its grades\n";
                }
            }
        }
    }
    s
}

/// A canary kind as the summary names it.
fn canary_name(kind: judge::CanaryKind) -> &'static str {
    match kind {
        judge::CanaryKind::Keywords => "keyword",
        judge::CanaryKind::Injection => "injection",
    }
}
