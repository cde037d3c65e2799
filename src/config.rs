//! The config file (`config/rgate.yaml` by default): gold set, baseline
//! directory, metrics, retrievers, gate settings and rules, turned into one
//! validated [`Config`] before any work starts. Paths are relative to the
//! config file, so the same file works from any working directory.

use std::path::{Path, PathBuf};

use anyhow::Result;
use serde::Deserialize;

use crate::diag::{input_error, input_error_hint, suggest, unknown_key_hint};
use crate::metrics::{self, Metric};
// The command a retriever runs is the retriever module's (the layer below):
// re-exported so `config::RetrieverCommand` keeps working.
pub use crate::retriever::RetrieverCommand;
use crate::run::RunFormat;

pub const DEFAULT_CONFIG: &str = "config/rgate.yaml";
pub const DEFAULT_SEED: u64 = 20261129;
pub const DEFAULT_RESAMPLES: u32 = 10_000;
pub const DEFAULT_ALPHA: f64 = 0.05;
/// The share of gold queries a run may leave out before `gate` and
/// `baseline update` call it a broken retriever step rather than a
/// regression.
pub const DEFAULT_MAX_MISSING: f64 = 0.10;
pub const DEFAULT_LOCK_TIMEOUT_S: u64 = 300;
/// Fewer resamples cannot resolve a p-value near the usual alphas.
pub const MIN_RESAMPLES: u32 = 100;
/// More resamples than this buy no precision a gate can use (the Monte
/// Carlo error of a p-value is already below 0.0005) and only cost time
/// and memory: `4294967295` would run for days.
pub const MAX_RESAMPLES: u32 = 1_000_000;

/// Checks a resample count, from the config or the command line; the error
/// is a message and a hint. The one place the limits are enforced.
pub fn check_resamples(b: u32) -> std::result::Result<(), (String, String)> {
    if b < MIN_RESAMPLES {
        return Err((
            format!("resamples {b} is too few for a p-value"),
            format!("use 10000 (the default); at least {MIN_RESAMPLES}"),
        ));
    }
    if b > MAX_RESAMPLES {
        return Err((
            format!("resamples {b} is more than the {MAX_RESAMPLES} rgate accepts"),
            "10000 (the default) resolves p-values to about 0.005; 100000 to about 0.0015".into(),
        ));
    }
    Ok(())
}

/// Checks a relevance level (trec_eval's `-l`: the lowest grade counted
/// relevant). Grade 0 means "judged not relevant" and negative grades
/// "not judged", so a level below 1 would count those labels as relevant
/// and silently weaken every metric.
pub fn check_relevance_level(level: i32) -> std::result::Result<(), (String, String)> {
    if level < 1 {
        return Err((
            format!("relevance level {level} is below 1: judged-not-relevant (grade 0) labels would count as relevant"),
            "use 1 (the default) or a higher grade, such as 2 for \"highly relevant\"".into(),
        ));
    }
    Ok(())
}

