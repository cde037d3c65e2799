//! Reports: each command builds a view of its results ([`gate::GateView`],
//! [`compare::CompareView`], [`eval::EvalView`], [`baseline::ShowView`],
//! [`baseline::HistoryView`]) and one [`Exporter`] per format renders it,
//! as hyperfine's `export` module does: a format is one file here and one
//! line of [`EXPORTERS`]. The words and tables several formats share live
//! beside each view; the format files only lay them out. Nothing here
//! decides anything; verdicts arrive decided.

pub mod agreement;
pub mod baseline;
pub mod compare;
mod csv;
pub mod eval;
pub mod gate;
pub mod gold;
pub mod goldbuild;
mod html;
mod json;
mod junit;
mod markdown;
pub mod metrics;
pub mod stages;
pub mod table;
mod terminal;
mod trec;

use crate::diag::usage_error;
use anyhow::Result;
use baseline::{HistoryView, ShowView};
use compare::CompareView;
use eval::EvalView;
use gate::GateView;
pub use json::num;
pub use markdown::COMMENT_LIMIT as MARKDOWN_LIMIT;

/// The forms a report takes. Each command renders the subset its exporters
/// support and refuses the rest; the command line maps its `--format` onto
/// these.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Table,
    Json,
    Markdown,
    Csv,
    Junit,
    /// trec_eval-style `metric<TAB>qid<TAB>value` lines (eval only).
    Trec,
    /// One self-contained page (gate, compare, eval).
    Html,
}

/// Every format's exporter, in the order messages list formats.
const EXPORTERS: &[(Format, &dyn Exporter)] = &[
    (Format::Table, &terminal::Terminal),
    (Format::Json, &json::Json),
    (Format::Markdown, &markdown::Markdown),
    (Format::Csv, &csv::Csv),
    (Format::Junit, &junit::Junit),
    (Format::Trec, &trec::Trec),
    (Format::Html, &html::Html),
];

impl Format {
    /// The spelling of `--format`.
    pub fn name(self) -> &'static str {
        self.exporter().name()
    }

    /// The exporter that writes this format.
    pub fn exporter(self) -> &'static dyn Exporter {
        EXPORTERS
            .iter()
            .find(|(f, _)| *f == self)
            .map(|(_, e)| *e)
            .unwrap_or(&terminal::Terminal)
    }
}

/// What a report is of: each command that prints one renders one of these.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Report {
    /// `gate` and `baseline update`: a decided [`crate::gate::GateOutcome`].
    Gate,
    Compare,
    Eval,
    BaselineShow,
    BaselineHistory,
}

impl Report {
    /// Every kind of report, for a format that renders them all.
    pub const ALL: &'static [Report] = &[
        Report::Gate,
        Report::Compare,
        Report::Eval,
        Report::BaselineShow,
        Report::BaselineHistory,
    ];
}

/// One output format. A format renders the reports it lists in
/// [`Exporter::reports`]; for any other, the method's default refuses with
/// the words the command line uses before any work starts.
pub trait Exporter: Sync {
    /// The spelling of `--format`.
    fn name(&self) -> &'static str;

    /// The reports this format renders.
    fn reports(&self) -> &'static [Report];

    fn gate(&self, v: &GateView) -> Result<String> {
        Err(cannot_print(v.command, self.name(), Report::Gate))
    }

    fn compare(&self, _v: &CompareView) -> Result<String> {
        Err(cannot_print("compare", self.name(), Report::Compare))
    }

    fn eval(&self, _v: &EvalView) -> Result<String> {
        Err(cannot_print("eval", self.name(), Report::Eval))
    }

    fn baseline_show(&self, _v: &ShowView) -> Result<String> {
        Err(cannot_print("baseline show", self.name(), Report::BaselineShow))
    }

    fn baseline_history(&self, _v: &HistoryView) -> Result<String> {
        Err(cannot_print(
            "baseline history",
            self.name(),
            Report::BaselineHistory,
        ))
    }
}

/// The formats that render `report`, in [`EXPORTERS`]' order.
pub fn formats_for(report: Report) -> Vec<Format> {
    EXPORTERS
        .iter()
        .filter(|(_, e)| e.reports().contains(&report))
        .map(|(f, _)| *f)
        .collect()
}

/// `rgate {command}` refusing `--format {format}`, with the formats it
/// does print.
fn cannot_print(command: &str, format: &str, report: Report) -> anyhow::Error {
    refuse_format(command, format, &formats_for(report))
}

/// The error for a format a command cannot print, given the ones it can.
pub fn refuse_format(command: &str, format: &str, allowed: &[Format]) -> anyhow::Error {
    if allowed.is_empty() {
        usage_error(
            format!("`rgate {command}` takes no --format"),
            "drop --format; its output has one form",
        )
    } else {
        usage_error(
            format!("`rgate {command}` cannot print --format {format}"),
            format!("it prints {}", or_list(allowed)),
        )
    }
}

/// `table, json or csv`.
fn or_list(formats: &[Format]) -> String {
    let names: Vec<&str> = formats.iter().map(|f| f.name()).collect();
    match names.split_last() {
        Some((last, [])) => last.to_string(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Format::*;

    /// The formats each report is printed in, as the command line listed
    /// them by hand before the exporters said it themselves.
    #[test]
    fn each_report_is_printed_in_the_formats_it_was() {
        assert_eq!(
            formats_for(Report::Gate),
            [Table, Json, Markdown, Csv, Junit, Html]
        );
        assert_eq!(
            formats_for(Report::Eval),
            [Table, Json, Markdown, Csv, Trec, Html]
        );
        assert_eq!(formats_for(Report::Compare), [Table, Json, Markdown, Csv, Html]);
        for r in [Report::BaselineShow, Report::BaselineHistory] {
            assert_eq!(formats_for(r), [Table, Json, Markdown, Csv], "{r:?}");
        }
    }

    #[test]
    fn every_format_has_its_own_exporter_and_name() {
        let names: Vec<&str> = EXPORTERS.iter().map(|(f, _)| f.name()).collect();
        assert_eq!(
            names,
            ["table", "json", "markdown", "csv", "junit", "trec", "html"]
        );
    }

    /// A format asked for a report it does not render says so in the
    /// command line's words, naming the formats that do.
    #[test]
    fn an_unsupported_report_is_refused_in_the_cli_words() {
        let e = format!("{:#}", cannot_print("compare", "junit", Report::Compare));
        assert!(e.contains("`rgate compare` cannot print --format junit"), "{e}");
        assert!(e.contains("it prints table, json, markdown, csv or html"), "{e}");
    }
}
