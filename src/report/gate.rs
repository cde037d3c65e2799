//! The gate's report ([`GateView`]) and what its formats share: the
//! headline, the reasons a check failed, the check table, the flips grouped
//! by stage and stratum. The verdict arrives decided; the formats in
//! `terminal`, `markdown`, `json`, `csv` and `junit` lay these out.

use anstyle::{AnsiColor, Style};
use anyhow::Result;

use super::stages::{cutoff_words, lost_table};
use super::table::{f4, short_commit, signed4, Table};
use crate::compare::Skew;
use crate::config::Decision;
use crate::diag::count;
use crate::gate::{
    Check, CheckVerdict, Flip, GateOutcome, JudgeVerdict, RetrieverOutcome, StageLoss, StageOutcome, Verdict,
};
use crate::goldbuild::agreement::Measure;
use crate::report::Format;
use crate::stages::LostIn;

const PASS: Style = AnsiColor::Green.on_default().bold();
const FAIL: Style = AnsiColor::Red.on_default().bold();
pub(super) const FAILED_CHECK: Style = AnsiColor::Red.on_default();

pub struct GateView<'a> {
    pub outcome: &'a GateOutcome,
    /// What the report is about: `gate` or `baseline update`.
    pub command: &'a str,
    pub color: bool,
    /// `--quiet`: the terminal report keeps the verdict and the failures
    /// (a pre-push hook prints this on every push; the rest is one command
    /// away). Formats read by programs or reviewers keep everything.
    pub quiet: bool,
    /// How the gate was invoked, for the exact commands of the next steps;
    /// `None` leaves the flags the report cannot know out.
    pub invocation: Option<&'a Invocation>,
    /// The terminal's width in columns: the table report fits its tables
    /// and wraps its sentences to it (other formats ignore it).
    pub width: usize,
}

/// What the command line knew that the outcome does not: the `--config`
/// given, and where the baselines live, so that the next steps are
/// commands a reviewer can paste.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Invocation {
    /// `--config PATH` as given (none: found by the default search).
    pub config: Option<String>,
    /// The baselines directory, as the config names it.
    pub baselines: Option<String>,
}

/// The width a table report assumes when it knows none (a CI log, a pipe).
pub const DEFAULT_WIDTH: usize = 120;

