//! `rgate compare`'s report ([`CompareView`]) and what its formats share:
//! the settings line, the table of means and the table of each run's rows.
//! Whether a row is significant comes decided in [`CompareRow`].

use anyhow::Result;

use super::table::{f4, pfmt, signed4, Table};
use crate::compare::CompareRow;
use crate::config::GateSettings;
use crate::metrics::Metric;
use crate::prepared::Prepared;
use crate::report::Format;
use crate::stats::Alternative;

pub use crate::pipeline::compare::RunColumn;

pub struct CompareView<'a> {
    pub prep: &'a Prepared,
    pub runs: &'a [RunColumn],
    /// One list of rows per run after the first.
    pub comparisons: &'a [Vec<CompareRow>],
    pub settings: &'a GateSettings,
    pub alternative: Alternative,
}

pub(super) fn alt_name(a: Alternative) -> &'static str {
    match a {
        Alternative::TwoSided => "two-sided",
        Alternative::Less => "less",
        Alternative::Greater => "greater",
    }
}

impl CompareView<'_> {
    pub fn render(&self, format: Format) -> Result<String> {
        format.exporter().compare(self)
    }

    pub(super) fn settings_line(&self) -> String {
        let s = self.settings;
        let test = match s.test {
            crate::config::TestKind::Bootstrap => format!(
                "paired bootstrap (stratified, {} weighting, B={}, seed {})",
                s.weighting.name(),
                s.resamples,
                s.seed
            ),
            crate::config::TestKind::Randomization => {
                format!(
                    "sign-flip randomization (exact up to 40 non-zero deltas, else B={}, seed {})",
                    s.resamples, s.seed
                )
            }
            crate::config::TestKind::TTest => "paired t-test".into(),
        };
        format!(
            "{test}; p {}; alpha {}; Holm across each run's rows",
            alt_name(self.alternative),
            crate::diag::number(s.alpha)
        )
    }

    pub(super) fn means_table(&self) -> Table {
        let mut headers = vec!["run".to_string()];
        headers.extend(self.prep.metrics.iter().map(Metric::name));
        let mut t = Table::new(headers, 1);
        let n = self.prep.gold.len();
        for r in self.runs {
            let mut row = vec![r.name.clone()];
            row.extend(r.scores.values.iter().map(|v| f4(crate::eval::mean_of(v, 0..n))));
            t.push(row);
        }
        t
    }

    pub(super) fn rows_table(&self, k: usize) -> Table {
        let level = format!("{:.0}% CI", (1.0 - self.settings.alpha) * 100.0);
        let base = &self.runs[0].name;
        let cand = &self.runs[k + 1].name;
        let headers = [
            "metric",
            "stratum",
            "n",
            base.as_str(),
            cand.as_str(),
            "delta",
            &level,
            "p",
            "p_adj",
            "W/T/L",
        ];
        let mut t = Table::new(headers.iter().map(|s| s.to_string()).collect(), 2);
        for r in &self.comparisons[k] {
            let mark = if r.significant { " *" } else { "" };
            t.push(vec![
                r.cmp.metric.name(),
                r.cmp.stratum.clone(),
                r.cmp.n.to_string(),
                f4(r.cmp.baseline),
                f4(r.cmp.current),
                signed4(r.cmp.delta),
                format!("[{}, {}]", signed4(r.cmp.ci_low), signed4(r.cmp.ci_high)),
                pfmt(r.cmp.p_value),
                format!("{}{mark}", pfmt(r.cmp.p_adjusted)),
                format!("{}/{}/{}", r.wins, r.ties, r.losses),
            ]);
        }
        t
    }

    /// Run `k`'s skewed rows, in words (see [`super::gate::skew_text`]).
    pub(super) fn skewed(&self, k: usize) -> Vec<String> {
        self.comparisons[k]
            .iter()
            .filter_map(|r| {
                let s = r.skew.as_ref()?;
                Some(super::gate::skew_text(
                    &r.cmp.metric.name(),
                    &r.cmp.stratum,
                    r.cmp.n,
                    s,
                ))
            })
            .collect()
    }

    pub(super) fn title(&self) -> String {
        format!(
            "rgate compare · gold {} ({}) · seed {}, B={}",
            self.prep.gold.path.display(),
            crate::diag::count(self.prep.gold.len(), "query", "queries"),
            self.settings.seed,
            self.settings.resamples
        )
    }
}
