//! Reports: each command builds a view of its results and renders it in the
//! requested format. Nothing here decides anything; verdicts arrive decided.

pub mod baseline;
pub mod compare;
pub mod eval;
pub mod gate;
pub mod table;
