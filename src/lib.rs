//! rgate: a regression gate for retrieval quality.
//!
//! The library holds everything the binary does, so tests and benchmarks
//! reach the internals: [`gold`] and [`run`] read inputs, [`judge`] and
//! [`metrics`] score rankings exactly as trec_eval does, [`eval`] averages,
//! and the reports render what the commands decided.

pub mod baseline;
pub mod cli;
pub mod commands;
pub mod config;
pub mod diag;
pub mod eval;
pub mod fsutil;
pub mod gate;
pub mod gold;
pub mod judge;
pub mod metrics;
pub mod report;
pub mod run;
pub mod stats;
