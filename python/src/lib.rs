//! `rgate._rgate`: the Python module's native half. It turns Python values
//! into the library's inputs ([`MemoryGold`], [`MemoryRun`], paths), calls
//! the same [`rgate::pipeline`] functions the command line calls, and hands
//! back what the command line's reports render (the JSON report is the
//! result's `to_dict()`, the table its `repr`). Nothing is computed here
//! and nothing is printed: warnings come back as a list for Python's
//! `warnings` module, errors as `rgate.RgateError` with the CLI's message
//! and hint. The Python half (`python/rgate/`) says which input shape is
//! which; this file only reads the shapes it is given.

use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::Arc;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyList, PyString, PyTuple};

use rgate::config::{Config, LabelMode, TestKind, Weighting, DEFAULT_SEED};
use rgate::diag::{UserError, Warnings};
use rgate::gate::GateOutcome;
use rgate::gold::MemoryGold;
use rgate::pipeline::{
    self, CompareInput, CompareOptions, EvalOptions, GateOptions, GoldInput, Overrides, RunSource, Unwatched,
};
use rgate::report::compare::CompareView;
use rgate::report::eval::EvalView;
use rgate::report::gate::GateView;
use rgate::report::Format;
use rgate::run::memory::MemoryRun;

mod read;
mod work;
use read::Reader;
use rgate::stats::Alternative;

/// The binary's allocator: see src/main.rs.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// `rgate.RgateError(message, hint)`, built by the Python half's class so
/// that it is one class, importable and picklable from `rgate`.
fn user_error(py: Python<'_>, message: String, hint: Option<String>) -> PyErr {
    match py
        .import("rgate._errors")
        .and_then(|m| m.getattr("RgateError"))
        .and_then(|cls| cls.call1((message.clone(), hint)))
    {
        Ok(err) => PyErr::from_value(err),
        Err(_) => PyValueError::new_err(message),
    }
}

/// The library's error as `RgateError`, its context chain in the message.
fn rgate_error(py: Python<'_>, e: &anyhow::Error) -> PyErr {
    let own = |c: &(dyn std::error::Error + 'static)| match c.downcast_ref::<UserError>() {
        Some(u) => u.message.clone(),
        None => c.to_string(),
    };
    let mut message = own(e.as_ref());
    for cause in e.chain().skip(1) {
        message.push_str("\ncaused by: ");
        message.push_str(&own(cause));
    }
    let hint = e
        .chain()
        .find_map(|c| c.downcast_ref::<UserError>())
        .and_then(|u| u.hint.clone());
    user_error(py, message, hint)
}

/// A library check's `(message, hint)` as `RgateError`.
fn check_error(py: Python<'_>, (message, hint): (String, String)) -> PyErr {
    user_error(py, message, Some(hint))
}

/// `v` as a message shows it: its repr, cut to a readable length. A repr
/// that raises (or an int too long for `str`, Python 3.11's limit) shows
/// the type instead, so a message never fails to be made.
fn shown(v: &Bound<'_, PyAny>) -> String {
    const MAX: usize = 60;
    match v.repr().and_then(|r| r.to_cow().map(|c| c.into_owned())) {
        Ok(r) if r.chars().count() <= MAX => r,
        Ok(r) => format!("{}…", r.chars().take(MAX - 1).collect::<String>()),
        Err(_) => format!("<{} object>", type_name(v)),
    }
}

fn type_name(v: &Bound<'_, PyAny>) -> String {
    v.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "?".into())
}

/// A Python exception as a message's tail: `ZeroDivisionError: no`.
fn described(py: Python<'_>, e: &PyErr) -> String {
    let name = e
        .get_type(py)
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "an exception".into());
    match e.value(py).str().and_then(|s| s.to_cow().map(|c| c.into_owned())) {
        Ok(m) if !m.is_empty() => format!("{name}: {m}"),
        _ => name,
    }
}

