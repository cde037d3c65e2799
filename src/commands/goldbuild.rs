//! `rgate gold sample|pool|label|suggest|import`: glue between the
//! arguments, the gold-building library and the terminal.

use std::io::{IsTerminal, Write};
use std::time::Duration;

use anyhow::Result;
use serde_json::json;

use super::output::Guard;
use crate::chunks::ChunkMap;
use crate::cli::{
    AgreementArgs, Global, ImportArgs, LabelArgs, MigrateArgs, PoolArgs, PreferArg, SampleArgs, SuggestArgs,
};
use crate::cli::{JudgeArgs, ProviderArg, VerifySampleArgs};
use crate::diag::{count, usage_error, UserError};
use crate::fsutil::emit;
use crate::goldbuild::import::{self, ImportOptions, Prefer};
use crate::goldbuild::label::{self, Effect, Key, Session};
use crate::goldbuild::migrate;
use crate::goldbuild::pool::{self, PoolInputs};
use crate::goldbuild::printable;
use crate::goldbuild::sample::{self, LogFields, Size};
use crate::goldbuild::sheet::{self, SheetFormat};
use crate::goldbuild::suggest;
use crate::origin::now_utc;
use crate::report::goldbuild as out;
use crate::report::table::display_width;
use crate::report::Format;

