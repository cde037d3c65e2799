//! `rgate gate`: every configured retriever against its baseline.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Result;

use crate::baseline::{current_commit, now_utc, HistoryEntry, Store};
use crate::chunks::ChunkMap;
use crate::cli::{ColorChoice, GateArgs, Global};
use crate::config::{Candidates, Config, Retriever, RetrieverCommand};
use crate::diag::{input_error_hint, name_some, usage_error, Warnings};
use crate::eval::{Scores, Summary};
use crate::fsutil::{emit, write_atomic};
use crate::gate::{self, Current, GateOutcome};
use crate::github::Actions;
use crate::gitref::GitRef;
use crate::gold::GoldSet;
use crate::prepared::Prepared;
use crate::report::gate::GateView;
use crate::report::Format;
use crate::retriever;
use crate::run::{self, JudgedRun, KeepIds, RunFormat, RunOptions};
use crate::stages;

/// One retriever's current run, judged and scored.
pub struct Evaluated {
    pub name: String,
    pub judged: JudgedRun,
    /// The candidate list the run was reranked from, with every id kept.
    pub candidates: Option<JudgedRun>,
    pub scores: Scores,
    /// Per gold query, final results absent from the candidates.
    pub absent: Vec<(usize, Vec<String>)>,
}

/// What `--run NAME=PATH`, `--candidates NAME=PATH` and `--chunks
/// NAME=PATH` replace.
#[derive(Debug, Clone, Copy, Default)]
pub struct Overrides<'a> {
    pub runs: &'a [(String, PathBuf)],
    pub candidates: &'a [(String, PathBuf)],
    pub chunks: &'a [(String, PathBuf)],
}

pub fn prepare(config: &Config) -> Result<Prepared> {
    let (gold, warnings) = GoldSet::load(&config.gold, config.strata.as_deref())?;
    config.check_against_gold(&gold.path, &gold.strata)?;
    Ok(
        Prepared::new(gold, warnings, config.metrics.clone(), config.relevance_level)
            .with_span_coverage(config.span_coverage),
    )
}

/// Reads a run file, or runs a retriever command and reads its output.
fn read_source(
    name: &str,
    file: Option<&Path>,
    cmd: Option<&RetrieverCommand>,
    prep: &Prepared,
    opts: &RunOptions,
    what: &str,
) -> Result<JudgedRun> {
    let cmd = match (file, cmd) {
        (Some(path), _) => return run::read(path, &prep.gold, &prep.labels, opts),
        (None, Some(cmd)) => cmd,
        (None, None) => {
            return Err(usage_error(
                format!("retriever `{name}` has no {what} to read"),
                "give it a file or a command in the config",
            ))
        }
    };
    let label = if what == "run" {
        format!("retriever {name}")
    } else {
        format!("retriever {name} ({what})")
    };
    let mut bar = super::Progress::new(label, prep.gold.len(), false);
    let out = retriever::run(name, cmd, &prep.gold, &mut |n| bar.update(n));
    bar.done();
    let out = out?;
    let opts = RunOptions {
        format: Some(opts.format.unwrap_or(RunFormat::Jsonl)),
        ..opts.clone()
    };
    let mut judged = run::read(&out.path, &prep.gold, &prep.labels, &opts).map_err(|e| {
        usage_error(
            format!(
                "retriever `{name}`: the output of `{}` is not a {what}: {e}{}",
                cmd.argv.join(" "),
                retriever::stderr_note(&out.stderr_tail)
            ),
            "the command must write JSON lines {\"query_id\": ..., \"results\": [...]} on stdout, and nothing else",
        )
    })?;
    judged.path = PathBuf::from(format!("command: {}", cmd.argv.join(" ")));
    Ok(judged)
}

