//! `rgate eval`'s report ([`EvalView`]) and what its formats share: the
//! tables of means, of queries, and of the two stages.

use anyhow::Result;

use super::stages::{cutoff_words, lost_table};
use super::table::{f4, Table};
use crate::curve::Curve;
use crate::diag::{count, Warnings};
use crate::eval::{MeanIntervals, Row, RowScope, Scores, Summary};
use crate::ppi::PpiSummary;
use crate::prepared::Prepared;
use crate::report::Format;
use crate::run::JudgedRun;
use crate::stages::{self, Stages};
use crate::stats::interval::Interval;
use crate::stats::ppi::PpiCombined;

/// A PPI figure with its interval, `[-]` where it has none.
pub(super) fn with_interval(mean: f64, interval: Option<(f64, f64)>, f: fn(f64) -> String) -> String {
    match interval {
        Some((lo, hi)) => format!("{} [{}, {}]", f(mean), f(lo), f(hi)),
        None => format!("{} [-]", f(mean)),
    }
}

/// What a two-stage table is on under `labels: ppi` (its title says it).
pub(super) const PPI_STAGES: &str = " · labels: ppi: queries by stage, final and ceiling on the labels each query was scored with (people's where verified, the model's elsewhere), not PPI estimates";

/// An effective number of queries as reports print it: whole, or "inf".
pub(super) fn effective_n(n: f64) -> String {
    if n.is_finite() {
        format!("{:.0}", n)
    } else {
        "inf".to_string()
    }
}

/// The candidate list beside the final run, and what the two stages say.
pub struct StageView<'a> {
    pub run: &'a JudgedRun,
    pub stages: &'a Stages,
    /// Warnings about the two stages together (chunks the reranker added).
    pub warnings: &'a Warnings,
}

pub struct EvalView<'a> {
    pub prep: &'a Prepared,
    pub run: &'a JudgedRun,
    pub candidates: Option<StageView<'a>>,
    pub scores: &'a Scores,
    pub summary: &'a Summary,
    /// 95% intervals on the summary's means (none under `--resamples 0`).
    pub intervals: Option<&'a MeanIntervals>,
    pub per_query: bool,
    pub by_stratum: bool,
    /// `--format trec` in trec_eval's measure names, order and layout
    /// (the command has checked that every metric has a trec_eval name).
    pub trec_names: bool,
    /// `--curve`: each metric at every cutoff of its range.
    pub curves: &'a [Curve],
    /// With `labels: ppi`: the estimates the summary's means are.
    pub ppi: Option<&'a PpiSummary>,
}

