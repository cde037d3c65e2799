//! Building a gold set (SPEC "Building a gold set"): sample real queries
//! from a log, pool the candidates that retrievers return for them, label
//! them (by hand, with a model's suggestions as a first pass), and import the
//! verified labels into the gold set with their provenance; and migrate
//! chunk-id labels to span labels when the chunker changes.
//!
//! The labeling sheet ([`sheet`]) is the one file every step reads and
//! writes: JSONL (or CSV), one row per (query, candidate chunk), so a person
//! can also edit it by hand. Nothing here prints or reads a terminal; the
//! interactive labeler's state lives in [`label`] and its screen in the
//! command layer.

pub mod agreement;
pub mod import;
pub mod judge;
pub mod label;
pub mod migrate;
pub mod pool;
pub mod provenance;
pub mod sample;
pub mod sheet;
pub mod suggest;
pub mod verify;

use sha2::{Digest, Sha256};

/// A value from a user's file as the labeler and the gold-building
/// commands echo it: one line, its control, bidi and other invisible
/// characters shown as escapes (`\n`, `\u{202e}`), no CI command (see
/// [`crate::escape::terminal`]). A `U+202E` in a chunk's text would
/// otherwise reverse what the labeler shows, and a `\n::error::` in a
/// labeler's name would forge a workflow command in a CI log. Text of
/// several lines is split first and each line passed through.
pub fn printable(s: &str) -> String {
    crate::escape::terminal(s).into_owned()
}

/// Case and whitespace folded: two log lines that differ only there are the
/// same query.
pub fn fold(text: &str) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

/// A stable id for a query: `q-` and 8 hex digits of the folded text's
/// sha256, so the same query gets the same id in every sample.
pub fn query_id(text: &str) -> String {
    let h = Sha256::digest(fold(text).as_bytes());
    format!("q-{}", hex(&h[..4]))
}

/// A seeded sort key: ordering by it is a uniformly random permutation for a
/// given seed, needs no generator state, and keeps every other item's place
/// when one is added (a sample grows by its next items, not by reshuffling).
pub fn seeded_key(seed: u64, parts: &[&str]) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(seed.to_le_bytes());
    for p in parts {
        h.update((p.len() as u64).to_le_bytes());
        h.update(p.as_bytes());
    }
    h.finalize().into()
}

/// At most 60 characters of a value for an error message: a bad cell in a
/// 50 MB file must not be echoed whole.
pub(crate) fn excerpt(s: &str) -> String {
    const MAX: usize = 60;
    let mut out: String = s
        .chars()
        .take(MAX)
        .map(|c| if c.is_control() { '?' } else { c })
        .collect();
    if s.chars().count() > MAX {
        out.push('…');
    }
    out
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_follow_the_folded_text() {
        assert_eq!(query_id("Rotate  an API key"), query_id("rotate an api KEY "));
        assert_ne!(query_id("rotate an api key"), query_id("rotate a key"));
        // sha256("rotate an api key") starts with these 4 bytes (checked with
        // `printf 'rotate an api key' | sha256sum`).
        assert_eq!(query_id("rotate an api key"), "q-956fee24");
    }
}
