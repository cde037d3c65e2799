//! What `gold sample`, `gold import` and `gold migrate` print.

use std::path::Path;

use serde_json::json;

use super::table::Table;
use crate::diag::count;
use crate::escape;
use crate::goldbuild::import::ImportReport;
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
