//! `rgate gate`: every configured retriever against its baseline.

use std::path::Path;

use anyhow::Result;

use super::output::Guard;
use super::{use_color, CliWatch};
use crate::cli::{GateArgs, Global, OverrideArgs};
use crate::config::{Candidates, Config};
use crate::diag::Warnings;
use crate::fsutil::{emit, write_atomic};
use crate::gate::GateOutcome;
use crate::github::Actions;
use crate::origin::Ci;
use crate::pipeline::{self, GateOptions, Overrides, RunSource};
use crate::report::gate::{GateView, Invocation, DEFAULT_WIDTH};
use crate::report::Format;

/// `--run`, `--candidates` and `--chunks NAME=PATH`.
pub fn overrides(args: &OverrideArgs) -> Overrides {
    let sources = |list: &[(String, std::path::PathBuf)]| {
        list.iter()
            .map(|(n, p)| (n.clone(), RunSource::File(p.clone())))
            .collect()
    };
    Overrides {
        runs: sources(&args.runs),
        candidates: sources(&args.candidates),
        chunks: args.chunks.clone(),
    }
}

/// What `gate` and `baseline update` read and write besides the report:
/// the config, the gold set, every configured retriever's run, chunk map
/// and candidate list, the overrides, and the baselines directory.
pub fn guard(config: &Config, args: &OverrideArgs) -> Guard {
    let mut g = Guard::default();
    g.file(&config.path, "the config")
        .file(&config.gold, "the gold set")
        .maybe(config.strata.as_ref(), "the strata file")
        .dir(&config.baselines, "the baselines directory");
    for r in &config.retrievers {
        if r.command.is_none() {
            g.file(&r.run, format!("the run of `{}`", r.name));
        }
        g.maybe(r.chunks.as_ref(), format!("the chunk map of `{}`", r.name));
        if let Some(Candidates::File(p)) = &r.candidates {
            g.file(p, format!("the candidate list of `{}`", r.name));
        }
    }
    for (what, list) in [
        ("--run", &args.runs),
        ("--candidates", &args.candidates),
        ("--chunks", &args.chunks),
    ] {
        for (name, path) in list {
            g.file(path, format!("{what} {name}="));
        }
    }
    g
}

/// Reports in table, Markdown and JSON carry the warnings; CSV and JUnit
/// cannot, so there they go to stderr.
pub fn emit_warnings(outcome: &GateOutcome, format: Format, quiet: bool) {
    if !matches!(format, Format::Csv | Format::Junit) {
        return;
    }
    let mut warnings = Warnings::default();
    for w in &outcome.warnings {
        warnings.push(w.clone());
    }
    for r in &outcome.retrievers {
        for w in &r.warnings {
            warnings.push(format!("{}: {w}", r.name));
        }
    }
    warnings.emit(quiet);
}

/// In a GitHub Actions job: the summary, the `verdict` and `report`
/// outputs, and the annotations (on stderr). The report output is the
/// `--report-dir` Markdown, or a copy under `$RUNNER_TEMP`.
fn publish_to_actions(
    actions: &Actions,
    outcome: &GateOutcome,
    report_dir: Option<&Path>,
    invocation: &Invocation,
) -> Result<()> {
    let markdown = GateView {
        outcome,
        command: "gate",
        color: false,
        quiet: false,
        invocation: Some(invocation),
        width: DEFAULT_WIDTH,
    }
    .render(Format::Markdown)?;
    let report = match report_dir {
        Some(dir) => dir.join("report.md"),
        None => {
            let path = actions.temp.join(ACTIONS_REPORT);
            write_atomic(&path, markdown.as_bytes())?;
            path
        }
    };
    for line in actions.publish(outcome, &markdown, &report)? {
        eprintln!("{line}");
    }
    Ok(())
}

/// What `--report-dir` holds.
const REPORT_DIR_FILES: [&str; 4] = ["report.md", "report.json", "junit.xml", "report.html"];

/// The Markdown report under `$RUNNER_TEMP` when there is no `--report-dir`.
const ACTIONS_REPORT: &str = "rgate-report.md";

