//! GitHub Actions: the job summary, annotations and step outputs of a gate
//! run (SPEC "GitHub Actions"). Thin on purpose: the outcome arrives
//! decided, and this module only renders it where Actions looks.
//!
//! Workflow commands (`::error title=...::message`) are escaped as the
//! Actions toolkit escapes them (`packages/core/src/command.ts`): in the
//! message `%`, CR and LF become `%25`, `%0D`, `%0A`; in a property value
//! also `:` and `,` become `%3A` and `%2C`. The runner unescapes the same
//! set, so user text (a stratum name, a warning quoting a file) can neither
//! end the command early nor start a new one on a line of its own.
//! Annotations go to stderr, which the runner reads for commands as it
//! reads stdout, so stdout stays clean for the report.
//!
//! Outputs use the file-command form with a random delimiter
//! (`name<<DELIM`, value, `DELIM`), as `core.setOutput` writes them, so a
//! path with a newline cannot forge another output.

use std::fmt::Write as _;
use std::fs::OpenOptions;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use anyhow::Result;

use crate::diag::input_error;
use crate::gate::{Check, GateOutcome, RetrieverOutcome};
use crate::report::gate::{amount, p_text};
use crate::report::table::{f4, signed4};

/// GitHub refuses a step summary above 1 MiB; the full report is folded in
/// only while the whole stays under this.
pub const SUMMARY_LIMIT: usize = 1000 * 1024;

/// The Actions environment of this process, when it runs in a workflow.
#[derive(Debug, Clone, PartialEq)]
pub struct Actions {
    pub step_summary: Option<PathBuf>,
    pub output: Option<PathBuf>,
    /// Where a report goes when no `--report-dir` was given.
    pub temp: PathBuf,
}

impl Actions {
    /// `Some` only when `GITHUB_ACTIONS=true`: nothing of this module
    /// happens outside Actions.
    pub fn from_env() -> Option<Actions> {
        Actions::from_vars(|k| std::env::var_os(k).map(PathBuf::from))
    }

    pub fn from_vars(var: impl Fn(&str) -> Option<PathBuf>) -> Option<Actions> {
        if var("GITHUB_ACTIONS")? != Path::new("true") {
            return None;
        }
        let nonempty = |k: &str| var(k).filter(|p| !p.as_os_str().is_empty());
        Some(Actions {
            step_summary: nonempty("GITHUB_STEP_SUMMARY"),
            output: nonempty("GITHUB_OUTPUT"),
            temp: nonempty("RUNNER_TEMP").unwrap_or_else(std::env::temp_dir),
        })
    }

    /// Appends the summary, writes the outputs, and returns the annotation
    /// lines for the caller to print (on stderr).
    pub fn publish(&self, outcome: &GateOutcome, full_markdown: &str, report: &Path) -> Result<Vec<String>> {
        if let Some(path) = &self.step_summary {
            append(path, summary(full_markdown, report).as_bytes())?;
        }
        if let Some(path) = &self.output {
            let mut text = output_entry("verdict", outcome.verdict().name());
            text += &output_entry("report", &report.display().to_string());
            append(path, text.as_bytes())?;
        }
        Ok(annotations(outcome))
    }
}

fn append(path: &Path, bytes: &[u8]) -> Result<()> {
    let r = (|| -> std::io::Result<()> {
        let mut f = OpenOptions::new().create(true).append(true).open(path)?;
        f.write_all(bytes)
    })();
    r.map_err(|e| input_error(path, None, format!("cannot append: {e}")))
}

/// A workflow command's message.
pub fn escape_data(s: &str) -> String {
    s.replace('%', "%25").replace('\r', "%0D").replace('\n', "%0A")
}

/// A workflow command's property value.
pub fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

/// What a failed check says, in words: the drop, the values, the tolerance
/// and the corrected p the decision used, each written as the report writes
/// it ([`amount`], [`p_text`]), so the summary and the report agree digit
/// for digit.
fn failure_text(c: &Check, r: &RetrieverOutcome) -> String {
    let mut s = format!(
        "{} on {} fell {}: {} -> {} (delta {}",
        c.cmp.metric,
        c.cmp.stratum,
        amount(-c.cmp.delta),
        f4(c.cmp.baseline),
        f4(c.cmp.current),
        signed4(c.cmp.delta)
    );
    if let Some(t) = c.tolerance {
        let _ = write!(s, ", tolerance {}", amount(t));
    }
    let _ = write!(s, ", p_adj {})", p_text(c.cmp.p_adjusted, r));
    s
}

