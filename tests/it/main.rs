//! rgate's integration tests, one binary: each module is one former
//! `tests/<name>.rs` (so `cargo test --test it cli_gate::` runs what
//! `cargo test --test cli_gate` did), and `common` holds the scratch-project
//! helper they share. One binary links once after a source change, where
//! thirty linked thirty times.
//!
//! Every test here runs in the same process as the others, on many threads:
//! none may change the process's environment or working directory (a child
//! `rgate` gets its own through [`common::TestProject`] or
//! [`common::rgate`]).

mod common;
mod sim;

mod action_comment;
mod baseline_depth;
mod calibrate;
mod calibration;
mod ci_action;
mod ci_origin;
mod cli_baseline_ref;
mod cli_command_retriever;
mod cli_compare;
mod cli_completions;
mod cli_ergonomics;
mod cli_eval;
mod cli_gate;
mod cli_github;
mod cli_goldbuild;
mod cli_init;
mod cli_injection;
mod cli_inputs;
mod cli_policy;
mod cli_spans;
mod cli_stages;
mod compare_values;
mod conformance_eval;
mod eval_ci;
mod gate_decisions;
mod gate_family;
mod gate_judge;
mod gate_labels_meet;
mod gate_stages;
mod gate_values;
mod gold_agreement;
mod gold_judge;
mod gold_labelflow;
mod gold_records;
mod gold_speed;
mod gold_team;
mod html_report;
mod input_limits;
mod knobs_compare;
mod knobs_curve;
mod layering;
mod measures_gate;
mod measures_ir_measures;
mod measures_trec_eval;
mod neutralise;
mod power;
mod ppi_conformance;
mod ppi_draw;
mod ppi_gate;
mod ppi_labels;
mod processes;
mod properties_eval;
mod properties_gate;
mod properties_stats;
mod pyspeed_action;
mod reports_tables;
mod run_formats;
mod skew_order;
mod snapshots;
mod spans;
mod stats_conformance;
mod store_safety;
