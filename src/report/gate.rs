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
//!
//! A retriever with a candidate list (SPEC "Two stages") also has
//! `stages`: `{"candidates", "cutoff", "lost": {scope: {"n", "baseline":
//! {"reached", "dropped_by_rerank", "missed_by_retrieval"} | null,
//! "current": {...}}}, "ceiling": {metric: {scope: {"current", "ceiling",
//! "ratio"}}}, "losses": [{"stage", "more", "strata": {name: more}}],
//! "absent_from_candidates": {query_id: [ids]}}`, and each of its flips a
//! `lost_in` (`retrieval`, `rerank`, `both`, or `null` when unknown).

use anstyle::{AnsiColor, Style};
use serde_json::{json, Value};

use super::num;
use super::table::{f4, short_commit, signed4, Table};
use crate::config::Decision;
use crate::escape::{self, markdown as md, markdown_code, terminal};
use crate::gate::{
    Check, CheckVerdict, Flip, GateOutcome, Hypothesis, RetrieverOutcome, StageLoss, StageOutcome, Verdict,
};
use crate::report::Format;
use crate::stages::{Lost, LostIn};

const PASS: Style = AnsiColor::Green.on_default().bold();
const FAIL: Style = AnsiColor::Red.on_default().bold();
const FAILED_CHECK: Style = AnsiColor::Red.on_default();

pub struct GateView<'a> {
    pub outcome: &'a GateOutcome,
    /// What the report is about: `gate` or `baseline update`.
    pub command: &'a str,
    pub color: bool,
}

