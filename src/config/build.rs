//! The file's shape ([`super::raw`]) turned into a validated [`Config`]:
//! one function per part (levels, metrics, gate settings, rules,
//! retrievers), each error at the line of the value it refuses.

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Result;
use serde_saphyr::Spanned;

use super::raw::{line, Num, RawCandidates, RawConfig, RawDepth, RawGate, RawRetriever, RawRule, RawStrata};
use super::{
    check_alpha, check_relevance_level, check_resamples, check_span_coverage, clean, valid_retriever_name,
    Candidates, Config, Decision, GateSettings, Retriever, RetrieverCommand, Rule, StrataSel, Tolerance,
    DEFAULT_TIMEOUT_S,
};
use crate::diag::{input_error, input_error_hint, number};
use crate::metrics::{self, Metric};
use crate::run::RunFormat;

/// What every check needs: the file (for messages) and its directory (the
/// base of relative paths).
struct Cx<'a> {
    path: &'a Path,
    dir: PathBuf,
}

impl Cx<'_> {
    fn bad(&self, line: Option<usize>, msg: impl fmt::Display, hint: impl Into<String>) -> anyhow::Error {
        input_error_hint(self.path, line, msg, hint)
    }

    /// A path from the config, relative to the config's directory.
    fn rel(&self, p: &str) -> PathBuf {
        let p = Path::new(p);
        if p.is_absolute() {
            p.to_path_buf()
        } else {
            clean(&self.dir.join(p))
        }
    }
}

/// The metrics computed, each with the line that asked for it (`None`: a
/// default), in order and without repeats.
#[derive(Default)]
struct Metrics {
    list: Vec<Metric>,
    lines: Vec<Option<usize>>,
}

impl Metrics {
    fn add(&mut self, m: Metric, line: Option<usize>) {
        if !self.list.contains(&m) {
            self.list.push(m);
            self.lines.push(line);
        }
    }
}

pub(super) fn config(path: &Path, raw: RawConfig) -> Result<Config> {
    let cx = Cx {
        path,
        dir: path.parent().map(Path::to_path_buf).unwrap_or_default(),
    };
    if let Some(level) = &raw.relevance_level {
        check_relevance_level(level.value.0).map_err(|(msg, hint)| cx.bad(line(level), msg, hint))?;
    }
    if let Some(c) = &raw.span_coverage {
        check_span_coverage(c.value.0).map_err(|(msg, hint)| cx.bad(line(c), msg, hint))?;
    }
    let mut metrics = metric_list(&cx, raw.metrics.as_ref())?;
    let (gate, strata_lines) = gate_settings(&cx, raw.gate, &mut metrics)?;
    let retrievers = retrievers(&cx, raw.retrievers.unwrap_or_default())?;
    let candidates_metric = metrics
        .list
        .iter()
        .zip(&metrics.lines)
        .find(|(m, _)| m.is_candidates());
    if let Some((m, &at)) = candidates_metric {
        if retrievers.iter().all(|r| r.candidates.is_none()) {
            return Err(cx.bad(
                at,
                format!("{m} scores a candidate list, and no retriever names one"),
                "give the reranked retriever its `candidates:` (the list the reranker was given), or drop the `candidates:` metric",
            ));
        }
    }
    let depth_line = raw.baseline_depth.as_ref().and_then(line);
    let baseline_depth = baseline_depth(raw.baseline_depth.map(|d| d.value), &metrics.list)
        .map_err(|(msg, hint)| cx.bad(depth_line, msg, hint))?;
    Ok(Config {
        path: path.to_path_buf(),
        gold: cx.rel(&raw.gold),
        strata: raw.strata.as_deref().map(|p| cx.rel(p)),
        baselines: cx.rel(raw.baselines.as_deref().unwrap_or("baselines")),
        baseline_depth,
        relevance_level: raw.relevance_level.map_or(1, |l| l.value.0),
        span_coverage: raw
            .span_coverage
            .map_or(crate::judge::DEFAULT_SPAN_COVERAGE, |c| c.value.0),
        labels: raw.labels.unwrap_or_default(),
        metrics: metrics.list,
        retrievers,
        gate,
        strata_lines,
    })
}

