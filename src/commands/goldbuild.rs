//! `rgate gold sample|pool|label|suggest|import`: glue between the
//! arguments, the gold-building library and the terminal.

use std::io::{IsTerminal, Write};
use std::time::Duration;

use anyhow::Result;
use serde_json::json;

use crate::chunks::ChunkMap;
use crate::cli::{Global, ImportArgs, LabelArgs, MigrateArgs, PoolArgs, PreferArg, SampleArgs, SuggestArgs};
use crate::diag::{usage_error, UserError};
use crate::escape;
use crate::fsutil::emit;
use crate::goldbuild::import::{self, ImportOptions, Prefer};
use crate::goldbuild::label::{Effect, Key, Session};
use crate::goldbuild::migrate;
use crate::goldbuild::pool::{self, PoolInputs};
use crate::goldbuild::sample::{self, LogFields, Size};
use crate::goldbuild::sheet::{self, SheetFormat};
use crate::goldbuild::suggest;
use crate::origin::now_utc;
use crate::report::table::{display_width, Table};
use crate::report::Format;

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// Control characters from a user's file never reach the terminal raw.
fn printable(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_control() && c != '\n' {
                '\u{fffd}'
            } else {
                c
            }
        })
        .collect()
}

pub fn sample(args: &SampleArgs, global: &Global) -> Result<u8> {
    let size = match (args.per_stratum, args.total) {
        (Some(n), _) => Size::PerStratum(n),
        (_, Some(n)) => Size::Total(n),
        _ => unreachable!("clap requires one of them"),
    };
    if matches!(size, Size::PerStratum(0) | Size::Total(0)) {
        return Err(usage_error("a sample of 0 queries", "ask for at least 1"));
    }
    let fields = LogFields {
        text: args.text_field.clone(),
        stratum: args.stratum_field.clone(),
    };
    let (log, rows) = sample::read_log(&args.log, &fields)?;
    if log.is_empty() {
        return Err(crate::diag::input_error_hint(
            &args.log,
            None,
            "the log holds no query text",
            "check --text-field",
        ));
    }
    let picked = sample::sample(&log, size, args.seed);
    let mut out = String::new();
    for q in &picked {
        out.push_str(&json!({"id": q.id, "text": q.text, "stratum": q.stratum}).to_string());
        out.push('\n');
    }
    emit(global.output.as_deref(), &out)?;
    if !global.quiet {
        let mut t = Table::new(
            vec![
                "stratum".into(),
                "log".into(),
                "log %".into(),
                "sample".into(),
                "sample %".into(),
            ],
            1,
        );
        let mix = sample::mix(&log, &picked);
        for (s, n_log, n_sample) in &mix {
            t.rows.push(vec![
                printable(s),
                n_log.to_string(),
                format!("{:.1}", 100.0 * *n_log as f64 / log.len() as f64),
                n_sample.to_string(),
                format!("{:.1}", 100.0 * *n_sample as f64 / picked.len().max(1) as f64),
            ]);
        }
        eprintln!(
            "sampled {} of {} distinct ({}, seed {}):",
            plural(picked.len(), "query", "queries"),
            log.len(),
            plural(rows, "log row", "log rows"),
            args.seed
        );
        eprint!("{}", t.text());
    }
    Ok(0)
}

pub fn pool(args: &PoolArgs, global: &Global) -> Result<u8> {
    // `check_global` allows csv only: JSONL unless asked.
    let format = match global.format {
        None => SheetFormat::Jsonl,
        Some(_) => SheetFormat::Csv,
    };
    if args.depth == 0 {
        return Err(usage_error(
            "--depth 0 pools nothing",
            "pool the top 10 or 20 of each run",
        ));
    }
    let (rows, warnings) = pool::pool(&PoolInputs {
        queries: &args.queries,
        runs: &args.runs,
        depth: args.depth,
        corpus: args.corpus.as_deref(),
        gold: args.gold_set.as_deref(),
        seed: args.seed,
    })?;
    warnings.emit(global.quiet);
    emit(global.output.as_deref(), &sheet::render(&rows, format)?)?;
    if !global.quiet {
        let queries: std::collections::HashSet<&str> = rows.iter().map(|r| r.query_id.as_str()).collect();
        let filled = rows.iter().filter(|r| r.grade.is_some()).count();
        eprintln!(
            "pooled {} for {} from {} (depth {}); {} pre-filled from the gold set",
            plural(rows.len(), "candidate", "candidates"),
            plural(queries.len(), "query", "queries"),
            plural(args.runs.len(), "run", "runs"),
            args.depth,
            filled
        );
    }
    Ok(0)
}