impl EvalView<'_> {
    pub fn render(&self, format: Format) -> Result<String> {
        format.exporter().eval(self)
    }

    /// Each metric's interval method ([`crate::eval::interval_method`]).
    pub(super) fn interval_methods(&self) -> Vec<&'static str> {
        (0..self.scores.metrics.len())
            .map(|m| crate::eval::interval_method(self.scores, m))
            .collect()
    }

    /// The interval method in one phrase: the one every metric shares, else
    /// each metric's.
    pub(super) fn interval_method(&self) -> String {
        let methods = self.interval_methods();
        let mut distinct: Vec<&str> = Vec::new();
        for m in &methods {
            if !distinct.contains(m) {
                distinct.push(m);
            }
        }
        match distinct.as_slice() {
            [] => crate::eval::BOOTSTRAP_METHOD.to_string(),
            [one] => one.to_string(),
            _ => {
                let names = self.metric_names();
                distinct
                    .iter()
                    .map(|d| {
                        let of: Vec<&str> = names
                            .iter()
                            .zip(&methods)
                            .filter(|(_, m)| *m == d)
                            .map(|(n, _)| n.as_str())
                            .collect();
                        format!("{d} for {}", of.join(", "))
                    })
                    .collect::<Vec<_>>()
                    .join("; ")
            }
        }
    }

    pub(super) fn metric_names(&self) -> Vec<String> {
        self.scores.metrics.iter().map(|m| m.name()).collect()
    }

    pub(super) fn rows(&self) -> Vec<&Row> {
        self.scoped_rows().into_iter().map(|(_, r)| r).collect()
    }

    /// The rows shown, each with what it is the mean of.
    pub(super) fn scoped_rows(&self) -> Vec<(RowScope, &Row)> {
        let mut rows = vec![(RowScope::All, &self.summary.all)];
        if self.by_stratum {
            rows.extend(
                self.summary
                    .strata
                    .iter()
                    .enumerate()
                    .map(|(s, r)| (RowScope::Stratum(s), r)),
            );
            rows.push((RowScope::Macro, &self.summary.macro_mean));
        }
        rows
    }

    /// Metric `m`'s interval on the mean of `scope`, when one was computed
    /// and exists.
    pub(super) fn interval(&self, scope: RowScope, m: usize) -> Option<Interval> {
        if let Some(e) = self.ppi_estimate(scope, m) {
            return e
                .shown_interval(crate::eval::INTERVAL_LEVEL)
                .map(|(low, high)| Interval { low, high });
        }
        if self.ppi.is_some() {
            return None;
        }
        self.intervals.and_then(|i| i.row(scope)[m])
    }

    /// Whether the means have intervals: bootstrap ones, or PPI's.
    pub(super) fn has_intervals(&self) -> bool {
        self.intervals.is_some() || self.ppi.is_some()
    }

    /// Metric `m`'s PPI estimate on `scope`, under `labels: ppi`.
    pub(super) fn ppi_estimate(&self, scope: RowScope, m: usize) -> Option<&PpiCombined> {
        let p = self.ppi?;
        match scope {
            RowScope::All => p.all[m].as_ref(),
            RowScope::Stratum(s) => p.strata[s][m].as_ref(),
            RowScope::Macro => p.macro_mean[m].as_ref(),
        }
    }

    /// Under `labels: ppi`, per scope and metric: how the estimate was
    /// made (model-graded and verified queries, lambda), its interval
    /// beside people's alone, and the verified queries people alone would
    /// need for its width.
    pub(super) fn ppi_table(&self) -> Option<Table> {
        self.ppi?;
        let headers = [
            "scope",
            "metric",
            "model",
            "verified",
            "lambda",
            "ppi 95%",
            "people only",
            "effective n",
        ];
        let mut t = Table::new(headers.iter().map(|h| h.to_string()).collect(), 2);
        let names = self.metric_names();
        for (scope, r) in self.scoped_rows() {
            for (m, name) in names.iter().enumerate() {
                let Some(e) = self.ppi_estimate(scope, m) else {
                    continue;
                };
                let people_only = if e.people_only_strata > 0 {
                    format!(
                        " ({} people-only)",
                        count(e.people_only_strata, "stratum", "strata")
                    )
                } else {
                    String::new()
                };
                t.push(vec![
                    r.scope.clone(),
                    name.clone(),
                    e.n_model.to_string(),
                    format!("{}{people_only}", e.n_verified),
                    format!("{:.2}", e.lambda),
                    with_interval(e.mean, e.shown_interval(crate::eval::INTERVAL_LEVEL), f4),
                    with_interval(
                        e.people_mean,
                        e.shown_people_interval(crate::eval::INTERVAL_LEVEL),
                        f4,
                    ),
                    effective_n(e.effective_n()),
                ]);
            }
        }
        Some(t)
    }

    /// The means, each with its interval in brackets when intervals were
    /// computed (`[-]` where a scope has none: fewer than two queries).
    pub(super) fn means_table(&self) -> Table {
        let mut headers = vec!["scope".to_string(), "n".to_string()];
        headers.extend(self.metric_names());
        let mut t = Table::new(headers, 1);
        for (scope, r) in self.scoped_rows() {
            let mut cells = vec![r.scope.clone(), r.n.to_string()];
            cells.extend(
                r.means
                    .iter()
                    .enumerate()
                    .map(|(m, v)| match self.has_intervals() {
                        false => f4(*v),
                        true => match self.interval(scope, m) {
                            Some(i) => format!("{} [{}, {}]", f4(*v), f4(i.low), f4(i.high)),
                            None => format!("{} [-]", f4(*v)),
                        },
                    }),
            );
            t.push(cells);
        }
        t
    }

    /// The means for CSV: each metric's mean, then its `_ci_low` and
    /// `_ci_high` columns (empty where a scope has no interval); the means
    /// alone, as before intervals, under `--resamples 0`.
    pub(super) fn means_csv_table(&self) -> Table {
        if !self.has_intervals() {
            return self.means_table();
        }
        let mut headers = vec!["scope".to_string(), "n".to_string()];
        for name in self.metric_names() {
            headers.extend([name.clone(), format!("{name}_ci_low"), format!("{name}_ci_high")]);
        }
        let mut t = Table::new(headers, 1);
        for (scope, r) in self.scoped_rows() {
            let mut cells = vec![r.scope.clone(), r.n.to_string()];
            for (m, v) in r.means.iter().enumerate() {
                let i = self.interval(scope, m);
                cells.extend([
                    f4(*v),
                    i.map(|i| f4(i.low)).unwrap_or_default(),
                    i.map(|i| f4(i.high)).unwrap_or_default(),
                ]);
            }
            t.push(cells);
        }
        t
    }

    /// The line under the means saying what the brackets are, or nothing
    /// when no interval was computed.
    pub(super) fn interval_note(&self) -> Option<String> {
        if self.ppi.is_some() {
            return Some(format!(
                "labels: ppi: each mean is a prediction-powered estimate (PPI++), the model's grades on every model-graded query corrected by the queries people verified; [low, high]: its {}% normal interval; [-]: none (no spread among the values it rests on, or a metric whose `all` is not a mean)",
                crate::diag::number(crate::eval::INTERVAL_LEVEL * 100.0)
            ));
        }
        let s = self.intervals?.settings;
        Some(format!(
            "[low, high]: {}% interval on each mean ({}; {} resamples, seed {}); [-]: fewer than two queries",
            crate::diag::number(s.level * 100.0),
            self.interval_method(),
            s.resamples,
            s.seed
        ))
    }

    pub(super) fn query_table(&self) -> Table {
        let mut headers = vec!["query".to_string(), "stratum".to_string()];
        headers.extend(self.metric_names());
        let mut t = Table::new(headers, 2);
        for (i, q) in self.prep.gold.queries.iter().enumerate() {
            let mut cells = vec![q.id.clone(), self.prep.gold.stratum_name(i).to_string()];
            cells.extend(self.scores.values.iter().map(|v| f4(v[i])));
            t.push(cells);
        }
        t
    }

    /// Queries by stage at the cutoff, overall and per stratum.
    pub(super) fn lost_table(&self, sv: &StageView) -> Table {
        lost_table(
            sv.stages.lost.iter().map(|(scope, l)| {
                let n = l.reached + l.dropped_by_rerank + l.missed_by_retrieval;
                (scope.as_str(), n, l)
            }),
            |l, f| f(l).to_string(),
        )
    }

    /// Each final metric beside its ceiling and their ratio, per scope
    /// shown in the means table. Under `labels: ppi` the means table holds
    /// PPI estimates, while the ceilings and the queries by stage are on
    /// the labels each query was scored with (people's where verified, the
    /// model's elsewhere): the final figure here is taken on those same
    /// labels, so the ratio divides like by like (one estimand per table;
    /// the title says which).
    pub(super) fn ceiling_table(&self, sv: &StageView) -> Table {
        let headers = ["metric", "scope", "final", "ceiling", "final/ceiling"];
        let mut t = Table::new(headers.iter().map(|h| h.to_string()).collect(), 2);
        let ceil = &sv.stages.ceiling;
        let plain = self
            .ppi
            .map(|_| crate::eval::Summary::new(self.scores, &self.prep.gold));
        let plain_rows: Option<Vec<&Row>> = plain.as_ref().map(|p| {
            std::iter::once(&p.all)
                .chain(if self.by_stratum {
                    p.strata.iter().collect::<Vec<_>>()
                } else {
                    Vec::new()
                })
                .collect()
        });
        let rows: Vec<&Row> = match plain_rows {
            Some(p) => p,
            None => self.rows(),
        };
        let ceil_rows: Vec<&Row> = std::iter::once(&sv.stages.ceiling_summary.all)
            .chain(if self.by_stratum {
                sv.stages.ceiling_summary.strata.iter().collect::<Vec<_>>()
            } else {
                Vec::new()
            })
            .collect();
        for (cm, metric) in ceil.metrics.iter().enumerate() {
            let Some(m) = self.scores.metrics.iter().position(|x| x == metric) else {
                continue;
            };
            for (row, crow) in rows.iter().zip(&ceil_rows) {
                let (fin, c) = (row.means[m], crow.means[cm]);
                t.push(vec![
                    metric.name(),
                    row.scope.clone(),
                    f4(fin),
                    f4(c),
                    stages::ratio(fin, c).map_or_else(|| "-".to_string(), f4),
                ]);
            }
        }
        t
    }

    pub(super) fn stage_title(&self, sv: &StageView) -> String {
        format!(
            "two stages · candidates {} · cutoff {}{}",
            sv.run.path.display(),
            cutoff_words(sv.stages.cutoff),
            if self.ppi.is_some() { PPI_STAGES } else { "" }
        )
    }

    pub(super) fn title(&self) -> String {
        let g = &self.prep.gold;
        format!(
            "gold {} ({}, {}) · run {}",
            g.path.display(),
            count(g.len(), "query", "queries"),
            count(g.strata.len(), "stratum", "strata"),
            self.run.path.display()
        )
    }

    /// A curve's heading: what it is and how its numbers were found.
    pub(super) fn curve_title(&self, c: &Curve) -> String {
        let intervals = match c.intervals {
            Some(s) => format!(
                "{}% interval per mean (stratified bootstrap, expanded percentile; {} resamples, seed {})",
                crate::diag::number(s.level * 100.0),
                s.resamples,
                s.seed
            ),
            None => "no intervals (--resamples 0)".to_string(),
        };
        format!(
            "curve {} · {intervals} · lower: one-sided {}% bound on the mean (binomial: {})",
            c.spec.name(),
            crate::diag::number(crate::curve::TARGET_LEVEL * 100.0),
            bound_methods(c)
        )
    }

    /// One row per scope and cutoff: the mean, its interval, the one-sided
    /// lower bound and, with candidates, the ceiling.
    pub(super) fn curve_table(&self, c: &Curve) -> Table {
        let mut headers: Vec<String> = ["scope", "n", "k", "mean", "95% CI", "lower"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        if c.has_ceiling {
            headers.push("ceiling".into());
        }
        let mut t = Table::new(headers, 1);
        for s in &c.scopes {
            for p in &s.points {
                let mut row = vec![
                    s.scope.clone(),
                    s.n.to_string(),
                    p.k.to_string(),
                    f4(p.mean),
                    p.interval
                        .map_or_else(|| "-".to_string(), |i| format!("[{}, {}]", f4(i.low), f4(i.high))),
                    p.lower_bound.map_or_else(|| "-".to_string(), f4),
                ];
                if c.has_ceiling {
                    row.push(p.ceiling.map_or_else(|| "-".to_string(), f4));
                }
                t.push(row);
            }
        }
        t
    }

    /// The curve for CSV: full precision, one row per scope and cutoff,
    /// with the scope's target depth repeated on each of its rows.
    pub(super) fn curve_csv_table(&self) -> Table {
        let headers = [
            "curve",
            "scope",
            "n",
            "k",
            "mean",
            "ci_low",
            "ci_high",
            "lower_bound",
            "bound_method",
            "ceiling",
            "target",
            "target_k",
            "target_k_mean",
        ];
        let mut t = Table::new(headers.iter().map(|s| s.to_string()).collect(), 2);
        let num = |v: Option<f64>| {
            v.filter(|v| v.is_finite())
                .map(|v| format!("{v}"))
                .unwrap_or_default()
        };
        let depth = |d: Option<u32>| d.map(|k| k.to_string()).unwrap_or_default();
        for c in self.curves {
            for s in &c.scopes {
                for p in &s.points {
                    t.push(vec![
                        c.spec.name(),
                        s.scope.clone(),
                        s.n.to_string(),
                        p.k.to_string(),
                        num(Some(p.mean)),
                        num(p.interval.map(|i| i.low)),
                        num(p.interval.map(|i| i.high)),
                        num(p.lower_bound),
                        s.bound_method.name().to_string(),
                        num(p.ceiling),
                        num(c.target),
                        depth(s.depth.as_ref().and_then(|d| d.k)),
                        depth(s.depth.as_ref().and_then(|d| d.k_mean)),
                    ]);
                }
            }
        }
        t
    }

    /// The target's answer per scope, in words; empty without a target.
    pub(super) fn target_lines(&self, c: &Curve) -> Vec<String> {
        let Some(target) = c.target else {
            return Vec::new();
        };
        let range = c.spec.name();
        let family = c.spec.first().name();
        let family = family
            .rsplit_once('@')
            .map_or(family.as_str(), |(f, _)| f)
            .to_string();
        let level = crate::diag::number(crate::curve::TARGET_LEVEL * 100.0);
        let mut out = vec![format!(
            "target {family}@k >= {} with {level}% confidence (one-sided binomial bound, fixed-sequence from the deepest k):",
            crate::diag::number(target)
        )];
        for s in &c.scopes {
            let Some(d) = &s.depth else { continue };
            let at = |k: u32| s.points.iter().find(|p| p.k == k);
            let seen = match d.k_mean {
                Some(k) => format!("the mean reaches it at k = {k}"),
                None => "the mean does not reach it".to_string(),
            };
            let line = match d.k.and_then(|k| at(k).map(|p| (k, p))) {
                Some((k, p)) => format!(
                    "{} ({}): k = {k} (mean {}, lower bound {}; {seen})",
                    s.scope,
                    s.n,
                    f4(p.mean),
                    p.lower_bound.map_or_else(|| "-".to_string(), f4)
                ),
                None => {
                    let last = s.points.last();
                    format!(
                        "{} ({}): not within {range} ({seen}; lower bound at k = {}: {})",
                        s.scope,
                        s.n,
                        last.map_or(0, |p| p.k),
                        last.and_then(|p| p.lower_bound)
                            .map_or_else(|| "-".to_string(), f4)
                    )
                }
            };
            out.push(line);
        }
        out
    }
}

/// The bound methods a curve's scopes used, named once each.
fn bound_methods(c: &Curve) -> String {
    let mut names: Vec<&str> = Vec::new();
    for s in &c.scopes {
        let n = s.bound_method.name();
        if !names.contains(&n) {
            names.push(n);
        }
    }
    names.join(" or ")
}
