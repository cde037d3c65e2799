//! `gold verify-sample`: draws the queries people verify, uniformly at
//! random within each stratum among the queries a model graded (SPEC
//! "Gating on model labels"). Prediction-powered inference corrects the
//! model's bias with the verified queries; its interval is valid only when
//! they are a uniform random sample (Angelopoulos et al., Science 2023,
//! assume i.i.d. labeled and unlabeled data), so the draw is seeded and
//! recorded in the gold set, and `labels: ppi` checks the record.
//!
//! The draw is portable: a stratum's candidates are its model-graded
//! queries sorted by id bytes, its random stream is ChaCha8 seeded with
//! `seed_from_u64(seed)` on stream number = the stratum's rank among the
//! strata sorted by name (so neither the file's order nor other strata
//! change a stratum's draw), indices come from [`below`] written out
//! (Lemire's multiply-and-reject), and the first k of a Fisher-Yates
//! shuffle are taken. The same seed draws the same queries on any machine;
//! tests/it/ppi_labels.rs checks a draw against a ChaCha8 written in
//! Python from the ChaCha specification.

use std::path::Path;

use anyhow::Result;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde_json::json;

use super::sheet::{SheetRow, MODEL};
use crate::diag::{input_error_hint, usage_error};
use crate::fsutil::Rewrite;
use crate::gold::{GoldDoc, GoldFormat, GoldSet, VerifySample};
use crate::stats::uniform_below;

/// How many queries to draw from each stratum.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum DrawSize {
    /// Up to N per stratum (all of a smaller stratum).
    PerStratum(usize),
    /// This share of each stratum's model-graded queries, rounded up, so
    /// a stratum with any gets at least one.
    Fraction(f64),
}

impl DrawSize {
    fn of(self, n: usize) -> usize {
        match self {
            DrawSize::PerStratum(k) => k.min(n),
            // Less a hair: 0.2 x 10 is 2.0000000000000004 in binary.
            DrawSize::Fraction(f) => (((f * n as f64) - 1e-9).ceil().max(0.0) as usize).min(n),
        }
    }
}

/// The drawn query positions: strata by name, within each the drawn
/// queries sorted by id. Strata without model grades draw nothing.
pub fn draw(gold: &GoldSet, size: DrawSize, seed: u64) -> Vec<usize> {
    let ranks = gold.stratum_ranks();
    let mut by_rank: Vec<(u32, usize)> = ranks.iter().enumerate().map(|(s, &r)| (r, s)).collect();
    by_rank.sort_unstable();
    let mut out = Vec::new();
    for (rank, stratum) in by_rank {
        let mut pool: Vec<usize> = (0..gold.len())
            .filter(|&i| gold.queries[i].stratum as usize == stratum && gold.labeling.model.contains_key(&i))
            .collect();
        pool.sort_unstable_by(|&a, &b| gold.queries[a].id.as_bytes().cmp(gold.queries[b].id.as_bytes()));
        let k = size.of(pool.len());
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        rng.set_stream(u64::from(rank));
        for i in 0..k {
            // A gold set is bounded far below 2^32 queries (GOLD_LIMIT).
            let j = i + uniform_below(&mut rng, (pool.len() - i) as u32) as usize;
            pool.swap(i, j);
        }
        let mut drawn = pool[..k].to_vec();
        drawn.sort_unstable_by(|&a, &b| gold.queries[a].id.as_bytes().cmp(gold.queries[b].id.as_bytes()));
        out.extend(drawn);
    }
    out
}

/// The sheet people grade: one row per pair the model graded for each
/// drawn query, ungraded, unless `show_model` (then the model's grade is
/// the row's suggestion, as `gold judge` leaves it). Hidden by default:
/// a person who sees the model's grade tends to agree with it, and PPI
/// needs people's own grades.
pub fn sheet_rows(gold: &GoldSet, drawn: &[usize], show_model: bool) -> Vec<SheetRow> {
    let mut rows = Vec::new();
    for &i in drawn {
        let q = &gold.queries[i];
        let Some(model) = gold.labeling.model_labels(i) else {
            continue;
        };
        for l in model {
            let mut row = SheetRow {
                query_id: q.id.clone(),
                query: q.text.clone().unwrap_or_default(),
                stratum: gold.stratum_name(i).to_string(),
                chunk_id: l.id.to_string(),
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

/// Records the draw in the gold file's `verify_sample`, under its lock and
/// atomically (the file is rewritten whole, as `gold import` does). A
/// recorded draw that differs is refused unless `replace`: drawing again
/// until the sample looks kind is what a recorded seed prevents.
pub fn record(
    into: &Path,
    sample: &VerifySample,
    replace: bool,
    on_wait: &mut dyn FnMut(&str),
) -> Result<()> {
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
    if let Some(old) = &gold.labeling.verify_sample {
        if !replace && (old.seed != sample.seed || old.ids != sample.ids) {
            return Err(usage_error(
                format!(
                    "{} records a draw already (seed {}, {} queries, {})",
                    into.display(),
                    old.seed,
                    old.ids.len(),
                    crate::escape::terminal(&old.drawn_at)
                ),
                "verify the queries drawn then; pass --replace only to discard that draw (a draw repeated until it looks kind is no random sample)",
            ));
        }
        if old.seed == sample.seed && old.ids == sample.ids {
            // The same draw again: the record stands, with its time.
            return Ok(());
        }
    }
    let mut doc = GoldDoc::read(file.path(), gold.format)?;
    doc.set_verify_sample(json!({"seed": sample.seed, "ids": sample.ids, "drawn_at": sample.drawn_at}));
    drop(gold);
    let text = doc.into_text();
    crate::gold::parse_native_text(into, &text, gold_format(into, &text))?;
    file.write(text.as_bytes())
}

fn gold_format(path: &Path, text: &str) -> GoldFormat {
    crate::gold::detect_format(path, text.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn fractions_round_up_and_sizes_stop_at_the_stratum() {
        assert_eq!(DrawSize::Fraction(0.1).of(25), 3);
        assert_eq!(DrawSize::Fraction(0.1).of(1), 1);
        assert_eq!(DrawSize::Fraction(1.0).of(4), 4);
        assert_eq!(DrawSize::Fraction(0.2).of(10), 2);
        assert_eq!(DrawSize::Fraction(0.3).of(10), 3);
        assert_eq!(DrawSize::PerStratum(5).of(3), 3);
        assert_eq!(DrawSize::PerStratum(5).of(0), 0);
    }
}
