//! `gold verify-sample`: draws the queries people verify, uniformly at
//! random within each stratum among the queries a model graded (SPEC
//! "Gating on model labels"; the draw and its audit are
//! [`crate::gold::draw`]), records the draw in the gold set, then writes
//! the sheet people grade. The record comes first: a sheet exists only for
//! a recorded draw, and carries the draw's id ([`VerifySample::draw_id`])
//! so `gold import` refuses a sheet of another draw.

use std::path::Path;

use anyhow::Result;
use serde_json::{json, Map, Value};

use super::sheet::{SheetRow, MODEL};
use crate::diag::{input_error_hint, usage_error};
use crate::fsutil::Rewrite;
pub use crate::gold::draw::draw;
pub use crate::gold::DrawSize;
use crate::gold::{GoldDoc, GoldFormat, GoldSet, VerifySample};

/// The sheet people grade: one row per pair the model graded for each
/// drawn query that people have not graded yet (all of them on a first
/// draw; the model's later grades of a verified query on a re-run), each
/// row carrying the draw's id, ungraded, unless `show_model` (then the
/// model's grade is the row's suggestion, as `gold judge` leaves it).
/// Hidden by default: a person who sees the model's grade tends to agree
/// with it, and PPI needs people's own grades.
pub fn sheet_rows(gold: &GoldSet, drawn: &[usize], show_model: bool, draw_id: &str) -> Vec<SheetRow> {
    let mut rows = Vec::new();
    for &i in drawn {
        let q = &gold.queries[i];
        let Some(model) = gold.labeling.model_labels(i) else {
            continue;
        };
        let graded = gold.labeling.is_verified(i).then(|| gold.people_graded(i));
        for l in model {
            if graded.as_ref().is_some_and(|g| g.contains(l.id)) {
                continue;
            }
            let mut row = SheetRow {
                query_id: q.id.clone(),
                query: q.text.clone().unwrap_or_default(),
                stratum: gold.stratum_name(i).to_string(),
                chunk_id: l.id.to_string(),
                draw: Some(draw_id.to_string()),
                ..SheetRow::default()
            };
            if show_model {
                row.grade = Some(l.grade);
                row.source = Some(MODEL.into());
            }
            rows.push(row);
        }
    }
    rows
}

/// The record of a draw as the gold file holds it.
pub fn record_value(s: &VerifySample) -> Value {
    let mut m = Map::new();
    m.insert("seed".into(), json!(s.seed));
    size_into(&mut m, s.size);
    if let Some(show) = s.show_model {
        m.insert("show_model".into(), json!(show));
    }
    if !s.eligible.is_empty() {
        m.insert(
            "eligible".into(),
            Value::Array(
                s.eligible
                    .iter()
                    .map(|e| json!({"stratum": e.stratum, "queries": e.queries, "sha256": e.sha256}))
                    .collect(),
            ),
        );
    }
    m.insert("ids".into(), json!(s.ids));
    m.insert("drawn_at".into(), json!(s.drawn_at));
    if !s.history.is_empty() {
        let h = s
            .history
            .iter()
            .map(|h| {
                let mut e = Map::new();
                e.insert("seed".into(), json!(h.seed));
                e.insert("drawn_at".into(), json!(h.drawn_at));
                size_into(&mut e, h.size);
                if let Some(show) = h.show_model {
                    e.insert("show_model".into(), json!(show));
                }
                e.insert("queries".into(), json!(h.queries));
                Value::Object(e)
            })
            .collect();
        m.insert("history".into(), Value::Array(h));
    }
    Value::Object(m)
}

fn size_into(m: &mut Map<String, Value>, size: Option<DrawSize>) {
    match size {
        Some(DrawSize::PerStratum(k)) => {
            m.insert("per_stratum".into(), json!(k));
        }
        Some(DrawSize::Fraction(f)) => {
            m.insert("fraction".into(), json!(f));
        }
        None => {}
    }
}

/// What [`record`] did.
#[derive(Debug, Clone, PartialEq)]
pub struct Recorded {
    /// The draw as the gold file now records it (the one that was there,
    /// for the same draw again).
    pub sample: VerifySample,
    /// Whether the file was written (a new draw, or an older record of the
    /// same draw completed).
    pub written: bool,
}

