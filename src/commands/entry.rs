//! The whole command line as one library call: what `src/main.rs` runs,
//! and what the Python wheel's `rgate` console script runs through the
//! module (maturin cannot put a binary and a PyO3 module in one wheel,
//! PyO3/maturin#368; its maintainers' answer is a library `main` called
//! from a Python entry point, as here).

use std::ffi::OsString;

use clap::parser::ValueSource;
use clap::{CommandFactory, FromArgMatches};

use crate::cli::{Cli, Command};
use crate::{commands, escape};

/// Parses `args` (the program name first, as `std::env::args_os` gives
/// it), runs the command, and returns its exit code: 0 pass, 1 regression,
/// 2 error (SPEC "Exit codes"). Errors print their whole context chain on
/// stderr and end with a `hint:` line where one helps.
pub fn main_with<I, T>(args: I) -> u8
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let parsed = Cli::command()
        .try_get_matches_from(args)
        .and_then(|m| Cli::from_arg_matches(&m).map(|c| (c, m)));
    let (cli, matches) = match parsed {
        Ok(p) => p,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return code;
        }
    };
    let config_typed = matches.value_source("config") == Some(ValueSource::CommandLine);
    let result =
        commands::check_global(&cli.command, &cli.global, config_typed).and_then(|()| match &cli.command {
            Command::Eval(a) => commands::eval::run(a, &cli.global),
            Command::Compare(a) => commands::compare::run(a, &cli.global),
            Command::Gate(a) => commands::gate::run(a, &cli.global),
            Command::Baseline(c) => commands::baseline::run(c, &cli.global),
            Command::Gold(c) => commands::gold::run(c, &cli.global),
            Command::Completions { shell } => commands::completions::completions(*shell, &cli.global),
            Command::Man { dir } => commands::completions::man(dir.as_deref(), &cli.global),
            Command::Init => commands::init::run(&cli.global),
            Command::Hook(c) => commands::hook::run(c, &cli.global),
        });
    match result {
        Ok(code) => code,
        Err(e) => {
            // Errors quote values from users' files: keep them from driving
            // the terminal or a CI runner (see rgate::escape).
            let text = |x: &dyn std::fmt::Display| escape::terminal_lines(&x.to_string()).into_owned();
            eprintln!("error: {}", text(&e));
            for cause in e.chain().skip(1) {
                eprintln!("  caused by: {}", text(&cause));
            }
            2
        }
    }
}