/// Checks a span coverage: the share of a span that retrieved chunks must
/// cover for it to count (SPEC "Span labels"). 0 would credit a span
/// nothing touched; above 1 nothing could.
pub fn check_span_coverage(c: f64) -> std::result::Result<(), (String, String)> {
    if !(c > 0.0 && c <= 1.0) {
        return Err((
            format!("span coverage {c} is outside (0, 1]"),
            "a share of the span: 0.5 (the default) credits a span once half of it was retrieved; 1 asks for all of it".into(),
        ));
    }
    Ok(())
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TestKind {
    Bootstrap,
    #[serde(alias = "t_test", alias = "ttest")]
    TTest,
    Randomization,
}

impl TestKind {
    pub fn name(self) -> &'static str {
        match self {
            TestKind::Bootstrap => "bootstrap",
            TestKind::TTest => "t-test",
            TestKind::Randomization => "randomization",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Decision {
    SignificantDrop,
    ConfidentDrop,
    NonInferiority,
    Threshold,
}

impl Decision {
    pub fn name(self) -> &'static str {
        match self {
            Decision::SignificantDrop => "significant-drop",
            Decision::ConfidentDrop => "confident-drop",
            Decision::NonInferiority => "non-inferiority",
            Decision::Threshold => "threshold",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Correction {
    Holm,
    Bonferroni,
    None,
}

impl Correction {
    pub fn name(self) -> &'static str {
        match self {
            Correction::Holm => "holm",
            Correction::Bonferroni => "bonferroni",
            Correction::None => "none",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Weighting {
    /// Every query weighs the same (the mean over all queries).
    Micro,
    /// Every stratum weighs the same (the mean of stratum means).
    Macro,
}

impl Weighting {
    pub fn name(self) -> &'static str {
        match self {
            Weighting::Micro => "micro",
            Weighting::Macro => "macro",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum Tolerance {
    Absolute(f64),
    /// Percent of the baseline mean in the check's scope.
    Percent(f64),
}

impl Tolerance {
    pub fn resolve(&self, baseline_mean: f64) -> f64 {
        match self {
            Tolerance::Absolute(v) => *v,
            Tolerance::Percent(p) => p / 100.0 * baseline_mean,
        }
    }

    pub fn describe(&self) -> String {
        match self {
            Tolerance::Absolute(v) => format!("max_drop {v}"),
            Tolerance::Percent(p) => format!("max_drop_pct {p}"),
        }
    }
}

/// Which scopes a rule checks.
#[derive(Debug, Clone, PartialEq)]
pub enum StrataSel {
    /// Overall and every stratum.
    All,
    /// Overall only.
    Overall,
    /// Exactly these (`overall` may be one of them).
    List(Vec<String>),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Rule {
    pub metric: Metric,
    pub tolerance: Tolerance,
    pub strata: StrataSel,
}

#[derive(Debug, Clone, PartialEq)]
pub struct GateSettings {
    pub alpha: f64,
    pub resamples: u32,
    pub seed: u64,
    pub test: TestKind,
    pub decision: Decision,
    pub correction: Correction,
    pub weighting: Weighting,
    pub rules: Vec<Rule>,
    /// Largest share of gold queries a run may miss (they score 0, as with
    /// trec_eval's `-c`); more, or all, is an error.
    pub max_missing: f64,
    /// How long `baseline update` and `gate --record` wait for another
    /// rgate to release a retriever's lock: long enough that concurrent CI
    /// jobs queue rather than fail.
    pub lock_timeout: std::time::Duration,
}

impl Default for GateSettings {
    fn default() -> Self {
        GateSettings {
            alpha: DEFAULT_ALPHA,
            resamples: DEFAULT_RESAMPLES,
            seed: DEFAULT_SEED,
            test: TestKind::Bootstrap,
            decision: Decision::ConfidentDrop,
            correction: Correction::Holm,
            weighting: Weighting::Micro,
            rules: Vec::new(),
            max_missing: DEFAULT_MAX_MISSING,
            lock_timeout: std::time::Duration::from_secs(DEFAULT_LOCK_TIMEOUT_S),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Retriever {
    pub name: String,
    /// The run file; for a command retriever, empty (see `command`).
    pub run: PathBuf,
    pub run_format: Option<RunFormat>,
    /// Run this to produce the run (see [`crate::retriever`]).
    pub command: Option<RetrieverCommand>,
    /// The chunk map of this retriever's chunking (`chunks:`), for gold
    /// sets with span labels: two retrievers may chunk differently.
    pub chunks: Option<PathBuf>,
    /// The candidate list the run was reranked from (SPEC "Two stages").
    pub candidates: Option<Candidates>,
}

/// Where a reranked retriever's candidate list comes from: a file, or a
/// command run like a command retriever (same stdin, same output).
#[derive(Debug, Clone, PartialEq)]
pub enum Candidates {
    File(PathBuf),
    Command(RetrieverCommand),
}

/// How long a command retriever may run when `timeout_s` is not given.
pub const DEFAULT_TIMEOUT_S: f64 = 600.0;

#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    pub path: PathBuf,
    pub gold: PathBuf,
    pub strata: Option<PathBuf>,
    pub baselines: PathBuf,
    /// How many ranked ids a baseline stores per query (`None`: all).
    pub baseline_depth: Option<u32>,
    pub relevance_level: i32,
    /// Share of a span label that retrieved chunks must cover (default 0.5).
    pub span_coverage: f64,
    /// Every metric computed: the configured ones plus any a rule gates.
    pub metrics: Vec<Metric>,
    pub retrievers: Vec<Retriever>,
    pub gate: GateSettings,
}

// ---- the file's shape -------------------------------------------------------

#[derive(Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a config: a map with `gold:` and optionally `retrievers:`, `gate:`, ..."
)]
struct RawConfig {
    gold: String,
    #[serde(default)]
    strata: Option<String>,
    #[serde(default)]
    baselines: Option<String>,
    #[serde(default)]
    baseline_depth: Option<RawDepth>,
    #[serde(default)]
    relevance_level: Option<i32>,
    #[serde(default)]
    span_coverage: Option<f64>,
    #[serde(default)]
    metrics: Option<Vec<String>>,
    #[serde(default)]
    retrievers: Vec<RawRetriever>,
    #[serde(default)]
    gate: Option<RawGate>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, expecting = "a retriever: a map with `name` and `run`")]
struct RawRetriever {
    name: String,
    #[serde(default)]
    run: Option<String>,
    #[serde(default)]
    run_format: Option<String>,
    #[serde(default)]
    command: Option<Vec<String>>,
    #[serde(default)]
    timeout_s: Option<f64>,
    #[serde(default)]
    chunks: Option<String>,
    candidates: Option<RawCandidates>,
}

/// `candidates: path` or `candidates: [program, args...]`.
#[derive(Deserialize)]
#[serde(untagged, expecting = "a file path or a command list")]
enum RawCandidates {
    File(String),
    Command(Vec<String>),
}

#[derive(Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "gate settings: a map such as `alpha`, `rules`"
)]
struct RawGate {
    #[serde(default)]
    alpha: Option<f64>,
    #[serde(default)]
    resamples: Option<u32>,
    #[serde(default)]
    seed: Option<u64>,
    #[serde(default)]
    test: Option<TestKind>,
    #[serde(default)]
    decision: Option<Decision>,
    #[serde(default)]
    correction: Option<Correction>,
    #[serde(default)]
    weighting: Option<Weighting>,
    #[serde(default)]
    lock_timeout_s: Option<f64>,
    #[serde(default)]
    rules: Vec<RawRule>,
    #[serde(default)]
    max_missing: Option<f64>,
}

#[derive(Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a rule: a map with `metric` and `max_drop` or `max_drop_pct`"
)]
struct RawRule {
    metric: String,
    #[serde(default)]
    max_drop: Option<f64>,
    #[serde(default)]
    max_drop_pct: Option<f64>,
    #[serde(default)]
    strata: Option<RawStrata>,
}

#[derive(Deserialize)]
#[serde(untagged, expecting = "a number of ranked ids, or `all`")]
enum RawDepth {
    Ids(u32),
    Word(String),
}

#[derive(Deserialize)]
#[serde(untagged)]
enum RawStrata {
    One(String),
    Many(Vec<String>),
}

fn check_name(path: &Path, name: &str) -> Result<()> {
    if !valid_retriever_name(name) {
        return Err(input_error_hint(
            path,
            None,
            format!("retriever name `{name}` is not allowed"),
            "names match [A-Za-z0-9][A-Za-z0-9._-]{0,63}: they become file names in the baseline directory",
        ));
    }
    Ok(())
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

/// `a/b/../c` -> `a/c`, lexically, so messages show the paths users wrote
/// rather than `config/../eval/gold.yaml`. A leading `..` is kept.
fn clean(p: &Path) -> PathBuf {
    use std::path::Component;
    let mut out: Vec<Component> = Vec::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir if matches!(out.last(), Some(Component::Normal(_))) => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    if out.is_empty() {
        return PathBuf::from(".");
    }
    out.iter().collect()
}

/// SPEC: `[A-Za-z0-9][A-Za-z0-9._-]{0,63}`. Names become file names, so
/// anything path-like is refused.
pub fn valid_retriever_name(name: &str) -> bool {
    let b = name.as_bytes();
    !b.is_empty()
        && b.len() <= 64
        && b[0].is_ascii_alphanumeric()
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'_' | b'-'))
}

/// Searches `start` and its ancestors for [`DEFAULT_CONFIG`], as git and
/// cargo search for their files, so `rgate gate` works from any directory
/// of the repository. The path is returned relative to `start`
/// (`../../config/rgate.yaml`), so messages show what a user would type.
pub fn discover(start: &Path) -> Option<PathBuf> {
    let mut up = PathBuf::new();
    for dir in start.ancestors() {
        if dir.join(DEFAULT_CONFIG).is_file() {
            return Some(up.join(DEFAULT_CONFIG));
        }
        up.push("..");
    }
    None
}

/// [`discover`] from the working directory.
pub fn discover_here() -> Option<PathBuf> {
    let cwd = std::env::current_dir().ok()?;
    discover(&cwd)
}

impl Config {
    /// Finds the config: `--config`, then `RGATE_CONFIG` (clap fills both
    /// into `explicit`), then `config/rgate.yaml` in the working directory
    /// or the nearest ancestor that has one.
    pub fn load(explicit: Option<&Path>) -> Result<Config> {
        let path = match explicit {
            Some(p) => p.to_path_buf(),
            None => discover_here().ok_or_else(|| {
                input_error_hint(
                    Path::new(DEFAULT_CONFIG),
                    None,
                    "no config found here or in any parent directory",
                    "run `rgate init` to write one, or pass --config PATH (or set RGATE_CONFIG)",
                )
            })?,
        };
        let text = std::fs::read_to_string(&path).map_err(|e| {
            input_error_hint(
                &path,
                None,
                format!("cannot read config: {e}"),
                "check the --config path (or RGATE_CONFIG)",
            )
        })?;
        Config::parse(&path, &text)
    }

    pub fn parse(path: &Path, text: &str) -> Result<Config> {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        crate::diag::yaml_guard(text).map_err(|(line, why)| {
            input_error_hint(
                path,
                Some(line),
                format!("refused: {why}"),
                "write the config out plainly (no aliases, a few levels of nesting)",
            )
        })?;
        let raw: RawConfig = serde_yaml::from_str(text).map_err(|e| {
            let line = e.location().map(|l| l.line());
            let msg = e.to_string();
            let hint = unknown_key_hint(&msg)
                .unwrap_or_else(|| "see the configuration reference in the README".into());
            input_error_hint(
                path,
                line,
                format!("invalid config: {}", crate::diag::clip_message(&msg)),
                hint,
            )
        })?;
        let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        let rel = |p: &str| -> PathBuf {
            let p = Path::new(p);
            if p.is_absolute() {
                p.to_path_buf()
            } else {
                clean(&dir.join(p))
            }
        };
        let line_of_key =
            |key: &str| -> Option<usize> { text.lines().position(|l| l.contains(key)).map(|i| i + 1) };
        let bad = |key: &str, msg: String, hint: &str| {
            input_error_hint(path, line_of_key(key), msg, hint.to_string())
        };

        if let Some(level) = raw.relevance_level {
            if let Err((msg, hint)) = check_relevance_level(level) {
                return Err(bad("relevance_level", msg, &hint));
            }
        }
        if let Some(c) = raw.span_coverage {
            if let Err((msg, hint)) = check_span_coverage(c) {
                return Err(bad("span_coverage", msg, &hint));
            }
        }
        let mut metric_list = match &raw.metrics {
            Some(ms) => metrics::parse_list(ms).map_err(|e| input_error(path, line_of_key("metrics"), e))?,
            None => metrics::default_metrics(),
        };

        let mut gate = GateSettings::default();
        if let Some(g) = raw.gate {
            if let Some(a) = g.alpha {
                if !(a > 0.0 && a < 1.0) {
                    return Err(bad(
                        "alpha",
                        format!("alpha {a} is outside (0, 1)"),
                        "0.05 is the usual choice",
                    ));
                }
                gate.alpha = a;
            }
            if let Some(b) = g.resamples {
                if let Err((msg, hint)) = check_resamples(b) {
                    return Err(bad("resamples", msg, &hint));
                }
                gate.resamples = b;
            }
            if let Some(m) = g.max_missing {
                if !(0.0..=1.0).contains(&m) {
                    return Err(bad(
                        "max_missing",
                        format!("max_missing {m} is outside [0, 1]"),
                        "it is a share of the gold queries: 0.10 allows a run to miss one in ten",
                    ));
                }
                gate.max_missing = m;
            }
            gate.seed = g.seed.unwrap_or(gate.seed);
            gate.test = g.test.unwrap_or(gate.test);
            gate.decision = g.decision.unwrap_or(gate.decision);
            gate.correction = g.correction.unwrap_or(gate.correction);
            gate.weighting = g.weighting.unwrap_or(gate.weighting);
            if let Some(t) = g.lock_timeout_s {
                if !(0.0..=86_400.0).contains(&t) {
                    return Err(bad(
                        "lock_timeout_s",
                        format!("lock_timeout_s {t} is outside [0, 86400] seconds"),
                        "300 (the default) lets concurrent CI jobs queue",
                    ));
                }
                gate.lock_timeout = std::time::Duration::from_secs_f64(t);
            }
            for r in g.rules {
                let metric: Metric = r
                    .metric
                    .parse()
                    .map_err(|e| input_error(path, line_of_key(&r.metric), e))?;
                let tolerance = match (r.max_drop, r.max_drop_pct) {
                    (Some(v), None) if v >= 0.0 && v.is_finite() => Tolerance::Absolute(v),
                    (None, Some(p)) if (0.0..=100.0).contains(&p) => Tolerance::Percent(p),
                    (Some(_), Some(_)) => {
                        return Err(bad(
                            &r.metric,
                            format!("rule for {metric}: give max_drop or max_drop_pct, not both"),
                            "max_drop is in metric units (0.02), max_drop_pct relative to the baseline (5)",
                        ))
                    }
                    (None, None) => {
                        return Err(bad(
                            &r.metric,
                            format!("rule for {metric}: no tolerance"),
                            "add max_drop: 0.02 (metric units) or max_drop_pct: 5 (percent of the baseline)",
                        ))
                    }
                    _ => {
                        return Err(bad(
                            &r.metric,
                            format!("rule for {metric}: the tolerance must be a non-negative number (a percentage at most 100)"),
                            "for example max_drop: 0.02",
                        ))
                    }
                };
                let strata = match r.strata {
                    None => StrataSel::All,
                    Some(RawStrata::One(s)) if s == "all" => StrataSel::All,
                    Some(RawStrata::One(s)) if s == "overall" => StrataSel::Overall,
                    Some(RawStrata::One(s)) => StrataSel::List(vec![s]),
                    Some(RawStrata::Many(v)) => StrataSel::List(v),
                };
                if !metric_list.contains(&metric) {
                    metric_list.push(metric);
                }
                gate.rules.push(Rule {
                    metric,
                    tolerance,
                    strata,
                });
            }
        }
        if gate.rules.is_empty() {
            // No rules: every configured metric is gated on any significant
            // drop, overall and per stratum.
            gate.rules = metric_list
                .iter()
                .map(|m| Rule {
                    metric: *m,
                    tolerance: Tolerance::Absolute(0.0),
                    strata: StrataSel::All,
                })
                .collect();
        }

        let mut retrievers = Vec::new();
        for r in raw.retrievers {
            check_name(path, &r.name)?;
            if retrievers.iter().any(|x: &Retriever| x.name == r.name) {
                return Err(bad(
                    &r.name,
                    format!("retriever `{}` is listed twice", r.name),
                    "retriever names must be unique",
                ));
            }
            // One check for either command a retriever may name (its run's
            // or its candidate list's); both share `timeout_s`.
            let command_of = |key: &str, argv: &[String], what: &str, example: &str| {
                if argv.is_empty() || argv[0].is_empty() {
                    return Err(bad(
                        key,
                        format!("retriever `{}`: {what} is empty", r.name),
                        example,
                    ));
                }
                let secs = r.timeout_s.unwrap_or(DEFAULT_TIMEOUT_S);
                if !(secs > 0.0 && secs <= 86_400.0) {
                    return Err(bad(
                        "timeout_s",
                        format!("retriever `{}`: timeout_s {secs} is outside (0, 86400]", r.name),
                        "seconds the command may run, e.g. timeout_s: 600",
                    ));
                }
                Ok(RetrieverCommand {
                    argv: argv.to_vec(),
                    timeout: std::time::Duration::from_secs_f64(secs),
                    dir: dir.clone(),
                })
            };
            let command = match (&r.command, &r.run) {
                (Some(_), Some(_)) => {
                    return Err(bad(
                        "command",
                        format!("retriever `{}` has both `run` and `command`", r.name),
                        "give `run` (a file an earlier step wrote) or `command` (rgate runs it), not both",
                    ))
                }
                (Some(argv), None) => Some(command_of(
                    "command",
                    argv,
                    "the command",
                    "a list: the program, then its arguments, e.g. [python3, retrieve.py]",
                )?),
                (None, _)
                    if r.timeout_s.is_some() && !matches!(r.candidates, Some(RawCandidates::Command(_))) =>
                {
                    return Err(bad(
                        "timeout_s",
                        format!("retriever `{}`: timeout_s without a command", r.name),
                        "timeout_s limits a `command:` (or a `candidates:` command); drop it for a run file",
                    ))
                }
                (None, _) => None,
            };
            let run = match (&command, r.run) {
                (Some(_), _) => String::new(),
                (None, Some(run)) => run,
                (None, None) => {
                    return Err(bad(
                        &r.name,
                        format!("retriever `{}` has neither `run` nor `command`", r.name),
                        "give the path of its run file (TREC, JSON or JSONL), relative to the config, or a `command:`",
                    ))
                }
            };
            let run_format = match r.run_format.as_deref() {
                None => None,
                Some("trec") => Some(RunFormat::Trec),
                Some("json") => Some(RunFormat::Json),
                Some("jsonl") => Some(RunFormat::Jsonl),
                Some(other) => {
                    return Err(bad(
                        "run_format",
                        format!("run_format `{other}` is not known"),
                        "use trec, json or jsonl, or leave it out to detect from content",
                    ))
                }
            };
            let candidates = match r.candidates {
                None => None,
                Some(RawCandidates::File(f)) if f.trim().is_empty() => {
                    return Err(bad(
                        "candidates",
                        format!("retriever `{}`: `candidates` is empty", r.name),
                        "the path of the candidate list (relative to the config), or a command list",
                    ))
                }
                Some(RawCandidates::File(f)) => Some(Candidates::File(rel(&f))),
                Some(RawCandidates::Command(argv)) => Some(Candidates::Command(command_of(
                    "candidates",
                    &argv,
                    "the candidates command",
                    "a list: the program, then its arguments, e.g. [python3, candidates.py]",
                )?)),
            };
            retrievers.push(Retriever {
                name: r.name,
                run: if command.is_some() {
                    PathBuf::new()
                } else {
                    rel(&run)
                },
                run_format,
                command,
                chunks: r.chunks.as_deref().map(rel),
                candidates,
            });
        }
        if let Some(m) = metric_list.iter().find(|m| m.is_candidates()) {
            if retrievers.is_empty() || retrievers.iter().all(|r| r.candidates.is_none()) {
                return Err(bad(
                    &m.name(),
                    format!("{m} scores a candidate list, and no retriever names one"),
                    "give the reranked retriever its `candidates:` (the list the reranker was given), or drop the `candidates:` metric",
                ));
            }
        }
        Ok(Config {
            path: path.to_path_buf(),
            gold: rel(&raw.gold),
            strata: raw.strata.as_deref().map(rel),
            baselines: rel(raw.baselines.as_deref().unwrap_or("baselines")),
            baseline_depth: baseline_depth(raw.baseline_depth, &metric_list)
                .map_err(|(msg, hint)| bad("baseline_depth", msg, &hint))?,
            relevance_level: raw.relevance_level.unwrap_or(1),
            span_coverage: raw.span_coverage.unwrap_or(crate::judge::DEFAULT_SPAN_COVERAGE),
            metrics: metric_list,
            retrievers,
            gate,
        })
    }

    pub fn retriever(&self, name: &str) -> Result<&Retriever> {
        self.retrievers.iter().find(|r| r.name == name).ok_or_else(|| {
            let names: Vec<&str> = self.retrievers.iter().map(|r| r.name.as_str()).collect();
            let hint = match suggest(name, &names) {
                Some(s) => format!("did you mean `{s}`? Configured: {}", names.join(", ")),
                None => format!("configured retrievers: {}", names.join(", ")),
            };
            input_error_hint(&self.path, None, format!("no retriever named `{name}`"), hint)
        })
    }

    /// The named retrievers, or all of them for an empty list.
    pub fn select(&self, names: &[String]) -> Result<Vec<&Retriever>> {
        if names.is_empty() {
            if self.retrievers.is_empty() {
                return Err(input_error_hint(
                    &self.path,
                    None,
                    "no retrievers configured",
                    "add a `retrievers:` list with a name and a run file for each",
                ));
            }
            return Ok(self.retrievers.iter().collect());
        }
        names.iter().map(|n| self.retriever(n)).collect()
    }

    /// Checks what the config says about the gold set against the gold set
    /// itself, before any work: a rule naming a stratum the gold set lacks
    /// would leave its metric un-gated there, silently weakening the gate.
    pub fn check_against_gold(&self, gold_path: &Path, strata: &[String]) -> Result<()> {
        let names: Vec<&str> = strata.iter().map(String::as_str).collect();
        for rule in &self.gate.rules {
            let StrataSel::List(list) = &rule.strata else {
                continue;
            };
            for n in list {
                if n == "overall" || names.contains(&n.as_str()) {
                    continue;
                }
                let known = format!("its strata: {}", names.join(", "));
                let hint = match suggest(n, &names) {
                    Some(s) => format!("did you mean `{s}`? {known}"),
                    None => format!("name one of {known}, or `overall`"),
                };
                return Err(input_error_hint(
                    &self.path,
                    None,
                    format!(
                        "rule for {}: stratum `{n}` is not in the gold set {}",
                        rule.metric,
                        gold_path.display()
                    ),
                    hint,
                ));
            }
        }
        Ok(())
    }

    /// The deepest rank any metric looks at: what a baseline must store so
    /// it can be re-scored later. `None`: the whole ranking.
    pub fn depth(&self) -> Option<u32> {
        self.baseline_depth
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Config> {
        Config::parse(Path::new("conf/rgate.yaml"), text)
    }

    #[test]
    fn full_config_with_relative_paths() {
        let c = parse(
            "gold: demo/gold.yaml\nbaselines: demo/baselines\nmetrics: [recall@10, mrr@10]\nretrievers:\n  - name: bm25\n    run: demo/runs/bm25.jsonl\ngate:\n  alpha: 0.01\n  decision: confident-drop\n  test: t-test\n  rules:\n    - metric: ndcg@10\n      max_drop_pct: 5\n      strata: overall\n    - metric: recall@10\n      max_drop: 0.02\n      strata: [overall, how-to]\n",
        )
        .unwrap();
        assert_eq!(c.gold, Path::new("conf/demo/gold.yaml"));
        assert_eq!(c.retrievers[0].run, Path::new("conf/demo/runs/bm25.jsonl"));
        assert_eq!(c.metrics.len(), 3, "the rule's ndcg@10 joins the metric set");
        assert_eq!(c.gate.alpha, 0.01);
        assert_eq!(c.gate.test, TestKind::TTest);
        assert_eq!(c.gate.rules[0].tolerance, Tolerance::Percent(5.0));
        assert_eq!(
            c.gate.rules[1].strata,
            StrataSel::List(vec!["overall".into(), "how-to".into()])
        );
        assert_eq!(c.depth(), Some(10));
    }

    #[test]
    fn candidates_per_retriever() {
        let c = parse(
            "gold: g\nmetrics: [hit_rate@3, candidates:recall@50]\nretrievers:\n  - name: bm25\n    run: b.jsonl\n  - name: rr\n    run: rr.jsonl\n    candidates: c.jsonl\n  - name: rc\n    command: [r]\n    candidates: [python3, c.py]\n    timeout_s: 5\n",
        )
        .unwrap();
        assert_eq!(c.retrievers[0].candidates, None);
        assert_eq!(
            c.retrievers[1].candidates,
            Some(Candidates::File(PathBuf::from("conf/c.jsonl")))
        );
        match &c.retrievers[2].candidates {
            Some(Candidates::Command(cmd)) => {
                assert_eq!(cmd.argv, ["python3", "c.py"]);
                assert_eq!(cmd.timeout.as_secs(), 5);
            }
            other => panic!("{other:?}"),
        }
        // The candidate list is stored whole: only hit_rate@3 sets the depth.
        assert_eq!(c.depth(), Some(3));
        let c =
            parse("gold: g\nretrievers:\n  - name: rr\n    run: r\n    candidates: [c]\n    timeout_s: 5\n")
                .unwrap();
        assert!(c.retrievers[0].candidates.is_some());
        for (text, want) in [
            (
                "gold: g\nmetrics: [candidates:recall@50]\nretrievers:\n  - name: a\n    run: r\n",
                "candidates:recall@50 scores a candidate list, and no retriever names one",
            ),
            (
                "gold: g\nretrievers:\n  - name: a\n    run: r\n    candidates: []\n",
                "the candidates command is empty",
            ),
            (
                "gold: g\nretrievers:\n  - name: a\n    run: r\n    candidates: \"\"\n",
                "`candidates` is empty",
            ),
        ] {
            let e = parse(text).unwrap_err().to_string();
            assert!(e.contains(want), "{text}: {e}");
            assert!(e.contains("hint:"), "{e}");
        }
    }

    #[test]
    fn unknown_keys_name_the_nearest() {
        let e = parse("gold: g.yaml\nbaseline: b\n").unwrap_err().to_string();
        assert!(e.contains("conf/rgate.yaml:2"), "{e}");
        assert!(e.contains("unknown field `baseline`"), "{e}");
        assert!(e.contains("did you mean `baselines`?"), "{e}");
        let e = parse("gold: g.yaml\ngate:\n  rules:\n    - metric: mrr\n      max_dorp: 0.1\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("did you mean `max_drop`?"), "{e}");
    }

    #[test]
    fn path_like_names_are_refused() {
        for bad in ["../x", "a/b", ".hidden", "", "a b"] {
            let text = format!("gold: g\nretrievers:\n  - name: \"{bad}\"\n    run: r\n");
            let e = parse(&text).unwrap_err().to_string();
            assert!(e.contains("is not allowed"), "{bad}: {e}");
        }
        assert!(valid_retriever_name("hybrid-v2.1_b"));
        assert!(!valid_retriever_name(&"a".repeat(65)));
    }

    #[test]
    fn tolerance_is_required_and_single() {
        let e = parse("gold: g\ngate:\n  rules:\n    - metric: mrr\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("no tolerance"), "{e}");
        let e = parse(
            "gold: g\ngate:\n  rules:\n    - metric: mrr\n      max_drop: 0.1\n      max_drop_pct: 2\n",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("not both"), "{e}");
    }

    #[test]
    fn command_retrievers() {
        let c =
            parse("gold: g\nretrievers:\n  - name: h\n    command: [python3, r.py]\n    timeout_s: 1.5\n")
                .unwrap();
        let cmd = c.retrievers[0].command.as_ref().unwrap();
        assert_eq!(cmd.argv, ["python3", "r.py"]);
        assert_eq!(cmd.timeout, std::time::Duration::from_millis(1500));
        assert_eq!(cmd.dir, Path::new("conf"));
        let c = parse("gold: g\nretrievers:\n  - name: h\n    command: [r]\n").unwrap();
        assert_eq!(c.retrievers[0].command.as_ref().unwrap().timeout.as_secs(), 600);
        for (text, want) in [
            ("    command: [a]\n    run: r\n", "both `run` and `command`"),
            ("    command: []\n", "the command is empty"),
            ("    command: [a]\n    timeout_s: 0\n", "outside (0, 86400]"),
            ("    run: r\n    timeout_s: 5\n", "timeout_s without a command"),
            ("    run_format: jsonl\n", "neither `run` nor `command`"),
        ] {
            let e = parse(&format!("gold: g\nretrievers:\n  - name: h\n{text}"))
                .unwrap_err()
                .to_string();
            assert!(e.contains(want), "{text}: {e}");
            assert!(e.contains("hint:"), "{e}");
        }
    }

    #[test]
    fn paths_are_cleaned_lexically() {
        assert_eq!(
            clean(Path::new("config/../eval/gold.yaml")),
            Path::new("eval/gold.yaml")
        );
        assert_eq!(clean(Path::new("../x/./y")), Path::new("../x/y"));
        assert_eq!(clean(Path::new("a/..")), Path::new("."));
        let c = parse("gold: ../eval/gold.yaml\n").unwrap();
        assert_eq!(c.gold, Path::new("eval/gold.yaml"));
    }

    #[test]
    fn discovery_walks_up_to_the_nearest_config() {
        let tmp = tempfile::tempdir().unwrap();
        let deep = tmp.path().join("a/b");
        std::fs::create_dir_all(&deep).unwrap();
        assert_eq!(discover(&deep), None);
        std::fs::create_dir_all(tmp.path().join("config")).unwrap();
        std::fs::write(tmp.path().join(DEFAULT_CONFIG), "gold: g\n").unwrap();
        assert_eq!(discover(&deep), Some(PathBuf::from("../../config/rgate.yaml")));
        assert_eq!(discover(tmp.path()), Some(PathBuf::from("config/rgate.yaml")));
        // The nearest one wins.
        std::fs::create_dir_all(deep.join("config")).unwrap();
        std::fs::write(deep.join(DEFAULT_CONFIG), "gold: g\n").unwrap();
        assert_eq!(discover(&deep), Some(PathBuf::from("config/rgate.yaml")));
    }

    #[test]
    fn default_rules_gate_every_metric() {
        let c = parse("gold: g\nmetrics: [mrr]\n").unwrap();
        assert_eq!(c.gate.rules.len(), 1);
        assert_eq!(c.depth(), Some(10), "no cutoff in use: 10 ranked ids");
    }
}
