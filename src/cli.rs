//! The command line, as clap derive types. Global options are accepted before
//! or after the subcommand.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::run::RunFormat;

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
    pub format: Option<Format>,
    /// Write the report here instead of stdout (`-` = stdout)
    #[arg(long, global = true, value_name = "PATH")]
    pub output: Option<PathBuf>,
    /// Colour in terminal output (NO_COLOR is honoured under auto)
    #[arg(long, global = true, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
    /// No warnings on stderr (errors are still printed)
    #[arg(long, short, global = true)]
    pub quiet: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Table,
    Json,
    Markdown,
    Csv,
    Junit,
    /// trec_eval-style `metric<TAB>qid<TAB>value` lines (eval only)
    Trec,
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
}

/// Inputs every evaluating command shares.
#[derive(Debug, Args, Clone)]
pub struct GoldArgs {
    /// Gold set: YAML, JSON, JSONL, or TREC qrels
    #[arg(long, value_name = "FILE")]
    pub gold: PathBuf,
    /// Strata for TREC qrels: `qid<TAB>stratum` per line
    #[arg(long, value_name = "FILE")]
    pub strata: Option<PathBuf>,
    /// Metrics, comma separated or repeated (e.g. recall@10,mrr@10,ndcg@10)
    #[arg(long, short, value_delimiter = ',', value_name = "LIST")]
    pub metrics: Vec<String>,
    /// Lowest grade that counts as relevant (trec_eval -l)
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub relevance_level: Option<i32>,
    /// Run format, when detection from content is not wanted
    #[arg(long, value_enum)]
    pub run_format: Option<RunFormat>,
}

#[derive(Debug, Args)]
pub struct EvalArgs {
    #[command(flatten)]
    pub gold: GoldArgs,
    /// The run to evaluate: TREC, JSON or JSONL
    #[arg(long, value_name = "FILE")]
    pub run: PathBuf,
    /// Show each query's values
    #[arg(long)]
    pub per_query: bool,
    /// Show means per stratum and their macro mean
    #[arg(long)]
    pub by_stratum: bool,
}