/// `metrics:`, or the defaults. An unknown name is reported at its entry.
fn metric_list(cx: &Cx, raw: Option<&Spanned<Vec<Spanned<String>>>>) -> Result<Metrics> {
    let mut out = Metrics::default();
    let Some(items) = raw else {
        for m in metrics::default_metrics() {
            out.add(m, None);
        }
        return Ok(out);
    };
    for item in &items.value {
        // One entry may list several (`recall@10, mrr`), or `all_trec`, or
        // a measure whose parameters hold commas (`utility(2,-1,0,0)`).
        let listed =
            metrics::parse_list(&[item.value.as_str()]).map_err(|e| input_error(cx.path, line(item), e))?;
        // `all_trec` brings trec_eval's text measures (runid, relstring),
        // which no paired test compares (see `Metric::paired_refusal`):
        // they are left out of the gate's set; named alone, refused.
        let group = item.value.to_ascii_lowercase().contains(metrics::ALL_TREC);
        for m in listed {
            match m.paired_refusal() {
                Some(_) if group => continue,
                Some((msg, hint)) => return Err(cx.bad(line(item), msg, hint)),
                None => out.add(m, line(item)),
            }
        }
    }
    if out.list.is_empty() {
        // The list's own message ("no metrics given"), at the list.
        let names: Vec<&str> = items.value.iter().map(|s| s.value.as_str()).collect();
        if let Err(e) = metrics::parse_list(&names) {
            return Err(input_error(cx.path, line(items), e));
        }
    }
    Ok(out)
}

/// `gate:`; a rule's metric joins the metric set. Also returns each rule's
/// stratum names' lines, for [`Config::check_against_gold`].
fn gate_settings(
    cx: &Cx,
    raw: Option<RawGate>,
    metrics: &mut Metrics,
) -> Result<(GateSettings, Vec<Vec<Option<usize>>>)> {
    let mut gate = GateSettings::default();
    let mut strata_lines = Vec::new();
    if let Some(g) = raw {
        if let Some(a) = &g.alpha {
            check_alpha(a.value.0).map_err(|(msg, hint)| cx.bad(line(a), msg, hint))?;
            gate.alpha = a.value.0;
        }
        if let Some(b) = &g.resamples {
            check_resamples(b.value.0).map_err(|(msg, hint)| cx.bad(line(b), msg, hint))?;
            gate.resamples = b.value.0;
        }
        if let Some(m) = &g.max_missing {
            if !(0.0..=1.0).contains(&m.value.0) {
                return Err(cx.bad(
                    line(m),
                    format!("max_missing {} is outside [0, 1]", number(m.value.0)),
                    "it is a share of the gold queries: 0.10 allows a run to miss one in ten",
                ));
            }
            gate.max_missing = m.value.0;
        }
        gate.seed = g.seed.map_or(gate.seed, |s| s.0);
        gate.test = g.test.unwrap_or(gate.test);
        let decision_line = g.decision.as_ref().and_then(line);
        gate.decision = g.decision.map_or(gate.decision, |d| d.value);
        gate.correction = g.correction.unwrap_or(gate.correction);
        gate.correction_scope = g.correction_scope.unwrap_or(gate.correction_scope);
        gate.on_inconclusive = g.on_inconclusive.unwrap_or(gate.on_inconclusive);
        gate.weighting = g.weighting.unwrap_or(gate.weighting);
        if let Some(t) = &g.lock_timeout_s {
            if !(0.0..=86_400.0).contains(&t.value.0) {
                return Err(cx.bad(
                    line(t),
                    format!(
                        "lock_timeout_s {} is outside [0, 86400] seconds",
                        number(t.value.0)
                    ),
                    "300 (the default) lets concurrent CI jobs queue",
                ));
            }
            gate.lock_timeout = Duration::from_secs_f64(t.value.0);
        }
        let rules = g.rules.unwrap_or_default();
        if gate.decision == Decision::NonInferiority && rules.is_empty() {
            return Err(cx.bad(
                decision_line,
                NON_INFERIORITY_AT_ZERO.0.to_string(),
                NON_INFERIORITY_AT_ZERO.1,
            ));
        }
        for r in rules {
            let at = line(&r);
            let (rule, lines) = rule(cx, r)?;
            if gate.decision == Decision::NonInferiority && rule.tolerance.is_zero() {
                return Err(cx.bad(
                    at,
                    format!("rule for {}: {}", rule.metric, NON_INFERIORITY_AT_ZERO.0),
                    NON_INFERIORITY_AT_ZERO.1,
                ));
            }
            metrics.add(rule.metric, lines.metric);
            gate.rules.push(rule);
            strata_lines.push(lines.strata);
        }
    }
    if gate.rules.is_empty() {
        gate.rules = default_rules(&metrics.list);
    }
    Ok((gate, strata_lines))
}