impl GateView<'_> {
    /// Under `labels: ppi`: (queries on model grades alone, model-graded
    /// queries, verified queries), from the checks' own counts (the `all`
    /// check of the first retriever that has one). Each renderer words it.
    pub(super) fn ppi_share(&self) -> Option<(usize, usize, usize)> {
        let e = self
            .outcome
            .retrievers
            .iter()
            .flat_map(|r| r.checks.iter())
            .filter(|c| c.cmp.stratum == "all")
            .find_map(|c| c.ppi.as_ref())?;
        Some((e.n_model.saturating_sub(e.n_verified), e.n_model, e.n_verified))
    }

    pub fn render(&self, format: Format) -> Result<String> {
        format.exporter().gate(self)
    }

    pub(super) fn paint(&self, s: &str, style: Style) -> String {
        if self.color {
            format!("{style}{s}{style:#}")
        } else {
            s.to_string()
        }
    }

    pub(super) fn verdict_word(&self, v: Verdict) -> String {
        match v {
            Verdict::Pass => self.paint("PASS", PASS),
            Verdict::Fail => self.paint("FAIL", FAIL),
        }
    }

    pub(super) fn settings_line(&self) -> String {
        let s = &self.outcome.settings;
        // The B that decided: a borderline result is re-tested with more
        // resamples, and the header says so rather than the B configured.
        let used = self
            .outcome
            .retrievers
            .iter()
            .filter(|r| !r.checks.is_empty())
            .map(|r| r.resamples)
            .max()
            .unwrap_or(s.resamples);
        let b = if used == s.resamples {
            format!("B={used}")
        } else {
            format!("B={used} after a borderline re-test, {} configured", s.resamples)
        };
        let test = match s.test {
            crate::config::TestKind::Bootstrap => {
                format!("paired percentile bootstrap (stratified, {b}, seed {})", s.seed)
            }
            crate::config::TestKind::Randomization => {
                format!(
                    "sign-flip randomization (exact up to 16 queries, else {b}, seed {})",
                    s.seed
                )
            }
            crate::config::TestKind::TTest => "paired t-test".to_string(),
        };
        let family = match s.correction_scope {
            crate::config::CorrectionScope::Gate => {
                let m = self
                    .outcome
                    .retrievers
                    .iter()
                    .map(|r| r.family_size)
                    .max()
                    .unwrap_or(0);
                format!(
                    "across the gate's {m} gated check{}",
                    if m == 1 { "" } else { "s" }
                )
            }
            crate::config::CorrectionScope::Retriever => "within each retriever's gated checks".to_string(),
        };
        let test = match self.outcome.labels {
            crate::config::LabelMode::Ppi => {
                format!("labels: ppi: prediction-powered (PPI++) estimate of each delta, the model's grades corrected by the verified sample, tested by {test} on its per-query terms")
            }
            crate::config::LabelMode::Model => {
                format!(
                    "{test}, labels: model (the model's grades where no person graded: biased by its errors)"
                )
            }
            crate::config::LabelMode::People => test,
        };
        let inconclusive = match s.on_inconclusive {
            crate::config::OnInconclusive::Pass => "",
            crate::config::OnInconclusive::Fail => ", inconclusive checks fail",
        };
        format!(
            "{test}, alpha {}, decision {}, correction {} {family}{inconclusive}",
            crate::diag::number(s.alpha),
            s.decision.name(),
            s.correction.name()
        )
    }

    /// One sentence per retriever: which stage lost queries, if one did,
    /// then what failed, or that nothing did.
    pub(super) fn summary(&self, r: &RetrieverOutcome) -> String {
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
        let fails: Vec<&Check> = r.checks.iter().filter(|c| r.fails(c)).collect();
        let n = r.counts();
        if fails.is_empty() {
            let gated = n.gated();
            let mut s = format!("{gated} check{} passed", if gated == 1 { "" } else { "s" });
            if n.inconclusive > 0 {
                s += &format!(
                    " ({} inconclusive: the gold set cannot tell within from beyond the tolerance)",
                    n.inconclusive
                );
            }
            if n.improved > 0 {
                s += &format!(", {} improved", n.improved);
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
        let p = p_text(c.cmp.p_adjusted, r);
        let bd = bound_digits(r);
        let bound = |v: f64| signed_short(v, bd);
        if c.verdict == CheckVerdict::Inconclusive {
            return format!(
                "{what} inconclusive: delta {}, between {} and {} at {}, which holds both a drop within the {} allowed and one beyond it",
                signed_short(c.cmp.delta, 4),
                bound(c.lower_bound),
                bound(c.upper_bound),
                level(c.bound_level),
                amount(tol)
            );
        }
        match s.decision {
            Decision::ConfidentDrop if tol > 0.0 => format!(
                "{what} dropped {}, more than the {} allowed: p_adj {p} (one-sided, H0 drop <= {}); upper bound {} at {}",
                amount(drop),
                amount(tol),
                amount(tol),
                bound(c.upper_bound),
                level(c.bound_level)
            ),
            Decision::ConfidentDrop | Decision::SignificantDrop => {
                let allowed = if tol > 0.0 {
                    format!(", more than the {} allowed,", amount(tol))
                } else {
                    String::new()
                };
                format!(
                    "{what} dropped {}{allowed} and significantly: p_adj {p} (one-sided, H0 drop <= 0); upper bound {} at {}",
                    amount(drop),
                    bound(c.upper_bound),
                    level(c.bound_level)
                )
            }
            Decision::NonInferiority => format!(
                "{what} not shown to be within {} of the baseline: delta {}, lower bound {} at {} (p_adj {p}, one-sided, H0 drop >= {})",
                amount(tol),
                signed_short(c.cmp.delta, 4),
                bound(c.lower_bound),
                level(c.bound_level),
                amount(tol)
            ),
            Decision::Threshold => format!(
                "{what} dropped {}, more than the {} allowed (threshold: no test)",
                amount(drop),
                amount(tol)
            ),
        }
    }

    /// The bound column: what the rule used; the level column beside it
    /// says at which level each check was decided (under Holm it differs
    /// from check to check).
    pub(super) fn bound_header(&self) -> String {
        match self.outcome.settings.decision {
            Decision::ConfidentDrop | Decision::SignificantDrop => "upper bound".to_string(),
            Decision::NonInferiority => "lower bound".to_string(),
            Decision::Threshold => format!("{} CI", level(1.0 - self.outcome.settings.alpha)),
        }
    }

    /// One row per check. Each column holds one precision: bounds to the
    /// digits the least precise check of the table supports (three when any
    /// carries Monte Carlo error), p-values likewise ([`p_text`]).
    pub(super) fn check_table(&self, r: &RetrieverOutcome) -> Table {
        let bound = self.bound_header();
        let headers = [
            "metric",
            "stratum",
            "n",
            "baseline",
            "current",
            "delta",
            "tolerance",
            &bound,
            "level",
            "p (1-sided)",
            "p_adj",
            "mde",
            "test",
            "verdict",
        ];
        let mut t = Table::new(headers.iter().map(|s| s.to_string()).collect(), 2);
        t.align[12] = super::table::Align::Left;
        t.align[13] = super::table::Align::Left;
        let decision = self.outcome.settings.decision;
        let d = bound_digits(r);
        let b = |v: f64| bound_cell(v, d);
        for c in &r.checks {
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
                c.tolerance.map_or("-".into(), f4),
                bound,
                if decision == Decision::Threshold {
                    "-".to_string()
                } else {
                    level(c.bound_level)
                },
                p_text(c.cmp.p_value, r),
                p_text(c.cmp.p_adjusted, r),
                c.mde().map_or("-".into(), |m| format!("{m:.3}")),
                c.test_name().to_string(),
                c.verdict.name().to_string(),
            ]);
        }
        t
    }

    /// Under `labels: ppi`, per tested check: how its delta was estimated
    /// (model-graded and verified queries, lambda), its interval beside
    /// people's labels alone, and the verified queries people alone would
    /// need for the same width. None otherwise.
    pub(super) fn ppi_table(&self, r: &RetrieverOutcome) -> Option<Table> {
        if !r.checks.iter().any(|c| c.ppi.is_some()) {
            return None;
        }
        let level = 1.0 - self.outcome.settings.alpha;
        let headers = [
            "metric".to_string(),
            "stratum".to_string(),
            "model".to_string(),
            "verified".to_string(),
            "lambda".to_string(),
            format!("ppi delta {}", self::level(level)),
            format!("people only {}", self::level(level)),
            "effective n".to_string(),
        ];
        let mut t = Table::new(headers.to_vec(), 2);
        for c in &r.checks {
            let Some(e) = &c.ppi else { continue };
            t.push(vec![
                c.cmp.metric.name(),
                c.cmp.stratum.clone(),
                e.n_model.to_string(),
                if e.people_only_strata > 0 {
                    format!(
                        "{} ({} people-only)",
                        e.n_verified,
                        crate::diag::count(e.people_only_strata, "stratum", "strata")
                    )
                } else {
                    e.n_verified.to_string()
                },
                format!("{:.2}", e.lambda),
                super::eval::with_interval(e.mean, e.shown_interval(level), signed4),
                super::eval::with_interval(e.people_mean, e.shown_people_interval(level), signed4),
                super::eval::effective_n(e.effective_n()),
            ]);
        }
        Some(t)
    }

    pub(super) fn stage_title(st: &StageOutcome) -> String {
        format!(
            "Two stages at cutoff {} (candidates {}), baseline -> current:",
            cutoff_words(st.cutoff),
            st.candidates
        )
    }

    /// Queries by stage per scope, baseline -> current.
    pub(super) fn lost_table(st: &StageOutcome) -> Table {
        lost_table(
            st.lost.iter().map(|s| (s.scope.as_str(), s.n, s)),
            |s, f| match &s.baseline {
                Some(b) => format!("{} -> {}", f(b), f(&s.current)),
                None => format!("? -> {}", f(&s.current)),
            },
        )
    }

    /// Each final metric now beside its ceiling: every scope, or (for the
    /// terminal, where the gate's verdict must stay on the first screen)
    /// the overall one only; JSON and markdown keep the strata.
    pub(super) fn ceiling_table(st: &StageOutcome, overall_only: bool) -> Table {
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

    pub(super) fn improvements(&self, r: &RetrieverOutcome) -> Option<String> {
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
                    p_text(c.p_rise_adjusted, r)
                )
            })
            .collect();
        (!rows.is_empty()).then(|| format!("Improved: {}", rows.join("; ")))
    }

    /// The decision in one line, what failed named: "rgate gate: FAIL ·
    /// hybrid: recall@10 fell 0.1 (tolerance 0.07), +2 more checks". A
    /// judge that fails the gate is named here too, and a regression that
    /// `baseline update` accepted reads "recorded (regression accepted:
    /// NOTE)" instead of FAIL. `esc` neutralises user text (a stratum) for
    /// the format.
    pub(super) fn headline_with(&self, esc: &dyn Fn(&str) -> String, verdict: &str) -> String {
        let o = self.outcome;
        let mut parts = failure_fragments(o, esc);
        let judge_fails = o.judge.as_ref().is_some_and(|j| j.fails());
        if judge_fails {
            parts.push(self.judge_fragment());
        }
        let lead = match &o.recorded {
            Some(rec) => match &rec.accepted {
                Some(note) if o.verdict() == Verdict::Fail => {
                    format!("recorded (regression accepted: {})", esc(note))
                }
                _ => format!("recorded ({verdict})"),
            },
            None => verdict.to_string(),
        };
        if parts.is_empty() {
            let n = o.retrievers.len();
            return format!(
                "rgate {}: {lead} (0 of {n} retriever{} regressed)",
                self.command,
                if n == 1 { "" } else { "s" }
            );
        }
        format!("rgate {}: {lead} · {}", self.command, parts.join(" · "))
    }

    /// The headline in plain text, the verdict painted.
    pub(super) fn headline(&self) -> String {
        let word = self.verdict_word(self.outcome.verdict());
        self.headline_with(&|s: &str| crate::escape::terminal(s).into_owned(), &word)
    }

    /// "the judge failed: kappa 0.41 below min_kappa 0.6".
    fn judge_fragment(&self) -> String {
        let Some(j) = &self.outcome.judge else {
            return String::new();
        };
        let min = j.min_kappa.map(crate::diag::number).unwrap_or_default();
        match &j.kappa {
            Measure::Value(k) => format!("the judge failed: kappa {} below min_kappa {min}", f4(*k)),
            Measure::Undefined(_) => "the judge failed: its kappa cannot be measured".to_string(),
        }
    }

    /// The failing retrievers first, then the rest, each group in the
    /// config's order: the reader's eye goes to what failed.
    pub(super) fn ordered(&self) -> Vec<&RetrieverOutcome> {
        let r = &self.outcome.retrievers;
        r.iter()
            .filter(|r| r.verdict() == Verdict::Fail)
            .chain(r.iter().filter(|r| r.verdict() == Verdict::Pass))
            .collect()
    }

    /// "bm25 (3 checks), reranked (4 checks)": the passing retrievers in
    /// one line.
    pub(super) fn passing_line(&self) -> Option<String> {
        let pass: Vec<String> = self
            .outcome
            .retrievers
            .iter()
            .filter(|r| r.verdict() == Verdict::Pass)
            .map(|r| {
                if r.baseline.is_none() {
                    format!("{} (no baseline yet)", r.name)
                } else {
                    let n = r.counts().gated();
                    format!("{} ({})", r.name, count(n, "check", "checks"))
                }
            })
            .collect();
        (!pass.is_empty()).then(|| pass.join(", "))
    }

    /// What was lost, per stratum, in queries: "12 of 30 identifier-lookup
    /// queries lost their answer from the top 10 (4 more from the top 3
    /// only)". Read off the flips (a query a gated metric found in the
    /// baseline and lost): a flip's deepest lost cutoff says how far its
    /// answer fell. None when no query was lost.
    pub(super) fn lost_sentence(r: &RetrieverOutcome, esc: &dyn Fn(&str) -> String) -> Option<String> {
        if r.flips.is_empty() {
            return None;
        }
        let mut parts = Vec::new();
        // Strata in the gold set's order; a flip's stratum not among them
        // (no baseline pairing) is counted against no size.
        let mut names: Vec<&str> = r.strata.iter().map(|(s, _)| s.as_str()).collect();
        for f in &r.flips {
            if !names.contains(&f.stratum.as_str()) {
                names.push(&f.stratum);
            }
        }
        for name in names {
            let flips: Vec<&Flip> = r.flips.iter().filter(|f| f.stratum == name).collect();
            if flips.is_empty() {
                continue;
            }
            let of = r
                .strata
                .iter()
                .find(|(s, _)| s == name)
                .map(|(_, n)| format!(" of {n}"))
                .unwrap_or_default();
            let who = if name.is_empty() {
                "queries".to_string()
            } else {
                format!("{} queries", esc(name))
            };
            // Deepest cutoff each flip lost, as words; counts per depth.
            let mut depths: Vec<(Depth, usize)> = Vec::new();
            for f in &flips {
                let d = deepest_lost(f);
                match depths.iter_mut().find(|(x, _)| *x == d) {
                    Some((_, n)) => *n += 1,
                    None => depths.push((d, 1)),
                }
            }
            depths.sort_by_key(|d| std::cmp::Reverse(d.0));
            let (first, rest) = depths
                .split_first()
                .map(|(a, b)| (*a, b))
                .unwrap_or(((Depth::Unknown, 0), &[]));
            let mut s = if rest.is_empty() {
                format!("{}{of} {who} lost their answer {}", flips.len(), first.0.words())
            } else {
                format!(
                    "{}{of} {who} lost their answer: {} {}",
                    flips.len(),
                    first.1,
                    first.0.words()
                )
            };
            for (d, n) in rest {
                s += &format!(", {n} {} only", d.words());
            }
            parts.push(s);
        }
        let mut out = parts.join("; ");
        if r.gained > 0 {
            out += &format!(
                "; {} found an answer they had missed",
                count(r.gained, "query", "queries")
            );
        }
        Some(out + ".")
    }

    /// The significance of a retriever's failed checks in one sentence,
    /// in the words of the decision rule that failed them.
    pub(super) fn significance_sentence(&self, r: &RetrieverOutcome) -> Option<String> {
        let fails: Vec<&Check> = r.checks.iter().filter(|c| r.fails(c)).collect();
        if fails.is_empty() {
            return None;
        }
        let s = &self.outcome.settings;
        let alpha = crate::diag::number(s.alpha);
        let ps: Vec<String> = fails.iter().map(|c| p_text(c.cmp.p_adjusted, r)).collect();
        let one = fails.len() == 1;
        let (each, its) = if one {
            ("The drop is", "its")
        } else {
            ("Each drop is", "its")
        };
        let inconclusive = fails.iter().any(|c| c.verdict == CheckVerdict::Inconclusive);
        let mut out = match s.decision {
            Decision::SignificantDrop => format!(
                "{each} larger than {its} tolerance and significant: corrected p {} below alpha {alpha}, so unlikely to be noise.",
                and_list(&ps)
            ),
            Decision::ConfidentDrop => format!(
                "{each} shown to be larger than {its} tolerance, not just larger by chance: corrected p {} below alpha {alpha}.",
                and_list(&ps)
            ),
            Decision::NonInferiority => format!(
                "{each} not shown to stay within {its} tolerance (non-inferiority): corrected p {} not below alpha {alpha}.",
                and_list(&ps)
            ),
            Decision::Threshold => format!(
                "{each} larger than {its} tolerance (decision: threshold, no significance test)."
            ),
        };
        if inconclusive {
            out += " An inconclusive check fails here (on_inconclusive: fail): its interval holds both a drop within the tolerance and one beyond it.";
        }
        Some(out)
    }

    /// The exact commands for what a reviewer does next: reproduce the
    /// failure locally, or accept an intended drop and commit the
    /// baseline. Empty when nothing failed.
    pub fn next_steps(&self) -> Vec<(String, String)> {
        let failing: Vec<&RetrieverOutcome> = self
            .outcome
            .retrievers
            .iter()
            .filter(|r| r.verdict() == Verdict::Fail)
            .collect();
        let judge = self.outcome.judge.as_ref().is_some_and(|j| j.fails());
        if (failing.is_empty() && !judge) || self.outcome.recorded.is_some() {
            return Vec::new();
        }
        let inv = self.invocation.cloned().unwrap_or_default();
        let config = inv
            .config
            .as_deref()
            .map(|c| format!(" --config {}", shell_word(c)))
            .unwrap_or_default();
        let runs: String = failing
            .iter()
            .filter(|r| !r.run.starts_with("command: "))
            .map(|r| format!(" --run {}", shell_word(&format!("{}={}", r.name, r.run))))
            .collect();
        let names: String = failing.iter().map(|r| format!(" {}", r.name)).collect();
        let mut out = vec![(
            "Reproduce locally".to_string(),
            format!("rgate{config} gate{names}{runs}"),
        )];
        if !failing.is_empty() {
            let files: Vec<String> = failing
                .iter()
                .map(|r| match &inv.baselines {
                    Some(dir) => shell_word(&format!("{}/{}.json", dir.trim_end_matches('/'), r.name)),
                    None => format!("{}.json", r.name),
                })
                .collect();
            out.push((
                "Accept an intended drop".to_string(),
                format!(
                    "rgate{config} baseline update{names}{runs} --allow-regression --note \"why the drop is accepted\" && git add {} && git commit -m \"accept the drop\"",
                    files.join(" ")
                ),
            ));
        }
        out
    }
    /// The judge check in one line (`gate.judge`), when the gate has one:
    /// the reason it did not pass, or the kappa and what it was measured on.
    pub(super) fn judge_line(&self) -> Option<String> {
        let j = self.outcome.judge.as_ref()?;
        let on = format!(
            "{} on {} ({}, relevant = grade >= {})",
            match (&j.kappa, j.kappa_interval) {
                (Measure::Value(k), Some((lo, hi))) => {
                    format!(
                        "kappa {} (95% bootstrap interval over queries {:.2} to {:.2})",
                        f4(*k),
                        lo,
                        hi
                    )
                }
                (Measure::Value(k), None) => format!("kappa {}", f4(*k)),
                (Measure::Undefined(_), _) => "kappa undefined".to_string(),
            },
            count(j.n_verified, "verified query", "verified queries"),
            count(j.pairs as usize, "pair", "pairs"),
            j.relevance_level
        );
        let why = j.kappa.reason().map(|r| format!("; {r}")).unwrap_or_default();
        let min = j.min_kappa.map(crate::diag::number).unwrap_or_default();
        Some(match j.verdict {
            JudgeVerdict::Fail => format!(
                "judge: fail (on_low: fail): {}{}",
                j.reason.as_deref().unwrap_or_default(),
                j.kappa_interval
                    .map(|(lo, hi)| format!(
                        " (kappa's 95% bootstrap interval over queries {lo:.2} to {hi:.2})"
                    ))
                    .unwrap_or_default()
            ),
            // The reason is among the gate's warnings already.
            JudgeVerdict::Warn => format!("judge: warn (on_low: warn), {on}{why}; min_kappa {min}"),
            JudgeVerdict::Pass => format!("judge: pass, {on}, at least min_kappa {min}"),
            JudgeVerdict::None => {
                format!("judge: {on}{why}; not gated (gate.judge.min_kappa gates on it)")
            }
        })
    }

    pub(super) fn baseline_desc(r: &RetrieverOutcome) -> String {
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
}

