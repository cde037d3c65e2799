//! `rgate compare` output.
//!
//! JSON (stable): `schema_version`, `verdict` (`none`: compare gates
//! nothing), `settings` (test, resamples, seed, alpha, alternative,
//! weighting), `gold`, `baseline_run` {name, path, means}, and `runs[]`, each
//! with `name`, `path`, `means` {metric: mean} and `checks[]` of rows with
//! SPEC's keys (`metric`, `stratum`, `n`, `baseline`, `current`, `delta`,
//! `ci_low`, `ci_high`, `p_value`, `p_adjusted`, `test`, `verdict`: always
//! `not-gated` here) plus `significant`, `lower_bound`, `upper_bound` (the
//! one-sided bounds), `wins`, `ties`, `losses`.

use serde_json::{json, Map, Value};

use super::table::{f4, pfmt, signed4, Table};
use crate::compare::CompareRow;
use crate::config::GateSettings;
use crate::escape::{self, markdown as md, terminal};
use crate::eval::Scores;
use crate::metrics::Metric;
use crate::prepared::Prepared;
use crate::report::Format;
use crate::stats::Alternative;

pub struct RunColumn {
    pub name: String,
    pub path: String,
    pub scores: Scores,
}

pub struct CompareView<'a> {
    pub prep: &'a Prepared,
    pub runs: &'a [RunColumn],
    /// One list of rows per run after the first.
    pub comparisons: &'a [Vec<CompareRow>],
    pub settings: &'a GateSettings,
    pub alternative: Alternative,
}

fn alt_name(a: Alternative) -> &'static str {
    match a {
        Alternative::TwoSided => "two-sided",
        Alternative::Less => "less",
        Alternative::Greater => "greater",
    }
}

impl CompareView<'_> {
    pub fn render(&self, format: Format) -> String {
        match format {
            Format::Json => {
                escape::json(serde_json::to_string_pretty(&self.json()).unwrap_or_default() + "\n")
            }
            Format::Markdown => self.markdown(),
            Format::Csv => self.csv(),
            _ => self.text(),
        }
    }

    fn settings_line(&self) -> String {
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
            s.alpha
        )
    }

    fn means_table(&self) -> Table {
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

    fn rows_table(&self, k: usize) -> Table {
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
            let mark = if r.significant {
                " *"
            } else {
                ""
            };
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

    fn title(&self) -> String {
        format!(
            "rgate compare · gold {} ({}) · seed {}, B={}",
            self.prep.gold.path.display(),
            crate::diag::count(self.prep.gold.len(), "query", "queries"),
            self.settings.seed,
            self.settings.resamples
        )
    }

    fn text(&self) -> String {
        let mut out = format!("{}\n{}\n\n", terminal(&self.title()), self.settings_line());
        out += &self.means_table().text();
        for k in 0..self.comparisons.len() {
            out += &format!(
                "\n{} vs {}\n",
                terminal(&self.runs[k + 1].name),
                terminal(&self.runs[0].name)
            );
            out += &self.rows_table(k).text();
        }
        out += &format!(
            "\n* adjusted p < {}. W/T/L: queries where the run is better / equal / worse than {}.\n",
            self.settings.alpha,
            terminal(&self.runs[0].name)
        );
        out
    }

    fn markdown(&self) -> String {
        let mut out = format!(
            "**{}**\n\n<sub>{}</sub>\n\n",
            md(&self.title()),
            self.settings_line()
        );
        out += &self.means_table().markdown();
        for k in 0..self.comparisons.len() {
            out += &format!(
                "\n**{} vs {}**\n\n",
                md(&self.runs[k + 1].name),
                md(&self.runs[0].name)
            );
            out += &self.rows_table(k).markdown();
        }
        out
    }

    fn csv(&self) -> String {
        let headers = super::row_headers(
            &["run", "baseline_run"],
            &["wins", "ties", "losses", "test", "resamples", "seed"],
        );
        let mut t = Table::new(headers, 4);
        for (k, rows) in self.comparisons.iter().enumerate() {
            for r in rows {
                let mut row = vec![self.runs[k + 1].name.clone(), self.runs[0].name.clone()];
                row.extend(super::row_cells(&r.cmp));
                row.extend([
                    r.wins.to_string(),
                    r.ties.to_string(),
                    r.losses.to_string(),
                    r.test.name().to_string(),
                    self.settings.resamples.to_string(),
                    self.settings.seed.to_string(),
                ]);
                t.push(row);
            }
        }
        t.csv()
    }

    fn means_json(&self, r: &RunColumn) -> Value {
        let n = self.prep.gold.len();
        let mut o = Map::new();
        for (m, v) in self.prep.metrics.iter().zip(&r.scores.values) {
            o.insert(m.name(), json!(crate::eval::mean_of(v, 0..n)));
        }
        Value::Object(o)
    }

    fn json(&self) -> Value {
        let s = self.settings;
        let runs: Vec<Value> = self
            .comparisons
            .iter()
            .enumerate()
            .map(|(k, rows)| {
                let r = &self.runs[k + 1];
                let checks: Vec<Value> = rows
                    .iter()
                    .map(|c| {
                        let mut o = super::check_row(&c.cmp, c.test.name(), "not-gated");
                        o.insert("significant".into(), json!(c.significant));
                        o.insert("lower_bound".into(), super::num(c.lower_bound));
                        o.insert("upper_bound".into(), super::num(c.upper_bound));
                        o.insert("wins".into(), json!(c.wins));
                        o.insert("ties".into(), json!(c.ties));
                        o.insert("losses".into(), json!(c.losses));
                        Value::Object(o)
                    })
                    .collect();
                json!({"name": r.name, "path": r.path, "means": self.means_json(r), "checks": checks})
            })
            .collect();
        json!({
            "schema_version": 1,
            "verdict": "none",
            "settings": {
                "test": s.test.name(),
                "resamples": s.resamples,
                "seed": s.seed,
                "alpha": s.alpha,
                "alternative": alt_name(self.alternative),
                "weighting": s.weighting.name(),
                "correction": "holm",
            },
            "gold": self.prep.gold.path.display().to_string(),
            "baseline_run": {"name": self.runs[0].name, "path": self.runs[0].path, "means": self.means_json(&self.runs[0])},
            "runs": runs,
        })
    }
}