pub fn sample(args: &SampleArgs, global: &Global) -> Result<u8> {
    let size = match (args.per_stratum, args.total) {
        (Some(n), _) => Size::PerStratum(n),
        (_, Some(n)) => Size::Total(n),
        _ => unreachable!("clap requires one of them"),
    };
    if matches!(size, Size::PerStratum(0) | Size::Total(0)) {
        return Err(usage_error("a sample of 0 queries", "ask for at least 1"));
    }
    Guard::default()
        .file(&args.log, "the log")
        .check(global.output.as_deref())?;
    let fields = LogFields {
        text: args.text_field.clone(),
        stratum: args.stratum_field.clone(),
    };
    let read = sample::read_log(&args.log, &fields)?;
    let (log, rows) = (read.queries, read.rows);
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
    // JSON lines keep their values; `##[` and bidi controls in a logged
    // query are escaped inside the strings (see `escape::json`).
    emit(global.output.as_deref(), &crate::escape::json(out))?;
    if !global.quiet {
        if let Some(n) = read.stratum.note() {
            eprintln!("note: {}", printable(&n));
        }
        eprint!("{}", out::sample_mix(&log, &picked, rows, args.seed));
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
    let mut guard = Guard::default();
    guard
        .maybe(args.queries.as_ref(), "the queries")
        .maybe(args.corpus.as_ref(), "the corpus")
        .maybe(args.gold_set.as_ref(), "the gold set")
        .maybe(args.chunks.as_ref(), "the chunk map");
    for r in &args.runs {
        guard.file(r, "a run");
    }
    guard.check(global.output.as_deref())?;
    let chunks = match &args.chunks {
        Some(c) => Some(std::sync::Arc::new(ChunkMap::load(c)?)),
        None => None,
    };
    let (rows, warnings) = pool::pool(&PoolInputs {
        queries: args.queries.as_deref(),
        runs: &args.runs,
        depth: args.depth,
        corpus: args.corpus.as_deref(),
        gold: args.gold_set.as_deref(),
        seed: args.seed,
        holes: args.holes,
        chunks,
    })?;
    warnings.emit(global.quiet);
    let queries = rows
        .iter()
        .map(|r| r.query_id.as_str())
        .collect::<std::collections::HashSet<_>>()
        .len();
    let summary = if args.holes {
        format!(
            "pooled {} for {} from {} (depth {}): the top-{} chunks {} has no label for",
            count(rows.len(), "hole", "holes"),
            count(queries, "query", "queries"),
            count(args.runs.len(), "run", "runs"),
            args.depth,
            args.depth,
            args.gold_set
                .as_deref()
                .map(crate::escape::path)
                .unwrap_or_default()
        )
    } else {
        format!(
            "pooled {} for {} from {} (depth {}); {} pre-filled from the gold set",
            count(rows.len(), "candidate", "candidates"),
            count(queries, "query", "queries"),
            count(args.runs.len(), "run", "runs"),
            args.depth,
            rows.iter().filter(|r| r.grade.is_some()).count()
        )
    };
    match global.output.as_deref().filter(|p| p.as_os_str() != "-") {
        Some(path) => {
            if global.format.is_some() && SheetFormat::of(path) != SheetFormat::Csv {
                return Err(usage_error(
                    format!(
                        "--format csv writes a CSV sheet, but `{}` does not end in .csv, and every reader takes a sheet's format from its name",
                        crate::escape::path(path)
                    ),
                    "name the sheet NAME.csv (or drop --format for a JSONL sheet)",
                ));
            }
            let w = pool::write_into(path, rows, &now_utc(), &mut waiting(global.quiet))?;
            if !global.quiet {
                eprintln!("{summary}");
                if w.kept > 0 {
                    eprintln!(
                        "{}: kept its {} as they were and added {}",
                        crate::escape::path(path),
                        count(w.kept, "row", "rows"),
                        count(w.added, "new candidate", "new candidates")
                    );
                }
            }
        }
        None => {
            let text = sheet::render(&rows, format)?;
            // As for `sample`: the same values, no `##[` a CI log would run.
            let text = match format {
                SheetFormat::Jsonl => crate::escape::json(text),
                SheetFormat::Csv => text,
            };
            emit(None, &text)?;
            if !global.quiet {
                eprintln!("{summary}");
            }
        }
    }
    Ok(0)
}

/// Tells on stderr that another rgate holds a file's lock and we wait.
fn waiting(quiet: bool) -> impl FnMut(&str) {
    move |m: &str| {
        if !quiet {
            eprintln!("{m}");
        }
    }
}

/// The command `gold suggest` runs: `--command`'s string split into words
/// as a POSIX shell would (quotes and backslashes; no expansion), or the
/// words after `--` as given.
fn suggest_command(args: &SuggestArgs) -> Result<Vec<String>> {
    if let (Some(first), None) = (args.stray.first(), &args.command) {
        return Err(usage_error(
            format!("unexpected argument `{}`", printable(first)),
            "give the command last, after `--` (-- PROGRAM ARGS...), or as --command \"PROGRAM ARGS\"",
        ));
    }
    if let Some(first) = args.stray.first() {
        let given = args.command.as_deref().unwrap_or("");
        return Err(usage_error(
            format!(
                "`{}` follows --command `{}`, which takes the whole command as one string",
                printable(first),
                printable(given)
            ),
            format!(
                "quote it, --command \"{} {}\", or put it last: -- {} {}",
                printable(given),
                printable(&args.stray.join(" ")),
                printable(given),
                printable(&args.stray.join(" "))
            ),
        ));
    }
    let words = match &args.command {
        Some(line) => shlex::split(line).ok_or_else(|| {
            usage_error(
                format!("--command `{}` has an unclosed quote or a trailing backslash", printable(line)),
                "quote the command as a shell would: --command \"python3 'my judge.py' --model m\", or put it last: -- python3 'my judge.py' --model m",
            )
        })?,
        None => args.argv.clone(),
    };
    if words.first().is_none_or(|w| w.is_empty()) {
        return Err(usage_error(
            "--command names no program",
            "give the program and its arguments: --command \"python3 judge.py\", or -- python3 judge.py",
        ));
    }
    Ok(words)
}

pub fn suggest(args: &SuggestArgs, global: &Global) -> Result<u8> {
    let command = suggest_command(args)?;
    let rows = sheet::read(&args.sheet)?;
    let name = args
        .name
        .clone()
        .unwrap_or_else(|| suggest::default_name(&command));
    let asked = suggest::requests(&rows).len();
    let mut bar = super::Progress::new(
        format!("gold suggest ({})", printable(&name)),
        asked,
        global.quiet,
    );
    let s = suggest::suggest(
        &rows,
        &command,
        Duration::from_secs(args.timeout_s.max(1)),
        &mut |n| bar.update(n),
    );
    bar.done();
    let s = s?;
    // Merged into the sheet as it is now: a person may have graded rows
    // while the command ran, and those grades stay.
    let now = now_utc();
    let stored = sheet::update(&args.sheet, &now, &mut waiting(global.quiet), |rows| {
        let st = suggest::store(rows, &s, &name, &now);
        let changed = st.stored > 0;
        Ok((st, changed))
    })?;
    if !global.quiet {
        let persons = rows.len() - s.asked;
        eprintln!(
            "{} suggested grades for {} of {} asked (stored as unverified, source model){}",
            printable(&name),
            s.grades.len(),
            count(s.asked, "row", "rows"),
            if persons > 0 {
                format!(
                    "; {} a person graded were not asked",
                    count(persons, "row", "rows")
                )
            } else {
                String::new()
            }
        );
        if stored.left_alone > 0 {
            eprintln!(
                "{} a person graded while the command ran kept the person's grade",
                count(stored.left_alone, "row", "rows")
            );
        }
        if stored.gone > 0 {
            eprintln!(
                "warning: {} left the sheet while the command ran; their grades were dropped",
                count(stored.gone, "row", "rows")
            );
        }
        if s.repeated > 0 {
            eprintln!(
                "note: {} repeated a grade already given; counted once",
                count(s.repeated, "output line", "output lines")
            );
        }
        if s.unknown > 0 {
            eprintln!(
                "warning: {} named a query and chunk not asked about; ignored",
                count(s.unknown, "output line", "output lines")
            );
        }
    }
    Ok(0)
}

/// The judge's cache when `--cache` is not given: beside the sheet, so
/// every sheet of a project in one directory shares it.
pub const JUDGE_CACHE: &str = ".rgate-judge-cache.jsonl";

pub fn judge(args: &JudgeArgs, global: &Global) -> Result<u8> {
    use crate::goldbuild::judge::{self, cache::Cache, client, Setup};
    let provider = match args.provider {
        ProviderArg::Openai => client::Provider::OpenAi,
        ProviderArg::Anthropic => client::Provider::Anthropic,
    };
    if args.concurrency == 0 {
        return Err(usage_error(
            "--concurrency 0 would send nothing",
            "give 1 or more (default 4)",
        ));
    }
    if args.model.trim().is_empty() {
        return Err(usage_error(
            "--model is empty",
            "name the model as the API knows it, e.g. --model gpt-4o",
        ));
    }
    let base_url = args
        .base_url
        .clone()
        .unwrap_or_else(|| provider.default_base_url().to_string());
    if !(base_url.starts_with("http://") || base_url.starts_with("https://")) {
        return Err(usage_error(
            format!(
                "--base-url `{}` is not an http:// or https:// URL",
                printable(&client::redact_url(&base_url))
            ),
            format!("the API's base URL, e.g. {}", provider.default_base_url()),
        ));
    }
    let template = match &args.prompt {
        None => judge::prompt::DEFAULT.to_string(),
        Some(path) => {
            let bytes = crate::input::read(
                path,
                "prompt template",
                crate::input::SMALL_LIMIT,
                "write the prompt to a file, with {query} and {passage} where they go",
            )?;
            let text = String::from_utf8(crate::diag::strip_bom(&bytes).to_vec()).map_err(|e| {
                crate::diag::input_error(
                    path,
                    Some(crate::diag::line_of(&bytes, e.utf8_error().valid_up_to())),
                    "not valid UTF-8",
                )
            })?;
            judge::prompt::check(&text).map_err(|m| {
                crate::diag::input_error_hint(
                    path,
                    None,
                    m,
                    "the template needs {query} and {passage}: rgate puts the query and the passage there",
                )
            })?;
            text
        }
    };
    let rows = sheet::read(&args.sheet)?;
    let setup = Setup {
        provider,
        base_url: base_url.clone(),
        model: args.model.clone(),
        template,
        labeler: args.name.clone().unwrap_or_else(|| args.model.clone()),
        second_opinion: args.second_opinion,
        max_requests: args.max_requests,
        canary: args.canary,
    };
    let cache_path = args.cache.clone().unwrap_or_else(|| {
        args.sheet
            .parent()
            .unwrap_or(std::path::Path::new(""))
            .join(JUDGE_CACHE)
    });
    let mut cache = Cache::open(&cache_path)?;
    if cache.unreadable > 0 && !global.quiet {
        eprintln!(
            "note: {} of {} could not be read and {}; those pairs are asked again",
            count(cache.unreadable, "line", "lines"),
            crate::escape::path(&cache_path),
            if cache.unreadable == 1 {
                "was ignored"
            } else {
                "were ignored"
            }
        );
    }
    let plan = judge::plan(&rows, &setup, &cache);
    let key_env = args
        .api_key_env
        .clone()
        .unwrap_or_else(|| provider.default_key_env().to_string());
    let key = client::Secret::new(std::env::var(&key_env).ok());
    let timeout = Duration::from_secs(args.timeout_s.max(1));
    let client = client::Client::new(provider, &base_url, &args.model, key.clone(), timeout);
    if args.dry_run {
        emit(None, &out::judge_dry_run(&plan, client.shown_url(), &args.model))?;
        return Ok(0);
    }
    // A local server (vLLM, Ollama) may need no key; the hosted APIs do,
    // and a variable named on purpose must be there.
    if !key.is_set()
        && !plan.jobs.is_empty()
        && (args.api_key_env.is_some() || base_url == provider.default_base_url())
    {
        return Err(usage_error(
            format!("the API key variable {key_env} is not set (or empty)"),
            format!("export {key_env}=…, or name the variable holding the key with --api-key-env"),
        ));
    }
    let now = now_utc();
    let mut bar = JudgeProgress::new(
        format!("gold judge ({})", printable(&args.model)),
        plan.jobs.len(),
        global.quiet,
    );
    let ran = judge::run(
        &plan,
        &setup,
        &client,
        args.concurrency,
        &mut cache,
        &now,
        &mut |n| bar.update(n),
    );
    bar.done();
    let ran = ran?;
    let grades = judge::grades(&plan, &ran);
    let stored = if grades.is_empty() {
        judge::Stored::default()
    } else {
        sheet::update(&args.sheet, &now, &mut waiting(global.quiet), |rows| {
            let st = judge::store(rows, &grades, &setup, &now);
            let changed = st.stored + st.as_opinion > 0;
            Ok((st, changed))
        })?
    };
    let canary = judge::canary(&plan, &ran);
    if !global.quiet {
        eprint!(
            "{}",
            out::judge_summary(&args.model, &plan, &ran, &stored, &canary)
        );
    }
    if let Some(m) = ran.fatal {
        return Err(usage_error(
            format!("gold judge stopped: {m}"),
            "check --model, --base-url and the key; the grades answered so far are stored and cached",
        ));
    }
    let failed = ran
        .outcomes
        .iter()
        .any(|o| matches!(o, judge::Outcome::Failed(_)));
    Ok(u8::from(failed))
}

/// `gold judge`'s progress on stderr: done of total, the rate, the time
/// left. Redrawn in place at most 5 times a second on a terminal; in a CI
/// log, one line a minute, so a long run shows it is alive without
/// flooding the log.
struct JudgeProgress {
    label: String,
    total: usize,
    start: std::time::Instant,
    last: Option<std::time::Instant>,
    tty: bool,
    on: bool,
    shown: bool,
}

impl JudgeProgress {
    fn new(label: String, total: usize, quiet: bool) -> JudgeProgress {
        JudgeProgress {
            label,
            total,
            start: std::time::Instant::now(),
            last: None,
            tty: std::io::stderr().is_terminal(),
            on: !quiet && total > 0,
            shown: false,
        }
    }

    fn update(&mut self, done: usize) {
        if !self.on {
            return;
        }
        let every = if self.tty {
            Duration::from_millis(200)
        } else {
            Duration::from_secs(60)
        };
        let now = std::time::Instant::now();
        // A terminal sees the count at once and at the end; a log sees a
        // line a minute, and a last one only if it saw the first.
        let since = now - self.last.unwrap_or(self.start);
        let first = self.tty && self.last.is_none();
        let last = done >= self.total && (self.tty || self.last.is_some());
        if !(first || last || since >= every) {
            return;
        }
        self.last = Some(now);
        let secs = (now - self.start).as_secs_f64();
        let rate = done as f64 / secs.max(1e-3);
        let eta = if done > 0 {
            self.total.saturating_sub(done) as f64 / rate
        } else {
            f64::NAN
        };
        let eta = if eta.is_finite() {
            format!("{:.0} s left", eta)
        } else {
            "…".into()
        };
        let line = format!("{}: {done}/{} done, {rate:.1}/s, {eta}", self.label, self.total);
        if self.tty {
            eprint!("\r\x1b[2K{line}");
            self.shown = true;
        } else {
            eprintln!("{line}");
        }
    }

    fn done(&mut self) {
        if self.shown {
            eprint!("\r\x1b[2K");
            self.shown = false;
        }
    }
}

pub fn import(args: &ImportArgs, global: &Global) -> Result<u8> {
    Guard::default()
        .file(&args.sheet, "the sheet")
        .file(&args.into, "the gold set it merges into (--into)")
        .check(global.output.as_deref())?;
    let rows = sheet::read_grades(&args.sheet)?;
    let report = import::import(
        &rows,
        &args.into,
        ImportOptions {
            accept_unverified: args.accept_unverified,
            prefer: args.prefer.map(|p| match p {
                PreferArg::Sheet => Prefer::Sheet,
                PreferArg::Gold => Prefer::Gold,
            }),
            drop_template: args.drop_template,
            with_model: args.with_model,
        },
        &mut waiting(global.quiet),
    )?;
    if !report.template.is_empty() && !global.quiet {
        eprintln!(
            "warning: {} still holds {} `rgate init` wrote ({}): they are scored with every real query, against chunks of no real corpus\nhint: drop them with `rgate gold import {} --into {} --drop-template`",
            crate::escape::path(&args.into),
            count(report.template.len(), "example query", "example queries"),
            crate::diag::name_some(&report.template.iter().map(String::as_str).collect::<Vec<_>>(), 5),
            crate::escape::path(&args.sheet),
            crate::escape::path(&args.into),
        );
    }
    let json = global.format() == Format::Json;
    if json {
        emit(global.output.as_deref(), &out::import_json(&args.into, &report)?)?;
    } else if global.format.is_some() {
        return Err(usage_error(
            "gold import prints table or json",
            "drop --format or use --format json",
        ));
    } else {
        emit(global.output.as_deref(), &out::import_text(&args.into, &report))?;
    }
    Ok(if report.conflicts.is_empty() { 0 } else { 1 })
}

/// `gold verify-sample`: the draw, its record in the gold set, then its
/// sheet. The record comes first: a refused draw writes nothing, and a
/// kill between the two writes leaves a recorded draw without a sheet
/// (the same command again writes it), never a sheet of no recorded draw.
pub fn verify_sample(args: &VerifySampleArgs, global: &Global) -> Result<u8> {
    use crate::goldbuild::verify::{self, DrawSize};
    let size = match (args.per_stratum, args.fraction) {
        (Some(0), _) => {
            return Err(usage_error(
                "--per-stratum 0 draws nothing",
                "draw at least 1 per stratum; 30 or more gives PPI room",
            ))
        }
        (Some(n), _) => DrawSize::PerStratum(n),
        (_, Some(f)) if f > 0.0 && f <= 1.0 => DrawSize::Fraction(f),
        (_, Some(f)) => {
            return Err(usage_error(
                format!("--fraction {} is not in (0, 1]", crate::diag::number(f)),
                "give the share of each stratum to verify, e.g. --fraction 0.1",
            ))
        }
        _ => unreachable!("clap requires one of them"),
    };
    let Some(sheet_path) = global.output.as_deref().filter(|p| p.as_os_str() != "-") else {
        return Err(usage_error(
            "gold verify-sample writes a sheet: name it with --output",
            "rgate gold verify-sample --gold gold.yaml --per-stratum 30 --seed 7 --output verify.jsonl",
        ));
    };
    Guard::default()
        .file(&args.gold, "the gold set (--gold)")
        .maybe(args.corpus.as_ref(), "the corpus")
        .check(Some(sheet_path))?;
    if sheet_path.exists() {
        return Err(usage_error(
            format!(
                "{} exists: people's grades in it would be lost; nothing was written",
                crate::escape::path(sheet_path)
            ),
            "name a new sheet with --output",
        ));
    }
    let (gold, warnings) = crate::gold::GoldSet::load(&args.gold, None)?;
    warnings.emit(global.quiet);
    if gold.labeling.model.is_empty() {
        return Err(crate::diag::input_error_hint(
            &args.gold,
            None,
            "no query has model grades to draw from",
            "grade the pool with `rgate gold judge`, then `rgate gold import --with-model SHEET --into GOLD`",
        ));
    }
    let drawn = verify::draw(&gold, size, args.seed);
    let sample = crate::gold::VerifySample {
        seed: args.seed,
        ids: drawn.iter().map(|&i| gold.queries[i].id.clone()).collect(),
        drawn_at: now_utc(),
        size: Some(size),
        show_model: Some(args.show_model),
        eligible: crate::gold::draw::eligible_record(&gold),
        history: Vec::new(),
        line: None,
    };
    // The record first: refused (another draw recorded), nothing is written.
    let recorded = verify::record(&args.gold, &sample, args.replace, &mut waiting(global.quiet))?;
    let mut rows = verify::sheet_rows(&gold, &drawn, args.show_model, &recorded.sample.draw_id());
    if let Some(corpus) = &args.corpus {
        let wanted: std::collections::HashSet<&str> = rows.iter().map(|r| r.chunk_id.as_str()).collect();
        let texts = pool::corpus_texts(corpus, &wanted)?;
        for r in &mut rows {
            r.text = texts.get(&r.chunk_id).cloned();
        }
    }
    if !global.quiet {
        for w in small_draw_warnings(&gold, &drawn) {
            eprintln!("warning: {w}");
        }
        if recorded.sample.number() > 1 {
            eprintln!(
                "warning: this is draw {n} of {n} recorded in {}: the discarded seeds stay in its `history`, for a reviewer to see",
                crate::escape::path(&args.gold),
                n = recorded.sample.number()
            );
        }
    }
    if rows.is_empty() {
        if !global.quiet {
            eprintln!(
                "every pair of the {} drawn is graded by people already: no sheet written; the draw is recorded in {}",
                count(drawn.len(), "query", "queries"),
                crate::escape::path(&args.gold),
            );
        }
        return Ok(0);
    }
    let text = sheet::render(&rows, SheetFormat::of(sheet_path))?;
    crate::fsutil::write_atomic(sheet_path, text.as_bytes())?;
    if !global.quiet {
        let strata = drawn
            .iter()
            .map(|&i| gold.queries[i].stratum)
            .collect::<std::collections::HashSet<_>>()
            .len();
        eprintln!(
            "drew {} from {} (seed {}, draw {} of {}): {} in {}; the draw is recorded in {}",
            count(drawn.len(), "query", "queries"),
            count(strata, "stratum", "strata"),
            args.seed,
            recorded.sample.number(),
            recorded.sample.number(),
            count(rows.len(), "pair to grade", "pairs to grade"),
            crate::escape::path(sheet_path),
            crate::escape::path(&args.gold),
        );
    }
    Ok(0)
}

/// What a draw too small for PPI means, said when it is drawn: a stratum
/// with fewer than [`crate::stats::ppi::MIN_VERIFIED`] verified queries is
/// estimated from people's labels alone, and a paired sign-flip test on n
/// queries cannot give a p-value below 2 / 2^n (every sign alike), so on
/// fewer than 6 queries in all no check can fail at alpha 0.05.
pub fn small_draw_warnings(gold: &crate::gold::GoldSet, drawn: &[usize]) -> Vec<String> {
    let min = crate::stats::ppi::MIN_VERIFIED;
    let mut per = vec![0usize; gold.strata.len()];
    for &i in drawn {
        per[gold.queries[i].stratum as usize] += 1;
    }
    let pools = crate::gold::draw::eligible_queries(gold);
    let small: Vec<String> = (0..gold.strata.len())
        .filter(|&s| !pools[s].is_empty() && per[s] < min)
        .map(|s| format!("{} ({})", printable(&gold.strata[s]), per[s]))
        .collect();
    let mut out = Vec::new();
    if !small.is_empty() {
        let shown: Vec<&str> = small.iter().map(String::as_str).collect();
        out.push(format!(
            "a small draw: {} fewer than {min} queries drawn, so `labels: ppi` uses people's labels alone there: {}",
            if small.len() == 1 { "1 stratum has" } else { "strata have" },
            crate::diag::name_some(&shown, 5)
        ));
    }
    if drawn.len() < 6 {
        out.push(format!(
            "{} drawn in all: a paired test on so few queries cannot reach p < 0.05 (the smallest sign-flip p-value is 2/2^{}), so a gate on them cannot fail: every check is inconclusive; draw 30 or more per stratum",
            count(drawn.len(), "query", "queries"),
            drawn.len()
        ));
    }
    out
}

/// `gold migrate`: chunk-id labels to span labels. Ids missing from the
/// map are listed and nothing is written (exit 1, as `gold import` refuses
/// conflicts).
pub fn migrate(args: &MigrateArgs, global: &Global) -> Result<u8> {
    let (gold, config) = match &args.gold {
        Some(g) => (g.clone(), None),
        None => {
            let c = crate::config::Config::load(global.config.as_deref())?;
            (c.gold, Some(c.path))
        }
    };
    let mut guard = Guard::default();
    guard
        .file(&gold, "the gold set it rewrites")
        .file(&args.chunks, "the chunk map")
        .maybe(config.as_ref(), "the config");
    guard.check(global.output.as_deref())?;
    let chunks = ChunkMap::load(&args.chunks)?;
    let report = migrate::migrate(&gold, &chunks, &mut waiting(global.quiet))?;
    let text = if global.format() == Format::Json {
        out::migrate_json(&gold, &args.chunks, &report)?
    } else {
        out::migrate_text(&gold, &args.chunks, &report)
    };
    emit(global.output.as_deref(), &text)?;
    Ok(if report.missing.is_empty() { 0 } else { 1 })
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
            format!("{}: the sheet has no rows", crate::escape::path(&args.sheet)),
            "make one with `rgate gold pool`",
        ));
    }
    let labeler = args
        .labeler
        .clone()
        .or_else(|| std::env::var("USER").ok())
        .unwrap_or_else(|| "person".into());
    let color = super::use_color(global);
    let mut session = if args.blind {
        Session::blind(rows, labeler)
    } else {
        Session::new(rows, labeler)
    };
    let mut term = Terminal::open()?;
    let mut notice: Option<String> = None;
    loop {
        term.draw(&session, &args.sheet, color, notice.as_deref())?;
        let key = match term.key()? {
            Input::Key(k) => k,
            Input::Ignored(what) => {
                // Said, not swallowed: a key that does nothing looks like
                // a labeler that hung.
                notice = Some(format!("{what} does nothing here; the keys are below"));
                continue;
            }
            Input::Other => continue,
        };
        match session.press(key, &now_utc()) {
            Effect::Save => {
                notice = None;
                let met = session.conflicts.len();
                save_edits(&args.sheet, &mut session, &mut notice)?;
                if let Some(c) = session.conflicts[met..].last() {
                    notice = Some(format!("not saved: {}", c.describe()));
                }
            }
            Effect::Quit => break,
            Effect::Moved => notice = None,
            Effect::Nothing => notice = Some(nothing_to_do(key, &session).into()),
        }
    }
    save_edits(&args.sheet, &mut session, &mut notice)?;
    drop(term);
    eprintln!(
        "{}: {} of {} labeled; saved",
        crate::escape::path(&args.sheet),
        session.labeled(),
        count(session.rows.len(), "row", "rows")
    );
    if session.conflicts.is_empty() {
        return Ok(0);
    }
    // As `gold import` does with conflicts: listed, the other grade kept, exit 1.
    for c in &session.conflicts {
        eprintln!("conflict: {}", printable(&c.describe()));
    }
    eprintln!(
        "{}: not saved for {}; settle them with the other labeler",
        args.sheet.display(),
        count(session.conflicts.len(), "row", "rows")
    );
    Ok(1)
}

