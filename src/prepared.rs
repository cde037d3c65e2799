//! The loaded inputs every evaluating command shares: the gold set with its
//! label lookups and per-query contexts at one relevance level, the metrics,
//! and the warnings found while loading. Built once, before any run is read,
//! so gate, compare and eval judge every run against the same view.

use std::path::Path;
use std::sync::OnceLock;

use anyhow::Result;

use crate::diag::{input_error_hint, Warnings};
use crate::gold::{GoldSet, LabelMode, LabelView};
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
    /// The labels the gold set is seen through: `gold` above is already
    /// that view ([`GoldSet::view`]).
    pub label_mode: LabelMode,
    /// With `labels: ppi`: the model's side of every estimate.
    pub ppi: Option<Box<PpiSide>>,
    /// The gold set as loaded, when `gold` is a view of it (it had model
    /// grades): what the judge's agreement with people is measured on.
    pub source: Option<Box<GoldSet>>,
}

/// PPI's second scoring of every run (SPEC "Gating on model labels"): the
/// model's grades on every model-graded query. The primary [`Prepared`]
/// holds people's labels where a person graded and the model's elsewhere
/// (every query, in gold order), so its values on the verified queries are
/// people's, the sample that corrects the model's bias.
pub struct PpiSide {
    /// The gold set through [`LabelView::PpiModel`]: model-graded queries
    /// only, in gold order.
    pub model: Prepared,
    /// Per primary query: its position in `model.gold`, if model-graded.
    pub model_of: Vec<Option<usize>>,
    /// Per primary query: model-graded and verified by people (a PPI pair).
    pub verified: Vec<bool>,
}

impl PpiSide {
    /// Queries of `members` (primary positions) in stratum order: per
    /// stratum, the model-graded ones, the verified among them, and those
    /// without model grades (people's labels only).
    pub fn split(&self, gold: &GoldSet, members: &[usize]) -> Vec<StratumParts> {
        let mut parts: Vec<StratumParts> = (0..gold.strata.len()).map(|_| StratumParts::default()).collect();
        for &q in members {
            let p = &mut parts[gold.queries[q].stratum as usize];
            match self.model_of[q] {
                Some(_) => {
                    p.model.push(q);
                    if self.verified[q] {
                        p.verified.push(q);
                    }
                }
                None => p.people.push(q),
            }
        }
        parts
    }
}

/// One stratum's queries as PPI splits them (primary positions).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StratumParts {
    pub model: Vec<usize>,
    pub verified: Vec<usize>,
    pub people: Vec<usize>,
}