pub fn suggest(args: &SuggestArgs, global: &Global) -> Result<u8> {
    let mut rows = sheet::read(&args.sheet)?;
    let name = args.name.clone().unwrap_or_else(|| {
        std::path::Path::new(&args.command[0])
            .file_name()
            .map_or_else(|| args.command[0].clone(), |n| n.to_string_lossy().into_owned())
    });
    let asked = suggest::requests(&rows).len();
    let mut bar = super::Progress::new(
        format!("gold suggest ({})", printable(&name)),
        asked,
        global.quiet,
    );
    let s = suggest::suggest(
        &mut rows,
        &args.command,
        &name,
        Duration::from_secs(args.timeout_s.max(1)),
        &now_utc(),
        &mut |n| bar.update(n),
    );
    bar.done();
    let s = s?;
    sheet::save(&args.sheet, &rows)?;
    if !global.quiet {
        eprintln!(
            "{} suggested grades for {} of {} asked (stored as unverified, source model); a person's grades were left alone",
            printable(&name),
            s.graded,
            plural(s.asked, "row", "rows")
        );
        if s.unknown > 0 {
            eprintln!(
                "warning: {} named a query and chunk not asked about; ignored",
                plural(s.unknown, "output line", "output lines")
            );
        }
    }
    Ok(0)
}

pub fn import(args: &ImportArgs, global: &Global) -> Result<u8> {
    let rows = sheet::read(&args.sheet)?;
    let report = import::import(
        &rows,
        &args.into,
        ImportOptions {
            accept_unverified: args.accept_unverified,
            prefer: args.prefer.map(|p| match p {
                PreferArg::Sheet => Prefer::Sheet,
                PreferArg::Gold => Prefer::Gold,
            }),
        },
    )?;
    if global.format() == Format::Json {
        let j = json!({
            "gold": args.into.display().to_string(),
            "written": report.conflicts.is_empty(),
            "added_labels": report.added_labels,
            "changed_labels": report.changed_labels,
            "unchanged_labels": report.unchanged_labels,
            "added_queries": report.added_queries,
            "skipped_unverified": report.skipped_unverified,
            "conflicts": report.conflicts.iter().map(|c| json!({"query_id": c.query_id, "chunk_id": c.chunk_id, "detail": c.detail})).collect::<Vec<_>>(),
        });
        emit(
            global.output.as_deref(),
            &(serde_json::to_string_pretty(&j)? + "\n"),
        )?;
    } else if global.format.is_some() {
        return Err(usage_error(
            "gold import prints table or json",
            "drop --format or use --format json",
        ));
    }
    if !report.conflicts.is_empty() {
        if global.format() != Format::Json {
            let mut s = format!(
                "gold import: {} found, nothing written to {}\n",
                plural(report.conflicts.len(), "conflict", "conflicts"),
                args.into.display()
            );
            for c in &report.conflicts {
                s += &format!(
                    "  {} {}: {}\n",
                    printable(&c.query_id),
                    printable(&c.chunk_id),
                    printable(&c.detail)
                );
            }
            s += "hint: settle them in the sheet, or pass --prefer sheet|gold to say which side wins\n";
            emit(global.output.as_deref(), &s)?;
        }
        return Ok(1);
    }
    if global.format() != Format::Json {
        let mut s = format!(
            "gold import: {} added, {} changed, {} already there, {} added to {}\n",
            plural(report.added_labels, "label", "labels"),
            report.changed_labels,
            report.unchanged_labels,
            plural(report.added_queries, "query", "queries"),
            args.into.display()
        );
        if report.skipped_unverified > 0 {
            s += &format!(
                "skipped {} no person verified (--accept-unverified imports them)\n",
                plural(report.skipped_unverified, "model suggestion", "model suggestions")
            );
        }
        emit(global.output.as_deref(), &s)?;
    }
    Ok(0)
}