/// Non-inferiority at tolerance 0 is a test of superiority: it passes
/// only a run significantly better than its baseline, so it fails the
/// baseline itself, and no rule may gate a run identical to its baseline
/// as a failure (nor make a worse run pass where a better one with a
/// single gain fails). Refused with what to write instead.
const NON_INFERIORITY_AT_ZERO: (&str, &str) = (
    "decision non-inferiority needs a tolerance above 0: at 0 it passes only a run significantly better than its baseline, and fails the baseline itself",
    "give each rule max_drop (or max_drop_pct) above 0, or use decision: significant-drop, which fails only a real drop",
);

/// No rules: every configured metric is gated on any significant drop,
/// overall and per stratum.
fn default_rules(metrics: &[Metric]) -> Vec<Rule> {
    metrics
        .iter()
        .map(|m| Rule {
            metric: *m,
            tolerance: Tolerance::Absolute(0.0),
            strata: StrataSel::All,
        })
        .collect()
}

/// Where a rule's parts were written.
struct RuleLines {
    metric: Option<usize>,
    strata: Vec<Option<usize>>,
}

/// One rule. A missing tolerance is reported at the rule (its first line);
/// a bad one at its value.
fn rule(cx: &Cx, raw: Spanned<RawRule>) -> Result<(Rule, RuleLines)> {
    let at = line(&raw);
    let r = raw.value;
    let metric_line = line(&r.metric);
    let metric: Metric = r
        .metric
        .value
        .parse()
        .map_err(|e| input_error(cx.path, metric_line, e))?;
    if let Some((msg, hint)) = metric.paired_refusal() {
        return Err(cx.bad(metric_line, msg, hint));
    }
    let tolerance = match (&r.max_drop, &r.max_drop_pct) {
        (Some(v), None) if v.value.0 >= 0.0 && v.value.0.is_finite() => Tolerance::Absolute(v.value.0),
        (None, Some(p)) if (0.0..=100.0).contains(&p.value.0) => Tolerance::Percent(p.value.0),
        (Some(v), Some(p)) => {
            // At the second of the two.
            let second = line(v).max(line(p));
            return Err(cx.bad(
                second,
                format!("rule for {metric}: give max_drop or max_drop_pct, not both"),
                "max_drop is in metric units (0.02), max_drop_pct relative to the baseline (5)",
            ));
        }
        (None, None) => {
            return Err(cx.bad(
                at,
                format!("rule for {metric}: no tolerance"),
                "add max_drop: 0.02 (metric units) or max_drop_pct: 5 (percent of the baseline)",
            ))
        }
        (Some(v), None) | (None, Some(v)) => {
            return Err(cx.bad(
                line(v),
                format!(
                "rule for {metric}: the tolerance must be a non-negative number (a percentage at most 100)"
            ),
                "for example max_drop: 0.02",
            ))
        }
    };
    let (strata, strata_lines) = match r.strata {
        None => (StrataSel::All, Vec::new()),
        Some(s) => {
            let at = line(&s);
            match s.value {
                RawStrata::One(s) if s == "all" => (StrataSel::All, Vec::new()),
                RawStrata::One(s) if s == "overall" => (StrataSel::Overall, Vec::new()),
                RawStrata::One(s) => (StrataSel::List(vec![s]), vec![at]),
                RawStrata::Many(v) => {
                    let lines = v.iter().map(line).collect();
                    (StrataSel::List(v.into_iter().map(|n| n.value.0).collect()), lines)
                }
            }
        }
    };
    let lines = RuleLines {
        metric: metric_line,
        strata: strata_lines,
    };
    Ok((
        Rule {
            metric,
            tolerance,
            strata,
        },
        lines,
    ))
}