/// Reads the selected retrievers' runs (with `--run NAME=PATH` overrides),
/// keeping ranked ids to the depth a baseline stores when `for_baseline`,
/// and their candidate lists where they name one (with `--candidates
/// NAME=PATH` overrides), keeping every id. The gate alone reads a run's ids
/// only to compare them with its candidate list; a run without one keeps
/// none (700,000 strings for 7,000 queries at depth 100).
pub fn evaluate_runs(
    config: &Config,
    prep: &Prepared,
    selected: &[&Retriever],
    overrides: Overrides,
    for_baseline: bool,
) -> Result<Vec<Evaluated>> {
    for (flag, list) in [
        ("--run", overrides.runs),
        ("--candidates", overrides.candidates),
        ("--chunks", overrides.chunks),
    ] {
        for (name, _) in list {
            config.retriever(name)?;
            if !selected.iter().any(|r| &r.name == name) {
                return Err(usage_error(
                    format!("{flag} {name}=...: `{name}` is not among the retrievers selected"),
                    "name it as a positional argument too, or drop the override",
                ));
            }
        }
    }
    let keep = match config.depth() {
        Some(d) => KeepIds::Depth(d),
        None => KeepIds::All,
    };
    prep.hashing_beside(|| {
        selected
            .iter()
            .map(|r| {
                let pick = |list: &[(String, PathBuf)]| {
                    list.iter()
                        .rev()
                        .find(|(n, _)| *n == r.name)
                        .map(|(_, p)| p.clone())
                };
                // Only span labels need a chunk map; a gold set without them
                // does not pay for reading one.
                let chunks = match pick(overrides.chunks).or_else(|| r.chunks.clone()) {
                    Some(p) if prep.gold.has_spans() => Some(Arc::new(ChunkMap::load(&p)?)),
                    _ => None,
                };
                let two_stage = r.candidates.is_some() || pick(overrides.candidates).is_some();
                let opts = RunOptions {
                    format: r.run_format,
                    keep_ids: if for_baseline || two_stage {
                        keep
                    } else {
                        KeepIds::None
                    },
                    chunks,
                };
                let file = pick(overrides.runs).or_else(|| r.command.is_none().then(|| r.run.clone()));
                let judged = read_source(&r.name, file.as_deref(), r.command.as_ref(), prep, &opts, "run")?;
                check_coverage(config, prep, &judged)?;
                let cand_file = pick(overrides.candidates).or_else(|| match &r.candidates {
                    Some(Candidates::File(p)) => Some(p.clone()),
                    _ => None,
                });
                let cand_cmd = match &r.candidates {
                    Some(Candidates::Command(c)) => Some(c),
                    _ => None,
                };
                let candidates = if cand_file.is_some() || cand_cmd.is_some() {
                    // One chunking serves both stages.
                    let opts = RunOptions {
                        format: None,
                        keep_ids: KeepIds::All,
                        chunks: opts.chunks.clone(),
                    };
                    let c = read_source(
                        &r.name,
                        cand_file.as_deref(),
                        cand_cmd,
                        prep,
                        &opts,
                        "candidate list",
                    )?;
                    stages::check_same_queries(
                        &prep.gold,
                        &judged.path,
                        &judged.present,
                        &c.path,
                        &c.present,
                    )?;
                    Some(c)
                } else {
                    None
                };
                // `candidates:` metrics apply only to a retriever that names its
                // candidate list.
                let metrics = match &candidates {
                    Some(_) => prep.metrics.clone(),
                    None => crate::metrics::final_only(&prep.metrics),
                };
                let scores = Scores::compute_stages(
                    &metrics,
                    &judged.rankings,
                    candidates.as_ref().map(|c| c.rankings.as_slice()),
                    &prep.contexts,
                );
                let absent = match (&candidates, &judged.top_ids) {
                    (Some(c), Some(f)) => c
                        .top_ids
                        .as_ref()
                        .map(|ci| stages::absent_from_candidates(f, ci))
                        .unwrap_or_default(),
                    _ => Vec::new(),
                };
                Ok(Evaluated {
                    name: r.name.clone(),
                    judged,
                    candidates,
                    scores,
                    absent,
                })
            })
            .collect()
    })
}