/// One failing retriever's failures for the headline: "hybrid: recall@10
/// fell 0.1 (tolerance 0.07), +2 more checks".
fn failure_fragments(o: &GateOutcome, esc: &dyn Fn(&str) -> String) -> Vec<String> {
    o.retrievers
        .iter()
        .filter_map(|r| {
            let fails: Vec<&Check> = r.checks.iter().filter(|c| r.fails(c)).collect();
            let first = fails.first()?;
            let more = match fails.len() - 1 {
                0 => String::new(),
                1 => ", +1 more check".to_string(),
                n => format!(", +{n} more checks"),
            };
            Some(esc(&format!("{}: {}{more}", r.name, check_words(first))))
        })
        .collect()
}

/// A failed check in a few words: "recall@10 fell 0.1 (tolerance 0.07)",
/// "hit_rate@3 on identifier-lookup fell 0.4 (tolerance 0.2)".
pub(super) fn check_words(c: &Check) -> String {
    let on = if c.cmp.stratum == "all" {
        String::new()
    } else {
        format!(" on {}", c.cmp.stratum)
    };
    let tol = amount(c.tolerance.unwrap_or(0.0));
    if c.verdict == CheckVerdict::Inconclusive {
        format!(
            "{}{on} inconclusive (delta {}, tolerance {tol})",
            c.cmp.metric,
            signed_short(c.cmp.delta, 4)
        )
    } else if c.cmp.delta <= 0.0 {
        format!(
            "{}{on} fell {} (tolerance {tol})",
            c.cmp.metric,
            amount(-c.cmp.delta)
        )
    } else {
        format!(
            "{}{on} not shown within tolerance {tol} (delta {})",
            c.cmp.metric,
            signed_short(c.cmp.delta, 4)
        )
    }
}