/// `gold migrate`: chunk-id labels to span labels. Ids missing from the
/// map are listed and nothing is written (exit 1, as `gold import` refuses
/// conflicts).
pub fn migrate(args: &MigrateArgs, global: &Global) -> Result<u8> {
    let gold = match &args.gold {
        Some(g) => g.clone(),
        None => crate::config::Config::load(global.config.as_deref())?.gold,
    };
    let chunks = ChunkMap::load(&args.chunks)?;
    let report = migrate::migrate(&gold, &chunks)?;
    let written = report.missing.is_empty() && report.migrated > 0;
    if global.format() == Format::Json {
        let j = json!({
            "gold": gold.display().to_string(),
            "chunks": args.chunks.display().to_string(),
            "written": written,
            "migrated_labels": report.migrated,
            "queries": report.queries,
            "merged_labels": report.merged,
            "missing": report.missing.iter().map(|(q, c)| json!({"query_id": q, "chunk_id": c})).collect::<Vec<_>>(),
        });
        emit(
            global.output.as_deref(),
            &escape::json(serde_json::to_string_pretty(&j)? + "\n"),
        )?;
    }
    if !report.missing.is_empty() {
        if global.format() != Format::Json {
            let mut s = format!(
                "gold migrate: {} not in {}, nothing written to {}\n",
                plural(
                    report.missing.len(),
                    "label's chunk id is",
                    "labels' chunk ids are"
                ),
                escape::terminal(&args.chunks.display().to_string()),
                escape::terminal(&gold.display().to_string())
            );
            for (q, c) in &report.missing {
                s += &format!("  {} {}\n", escape::terminal(q), escape::terminal(c));
            }
            s += "hint: pass the chunk map of the chunking these labels were written against, or fix the labels first\n";
            emit(global.output.as_deref(), &s)?;
        }
        return Ok(1);
    }
    if global.format() != Format::Json {
        let s = if report.migrated == 0 {
            format!(
                "gold migrate: {} has no chunk-id labels; nothing to do\n",
                escape::terminal(&gold.display().to_string())
            )
        } else {
            let mut s = format!(
                "gold migrate: {} of {} now span labels in {}\n",
                plural(report.migrated, "label", "labels"),
                plural(report.queries, "query", "queries"),
                escape::terminal(&gold.display().to_string())
            );
            if report.merged > 0 {
                s += &format!(
                    "{} onto a span the query had already: kept once, at the higher grade\n",
                    plural(report.merged, "label fell", "labels fell")
                );
            }
            s
        };
        emit(global.output.as_deref(), &s)?;
    }
    Ok(0)
}

pub fn label(args: &LabelArgs, global: &Global) -> Result<u8> {
    if !std::io::stdin().is_terminal() || !std::io::stdout().is_terminal() {
        return Err(anyhow::Error::new(UserError {
            message: "gold label needs a terminal (stdin and stdout)".into(),
            hint: Some(
                "run it in a terminal; to grade from a script, edit the sheet or use `rgate gold suggest`"
                    .into(),
            ),
        }));
    }
    let rows = sheet::read(&args.sheet)?;
    if rows.is_empty() {
        return Err(usage_error(
            format!("{}: the sheet has no rows", args.sheet.display()),
            "make one with `rgate gold pool`",
        ));
    }
    let labeler = args
        .labeler
        .clone()
        .or_else(|| std::env::var("USER").ok())
        .unwrap_or_else(|| "person".into());
    let color = crate::commands::gate::use_color(global);
    let mut session = Session::new(rows, labeler);
    let mut term = Terminal::open()?;
    loop {
        term.draw(&session, &args.sheet, color)?;
        let Some(key) = term.key()? else {
            continue;
        };
        match session.press(key, &now_utc()) {
            Effect::Save => sheet::save(&args.sheet, &session.rows)?,
            Effect::Quit => break,
            Effect::Moved | Effect::Nothing => {}
        }
    }
    sheet::save(&args.sheet, &session.rows)?;
    drop(term);
    eprintln!(
        "{}: {} of {} labeled; saved",
        args.sheet.display(),
        session.labeled(),
        plural(session.rows.len(), "row", "rows")
    );
    Ok(0)
}

/// Raw mode on the alternate screen for as long as it lives; dropping it
/// restores the terminal, on every exit path.
struct Terminal {
    out: std::io::Stdout,
}

impl Terminal {
    fn open() -> Result<Terminal> {
        use crossterm::{cursor, execute, terminal};
        terminal::enable_raw_mode()?;
        let mut out = std::io::stdout();
        execute!(out, terminal::EnterAlternateScreen, cursor::Hide)?;
        Ok(Terminal { out })
    }

