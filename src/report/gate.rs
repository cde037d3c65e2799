//! Rendering a decided [`GateOutcome`]: table, markdown, JSON, CSV, JUnit.
//! The verdict comes first in every format, so a reviewer knows the answer
//! before reading a single number.
//!
//! JSON (a stable interface, SPEC "Commands"): top-level `schema_version`,
//! `verdict`, `settings`, and `retrievers[]`, each with `name`, `verdict`,
//! `run`, `baseline`, `checks[]` (keys `metric`, `stratum`, `n`, `baseline`,
//! `current`, `delta`, `ci_low`, `ci_high`, `p_value`, `p_adjusted`, `test`,
//! `verdict`, plus `tolerance`, `mde`, `lower_bound`, `upper_bound`),
//! `flips[]`, `gained`, `added_queries`, `removed_queries`, `gold_changed`
//! and `warnings[]`. Numbers that do not exist are `null`.

use serde_json::{json, Value};

use super::num;
use super::table::{f4, pfmt, short_commit, signed4, Table};
use crate::gate::{Check, CheckVerdict, GateOutcome, RetrieverOutcome, Verdict};
use crate::report::Format;

pub struct GateView<'a> {
    pub outcome: &'a GateOutcome,
    /// What the report is about: `gate` or `baseline update`.
    pub command: &'a str,
    pub color: bool,
}

