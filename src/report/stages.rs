//! What `eval` and `gate` show alike of two stages (SPEC "Two stages"):
//! the table of queries by stage and its JSON object, written once.

use serde_json::{json, Value};

use super::table::Table;
use crate::stages::Lost;

/// The counts of [`Lost`], in the columns' order.
const COUNTS: [fn(&Lost) -> usize; 3] = [|l| l.reached, |l| l.dropped_by_rerank, |l| l.missed_by_retrieval];

/// Queries by stage per scope: one row per `(scope, n, item)`, each count
/// written by `cell` (`eval` prints the count, the gate `baseline ->
/// current`).
pub fn lost_table<'a, T: 'a>(
    rows: impl IntoIterator<Item = (&'a str, usize, T)>,
    cell: impl Fn(&T, fn(&Lost) -> usize) -> String,
) -> Table {
    let headers = [
        "scope",
        "n",
        "reached",
        "dropped_by_rerank",
        "missed_by_retrieval",
    ];
    let mut t = Table::new(headers.iter().map(|h| h.to_string()).collect(), 1);
    for (scope, n, item) in rows {
        let mut row = vec![scope.to_string(), n.to_string()];
        row.extend(COUNTS.iter().map(|f| cell(&item, *f)));
        t.push(row);
    }
    t
}

/// A [`Lost`] as SPEC's JSON object.
pub fn lost_json(l: &Lost) -> Value {
    json!({
        "reached": l.reached,
        "dropped_by_rerank": l.dropped_by_rerank,
        "missed_by_retrieval": l.missed_by_retrieval,
    })
}

/// The cutoff as a title states it.
pub fn cutoff_words(cutoff: Option<u32>) -> String {
    cutoff.map_or_else(|| "none (whole run)".to_string(), |k| k.to_string())
}