/// Why a key did nothing, for the notice line.
fn nothing_to_do(key: Key, s: &Session) -> &'static str {
    match key {
        Key::Undo => "nothing to undo",
        Key::Accept if s.is_blind() => "a blind session shows no suggestion to accept: grade 0-3",
        Key::Accept => "no model suggestion on this row to accept: grade 0-3",
        _ => "nothing to do",
    }
}

/// Saves the session's edits by merging them into the sheet as it is on
/// disk (others may have saved to it meanwhile), then shows the sheet as
/// saved. A wait for another rgate's lock shows as the notice.
fn save_edits(path: &std::path::Path, session: &mut Session, notice: &mut Option<String>) -> Result<()> {
    let edits = session.take_edits();
    if edits.is_empty() {
        return Ok(());
    }
    let mut waited = None;
    let (rows, conflicts) = sheet::update(
        path,
        &now_utc(),
        &mut |m: &str| waited = Some(m.to_string()),
        |disk| {
            let (changed, conflicts) = label::merge(disk, &edits);
            Ok(((disk.clone(), conflicts), changed))
        },
    )?;
    if waited.is_some() {
        *notice = waited;
    }
    session.refresh(rows, conflicts);
    Ok(())
}

/// Raw mode on the alternate screen for as long as it lives; dropping it
/// restores the terminal, on every exit path.
struct Terminal {
    out: std::io::Stdout,
}