/// `v` as a user would type it on the command line, for the library's own
/// parser of that argument to judge: an integer (an int, or anything with
/// `__index__`, as numpy's are) as its digits, anything else as its repr
/// (`1.9`, `'2'`, `True`), which no integer parser takes. So the checks,
/// and their messages, are the command line's, through the one function
/// in the library, not a copy here (issue 41, item 9).
fn word(v: &Bound<'_, PyAny>) -> String {
    if v.is_instance_of::<PyBool>() {
        return shown(v);
    }
    let py = v.py();
    // SAFETY: the GIL is held; PyNumber_Index returns a new reference or
    // NULL with an exception set, which is cleared (the value is then
    // shown as its repr).
    let index = unsafe { pyo3::ffi::PyNumber_Index(v.as_ptr()) };
    if index.is_null() {
        let _ = PyErr::take(py);
        return shown(v);
    }
    let index = unsafe { Bound::from_owned_ptr(py, index) };
    match index.str().and_then(|s| s.to_cow().map(|c| c.into_owned())) {
        Ok(digits) => digits,
        Err(_) => format!("<an int of {} digits>", bits_digits(&index)),
    }
}

/// About how many decimal digits an int too long for `str` has.
fn bits_digits(i: &Bound<'_, PyAny>) -> String {
    i.call_method0("bit_length")
        .and_then(|b| b.extract::<u64>())
        .map(|b| format!("about {}", (b as f64 * std::f64::consts::LOG10_2).ceil() as u64))
        .unwrap_or_else(|_| "too many".into())
}

/// `relevance_level=`: what `--relevance-level` takes.
fn relevance_level(py: Python<'_>, v: &Bound<'_, PyAny>) -> PyResult<i32> {
    rgate::config::relevance_level_from_word(&word(v)).map_err(|e| check_error(py, e))
}

/// `resamples=`: what `--resamples` and the config's `resamples` take.
fn resamples(py: Python<'_>, v: &Bound<'_, PyAny>) -> PyResult<u32> {
    rgate::config::resamples_from_word(&word(v)).map_err(|e| check_error(py, e))
}

/// `seed=`: what `--seed` takes, a u64, read by the same function.
fn seed(py: Python<'_>, v: &Bound<'_, PyAny>) -> PyResult<u64> {
    rgate::config::seed_from_word(&word(v)).map_err(|e| check_error(py, e))
}

/// `alpha=`: a real number (a float, an int, numpy's), then the check
/// `--alpha` and the config's `alpha` go through.
fn alpha(py: Python<'_>, v: &Bound<'_, PyAny>) -> PyResult<f64> {
    let number =
        if v.is_instance_of::<PyBool>() || v.is_instance_of::<PyString>() || v.is_instance_of::<PyBytes>() {
            None
        } else {
            v.extract::<f64>().ok()
        };
    let a = number.ok_or_else(|| {
        user_error(
            py,
            format!("alpha {} is not a number", shown(v)),
            Some("0.05 is the usual choice".into()),
        )
    })?;
    rgate::config::check_alpha(a).map_err(|e| check_error(py, e))?;
    Ok(a)
}

/// A shape the Python half sorted out, or a value it did not expect.
fn bad(what: impl Into<String>) -> PyErr {
    PyValueError::new_err(what.into())
}

/// `e` with `whose: ` before its message when it is a refused value (a
/// ValueError from [`bad`] or the value checks): a document id or a score
/// that names neither its query nor its retriever leaves the caller to
/// search a 70,000-query dict (issue 50). Other exceptions (an
/// interrupt, the caller's own) pass as they are.
fn in_context(py: Python<'_>, e: PyErr, whose: &str) -> PyErr {
    if e.get_type(py).is(py.get_type::<PyValueError>()) {
        let message = e.value(py).str().map(|s| s.to_string()).unwrap_or_default();
        bad(format!("{whose}: {message}"))
    } else {
        e
    }
}

fn key(k: &Bound<'_, PyAny>, what: &str) -> PyResult<String> {
    if let Ok(s) = k.extract::<String>() {
        return Ok(s);
    }
    if k.is_instance_of::<PyString>() {
        // A str that is not text: a lone surrogate (from `surrogateescape`
        // decoding, or `\ud800` written out), which UTF-8 cannot hold, and
        // so no file could (issue 41, item 14: it said "must be a string,
        // not str").
        return Err(bad(format!(
            "{what} {} holds a lone surrogate, which is not text (no UTF-8 file can hold it)",
            shown(k)
        )));
    }
    // ir_datasets and pandas hand over ids as ints at times; an id is its
    // decimal text, as a JSON run's numeric ids are.
    if let Ok(i) = k.extract::<i64>() {
        return Ok(i.to_string());
    }
    Err(bad(format!("{what} must be a string, not {}", type_name(k))))
}

