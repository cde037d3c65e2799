//! The config file (`config/rgate.yaml` by default): gold set, baseline
//! directory, metrics, retrievers, gate settings and rules, turned into one
//! validated [`Config`] before any work starts. Paths are relative to the
//! config file, so the same file works from any working directory.

use std::path::{Path, PathBuf};

use anyhow::Result;
use serde::Deserialize;

use crate::diag::{input_error, input_error_hint, suggest, unknown_key_hint};
use crate::metrics::Metric;
// The command a retriever runs is the retriever module's (the layer below):
// re-exported so `config::RetrieverCommand` keeps working.
pub use crate::retriever::RetrieverCommand;
use crate::run::RunFormat;

mod build;
mod raw;

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
        return Err(too_few_resamples(b));
    }
    if b > MAX_RESAMPLES {
        return Err(too_many_resamples(b));
    }
    Ok(())
}

/// A resample count written as a decimal word: a command-line argument, or
/// the digits of a Python int (which has no size limit). Any integer word
/// gets [`check_resamples`]'s message: `-1` is too few and `99999999999`
/// too many, not a type error about `u32`, so every front end refuses a
/// count with the same words.
pub fn resamples_from_word(word: &str) -> std::result::Result<u32, (String, String)> {
    let digits = word.strip_prefix('-').unwrap_or(word);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err((
            format!("resamples `{word}` is not a whole number"),
            format!("use 10000 (the default); at least {MIN_RESAMPLES}"),
        ));
    }
    match word.parse::<u32>() {
        Ok(b) => check_resamples(b).map(|()| b),
        // Negative (u32 reads no sign): fewer than any minimum.
        Err(_) if word.starts_with('-') => Err(too_few_resamples(word)),
        Err(_) => Err(too_many_resamples(word)),
    }
}

/// A seed written as a decimal word (`--seed N`, or a Python int's
/// digits): a whole number from 0 to `u64::MAX`, the same for every front
/// end.
pub fn seed_from_word(word: &str) -> std::result::Result<u64, (String, String)> {
    word.parse::<u64>().map_err(|_| {
        (
            format!("seed {word} is not a whole number from 0 to {}", u64::MAX),
            format!("any such number; the default is {DEFAULT_SEED}, and a seed gives the same p-values every time"),
        )
    })
}

fn too_few_resamples(b: impl std::fmt::Display) -> (String, String) {
    (
        format!("resamples {b} is too few for a p-value"),
        format!("use 10000 (the default); at least {MIN_RESAMPLES}"),
    )
}

fn too_many_resamples(b: impl std::fmt::Display) -> (String, String) {
    (
        format!("resamples {b} is more than the {MAX_RESAMPLES} rgate accepts"),
        "10000 (the default) resolves p-values to about 0.005; 100000 to about 0.0015".into(),
    )
}

