//! `--format junit`: one test case per gated check, for CI systems that
//! show test results (the gate's only).

use anyhow::Result;

use super::gate::GateView;
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
                if c.verdict == CheckVerdict::Inconclusive && !r.fails(c) {
                    body += &format!("      <system-out>{}</system-out>\n", esc(&v.reason(c, r)));
                }
                body += "    </testcase>\n";
            }
        }
        Ok(format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n  <testsuite name=\"rgate {}\" tests=\"{tests}\" failures=\"{failures}\">\n    <properties>\n      <property name=\"settings\" value=\"{}\"/>\n    </properties>\n{body}  </testsuite>\n</testsuites>\n",
            esc(v.command),
            esc(&v.settings_line())
        ))
    }
}