/// A run that answers none of the gold queries, or leaves out more than
/// `gate.max_missing` of them, means the retriever step broke (a crash, a
/// truncated file, the wrong query set): exit 2, not a "regression" that
/// sends someone hunting for a quality drop. Fewer absent queries score 0
/// with a warning, as trec_eval's `-c` does.
fn check_coverage(config: &Config, prep: &Prepared, run: &JudgedRun) -> Result<()> {
    let total = prep.gold.len();
    let missing: Vec<&str> = run.missing().map(|i| prep.gold.queries[i].id.as_str()).collect();
    if total == 0 || missing.is_empty() {
        return Ok(());
    }
    let max = config.gate.max_missing;
    let share = missing.len() as f64 / total as f64;
    let message = if missing.len() == total {
        format!("the run covers none of the {total} gold queries")
    } else if share > max {
        format!(
            "the run misses {} of the {total} gold queries ({:.1}%, more than gate.max_missing {max} allows): {}",
            missing.len(),
            share * 100.0,
            name_some(&missing, 5)
        )
    } else {
        return Ok(());
    };
    Err(input_error_hint(
        &run.path,
        None,
        message,
        format!(
            "check that the retriever step finished and ran on the gold set's queries ({}); to accept a partial run, raise gate.max_missing in {}",
            prep.gold.path.display(),
            config.path.display()
        ),
    ))
}

/// `gate` compares against the baseline directory: when it does not exist,
/// every retriever would "have no baseline" and pass, so a typo in
/// `baselines:` would switch the gate off. `baseline update` creates it.
fn check_baseline_dir(config: &Config) -> Result<()> {
    if config.baselines.is_dir() {
        return Ok(());
    }
    Err(input_error_hint(
        &config.baselines,
        None,
        format!(
            "the baseline directory does not exist (`baselines:` in {})",
            config.path.display()
        ),
        "record the first baselines with `rgate baseline update` (it creates the directory) and commit them; or fix the `baselines:` path",
    ))
}