/// Why `v` could not be read as a number: the conversion's own exception
/// when the value has one (an int subclass whose `__float__` raises, an
/// int too large for a float), which "is not a number" would misreport
/// (issue 41, item 14: "a score is a number, not 2").
fn unreadable(v: &Bound<'_, PyAny>, e: &PyErr, what: &str, expected: &str) -> String {
    let py = v.py();
    // Looked up on the type, as Python looks dunders up.
    let protocol = ["__float__", "__index__", "__int__"]
        .iter()
        .any(|m| v.get_type().hasattr(*m).unwrap_or(false));
    if e.is_instance_of::<PyTypeError>(py) && !protocol {
        format!("a {what} is {expected}, not {}", shown(v))
    } else {
        format!(
            "{what} {} could not be read as {expected}: {}",
            shown(v),
            described(py, e)
        )
    }
}

/// A grade: an int, or a float with an integral value (a DataFrame column
/// read from CSV), as qrels grades are integers.
fn grade(v: &Bound<'_, PyAny>, qid: &str, doc: &str) -> PyResult<i32> {
    let at = || format!("query `{qid}`, document `{doc}`");
    let e = match v.extract::<i32>() {
        Ok(g) => return Ok(g),
        Err(e) => e,
    };
    if e.is_instance_of::<pyo3::exceptions::PyOverflowError>(v.py()) {
        // Qrels files' words: see src/gold/qrels.rs.
        return Err(bad(format!(
            "{}: grade {} is out of range (grades are integers below 2^31)",
            at(),
            shown(v)
        )));
    }
    match v.extract::<f64>() {
        Ok(f) if f.fract() == 0.0 && f.abs() <= i32::MAX as f64 => Ok(f as i32),
        Ok(_) => Err(bad(format!("{}: a grade is an integer, not {}", at(), shown(v)))),
        Err(e) => Err(bad(format!(
            "{}: {}",
            at(),
            unreadable(v, &e, "grade", "an integer")
        ))),
    }
}

fn score(v: &Bound<'_, PyAny>, qid: &str, doc: &str) -> PyResult<f64> {
    v.extract::<f64>().map_err(|e| {
        bad(format!(
            "query `{qid}`, document `{doc}`: {}",
            unreadable(v, &e, "score", "a number")
        ))
    })
}

/// `(kind, name, value...)` from `rgate._inputs`: `("path", _, str)`,
/// `("graded", name, {q: {d: g}})`, `("listed", name, {q: [d]})`,
/// `("rows", name, qids, docs, values)`; `name` ("qrels dict") stands for
/// a path in messages.
fn gold_input(
    spec: &Bound<'_, PyTuple>,
    strata: Option<Vec<(String, String)>>,
    metrics: Vec<String>,
    relevance_level: i32,
) -> PyResult<GoldInput> {
    let kind: String = spec.get_item(0)?.extract()?;
    let mut input = GoldInput {
        metrics,
        relevance_level: Some(relevance_level),
        ..GoldInput::default()
    };
    let name: String = spec.get_item(1)?.extract()?;
    let memory = match kind.as_str() {
        "path" => {
            input.path = spec.get_item(2)?.extract::<PathBuf>()?;
            if strata.is_some() {
                return Err(bad(
                    "strata= goes with an in-memory gold set; a gold file carries its own (or pass the strata file to `rgate eval --strata`)",
                ));
            }
            return Ok(input);
        }
        "graded" | "listed" => {
            let d = spec.get_item(2)?;
            let d = d.cast::<PyDict>()?;
            let mut r = Reader::new(spec.py());
            MemoryGold {
                name,
                queries: if kind == "graded" {
                    r.graded_gold(d)?
                } else {
                    r.listed_gold(d)?
                },
                strata: None,
            }
        }
        "rows" => {
            let (qids, docs, values) = rows(spec)?;
            let rows = Reader::new(spec.py()).gold_rows((&qids, &docs, &values))?;
            MemoryGold::from_rows(name, rows)
        }
        other => return Err(bad(format!("unknown gold shape {other}"))),
    };
    input.memory = Some(Arc::new(MemoryGold { strata, ..memory }));
    Ok(input)
}

