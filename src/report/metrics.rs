//! `rgate eval --list-metrics`: the measure table, rgate's names beside
//! trec_eval's and ir_measures'.

use anyhow::Result;

use super::table::Table;
use super::Format;
use crate::diag::usage_error;
use crate::metrics::MetricNames;

const HEADERS: [&str; 5] = ["metric", "aliases", "parameters", "trec_eval", "ir_measures"];

/// The table in `format`: table, markdown, csv or json (an array with one
/// object a family, each name list an array).
pub fn list(rows: &[MetricNames], format: Format) -> Result<String> {
    if format == Format::Json {
        let families: Vec<serde_json::Value> = rows
            .iter()
            .map(|r| {
                serde_json::json!({
                    "metric": r.forms,
                    "aliases": r.aliases,
                    "parameters": r.parameters,
                    "trec_eval": r.trec_eval,
                    "ir_measures": r.ir_measures,
                })
            })
            .collect();
        return Ok(serde_json::to_string_pretty(&families)? + "\n");
    }
    let mut t = Table::new(HEADERS.iter().map(|h| h.to_string()).collect(), HEADERS.len());
    for r in rows {
        t.push(vec![
            r.forms.join(", "),
            r.aliases.join(", "),
            r.parameters.clone(),
            r.trec_eval.join(", "),
            r.ir_measures.join(", "),
        ]);
    }
    match format {
        Format::Table => Ok(t.text()),
        Format::Markdown => Ok(t.markdown()),
        Format::Csv => Ok(t.csv()),
        other => Err(usage_error(
            format!("--list-metrics prints no {} format", other.name()),
            "use --format table, markdown, csv or json",
        )),
    }
}