/// Checks a significance level, from the config or the command line; the
/// error is a message and a hint. 0 would never reject and 1 always.
pub fn check_alpha(a: f64) -> std::result::Result<(), (String, String)> {
    if !(a > 0.0 && a < 1.0) {
        return Err((
            format!("alpha {} is outside (0, 1)", crate::diag::number(a)),
            "0.05 is the usual choice".into(),
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

/// A relevance level written as a word (`--relevance-level N`, or a Python
/// value as a user would type it: an int's digits, anything else its
/// repr): a whole number, then [`check_relevance_level`]. `1.9` is refused
/// rather than truncated to 1, which would quietly count grade-1 labels.
pub fn relevance_level_from_word(word: &str) -> std::result::Result<i32, (String, String)> {
    let level: i32 = word.parse().map_err(|_| {
        (
            format!("`{word}` is not an integer grade"),
            "a relevance level is the lowest grade counted relevant: 1 (the default), 2, ...".to_string(),
        )
    })?;
    check_relevance_level(level).map(|()| level)
}

/// Checks a span coverage: the share of a span that retrieved chunks must
/// cover for it to count (SPEC "Span labels"). 0 would credit a span
/// nothing touched; above 1 nothing could.
pub fn check_span_coverage(c: f64) -> std::result::Result<(), (String, String)> {
    if !(c > 0.0 && c <= 1.0) {
        return Err((
            format!("span coverage {} is outside (0, 1]", crate::diag::number(c)),
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
    #[serde(alias = "sign-flip", alias = "sign_flip")]
    Randomization,
}

impl TestKind {
    /// How reports name this test run on PPI's per-query terms (`labels:
    /// ppi`).
    pub fn ppi_name(self) -> &'static str {
        match self {
            TestKind::Randomization => "ppi sign-flip",
            TestKind::TTest => "ppi t-test",
            TestKind::Bootstrap => "ppi bootstrap",
        }
    }

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

/// Which checks share one multiplicity correction (SPEC "Statistics,
/// second edition"): the exit code is one promise, so by default every gated
/// check of every retriever the gate runs is one family.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CorrectionScope {
    Gate,
    Retriever,
}

impl CorrectionScope {
    pub fn name(self) -> &'static str {
        match self {
            CorrectionScope::Gate => "gate",
            CorrectionScope::Retriever => "retriever",
        }
    }
}

/// What an inconclusive check (its interval holds both "within tolerance"
/// and "beyond it") does to the verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OnInconclusive {
    Pass,
    Fail,
}

impl OnInconclusive {
    pub fn name(self) -> &'static str {
        match self {
            OnInconclusive::Pass => "pass",
            OnInconclusive::Fail => "fail",
        }
    }
}

/// `labels:`, defined beside the label views it picks (the gold layer).
pub use crate::gold::LabelMode;

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

    /// A tolerance of 0, however written.
    pub fn is_zero(&self) -> bool {
        match self {
            Tolerance::Absolute(v) | Tolerance::Percent(v) => *v == 0.0,
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
    pub correction_scope: CorrectionScope,
    pub on_inconclusive: OnInconclusive,
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
            test: TestKind::Randomization,
            decision: Decision::ConfidentDrop,
            correction: Correction::Holm,
            correction_scope: CorrectionScope::Gate,
            on_inconclusive: OnInconclusive::Pass,
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
    /// `labels:` (default people).
    pub labels: LabelMode,
    /// Every metric computed: the configured ones plus any a rule gates.
    pub metrics: Vec<Metric>,
    pub retrievers: Vec<Retriever>,
    pub gate: GateSettings,
    /// The line of each stratum name each rule gives (parallel to
    /// `gate.rules`), for the errors only the gold set can reveal.
    strata_lines: Vec<Vec<Option<usize>>>,
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
        let raw = crate::input::read(
            &path,
            "config",
            crate::input::CONFIG_LIMIT,
            "check the --config path (or RGATE_CONFIG)",
        )?;
        let text = std::str::from_utf8(&raw).map_err(|e| {
            input_error(
                &path,
                Some(crate::diag::line_of(&raw, e.valid_up_to())),
                "cannot read config: not valid UTF-8",
            )
        })?;
        Config::parse(&path, text)
    }

    /// Reads a config's text (`path` names it in messages and is the base
    /// of its relative paths).
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
        let raw = raw::read(text).map_err(|(line, msg)| {
            let hint = unknown_key_hint(&msg)
                .unwrap_or_else(|| "see the configuration reference in the README".into());
            input_error_hint(
                path,
                line,
                format!("invalid config: {}", crate::diag::clip_message(&msg)),
                hint,
            )
        })?;
        build::config(path, raw)
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
        for (i, rule) in self.gate.rules.iter().enumerate() {
            let StrataSel::List(list) = &rule.strata else {
                continue;
            };
            for (j, n) in list.iter().enumerate() {
                if n == "overall" || names.contains(&n.as_str()) {
                    continue;
                }
                let known = format!("its strata: {}", names.join(", "));
                let hint = match suggest(n, &names) {
                    Some(s) => format!("did you mean `{s}`? {known}"),
                    None => format!("name one of {known}, or `overall`"),
                };
                let line = self.strata_lines.get(i).and_then(|l| l.get(j)).copied().flatten();
                return Err(input_error_hint(
                    &self.path,
                    line,
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

    /// The error's text, which must start `conf/rgate.yaml:{line}: `.
    fn err_at(text: &str, line: usize) -> String {
        let e = parse(text).unwrap_err().to_string();
        let want = format!("conf/rgate.yaml:{line}: ");
        assert!(e.starts_with(&want), "want line {line}: {e}");
        e
    }

    /// The project of tests/cli_policy.rs, its rule without a tolerance.
    const NO_TOLERANCE: &str = "gold: gold.yaml\nbaselines: baselines\nmetrics: [recall@10]\nretrievers:\n  - name: r\n    run: full.jsonl\ngate:\n  resamples: 1000\n  rules:\n    - metric: recall@10\n      strata: all\n";

    #[test]
    fn a_rule_without_tolerance_is_reported_at_the_rule() {
        // Line 10 is `- metric: recall@10`; line 3 (`metrics:`) also names
        // recall@10, where the old guess landed.
        let e = err_at(NO_TOLERANCE, 10);
        assert!(e.contains("rule for recall@10: no tolerance"), "{e}");
        // Written key-first or not, the rule starts where its map starts.
        let e = err_at("gold: g\ngate:\n  rules:\n    - metric: mrr\n      max_drop: 0.1\n    - strata: all\n      metric: ndcg@10\n", 6);
        assert!(e.contains("rule for ndcg@10: no tolerance"), "{e}");
        let e = err_at(
            "gold: g\ngate:\n  rules:\n    - metric: mrr\n      max_drop: 0.1\n      max_drop_pct: 2\n",
            6,
        );
        assert!(e.contains("not both"), "{e}");
        let e = err_at(
            "gold: g\ngate:\n  rules:\n    - metric: mrr\n\n      max_drop: -1\n",
            6,
        );
        assert!(e.contains("must be a non-negative number"), "{e}");
        let e = err_at(
            "gold: g\ngate:\n  rules:\n    - max_drop: 1\n      metric: mrrr\n",
            5,
        );
        assert!(e.contains("mrrr"), "{e}");
    }

    #[test]
    fn value_errors_name_the_value_line() {
        let e = err_at("gold: g\nmetrics: [mrr]\nbaseline_depth: -1\n", 3);
        assert!(e.contains("baseline_depth -1 is negative"), "{e}");
        let e = err_at("gold: g\nbaseline_depth: 1.5\nmetrics: [mrr]\n", 2);
        assert!(e.contains("baseline_depth 1.5 is not a whole number"), "{e}");
        let e = err_at("gold: g\nbaseline_depth: 1e300\nmetrics: [mrr]\n", 2);
        assert!(e.contains("baseline_depth 1e300 is too large"), "{e}");
        let e = err_at("gold: g\n# depth\nbaseline_depth: 5\nmetrics: [recall@10]\n", 3);
        assert!(
            e.contains("baseline_depth 5 is below the deepest cutoff in use (10)"),
            "{e}"
        );
        let e = err_at("gold: g\nmetrics:\n  - mrr\n  - recal@10\n", 4);
        assert!(e.contains("recal@10"), "{e}");
        err_at("gold: g\nmetrics: []\n", 2);
        err_at("gold: g\nrelevance_level: 0\n", 2);
        err_at("gold: g\nspan_coverage: 2\n", 2);
        err_at("gold: g\ngate:\n  seed: 1\n  alpha: 1.5\n", 4);
        err_at("gold: g\ngate:\n  seed: 1\n  resamples: 5\n", 4);
        err_at("gold: g\ngate:\n  seed: 1\n  max_missing: 2\n", 4);
        err_at("gold: g\ngate:\n  seed: 1\n  lock_timeout_s: -1\n", 4);
        let retr = |tail: &str, line: usize| {
            err_at(
                &format!("gold: g\nretrievers:\n  - name: a\n    run: r\n  - name: h\n{tail}"),
                line,
            )
        };
        assert!(retr("    run: r\n    run_format: csv\n", 7).contains("run_format `csv`"));
        assert!(retr("    command: [a]\n    timeout_s: 0\n", 7).contains("timeout_s 0 is outside"));
        assert!(retr("    run: r\n    timeout_s: 5\n", 7).contains("timeout_s without a command"));
        assert!(retr("    run: r\n    command: [a]\n", 7).contains("both `run` and `command`"));
        assert!(retr("    command: []\n", 6).contains("the command is empty"));
        assert!(retr("    run: r\n    candidates: \"\"\n", 7).contains("`candidates` is empty"));
        assert!(retr("    run_format: trec\n", 5).contains("neither `run` nor `command`"));
        assert!(retr("    run: r\n  - name: a\n    run: r\n", 7).contains("listed twice"));
        assert!(retr("    run: r\n  - name: ../x\n    run: r\n", 7).contains("is not allowed"));
        let e = err_at(
            "gold: g\nretrievers:\n  - name: a\n    run: r\ngate:\n  rules:\n    - metric: mrr\n      max_drop: 0\n    - metric: candidates:recall@50\n      max_drop: 0\n",
            9,
        );
        assert!(e.contains("scores a candidate list"), "{e}");
    }

    #[test]
    fn parser_errors_name_their_line() {
        // An unknown key, nested, at its own line, with the nearest key.
        let e = err_at("gold: g\ngate:\n  alpha: 0.1\n  rules:\n    - metric: mrr\n      max_drop: 0.1\n      stratum: all\n", 7);
        assert!(e.contains("invalid config: unknown field `stratum`"), "{e}");
        assert!(e.contains("did you mean `strata`?"), "{e}");
        // A value of the wrong type.
        let e = err_at("gold: g\ngate:\n  resamples: lots\n", 3);
        assert!(e.contains("invalid type: string \"lots\", expected u32"), "{e}");
        let e = err_at(
            "gold: g\nretrievers:\n  - name: a\n    command: python3 r.py\n",
            4,
        );
        assert!(e.contains("expected a list here"), "{e}");
        // Syntax.
        let e = err_at("gold: g\nbaselines: b: c\n", 2);
        assert!(
            e.contains("invalid config: mapping values are not allowed"),
            "{e}"
        );
        // A key given twice.
        let e = err_at("gold: g\nbaselines: b\nbaselines: c\n", 3);
        assert!(e.contains("duplicate key `baselines`"), "{e}");
        assert!(!e.contains("DuplicateKeyPolicy"), "{e}");
        // A missing key, at the map that lacks it.
        let e = err_at("gold: g\ngate:\n  rules:\n    - max_drop: 1\n", 4);
        assert!(e.contains("missing field `metric`"), "{e}");
    }

    #[test]
    fn a_stratum_the_gold_set_lacks_is_reported_at_its_name() {
        let c = parse("gold: g\ngate:\n  rules:\n    - metric: mrr\n      max_drop: 0\n      strata:\n        - overall\n        - how_to\n    - metric: ndcg@10\n      max_drop: 0\n      strata: zzz\n").unwrap();
        let e = c
            .check_against_gold(Path::new("g"), &["how-to".into()])
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("conf/rgate.yaml:8: rule for mrr: stratum `how_to`"),
            "{e}"
        );
        let e = c
            .check_against_gold(Path::new("g"), &["how_to".into()])
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("conf/rgate.yaml:11: rule for ndcg@10: stratum `zzz`"),
            "{e}"
        );
    }

    #[test]
    fn huge_and_tiny_numbers_are_echoed_short() {
        let e = err_at("gold: g\ngate:\n  lock_timeout_s: 1e300\n", 3);
        assert!(
            e.contains("lock_timeout_s 1e300 is outside [0, 86400] seconds"),
            "{e}"
        );
        let e = err_at("gold: g\ngate:\n  alpha: -1e-320\n", 3);
        assert!(e.contains("alpha -1e-320 is outside (0, 1)"), "{e}");
        let e = err_at(
            "gold: g\nretrievers:\n  - name: h\n    command: [a]\n    timeout_s: 1e25\n",
            5,
        );
        assert!(e.contains("timeout_s 1e25 is outside"), "{e}");
        assert!(e.len() < 200, "{e}");
        // Ordinary values print as before.
        let e = err_at("gold: g\ngate:\n  max_missing: 1.5\n", 3);
        assert!(e.contains("max_missing 1.5 is outside [0, 1]"), "{e}");
        let e = err_at("gold: g\ngate:\n  lock_timeout_s: 100000\n", 3);
        assert!(e.contains("lock_timeout_s 100000 is outside"), "{e}");
    }

    /// What serde_yaml 0.9 accepted and refused, kept: configs were
    /// written against it.
    #[test]
    fn the_yaml_accepted_is_what_serde_yaml_accepted() {
        // Anchors without aliases, quoted and unquoted scalars, flow and
        // block lists, comments, a byte order mark.
        let c = parse("\u{feff}# rgate\ngold: &g 'gold.yaml' # the set\nbaselines: \"b\"\nmetrics: [mrr, 'ndcg@10']\nretrievers:\n  - {name: a, run: r}\ngate:\n  seed: 0o17\n  resamples: 0x3e8\n  rules:\n    - metric: mrr\n      max_drop: 1\n      strata: [yes, on, no]\n").unwrap();
        assert_eq!(c.gold, Path::new("conf/gold.yaml"));
        assert_eq!(c.gate.seed, 15);
        assert_eq!(c.gate.resamples, 1000);
        assert_eq!(c.gate.rules[0].tolerance, Tolerance::Absolute(1.0));
        // YAML 1.2: yes/on/no are text, so stratum names.
        assert_eq!(
            c.gate.rules[0].strata,
            StrataSel::List(vec!["yes".into(), "on".into(), "no".into()])
        );
        // Bare `retrievers:` and `rules:` are empty lists.
        let c = parse("gold: g\nretrievers:\ngate:\n  rules:\nmetrics: [mrr]\n").unwrap();
        assert!(c.retrievers.is_empty());
        assert_eq!(c.gate.rules.len(), 1, "the default rule");
        // An empty value is empty text, refused by the check that follows.
        let e = err_at("gold: g\nretrievers:\n  - name:\n    run: r\n", 3);
        assert!(e.contains("retriever name `` is not allowed"), "{e}");
        // `.inf` reaches the range check.
        let e = err_at("gold: g\ngate:\n  alpha: .inf\n", 3);
        assert!(e.contains("alpha inf is outside (0, 1)"), "{e}");
        // Refused, as before: quoted numbers, `1_000`, `017`, a float where
        // a count goes, `<<` merges, a number or boolean as a stratum name,
        // two documents.
        for (text, line, says) in [
            (
                "gold: g\ngate:\n  alpha: \"0.5\"\n",
                3,
                "invalid type: string \"0.5\"",
            ),
            (
                "gold: g\ngate:\n  resamples: 1_000\n",
                3,
                "invalid type: string \"1_000\"",
            ),
            (
                "gold: g\ngate:\n  resamples: 0100\n",
                3,
                "invalid type: string \"0100\"",
            ),
            (
                "gold: g\ngate:\n  resamples: 1e3\n",
                3,
                "invalid type: floating point",
            ),
            (
                "gold: g\nbaseline_depth: 1_0\n",
                2,
                "baseline_depth `1_0` is neither",
            ),
            ("gold: g\n<<: {strata: s}\n", 2, "unknown field `<<`"),
            (
                "gold: g\ngate:\n  rules:\n    - metric: mrr\n      max_drop: 1\n      strata: [1]\n",
                6,
                "expected a stratum name",
            ),
            (
                "gold: g\ngate:\n  rules:\n    - metric: mrr\n      max_drop: 1\n      strata: true\n",
                6,
                "invalid type: boolean",
            ),
            // The second document, at its first key.
            ("gold: g\n---\ngold: h\n", 3, "only single YAML document expected"),
        ] {
            let e = err_at(text, line);
            assert!(e.contains(says), "{text}: {e}");
        }
        let e = parse("# nothing yet\n").unwrap_err().to_string();
        assert!(e.contains("invalid config"), "{e}");
        // Aliases are refused before the parser sees them.
        let e = err_at("gold: &g g.yaml\nstrata: *g\n", 2);
        assert!(e.contains("refused: YAML aliases"), "{e}");
    }

    #[test]
    fn default_rules_gate_every_metric() {
        let c = parse("gold: g\nmetrics: [mrr]\n").unwrap();
        assert_eq!(c.gate.rules.len(), 1);
        assert_eq!(c.depth(), Some(10), "no cutoff in use: 10 ranked ids");
    }

    /// Issue 41, item 9: a front end holding integers of any size (a
    /// Python int) refuses each with the check's own words, and no word
    /// is truncated into a valid level.
    #[test]
    fn counts_and_levels_as_words_get_the_checks_messages() {
        assert_eq!(resamples_from_word("10000"), Ok(10_000));
        let msg = |r: std::result::Result<u32, (String, String)>| r.unwrap_err().0;
        assert_eq!(
            msg(resamples_from_word("-1")),
            "resamples -1 is too few for a p-value"
        );
        assert_eq!(
            msg(resamples_from_word("10")),
            "resamples 10 is too few for a p-value"
        );
        assert_eq!(
            msg(resamples_from_word("99999999999999999999999")),
            "resamples 99999999999999999999999 is more than the 1000000 rgate accepts"
        );
        assert_eq!(
            msg(resamples_from_word("4294967295")),
            "resamples 4294967295 is more than the 1000000 rgate accepts"
        );
        assert_eq!(
            msg(resamples_from_word("1.5")),
            "resamples `1.5` is not a whole number"
        );
        assert_eq!(
            msg(resamples_from_word("-")),
            "resamples `-` is not a whole number"
        );
        assert_eq!(msg(resamples_from_word("")), "resamples `` is not a whole number");
        assert_eq!(seed_from_word("18446744073709551615"), Ok(u64::MAX));
        for word in ["-1", "18446744073709551616", "1.0", "+", ""] {
            assert_eq!(
                seed_from_word(word).unwrap_err().0,
                format!("seed {word} is not a whole number from 0 to 18446744073709551615")
            );
        }
        assert_eq!(relevance_level_from_word("2"), Ok(2));
        for (word, want) in [
            (
                "0",
                "relevance level 0 is below 1: judged-not-relevant (grade 0) labels would count as relevant",
            ),
            (
                "-5",
                "relevance level -5 is below 1: judged-not-relevant (grade 0) labels would count as relevant",
            ),
            ("1.9", "`1.9` is not an integer grade"),
            ("True", "`True` is not an integer grade"),
            ("99999999999", "`99999999999` is not an integer grade"),
        ] {
            assert_eq!(relevance_level_from_word(word).unwrap_err().0, want, "{word}");
        }
    }
}
