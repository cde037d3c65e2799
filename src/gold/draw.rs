//! The verification draw (SPEC "Gating on model labels"): which queries
//! people verify, drawn uniformly at random within each stratum among the
//! queries a model graded, and the audit that recomputes a recorded draw
//! from its seed. Prediction-powered inference is valid only when the
//! verified queries are a uniform random sample (Angelopoulos et al.,
//! Science 2023, assume i.i.d. labeled and unlabeled data); a record that
//! can be edited unseen, or a sample drawn from other queries than the gold
//! set now holds, voids that promise, so every PPI estimate is preceded by
//! [`GoldSet::check_draw`].
//!
//! The draw is portable: a stratum's candidates are its model-graded
//! queries sorted by id bytes, its random stream is ChaCha8 seeded with
//! `seed_from_u64(seed)` on stream number = the stratum's rank among the
//! strata sorted by name (so neither the file's order nor other strata
//! change a stratum's draw), indices come from
//! [`crate::stats::uniform_below`] (Lemire's multiply-and-reject), and the
//! first k of a Fisher-Yates shuffle are taken. The same seed draws the
//! same queries on any machine; tests/it/ppi_labels.rs checks a draw
//! against a ChaCha8 written in Python from the ChaCha specification.
//!
//! The record keeps what recomputes it: the seed, the size (`per_stratum`
//! or `fraction`), and per stratum the number and a sha256 of the sorted
//! ids it was drawn from (`eligible`). A query added after the draw changes
//! its stratum's fingerprint; an edited seed, a swapped id or a renamed
//! stratum no longer reproduces the ids.

use std::collections::{HashMap, HashSet};

use anyhow::Result;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use sha2::{Digest, Sha256};

use super::{DrawSize, Eligible, GoldSet, VerifySample};
use crate::diag::{excerpt, input_error_hint, name_some};
use crate::stats::uniform_below;

/// Per stratum (by stratum number), its model-graded queries sorted by id
/// bytes: what a draw is taken from.
pub fn eligible_queries(gold: &GoldSet) -> Vec<Vec<usize>> {
    let mut pools: Vec<Vec<usize>> = vec![Vec::new(); gold.strata.len()];
    for &i in gold.labeling.model.keys() {
        pools[gold.queries[i].stratum as usize].push(i);
    }
    for p in &mut pools {
        p.sort_unstable_by(|&a, &b| gold.queries[a].id.as_bytes().cmp(gold.queries[b].id.as_bytes()));
    }
    pools
}

/// `sha256:` and the hex digest of `ids` (sorted), one a line. Ids hold no
/// white space, so the lines cannot run into each other.
pub fn ids_fingerprint<'a>(ids: impl IntoIterator<Item = &'a str>) -> String {
    let mut h = Sha256::new();
    h.update(b"rgate-draw-eligible-v1\n");
    for id in ids {
        h.update(id.as_bytes());
        h.update(b"\n");
    }
    format!("sha256:{:x}", h.finalize())
}

/// The `eligible:` record of the gold set as it is: each stratum that has
/// model-graded queries, by name.
pub fn eligible_record(gold: &GoldSet) -> Vec<Eligible> {
    let pools = eligible_queries(gold);
    let mut out: Vec<Eligible> = pools
        .iter()
        .enumerate()
        .filter(|(_, p)| !p.is_empty())
        .map(|(s, p)| Eligible {
            stratum: gold.strata[s].clone(),
            queries: p.len(),
            sha256: ids_fingerprint(p.iter().map(|&i| gold.queries[i].id.as_str())),
        })
        .collect();
    out.sort_by(|a, b| a.stratum.as_bytes().cmp(b.stratum.as_bytes()));
    out
}

/// The drawn query positions: strata by name, within each the drawn
/// queries sorted by id. Strata without model grades draw nothing.
pub fn draw(gold: &GoldSet, size: DrawSize, seed: u64) -> Vec<usize> {
    draw_with(gold, seed, |_, n| size.of(n))
}

