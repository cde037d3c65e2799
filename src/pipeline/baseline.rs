//! `baseline update`: the gate run against the stored baselines with every
//! lock held, then, unless it fails (or the regression is accepted), the
//! current runs recorded as the new baselines.

use std::path::{Path, PathBuf};

use anyhow::Result;

use super::gate::{decide, evaluate_runs, history_entry, prepare, Evaluated, Overrides};
use super::Watch;
use crate::baseline::{Baseline, Lock, Store, StoredQuery};
use crate::config::Config;
use crate::diag::{usage_error, UserError};
use crate::gate::{GateOutcome, Recorded, Verdict};
use crate::origin::{current_commit, now_utc, Ci};
use crate::prepared::Prepared;

/// What to record.
#[derive(Debug, Clone, Default)]
pub struct UpdateOptions {
    /// Retrievers to record; none means every configured one.
    pub names: Vec<String>,
    pub overrides: Overrides,
    /// Why this baseline is recorded (kept in the file and the history).
    pub note: Option<String>,
    /// Record even though the gate fails (needs a note).
    pub allow_regression: bool,
    /// The CI job this runs in (its commit is recorded), built by the
    /// caller: the library reads no environment.
    pub ci: Option<Ci>,
}

impl UpdateOptions {
    /// An accepted regression must say why; checked before any input is
    /// read.
    pub fn check(&self) -> Result<()> {
        if self.allow_regression && self.note.as_deref().is_none_or(|n| n.trim().is_empty()) {
            return Err(usage_error(
                "--allow-regression needs --note",
                "say why the regression is accepted: --note \"new chunker; recall drop reviewed in #123\"",
            ));
        }
        Ok(())
    }
}

/// A gate run with every selected retriever's lock held, ready to be
/// recorded; the locks are released when it is dropped.
pub struct BaselineUpdate<'a> {
    config: &'a Config,
    store: Store,
    /// Held in name order, with the names.
    locks: Vec<(String, Lock)>,
    note: Option<String>,
    allow_regression: bool,
    /// The commit recorded, asked of git before any lock is taken: a child
    /// process started under the lock would hold its descriptor until it
    /// execs, and one killed with us would block the next update.
    commit: Option<String>,
    pub prep: Prepared,
    pub runs: Vec<Evaluated>,
    pub outcome: GateOutcome,
}

/// Locks the selected retrievers and gates their current runs against the
/// stored baselines. Nothing is written until [`BaselineUpdate::record`].
pub fn baseline_update<'a>(
    config: &'a Config,
    opts: &UpdateOptions,
    watch: &dyn Watch,
) -> Result<BaselineUpdate<'a>> {
    opts.check()?;
    let prep = prepare(config)?;
    let selected = config.select(&opts.names)?;
    let store = Store::new(&config.baselines);
    let commit = current_commit(opts.ci.as_ref(), config.path.parent().unwrap_or(Path::new(".")));
    // Hold every lock from the gate check to the last write, so nobody
    // records in between; taken in name order, so two updates of
    // overlapping retrievers queue instead of each holding what the other
    // waits for.
    let mut names: Vec<&str> = selected.iter().map(|r| r.name.as_str()).collect();
    names.sort_unstable();
    let locks = names
        .iter()
        .map(|n| {
            let lock = store.lock(n, config.gate.lock_timeout, &mut |m: &str| watch.lock_wait(m))?;
            Ok((n.to_string(), lock))
        })
        .collect::<Result<Vec<_>>>()?;
    let runs = evaluate_runs(config, &prep, &selected, &opts.overrides, true, watch)?;
    let outcome = decide(config, &prep, &runs, false, true, None)?;
    Ok(BaselineUpdate {
        config,
        store,
        locks,
        note: opts.note.clone(),
        allow_regression: opts.allow_regression,
        commit,
        prep,
        runs,
        outcome,
    })
}