/// What one terminal event was.
enum Input {
    Key(Key),
    /// A key press that means nothing here, described for the notice.
    Ignored(String),
    /// Not a key press (a resize, a key release): redraw only.
    Other,
}

/// The footer's items, wrapped to the width as whole items.
const KEYS: [&str; 6] = [
    "0-3 grade (0 = not relevant)",
    "a/Enter accept suggestion",
    "s skip",
    "u undo",
    "n/p next/previous",
    "q save and quit",
];
const BLIND_KEYS: [&str; 5] = [
    "0-3 grade (0 = not relevant)",
    "s skip",
    "u undo",
    "n/p next/previous",
    "q save and quit",
];

/// Items joined by two spaces into lines of at most `w` columns, an item
/// wider than a line word-wrapped on lines of its own: the header and the footer, laid out
/// to the terminal's width instead of cut at its edge (a cut header lost
/// the progress count on a narrow terminal).
fn lay_out(items: &[String], w: usize) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut line = String::new();
    for item in items {
        if item.is_empty() {
            continue;
        }
        if display_width(item) > w {
            if !line.is_empty() {
                out.push(std::mem::take(&mut line));
            }
            out.extend(wrap(item, w));
            continue;
        }
        if !line.is_empty() && display_width(&line) + 2 + display_width(item) > w {
            out.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push_str("  ");
        }
        line.push_str(item);
    }
    if !line.is_empty() {
        out.push(line);
    }
    out
}