/// How deep a lost query's answer fell: the deepest cutoff among the
/// metrics it lost (the answer left that top k, so every shallower one).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Depth {
    Unknown,
    Top(u32),
    Candidates(u32),
    Whole,
}

impl Depth {
    fn words(self) -> String {
        match self {
            Depth::Unknown => "from the ranking".to_string(),
            Depth::Top(k) => format!("from the top {k}"),
            Depth::Candidates(k) => format!("from the candidates' top {k}"),
            Depth::Whole => "from the whole ranking".to_string(),
        }
    }
}

fn deepest_lost(f: &Flip) -> Depth {
    f.lost
        .iter()
        .filter_map(|m| m.parse::<crate::metrics::Metric>().ok())
        .map(|m| match (m.is_candidates(), m.depth()) {
            (true, Some(k)) => Depth::Candidates(k),
            (_, Some(k)) => Depth::Top(k),
            (_, None) => Depth::Whole,
        })
        .max()
        .unwrap_or(Depth::Unknown)
}

/// "0.017, 0.005 and 0.003".
fn and_list(items: &[String]) -> String {
    match items.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        None => String::new(),
    }
}

/// A word for a POSIX shell: quoted when it needs it.
pub(super) fn shell_word(s: &str) -> String {
    shlex::try_quote(s).map_or_else(|_| format!("'{}'", s.replace('\'', "")), |q| q.into_owned())
}