impl BaselineUpdate<'_> {
    /// The retrievers whose gate fails.
    pub fn failing(&self) -> Vec<&str> {
        self.outcome
            .retrievers
            .iter()
            .filter(|r| r.verdict() == Verdict::Fail)
            .map(|r| r.name.as_str())
            .collect()
    }

    /// Why nothing may be recorded: the gate fails and the regression was
    /// not accepted.
    pub fn refusal(&self) -> Option<UserError> {
        let failing = self.failing();
        if failing.is_empty() || self.allow_regression {
            return None;
        }
        Some(UserError {
            message: format!(
                "refused: the gate fails for {}; no baseline was written",
                failing.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ")
            ),
            hint: Some(format!(
                "fix the regression, or accept it on purpose: rgate baseline update {} --allow-regression --note \"why\"",
                failing.join(" ")
            )),
        })
    }

    /// Writes each baseline and its history line; refused (with
    /// [`BaselineUpdate::refusal`]'s error) when the gate fails and the
    /// regression was not accepted. Returns the files written.
    pub fn record(&mut self, watch: &dyn Watch) -> Result<Vec<PathBuf>> {
        if let Some(refused) = self.refusal() {
            return Err(anyhow::Error::new(refused));
        }
        let failing = self.failing();
        let mut written = Vec::new();
        for e in &self.runs {
            let kind = if failing.contains(&e.name.as_str()) {
                "baseline-update (regression accepted)"
            } else {
                "baseline-update"
            };
            // Both built before anything is written: `git rev-parse` runs
            // here, not between the two writes.
            let b = build(self.config, &self.prep, e, self.note.clone(), self.commit.clone());
            let entry = history_entry(&self.prep, e, kind, self.note.clone(), None, self.commit.clone());
            let lock = self
                .locks
                .iter()
                .find(|(n, _)| *n == e.name)
                .map(|(_, l)| l)
                .ok_or_else(|| anyhow::anyhow!("internal error: `{}` was not locked", e.name))?;
            let path = self.store.record(lock, &b, &entry)?;
            watch.recorded(&e.name, &path);
            written.push(path);
        }
        let accepted = (!failing.is_empty()).then(|| self.note.clone()).flatten();
        self.outcome.recorded = Some(Recorded { accepted });
        Ok(written)
    }
}

/// The baseline of a retriever's current run.
pub fn build(
    config: &Config,
    prep: &Prepared,
    e: &Evaluated,
    note: Option<String>,
    commit: Option<String>,
) -> Baseline {
    let summary = super::gate::summary_of(prep, e);
    let ids = e.judged.top_ids.as_ref();
    let cand_ids = e.candidates.as_ref().and_then(|c| c.top_ids.as_ref());
    let places = e.judged.top_places.as_ref();
    let depth = config.depth();
    let deepest = e.judged.rankings.iter().map(|r| r.num_ret).max().unwrap_or(0);
    // Only where the stored rankings cannot show it (see the field).
    let run_depth = depth.filter(|&cut| {
        deepest > cut
            && e.scores
                .metrics
                .iter()
                .any(|m| !m.is_candidates() && m.depth().is_none())
    });
    let run_depth = run_depth.map(|_| deepest);
    let cand_places = e.candidates.as_ref().and_then(|c| c.top_places.as_ref());
    Baseline {
        retriever: e.name.clone(),
        created_at: now_utc(),
        rgate_version: env!("CARGO_PKG_VERSION").to_string(),
        commit,
        note,
        gold_path: prep.gold.path.display().to_string(),
        gold_fingerprint: prep.fingerprint().to_string(),
        relevance_level: prep.relevance_level,
        metrics: e.scores.metrics.clone(),
        depth,
        run_depth,
        span_coverage: prep.gold.has_spans().then_some(prep.span_coverage),
        aggregates: summary.scope_means(),
        queries: prep
            .gold
            .queries
            .iter()
            .enumerate()
            .map(|(i, q)| StoredQuery {
                id: q.id.clone(),
                stratum: prep.gold.stratum_name(i).to_string(),
                values: e.scores.values.iter().map(|v| v[i]).collect(),
                ranking: ids.map(|ids| ids[i].clone()).unwrap_or_default(),
                candidates: cand_ids.map(|c| c[i].clone()),
                text_sha: q.text.as_deref().map(crate::baseline::text_sha),
                spans: places.map(|p| p[i].clone()).unwrap_or_default(),
                candidate_spans: cand_places.map(|p| p[i].clone()).unwrap_or_default(),
                model_values: match (&prep.ppi, &e.ppi) {
                    (Some(side), Some(model)) => {
                        side.model_of[i].map(|j| model.values.iter().map(|v| v[j]).collect())
                    }
                    _ => None,
                },
            })
            .collect(),
        model_fingerprint: prep.ppi.as_ref().map(|side| side.model.fingerprint().to_string()),
        labels: prep.label_mode,
    }
}
