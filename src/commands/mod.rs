//! One module per subcommand: glue between validated arguments, the library
//! and the reports. No metric or statistic is computed here.

pub mod baseline;
pub mod compare;
pub mod eval;
pub mod gate;
pub mod gold;

use anyhow::Result;

use crate::cli::GoldArgs;
use crate::diag::Warnings;
use crate::gold::GoldSet;
use crate::judge::{self, QueryContext, QueryLabels};
use crate::metrics::{self, Metric};

/// A gold set prepared for judging runs: label lookups and per-query
/// contexts at one relevance level, and the metrics to compute.
pub struct Prepared {
    pub gold: GoldSet,
    pub labels: Vec<QueryLabels>,
    pub contexts: Vec<QueryContext>,
    pub metrics: Vec<Metric>,
    pub relevance_level: i32,
    pub warnings: Warnings,
}

impl Prepared {
    pub fn new(gold: GoldSet, warnings: Warnings, metrics: Vec<Metric>, relevance_level: i32) -> Prepared {
        let labels = judge::label_index(&gold);
        let contexts = judge::contexts(&gold, relevance_level);
        Prepared {
            gold,
            labels,
            contexts,
            metrics,
            relevance_level,
            warnings,
        }
    }

    /// From the shared command-line inputs.
    pub fn from_args(args: &GoldArgs) -> Result<Prepared> {
        let metrics = if args.metrics.is_empty() {
            metrics::default_metrics()
        } else {
            metrics::parse_list(&args.metrics)?
        };
        let (gold, warnings) = GoldSet::load(&args.gold, args.strata.as_deref())?;
        Ok(Prepared::new(
            gold,
            warnings,
            metrics,
            args.relevance_level.unwrap_or(1),
        ))
    }
}

/// A summary's rows as the baseline store keeps them: `all`, then strata.
pub fn scope_means(summary: &crate::eval::Summary) -> Vec<crate::baseline::ScopeMeans> {
    std::iter::once(&summary.all)
        .chain(summary.strata.iter())
        .map(|r| crate::baseline::ScopeMeans {
            scope: r.scope.clone(),
            n: r.n,
            means: r.means.clone(),
        })
        .collect()
}