/// The line that opens a list of skewed checks, in every format.
pub(super) const SKEW_HEADING: &str =
    "Skewed deltas: a few queries carry the change, where every test's p-value is least reliable";

/// One skewed check in words, the queries named: "ndcg@10 on all: 3 of
/// 100 queries carry 100% of the gain (skewness +5.14): q-017 +0.7000,
/// ...". The library decided the check is skewed and which queries carry
/// it; this only words it.
pub fn skew_text(metric: &str, stratum: &str, n: usize, s: &Skew) -> String {
    let named: Vec<String> = s
        .queries
        .iter()
        .map(|(id, d)| format!("{id} {}", signed4(*d)))
        .collect();
    let more = s.carriers.saturating_sub(s.queries.len());
    let more = if more > 0 {
        format!(", and {more} more")
    } else {
        String::new()
    };
    format!(
        "{metric} on {stratum}: {} of {n} queries carry {:.0}% of the {} (skewness {:+.2}): {}{more}",
        s.carriers,
        100.0 * s.share,
        s.direction.name(),
        s.skewness,
        named.join(", ")
    )
}

/// Each skewed check of a retriever, in words.
pub(super) fn skewed(r: &RetrieverOutcome) -> Vec<String> {
    r.checks
        .iter()
        .filter_map(|c| {
            let s = c.skew.as_ref()?;
            Some(skew_text(&c.cmp.metric.name(), &c.cmp.stratum, c.cmp.n, s))
        })
        .collect()
}