    /// The next key that means something; Ctrl-C and Esc quit.
    fn key(&mut self) -> Result<Option<Key>> {
        use crossterm::event::{self, Event, KeyCode, KeyEventKind, KeyModifiers};
        match event::read()? {
            Event::Key(k) if k.kind != KeyEventKind::Release => Ok(match k.code {
                KeyCode::Char('c') if k.modifiers.contains(KeyModifiers::CONTROL) => Some(Key::Quit),
                KeyCode::Esc => Some(Key::Quit),
                KeyCode::Right | KeyCode::Down => Some(Key::Next),
                KeyCode::Left | KeyCode::Up => Some(Key::Previous),
                KeyCode::Char(c) => Key::from_char(c),
                _ => None,
            }),
            _ => Ok(None),
        }
    }

    fn draw(&mut self, s: &Session, path: &std::path::Path, color: bool) -> Result<()> {
        use crossterm::{cursor::MoveTo, queue, style, terminal};
        let (w, h) = terminal::size().unwrap_or((80, 24));
        let (w, h) = (w.max(20) as usize, h.max(8) as usize);
        let row = &s.rows[s.cursor];
        let mut lines: Vec<(String, bool)> = Vec::new();
        let done = s.labeled();
        lines.push((
            format!(
                "rgate gold label  {}  {}/{} labeled ({}%)  row {}/{}",
                printable(&path.display().to_string()),
                done,
                s.rows.len(),
                100 * done / s.rows.len(),
                s.cursor + 1,
                s.rows.len()
            ),
            true,
        ));
        lines.push((String::new(), false));
        lines.push((
            format!(
                "query   {}  [{}]",
                printable(&row.query_id),
                printable(&row.stratum)
            ),
            true,
        ));
        for l in wrap(&printable(&row.query), w - 8) {
            lines.push((format!("        {l}"), false));
        }
        lines.push((String::new(), false));
        let grade = match (row.grade, row.source.as_deref()) {
            (Some(g), Some("model")) => format!(
                "grade {g} (suggested by {}, not verified)",
                printable(row.labeler.as_deref().unwrap_or("a model"))
            ),
            (Some(g), _) => format!(
                "grade {g} ({})",
                printable(row.labeler.as_deref().unwrap_or("person"))
            ),
            (None, _) => "not labeled".into(),
        };
        lines.push((format!("chunk   {}  {grade}", printable(&row.chunk_id)), true));
        let footer = "0-3 grade (0 = not relevant)  s skip  u undo  n/p next/previous  q save and quit";
        let room = h.saturating_sub(lines.len() + 2);
        let text = row
            .text
            .as_deref()
            .map(printable)
            .unwrap_or_else(|| "(no text: pass --corpus to gold pool)".into());
        let body: Vec<String> = text.lines().flat_map(|l| wrap(l, w - 8)).collect();
        for (i, l) in body.iter().enumerate() {
            if i + 1 == room && body.len() > room {
                lines.push((format!("        … {} more lines", body.len() - i), false));
                break;
            }
            lines.push((format!("        {l}"), false));
        }
        queue!(self.out, terminal::Clear(terminal::ClearType::All))?;
        for (i, (l, bold)) in lines.iter().take(h - 1).enumerate() {
            queue!(self.out, MoveTo(0, i as u16))?;
            let l = fit(l, w);
            if *bold && color {
                queue!(self.out, style::PrintStyledContent(style::Stylize::bold(l)))?;
            } else {
                queue!(self.out, style::Print(l))?;
            }
        }
        queue!(self.out, MoveTo(0, (h - 1) as u16), style::Print(fit(footer, w)))?;
        self.out.flush()?;
        Ok(())
    }
}

impl Drop for Terminal {
    fn drop(&mut self) {
        use crossterm::{cursor, execute, terminal};
        let _ = execute!(self.out, cursor::Show, terminal::LeaveAlternateScreen);
        let _ = terminal::disable_raw_mode();
    }
}

