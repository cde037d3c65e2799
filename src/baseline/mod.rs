//! The baseline store: one JSON file per retriever plus a JSONL history,
//! committed to git and reviewed like code (SPEC "Baseline store").
//!
//! A baseline keeps raw per-query values, not just means (criterion keeps
//! its raw samples for the same reason: a paired test needs them), and each
//! query's ranked ids to the deepest cutoff in use, so that when gold labels
//! are fixed later the stored run can be re-scored instead of raising a
//! false alarm.
//!
//! Files are written for review: fixed key order and one query per line, so
//! a baseline update shows up in a pull request as a readable diff. Writes
//! are atomic and serialized by a lock file; a newer schema or a corrupt file
//! is refused and never overwritten.
//!
//! [`format`] is the file (schema, parse, write), [`store`] the directory
//! (record, recover, history), [`lock`] the lock that serializes writers,
//! and [`history`] one line of a retriever's history. Where and when a
//! result was recorded is [`crate::origin`]'s business, not the store's.

pub mod format;
pub mod history;
pub mod lock;
pub mod store;

pub use format::{text_sha, Baseline, ScopeMeans, StoredQuery, SCHEMA_VERSION};
pub use history::{HistoryEntry, THIS_RUN};
pub use lock::Lock;
pub use store::Store;