/// report.md, report.json, junit.xml and report.html, uncoloured, into
/// `dir`.
fn write_report_dir(view: &GateView, dir: &Path) -> Result<()> {
    let plain = GateView {
        color: false,
        quiet: false,
        ..*view
    };
    let [md, json, junit, html] = REPORT_DIR_FILES;
    write_atomic(&dir.join(md), plain.render(Format::Markdown)?.as_bytes())?;
    write_atomic(&dir.join(json), plain.render(Format::Json)?.as_bytes())?;
    write_atomic(&dir.join(junit), plain.render(Format::Junit)?.as_bytes())?;
    write_atomic(&dir.join(html), plain.render(Format::Html)?.as_bytes())?;
    Ok(())
}

pub fn run(args: &GateArgs, global: &Global) -> Result<u8> {
    let mut config = Config::load(global.config.as_deref())?;
    if let Some(l) = args.labels {
        config.labels = l;
    }
    let actions = Actions::from_env();
    let mut guard = guard(&config, &args.overrides);
    if let Some(dir) = &args.report_dir {
        for f in REPORT_DIR_FILES {
            guard.file(dir.join(f), "a file of --report-dir");
        }
    }
    if let Some(a) = &actions {
        guard
            .file(a.temp.join(ACTIONS_REPORT), "the report for the Actions job")
            .maybe(a.step_summary.as_ref(), "the job summary ($GITHUB_STEP_SUMMARY)")
            .maybe(a.output.as_ref(), "the step's outputs ($GITHUB_OUTPUT)");
    }
    guard.maybe(args.corpus.as_ref(), "the corpus");
    guard.check(global.output.as_deref())?;
    let format = global.format();
    let opts = GateOptions {
        names: args.names.clone(),
        overrides: overrides(&args.overrides),
        baseline_ref: args.baseline_ref.clone(),
        require_baseline: args.require_baseline,
        ci: Ci::from_env(),
        detail: format == Format::Html || args.report_dir.is_some(),
        corpus: args.corpus.clone(),
    };
    let watch = CliWatch { quiet: global.quiet };
    let gated = pipeline::gate(&config, &opts, &watch)?;
    let outcome = &gated.outcome;

    emit_warnings(outcome, format, global.quiet);
    let invocation = invocation(&config, global);
    let view = GateView {
        outcome,
        command: "gate",
        color: use_color(global),
        quiet: global.quiet,
        invocation: Some(&invocation),
        width: terminal_width(),
    };
    emit(global.output.as_deref(), &view.render(format)?)?;
    if let Some(dir) = &args.report_dir {
        write_report_dir(&view, dir)?;
    }
    if let Some(actions) = &actions {
        publish_to_actions(actions, outcome, args.report_dir.as_deref(), &invocation)?;
    }
    if args.record {
        gated.record(&config, &watch)?;
    }
    Ok(outcome.exit_code())
}

/// What the next steps' commands need from the command line: the
/// `--config` given, and the baselines directory relative to where rgate
/// runs when it can be (the commands are pasted there).
pub fn invocation(config: &Config, global: &Global) -> Invocation {
    let cwd = std::env::current_dir().ok();
    let rel = |p: &Path| -> String {
        cwd.as_deref()
            .and_then(|c| p.strip_prefix(c).ok())
            .unwrap_or(p)
            .display()
            .to_string()
    };
    Invocation {
        config: global.config.as_deref().map(|p| p.display().to_string()),
        baselines: Some(rel(&config.baselines)),
    }
}

/// The terminal's width: the terminal's own when stdout is one, else
/// `COLUMNS`; unbounded otherwise (a pipe or a file: a program reading
/// the table gets every column, one line per row).
pub fn terminal_width() -> usize {
    use std::io::IsTerminal;
    if std::io::stdout().is_terminal() {
        if let Ok((w, _)) = crossterm::terminal::size() {
            if w >= 20 {
                return usize::from(w);
            }
        }
    }
    std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse::<usize>().ok())
        .filter(|&w| w >= 20)
        .unwrap_or(usize::MAX)
}