impl StratumParts {
    pub fn len(&self) -> usize {
        self.model.len() + self.people.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
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
            label_mode: LabelMode::People,
            ppi: None,
            source: None,
        }
    }

    /// [`Prepared::new`] on the gold set seen through `mode`'s labels. A
    /// gold set without model grades is scored as it always was under
    /// `people` and `model` (nothing to view); `ppi` needs a recorded
    /// random draw, all of it verified ([`GoldSet::check_ppi_ready`]), and
    /// verified queries in every stratum that has model grades.
    pub fn labeled(
        gold: GoldSet,
        mut warnings: Warnings,
        metrics: Vec<Metric>,
        relevance_level: i32,
        mode: LabelMode,
    ) -> Result<Prepared> {
        let graded = !gold.labeling.model.is_empty();
        let mut p = match mode {
            LabelMode::People if !graded => Prepared::new(gold, warnings, metrics, relevance_level),
            LabelMode::Model if !graded => {
                warnings.push(format!(
                    "{}: labels: model, and the gold set holds no model grades: scored with people's labels",
                    gold.path.display()
                ));
                Prepared::new(gold, warnings, metrics, relevance_level)
            }
            LabelMode::People => {
                let view = gold.view(LabelView::People)?;
                let left = gold.len() - view.len();
                if left > 0 {
                    warnings.push(format!(
                        "{}: {left} of {} queries have only a model's grades and are left out (labels: people); `labels: ppi` uses them, corrected by the verified sample",
                        gold.path.display(),
                        gold.len()
                    ));
                }
                let mut p = Prepared::new(view, warnings, metrics, relevance_level);
                p.source = Some(Box::new(gold));
                p
            }
            LabelMode::Model => {
                let view = gold.view(LabelView::Model)?;
                let model_only = (0..gold.len())
                    .filter(|&i| gold.labeling.is_model_only(i))
                    .count();
                warnings.push(format!(
                    "{}: labels: model: {model_only} of {} queries are scored with the model's grades alone, so every figure carries the model's errors (biased); `labels: ppi` corrects them with a verified random sample",
                    gold.path.display(),
                    gold.len()
                ));
                let mut p = Prepared::new(view, warnings, metrics, relevance_level);
                p.source = Some(Box::new(gold));
                p
            }
            LabelMode::Ppi => {
                for note in gold.check_ppi_ready()? {
                    warnings.push(note);
                }
                check_strata_verified(&gold)?;
                // PPI's people side is exactly the recorded draw.
                let drawn = gold.drawn();
                let primary = gold.view(LabelView::Model)?;
                let model = gold.view(LabelView::PpiModel)?;
                let mut next = 0;
                let model_of: Vec<Option<usize>> = (0..gold.len())
                    .map(|i| {
                        gold.labeling.model_labels(i).map(|_| {
                            next += 1;
                            next - 1
                        })
                    })
                    .collect();
                let verified = (0..gold.len())
                    .map(|i| model_of[i].is_some() && drawn[i] && gold.labeling.is_verified(i))
                    .collect();
                let model = Prepared::new(model, Warnings::default(), metrics.clone(), relevance_level);
                let mut p = Prepared::new(primary, warnings, metrics, relevance_level);
                p.ppi = Some(Box::new(PpiSide {
                    model,
                    model_of,
                    verified,
                }));
                p.source = Some(Box::new(gold));
                p
            }
        };
        p.label_mode = mode;
        Ok(p)
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
        if let Some(side) = self.ppi.take() {
            let PpiSide {
                model,
                model_of,
                verified,
            } = *side;
            self.ppi = Some(Box::new(PpiSide {
                model: model.with_span_coverage(coverage),
                model_of,
                verified,
            }));
        }
        self
    }

    /// Loads the gold set (and TREC strata) and parses the metric names;
    /// no names means the default metrics.
    pub fn load(
        gold: &Path,
        strata: Option<&Path>,
        metric_names: &[String],
        relevance_level: i32,
        mode: LabelMode,
    ) -> Result<Prepared> {
        let metrics = if metric_names.is_empty() {
            metrics::default_metrics()
        } else {
            metrics::parse_list(metric_names)?
        };
        let (gold, warnings) = GoldSet::load(gold, strata)?;
        Prepared::labeled(gold, warnings, metrics, relevance_level, mode)
    }
}

/// Every stratum with model-graded queries has verified ones among them:
/// without one, nothing corrects the model's errors there.
fn check_strata_verified(gold: &GoldSet) -> Result<()> {
    let mut graded = vec![0usize; gold.strata.len()];
    let mut verified = vec![0usize; gold.strata.len()];
    for (i, drawn) in gold.drawn().into_iter().enumerate() {
        if gold.labeling.model_labels(i).is_some() {
            let h = gold.queries[i].stratum as usize;
            graded[h] += 1;
            if drawn && gold.labeling.is_verified(i) {
                verified[h] += 1;
            }
        }
    }
    let bare: Vec<String> = (0..gold.strata.len())
        .filter(|&h| graded[h] > 0 && verified[h] == 0)
        .map(|h| {
            format!(
                "{} ({} model-graded)",
                crate::diag::excerpt(&gold.strata[h]),
                graded[h]
            )
        })
        .collect();
    if bare.is_empty() {
        return Ok(());
    }
    Err(input_error_hint(
        &gold.path,
        None,
        format!(
            "labels: ppi needs verified queries in every stratum the model graded; none in {}",
            crate::escape::terminal(&bare.join(", "))
        ),
        "draw per stratum with `rgate gold verify-sample --gold GOLD --per-stratum 30 --seed S --output SHEET`, grade the sheet, then `rgate gold import --with-model SHEET --into GOLD`",
    ))
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
