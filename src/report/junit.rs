//! `--format junit`: one test case per gated check, for CI systems that
//! show test results (the gate's only).

use anyhow::Result;

use super::gate::{skew_text, GateView, SKEW_HEADING};
use super::{Exporter, Report};
use crate::escape;
use crate::gate::CheckVerdict;

pub struct Junit;

impl Exporter for Junit {
    fn name(&self) -> &'static str {
        "junit"
    }

    fn reports(&self) -> &'static [Report] {
        &[Report::Gate]
    }

    fn gate(&self, v: &GateView) -> Result<String> {
        let esc = escape::xml;
        let mut body = String::new();
        let mut tests = 0;
        let mut failures = 0;
        for r in &v.outcome.retrievers {
            for c in r.checks.iter().filter(|c| c.tolerance.is_some()) {
                tests += 1;
                body += &format!(
                    "    <testcase classname=\"rgate.{}\" name=\"{} [{}]\">\n",
                    esc(&r.name),
                    esc(&c.cmp.metric.name()),
                    esc(&c.cmp.stratum)
                );
                if r.fails(c) {
                    failures += 1;
                    body += &format!(
                        "      <failure message=\"{} (baseline {:.4}, current {:.4})\"/>\n",
                        esc(&v.reason(c, r)),
                        c.cmp.baseline,
                        c.cmp.current,
                    );
                }
                // One <system-out> per test case (the JUnit schema allows
                // one): why it is inconclusive, then its skew.
                let mut notes: Vec<String> = Vec::new();
                if c.verdict == CheckVerdict::Inconclusive && !r.fails(c) {
                    notes.push(v.reason(c, r));
                }
                if let Some(s) = &c.skew {
                    notes.push(format!(
                        "{SKEW_HEADING}: {}",
                        skew_text(&c.cmp.metric.name(), &c.cmp.stratum, c.cmp.n, s)
                    ));
                }
                if !notes.is_empty() {
                    body += &format!("      <system-out>{}</system-out>\n", esc(&notes.join("\n")));
                }
                body += "    </testcase>\n";
            }
        }
        // The judge check (`gate.judge.min_kappa`) is a test case of its
        // own: it can fail the gate when every retriever passes.
        if let Some(j) = v.outcome.judge.as_ref().filter(|j| j.min_kappa.is_some()) {
            tests += 1;
            body += "    <testcase classname=\"rgate.judge\" name=\"kappa\">\n";
            let line = v.judge_line().unwrap_or_default();
            if j.fails() {
                failures += 1;
                body += &format!("      <failure message=\"{}\"/>\n", esc(&line));
            } else {
                body += &format!("      <system-out>{}</system-out>\n", esc(&line));
            }
            body += "    </testcase>\n";
        }
        Ok(format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n  <testsuite name=\"rgate {}\" tests=\"{tests}\" failures=\"{failures}\">\n    <properties>\n      <property name=\"settings\" value=\"{}\"/>\n{}    </properties>\n{body}  </testsuite>\n</testsuites>\n",
            esc(v.command),
            esc(&v.settings_line()),
            match &v.outcome.recorded {
                Some(_) => format!(
                    "      <property name=\"recorded\" value=\"{}\"/>\n",
                    esc(&v.headline_with(&|s: &str| s.to_string(), v.outcome.verdict().name()))
                ),
                None => String::new(),
            }
        ))
    }
}
