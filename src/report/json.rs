//! `--format json`: the stable interface for scripts (SPEC "Commands").
//! Every report is one pretty-printed object; numbers that do not exist
//! are `null`. The shapes, by report:
//!
//! **gate** and **baseline update** — top-level `schema_version`, `verdict`, `settings`, and `retrievers[]`, each with `name`, `verdict`,
//! `run`, `baseline`, `checks[]` (keys `metric`, `stratum`, `n`, `baseline`,
//! `current`, `delta`, `ci_low`, `ci_high`, `p_value`, `p_adjusted`, `test`,
//! `verdict`, plus `tolerance`, `mde`, `lower_bound`, `upper_bound`),
//! `flips[]`, `gained`, `added_queries`, `removed_queries`, `gold_changed`
//! and `warnings[]`. Numbers that do not exist are `null`. Each check (and
//! each compare row) has `skew`: `null`, or, when a few queries carry most
//! of its change (see `compare::skew_of`), `{"skewness", "direction": "gain" |
//! "loss", "share", "carriers", "movers", "queries": [{"query_id",
//! "delta"}]}`. Top-level `judge` (`gate.judge`, SPEC "Gating on model
//! labels"): `null`, or `{"kappa", "kappa_undefined", "kappa_ci_low",
//! "kappa_ci_high" (95% percentile bootstrap over the verified queries,
//! seeded; `null` without one), "n_verified",
//! "pairs", "relevance_level", "min_kappa", "on_low", "verdict": "pass" |
//! "fail" | "warn" | "none", "reason"}`.
//!
//! A retriever with a candidate list (SPEC "Two stages") also has
//! `stages`: `{"candidates", "cutoff", "lost": {scope: {"n", "baseline":
//! {"reached", "dropped_by_rerank", "missed_by_retrieval"} | null,
//! "current": {...}}}, "ceiling": {metric: {scope: {"current", "ceiling",
//! "ratio"}}}, "losses": [{"stage", "more", "strata": {name: more}}],
//! "absent_from_candidates": {query_id: [ids]}}`, and each of its flips a
//! `lost_in` (`retrieval`, `rerank`, `both`, or `null` when unknown).
//!
//! **compare** — `schema_version`, `verdict` (`none`: compare gates
//! nothing), `settings` (test, resamples, seed, alpha, alternative,
//! weighting), `gold`, `baseline_run` {name, path, means}, and `runs[]`, each
//! with `name`, `path`, `means` {metric: mean} and `checks[]` of rows with
//! SPEC's keys (`metric`, `stratum`, `n`, `baseline`, `current`, `delta`,
//! `ci_low`, `ci_high`, `p_value`, `p_adjusted`, `test`, `verdict`: always
//! `not-gated` here) plus `significant`, `lower_bound`, `upper_bound` (the
//! one-sided bounds), `wins`, `ties`, `losses`, `effect_size` (Cohen's d_z,
//! `null` without spread). `settings.correction` (`holm`, `bh`, `none`) ran
//! over every row of every run (`settings.family_tests` of them). `ranking`:
//! the runs after the first by the first metric's overall mean, highest
//! first: `[{"rank", "name", "metric", "mean", "delta", "ci_low",
//! "ci_high", "p_adjusted", "effect_size", "test", "better"}]` (`better`:
//! significantly above the baseline after the correction). `statement`:
//! `{"text", "metric", "baseline", "baseline_mean", "best": name | null,
//! "runner_up": {"name", "delta", "ci_low", "ci_high", "p_value", "test",
//! "pairs", "level", "better"} | null}`: `best` is the highest-ranked run
//! significantly better than the baseline, `runner_up` the other run with
//! the highest mean, tested two-sided against the best at `level` (alpha
//! over the `pairs` pairs of variants: the pair was picked by looking).
//!
//! **eval** — `{"schema_version", "gold", "run", "relevance_level",
//! "queries", "strata": {name: n}, "metrics": {metric: {"all": mean,
//! <stratum>: mean, ..., "macro": mean}}, "intervals": {metric: {"all":
//! {"ci_low", "ci_high"}, <stratum>: {...}, "macro": {...}}} (95%, both
//! `null` where a scope has fewer than two queries or `--resamples 0`
//! asked for none), "interval_settings": {"level", "resamples", "seed",
//! "method", "methods": {metric: method}} | null (`method` the one every
//! metric's interval uses, else each metric's in one phrase), "missing_queries": [ids], "warnings": [..]}`, plus
//! with `--per-query` a `"per_query"` list of `{"query_id", "stratum",
//! <metric>: value, ...}` in gold order.
//!
//! With `--curve`: `"curves": [{"metric": "recall@1..20", "family":
//! "recall", "cutoffs": [1, ..., 20], "interval_settings": {..} | null,
//! "bound": {"level": 0.95, "side": "lower", "method"}, "target": 0.9 |
//! null, "ceiling": bool, "scopes": [{"scope": "all" | stratum, "n",
//! "bound_method": "clopper-pearson" | "chernoff", "points": [{"k", "mean",
//! "ci_low", "ci_high", "lower_bound", "ceiling"}], "depth": {"k", "k_mean"}
//! | null}]}]`: scopes `all` first, then each stratum with queries, in the
//! gold set's order; a point's numbers are `null` where they do not exist
//! (no interval, no bound, no candidates); `depth.k` is the depth that
//! reaches the target with 95% confidence, `k_mean` the first whose mean
//! does, each `null` when none within the range does (`src/curve.rs`).
//!
//! With `--candidates`: `"candidates"` (the file), `"stages": {"cutoff",
//! "lost": {scope: {"reached", "dropped_by_rerank", "missed_by_retrieval"}},
//! "ceiling": {metric: {scope: value}}}` exactly as SPEC "Two stages"
//! defines it (scopes `all` and each stratum; `cutoff` null for the whole
//! run), `"absent_from_candidates": {query_id: [ids]}` (final results the
//! candidates lack), and per query a `"stage"` (its fate at the cutoff).
//!
//! **baseline show** — the stored baseline file, as it is on disk.
//! **baseline history** — `{"retriever", "history": [entries]}`.

