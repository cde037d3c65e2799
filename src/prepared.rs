//! The loaded inputs every evaluating command shares: the gold set with its
//! label lookups and per-query contexts at one relevance level, the metrics,
//! and the warnings found while loading. Built once, before any run is read,
//! so gate, compare and eval judge every run against the same view.

use std::path::Path;
use std::sync::OnceLock;

use anyhow::Result;

use crate::diag::Warnings;
use crate::gold::GoldSet;
use crate::judge::{self, QueryContext, QueryLabels};
use crate::metrics::{self, Metric};

/// A gold set prepared for judging runs: label lookups and per-query
/// contexts at one relevance level, and the metrics to compute.
pub struct Prepared {
    pub gold: GoldSet,
    pub labels: Vec<QueryLabels>,
    pub contexts: Vec<QueryContext>,
    pub metrics: Vec<Metric>,
    pub relevance_level: i32,
    /// Share of a span label retrieved chunks must cover (see
    /// [`crate::judge`]); the labels above are built at it.
    pub span_coverage: f64,
    /// The gold set's fingerprint, hashed on first use: compare never
    /// needs it, and eval and the gate hash it while their runs are read
    /// (see [`Prepared::hashing_beside`]) rather than before.
    fingerprint: OnceLock<String>,
    pub warnings: Warnings,
}

impl Prepared {
    pub fn new(
        gold: GoldSet,
        mut warnings: Warnings,
        metrics: Vec<Metric>,
        relevance_level: i32,
    ) -> Prepared {
        let (labels, contexts) = rayon::join(
            || judge::label_index(&gold),
            || judge::contexts(&gold, relevance_level),
        );
        // Which queries can never be hit depends on the relevance level, so
        // the warning is made here rather than by the loader.
        let never: Vec<&str> = gold
            .queries
            .iter()
            .zip(&contexts)
            .filter(|(_, c)| c.num_rel == 0)
            .map(|(q, _)| q.id.as_str())
            .collect();
        if !never.is_empty() {
            warnings.push(format!(
                "{}: {} quer{} no label with grade >= {relevance_level} and can never be hit (they score 0 and stay in the averages): {}",
                gold.path.display(),
                never.len(),
                if never.len() == 1 { "y has" } else { "ies have" },
                crate::diag::name_some(&never, 5)
            ));
        }
        Prepared {
            fingerprint: OnceLock::new(),
            gold,
            labels,
            contexts,
            metrics,
            relevance_level,
            span_coverage: judge::DEFAULT_SPAN_COVERAGE,
            warnings,
        }
    }

    /// The gold set's fingerprint (see [`GoldSet::fingerprint`]).
    pub fn fingerprint(&self) -> &str {
        self.fingerprint.get_or_init(|| self.gold.fingerprint())
    }

    /// Runs `work` (reading runs) while the fingerprint is hashed on
    /// another thread. Hashing a large gold set (a sort and a SHA-256 of
    /// every label: 35 ms for 70,000 queries) before the first run line is
    /// read kept a core idle; beside the read it fills the gaps the run
    /// reader's parts leave, and the reader's parts rebalance around it.
    pub fn hashing_beside<T: Send>(&self, work: impl FnOnce() -> T + Send) -> T {
        rayon::join(work, || {
            self.fingerprint();
        })
        .0
    }

    /// Judges span labels at `coverage` instead of the default (a gold set
    /// without spans is left as it is).
    pub fn with_span_coverage(mut self, coverage: f64) -> Prepared {
        if self.gold.has_spans() {
            self.labels = judge::label_index_at(&self.gold, coverage);
        }
        self.span_coverage = coverage;
        self
    }

    /// Loads the gold set (and TREC strata) and parses the metric names;
    /// no names means the default metrics.
    pub fn load(
        gold: &Path,
        strata: Option<&Path>,
        metric_names: &[String],
        relevance_level: i32,
    ) -> Result<Prepared> {
        let metrics = if metric_names.is_empty() {
            metrics::default_metrics()
        } else {
            metrics::parse_list(metric_names)?
        };
        let (gold, warnings) = GoldSet::load(gold, strata)?;
        Ok(Prepared::new(gold, warnings, metrics, relevance_level))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gold::{GoldFormat, GoldQuery, Label};

    #[test]
    fn never_hit_queries_depend_on_the_relevance_level() {
        let q = |id: &str, grade: i32| GoldQuery {
            id: id.into(),
            text: None,
            stratum: 0,
            spans: Vec::new(),
            labels: vec![Label {
                id: "d".into(),
                grade,
            }]
            .into(),
        };
        let gold = GoldSet::from_parts(
            "g",
            GoldFormat::Yaml,
            vec![q("a", 2), q("b", 1), q("c", 0)],
            vec!["s".into()],
        )
        .unwrap();
        let p1 = Prepared::new(gold.clone(), Warnings::default(), metrics::default_metrics(), 1);
        assert_eq!(p1.warnings.0.len(), 1);
        assert!(
            p1.warnings.0[0].contains("1 query has no label with grade >= 1"),
            "{:?}",
            p1.warnings
        );
        assert!(p1.warnings.0[0].contains("`c`"));
        let p2 = Prepared::new(gold, Warnings::default(), metrics::default_metrics(), 2);
        assert!(p2.warnings.0[0].contains("2 queries have no label with grade >= 2 and can never be hit (they score 0 and stay in the averages): `b`, `c`"), "{:?}", p2.warnings);
    }
}
