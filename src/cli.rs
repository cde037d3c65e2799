//! The command line, as clap derive types. Global options are accepted before
//! or after the subcommand.

use std::path::{Path, PathBuf};

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::config::{TestKind, Weighting};
use crate::report::Format;
use crate::run::RunFormat;
use crate::stats::Alternative;

#[derive(Debug, Parser)]
#[command(
    name = "rgate",
    version,
    about = "A regression gate for retrieval quality",
    long_about = "rgate computes retrieval metrics (exactly as trec_eval does), compares runs with \
paired significance tests, and fails CI when a gated metric dropped by more than its tolerance.",
    after_help = "Exit codes: 0 pass, 1 regression (gate failed or baseline update refused), 2 error."
)]
pub struct Cli {
    #[command(flatten)]
    pub global: Global,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Args, Clone)]
pub struct Global {
    /// Config file [default: config/rgate.yaml]
    #[arg(long, global = true, env = "RGATE_CONFIG", value_name = "PATH")]
    pub config: Option<PathBuf>,
    /// Output format
    #[arg(long, global = true, value_enum)]
    pub format: Option<FormatArg>,
    /// Write the report here instead of stdout (`-` = stdout)
    #[arg(long, global = true, value_name = "PATH")]
    pub output: Option<PathBuf>,
    /// Colour in terminal output (auto honours NO_COLOR, CLICOLOR_FORCE and TERM=dumb)
    #[arg(long, global = true, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
    /// Less output: no warnings on stderr (errors are still printed); the gate's table report keeps the verdict and the failures only
    #[arg(long, short, global = true)]
    pub quiet: bool,
}