/// The named queries of a skewed check as one CSV cell: `id delta; ...`.
pub(super) fn skew_cell(s: Option<&Skew>) -> String {
    s.map(|s| {
        s.queries
            .iter()
            .map(|(id, d)| format!("{id} {d}"))
            .collect::<Vec<_>>()
            .join("; ")
    })
    .unwrap_or_default()
}

/// "12 more queries dropped by the reranker (how-to)".
pub(super) fn stage_loss_text(l: &StageLoss) -> String {
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

/// The flips as a report lists them: with two stages, one titled group per
/// stage that lost them (empty groups left out); else one untitled group.
fn flip_groups(r: &RetrieverOutcome) -> Vec<(Option<&'static str>, Vec<&Flip>)> {
    if r.stages.is_none() {
        return vec![(None, r.flips.iter().collect())];
    }
    [
        (Some(LostIn::Rerank), "lost in rerank"),
        (Some(LostIn::Retrieval), "lost in retrieval"),
        (Some(LostIn::Both), "lost in both stages"),
        (None, "stage unknown"),
    ]
    .into_iter()
    .map(|(group, title)| {
        (
            Some(title),
            r.flips.iter().filter(|f| f.lost_in == group).collect::<Vec<_>>(),
        )
    })
    .filter(|(_, flips)| !flips.is_empty())
    .collect()
}

/// Runs of consecutive flips of one stratum, each with the stratum to head
/// it (none for a leading run whose stratum is empty: there is no name to
/// print).
fn by_stratum<'a>(flips: &[&'a Flip]) -> Vec<(Option<&'a str>, Vec<&'a Flip>)> {
    let mut out: Vec<(Option<&str>, Vec<&Flip>)> = Vec::new();
    let mut last = "";
    for f in flips {
        if f.stratum != last {
            out.push((Some(&f.stratum), Vec::new()));
            last = &f.stratum;
        } else if out.is_empty() {
            out.push((None, Vec::new()));
        }
        if let Some((_, run)) = out.last_mut() {
            run.push(f);
        }
    }
    out
}