/// [`draw`] with each stratum's count given by `k(stratum, eligible)`.
fn draw_with(gold: &GoldSet, seed: u64, k: impl Fn(usize, usize) -> usize) -> Vec<usize> {
    let ranks = gold.stratum_ranks();
    let mut by_rank: Vec<(u32, usize)> = ranks.iter().enumerate().map(|(s, &r)| (r, s)).collect();
    by_rank.sort_unstable();
    let mut pools = eligible_queries(gold);
    let mut out = Vec::new();
    for (rank, stratum) in by_rank {
        let pool = &mut pools[stratum];
        let k = k(stratum, pool.len()).min(pool.len());
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

/// What to do about a record that does not hold.
const REDRAW: &str = "a verification draw is a uniform sample of the model-graded queries it was drawn from, recomputed from its seed: restore the record and the gold set as they were (git), or draw again with `rgate gold verify-sample --replace` (the discarded draw stays in the record's `history`)";

impl GoldSet {
    /// The chunk ids people graded on query `i` (its `relevant` ids, 0s
    /// included: a verified query's people graded every pair listed).
    /// Verification is per pair: a model grade added to a verified query
    /// later is not among them until a person grades it.
    pub fn people_graded(&self, i: usize) -> HashSet<&str> {
        self.queries[i].labels.iter().map(|l| l.id).collect()
    }

    /// Per drawn, verified query: how many of its model-graded pairs no
    /// person graded (a model grade added after people verified it).
    /// Positions with none are left out.
    pub fn drawn_ungraded(&self) -> Vec<(usize, usize)> {
        let drawn = self.drawn();
        (0..self.len())
            .filter(|&i| drawn[i] && self.labeling.is_verified(i))
            .filter_map(|i| {
                let graded = self.people_graded(i);
                let open = self
                    .labeling
                    .model_labels(i)?
                    .iter()
                    .filter(|l| !graded.contains(l.id))
                    .count();
                (open > 0).then_some((i, open))
            })
            .collect()
    }

    /// Positions of the queries the recorded draw holds (none without a
    /// record).
    pub fn drawn(&self) -> Vec<bool> {
        let mut out = vec![false; self.len()];
        for id in self.labeling.verify_sample.iter().flat_map(|s| &s.ids) {
            if let Some(p) = self.position(id) {
                out[p] = true;
            }
        }
        out
    }

    /// Recomputes the recorded draw from its seed and refuses a record it
    /// does not reproduce (exit 2, naming the record's line): an edited
    /// seed, ids removed, added or swapped, strata renamed, queries added
    /// or removed after the draw. A record without its size and
    /// fingerprints (written before rgate kept them) is read with the
    /// warning returned: it says whether the seed draws its ids at the
    /// counts it holds per stratum, and how to record the draw again.
    pub fn check_draw(&self) -> Result<Option<String>> {
        let Some(sample) = &self.labeling.verify_sample else {
            return Ok(None);
        };
        let refuse = |msg: String, hint: &str| Err(input_error_hint(&self.path, sample.line, msg, hint));
        let pools = eligible_queries(self);
        let (size, legacy) = match (sample.size, sample.eligible.is_empty()) {
            (Some(size), false) => (Some(size), false),
            (None, true) => (None, true),
            _ => {
                return refuse(
                    "verify_sample: the record has its size or its `eligible` fingerprints, not both".into(),
                    REDRAW,
                )
            }
        };
        if let Some(size) = size {
            // Every drawn query must be one the draw could take.
            let not_eligible: Vec<String> = sample
                .ids
                .iter()
                .filter(|id| {
                    self.position(id)
                        .is_none_or(|p| self.labeling.model_labels(p).is_none())
                })
                .map(|id| format!("`{}`", excerpt(id)))
                .collect();
            if !not_eligible.is_empty() {
                let shown: Vec<&str> = not_eligible.iter().map(String::as_str).collect();
                return refuse(
                    format!(
                        "verify_sample: {} drawn {} no model grades, so no draw could take {}: {}",
                        not_eligible.len(),
                        if not_eligible.len() == 1 {
                            "query has"
                        } else {
                            "queries have"
                        },
                        if not_eligible.len() == 1 { "it" } else { "them" },
                        name_some(&shown, 5)
                    ),
                    REDRAW,
                );
            }
            self.check_eligible(sample, &pools)?;
            let drawn = draw(self, size, sample.seed);
            self.check_ids(sample, &drawn)?;
            return Ok(None);
        }
        debug_assert!(legacy);
        // An older record: each stratum at the count it recorded. Read
        // with a warning either way (gold sets and fixtures made by hand
        // before the audit hold such records); what it says differs.
        let mut counts = vec![0usize; self.strata.len()];
        for id in &sample.ids {
            if let Some(p) = self.position(id) {
                counts[self.queries[p].stratum as usize] += 1;
            }
        }
        let drawn = draw_with(self, sample.seed, |s, _| counts[s]);
        let reproduced = self.check_ids(sample, &drawn).is_ok();
        let most = counts.iter().max().copied().unwrap_or(0);
        Ok(Some(format!(
            "{}{}: verify_sample has no size or `eligible` fingerprints (recorded before rgate kept them, or stripped): {}; record the draw again with `rgate gold verify-sample --gold {} --seed {} --per-stratum {most} --output SHEET`{}",
            crate::escape::path(&self.path),
            sample.line.map(|l| format!(":{l}")).unwrap_or_default(),
            if reproduced {
                "its seed draws its queries again, but queries added since the draw cannot be told"
            } else {
                "its seed does not draw its queries, so nothing shows they are a random sample (drawn by hand, or edited)"
            },
            crate::escape::path(&self.path),
            sample.seed,
            if reproduced {
                " (the same draw: the record gains what audits it)"
            } else {
                " --replace (a new random draw, to verify)"
            },
        )))
    }

    /// The strata and their model-graded queries are those the draw saw.
    fn check_eligible(&self, sample: &VerifySample, pools: &[Vec<usize>]) -> Result<()> {
        let refuse = |msg: String| {
            Err(input_error_hint(
                &self.path,
                sample.line,
                format!("verify_sample: {msg}"),
                REDRAW,
            ))
        };
        let now: HashMap<&str, usize> = self
            .strata
            .iter()
            .enumerate()
            .filter(|(s, _)| !pools[*s].is_empty())
            .map(|(s, name)| (name.as_str(), s))
            .collect();
        let mut seen = HashSet::new();
        for e in &sample.eligible {
            if !seen.insert(e.stratum.as_str()) {
                return refuse(format!(
                    "stratum `{}` is listed twice in `eligible`",
                    excerpt(&e.stratum)
                ));
            }
            let Some(&s) = now.get(e.stratum.as_str()) else {
                return refuse(format!(
                    "the draw was taken from stratum `{}` ({} model-graded), which the gold set no longer has (renamed or removed after the draw)",
                    excerpt(&e.stratum),
                    e.queries
                ));
            };
            let pool = &pools[s];
            let fp = ids_fingerprint(pool.iter().map(|&i| self.queries[i].id.as_str()));
            if fp != e.sha256 {
                return refuse(format!(
                    "the model-graded queries of stratum `{}` changed after the draw ({} then, {} now): queries were added, removed or renamed since",
                    excerpt(&e.stratum),
                    e.queries,
                    pool.len()
                ));
            }
        }
        let mut unseen: Vec<&str> = now.keys().copied().filter(|n| !seen.contains(n)).collect();
        unseen.sort_unstable();
        if let Some(name) = unseen.first() {
            return refuse(format!(
                "stratum `{}` has {} model-graded queries the draw never saw (added or renamed after the draw)",
                excerpt(name),
                pools[now[name]].len()
            ));
        }
        Ok(())
    }

    /// The recorded ids are exactly what the seed draws.
    fn check_ids(&self, sample: &VerifySample, drawn: &[usize]) -> Result<()> {
        let drawn: HashSet<&str> = drawn.iter().map(|&i| self.queries[i].id.as_str()).collect();
        let recorded: HashSet<&str> = sample.ids.iter().map(String::as_str).collect();
        if drawn == recorded {
            return Ok(());
        }
        let mut extra: Vec<&str> = recorded.difference(&drawn).copied().collect();
        let mut missing: Vec<&str> = drawn.difference(&recorded).copied().collect();
        extra.sort_unstable();
        missing.sort_unstable();
        let list = |ids: &[&str]| {
            let shown: Vec<String> = ids.iter().map(|id| format!("`{}`", excerpt(id))).collect();
            let shown: Vec<&str> = shown.iter().map(String::as_str).collect();
            name_some(&shown, 5)
        };
        let mut parts = Vec::new();
        if !extra.is_empty() {
            parts.push(format!(
                "{} recorded and not drawn ({})",
                extra.len(),
                list(&extra)
            ));
        }
        if !missing.is_empty() {
            parts.push(format!(
                "{} drawn and not recorded ({})",
                missing.len(),
                list(&missing)
            ));
        }
        Err(input_error_hint(
            &self.path,
            sample.line,
            format!(
                "verify_sample: seed {} does not draw the recorded queries: {} (the seed or the ids were edited)",
                sample.seed,
                parts.join("; ")
            ),
            REDRAW,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    /// The fingerprint's bytes, by hand: a header line, then each id on a
    /// line of its own (checked with `printf 'rgate-draw-eligible-v1\nq1\nq2\n' | sha256sum`).
    #[test]
    fn the_eligible_fingerprint_is_the_ids_one_a_line() {
        let mut h = Sha256::new();
        h.update(b"rgate-draw-eligible-v1\nq1\nq2\n");
        assert_eq!(
            ids_fingerprint(["q1", "q2"]),
            format!("sha256:{:x}", h.finalize())
        );
        assert_ne!(ids_fingerprint(["q1", "q2"]), ids_fingerprint(["q1q2"]));
    }
}
