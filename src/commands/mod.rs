//! One module per subcommand: its arguments mapped onto a [`crate::pipeline`]
//! call, a renderer picked, warnings printed, an exit code returned. No
//! metric or statistic is computed here.

pub mod baseline;
pub mod compare;
pub mod completions;
pub mod entry;
pub mod eval;
pub mod gate;
pub mod gold;
pub mod goldbuild;
pub mod hook;
pub mod init;
pub mod output;

use std::path::Path;

use anyhow::Result;

use crate::cli::{BaselineCommand, ColorChoice, Command, Global, GoldArgs, GoldCommand, HookCommand};
use crate::diag::usage_error;
use crate::pipeline::{GoldInput, Watch};
use crate::report::{self, Format, Report};

/// The shared inputs of `eval` and `compare`, from their arguments.
pub fn gold_input(args: &GoldArgs) -> Result<GoldInput> {
    Ok(GoldInput {
        path: args.gold_path()?.to_path_buf(),
        strata: args.strata.clone(),
        metrics: args.metrics.clone(),
        relevance_level: args.relevance_level,
        span_coverage: args.span_coverage,
        memory: None,
        labels: args.labels.unwrap_or_default(),
    })
}

/// The gold set and strata file of `eval` and `compare`.
pub fn gold_guard(args: &GoldArgs) -> Result<output::Guard> {
    let mut g = output::Guard::default();
    g.file(args.gold_path()?, "the gold set")
        .maybe(args.strata.as_ref(), "the strata file");
    Ok(g)
}

/// Whether stdout gets colour. Under `auto`, anstream's rules: never with
/// `NO_COLOR`, always with `CLICOLOR_FORCE`, otherwise only on a terminal
/// whose `TERM` is not `dumb` (and not with `CLICOLOR=0`). A report written
/// to a file (`--output`) is never coloured unless `--color always`.
pub fn use_color(global: &Global) -> bool {
    match global.color {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            global.output.as_deref().is_none_or(|p| p == Path::new("-"))
                && anstream::AutoStream::choice(&std::io::stdout()) != anstream::ColorChoice::Never
        }
    }
}

/// What the pipeline shows on stderr while it works: a retriever command's
/// progress (whatever `--quiet` says: it is redrawn in place, and only on a
/// terminal), lock waits and written baselines (unless quiet).
pub struct CliWatch {
    pub quiet: bool,
}

/// A [`Progress`] cleared when the pipeline drops it.
struct Ticker(Progress);

impl Drop for Ticker {
    fn drop(&mut self) {
        self.0.done();
    }
}

impl Watch for CliWatch {
    fn command_started(&self, label: &str, total: usize) -> Box<dyn FnMut(u64) + '_> {
        let mut ticker = Ticker(Progress::new(label, total, false));
        Box::new(move |n| ticker.0.update(n))
    }

    fn lock_wait(&self, message: &str) {
        if !self.quiet {
            eprintln!("{message}");
        }
    }

    fn recorded(&self, retriever: &str, path: &Path) {
        if !self.quiet {
            eprintln!(
                "recorded baseline for `{retriever}`: {}",
                crate::escape::terminal(&path.display().to_string())
            );
        }
    }
}