use anyhow::Result;
use serde_json::{json, Map, Value};

use super::baseline::{HistoryView, ShowView};
use super::compare::{alt_name, CompareView, RunColumn};
use super::eval::EvalView;
use super::gate::GateView;
use super::stages::lost_json;
use super::{Exporter, Report};
use crate::baseline::HistoryEntry;
use crate::compare::Comparison;
use crate::compare::Skew;
use crate::escape;
use crate::eval::RowScope;
use crate::gate::{CheckVerdict, Hypothesis, StageOutcome};
use crate::stages::{LostIn, Stages};

pub struct Json;

impl Exporter for Json {
    fn name(&self) -> &'static str {
        "json"
    }

    fn reports(&self) -> &'static [Report] {
        Report::ALL
    }

    fn gate(&self, v: &GateView) -> Result<String> {
        Ok(pretty(&gate_value(v)))
    }

    fn compare(&self, v: &CompareView) -> Result<String> {
        Ok(pretty(&compare_value(v)))
    }

    fn eval(&self, v: &EvalView) -> Result<String> {
        Ok(pretty(&eval_value(v)))
    }

    fn baseline_show(&self, v: &ShowView) -> Result<String> {
        Ok(escape::json(v.baseline.to_json_text()))
    }

    fn baseline_history(&self, v: &HistoryView) -> Result<String> {
        let entries: Vec<Value> = v.entries.iter().map(HistoryEntry::to_json).collect();
        Ok(pretty(&json!({"retriever": v.name, "history": entries})))
    }
}

/// Pretty-printed, one line break at the end, and neutralised for a
/// terminal or CI log that shows it (see [`escape::json`]).
fn pretty(v: &Value) -> String {
    escape::json(serde_json::to_string_pretty(v).unwrap_or_default() + "\n")
}

/// A finite number, or `null`: JSON has no NaN, and a missing statistic
/// should read as missing.
pub fn num(v: f64) -> Value {
    if v.is_finite() {
        json!(v)
    } else {
        Value::Null
    }
}

/// A `checks[]` row with exactly SPEC's keys; callers add their own after.
pub fn check_row(c: &Comparison, test: &str, verdict: &str) -> Map<String, Value> {
    let mut o = Map::new();
    o.insert("metric".into(), json!(c.metric.name()));
    o.insert("stratum".into(), json!(c.stratum));
    o.insert("n".into(), json!(c.n));
    o.insert("baseline".into(), num(c.baseline));
    o.insert("current".into(), num(c.current));
    o.insert("delta".into(), num(c.delta));
    o.insert("ci_low".into(), num(c.ci_low));
    o.insert("ci_high".into(), num(c.ci_high));
    o.insert("p_value".into(), num(c.p_value));
    o.insert("p_adjusted".into(), num(c.p_adjusted));
    o.insert("test".into(), json!(test));
    o.insert("verdict".into(), json!(verdict));
    o
}