/// How a format writes the list of flips; [`flips`] walks the groups, so
/// each format writes only its syntax (as hyperfine's Markdown and AsciiDoc
/// exporters share one table and write only their rows).
pub(super) trait FlipSyntax {
    /// The line that opens the list.
    fn heading(&self, n: usize) -> String;
    /// A group of flips lost in one stage.
    fn group(&self, title: &str, n: usize) -> String;
    /// A stratum's line, `pad` deeper under a group.
    fn stratum(&self, pad: &str, stratum: &str) -> String;
    /// One query's line: its id, text and the ids it lost.
    fn flip(&self, pad: &str, f: &Flip) -> String;
}

/// The queries that went from hit to miss, by stage and stratum, then the
/// count that went the other way; nothing when no query was lost.
pub(super) fn flips(r: &RetrieverOutcome, syntax: &dyn FlipSyntax) -> String {
    if r.flips.is_empty() {
        return String::new();
    }
    let mut out = syntax.heading(r.flips.len());
    for (title, flips) in flip_groups(r) {
        let pad = match title {
            Some(title) => {
                out += &syntax.group(title, flips.len());
                "  "
            }
            None => "",
        };
        for (stratum, run) in by_stratum(&flips) {
            if let Some(s) = stratum {
                out += &syntax.stratum(pad, s);
            }
            for f in run {
                out += &syntax.flip(pad, f);
            }
        }
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

/// Decimals a Monte Carlo p-value supports with B resamples: its standard
/// error near 0.05 is sqrt(0.05 * 0.95 / B), 0.002 at B = 10,000, so the
/// third decimal is the last that means anything there.
pub(super) fn mc_digits(b: u32) -> usize {
    let d = f64::from(b.max(1)).log10().floor() as i64 - 1;
    d.clamp(2, 4) as usize
}

/// A confidence level as a percentage, to the digit that tells levels apart
/// (95%, 99.4%, 99.72%).
pub(super) fn level(l: f64) -> String {
    let pct = 100.0 * l;
    if (pct - pct.round()).abs() < 1e-9 {
        format!("{pct:.0}%")
    } else if format!("{pct:.1}") != "100.0" {
        format!("{pct:.1}%")
    } else {
        format!("{pct:.2}%")
    }
}

/// A p-value to the digits the retriever's least precise check supports:
/// about three decimals at B = 10,000 for Monte Carlo tests (error 0.002
/// near 0.05), four for exact ones. One rule for the table, the sentences
/// and the job summary, so one check reads the same everywhere.
pub fn p_text(p: f64, r: &RetrieverOutcome) -> String {
    if p.is_nan() {
        return "-".into();
    }
    let digits = r
        .checks
        .iter()
        .map(|c| if c.monte_carlo { mc_digits(r.resamples) } else { 4 })
        .min()
        .unwrap_or(4);
    let floor = 10f64.powi(-(digits as i32));
    if p < floor {
        format!("<{floor:.digits$}")
    } else {
        format!("{p:.digits$}")
    }
}

/// Decimals of the bounds of a retriever's checks: three when any carries
/// Monte Carlo error (a bootstrap bound moves in the third decimal from
/// seed to seed), else four.
fn bound_digits(r: &RetrieverOutcome) -> usize {
    if r.checks.iter().any(|c| c.monte_carlo) {
        3
    } else {
        4
    }
}

/// A bound in a table cell, signed, at `d` decimals; a bound that rounds to
/// zero reads `0.000`, not `-0.000`.
fn bound_cell(v: f64, d: usize) -> String {
    if !v.is_finite() {
        return "-".into();
    }
    let s = format!("{v:+.d$}");
    if s.trim_start_matches(['+', '-'])
        .chars()
        .all(|ch| ch == '0' || ch == '.')
    {
        format!("{:.d$}", 0.0)
    } else {
        s
    }
}

/// A drop or tolerance in a sentence: four decimals, as the tables print
/// it, with trailing zeros dropped (0.0902, 0.17, 0.4).
pub fn amount(v: f64) -> String {
    trimmed(v, 4)
}

fn trimmed(v: f64, d: usize) -> String {
    let s = format!("{v:.d$}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".into()
    } else {
        s.to_string()
    }
}

/// A signed value in a sentence at `d` decimals, trailing zeros dropped.
fn signed_short(v: f64, d: usize) -> String {
    if !v.is_finite() {
        return if v.is_nan() {
            "-".into()
        } else if v > 0.0 {
            "+inf".into()
        } else {
            "-inf".into()
        };
    }
    let s = trimmed(v, d);
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
        assert_eq!(amount(0.09022), "0.0902");
        assert_eq!(amount(0.17), "0.17");
        assert_eq!(amount(-0.00001), "0");
        assert_eq!(signed_short(-0.035, 3), "-0.035");
        assert_eq!(signed_short(-0.03549, 3), "-0.035");
        assert_eq!(signed_short(0.01, 4), "+0.01");
        assert_eq!(bound_cell(-0.00004, 4), "0.0000");
        assert_eq!(bound_cell(-0.0208, 3), "-0.021");
    }
}