/// Greedy word wrap to `width` terminal columns (a CJK character takes
/// two); a word wider than a line is cut.
fn wrap(text: &str, width: usize) -> Vec<String> {
    let width = width.max(10);
    let mut out = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        let mut word = word.to_string();
        while display_width(&word) > width {
            if !line.is_empty() {
                out.push(std::mem::take(&mut line));
            }
            let head = fit(&word, width);
            word = word[head.len()..].to_string();
            out.push(head);
        }
        if !line.is_empty() && display_width(&line) + 1 + display_width(&word) > width {
            out.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(&word);
    }
    if !line.is_empty() || out.is_empty() {
        out.push(line);
    }
    out
}

/// The longest start of `s` that fits in `width` terminal columns (at
/// least one character, so a cut always makes progress).
fn fit(s: &str, width: usize) -> String {
    let mut used = 0;
    let mut end = 0;
    for (i, c) in s.char_indices() {
        let w = unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
        if used + w > width && i > 0 {
            break;
        }
        used += w;
        end = i + c.len_utf8();
    }
    s[..end].to_string()
}

/// What `gold validate` and `gold stats` add about how a gold set was built:
/// notes on unverified labels and single-labeler queries (from provenance),
/// and how its strata mix drifts from a query log's (with `--log`).
pub fn build_notes(
    gold: &crate::gold::GoldSet,
    pick: &crate::cli::GoldPick,
) -> Result<(Vec<String>, serde_json::Value)> {
    use crate::diag::name_some;
    use crate::goldbuild::provenance;
    let mut notes = Vec::new();
    let prov = provenance::read(&gold.path)?;
    let t = provenance::trust(gold, &prov);
    if !t.unverified.is_empty() {
        let ids: Vec<String> = t.unverified.iter().map(|(q, c)| format!("{q}/{c}")).collect();
        let names: Vec<&str> = ids.iter().map(String::as_str).collect();
        notes.push(format!(
            "{} no person verified (model suggestions): {}; verify them with `rgate gold label`",
            plural(t.unverified.len(), "label", "labels"),
            name_some(&names, 5)
        ));
    }
    if !t.single_labeler.is_empty() {
        let names: Vec<&str> = t.single_labeler.iter().map(String::as_str).collect();
        notes.push(format!(
            "{} judged by a single labeler: {}",
            plural(t.single_labeler.len(), "query was", "queries were"),
            name_some(&names, 5)
        ));
    }
    let mut drift_json = serde_json::Value::Null;
    if let Some(log) = &pick.log {
        let fields = LogFields {
            text: pick.text_field.clone(),
            stratum: pick.stratum_field.clone(),
        };
        let (queries, _) = sample::read_log(log, &fields)?;
        let sizes: Vec<(String, usize)> = gold.strata.iter().cloned().zip(gold.stratum_sizes()).collect();
        let (rows, tvd) = sample::drift(&sizes, &queries);
        let worst = rows
            .iter()
            .max_by(|a, b| (a.1 - a.2).abs().total_cmp(&(b.1 - b.2).abs()));
        notes.push(format!(
            "strata mix vs the log {}: distance {:.2} (0 = same mix){}",
            printable(&log.display().to_string()),
            tvd,
            worst
                .filter(|w| (w.1 - w.2).abs() >= 0.005)
                .map(|w| format!(
                    "; most off: `{}` is {:.0}% of the gold set and {:.0}% of the log",
                    printable(&w.0),
                    100.0 * w.1,
                    100.0 * w.2
                ))
                .unwrap_or_default()
        ));
        drift_json = json!({
            "log": log.display().to_string(),
            "distance": tvd,
            "strata": rows.iter().map(|(s, g, l)| json!({"stratum": s, "gold_share": g, "log_share": l})).collect::<Vec<_>>(),
        });
    }
    let j = json!({
        "labels_with_provenance": t.recorded,
        "unverified_labels": t.unverified.len(),
        "single_labeler_queries": t.single_labeler,
        "log_drift": drift_json,
    });
    Ok((notes, j))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrap_counts_terminal_columns() {
        // Each of these characters takes two columns: five fit in ten.
        assert_eq!(wrap("検索品質の回帰を防ぐ", 10), ["検索品質の", "回帰を防ぐ"]);
        assert_eq!(wrap("ab 日本 cd", 10), ["ab 日本 cd"]);
        assert_eq!(wrap("abcdef 日本語です", 10), ["abcdef", "日本語です"]);
        assert_eq!(fit("日本語", 5), "日本");
        assert_eq!(fit("日本語", 1), "日");
    }
}
