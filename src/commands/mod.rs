//! One module per subcommand: glue between validated arguments, the library
//! and the reports. No metric or statistic is computed here.

pub mod baseline;
pub mod compare;
pub mod completions;
pub mod eval;
pub mod gate;
pub mod gold;
pub mod hook;
pub mod init;

use anyhow::Result;

use crate::cli::GoldArgs;
use crate::prepared::Prepared;

/// The shared inputs of `eval` and `compare`, from their arguments.
pub fn prepare(args: &GoldArgs) -> Result<Prepared> {
    Prepared::load(
        &args.gold,
        args.strata.as_deref(),
        &args.metrics,
        args.relevance_level.unwrap_or(1),
    )
}