/// The gate's decision for already-evaluated runs.
/// `recording`: the caller is about to record baselines, so a missing one
/// needs no advice on how to record it.
pub fn decide(
    config: &Config,
    prep: &Prepared,
    runs: &[Evaluated],
    require_baseline: bool,
    recording: bool,
    at_ref: Option<&GitRef>,
) -> Result<GateOutcome> {
    let store = Store::new(&config.baselines);
    let mut retrievers = Vec::new();
    for e in runs {
        let baseline = match at_ref {
            Some(r) => r.load_baseline(&store, &e.name)?,
            None => store.load(&e.name)?,
        };
        if baseline.is_none() && require_baseline {
            return Err(input_error_hint(
                &store.baseline_path(&e.name),
                None,
                format!("no baseline for `{}` (--require-baseline)", e.name),
                format!("record one with `rgate baseline update {}`", e.name),
            ));
        }
        let current = Current {
            name: &e.name,
            run: e.judged.path.display().to_string(),
            rankings: &e.judged.rankings,
            scores: &e.scores,
            candidates: e.candidates.as_ref().and_then(|c| {
                Some(gate::CurrentCandidates {
                    path: c.path.display().to_string(),
                    rankings: &c.rankings,
                    ids: c.top_ids.as_deref()?,
                })
            }),
        };
        let mut outcome = gate::evaluate(prep, &config.gate, &current, baseline.as_ref());
        // What the run reader noticed (absent queries above all) belongs in
        // the report a reviewer reads, first.
        let mut run_warnings = e.judged.warnings.0.clone();
        if let Some(c) = &e.candidates {
            run_warnings.extend(c.warnings.0.iter().cloned());
            run_warnings.extend(stages::absent_warning(
                &prep.gold,
                &e.judged.path,
                &c.path,
                &e.absent,
            ));
        }
        if let Some(st) = outcome.stages.as_mut() {
            st.absent = e
                .absent
                .iter()
                .map(|(q, ids)| (prep.gold.queries[*q].id.clone(), ids.clone()))
                .collect();
        }
        run_warnings.append(&mut outcome.warnings);
        outcome.warnings = run_warnings;
        if baseline.is_none() && !recording {
            outcome.warnings.push(format!(
                "no baseline for `{}` at {}: it passes for now; record one with `rgate baseline update {}`",
                e.name,
                store.baseline_path(&e.name).display(),
                e.name
            ));
        }
        retrievers.push(outcome);
    }
    Ok(GateOutcome {
        settings: config.gate.clone(),
        retrievers,
        warnings: prep.warnings.0.clone(),
    })
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

/// A history line for a result.
pub fn history_entry(
    prep: &Prepared,
    e: &Evaluated,
    kind: &str,
    note: Option<String>,
    verdict: Option<&str>,
    dir: &Path,
) -> HistoryEntry {
    let summary = Summary::new(&e.scores, &prep.gold);
    let scopes = summary.scope_means();
    HistoryEntry {
        time: now_utc(),
        commit: current_commit(dir),
        kind: kind.to_string(),
        note,
        gold_fingerprint: Some(prep.fingerprint().to_string()),
        verdict: verdict.map(str::to_string),
        run: Some(e.judged.path.display().to_string()),
        aggregates: HistoryEntry::aggregates_of(&e.scores.metrics, &scopes),
    }
}

/// In a GitHub Actions job: the summary, the `verdict` and `report`
/// outputs, and the annotations (on stderr). The report output is the
/// `--report-dir` Markdown, or a copy under `$RUNNER_TEMP`.
fn publish_to_actions(actions: &Actions, outcome: &GateOutcome, report_dir: Option<&Path>) -> Result<()> {
    let markdown = GateView {
        outcome,
        command: "gate",
        color: false,
    }
    .render(Format::Markdown)?;
    let report = match report_dir {
        Some(dir) => dir.join("report.md"),
        None => {
            let path = actions.temp.join("rgate-report.md");
            write_atomic(&path, markdown.as_bytes())?;
            path
        }
    };
    for line in actions.publish(outcome, &markdown, &report)? {
        eprintln!("{line}");
    }
    Ok(())
}

pub fn run(args: &GateArgs, global: &Global) -> Result<u8> {
    let config = Config::load(global.config.as_deref())?;
    let selected = config.select(&args.names)?;
    check_baseline_dir(&config)?;
    let prep = prepare(&config)?;
    let runs = evaluate_runs(
        &config,
        &prep,
        &selected,
        Overrides {
            runs: &args.runs,
            candidates: &args.candidates,
            chunks: &args.chunks,
        },
        false,
    )?;
    let at_ref = match &args.baseline_ref {
        Some(rev) => Some(GitRef::resolve(&config.baselines, rev)?),
        None => None,
    };
    let outcome = decide(
        &config,
        &prep,
        &runs,
        args.require_baseline,
        false,
        at_ref.as_ref(),
    )?;

    let format = global.format();
    emit_warnings(&outcome, format, global.quiet);
    let view = GateView {
        outcome: &outcome,
        command: "gate",
        color: use_color(global),
    };
    emit(global.output.as_deref(), &view.render(format)?)?;
    if let Some(dir) = &args.report_dir {
        let plain = GateView { color: false, ..view };
        write_atomic(&dir.join("report.md"), plain.render(Format::Markdown)?.as_bytes())?;
        write_atomic(&dir.join("report.json"), plain.render(Format::Json)?.as_bytes())?;
        write_atomic(&dir.join("junit.xml"), plain.render(Format::Junit)?.as_bytes())?;
    }
    if let Some(actions) = Actions::from_env() {
        publish_to_actions(&actions, &outcome, args.report_dir.as_deref())?;
    }
    if args.record {
        let store = Store::new(&config.baselines);
        let dir = config.path.parent().unwrap_or(Path::new("."));
        for (e, r) in runs.iter().zip(&outcome.retrievers) {
            let lock = store.lock(&e.name, config.gate.lock_timeout, &mut |m: &str| {
                if !global.quiet {
                    eprintln!("{m}");
                }
            })?;
            store.append_history(
                &lock,
                &history_entry(&prep, e, "gate", None, Some(r.verdict().name()), dir),
            )?;
        }
    }
    Ok(outcome.exit_code())
}