fn retrievers(cx: &Cx, raw: Vec<Spanned<RawRetriever>>) -> Result<Vec<Retriever>> {
    let mut out: Vec<Retriever> = Vec::new();
    for r in raw {
        let name_line = line(&r.value.name);
        let name = &r.value.name.value;
        if !valid_retriever_name(name) {
            return Err(cx.bad(
                name_line,
                format!("retriever name `{}` is not allowed", crate::escape::terminal(name)),
                "names match [A-Za-z0-9][A-Za-z0-9._-]{0,63}: they become file names in the baseline directory",
            ));
        }
        if out.iter().any(|x| &x.name == name) {
            return Err(cx.bad(
                name_line,
                format!("retriever `{name}` is listed twice"),
                "retriever names must be unique",
            ));
        }
        out.push(retriever(cx, r)?);
    }
    Ok(out)
}

/// One retriever, its name already checked.
fn retriever(cx: &Cx, raw: Spanned<RawRetriever>) -> Result<Retriever> {
    let at = line(&raw);
    let r = raw.value;
    let name = r.name.value;
    let timeout = r.timeout_s.as_ref();
    let candidates_command = matches!(
        r.candidates.as_ref().map(|c| &c.value),
        Some(RawCandidates::Command(_))
    );
    let command = match (r.command, &r.run) {
        (Some(c), Some(_)) => {
            return Err(cx.bad(
                line(&c),
                format!("retriever `{name}` has both `run` and `command`"),
                "give `run` (a file an earlier step wrote) or `command` (rgate runs it), not both",
            ))
        }
        (Some(argv), None) => Some(command_of(
            cx,
            &name,
            (line(&argv), argv.value),
            timeout,
            "the command",
            "a list: the program, then its arguments, e.g. [python3, retrieve.py]",
        )?),
        (None, _) if timeout.is_some() && !candidates_command => {
            return Err(cx.bad(
                timeout.and_then(line),
                format!("retriever `{name}`: timeout_s without a command"),
                "timeout_s limits a `command:` (or a `candidates:` command); drop it for a run file",
            ))
        }
        (None, _) => None,
    };
    let run = match (&command, r.run) {
        (Some(_), _) => PathBuf::new(),
        (None, Some(run)) => cx.rel(&run),
        (None, None) => return Err(cx.bad(
            at,
            format!("retriever `{name}` has neither `run` nor `command`"),
            "give the path of its run file (TREC, JSON or JSONL), relative to the config, or a `command:`",
        )),
    };
    let run_format = r.run_format.as_ref().map(|f| run_format(cx, f)).transpose()?;
    let candidates = match r.candidates {
        None => None,
        Some(c) => Some(candidates(cx, &name, c, timeout)?),
    };
    Ok(Retriever {
        name,
        run,
        run_format,
        command,
        chunks: r.chunks.as_deref().map(|p| cx.rel(p)),
        candidates,
    })
}

fn run_format(cx: &Cx, f: &Spanned<String>) -> Result<RunFormat> {
    Ok(match f.value.as_str() {
        "trec" => RunFormat::Trec,
        "json" => RunFormat::Json,
        "jsonl" => RunFormat::Jsonl,
        other => {
            return Err(cx.bad(
                line(f),
                format!("run_format `{other}` is not known"),
                "use trec, json or jsonl, or leave it out to detect from content",
            ))
        }
    })
}

