//! `rgate compare`'s report ([`CompareView`]) and what its formats share:
//! the settings line, the table of means and the table of each run's rows.
//! Whether a row is significant comes decided in [`CompareRow`].

use anyhow::Result;

use super::table::{f4, pfmt, signed4, Table};
use crate::compare::{CompareRow, Family};
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
    /// The family's correction, the ranking and the best variant, decided.
    pub family: &'a Family,
}

/// An effect size for a table: two decimals, `-` where there is none.
fn effect(d: f64) -> String {
    if d.is_finite() {
        format!("{d:+.2}")
    } else {
        "-".to_string()
    }
}

/// An interval for a table, `[-inf, ...]` spelled out where a side is
/// unbounded.
fn interval(low: f64, high: f64) -> String {
    format!("[{}, {}]", signed4(low), signed4(high))
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
                "paired percentile bootstrap (stratified, {} weighting, B={}, seed {})",
                s.weighting.name(),
                s.resamples,
                s.seed
            ),
            crate::config::TestKind::Randomization => {
                format!(
                    "sign-flip randomization (exact up to 16 queries, else B={}, seed {})",
                    s.resamples, s.seed
                )
            }
            crate::config::TestKind::TTest => "paired t-test".into(),
        };
        let test = match self.prep.label_mode {
            crate::config::LabelMode::Ppi => format!("labels: ppi: prediction-powered (PPI++) estimate of each delta, the model's grades corrected by the verified sample, tested by {test} on its per-query terms; means are PPI estimates"),
            crate::config::LabelMode::Model => format!("{test}; labels: model (the model's grades where no person graded: biased by its errors)"),
            crate::config::LabelMode::People => test,
        };
        format!(
            "{test}; p {}; alpha {}; {} across all {} rows of every run (variants x metrics x scopes); each row's interval comes from the test that gave its p (column `test`)",
            alt_name(self.alternative),
            crate::diag::number(s.alpha),
            self.family.correction.words(),
            self.family.tests
        )
    }

    pub(super) fn means_table(&self) -> Table {
        let mut headers = vec!["run".to_string()];
        headers.extend(self.prep.metrics.iter().map(Metric::name));
        let mut t = Table::new(headers, 1);
        for r in self.runs {
            let mut row = vec![r.name.clone()];
            row.extend((0..self.prep.metrics.len()).map(|m| f4(r.mean(&self.prep.metrics, m))));
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
            "d_z",
            "test",
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
                interval(r.cmp.ci_low, r.cmp.ci_high),
                pfmt(r.cmp.p_value),
                format!("{}{mark}", pfmt(r.cmp.p_adjusted)),
                effect(r.effect_size),
                r.test_name().to_string(),
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

    /// The variants by the first metric's mean, highest first, each
    /// against the baseline.
    pub(super) fn ranking_table(&self) -> Table {
        let f = self.family;
        let level = format!("{:.0}% CI", (1.0 - self.settings.alpha) * 100.0);
        let metric = f.metric.name();
        let headers = [
            "rank",
            "run",
            metric.as_str(),
            "delta",
            &level,
            "p_adj",
            "d_z",
            "test",
            "better",
        ];
        let mut t = Table::new(headers.iter().map(|s| s.to_string()).collect(), 2);
        t.align[0] = super::table::Align::Right;
        for (i, r) in f.ranking.iter().enumerate() {
            t.push(vec![
                (i + 1).to_string(),
                self.runs[r.run].name.clone(),
                f4(r.mean),
                signed4(r.delta),
                interval(r.ci_low, r.ci_high),
                pfmt(r.p_adjusted),
                effect(r.effect_size),
                if r.ppi {
                    r.test.ppi_name().to_string()
                } else {
                    r.test.name().to_string()
                },
                if r.better { "yes" } else { "no" }.to_string(),
            ]);
        }
        t
    }

    /// The one sentence `compare` concludes with (SPEC "Tuning knobs"):
    /// the best variant significantly better than the baseline on the first
    /// metric, or that none is; and, when one is, whether it is
    /// significantly better than the runner-up.
    pub fn statement(&self) -> String {
        let f = self.family;
        let base = &self.runs[0].name;
        let metric = f.metric.name();
        let family = format!(
            "{} across {}",
            f.correction.words(),
            crate::diag::count(f.tests, "test", "tests")
        );
        let Some(best) = f.best else {
            let why = if self.alternative == Alternative::Less {
                "; --alternative less tests for drops only"
            } else {
                ""
            };
            return format!(
                "No variant is significantly better than {base} on {metric} ({family}, alpha {}){why}.",
                crate::diag::number(self.settings.alpha)
            );
        };
        let Some(r) = f.ranking.iter().find(|r| r.run == best) else {
            return String::new();
        };
        let mut out = format!(
            "{} is significantly better than {base} on {metric}: {} (delta {}, {} {}, p_adj {}, {family}).",
            self.runs[best].name,
            f4(r.mean),
            signed4(r.delta),
            level_words(self.settings.alpha),
            interval(r.ci_low, r.ci_high),
            pfmt(r.p_adjusted)
        );
        if let Some(u) = &f.runner_up {
            let other = &self.runs[u.run].name;
            let (verdict, after) = if u.better {
                ("also", "")
            } else {
                ("not", ": either may be the best")
            };
            let held = if u.pairs > 1 {
                format!(
                    ", held to alpha {} over the {} pairs of variants",
                    significant(u.level, 3),
                    u.pairs
                )
            } else {
                String::new()
            };
            out += &format!(
                " It is {verdict} significantly better than the runner-up {other} (delta {}, {} {}, two-sided p {}, {}{held}){after}.",
                signed4(u.delta),
                level_words(u.level),
                interval(u.ci_low, u.ci_high),
                pfmt(u.p_value),
                u.test.name()
            );
        }
        out
    }
}

/// `95% CI` for alpha 0.05, `99.82% CI` for 0.0018: as many decimals
/// (up to 2) as the level needs.
fn level_words(alpha: f64) -> String {
    let pct = (1.0 - alpha) * 100.0;
    let text = format!("{pct:.2}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    format!("{text}% CI")
}

/// `x` to `digits` significant digits, trailing zeros dropped: a level of
/// 0.05 / 3 reads 0.0167, not 0.016666666666666666.
fn significant(x: f64, digits: i32) -> String {
    if x == 0.0 || !x.is_finite() {
        return crate::diag::number(x);
    }
    let decimals = (digits - 1 - x.abs().log10().floor() as i32).max(0) as usize;
    let s = format!("{x:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

#[cfg(test)]
mod significant_tests {
    #[test]
    fn levels_read_rounded() {
        assert_eq!(super::significant(0.05 / 3.0, 3), "0.0167");
        assert_eq!(super::significant(0.05, 3), "0.05");
        assert_eq!(super::significant(0.0125, 3), "0.0125");
        assert_eq!(super::significant(0.05 / 6.0, 3), "0.00833");
    }
}