/// Records the draw in the gold file's `verify_sample`, under its lock and
/// atomically (the file is rewritten whole, as `gold import` does), before
/// any sheet is written. A recorded draw that differs is refused unless
/// `replace`: drawing again until the sample looks kind is what a recorded
/// seed prevents, and a replaced draw is kept in the record's `history`,
/// so every discarded seed shows in the file's diff. The same draw again
/// (same seed, size and ids) keeps its record; an older record of it,
/// without size or fingerprints, is completed, and `show_model` once true
/// stays true.
pub fn record(
    into: &Path,
    sample: &VerifySample,
    replace: bool,
    on_wait: &mut dyn FnMut(&str),
) -> Result<Recorded> {
    let file = Rewrite::begin(into, &crate::origin::now_utc(), on_wait)?;
    let gold = GoldSet::load(file.path(), None)?.0;
    if gold.format == GoldFormat::Qrels {
        return Err(input_error_hint(
            into,
            None,
            "model labels and a verification draw need a native gold set (YAML, JSON or JSONL), not TREC qrels",
            "convert the qrels to YAML first",
        ));
    }
    let mut new = sample.clone();
    if let Some(old) = &gold.labeling.verify_sample {
        let same_ids = {
            let mut a: Vec<&String> = old.ids.iter().collect();
            let mut b: Vec<&String> = sample.ids.iter().collect();
            a.sort_unstable();
            b.sort_unstable();
            a == b
        };
        let same = old.seed == sample.seed
            && same_ids
            && old.size.is_none_or(|s| Some(s) == sample.size)
            && (old.eligible.is_empty() || old.eligible == sample.eligible);
        if same {
            // Once people were shown the model's grades, the draw says so
            // for good (a sheet with them may be graded).
            let shown = old.show_model == Some(true) || sample.show_model == Some(true);
            if old.size.is_some() && !old.eligible.is_empty() && old.show_model == Some(shown) {
                // The same draw again: the record stands, with its time.
                return Ok(Recorded {
                    sample: old.clone(),
                    written: false,
                });
            }
            // The same draw, its record completed (an older record) or
            // marked as shown: its time and history kept.
            new.drawn_at = old.drawn_at.clone();
            new.history = old.history.clone();
            new.show_model = Some(shown);
        } else if !replace {
            return Err(usage_error(
                format!(
                    "{} records a draw already (seed {}, {} queries, {}); nothing was written",
                    into.display(),
                    old.seed,
                    old.ids.len(),
                    crate::escape::terminal(&old.drawn_at)
                ),
                "verify the queries drawn then (run the same command with that seed, size and --show-model choice for their sheet); pass --replace only to discard that draw (it stays in the record's history: a draw repeated until it looks kind is no random sample)",
            ));
        } else {
            new.history = old.history.clone();
            new.history.push(crate::gold::EarlierDraw {
                seed: old.seed,
                drawn_at: old.drawn_at.clone(),
                size: old.size,
                show_model: old.show_model,
                queries: old.ids.len(),
            });
        }
    }
    let mut doc = GoldDoc::read(file.path(), gold.format)?;
    new.line = None;
    doc.set_verify_sample(record_value(&new));
    drop(gold);
    let text = doc.into_text();
    crate::gold::parse_native_text(into, &text, gold_format(into, &text))?;
    file.write(text.as_bytes())?;
    Ok(Recorded {
        sample: new,
        written: true,
    })
}

fn gold_format(path: &Path, text: &str) -> GoldFormat {
    crate::gold::detect_format(path, text.as_bytes())
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    use crate::stats::uniform_below;

    /// Lemire's `below` takes the high half of x * range, rejecting the
    /// low halves past the zone: by hand, with range 3 the zone is
    /// 2^32 - 1 - (2^32 mod 3) = 2^32 - 2, and x = 2^31 gives 1.
    #[test]
    fn below_is_the_high_half_of_the_product() {
        assert_eq!(u32::MAX - 3u32.wrapping_neg() % 3, u32::MAX - 1);
        assert_eq!((u64::from(1u32 << 31) * 3) >> 32, 1);
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        for range in [1u32, 2, 3, 7, 1000] {
            for _ in 0..100 {
                assert!(uniform_below(&mut rng, range) < range);
            }
        }
    }
}