impl GateView<'_> {
    pub fn render(&self, format: Format) -> String {
        match format {
            Format::Json => {
                escape::json(serde_json::to_string_pretty(&self.json()).unwrap_or_default() + "\n")
            }
            Format::Markdown => self.markdown(),
            Format::Csv => self.csv(),
            Format::Junit => self.junit(),
            Format::Table | Format::Trec => self.text(),
        }
    }

    fn paint(&self, s: &str, style: Style) -> String {
        if self.color {
            format!("{style}{s}{style:#}")
        } else {
            s.to_string()
        }
    }

    fn verdict_word(&self, v: Verdict) -> String {
        match v {
            Verdict::Pass => self.paint("PASS", PASS),
            Verdict::Fail => self.paint("FAIL", FAIL),
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

    /// One sentence per retriever: which stage lost queries, if one did,
    /// then what failed, or that nothing did.
    fn summary(&self, r: &RetrieverOutcome) -> String {
        let checks = self.checks_summary(r);
        match r.stages.as_ref().map(|s| &s.losses) {
            Some(losses) if !losses.is_empty() => {
                let lines: Vec<String> = losses.iter().map(stage_loss_text).collect();
                format!("{}; {checks}", lines.join("; "))
            }
            _ => checks,
        }
    }

    fn checks_summary(&self, r: &RetrieverOutcome) -> String {
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
        let reasons: Vec<String> = fails.iter().map(|c| self.reason(c, r)).collect();
        format!(
            "{} check{} failed: {}",
            fails.len(),
            if fails.len() == 1 { "" } else { "s" },
            reasons.join("; ")
        )
    }

    /// Why a check failed, in words, with the number the rule used.
    pub fn reason(&self, c: &Check, r: &RetrieverOutcome) -> String {
        let s = &self.outcome.settings;
        let tol = c.tolerance.unwrap_or(0.0);
        let drop = -c.cmp.delta;
        let what = format!("{} on {}", c.cmp.metric, c.cmp.stratum);
        let p = self.p_text(c.cmp.p_adjusted, c, r);
        match s.decision {
            Decision::ConfidentDrop if tol > 0.0 => format!(
                "{what} dropped {}, more than the {} allowed: p_adj {p} (one-sided, H0 drop <= {})",
                short(drop),
                short(tol),
                short(tol)
            ),
            Decision::ConfidentDrop | Decision::SignificantDrop => {
                let allowed = if tol > 0.0 {
                    format!(", more than the {} allowed,", short(tol))
                } else {
                    String::new()
                };
                format!(
                    "{what} dropped {}{allowed} and significantly: p_adj {p} (one-sided, H0 drop <= 0)",
                    short(drop)
                )
            }
            Decision::NonInferiority => format!(
                "{what} not shown to be within {} of the baseline: delta {}, lower bound {} at {} (p_adj {p}, one-sided, H0 drop >= {})",
                short(tol),
                signed_short(c.cmp.delta),
                signed_short(c.lower_bound),
                level(c.bound_level),
                short(tol)
            ),
            Decision::Threshold => format!(
                "{what} dropped {}, more than the {} allowed (threshold: no test)",
                short(drop),
                short(tol)
            ),
        }
    }

    /// A p-value to the digits its resamples support: about three decimals
    /// at B = 10,000 (Monte Carlo error 0.002 near 0.05), four for exact
    /// tests.
    fn p_text(&self, p: f64, c: &Check, r: &RetrieverOutcome) -> String {
        if p.is_nan() {
            return "-".into();
        }
        let digits = if c.monte_carlo { mc_digits(r.resamples) } else { 4 };
        let floor = 10f64.powi(-(digits as i32));
        if p < floor {
            format!("<{floor:.digits$}")
        } else {
            format!("{p:.digits$}")
        }
    }

    /// The bound column: what the rule used, at the level it used.
    fn bound_header(&self, r: &RetrieverOutcome) -> String {
        let lvl = r
            .checks
            .first()
            .map_or(1.0 - self.outcome.settings.alpha, |c| c.bound_level);
        match self.outcome.settings.decision {
            Decision::ConfidentDrop | Decision::SignificantDrop => format!("upper {}", level(lvl)),
            Decision::NonInferiority => format!("lower {}", level(lvl)),
            Decision::Threshold => format!("{} CI", level(1.0 - self.outcome.settings.alpha)),
        }
    }

    fn check_table(&self, r: &RetrieverOutcome) -> Table {
        let bound = self.bound_header(r);
        let headers = [
            "metric",
            "stratum",
            "n",
            "baseline",
            "current",
            "delta",
            &bound,
            "p (1-sided)",
            "p_adj",
            "mde",
            "verdict",
        ];
        let mut t = Table::new(headers.iter().map(|s| s.to_string()).collect(), 2);
        t.align[10] = super::table::Align::Left;
        let decision = self.outcome.settings.decision;
        for c in &r.checks {
            let d = if c.monte_carlo { 3 } else { 4 };
            let b = |v: f64| {
                if v.is_finite() {
                    let s = format!("{v:+.d$}");
                    if v == 0.0
                        || s.trim_start_matches(['+', '-'])
                            .chars()
                            .all(|ch| ch == '0' || ch == '.')
                    {
                        format!("{:.d$}", 0.0)
                    } else {
                        s
                    }
                } else {
                    "-".into()
                }
            };
            let bound = match decision {
                Decision::ConfidentDrop | Decision::SignificantDrop => b(c.upper_bound),
                Decision::NonInferiority => b(c.lower_bound),
                Decision::Threshold => format!("[{}, {}]", b(c.cmp.ci_low), b(c.cmp.ci_high)),
            };
            t.push(vec![
                c.cmp.metric.name(),
                c.cmp.stratum.clone(),
                c.cmp.n.to_string(),
                f4(c.cmp.baseline),
                f4(c.cmp.current),
                signed4(c.cmp.delta),
                bound,
                self.p_text(c.cmp.p_value, c, r),
                self.p_text(c.cmp.p_adjusted, c, r),
                c.mde().map_or("-".into(), |m| format!("{m:.3}")),
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
        if r.stages.is_some() {
            // Grouped by the stage that lost them, then by stratum.
            for (group, title) in [
                (Some(LostIn::Rerank), "lost in rerank"),
                (Some(LostIn::Retrieval), "lost in retrieval"),
                (Some(LostIn::Both), "lost in both stages"),
                (None, "stage unknown"),
            ] {
                let flips: Vec<&Flip> = r.flips.iter().filter(|f| f.lost_in == group).collect();
                if flips.is_empty() {
                    continue;
                }
                out += &if md {
                    format!("- *{title}* ({})\n", flips.len())
                } else {
                    format!("  {title} ({}):\n", flips.len())
                };
                out += &self.flip_lines(&flips, md, 1);
            }
        } else {
            let flips: Vec<&Flip> = r.flips.iter().collect();
            out += &self.flip_lines(&flips, md, 0);
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

    /// Flips by stratum, indented `depth` levels further.
    fn flip_lines(&self, flips: &[&Flip], md: bool, depth: usize) -> String {
        let mut out = String::new();
        let mut last = "";
        let pad = "  ".repeat(depth);
        for f in flips {
            if f.stratum != last {
                out += &if md {
                    format!("{pad}- {}\n", escape::markdown(&f.stratum))
                } else {
                    format!("{pad}  {}\n", terminal(&f.stratum))
                };
                last = &f.stratum;
            }
            let text = |t: String| format!(" \"{t}\"");
            out += &if md {
                let text = f
                    .text
                    .as_deref()
                    .map(|t| text(escape::markdown(t)))
                    .unwrap_or_default();
                format!(
                    "{pad}  - {}{text}: lost {}\n",
                    markdown_code(&f.query_id),
                    f.lost.join(", ")
                )
            } else {
                let text = f
                    .text
                    .as_deref()
                    .map(|t| text(terminal(t).into_owned()))
                    .unwrap_or_default();
                format!(
                    "{pad}    {}{text}: lost {}\n",
                    terminal(&f.query_id),
                    f.lost.join(", ")
                )
            };
        }
        out
    }

    fn stage_title(st: &StageOutcome) -> String {
        format!(
            "Two stages at cutoff {} (candidates {}), baseline -> current:",
            st.cutoff
                .map_or_else(|| "none (whole run)".to_string(), |k| k.to_string()),
            st.candidates
        )
    }

    /// Queries by stage per scope, baseline -> current.
    fn lost_table(st: &StageOutcome) -> Table {
        let headers = [
            "scope",
            "n",
            "reached",
            "dropped_by_rerank",
            "missed_by_retrieval",
        ];
        let mut t = Table::new(headers.iter().map(|h| h.to_string()).collect(), 1);
        for s in &st.lost {
            let cell = |f: fn(&Lost) -> usize| match &s.baseline {
                Some(b) => format!("{} -> {}", f(b), f(&s.current)),
                None => format!("? -> {}", f(&s.current)),
            };
            t.push(vec![
                s.scope.clone(),
                s.n.to_string(),
                cell(|l| l.reached),
                cell(|l| l.dropped_by_rerank),
                cell(|l| l.missed_by_retrieval),
            ]);
        }
        t
    }

    /// Each final metric now beside its ceiling: every scope, or (for the
    /// terminal, where the gate's verdict must stay on the first screen)
    /// the overall one only; JSON and markdown keep the strata.
    fn ceiling_table(st: &StageOutcome, overall_only: bool) -> Table {
        let headers = ["metric", "scope", "current", "ceiling", "current/ceiling"];
        let mut t = Table::new(headers.iter().map(|h| h.to_string()).collect(), 2);
        for c in st.ceilings.iter().filter(|c| !overall_only || c.scope == "all") {
            t.push(vec![
                c.metric.name(),
                c.scope.clone(),
                f4(c.current),
                f4(c.ceiling),
                c.ratio.map_or_else(|| "-".to_string(), f4),
            ]);
        }
        t
    }

    fn improvements(&self, r: &RetrieverOutcome) -> Option<String> {
        let rows: Vec<String> = r
            .checks
            .iter()
            .filter(|c| c.verdict == CheckVerdict::Improved)
            .map(|c| {
                format!(
                    "{} on {} {} (p_adj {}, one-sided)",
                    c.cmp.metric,
                    c.cmp.stratum,
                    signed4(c.cmp.delta),
                    self.p_text(c.p_rise_adjusted, c, r)
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
            out += &format!("warning: {}\n", terminal(w));
        }
        for r in &self.outcome.retrievers {
            out += &format!(
                "\n{} {}: {}\n  run {} · {}\n",
                self.verdict_word(r.verdict()),
                terminal(&r.name),
                terminal(&self.summary(r)),
                terminal(&r.run),
                terminal(&Self::baseline_desc(r))
            );
            if !r.checks.is_empty() {
                out.push('\n');
                for line in self.check_table(r).text().lines() {
                    let line = if self.color && line.ends_with(" fail") {
                        self.paint(line, FAILED_CHECK)
                    } else {
                        line.to_string()
                    };
                    out += &format!("  {line}\n");
                }
            }
            if let Some(imp) = self.improvements(r) {
                out += &format!("\n{}\n", terminal(&imp));
            }
            if let Some(st) = &r.stages {
                out += &format!("\n{}\n", terminal(&Self::stage_title(st)));
                for table in [Self::lost_table(st), Self::ceiling_table(st, true)] {
                    for line in table.text().lines() {
                        out += &format!("  {line}\n");
                    }
                    out.push('\n');
                }
                out += "  (ceilings per stratum: --format markdown or json)\n";
            }
            let flips = self.flips_text(r, false);
            if !flips.is_empty() {
                out.push('\n');
                out += &flips;
            }
            if !r.warnings.is_empty() {
                out += "\nWarnings:\n";
                for w in &r.warnings {
                    out += &format!("  - {}\n", terminal(w));
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
                md(&r.name),
                r.verdict().name(),
                md(&self.summary(r))
            );
        }
        out += &format!("\n<sub>{}</sub>\n", self.settings_line());
        for w in &o.warnings {
            out += &format!("\n> **Warning**: {}\n", md(w));
        }
        for r in &o.retrievers {
            // A passing retriever folds away: the reviewer's eye goes to
            // what failed.
            let folded = r.verdict() == Verdict::Pass;
            if folded {
                out += &format!("\n<details><summary><b>{}</b> — pass</summary>\n", md(&r.name));
            }
            out += &format!(
                "\n### {} — {}\n\n{} · {}\n\n",
                md(&r.name),
                r.verdict().name(),
                markdown_code(&r.run),
                md(&Self::baseline_desc(r))
            );
            if !r.checks.is_empty() {
                out += &self.check_table(r).markdown();
                out.push('\n');
            }
            if let Some(imp) = self.improvements(r) {
                out += &format!("{}\n\n", md(&imp));
            }
            if let Some(st) = &r.stages {
                out += &format!("**{}**\n\n", md(&Self::stage_title(st)));
                out += &Self::lost_table(st).markdown();
                out.push('\n');
                out += &Self::ceiling_table(st, false).markdown();
                out.push('\n');
            }
            out += &self.flips_text(r, true);
            if !r.warnings.is_empty() {
                out += "\n**Warnings**\n\n";
                for w in &r.warnings {
                    out += &format!("- {}\n", md(w));
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
                    c.mde().map(super::csv_num).unwrap_or_default(),
                    c.test.name().to_string(),
                    r.resamples.to_string(),
                    self.outcome.settings.seed.to_string(),
                    c.verdict.name().to_string(),
                ]);
                t.push(row);
            }
        }
        t.csv()
    }

    fn junit(&self) -> String {
        let esc = escape::xml;
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
                        "      <failure message=\"{} (baseline {:.4}, current {:.4})\"/>\n",
                        esc(&self.reason(c, r)),
                        c.cmp.baseline,
                        c.cmp.current,
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
                        o.insert("mde".into(), c.mde().map_or(Value::Null, num));
                        o.insert("mde_spread".into(), json!(c.power.spread.name()));
                        o.insert("enforceable".into(), json!(c.power.enforceable));
                        o.insert("queries_needed".into(), json!(c.power.queries_needed));
                        o.insert("unchanged_fails".into(), c.power.unchanged_fails.map_or(Value::Null, num));
                        o.insert("h0".into(), json!(match c.hypothesis {
                            Hypothesis::DropAtMost(t) => format!("drop <= {t}"),
                            Hypothesis::DropAtLeast(t) => format!("drop >= {t}"),
                        }));
                        o.insert("lower_bound".into(), num(c.lower_bound));
                        o.insert("upper_bound".into(), num(c.upper_bound));
                        o.insert("bound_level".into(), num(c.bound_level));
                        o.insert("p_drop".into(), num(c.p_drop));
                        o.insert("p_rise".into(), num(c.p_rise));
                        o.insert("p_rise_adjusted".into(), num(c.p_rise_adjusted));
                        o.insert("monte_carlo".into(), json!(c.monte_carlo));
                        if c.verdict == CheckVerdict::Fail {
                            o.insert("reason".into(), json!(self.reason(c, r)));
                        }
                        Value::Object(o)
                    })
                    .collect();
                let flips: Vec<Value> = r
                    .flips
                    .iter()
                    .map(|f| {
                        let mut v = json!({"query_id": f.query_id, "stratum": f.stratum, "text": f.text, "lost": f.lost});
                        if let (Some(_), Some(o)) = (&r.stages, v.as_object_mut()) {
                            o.insert("lost_in".into(), json!(f.lost_in.map(LostIn::name)));
                        }
                        v
                    })
                    .collect();
                json!({
                    "name": r.name,
                    "verdict": r.verdict().name(),
                    "run": r.run,
                    "resamples": r.resamples,
                    "baseline": r.baseline.as_ref().map(|b| json!({"created_at": b.created_at, "commit": b.commit, "note": b.note})),
                    "checks": checks,
                    "flips": flips,
                    "gained": r.gained,
                    "added_queries": r.added_queries,
                    "removed_queries": r.removed_queries,
                    "gold_changed": r.gold_changed,
                    "stages": r.stages.as_ref().map(stages_json),
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

/// "12 more queries dropped by the reranker (how-to)".
fn stage_loss_text(l: &StageLoss) -> String {
    let what = match l.stage {
        LostIn::Rerank => "dropped by the reranker",
        LostIn::Retrieval | LostIn::Both => "missed by retrieval",
    };
    let strata = match l.strata.as_slice() {
        [] => String::new(),
        [(one, _)] => format!(" ({one})"),
        many => format!(
            " ({})",
            many.iter()
                .map(|(s, n)| format!("{s} {n}"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    format!(
        "{} more quer{} {what}{strata}",
        l.more,
        if l.more == 1 { "y" } else { "ies" }
    )
}

fn lost_json(l: &Lost) -> Value {
    json!({
        "reached": l.reached,
        "dropped_by_rerank": l.dropped_by_rerank,
        "missed_by_retrieval": l.missed_by_retrieval,
    })
}

fn stages_json(st: &StageOutcome) -> Value {
    let mut lost = serde_json::Map::new();
    for s in &st.lost {
        lost.insert(
            s.scope.clone(),
            json!({"n": s.n, "baseline": s.baseline.as_ref().map(lost_json), "current": lost_json(&s.current)}),
        );
    }
    let mut ceiling = serde_json::Map::new();
    for c in &st.ceilings {
        let entry = ceiling
            .entry(c.metric.name())
            .or_insert_with(|| Value::Object(serde_json::Map::new()));
        if let Some(o) = entry.as_object_mut() {
            o.insert(
                c.scope.clone(),
                json!({"current": num(c.current), "ceiling": num(c.ceiling), "ratio": c.ratio.map_or(Value::Null, num)}),
            );
        }
    }
    let losses: Vec<Value> = st
        .losses
        .iter()
        .map(|l| {
            let strata: serde_json::Map<String, Value> =
                l.strata.iter().map(|(s, n)| (s.clone(), json!(n))).collect();
            json!({"stage": l.stage.name(), "more": l.more, "strata": strata})
        })
        .collect();
    let absent: serde_json::Map<String, Value> =
        st.absent.iter().map(|(q, ids)| (q.clone(), json!(ids))).collect();
    json!({
        "candidates": st.candidates,
        "cutoff": st.cutoff,
        "lost": lost,
        "ceiling": ceiling,
        "losses": losses,
        "absent_from_candidates": absent,
    })
}

/// Decimals a Monte Carlo p-value supports with B resamples: its standard
/// error near 0.05 is sqrt(0.05 * 0.95 / B), 0.002 at B = 10,000, so the
/// third decimal is the last that means anything there.
fn mc_digits(b: u32) -> usize {
    let d = f64::from(b.max(1)).log10().floor() as i64 - 1;
    d.clamp(2, 4) as usize
}

/// A confidence level as a percentage, to the digit that tells levels apart
/// (95%, 99.4%, 99.72%).
fn level(l: f64) -> String {
    let pct = 100.0 * l;
    if (pct - pct.round()).abs() < 1e-9 {
        format!("{pct:.0}%")
    } else if format!("{pct:.1}") != "100.0" {
        format!("{pct:.1}%")
    } else {
        format!("{pct:.2}%")
    }
}

/// Three decimals with trailing zeros dropped: 0.062, 0.02, 0.1.
fn short(v: f64) -> String {
    let s = format!("{v:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".into()
    } else {
        s.to_string()
    }
}

fn signed_short(v: f64) -> String {
    if !v.is_finite() {
        return if v.is_nan() {
            "-".into()
        } else if v > 0.0 {
            "+inf".into()
        } else {
            "-inf".into()
        };
    }
    let s = short(v);
    if s.starts_with('-') || s == "0" {
        s
    } else {
        format!("+{s}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn number_helpers() {
        assert_eq!(mc_digits(10_000), 3);
        assert_eq!(mc_digits(1_000), 2);
        assert_eq!(mc_digits(100_000), 4);
        assert_eq!(mc_digits(200), 2);
        assert_eq!(level(0.95), "95%");
        assert_eq!(level(1.0 - 0.05 / 9.0), "99.4%");
        assert_eq!(short(0.0622), "0.062");
        assert_eq!(short(0.02), "0.02");
        assert_eq!(short(-0.0001), "0");
        assert_eq!(signed_short(-0.035), "-0.035");
        assert_eq!(signed_short(0.01), "+0.01");
    }
}