impl GateView<'_> {
    pub fn render(&self, format: Format) -> String {
        match format {
            Format::Json => serde_json::to_string_pretty(&self.json()).unwrap_or_default() + "\n",
            Format::Markdown => self.markdown(),
            Format::Csv => self.csv(),
            Format::Junit => self.junit(),
            Format::Table | Format::Trec => self.text(),
        }
    }

    fn paint(&self, s: &str, code: &str) -> String {
        if self.color {
            format!("\x1b[{code}m{s}\x1b[0m")
        } else {
            s.to_string()
        }
    }

    fn verdict_word(&self, v: Verdict) -> String {
        match v {
            Verdict::Pass => self.paint("PASS", "1;32"),
            Verdict::Fail => self.paint("FAIL", "1;31"),
        }
    }

    fn settings_line(&self) -> String {
        let s = &self.outcome.settings;
        let test = match s.test {
            crate::config::TestKind::Bootstrap => format!(
                "paired bootstrap (stratified, B={}, seed {})",
                s.resamples, s.seed
            ),
            crate::config::TestKind::Randomization => {
                format!(
                    "sign-flip randomization (B={} where not exact, seed {})",
                    s.resamples, s.seed
                )
            }
            crate::config::TestKind::TTest => "paired t-test".to_string(),
        };
        format!(
            "{test}, alpha {}, decision {}, correction {}",
            s.alpha,
            s.decision.name(),
            s.correction.name()
        )
    }

    /// One sentence per retriever: what failed, or that nothing did.
    fn summary(&self, r: &RetrieverOutcome) -> String {
        if r.baseline.is_none() {
            return "no baseline yet: passes".into();
        }
        let fails: Vec<&Check> = r
            .checks
            .iter()
            .filter(|c| c.verdict == CheckVerdict::Fail)
            .collect();
        let improved = r
            .checks
            .iter()
            .filter(|c| c.verdict == CheckVerdict::Improved)
            .count();
        if fails.is_empty() {
            let gated = r.checks.iter().filter(|c| c.tolerance.is_some()).count();
            let mut s = format!("{gated} check{} passed", if gated == 1 { "" } else { "s" });
            if improved > 0 {
                s += &format!(", {improved} improved");
            }
            return s;
        }
        let worst = fails
            .iter()
            .map(|c| {
                format!(
                    "{} on {} fell {:.4} (p_adj {})",
                    c.cmp.metric,
                    c.cmp.stratum,
                    -c.cmp.delta,
                    pfmt(c.cmp.p_adjusted)
                )
            })
            .collect::<Vec<_>>();
        format!(
            "{} check{} failed: {}",
            fails.len(),
            if fails.len() == 1 { "" } else { "s" },
            worst.join("; ")
        )
    }

    fn check_table(&self, r: &RetrieverOutcome) -> Table {
        let level = format!("{:.0}% CI", (1.0 - self.outcome.settings.alpha) * 100.0);
        let headers = [
            "metric", "stratum", "n", "baseline", "current", "delta", &level, "p", "p_adj", "mde", "verdict",
        ];
        let mut t = Table::new(headers.iter().map(|s| s.to_string()).collect(), 2);
        t.align[10] = super::table::Align::Left;
        for c in &r.checks {
            t.push(vec![
                c.cmp.metric.name(),
                c.cmp.stratum.clone(),
                c.cmp.n.to_string(),
                f4(c.cmp.baseline),
                f4(c.cmp.current),
                signed4(c.cmp.delta),
                format!("[{}, {}]", signed4(c.cmp.ci_low), signed4(c.cmp.ci_high)),
                pfmt(c.cmp.p_value),
                if c.tolerance.is_some() {
                    pfmt(c.cmp.p_adjusted)
                } else {
                    "-".into()
                },
                f4(c.mde),
                c.verdict.name().to_string(),
            ]);
        }
        t
    }

    fn flips_text(&self, r: &RetrieverOutcome, md: bool) -> String {
        if r.flips.is_empty() {
            return String::new();
        }
        let mut out = format!(
            "{}Queries that went from hit to miss ({}):{}\n",
            if md { "**" } else { "" },
            r.flips.len(),
            if md { "**" } else { "" }
        );
        let mut last = "";
        for f in &r.flips {
            if f.stratum != last {
                out += &if md {
                    format!("- {}\n", f.stratum)
                } else {
                    format!("  {}\n", f.stratum)
                };
                last = &f.stratum;
            }
            let text = f.text.as_deref().map(|t| format!(" \"{t}\"")).unwrap_or_default();
            out += &if md {
                format!("  - `{}`{text}: lost {}\n", f.query_id, f.lost.join(", "))
            } else {
                format!("    {}{text}: lost {}\n", f.query_id, f.lost.join(", "))
            };
        }
        if r.gained > 0 {
            out += &format!(
                "{} quer{} went from miss to hit.\n",
                r.gained,
                if r.gained == 1 { "y" } else { "ies" }
            );
        }
        out
    }

    fn improvements(&self, r: &RetrieverOutcome) -> Option<String> {
        let rows: Vec<String> = r
            .checks
            .iter()
            .filter(|c| c.verdict == CheckVerdict::Improved)
            .map(|c| {
                format!(
                    "{} on {} {} (p_adj {})",
                    c.cmp.metric,
                    c.cmp.stratum,
                    signed4(c.cmp.delta),
                    pfmt(c.p_rise_adjusted)
                )
            })
            .collect();
        (!rows.is_empty()).then(|| format!("Improved: {}", rows.join("; ")))
    }

    fn headline(&self) -> String {
        let o = self.outcome;
        let failed = o
            .retrievers
            .iter()
            .filter(|r| r.verdict() == Verdict::Fail)
            .count();
        format!(
            "rgate {}: {} ({} of {} retriever{} regressed)",
            self.command,
            self.verdict_word(o.verdict()),
            failed,
            o.retrievers.len(),
            if o.retrievers.len() == 1 { "" } else { "s" }
        )
    }

    fn baseline_desc(r: &RetrieverOutcome) -> String {
        match &r.baseline {
            None => "no baseline".into(),
            Some(b) => {
                let mut s = format!("baseline {}", b.created_at);
                if let Some(c) = &b.commit {
                    s += &format!(" @ {}", short_commit(c));
                }
                if let Some(n) = &b.note {
                    s += &format!(" ({n})");
                }
                s
            }
        }
    }

    fn text(&self) -> String {
        let mut out = self.headline() + "\n" + &self.settings_line() + "\n";
        for w in &self.outcome.warnings {
            out += &format!("warning: {w}\n");
        }
        for r in &self.outcome.retrievers {
            out += &format!(
                "\n{} {}: {}\n  run {} · {}\n",
                self.verdict_word(r.verdict()),
                r.name,
                self.summary(r),
                r.run,
                Self::baseline_desc(r)
            );
            if !r.checks.is_empty() {
                out.push('\n');
                for line in self.check_table(r).text().lines() {
                    let line = if self.color && line.ends_with(" fail") {
                        self.paint(line, "31")
                    } else {
                        line.to_string()
                    };
                    out += &format!("  {line}\n");
                }
            }
            if let Some(imp) = self.improvements(r) {
                out += &format!("\n{imp}\n");
            }
            let flips = self.flips_text(r, false);
            if !flips.is_empty() {
                out.push('\n');
                out += &flips;
            }
            if !r.warnings.is_empty() {
                out += "\nWarnings:\n";
                for w in &r.warnings {
                    out += &format!("  - {w}\n");
                }
            }
        }
        out
    }

    fn markdown(&self) -> String {
        let o = self.outcome;
        let icon = match o.verdict() {
            Verdict::Pass => "✅",
            Verdict::Fail => "❌",
        };
        let mut out = format!(
            "## {icon} {}\n\n",
            self.headline()
                .replace("PASS", "**PASS**")
                .replace("FAIL", "**FAIL**")
        );
        for r in &o.retrievers {
            out += &format!(
                "- **{}**: {} — {}\n",
                r.name,
                r.verdict().name(),
                self.summary(r).replace('|', "\\|")
            );
        }
        out += &format!("\n<sub>{}</sub>\n", self.settings_line());
        for w in &o.warnings {
            out += &format!("\n> **Warning**: {w}\n");
        }
        for r in &o.retrievers {
            // A passing retriever folds away: the reviewer's eye goes to
            // what failed.
            let folded = r.verdict() == Verdict::Pass;
            if folded {
                out += &format!("\n<details><summary><b>{}</b> — pass</summary>\n", r.name);
            }
            out += &format!(
                "\n### {} — {}\n\n`{}` · {}\n\n",
                r.name,
                r.verdict().name(),
                r.run,
                Self::baseline_desc(r)
            );
            if !r.checks.is_empty() {
                out += &self.check_table(r).markdown();
                out.push('\n');
            }
            if let Some(imp) = self.improvements(r) {
                out += &format!("{imp}\n\n");
            }
            out += &self.flips_text(r, true);
            if !r.warnings.is_empty() {
                out += "\n**Warnings**\n\n";
                for w in &r.warnings {
                    out += &format!("- {w}\n");
                }
            }
            if folded {
                out += "\n</details>\n";
            }
        }
        out
    }

    fn csv(&self) -> String {
        let headers = super::row_headers(
            &["retriever"],
            &["tolerance", "mde", "test", "resamples", "seed", "verdict"],
        );
        let mut t = Table::new(headers, 3);
        for r in &self.outcome.retrievers {
            for c in &r.checks {
                let mut row = vec![r.name.clone()];
                row.extend(super::row_cells(&c.cmp));
                row.extend([
                    c.tolerance.map(super::csv_num).unwrap_or_default(),
                    super::csv_num(c.mde),
                    c.test.name().to_string(),
                    self.outcome.settings.resamples.to_string(),
                    self.outcome.settings.seed.to_string(),
                    c.verdict.name().to_string(),
                ]);
                t.push(row);
            }
        }
        t.csv()
    }

    fn junit(&self) -> String {
        let esc = |s: &str| {
            s.replace('&', "&amp;")
                .replace('<', "&lt;")
                .replace('>', "&gt;")
                .replace('"', "&quot;")
        };
        let mut body = String::new();
        let mut tests = 0;
        let mut failures = 0;
        for r in &self.outcome.retrievers {
            for c in r.checks.iter().filter(|c| c.tolerance.is_some()) {
                tests += 1;
                body += &format!(
                    "    <testcase classname=\"rgate.{}\" name=\"{} [{}]\">\n",
                    esc(&r.name),
                    esc(&c.cmp.metric.name()),
                    esc(&c.cmp.stratum)
                );
                if c.verdict == CheckVerdict::Fail {
                    failures += 1;
                    body += &format!(
                        "      <failure message=\"{} on {} fell {:.4} (baseline {:.4}, current {:.4}, p_adj {})\"/>\n",
                        esc(&c.cmp.metric.name()),
                        esc(&c.cmp.stratum),
                        -c.cmp.delta,
                        c.cmp.baseline,
                        c.cmp.current,
                        pfmt(c.cmp.p_adjusted)
                    );
                }
                body += "    </testcase>\n";
            }
        }
        format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n  <testsuite name=\"rgate {}\" tests=\"{tests}\" failures=\"{failures}\">\n    <properties>\n      <property name=\"settings\" value=\"{}\"/>\n    </properties>\n{body}  </testsuite>\n</testsuites>\n",
            esc(self.command),
            esc(&self.settings_line())
        )
    }

    pub fn json(&self) -> Value {
        let o = self.outcome;
        let s = &o.settings;
        let retrievers: Vec<Value> = o
            .retrievers
            .iter()
            .map(|r| {
                let checks: Vec<Value> = r
                    .checks
                    .iter()
                    .map(|c| {
                        let mut o = super::check_row(
                            &c.cmp,
                            c.test.name(),
                            c.verdict.name(),
                        );
                        o.insert("tolerance".into(), c.tolerance.map_or(Value::Null, num));
                        o.insert("mde".into(), num(c.mde));
                        o.insert("lower_bound".into(), num(c.lower_bound));
                        o.insert("upper_bound".into(), num(c.upper_bound));
                        Value::Object(o)
                    })
                    .collect();
                let flips: Vec<Value> = r
                    .flips
                    .iter()
                    .map(|f| json!({"query_id": f.query_id, "stratum": f.stratum, "text": f.text, "lost": f.lost}))
                    .collect();
                json!({
                    "name": r.name,
                    "verdict": r.verdict().name(),
                    "run": r.run,
                    "baseline": r.baseline.as_ref().map(|b| json!({"created_at": b.created_at, "commit": b.commit, "note": b.note})),
                    "checks": checks,
                    "flips": flips,
                    "gained": r.gained,
                    "added_queries": r.added_queries,
                    "removed_queries": r.removed_queries,
                    "gold_changed": r.gold_changed,
                    "warnings": r.warnings,
                })
            })
            .collect();
        json!({
            "schema_version": 1,
            "verdict": o.verdict().name(),
            "settings": {
                "test": s.test.name(),
                "resamples": s.resamples,
                "seed": s.seed,
                "alpha": s.alpha,
                "decision": s.decision.name(),
                "correction": s.correction.name(),
            },
            "retrievers": retrievers,
            "warnings": o.warnings,
        })
    }
}