fn footer_lines(s: &Session, w: usize) -> Vec<String> {
    let keys: &[&str] = if s.is_blind() { &BLIND_KEYS } else { &KEYS };
    lay_out(&keys.iter().map(|k| k.to_string()).collect::<Vec<_>>(), w)
}

/// The labeler's screen for the row under the cursor, `w` by `h`, as lines
/// (and whether each is bold); the footer is drawn below them, and takes
/// `footer` lines.
fn screen_lines(
    s: &Session,
    path: &std::path::Path,
    w: usize,
    h: usize,
    footer: usize,
) -> Vec<(String, bool)> {
    let row = &s.rows[s.cursor];
    let mut lines: Vec<(String, bool)> = Vec::new();
    let done = s.labeled();
    // The progress first: on a narrow terminal the path wraps, the count
    // stays in view.
    let header = [
        "rgate gold label".to_string(),
        format!(
            "{}/{} labeled ({}%)",
            done,
            s.rows.len(),
            100 * done / s.rows.len()
        ),
        format!("row {}/{}", s.cursor + 1, s.rows.len()),
        if s.is_blind() {
            "blind: other grades hidden".to_string()
        } else {
            String::new()
        },
        printable(&path.display().to_string()),
    ];
    for l in lay_out(&header, w) {
        lines.push((l, true));
    }
    lines.push((String::new(), false));
    for l in lay_out(
        &[
            format!("query   {}", printable(&row.query_id)),
            format!("[{}]", printable(&row.stratum)),
        ],
        w,
    ) {
        lines.push((l, true));
    }
    for l in wrap(&printable(&row.query), w - 8) {
        lines.push((format!("        {l}"), false));
    }
    lines.push((String::new(), false));
    let grade = if s.is_blind() {
        // Nothing another source gave: only this labeler's own grade.
        match s.mine(row) {
            Some(o) => format!("your grade {}", o.grade),
            None => "not labeled by you".into(),
        }
    } else {
        match (row.grade, row.source.as_deref()) {
            (Some(g), Some("model")) => format!(
                "grade {g} (suggested by {}, not verified)",
                printable(row.labeler.as_deref().unwrap_or("a model"))
            ),
            (Some(g), _) => format!(
                "grade {g} ({})",
                printable(row.labeler.as_deref().unwrap_or("person"))
            ),
            (None, _) => "not labeled".into(),
        }
    };
    for l in lay_out(&[format!("chunk   {}", printable(&row.chunk_id)), grade], w) {
        lines.push((l, true));
    }
    let room = h.saturating_sub(lines.len() + 1 + footer);
    let body: Vec<String> = match row.text.as_deref() {
        Some(text) => text.lines().flat_map(|l| wrap(&printable(l), w - 8)).collect(),
        None => vec!["(no text: pass --corpus to gold pool)".into()],
    };
    for (i, l) in body.iter().enumerate() {
        if i + 1 == room && body.len() > room {
            lines.push((format!("        … {} more lines", body.len() - i), false));
            break;
        }
        lines.push((format!("        {l}"), false));
    }
    lines
}