impl Global {
    /// The report format asked for, table when none was.
    pub fn format(&self) -> Format {
        self.format.map_or(Format::Table, Format::from)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FormatArg {
    Table,
    Json,
    Markdown,
    Csv,
    Junit,
    /// trec_eval-style `metric<TAB>qid<TAB>value` lines (eval only)
    Trec,
    /// One self-contained HTML page (gate, compare, eval): no network fetch
    Html,
}

impl From<FormatArg> for Format {
    fn from(f: FormatArg) -> Format {
        match f {
            FormatArg::Table => Format::Table,
            FormatArg::Json => Format::Json,
            FormatArg::Markdown => Format::Markdown,
            FormatArg::Csv => Format::Csv,
            FormatArg::Junit => Format::Junit,
            FormatArg::Trec => Format::Trec,
            FormatArg::Html => Format::Html,
        }
    }
}

/// `--test`: the library's [`TestKind`], spelled for the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TestArg {
    Bootstrap,
    #[value(alias = "ttest")]
    TTest,
    Randomization,
}

impl From<TestArg> for TestKind {
    fn from(t: TestArg) -> TestKind {
        match t {
            TestArg::Bootstrap => TestKind::Bootstrap,
            TestArg::TTest => TestKind::TTest,
            TestArg::Randomization => TestKind::Randomization,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum WeightingArg {
    /// Every query weighs the same (the mean over all queries)
    Micro,
    /// Every stratum weighs the same (the mean of stratum means)
    Macro,
}

impl From<WeightingArg> for Weighting {
    fn from(w: WeightingArg) -> Weighting {
        match w {
            WeightingArg::Micro => Weighting::Micro,
            WeightingArg::Macro => Weighting::Macro,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RunFormatArg {
    Trec,
    Json,
    Jsonl,
}

impl From<RunFormatArg> for RunFormat {
    fn from(f: RunFormatArg) -> RunFormat {
        match f {
            RunFormatArg::Trec => RunFormat::Trec,
            RunFormatArg::Json => RunFormat::Json,
            RunFormatArg::Jsonl => RunFormat::Jsonl,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Compute metrics of one run on a gold set (trec_eval's job)
    Eval(EvalArgs),
    /// Compare runs on a gold set with paired significance tests
    Compare(CompareArgs),
    /// Check retrievers against their baselines; exit 1 on a regression
    Gate(GateArgs),
    /// Record, show and list baselines
    #[command(subcommand)]
    Baseline(BaselineCommand),
    /// Validate a gold set and describe what it can detect
    #[command(subcommand)]
    Gold(GoldCommand),
    /// Print a shell completion script (e.g. `rgate completions bash`)
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the man page as roff (`rgate man > rgate.1`)
    Man {
        /// Write every page (rgate.1 and one per subcommand) into this directory
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
    },
    /// Write a commented config, a gold-set template and a GitHub workflow
    Init,
    /// Install git hooks that run the gate
    #[command(subcommand)]
    Hook(HookCommand),
}

#[derive(Debug, Subcommand)]
pub enum HookCommand {
    /// Write a git pre-push hook that runs `rgate gate`
    Install {
        /// Replace a pre-push hook rgate did not write, or one edited since
        /// (the old one is kept beside it as `pre-push.old`)
        #[arg(long)]
        force: bool,
    },
}

/// `--relevance-level`, checked where the config's value is.
fn parse_relevance_level(s: &str) -> Result<i32, String> {
    crate::config::relevance_level_from_word(s).map_err(|(msg, hint)| format!("{msg}\nhint: {hint}"))
}

/// compare's `--resamples`, read and checked by the one function the
/// Python module's `resamples=` goes through (issue 41, item 9).
fn parse_resamples(s: &str) -> Result<u32, String> {
    crate::config::resamples_from_word(s).map_err(|(msg, hint)| format!("{msg}\nhint: {hint}"))
}

/// `--seed` of compare and eval, as the Python module's `seed=` is read.
fn parse_seed(s: &str) -> Result<u64, String> {
    crate::config::seed_from_word(s).map_err(|(msg, hint)| format!("{msg}\nhint: {hint}"))
}

/// `--span-coverage`, checked where the config's value is.
fn parse_span_coverage(s: &str) -> Result<f64, String> {
    let c: f64 = s.parse().map_err(|_| format!("`{s}` is not a number"))?;
    crate::config::check_span_coverage(c).map_err(|(msg, hint)| format!("{msg}\nhint: {hint}"))?;
    Ok(c)
}

/// `--labels`: people, model or ppi.
fn parse_labels(s: &str) -> Result<crate::config::LabelMode, String> {
    crate::config::LabelMode::parse(s)
        .ok_or_else(|| format!("`{s}` is not a label set\nhint: use people, model or ppi"))
}

/// `NAME=PATH`, for overriding a retriever's run file.
pub fn parse_run_override(s: &str) -> Result<(String, PathBuf), String> {
    match s.split_once('=') {
        Some((n, p)) if !n.is_empty() && !p.is_empty() => Ok((n.to_string(), PathBuf::from(p))),
        _ => Err(format!("expected NAME=PATH, got `{s}`")),
    }
}

#[derive(Debug, Args)]
pub struct CompareArgs {
    #[command(flatten)]
    pub gold: GoldArgs,
    /// Runs to compare, as PATH or NAME=PATH; each run after the first is
    /// compared with the first
    // One run is let through to the pipeline, whose check (fewer than two
    // runs) every front end shares, so its message is the one shown.
    #[arg(required = true, num_args = 1.., value_name = "RUN")]
    pub runs: Vec<PathBuf>,
    /// Significance test
    #[arg(long, value_enum, default_value_t = TestArg::Randomization)]
    pub test: TestArg,
    /// Bootstrap resamples (and Monte Carlo draws of the randomization test)
    #[arg(long, default_value_t = crate::config::DEFAULT_RESAMPLES, value_name = "B", allow_negative_numbers = true, value_parser = parse_resamples)]
    pub resamples: u32,
    /// Seed of the resampling stream (ChaCha8)
    #[arg(long, default_value_t = crate::config::DEFAULT_SEED, allow_negative_numbers = true, value_parser = parse_seed)]
    pub seed: u64,
    /// Alternative hypothesis for p-values: less = the run fell below the first
    #[arg(long, value_enum, default_value_t = AlternativeArg::TwoSided)]
    pub alternative: AlternativeArg,
    /// Significance level; CIs are at 1 - alpha
    #[arg(long, default_value_t = crate::config::DEFAULT_ALPHA)]
    pub alpha: f64,
    /// Also compare within each stratum
    #[arg(long)]
    pub by_stratum: bool,
    /// How strata weigh in the overall mean
    #[arg(long, value_enum, default_value_t = WeightingArg::Micro)]
    pub weighting: WeightingArg,
    /// Chunk map of a run's chunking, for gold sets with span labels:
    /// NAME=PATH for the run named NAME; a bare PATH once for every run, or
    /// once per run in the runs' order
    #[arg(long = "chunks", value_name = "[NAME=]PATH")]
    pub chunks: Vec<PathBuf>,
    /// Correction across every row of every variant, one family: holm
    /// (family-wise error), bh (Benjamini-Hochberg, false discovery rate)
    /// or none
    #[arg(long, value_enum, default_value_t = CompareCorrectionArg::Holm)]
    pub correction: CompareCorrectionArg,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CompareCorrectionArg {
    Holm,
    Bh,
    None,
}

impl From<CompareCorrectionArg> for crate::compare::Correction {
    fn from(c: CompareCorrectionArg) -> crate::compare::Correction {
        match c {
            CompareCorrectionArg::Holm => crate::compare::Correction::Holm,
            CompareCorrectionArg::Bh => crate::compare::Correction::Bh,
            CompareCorrectionArg::None => crate::compare::Correction::None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum AlternativeArg {
    TwoSided,
    Less,
    Greater,
}

impl From<AlternativeArg> for Alternative {
    fn from(a: AlternativeArg) -> Alternative {
        match a {
            AlternativeArg::TwoSided => Alternative::TwoSided,
            AlternativeArg::Less => Alternative::Less,
            AlternativeArg::Greater => Alternative::Greater,
        }
    }
}

/// What `gate` and `baseline update` put in place of a retriever's
/// configured run, candidate list and chunk map.
#[derive(Debug, Args)]
pub struct OverrideArgs {
    /// Use this run file for a retriever instead of the configured one
    #[arg(long = "run", value_name = "NAME=PATH", value_parser = parse_run_override)]
    pub runs: Vec<(String, PathBuf)>,
    /// Use this candidate list for a reranked retriever instead of the
    /// configured one
    #[arg(long = "candidates", value_name = "NAME=PATH", value_parser = parse_run_override)]
    pub candidates: Vec<(String, PathBuf)>,
    /// Use this chunk map for a retriever instead of its `chunks:` (gold
    /// sets with span labels): a run of another chunking comes with its map
    #[arg(long = "chunks", value_name = "NAME=PATH", value_parser = parse_run_override)]
    pub chunks: Vec<(String, PathBuf)>,
}

#[derive(Debug, Args)]
pub struct GateArgs {
    /// Retrievers to gate (default: all configured)
    #[arg(value_name = "NAME")]
    pub names: Vec<String>,
    #[command(flatten)]
    pub overrides: OverrideArgs,
    /// Read the baselines as they are at this git ref (e.g. origin/main), so
    /// a pull request that edits its own baseline is gated against the target's
    #[arg(long, value_name = "REF")]
    pub baseline_ref: Option<String>,
    /// Append this result to each retriever's history
    #[arg(long)]
    pub record: bool,
    /// Also write report.md, report.json, junit.xml and report.html here
    #[arg(long, value_name = "DIR")]
    pub report_dir: Option<PathBuf>,
    /// Chunk texts for the HTML report (--format html, --report-dir): JSONL
    /// {"id", "text"}; each lost query's top ids are shown with their text
    #[arg(long, value_name = "FILE")]
    pub corpus: Option<PathBuf>,
    /// A retriever without a baseline is an error instead of a pass
    #[arg(long)]
    pub require_baseline: bool,
    /// Labels to score with, instead of the config's `labels:` (people,
    /// model or ppi)
    #[arg(long, value_name = "SET", value_parser = parse_labels)]
    pub labels: Option<crate::config::LabelMode>,
}

#[derive(Debug, Subcommand)]
pub enum BaselineCommand {
    /// Record the current runs as baselines (refused when the gate fails)
    Update(UpdateArgs),
    /// Show a stored baseline
    Show {
        #[arg(value_name = "NAME")]
        name: String,
    },
    /// List a retriever's recorded results over time
    History {
        #[arg(value_name = "NAME")]
        name: String,
        /// Also draw the gated metrics over time as an SVG chart
        #[arg(long, value_name = "FILE.svg")]
        plot: Option<PathBuf>,
        /// Show and plot this stratum's means instead of the overall ones
        #[arg(long, value_name = "NAME")]
        stratum: Option<String>,
    },
}

#[derive(Debug, Args)]
pub struct UpdateArgs {
    /// Retrievers to record (default: all configured)
    #[arg(value_name = "NAME")]
    pub names: Vec<String>,
    #[command(flatten)]
    pub overrides: OverrideArgs,
    /// Why this baseline is recorded (kept in the file and the history)
    #[arg(long)]
    pub note: Option<String>,
    /// Record even though the gate fails (needs --note)
    #[arg(long)]
    pub allow_regression: bool,
}

#[derive(Debug, Subcommand)]
pub enum GoldCommand {
    /// Check a gold set: exit 0 valid, 1 findings, 2 unreadable
    Validate(GoldPick),
    /// Strata sizes, labels, grades, and the smallest drop each rule can detect
    Stats(GoldPick),
    /// Sample real queries from a log, stratified (JSONL queries on stdout)
    Sample(SampleArgs),
    /// Pool the top candidates of several runs into a labeling sheet
    Pool(PoolArgs),
    /// Label a sheet in the terminal: 0-3 grade, a accept, s skip, u undo, n/p move, q quit
    Label(LabelArgs),
    /// Let a command (e.g. a model) suggest grades for the rows no person graded
    Suggest(SuggestArgs),
    /// Grade the sheet's ungraded rows with a language model (OpenAI or Anthropic API)
    Judge(JudgeArgs),
    /// Draw queries for people to verify, at random per stratum among the
    /// model-graded ones; writes their sheet and records the draw
    VerifySample(VerifySampleArgs),
    /// Merge a sheet's verified labels into a gold set, with provenance
    Import(ImportArgs),
    /// Rewrite chunk-id labels as span labels through the old chunking's map
    Migrate(MigrateArgs),
    /// How far two sources of grades agree (model vs person, person vs person): kappa, confusion
    Agreement(AgreementArgs),
}

#[derive(Debug, Args)]
pub struct AgreementArgs {
    /// A labeling sheet (JSONL or .csv), or a gold set whose provenance
    /// keeps the other grades (`gold import` carries them from the sheet)
    #[arg(value_name = "SHEET_OR_GOLD")]
    pub input: PathBuf,
    /// The two sources to compare, each `model`, `person`, or a labeler's
    /// name (e.g. gpt-4o,ana; person,person for two people)
    #[arg(long, default_value = "model,person", value_name = "A,B", value_parser = parse_between)]
    pub between: (String, String),
    /// Lowest grade that counts as relevant for Cohen's kappa (1-3)
    #[arg(long, default_value_t = 1, value_name = "L", allow_negative_numbers = true, value_parser = parse_agreement_level)]
    pub relevance_level: i32,
}

/// `--between A,B`: two non-empty names.
fn parse_between(s: &str) -> Result<(String, String), String> {
    match s.split_once(',') {
        Some((a, b)) if !a.trim().is_empty() && !b.trim().is_empty() && !b.contains(',') => {
            Ok((a.trim().to_string(), b.trim().to_string()))
        }
        _ => Err(format!(
            "`{s}` is not two sources A,B\nhint: each is `model`, `person` or a labeler's name: --between model,person"
        )),
    }
}

/// `--relevance-level` of `gold agreement`: grades are 0-3, so a level
/// past 3 would make every pair "not relevant".
fn parse_agreement_level(s: &str) -> Result<i32, String> {
    let level = parse_relevance_level(s)?;
    if level > 3 {
        return Err(format!(
            "relevance level {level} is above the highest grade, 3\nhint: sheets grade 0-3; use 1 (the default), 2 or 3"
        ));
    }
    Ok(level)
}

#[derive(Debug, Args)]
pub struct MigrateArgs {
    /// Gold set to rewrite in place (default: the config's)
    #[arg(long, value_name = "FILE")]
    pub gold: Option<PathBuf>,
    /// Chunk map of the chunking the labels were written against (JSONL
    /// {id, doc, start, end})
    #[arg(long, value_name = "OLD_CHUNKS")]
    pub chunks: PathBuf,
}

#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("size").required(true).args(["per_stratum", "total"])))]
pub struct SampleArgs {
    /// The query log: JSONL objects, or CSV with a header
    #[arg(long, value_name = "FILE")]
    pub log: PathBuf,
    /// Up to N distinct queries from every stratum
    #[arg(long, value_name = "N")]
    pub per_stratum: Option<usize>,
    /// N distinct queries in all, split across strata in proportion
    #[arg(long, value_name = "N")]
    pub total: Option<usize>,
    /// The field (or column) holding the stratum; rows without one are
    /// "default" [default: the first of stratum, strata, segment, type,
    /// query_type, category, intent, kind, class, topic that looks like one]
    #[arg(long, value_name = "F")]
    pub stratum_field: Option<String>,
    /// The field (or column) holding the query text
    #[arg(long, default_value = "text", value_name = "F")]
    pub text_field: String,
    /// Seed of the sample: the same seed gives the same sample everywhere
    #[arg(long, default_value_t = crate::config::DEFAULT_SEED)]
    pub seed: u64,
}

#[derive(Debug, Args)]
pub struct PoolArgs {
    /// The queries: `gold sample`'s output, or any gold set (with --holes:
    /// default the --gold set's queries)
    #[arg(long, value_name = "FILE", required_unless_present = "holes")]
    pub queries: Option<PathBuf>,
    /// A run to pool from (repeat for each retriever)
    #[arg(long = "run", required = true, value_name = "FILE")]
    pub runs: Vec<PathBuf>,
    /// How many of each run's top results to pool per query
    #[arg(long, value_name = "K")]
    pub depth: u32,
    /// Chunk texts for the labeler: JSONL {"id", "text"}
    #[arg(long, value_name = "FILE")]
    pub corpus: Option<PathBuf>,
    /// A gold set whose labels pre-fill the sheet
    #[arg(long = "gold", value_name = "FILE")]
    pub gold_set: Option<PathBuf>,
    /// Seed of the candidates' order within a query
    #[arg(long, default_value_t = crate::config::DEFAULT_SEED)]
    pub seed: u64,
    /// Only the holes: the pairs in the runs' top K that --gold has no
    /// label for (the chunks judged@K counts as unjudged)
    #[arg(long, requires = "gold_set")]
    pub holes: bool,
    /// With --holes and span labels: the chunk map locating the runs' ids
    /// (JSONL {id, doc, start, end})
    #[arg(long, value_name = "FILE", requires = "holes")]
    pub chunks: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct LabelArgs {
    /// The labeling sheet (JSONL, or .csv); saved after every grade
    #[arg(value_name = "SHEET")]
    pub sheet: PathBuf,
    /// Your name, recorded with each grade [default: $USER]
    #[arg(long, value_name = "NAME")]
    pub labeler: Option<String>,
    /// A second opinion: hide every other grade (a model's, another
    /// person's) and record yours beside them, for `gold agreement`
    #[arg(long)]
    pub blind: bool,
}

#[derive(Debug, Args)]
pub struct SuggestArgs {
    /// The labeling sheet
    #[arg(value_name = "SHEET")]
    pub sheet: PathBuf,
    /// The program and its arguments as one quoted string, split as a POSIX
    /// shell splits words (no shell runs it), e.g. --command "python3
    /// judge.py --model m"; or give them last, after `--`. It reads
    /// {"query_id", "query", "chunk_id", "text"} lines and writes
    /// {"query_id", "chunk_id", "grade"} lines
    #[arg(
        long,
        value_name = "CMD",
        required_unless_present = "argv",
        conflicts_with = "argv"
    )]
    pub command: Option<String>,
    /// Words that followed --command's one value (the old `--command prog
    /// args` form): refused with a hint rather than clap's bare "unexpected
    /// argument"
    #[arg(hide = true, value_name = "WORDS")]
    pub stray: Vec<String>,
    /// The program and its arguments, taken as they are (after `--`)
    #[arg(last = true, value_name = "PROGRAM")]
    pub argv: Vec<String>,
    /// The name its grades are recorded under [default: the script's file
    /// name, e.g. judge.py for `python3 judge.py`, else the program's]
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,
    /// Stop the command after this many seconds
    #[arg(long, default_value_t = 3600, value_name = "S")]
    pub timeout_s: u64,
}

/// Which wire format `gold judge` speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ProviderArg {
    /// OpenAI chat completions (also Azure, vLLM, Ollama, llama.cpp, LM Studio)
    Openai,
    /// Anthropic's Messages API
    Anthropic,
}

#[derive(Debug, Args)]
pub struct JudgeArgs {
    /// The labeling sheet (JSONL, or .csv); its ungraded rows are graded
    #[arg(value_name = "SHEET")]
    pub sheet: PathBuf,
    /// The model to ask (as the API names it)
    #[arg(long, value_name = "NAME")]
    pub model: String,
    /// The API's wire format
    #[arg(long, value_enum, default_value = "openai", value_name = "P")]
    pub provider: ProviderArg,
    /// The API's base URL [default: https://api.openai.com/v1, https://api.anthropic.com]
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,
    /// The environment variable holding the key [default: OPENAI_API_KEY, ANTHROPIC_API_KEY]
    #[arg(long, value_name = "VAR")]
    pub api_key_env: Option<String>,
    /// A prompt template with {query} and {passage} [default: a 0-3 grade, UMBRELA-style]
    #[arg(long, value_name = "FILE")]
    pub prompt: Option<PathBuf>,
    /// Requests in flight at once
    #[arg(long, default_value_t = 4, value_name = "N")]
    pub concurrency: usize,
    /// Send at most N requests (the rest stay ungraded; cached answers are free)
    #[arg(long, value_name = "N")]
    pub max_requests: Option<usize>,
    /// The answers' cache [default: .rgate-judge-cache.jsonl beside the sheet]
    #[arg(long, value_name = "FILE")]
    pub cache: Option<PathBuf>,
    /// The name grades are recorded under [default: the model's name]
    #[arg(long, value_name = "LABELER")]
    pub name: Option<String>,
    /// Give up on a request after S seconds (then retried, up to 5 times)
    #[arg(long, default_value_t = 60, value_name = "S")]
    pub timeout_s: u64,
    /// Also grade N passages made only of a query's words and N that tell the grader which grade to give, and report how many fooled the model
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub canary: usize,
    /// Also grade rows people graded, kept beside their grade as an opinion (for `gold agreement`)
    #[arg(long)]
    pub second_opinion: bool,
    /// Say how many requests and prompt characters a run would send; send none
    #[arg(long)]
    pub dry_run: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PreferArg {
    Sheet,
    Gold,
}

#[derive(Debug, Args)]
pub struct ImportArgs {
    /// The labeling sheet
    #[arg(value_name = "SHEET")]
    pub sheet: PathBuf,
    /// The gold set to merge into (YAML, JSON or JSONL); created when missing
    #[arg(long, value_name = "GOLD")]
    pub into: PathBuf,
    /// Also import model suggestions no person has verified
    #[arg(long)]
    pub accept_unverified: bool,
    /// Which side wins a conflict (default: none; conflicts write nothing, exit 1)
    #[arg(long, value_enum, value_name = "SIDE")]
    pub prefer: Option<PreferArg>,
    /// Drop the example queries `rgate init` wrote (q-001..q-003, matched
    /// by id and text) from the gold set, in the same write
    #[arg(long)]
    pub drop_template: bool,
    /// Write both label sets: the model's grades under `model:` for every
    /// query, people's as `relevant` with `verified: true` for the queries
    /// people graded in full (for `labels: ppi`)
    #[arg(long, conflicts_with = "accept_unverified")]
    pub with_model: bool,
}

#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("size").required(true).args(["per_stratum", "fraction"])))]
pub struct VerifySampleArgs {
    /// The gold set with model grades; the draw is recorded in it
    #[arg(long, value_name = "GOLD")]
    pub gold: PathBuf,
    /// Up to N queries from every stratum
    #[arg(long, value_name = "N")]
    pub per_stratum: Option<usize>,
    /// This share (0 to 1] of every stratum's model-graded queries, rounded up
    #[arg(long, value_name = "F")]
    pub fraction: Option<f64>,
    /// Seed of the draw: the same seed draws the same queries on any machine
    #[arg(long, value_name = "S")]
    pub seed: u64,
    /// Show the model's grades in the sheet (hidden by default: people who
    /// see them tend to agree)
    #[arg(long)]
    pub show_model: bool,
    /// Discard a draw the gold set records already
    #[arg(long)]
    pub replace: bool,
    /// Chunk texts for the people grading: JSONL {"id", "text"}
    #[arg(long, value_name = "FILE")]
    pub corpus: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct GoldPick {
    /// Gold set to read (default: the config's)
    #[arg(long, value_name = "FILE")]
    pub gold: Option<PathBuf>,
    /// A query log (JSONL or CSV) to compare the gold set's strata mix with
    #[arg(long, value_name = "FILE")]
    pub log: Option<PathBuf>,
    /// The log's stratum field [default: detected, as `gold sample` does]
    #[arg(long, value_name = "F")]
    pub stratum_field: Option<String>,
    /// The log's text field
    #[arg(long, default_value = "text", value_name = "F")]
    pub text_field: String,
    /// Strata for TREC qrels
    #[arg(long, value_name = "FILE")]
    pub strata: Option<PathBuf>,
}

/// Inputs every evaluating command shares.
#[derive(Debug, Args, Clone)]
pub struct GoldArgs {
    /// Gold set: YAML, JSON, JSONL, or TREC qrels
    // An Option only so that `eval --list-metrics` (exclusive, which clap
    // lets stand without the required arguments) parses; clap still
    // requires it otherwise. Read it through [`GoldArgs::gold_path`].
    #[arg(long, value_name = "FILE", required = true)]
    pub gold: Option<PathBuf>,
    /// Strata for TREC qrels: `qid<TAB>stratum` per line
    #[arg(long, value_name = "FILE")]
    pub strata: Option<PathBuf>,
    /// Metrics, comma separated or repeated (e.g. recall@10,mrr@10,ndcg@10)
    #[arg(long, short, value_delimiter = ',', value_name = "LIST")]
    pub metrics: Vec<String>,
    /// Lowest grade that counts as relevant (trec_eval -l); at least 1
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = parse_relevance_level)]
    pub relevance_level: Option<i32>,
    /// Run format, when detection from content is not wanted
    #[arg(long, value_enum)]
    pub run_format: Option<RunFormatArg>,
    /// Share of a span label that retrieved chunks must cover to credit it,
    /// and of a chunk that must lie in a span to count as relevant (0, 1]
    #[arg(long, value_name = "SHARE", value_parser = parse_span_coverage)]
    pub span_coverage: Option<f64>,
    /// Labels to score with: people's only (default), the model's where no
    /// person graded (biased), or ppi (model grades corrected by a verified
    /// random sample: prediction-powered inference)
    #[arg(long, value_name = "SET", value_parser = parse_labels)]
    pub labels: Option<crate::config::LabelMode>,
}

impl GoldArgs {
    /// `--gold`, which clap demands unless `--list-metrics` stands alone.
    pub fn gold_path(&self) -> anyhow::Result<&Path> {
        self.gold
            .as_deref()
            .ok_or_else(|| crate::diag::usage_error("--gold is required", "add --gold FILE"))
    }
}

impl EvalArgs {
    /// `--run`, which clap demands unless `--list-metrics` stands alone.
    pub fn run_path(&self) -> anyhow::Result<&Path> {
        self.run
            .as_deref()
            .ok_or_else(|| crate::diag::usage_error("--run is required", "add --run FILE"))
    }
}

#[derive(Debug, Args)]
pub struct EvalArgs {
    #[command(flatten)]
    pub gold: GoldArgs,
    /// The run to evaluate: TREC, JSON or JSONL
    // An Option for --list-metrics' sake, as `GoldArgs::gold`.
    #[arg(long, value_name = "FILE", required = true)]
    pub run: Option<PathBuf>,
    /// Chunk map of the run's chunking (JSONL {id, doc, start, end}), for
    /// gold sets with span labels
    #[arg(long, value_name = "FILE")]
    pub chunks: Option<PathBuf>,
    /// The candidate list the run was reranked from (TREC, JSON or JSONL):
    /// scores `candidates:` metrics, each final metric's ceiling, and the
    /// stage that lost each query
    #[arg(long, value_name = "FILE")]
    pub candidates: Option<PathBuf>,
    /// The final stage's cutoff for loss attribution (default: the
    /// smallest cutoff among the final metrics)
    #[arg(long, value_name = "K", requires = "candidates", value_parser = clap::value_parser!(u32).range(1..))]
    pub cutoff: Option<u32>,
    /// Show each query's values
    #[arg(long)]
    pub per_query: bool,
    /// Show means per stratum and their macro mean
    #[arg(long)]
    pub by_stratum: bool,
    /// Measure names in --format trec: rgate's, or trec_eval's (`P_10`,
    /// `ndcg_cut_10`, `recip_rank`) in trec_eval's layout and order
    #[arg(long, value_enum, default_value_t = NamesArg::Rgate)]
    pub names: NamesArg,
    /// Bootstrap resamples for the 95% interval on every mean (0: none;
    /// default 1000, fewer above 4000 queries: 4 million draws, at least
    /// 200); --format trec shows no interval and computes none
    #[arg(long, value_name = "B")]
    pub resamples: Option<u32>,
    /// Seed of the intervals' resampling stream (ChaCha8)
    #[arg(long, default_value_t = crate::config::DEFAULT_SEED, allow_negative_numbers = true, value_parser = parse_seed)]
    pub seed: u64,
    /// A cutoff metric at every k of a range, overall and per stratum, each
    /// mean with its 95% interval, e.g. recall@1..100 (repeat for more)
    #[arg(long = "curve", value_name = "METRIC@A..B")]
    pub curves: Vec<String>,
    /// With --curve: per stratum, the smallest k whose mean reaches T with
    /// 95% confidence (a one-sided binomial bound): the depth to rerank
    #[arg(long, value_name = "T", requires = "curves")]
    pub target: Option<f64>,
    /// Print every measure rgate computes, with its aliases and its
    /// trec_eval and ir_measures names, and exit (no other argument)
    #[arg(long, exclusive = true)]
    pub list_metrics: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum NamesArg {
    Rgate,
    #[value(name = "trec_eval")]
    TrecEval,
}