/// The three equal-length columns of a `("rows", ...)` shape.
fn rows<'py>(
    spec: &Bound<'py, PyTuple>,
) -> PyResult<(Bound<'py, PyList>, Bound<'py, PyList>, Bound<'py, PyList>)> {
    let col = |i: usize| -> PyResult<Bound<'py, PyList>> { Ok(spec.get_item(i)?.cast_into::<PyList>()?) };
    let (q, d, v) = (col(2)?, col(3)?, col(4)?);
    if q.len() != d.len() || q.len() != v.len() {
        return Err(bad("the columns have different lengths"));
    }
    Ok((q, d, v))
}

/// A run shape from `rgate._inputs`, as [`gold_input`]'s: `("path", _,
/// str)`, `("scored", name, {q: {d: s}})`, `("ranked", name, {q: [d]})`,
/// `("rows", name, qids, docs, scores)`. `name`, when given, replaces the
/// shape's own (compare's and the gate's runs are named by their keys).
fn run_source(spec: &Bound<'_, PyTuple>, name: Option<&str>) -> PyResult<RunSource> {
    // compare's and the gate's runs are named by the caller's keys: a
    // refused value says whose run it is in.
    run_source_as(spec, name).map_err(|e| match name {
        Some(n) => in_context(spec.py(), e, n),
        None => e,
    })
}

fn run_source_as(spec: &Bound<'_, PyTuple>, name: Option<&str>) -> PyResult<RunSource> {
    let kind: String = spec.get_item(0)?.extract()?;
    let name = match name {
        Some(n) => n.to_string(),
        None => spec.get_item(1)?.extract()?,
    };
    let run = match kind.as_str() {
        "path" => return Ok(RunSource::File(spec.get_item(2)?.extract::<PathBuf>()?)),
        "scored" | "ranked" => {
            let d = spec.get_item(2)?;
            let d = d.cast::<PyDict>()?;
            let mut r = Reader::new(spec.py());
            MemoryRun {
                name,
                queries: if kind == "scored" {
                    r.scored_run(d)?
                } else {
                    r.ranked_run(d)?
                },
            }
        }
        "rows" => {
            let (qids, docs, values) = rows(spec)?;
            Reader::new(spec.py())
                .run_rows((&qids, &docs, &values))?
                .finish(name)
        }
        other => return Err(bad(format!("unknown run shape {other}"))),
    };
    Ok(RunSource::Memory(Arc::new(run)))
}

/// The CLI's `--format` names, for `report(format)`.
fn format_named(name: &str) -> PyResult<Format> {
    Ok(match name {
        "table" => Format::Table,
        "json" => Format::Json,
        "markdown" => Format::Markdown,
        "csv" => Format::Csv,
        "junit" => Format::Junit,
        "trec" => Format::Trec,
        other => {
            return Err(bad(format!(
                "unknown format `{other}`: table, json, markdown, csv, junit or trec"
            )))
        }
    })
}

/// `(json report, table, warnings)`.
type Rendered = (String, String, Vec<String>);

#[pyfunction]
#[pyo3(signature = (gold, strata, run, metrics, per_query, relevance_level, by_stratum, labels))]
#[allow(clippy::too_many_arguments)]
fn evaluate(
    py: Python<'_>,
    gold: &Bound<'_, PyTuple>,
    strata: Option<Vec<(String, String)>>,
    run: &Bound<'_, PyTuple>,
    metrics: Vec<String>,
    per_query: bool,
    relevance_level: &Bound<'_, PyAny>,
    by_stratum: bool,
    labels: &str,
) -> PyResult<Rendered> {
    work::guard(py, || {
        let level = crate::relevance_level(py, relevance_level)?;
        let labels = labels_named(labels)?;
        let opts = EvalOptions {
            gold: GoldInput {
                labels,
                ..gold_input(gold, strata, metrics, level)?
            },
            run: run_source(run, None)?,
            run_format: None,
            chunks: None,
            candidates: None,
            cutoff: None,
            trec_names: false,
            interval_resamples: None,
            seed: DEFAULT_SEED,
        };
        work::run(py, move || -> anyhow::Result<Rendered> {
            let mut warnings = Warnings::default();
            let run = pipeline::eval(&opts, &mut warnings)?;
            let view = EvalView {
                prep: &run.prep,
                run: &run.run,
                candidates: None,
                scores: &run.scores,
                summary: &run.summary,
                intervals: run.intervals.as_ref(),
                per_query,
                by_stratum,
                trec_names: false,
                curves: &[],
                ppi: run.ppi.as_ref().map(|p| &p.summary),
            };
            let json = view.render(Format::Json)?;
            let table = EvalView {
                per_query: false,
                ..view
            }
            .render(Format::Table)?;
            Ok((json, table, warnings.0))
        })
    })
}