impl Terminal {
    fn open() -> Result<Terminal> {
        use crossterm::{cursor, execute, terminal};
        terminal::enable_raw_mode()?;
        let mut out = std::io::stdout();
        execute!(out, terminal::EnterAlternateScreen, cursor::Hide)?;
        Ok(Terminal { out })
    }

    /// The next event; Ctrl-C and Esc quit, Enter accepts.
    fn key(&mut self) -> Result<Input> {
        use crossterm::event::{self, Event, KeyCode, KeyEventKind, KeyModifiers};
        match event::read()? {
            Event::Key(k) if k.kind != KeyEventKind::Release => Ok(match k.code {
                KeyCode::Char('c') if k.modifiers.contains(KeyModifiers::CONTROL) => Input::Key(Key::Quit),
                KeyCode::Esc => Input::Key(Key::Quit),
                KeyCode::Enter => Input::Key(Key::Accept),
                KeyCode::Right | KeyCode::Down => Input::Key(Key::Next),
                KeyCode::Left | KeyCode::Up => Input::Key(Key::Previous),
                KeyCode::Char(c) => match Key::from_char(c) {
                    Some(key) => Input::Key(key),
                    None => Input::Ignored(format!("key `{}`", printable(&c.to_string()))),
                },
                other => Input::Ignored(format!("key {other}")),
            }),
            _ => Ok(Input::Other),
        }
    }