fn gate_value(v: &GateView) -> Value {
    let o = v.outcome;
    let s = &o.settings;
    let retrievers: Vec<Value> = o
        .retrievers
        .iter()
        .map(|r| {
            let checks: Vec<Value> = r
                .checks
                .iter()
                .map(|c| {
                    let mut o = check_row(
                        &c.cmp,
                        c.test_name(),
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
                    o.insert("skew".into(), skew_value(c.skew.as_ref()));
                    if let Some(e) = &c.ppi {
                        o.insert("ppi".into(), ppi_value(e, 1.0 - s.alpha));
                    }
                    if r.fails(c) || c.verdict == CheckVerdict::Inconclusive {
                        o.insert("reason".into(), json!(v.reason(c, r)));
                    }
                    Value::Object(o)
                })
                .collect();
            let flips: Vec<Value> = r
                .flips
                .iter()
                .map(|f| {
                    let mut v = json!({"query_id": f.query_id, "stratum": f.stratum, "text": f.text, "lost": f.lost, "rank_before": f.ranks.0, "rank_now": f.ranks.1});
                    if let (Some(verified), Some(o)) = (f.verified, v.as_object_mut()) {
                        o.insert("verified".into(), json!(verified));
                    }
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
                "correction_m": r.family_size,
                "counts": counts_json(r),
                "baseline": r.baseline.as_ref().map(|b| json!({"created_at": b.created_at, "commit": b.commit, "note": b.note})),
                "checks": checks,
                "flips": flips,
                "gained": r.gained,
                "added_queries": r.added_queries,
                "removed_queries": r.removed_queries,
                "gold_changed": r.gold_changed,
                "stages": r.stages.as_ref().map(gate_stages),
                "warnings": r.warnings,
            })
        })
        .collect();
    let mut doc = json!({
        "schema_version": 1,
        "verdict": o.verdict().name(),
        "labels": o.labels.name(),
        "settings": {
            "test": s.test.name(),
            "resamples": s.resamples,
            "seed": s.seed,
            "alpha": s.alpha,
            "decision": s.decision.name(),
            "correction": s.correction.name(),
            "correction_scope": s.correction_scope.name(),
            "on_inconclusive": s.on_inconclusive.name(),
        },
        "retrievers": retrievers,
        "warnings": o.warnings,
    });
    if let Some(m) = doc.as_object_mut() {
        m.insert("judge".into(), judge_value(o.judge.as_ref()));
        // `baseline update` only: recorded, and the note of an accepted
        // regression (null when nothing regressed).
        if let Some(rec) = &o.recorded {
            m.insert(
                "recorded".into(),
                json!({"regression_accepted": o.verdict() == crate::gate::Verdict::Fail, "note": rec.accepted}),
            );
        }
        m.insert(
            "headline".into(),
            json!(v.headline_with(&|s: &str| s.to_string(), o.verdict().name())),
        );
    }
    doc
}

/// `judge`: the model against people on the verified queries (`null`
/// when the gate has no judge check).
fn judge_value(j: Option<&crate::gate::JudgeCheck>) -> Value {
    let Some(j) = j else {
        return Value::Null;
    };
    json!({
        "kappa": j.kappa.value().map_or(Value::Null, num),
        "kappa_undefined": j.kappa.reason(),
        "kappa_ci_low": j.kappa_interval.map_or(Value::Null, |i| num(i.0)),
        "kappa_ci_high": j.kappa_interval.map_or(Value::Null, |i| num(i.1)),
        "n_verified": j.n_verified,
        "pairs": j.pairs,
        "relevance_level": j.relevance_level,
        "min_kappa": j.min_kappa.map_or(Value::Null, num),
        "on_low": j.on_low.name(),
        "verdict": j.verdict.name(),
        "reason": j.reason,
    })
}

/// Checks by verdict: inconclusive counted apart from pass and fail.
fn counts_json(r: &crate::gate::RetrieverOutcome) -> Value {
    let n = r.counts();
    json!({
        "fail": n.fail,
        "pass": n.pass,
        "improved": n.improved,
        "inconclusive": n.inconclusive,
        "not_gated": n.not_gated,
    })
}

/// A check's skew diagnostic: `null`, or the skewness, the direction the
/// few moved (`gain`/`loss`), their share of that movement, how many
/// carry it and how many moved that way, and the named queries.
fn skew_value(s: Option<&Skew>) -> Value {
    let Some(s) = s else {
        return Value::Null;
    };
    let queries: Vec<Value> = s
        .queries
        .iter()
        .map(|(id, d)| json!({"query_id": id, "delta": num(*d)}))
        .collect();
    json!({
        "skewness": num(s.skewness),
        "direction": s.direction.name(),
        "share": num(s.share),
        "carriers": s.carriers,
        "movers": s.movers,
        "queries": queries,
    })
}

fn gate_stages(st: &StageOutcome) -> Value {
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

fn means(v: &CompareView, r: &RunColumn) -> Value {
    let mut o = Map::new();
    for (k, m) in v.prep.metrics.iter().enumerate() {
        o.insert(m.name(), json!(r.mean(&v.prep.metrics, k)));
    }
    Value::Object(o)
}

fn compare_value(v: &CompareView) -> Value {
    let s = v.settings;
    let runs: Vec<Value> = v
        .comparisons
        .iter()
        .enumerate()
        .map(|(k, rows)| {
            let r = &v.runs[k + 1];
            let checks: Vec<Value> = rows
                .iter()
                .map(|c| {
                    let mut o = check_row(&c.cmp, c.test_name(), "not-gated");
                    o.insert("significant".into(), json!(c.significant));
                    o.insert("lower_bound".into(), num(c.lower_bound));
                    o.insert("upper_bound".into(), num(c.upper_bound));
                    o.insert("wins".into(), json!(c.wins));
                    o.insert("ties".into(), json!(c.ties));
                    o.insert("losses".into(), json!(c.losses));
                    o.insert("skew".into(), skew_value(c.skew.as_ref()));
                    o.insert("effect_size".into(), num(c.effect_size));
                    if let Some(e) = &c.ppi {
                        o.insert("ppi".into(), ppi_value(e, 1.0 - s.alpha));
                    }
                    Value::Object(o)
                })
                .collect();
            json!({"name": r.name, "path": r.path, "means": means(v, r), "checks": checks})
        })
        .collect();
    json!({
        "schema_version": 1,
        "verdict": "none",
        "labels": v.prep.label_mode.name(),
        "settings": {
            "test": s.test.name(),
            "resamples": s.resamples,
            "seed": s.seed,
            "alpha": s.alpha,
            "alternative": alt_name(v.alternative),
            "weighting": s.weighting.name(),
            "correction": v.family.correction.name(),
            "family_tests": v.family.tests,
        },
        "gold": v.prep.gold.path.display().to_string(),
        "baseline_run": {"name": v.runs[0].name, "path": v.runs[0].path, "means": means(v, &v.runs[0])},
        "runs": runs,
        "ranking": ranking_value(v),
        "statement": statement_value(v),
    })
}

/// `ranking`: the variants on the first metric overall, highest mean
/// first (see the module docs).
fn ranking_value(v: &CompareView) -> Value {
    let f = v.family;
    let rows: Vec<Value> = f
        .ranking
        .iter()
        .enumerate()
        .map(|(i, r)| {
            json!({
                "rank": i + 1,
                "name": v.runs[r.run].name,
                "metric": f.metric.name(),
                "mean": num(r.mean),
                "delta": num(r.delta),
                "ci_low": num(r.ci_low),
                "ci_high": num(r.ci_high),
                "p_adjusted": num(r.p_adjusted),
                "effect_size": num(r.effect_size),
                "test": r.test.name(),
                "better": r.better,
            })
        })
        .collect();
    Value::Array(rows)
}

/// `statement`: the sentence and what it decided.
fn statement_value(v: &CompareView) -> Value {
    let f = v.family;
    let runner_up = f.runner_up.as_ref().map(|u| {
        json!({
            "name": v.runs[u.run].name,
            "delta": num(u.delta),
            "ci_low": num(u.ci_low),
            "ci_high": num(u.ci_high),
            "p_value": num(u.p_value),
            "test": u.test.name(),
            "pairs": u.pairs,
            "level": num(u.level),
            "better": u.better,
        })
    });
    json!({
        "text": v.statement(),
        "metric": f.metric.name(),
        "baseline": v.runs[0].name,
        "baseline_mean": num(f.baseline_mean),
        "best": f.best.map(|b| v.runs[b].name.clone()),
        "runner_up": runner_up,
    })
}

/// A PPI estimate (a mean, or a paired delta's) as every JSON report gives
/// it: the estimate and its interval at `level`, the people-only estimate
/// and interval beside it, the counts, lambda and the effective number of
/// verified queries (SPEC "Gating on model labels").
pub(crate) fn ppi_value(e: &crate::stats::ppi::PpiCombined, level: f64) -> Value {
    let none = (f64::NAN, f64::NAN);
    let (lo, hi) = e.shown_interval(level).unwrap_or(none);
    let (plo, phi) = e.shown_people_interval(level).unwrap_or(none);
    json!({
        "mean": num(e.mean),
        "se": num(e.se),
        "ci_low": num(lo),
        "ci_high": num(hi),
        "people_mean": num(e.people_mean),
        "people_se": num(e.people_se),
        "people_ci_low": num(plo),
        "people_ci_high": num(phi),
        "level": level,
        "n_model": e.n_model,
        "n_verified": e.n_verified,
        "lambda": num(e.lambda),
        "effective_n": num(e.effective_n()),
        "people_only_strata": e.people_only_strata,
    })
}

fn eval_value(v: &EvalView) -> Value {
    let g = &v.prep.gold;
    let names = v.metric_names();
    let mut metrics = Map::new();
    for (m, name) in names.iter().enumerate() {
        let mut o = Map::new();
        o.insert("all".into(), json!(v.summary.all.means[m]));
        for s in &v.summary.strata {
            o.insert(s.scope.clone(), json!(s.means[m]));
        }
        o.insert("macro".into(), json!(v.summary.macro_mean.means[m]));
        metrics.insert(name.clone(), Value::Object(o));
    }
    let interval = |scope: RowScope, m: usize| -> Value {
        let i = v.interval(scope, m);
        json!({"ci_low": i.map(|i| i.low), "ci_high": i.map(|i| i.high)})
    };
    let mut intervals = Map::new();
    for (m, name) in names.iter().enumerate() {
        let mut o = Map::new();
        o.insert("all".into(), interval(RowScope::All, m));
        for (k, s) in v.summary.strata.iter().enumerate() {
            o.insert(s.scope.clone(), interval(RowScope::Stratum(k), m));
        }
        o.insert("macro".into(), interval(RowScope::Macro, m));
        intervals.insert(name.clone(), Value::Object(o));
    }
    let strata: Map<String, Value> = v
        .summary
        .strata
        .iter()
        .map(|s| (s.scope.clone(), json!(s.n)))
        .collect();
    let mut root = Map::new();
    root.insert("schema_version".into(), json!(1));
    root.insert("gold".into(), json!(g.path.display().to_string()));
    root.insert("gold_fingerprint".into(), json!(v.prep.fingerprint()));
    root.insert("run".into(), json!(v.run.path.display().to_string()));
    root.insert("run_format".into(), json!(v.run.format.to_string()));
    root.insert("relevance_level".into(), json!(v.prep.relevance_level));
    root.insert("queries".into(), json!(g.len()));
    root.insert("strata".into(), Value::Object(strata));
    root.insert("labels".into(), json!(v.prep.label_mode.name()));
    root.insert("metrics".into(), Value::Object(metrics));
    root.insert("intervals".into(), Value::Object(intervals));
    root.insert(
        "interval_settings".into(),
        match (v.intervals, v.ppi) {
            (_, Some(_)) => json!({
                "level": crate::eval::INTERVAL_LEVEL,
                "method": "ppi++ (power-tuned, normal)",
            }),
            (Some(i), None) => json!({
                "level": i.settings.level,
                "resamples": i.settings.resamples,
                "seed": i.settings.seed,
                "method": v.interval_method(),
                "methods": names.iter().zip(v.interval_methods()).map(|(n, m)| (n.clone(), json!(m))).collect::<Map<String, Value>>(),
            }),
            (None, None) => Value::Null,
        },
    );
    if v.ppi.is_some() {
        let mut ppi = Map::new();
        for (m, name) in names.iter().enumerate() {
            let mut o = Map::new();
            let mut put = |scope: &str, rs: RowScope| {
                o.insert(
                    scope.to_string(),
                    v.ppi_estimate(rs, m)
                        .map_or(Value::Null, |e| ppi_value(e, crate::eval::INTERVAL_LEVEL)),
                );
            };
            put("all", RowScope::All);
            for (k, s) in v.summary.strata.iter().enumerate() {
                put(&s.scope, RowScope::Stratum(k));
            }
            put("macro", RowScope::Macro);
            ppi.insert(name.clone(), Value::Object(o));
        }
        root.insert("ppi".into(), Value::Object(ppi));
    }
    let missing: Vec<&str> = v.run.missing().map(|i| g.queries[i].id.as_str()).collect();
    root.insert("missing_queries".into(), json!(missing));
    if let Some(sv) = &v.candidates {
        root.insert("candidates".into(), json!(sv.run.path.display().to_string()));
        root.insert("stages".into(), eval_stages(sv.stages));
        let absent: Map<String, Value> = sv
            .stages
            .absent
            .iter()
            .map(|(q, ids)| (g.queries[*q].id.clone(), json!(ids)))
            .collect();
        root.insert("absent_from_candidates".into(), Value::Object(absent));
    }
    if v.per_query {
        let rows: Vec<Value> = g
            .queries
            .iter()
            .enumerate()
            .map(|(i, q)| {
                let mut o = Map::new();
                o.insert("query_id".into(), json!(q.id));
                o.insert("stratum".into(), json!(g.stratum_name(i)));
                for (m, name) in names.iter().enumerate() {
                    o.insert(name.clone(), json!(v.scores.values[m][i]));
                }
                if let Some(sv) = &v.candidates {
                    o.insert("stage".into(), json!(sv.stages.fates[i].name()));
                }
                Value::Object(o)
            })
            .collect();
        root.insert("per_query".into(), Value::Array(rows));
    }
    let stage_warnings = v
        .candidates
        .iter()
        .flat_map(|sv| sv.run.warnings.iter().chain(sv.warnings.iter()));
    let warnings: Vec<&String> = v
        .prep
        .warnings
        .iter()
        .chain(v.run.warnings.iter())
        .chain(stage_warnings)
        .collect();
    root.insert("warnings".into(), json!(warnings));
    if !v.curves.is_empty() {
        root.insert("curves".into(), v.curves.iter().map(curve_value).collect());
    }
    Value::Object(root)
}

/// One `eval --curve` (see the module docs for the shape).
fn curve_value(c: &crate::curve::Curve) -> Value {
    let scopes: Vec<Value> = c
        .scopes
        .iter()
        .map(|s| {
            let points: Vec<Value> = s
                .points
                .iter()
                .map(|p| {
                    json!({
                        "k": p.k,
                        "mean": num(p.mean),
                        "ci_low": p.interval.map(|i| num(i.low)),
                        "ci_high": p.interval.map(|i| num(i.high)),
                        "lower_bound": p.lower_bound.map(num),
                        "ceiling": p.ceiling.map(num),
                    })
                })
                .collect();
            let depth = s.depth.as_ref().map(|d| json!({"k": d.k, "k_mean": d.k_mean}));
            json!({
                "scope": s.scope,
                "n": s.n,
                "bound_method": s.bound_method.name(),
                "points": points,
                "depth": depth,
            })
        })
        .collect();
    json!({
        "metric": c.spec.name(),
        "family": c.spec.first().name().rsplit_once('@').map(|(f, _)| f.to_string()),
        "cutoffs": c.spec.cutoffs(),
        "interval_settings": c.intervals.map(|i| json!({
            "level": i.level,
            "resamples": i.resamples,
            "seed": i.seed,
            "method": "stratified bootstrap, expanded percentile",
        })),
        "bound": {
            "level": crate::curve::TARGET_LEVEL,
            "side": "lower",
            "method": "binomial: clopper-pearson where every value is 0 or 1 by construction, else chernoff-hoeffding",
        },
        "target": c.target,
        "ceiling": c.has_ceiling,
        "scopes": scopes,
    })
}

fn eval_stages(s: &Stages) -> Value {
    let lost: Map<String, Value> = s
        .lost
        .iter()
        .map(|(scope, l)| (scope.clone(), lost_json(l)))
        .collect();
    let sum = &s.ceiling_summary;
    let ceiling: Map<String, Value> = s
        .ceiling
        .metrics
        .iter()
        .enumerate()
        .map(|(m, metric)| {
            let scopes: Map<String, Value> = std::iter::once(&sum.all)
                .chain(sum.strata.iter())
                .map(|r| (r.scope.clone(), json!(r.means[m])))
                .collect();
            (metric.name(), Value::Object(scopes))
        })
        .collect();
    json!({"cutoff": s.cutoff, "lost": lost, "ceiling": ceiling})
}