/// The report formats a command can produce: for a report, the formats
/// whose exporter renders it. Anything else is refused before any work
/// starts: a table printed in place of the JUnit file a CI step asked for
/// would pass silently and mislead.
pub fn formats(cmd: &Command) -> (&'static str, Vec<Format>) {
    use Format::*;
    let renders = |name, r| (name, Ok(r));
    let only = |name, formats: &'static [Format]| (name, Err(formats));
    let (name, prints) = match cmd {
        Command::Eval(_) => renders("eval", Report::Eval),
        Command::Compare(_) => renders("compare", Report::Compare),
        Command::Gate(_) => renders("gate", Report::Gate),
        Command::Baseline(BaselineCommand::Update(_)) => renders("baseline update", Report::Gate),
        Command::Baseline(BaselineCommand::Show { .. }) => renders("baseline show", Report::BaselineShow),
        Command::Baseline(BaselineCommand::History { .. }) => {
            renders("baseline history", Report::BaselineHistory)
        }
        Command::Gold(GoldCommand::Validate(_)) => only("gold validate", &[Table, Json]),
        Command::Gold(GoldCommand::Stats(_)) => only("gold stats", &[Table, Json, Markdown, Csv]),
        Command::Gold(GoldCommand::Sample(_)) => only("gold sample", &[]),
        // A JSONL sheet by default; CSV for a spreadsheet.
        Command::Gold(GoldCommand::Pool(_)) => only("gold pool", &[Csv]),
        Command::Gold(GoldCommand::Label(_)) => only("gold label", &[]),
        Command::Gold(GoldCommand::Suggest(_)) => only("gold suggest", &[]),
        // The sheet is written in place; the summary goes to stderr.
        Command::Gold(GoldCommand::Judge(_)) => only("gold judge", &[]),
        Command::Gold(GoldCommand::Import(_)) => only("gold import", &[Table, Json]),
        // A JSONL sheet by default; CSV by the sheet's name.
        Command::Gold(GoldCommand::VerifySample(_)) => only("gold verify-sample", &[]),
        Command::Gold(GoldCommand::Migrate(_)) => only("gold migrate", &[Table, Json]),
        Command::Gold(GoldCommand::Agreement(_)) => only("gold agreement", &[Table, Json, Markdown]),
        Command::Completions { .. } => only("completions", &[]),
        Command::Man { .. } => only("man", &[]),
        Command::Init => only("init", &[]),
        Command::Hook(HookCommand::Install { .. }) => only("hook install", &[]),
    };
    let allowed = match prints {
        Ok(r) => report::formats_for(r),
        Err(formats) => formats.to_vec(),
    };
    (name, allowed)
}

/// Global options a command cannot honour are errors, not silently ignored.
/// `config_on_command_line`: `--config` was typed, not inherited from
/// `RGATE_CONFIG` (a shell that sets it for the gate may run `eval` too).
pub fn check_global(cmd: &Command, global: &Global, config_on_command_line: bool) -> Result<()> {
    let (name, allowed) = formats(cmd);
    if let Some(f) = global.format {
        let f = Format::from(f);
        if !allowed.contains(&f) {
            return Err(report::refuse_format(name, f.name(), &allowed));
        }
    }
    // These write their files in place (the sheet, the config, the hook)
    // and print no report: an --output would be silently dropped.
    let writes_no_report = matches!(
        cmd,
        Command::Gold(GoldCommand::Label(_) | GoldCommand::Suggest(_) | GoldCommand::Judge(_))
            | Command::Init
            | Command::Hook(HookCommand::Install { .. })
    );
    if let Some(out) = global.output.as_deref().filter(|_| writes_no_report) {
        return Err(usage_error(
            format!(
                "`rgate {name}` prints no report, so --output {} would be ignored",
                crate::escape::path(out)
            ),
            "drop --output: the command writes its own files in place",
        ));
    }
    if config_on_command_line && matches!(cmd, Command::Eval(_) | Command::Compare(_)) {
        let path = global.config.as_deref().unwrap_or(Path::new("")).display();
        return Err(usage_error(
            format!("`rgate {name}` reads no config (--config {path})"),
            "give the gold set, runs and metrics as options (--gold, --metrics, ...); `rgate gate` is the command that reads the config",
        ));
    }
    Ok(())
}

/// A one-line progress count on stderr, redrawn in place, only when stderr
/// is a terminal (a CI log gets no carriage-return noise); cleared by
/// [`Progress::done`].
pub struct Progress {
    label: String,
    total: usize,
    shown: bool,
    on: bool,
}

impl Progress {
    pub fn new(label: impl Into<String>, total: usize, quiet: bool) -> Progress {
        use std::io::IsTerminal;
        Progress {
            label: label.into(),
            total,
            shown: false,
            on: !quiet && std::io::stderr().is_terminal(),
        }
    }

    pub fn update(&mut self, n: u64) {
        if self.on {
            eprint!("\r{}: {n} of {} answered", self.label, self.total);
            self.shown = true;
        }
    }

    pub fn done(&mut self) {
        if self.shown {
            eprint!("\r\x1b[2K");
            self.shown = false;
        }
    }
}