    fn draw(&mut self, s: &Session, path: &std::path::Path, color: bool, notice: Option<&str>) -> Result<()> {
        use crossterm::{cursor::MoveTo, queue, style, terminal};
        let (w, h) = terminal::size().unwrap_or((80, 24));
        let (w, h) = (w.max(20) as usize, h.max(8) as usize);
        let footer = footer_lines(s, w);
        let mut lines = screen_lines(s, path, w, h, footer.len());
        if let Some(n) = notice {
            // Under the header: a save that met another person's grade, a
            // key that did nothing.
            let at = lines.iter().position(|(l, _)| l.is_empty()).unwrap_or(1);
            lines.insert(at, (printable(n), true));
        }
        queue!(self.out, terminal::Clear(terminal::ClearType::All))?;
        let room = h.saturating_sub(footer.len()).max(1);
        for (i, (l, bold)) in lines.iter().take(room).enumerate() {
            queue!(self.out, MoveTo(0, i as u16))?;
            let l = fit(l, w);
            if *bold && color {
                queue!(self.out, style::PrintStyledContent(style::Stylize::bold(l)))?;
            } else {
                queue!(self.out, style::Print(l))?;
            }
        }
        for (i, l) in footer.iter().enumerate() {
            let y = (h - footer.len().min(h) + i) as u16;
            queue!(self.out, MoveTo(0, y), style::Print(fit(l, w)))?;
        }
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

/// `gold agreement`: the figures for two sources on the pairs both graded.
/// No pair graded by both is an error (exit 2) saying how to get some: a
/// report of nothing would read as a result.
pub fn agreement(args: &AgreementArgs, global: &Global) -> Result<u8> {
    use crate::goldbuild::agreement::{self, Side};
    Guard::default()
        .file(&args.input, "the sheet or gold set")
        .check(global.output.as_deref())?;
    let (a, b) = (Side::parse(&args.between.0), Side::parse(&args.between.1));
    if a == b && matches!(a, Side::Labeler(_)) {
        return Err(usage_error(
            format!("--between names {} twice", printable(a.name())),
            "compare two sources: --between model,person, --between person,person, or two labelers' names",
        ));
    }
    let (input, items, warnings) = agreement::load(&args.input)?;
    warnings.emit(global.quiet);
    let r = agreement::agreement(&items, &a, &b, args.relevance_level);
    if r.all.n == 0 {
        return Err(usage_error(
            format!(
                "{}: no pair was graded by both {} and {} ({} in all; {} by {} only, {} by {} only)",
                crate::escape::path(&args.input),
                printable(a.name()),
                printable(b.name()),
                count(r.pairs, "pair", "pairs"),
                r.only_a,
                printable(a.name()),
                r.only_b,
                printable(b.name()),
            ),
            "grade the same pairs twice: `rgate gold label SHEET --blind --labeler NAME` for a second person, or a model's pass before people verify it; a gold set keeps them only when imported from such a sheet",
        ));
    }
    let text = match global.format() {
        Format::Json => crate::report::agreement::json(&args.input, input, &r),
        Format::Markdown => crate::report::agreement::markdown(&args.input, &r),
        _ => crate::report::agreement::text(&args.input, &r),
    };
    emit(global.output.as_deref(), &text)?;
    Ok(0)
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

    /// On a 50-column terminal the header wraps instead of losing the
    /// progress count, the path stays whole, and every key of the footer
    /// shows; no line is wider than the terminal.
    #[test]
    fn the_screen_is_laid_out_to_the_terminal_width() {
        use crate::goldbuild::sheet::SheetRow;
        let rows = vec![SheetRow {
            query_id: "q-0123abcd".into(),
            query: "how do I rotate an api key for the production cluster safely".into(),
            stratum: "how-to".into(),
            chunk_id: "docs/security/keys.md#12".into(),
            text: Some("Rotate keys with the admin console.".into()),
            grade: Some(2),
            source: Some("model".into()),
            labeler: Some("gpt-4o-mini".into()),
            ..Default::default()
        }];
        let s = Session::new(rows, "ana");
        let path = std::path::Path::new("/tmp/some/long/directory/for/labeling/sheet-2026-11.jsonl");
        let footer = footer_lines(&s, 50);
        let lines = screen_lines(&s, path, 50, 24, footer.len());
        let text: Vec<&str> = lines
            .iter()
            .map(|(l, _)| l.as_str())
            .chain(footer.iter().map(String::as_str))
            .collect();
        assert!(text.iter().all(|l| display_width(l) <= 50), "{text:#?}");
        assert_eq!(text[0], "rgate gold label  0/1 labeled (0%)  row 1/1");
        assert_eq!(text[1], "/tmp/some/long/directory/for/labeling/sheet-2026-1");
        assert_eq!(text[2], "1.jsonl");
        assert_eq!(
            text[8..10],
            [
                "chunk   docs/security/keys.md#12",
                "grade 2 (suggested by gpt-4o-mini, not verified)"
            ]
        );
        assert_eq!(
            footer,
            [
                "0-3 grade (0 = not relevant)",
                "a/Enter accept suggestion  s skip  u undo",
                "n/p next/previous  q save and quit"
            ]
        );
        // Blind: no model, no grade of anyone else's.
        let b = Session::blind(s.rows.clone(), "bo");
        let all: String = screen_lines(&b, path, 50, 24, 2)
            .into_iter()
            .map(|(l, _)| l + "\n")
            .collect();
        assert!(!all.contains("gpt") && !all.contains("grade 2"), "{all}");
        assert!(
            all.contains("not labeled by you") && all.contains("blind: other grades hidden"),
            "{all}"
        );
    }
}