/// One `::error` per failed check, then one `::warning` per warning (the
/// gold set's, then each retriever's).
pub fn annotations(outcome: &GateOutcome) -> Vec<String> {
    let mut out = Vec::new();
    // A judge that fails the gate is an error, as `on_low: warn` is a
    // warning (among the gate's warnings below).
    if let Some(j) = outcome.judge.as_ref().filter(|j| j.fails()) {
        let why = j
            .reason
            .as_deref()
            .unwrap_or("the model's agreement with people is below gate.judge.min_kappa");
        out.push(format!(
            "::error title={}::{}",
            escape_property("rgate: the judge failed the gate"),
            escape_data(&format!("the judge failed (gate.judge, on_low: fail): {why}"))
        ));
    }
    for r in &outcome.retrievers {
        for c in r.checks.iter().filter(|c| r.fails(c)) {
            let title = format!(
                "rgate: {} regressed on {} ({})",
                r.name, c.cmp.metric, c.cmp.stratum
            );
            out.push(format!(
                "::error title={}::{}",
                escape_property(&title),
                escape_data(&format!("{}: {}", r.name, failure_text(c, r)))
            ));
        }
    }
    for w in &outcome.warnings {
        out.push(format!("::warning title=rgate::{}", escape_data(w)));
    }
    for r in &outcome.retrievers {
        for w in &r.warnings {
            out.push(format!(
                "::warning title={}::{}",
                escape_property(&format!("rgate: {}", r.name)),
                escape_data(w)
            ));
        }
    }
    out
}

/// The job summary: the Markdown report, which leads with the decision
/// as the pull request comment does (headline naming what failed, the
/// failed checks, the lost queries, the next steps, the rest folded; at
/// most [`crate::report::MARKDOWN_LIMIT`] bytes), then where the report
/// file is. A report over GitHub's 1 MiB summary limit (it cannot be:
/// the report is capped far below) is replaced by its path.
pub fn summary(markdown: &str, report: &Path) -> String {
    let path = crate::escape::markdown_code(&report.display().to_string());
    let mut s = if markdown.len() + 200 <= SUMMARY_LIMIT {
        markdown.to_string()
    } else {
        format!(
            "The report ({} KiB) does not fit in a job summary; it is at {path} (the `report` output).\n",
            markdown.len() / 1024
        )
    };
    let _ = writeln!(s, "\n<sub>This report: {path} (the `report` output).</sub>");
    s
}

/// One output in the file-command form. The delimiter is random and
/// checked against the value, as the toolkit does.
pub fn output_entry(name: &str, value: &str) -> String {
    let mut delim = random_delimiter();
    while value.contains(&delim) {
        delim = random_delimiter();
    }
    format!("{name}<<{delim}\n{value}\n{delim}\n")
}

fn random_delimiter() -> String {
    use rand::RngCore;
    let mut bytes = [0u8; 16];
    rand::thread_rng().fill_bytes(&mut bytes);
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!("ghadelimiter_{hex}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_matches_the_toolkit() {
        // command.ts: escapeData replaces % first, so "%0A" typed by a user
        // stays literal text after the runner unescapes it.
        assert_eq!(escape_data("50% a\r\nb %0A"), "50%25 a%0D%0Ab %250A");
        assert_eq!(escape_property("a:b,c%\n"), "a%3Ab%2Cc%25%0A");
        // Data keeps ':' and ',' (only properties need them escaped).
        assert_eq!(escape_data("x: y, z"), "x: y, z");
    }

    #[test]
    fn outputs_survive_newlines_in_values() {
        let e = output_entry("report", "a\nb");
        let lines: Vec<&str> = e.lines().collect();
        assert_eq!(lines.len(), 4);
        let delim = lines[0].strip_prefix("report<<").unwrap();
        assert!(
            delim.starts_with("ghadelimiter_") && delim.len() == 13 + 32,
            "{delim}"
        );
        assert_eq!(&lines[1..], &["a", "b", delim]);
    }

    #[test]
    fn only_inside_actions() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| pairs.iter().find(|(n, _)| *n == k).map(|(_, v)| PathBuf::from(v))
        };
        assert_eq!(Actions::from_vars(env(&[])), None);
        assert_eq!(Actions::from_vars(env(&[("GITHUB_ACTIONS", "false")])), None);
        let a = Actions::from_vars(env(&[
            ("GITHUB_ACTIONS", "true"),
            ("GITHUB_STEP_SUMMARY", "/s"),
            ("GITHUB_OUTPUT", ""),
            ("RUNNER_TEMP", "/t"),
        ]))
        .unwrap();
        assert_eq!(a.step_summary.as_deref(), Some(Path::new("/s")));
        assert_eq!(a.output, None);
        assert_eq!(a.temp, Path::new("/t"));
    }
}
