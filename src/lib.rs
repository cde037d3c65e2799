//! rgate: a regression gate for retrieval quality.
//!
//! The library holds everything the binary does, so tests and benchmarks
//! reach the internals: [`gold`] and [`run`] read inputs, [`judge`] and
//! [`metrics`] score rankings exactly as trec_eval does, [`eval`] averages,
//! [`pipeline`] runs each command's work from plain options, and the
//! reports render what it decided.
//!
//! Layers, top to bottom; a module uses its own layer and the layers below
//! it, never one above (and [`diag`], [`escape`], [`fsutil`] and [`input`]
//! serve every layer):
//!
//! | layer | modules | role |
//! |---|---|---|
//! | command line | `main.rs`, [`cli`], [`commands`] | only these know clap and the process |
//! | reports | [`report`], [`github`] | render the views they are given; decide nothing |
//! | pipeline | [`pipeline`] | each command's whole run as one library call, for every front end: inputs loaded, runs read, scored, decided, recorded |
//! | decisions | [`gate`], [`compare`], [`eval`], [`stages`], [`curve`], [`ppi`] | the verdict is decided here, once; [`stages`] says which stage lost a query; [`curve`] the depth that reaches a target; [`ppi`] estimates from model grades and a verified sample |
//! | gold building | [`goldbuild`] | sample, pool, label, suggest, judge, import |
//! | store, config | [`baseline`], [`gitref`], [`origin`], [`config`] | baselines on disk; where and when a result was recorded; one validated config |
//! | loaded inputs | [`prepared`], [`metrics`], [`run`], [`retriever`] | runs judged, metrics computed |
//! | judging | [`judge`], [`gold`], [`chunks`] | the gold set, label lookups, chunk maps |
//! | statistics | [`stats`] | pure: slices and a seeded stream, no I/O |
//!
//! Scoring one ranking by hand, with trec_eval's names beside rgate's:
//!
//! ```
//! use rgate::judge::{Hit, QueryContext, Ranking};
//! use rgate::metrics::Metric;
//!
//! // Relevant documents (grade 1) retrieved at ranks 2 and 5 of 10; the
//! // gold set knows 4 relevant ones.
//! let ranking = Ranking { num_ret: 10, hits: vec![Hit { rank: 2, grade: 1 }, Hit { rank: 5, grade: 1 }], chunks: None };
//! let ctx = QueryContext { num_rel: 4, ideal: vec![1.0; 4], relevance_level: 1, zeros: 0 };
//! let recall: Metric = "R@5".parse().unwrap();
//! assert_eq!(recall.name(), "recall@5");
//! assert_eq!(recall.trec_eval_name().as_deref(), Some("recall_5"));
//! assert_eq!(recall.compute(&ranking, &ctx), 0.5);
//! let rr: Metric = "RR".parse().unwrap();
//! assert_eq!(rr.compute(&ranking, &ctx), 0.5);
//! ```
//!
//! Holm's step-down correction, as the gate applies it across a
//! retriever's checks:
//!
//! ```
//! let adjusted = rgate::stats::holm(&[0.01, 0.04, 0.03, 0.005]);
//! assert_eq!(adjusted, vec![0.03, 0.06, 0.06, 0.02]);
//! ```

pub mod baseline;
pub mod chunks;
pub mod cli;
pub mod commands;
pub mod compare;
pub mod config;
pub mod curve;
pub mod diag;
pub mod escape;
pub mod eval;
pub mod fsutil;
pub mod gate;
pub mod github;
pub mod gitref;
pub mod gold;
pub mod goldbuild;
pub mod input;
pub mod judge;
pub mod metrics;
pub mod origin;
pub mod pipeline;
pub mod ppi;
pub mod prepared;
pub mod report;
pub mod retriever;
pub mod run;
pub mod stages;
pub mod stats;