/// `labels=`: the command line's `--labels` spellings.
fn labels_named(name: &str) -> PyResult<LabelMode> {
    LabelMode::parse(name).ok_or_else(|| {
        // A 1 MB value passed by mistake is named by its start.
        let shown: String = name.chars().take(200).collect();
        let more = if name.chars().count() > 200 {
            format!("… ({} characters)", name.chars().count())
        } else {
            String::new()
        };
        bad(format!("unknown labels `{shown}{more}`: people, model or ppi"))
    })
}

fn test_named(name: &str) -> PyResult<TestKind> {
    Ok(match name {
        "bootstrap" => TestKind::Bootstrap,
        "t-test" | "ttest" | "t_test" => TestKind::TTest,
        "randomization" => TestKind::Randomization,
        other => {
            return Err(bad(format!(
                "unknown test `{other}`: bootstrap, t-test or randomization"
            )))
        }
    })
}

fn alternative_named(name: &str) -> PyResult<Alternative> {
    Ok(match name {
        "two-sided" | "two_sided" => Alternative::TwoSided,
        "less" => Alternative::Less,
        "greater" => Alternative::Greater,
        other => {
            return Err(bad(format!(
                "unknown alternative `{other}`: two-sided, less or greater"
            )))
        }
    })
}

fn correction_named(name: &str) -> PyResult<rgate::compare::Correction> {
    use rgate::compare::Correction;
    Ok(match name {
        "holm" => Correction::Holm,
        "bh" => Correction::Bh,
        "none" => Correction::None,
        other => return Err(bad(format!("unknown correction `{other}`: holm, bh or none"))),
    })
}