/// `candidates:` of retriever `name`: a file, or a command sharing the
/// retriever's `timeout_s`.
fn candidates(
    cx: &Cx,
    name: &str,
    c: Spanned<RawCandidates>,
    timeout: Option<&Spanned<Num<f64>>>,
) -> Result<Candidates> {
    let at = line(&c);
    Ok(match c.value {
        RawCandidates::File(f) if f.trim().is_empty() => {
            return Err(cx.bad(
                at,
                format!("retriever `{name}`: `candidates` is empty"),
                "the path of the candidate list (relative to the config), or a command list",
            ))
        }
        RawCandidates::File(f) => Candidates::File(cx.rel(&f)),
        RawCandidates::Command(argv) => Candidates::Command(command_of(
            cx,
            name,
            (at, argv),
            timeout,
            "the candidates command",
            "a list: the program, then its arguments, e.g. [python3, candidates.py]",
        )?),
    })
}

/// One check for either command a retriever may name (its run's or its
/// candidate list's); both share `timeout_s`.
fn command_of(
    cx: &Cx,
    name: &str,
    (at, argv): (Option<usize>, Vec<String>),
    timeout: Option<&Spanned<Num<f64>>>,
    what: &str,
    example: &str,
) -> Result<RetrieverCommand> {
    if argv.first().is_none_or(String::is_empty) {
        return Err(cx.bad(at, format!("retriever `{name}`: {what} is empty"), example));
    }
    let secs = timeout.map_or(DEFAULT_TIMEOUT_S, |t| t.value.0);
    if !(secs > 0.0 && secs <= 86_400.0) {
        return Err(cx.bad(
            timeout.and_then(line),
            format!(
                "retriever `{name}`: timeout_s {} is outside (0, 86400]",
                number(secs)
            ),
            "seconds the command may run, e.g. timeout_s: 600",
        ));
    }
    Ok(RetrieverCommand {
        argv,
        timeout: Duration::from_secs_f64(secs),
        dir: cx.dir.clone(),
    })
}

/// How deep a baseline stores each query's ranking: as configured, else the
/// deepest cutoff among the metrics (10 when none has one). That is all a
/// cut metric needs to be re-scored after a gold change; a metric without a
/// cutoff (map, ndcg, mrr, r_precision) needs the whole ranking, which for a
/// large run makes a baseline too big to review (1,000 ids a query), so it
/// is kept only with `baseline_depth: all`. Stored per-query values cover
/// every metric either way.
fn baseline_depth(
    raw: Option<RawDepth>,
    metrics: &[Metric],
) -> std::result::Result<Option<u32>, (String, String)> {
    // Candidate lists are stored whole (their ceilings and attribution look
    // at every candidate), so only the final metrics set the depth.
    let deepest = metrics
        .iter()
        .filter(|m| !m.is_candidates())
        .filter_map(|m| m.cutoff)
        .max();
    match raw {
        None => Ok(Some(deepest.unwrap_or(10))),
        Some(RawDepth::Word(w)) if w == "all" => Ok(None),
        Some(RawDepth::Word(w)) => Err((
            format!("baseline_depth `{w}` is neither a number nor `all`"),
            "give how many ranked ids a baseline keeps per query, e.g. 100, or `all`".into(),
        )),
        Some(RawDepth::Ids(d)) => match deepest {
            Some(k) if d < k => Err((
                format!("baseline_depth {d} is below the deepest cutoff in use ({k})"),
                format!("use at least {k}, or leave it out (the default is the deepest cutoff)"),
            )),
            _ if d == 0 => Err((
                "baseline_depth 0 keeps no ranking to re-score".into(),
                "leave it out, or give a depth such as 10".into(),
            )),
            _ => Ok(Some(d)),
        },
    }
}