#[pyfunction]
#[pyo3(signature = (gold, strata, runs, metrics, test, resamples, seed, alternative, alpha, relevance_level, by_stratum, correction, labels))]
#[allow(clippy::too_many_arguments)]
fn compare(
    py: Python<'_>,
    gold: &Bound<'_, PyTuple>,
    strata: Option<Vec<(String, String)>>,
    runs: Vec<(String, Bound<'_, PyTuple>)>,
    metrics: Vec<String>,
    test: &str,
    resamples: &Bound<'_, PyAny>,
    seed: &Bound<'_, PyAny>,
    alternative: &str,
    alpha: &Bound<'_, PyAny>,
    relevance_level: &Bound<'_, PyAny>,
    by_stratum: bool,
    correction: &str,
    labels: &str,
) -> PyResult<Rendered> {
    work::guard(py, || {
        // The settings first, as the command line parses its arguments
        // before it reads a file.
        let (resamples, seed, alpha) = (
            crate::resamples(py, resamples)?,
            crate::seed(py, seed)?,
            crate::alpha(py, alpha)?,
        );
        let level = crate::relevance_level(py, relevance_level)?;
        let (test, alternative, correction) = (
            test_named(test)?,
            alternative_named(alternative)?,
            correction_named(correction)?,
        );
        let labels = labels_named(labels)?;
        let runs = runs
            .iter()
            .map(|(name, spec)| {
                Ok(CompareInput {
                    name: Some(name.clone()),
                    source: run_source(spec, Some(name))?,
                })
            })
            .collect::<PyResult<Vec<_>>>()?;
        let opts = CompareOptions {
            gold: GoldInput {
                labels,
                ..gold_input(gold, strata, metrics, level)?
            },
            runs,
            chunks: Vec::new(),
            run_format: None,
            test,
            resamples,
            seed,
            alternative,
            alpha,
            by_stratum,
            weighting: Weighting::Micro,
            correction,
        };
        work::run(py, move || -> anyhow::Result<Rendered> {
            let mut warnings = Warnings::default();
            let c = pipeline::compare(&opts, &mut warnings)?;
            let view = CompareView {
                prep: &c.prep,
                runs: &c.columns,
                comparisons: &c.comparisons,
                settings: &c.settings,
                alternative: c.alternative,
                family: &c.family,
            };
            Ok((
                view.render(Format::Json)?,
                view.render(Format::Table)?,
                warnings.0,
            ))
        })
    })
}

/// A decided gate, kept so that `report(format)` renders any format of it
/// later, as `rgate gate --format F` would.
#[pyclass(frozen, module = "rgate._rgate")]
struct GateReport {
    outcome: GateOutcome,
}

#[pymethods]
impl GateReport {
    fn render(&self, py: Python<'_>, format: &str) -> PyResult<String> {
        work::guard(py, || {
            let format = format_named(format)?;
            GateView {
                outcome: &self.outcome,
                command: "gate",
                color: false,
                quiet: false,
                invocation: None,
                width: usize::MAX,
            }
            .render(format)
            .map_err(|e| rgate_error(py, &e))
        })
    }

    fn exit_code(&self) -> u8 {
        self.outcome.exit_code()
    }
}

#[pyfunction]
#[pyo3(signature = (config, runs, candidates, baseline_ref, labels))]
fn gate(
    py: Python<'_>,
    config: Option<PathBuf>,
    runs: Vec<(String, Bound<'_, PyTuple>)>,
    candidates: Vec<(String, Bound<'_, PyTuple>)>,
    baseline_ref: Option<String>,
    labels: Option<String>,
) -> PyResult<GateReport> {
    work::guard(py, || {
        let labels = labels.as_deref().map(labels_named).transpose()?;
        let sources = |list: &[(String, Bound<'_, PyTuple>)], what: &str| {
            list.iter()
                .map(|(name, spec)| {
                    Ok((
                        name.clone(),
                        run_source(spec, Some(&format!("{what} of `{name}`")))?,
                    ))
                })
                .collect::<PyResult<Vec<_>>>()
        };
        let opts = GateOptions {
            overrides: Overrides {
                runs: sources(&runs, "the run")?,
                candidates: sources(&candidates, "the candidate list")?,
                chunks: Vec::new(),
            },
            baseline_ref,
            ..GateOptions::default()
        };
        let outcome = work::run(py, move || -> anyhow::Result<GateOutcome> {
            let mut config = Config::load(config.as_deref())?;
            // As `rgate gate --labels`: the argument overrides the config's key.
            if let Some(l) = labels {
                config.labels = l;
            }
            Ok(pipeline::gate(&config, &opts, &Unwatched)?.outcome)
        })?;
        Ok(GateReport { outcome })
    })
}

/// A metric's name as reports key it (`"RR"` -> `"mrr"`, `"nDCG@10"` ->
/// `"ndcg@10"`), so a result is indexed by any spelling the input takes.
#[pyfunction]
fn metric_name(py: Python<'_>, name: &str) -> PyResult<String> {
    work::guard(py, || {
        name.parse::<rgate::metrics::Metric>()
            .map(|m| m.name())
            .map_err(|e| rgate_error(py, &e))
    })
}

/// Panics on purpose, with the GIL (`where="reading"`) or on the pool
/// (`"work"`), for the test suite to see the backstop of src/work.rs turn
/// it into `RgateError`: no input makes rgate panic, so nothing else can.
#[pyfunction]
fn _panic_on_purpose(py: Python<'_>, r#where: &str) -> PyResult<()> {
    match r#where {
        "work" => work::guard(py, || {
            work::run(py, || -> anyhow::Result<()> { panic!("a panic on purpose") })
        }),
        _ => work::guard(py, || panic!("a panic on purpose")),
    }
}

/// The `rgate` command: `args` as `sys.argv` holds them, the program name
/// first. Returns the exit code.
#[pyfunction]
fn main(py: Python<'_>, args: Vec<OsString>) -> u8 {
    py.detach(|| rgate::commands::entry::main_with(args))
}

#[pymodule]
fn _rgate(m: &Bound<'_, PyModule>) -> PyResult<()> {
    work::quiet_panics();
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(evaluate, m)?)?;
    m.add_function(wrap_pyfunction!(compare, m)?)?;
    m.add_function(wrap_pyfunction!(gate, m)?)?;
    m.add_function(wrap_pyfunction!(main, m)?)?;
    m.add_function(wrap_pyfunction!(metric_name, m)?)?;
    m.add_function(wrap_pyfunction!(_panic_on_purpose, m)?)?;
    m.add_function(wrap_pyfunction!(work::before_fork, m)?)?;
    m.add_class::<GateReport>()?;
    Ok(())
}
