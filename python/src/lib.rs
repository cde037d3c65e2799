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

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyTuple};

use rgate::config::{Config, TestKind, Weighting, DEFAULT_SEED};
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
use rgate::run::memory::{MemoryRun, Ranked};
use rgate::stats::Alternative;

/// The binary's allocator: see src/main.rs.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// `rgate.RgateError(message, hint)`, built by the Python half's class so
/// that it is one class, importable and picklable from `rgate`.
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
    match py
        .import("rgate._errors")
        .and_then(|m| m.getattr("RgateError"))
        .and_then(|cls| cls.call1((message.clone(), hint)))
    {
        Ok(err) => PyErr::from_value(err),
        Err(_) => PyValueError::new_err(message),
    }
}

/// A shape the Python half sorted out, or a value it did not expect.
fn bad(what: impl Into<String>) -> PyErr {
    PyValueError::new_err(what.into())
}

fn key(k: &Bound<'_, PyAny>, what: &str) -> PyResult<String> {
    if let Ok(s) = k.extract::<String>() {
        return Ok(s);
    }
    // ir_datasets and pandas hand over ids as ints at times; an id is its
    // decimal text, as a JSON run's numeric ids are.
    if let Ok(i) = k.extract::<i64>() {
        return Ok(i.to_string());
    }
    Err(bad(format!(
        "{what} must be a string, not {}",
        k.get_type().name().map(|n| n.to_string()).unwrap_or_default()
    )))
}

/// A grade: an int, or a float with an integral value (a DataFrame column
/// read from CSV), as qrels grades are integers.
fn grade(v: &Bound<'_, PyAny>, qid: &str, doc: &str) -> PyResult<i32> {
    if let Ok(g) = v.extract::<i32>() {
        return Ok(g);
    }
    match v.extract::<f64>() {
        Ok(f) if f.fract() == 0.0 && f.abs() <= i32::MAX as f64 => Ok(f as i32),
        _ => Err(bad(format!(
            "query `{qid}`, document `{doc}`: a grade is an integer, not {}",
            v.repr().map(|r| r.to_string()).unwrap_or_default()
        ))),
    }
}

fn score(v: &Bound<'_, PyAny>, qid: &str, doc: &str) -> PyResult<f64> {
    v.extract::<f64>().map_err(|_| {
        bad(format!(
            "query `{qid}`, document `{doc}`: a score is a number, not {}",
            v.repr().map(|r| r.to_string()).unwrap_or_default()
        ))
    })
}

/// The bytes object at `spec[i]`.
fn bytes_at<'py>(spec: &Bound<'py, PyTuple>, i: usize) -> PyResult<Bound<'py, PyBytes>> {
    Ok(spec.get_item(i)?.cast_into::<PyBytes>()?)
}

/// `n` ids packed by `rgate._inputs._pack_ids`: UTF-8, a NUL between two
/// ids (none holds one: the Python half sends those one by one). Slices
/// of the buffer, not copies: the one copy is into the library's input.
fn packed_ids(b: &[u8], n: usize) -> PyResult<Vec<&str>> {
    let text = std::str::from_utf8(b).map_err(|_| bad("packed ids are not UTF-8"))?;
    let ids: Vec<&str> = if n == 0 && text.is_empty() {
        Vec::new()
    } else {
        text.split('\0').collect()
    };
    if ids.len() != n {
        return Err(bad(format!("expected {n} packed ids, found {}", ids.len())));
    }
    Ok(ids)
}

/// `n` numbers packed by `array(code).tobytes()` in this machine's byte
/// order: `N` bytes each, read bit for bit.
fn packed_numbers<const N: usize, T>(b: &[u8], n: usize, from: fn([u8; N]) -> T) -> PyResult<Vec<T>> {
    if b.len() != n * N {
        return Err(bad(format!(
            "expected {n} packed numbers, found {} bytes",
            b.len()
        )));
    }
    Ok(b.chunks_exact(N)
        .map(|c| {
            let mut a = [0u8; N];
            a.copy_from_slice(c);
            from(a)
        })
        .collect())
}

/// `n` scores from a list of floats; `named(i)` is the query and document
/// of the `i`th, for the message when it is not a number.
fn packed_scores<'a>(
    list: &Bound<'_, PyAny>,
    n: usize,
    named: impl Fn(usize) -> (&'a str, &'a str),
) -> PyResult<Vec<f64>> {
    let list = list.cast::<PyList>()?;
    if list.len() != n {
        return Err(bad(format!("expected {n} scores, found {}", list.len())));
    }
    let mut out = Vec::with_capacity(n);
    for (i, v) in list.iter().enumerate() {
        match v.extract::<f64>() {
            Ok(s) => out.push(s),
            Err(_) => {
                let (q, d) = named(i);
                out.push(score(&v, q, d)?);
            }
        }
    }
    Ok(out)
}

/// `(qids, counts, docs)` of a packed `{q: {d: v}}` or `{q: [d]}`: each
/// query's id with its documents, in the caller's order.
fn packed_nested<'a>(
    qids: &'a [u8],
    counts: &[usize],
    docs: &'a [u8],
) -> PyResult<(Vec<&'a str>, Vec<&'a str>, usize)> {
    let total = counts.iter().sum();
    Ok((packed_ids(qids, counts.len())?, packed_ids(docs, total)?, total))
}

/// The queries of a packed nested shape, `value(i)` the `i`th document's.
fn regroup<T>(
    qids: Vec<&str>,
    counts: &[usize],
    docs: Vec<&str>,
    mut value: impl FnMut(usize) -> T,
) -> Vec<(String, Vec<(String, T)>)> {
    let mut at = 0;
    qids.into_iter()
        .zip(counts)
        .map(|(q, &c)| {
            let labels = docs[at..at + c]
                .iter()
                .enumerate()
                .map(|(j, d)| (d.to_string(), value(at + j)))
                .collect();
            at += c;
            (q.to_string(), labels)
        })
        .collect()
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
        "graded" => {
            let d = spec.get_item(2)?;
            let d = d.cast::<PyDict>()?;
            let mut queries = Vec::with_capacity(d.len());
            for (q, labels) in d.iter() {
                let qid = key(&q, "a query id")?;
                let labels = labels
                    .cast::<PyDict>()
                    .map_err(|_| bad(format!("query `{qid}`: expected {{doc: grade}}")))?;
                let mut l = Vec::with_capacity(labels.len());
                for (doc, g) in labels.iter() {
                    let doc = key(&doc, "a document id")?;
                    let g = grade(&g, &qid, &doc)?;
                    l.push((doc, g));
                }
                queries.push((qid, l));
            }
            MemoryGold {
                name,
                queries,
                strata: None,
            }
        }
        "listed" => {
            let d = spec.get_item(2)?;
            let d = d.cast::<PyDict>()?;
            let mut queries = Vec::with_capacity(d.len());
            for (q, docs) in d.iter() {
                let qid = key(&q, "a query id")?;
                let mut l = Vec::new();
                for doc in docs.try_iter()? {
                    l.push((key(&doc?, "a document id")?, 1));
                }
                queries.push((qid, l));
            }
            MemoryGold {
                name,
                queries,
                strata: None,
            }
        }
        "rows" => {
            let (qids, docs, values) = rows(spec)?;
            let mut out = Vec::with_capacity(qids.len());
            for ((q, d), g) in qids.iter().zip(docs.iter()).zip(values.iter()) {
                let (q, d) = (key(&q, "a query id")?, key(&d, "a document id")?);
                let g = grade(&g, &q, &d)?;
                out.push((q, d, g));
            }
            MemoryGold::from_rows(name, out)
        }
        "packed-graded" | "packed-listed" => {
            let (qids, docs) = (bytes_at(spec, 2)?, bytes_at(spec, 4)?);
            let counts: Vec<usize> = spec.get_item(3)?.extract()?;
            let (qids, docs, total) = packed_nested(qids.as_bytes(), &counts, docs.as_bytes())?;
            let queries = if kind == "packed-graded" {
                let grades = packed_numbers(bytes_at(spec, 5)?.as_bytes(), total, i32::from_ne_bytes)?;
                regroup(qids, &counts, docs, |i| grades[i])
            } else {
                regroup(qids, &counts, docs, |_| 1)
            };
            MemoryGold {
                name,
                queries,
                strata: None,
            }
        }
        "packed-rows" => {
            let grades = bytes_at(spec, 4)?;
            let grades = packed_numbers(grades.as_bytes(), grades.as_bytes().len() / 4, i32::from_ne_bytes)?;
            let (qids, docs) = (bytes_at(spec, 2)?, bytes_at(spec, 3)?);
            let qids = packed_ids(qids.as_bytes(), grades.len())?;
            let docs = packed_ids(docs.as_bytes(), grades.len())?;
            let rows = qids.into_iter().zip(docs).zip(grades);
            MemoryGold::from_rows(name, rows.map(|((q, d), g)| (q.to_string(), d.to_string(), g)))
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
    let kind: String = spec.get_item(0)?.extract()?;
    let name = match name {
        Some(n) => n.to_string(),
        None => spec.get_item(1)?.extract()?,
    };
    let run = match kind.as_str() {
        "path" => return Ok(RunSource::File(spec.get_item(2)?.extract::<PathBuf>()?)),
        "scored" => {
            let d = spec.get_item(2)?;
            let d = d.cast::<PyDict>()?;
            let mut queries = Vec::with_capacity(d.len());
            for (q, docs) in d.iter() {
                let qid = key(&q, "a query id")?;
                let docs = docs
                    .cast::<PyDict>()
                    .map_err(|_| bad(format!("query `{qid}`: expected {{doc: score}}")))?;
                let mut v = Vec::with_capacity(docs.len());
                for (doc, s) in docs.iter() {
                    let doc = key(&doc, "a document id")?;
                    let s = score(&s, &qid, &doc)?;
                    v.push((doc, s));
                }
                queries.push((qid, Ranked::Scored(v)));
            }
            MemoryRun { name, queries }
        }
        "ranked" => {
            let d = spec.get_item(2)?;
            let d = d.cast::<PyDict>()?;
            let mut queries = Vec::with_capacity(d.len());
            for (q, docs) in d.iter() {
                let qid = key(&q, "a query id")?;
                let mut v = Vec::new();
                for doc in docs.try_iter()? {
                    v.push(key(&doc?, "a document id")?);
                }
                queries.push((qid, Ranked::Ids(v)));
            }
            MemoryRun { name, queries }
        }
        "rows" => {
            let (qids, docs, values) = rows(spec)?;
            let mut out = Vec::with_capacity(qids.len());
            for ((q, d), s) in qids.iter().zip(docs.iter()).zip(values.iter()) {
                let (q, d) = (key(&q, "a query id")?, key(&d, "a document id")?);
                let s = score(&s, &q, &d)?;
                out.push((q, d, s));
            }
            MemoryRun::from_rows(name, out)
        }
        "packed-scored" | "packed-ranked" => {
            let (qids, docs) = (bytes_at(spec, 2)?, bytes_at(spec, 4)?);
            let counts: Vec<usize> = spec.get_item(3)?.extract()?;
            let (qids, docs, total) = packed_nested(qids.as_bytes(), &counts, docs.as_bytes())?;
            let queries = if kind == "packed-scored" {
                let scores = packed_scores(&spec.get_item(5)?, total, |i| {
                    let q = counts.iter().scan(0, |end, &c| {
                        *end += c;
                        Some(*end)
                    });
                    let q = q.take_while(|&end| end <= i).count();
                    (
                        qids.get(q).copied().unwrap_or_default(),
                        docs.get(i).copied().unwrap_or_default(),
                    )
                })?;
                regroup(qids, &counts, docs, |i| scores[i])
                    .into_iter()
                    .map(|(q, v)| (q, Ranked::Scored(v)))
                    .collect()
            } else {
                regroup(qids, &counts, docs, |_| ())
                    .into_iter()
                    .map(|(q, v)| (q, Ranked::Ids(v.into_iter().map(|(d, ())| d).collect())))
                    .collect()
            };
            MemoryRun { name, queries }
        }
        "packed-rows" => {
            let values = spec.get_item(4)?;
            let n = values.len()?;
            let (qids, docs) = (bytes_at(spec, 2)?, bytes_at(spec, 3)?);
            let qids = packed_ids(qids.as_bytes(), n)?;
            let docs = packed_ids(docs.as_bytes(), n)?;
            let scores = packed_scores(&values, n, |i| {
                (
                    qids.get(i).copied().unwrap_or_default(),
                    docs.get(i).copied().unwrap_or_default(),
                )
            })?;
            let rows = qids.into_iter().zip(docs).zip(scores);
            MemoryRun::from_rows(name, rows.map(|((q, d), s)| (q.to_string(), d.to_string(), s)))
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
#[pyo3(signature = (gold, strata, run, metrics, per_query, relevance_level, by_stratum))]
#[allow(clippy::too_many_arguments)]
fn evaluate(
    py: Python<'_>,
    gold: &Bound<'_, PyTuple>,
    strata: Option<Vec<(String, String)>>,
    run: &Bound<'_, PyTuple>,
    metrics: Vec<String>,
    per_query: bool,
    relevance_level: i32,
    by_stratum: bool,
) -> PyResult<Rendered> {
    let opts = EvalOptions {
        gold: gold_input(gold, strata, metrics, relevance_level)?,
        run: run_source(run, None)?,
        run_format: None,
        chunks: None,
        candidates: None,
        cutoff: None,
        trec_names: false,
        interval_resamples: None,
        seed: DEFAULT_SEED,
    };
    let done = py.detach(|| -> anyhow::Result<Rendered> {
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
        };
        let json = view.render(Format::Json)?;
        let table = EvalView {
            per_query: false,
            ..view
        }
        .render(Format::Table)?;
        Ok((json, table, warnings.0))
    });
    done.map_err(|e| rgate_error(py, &e))
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

#[pyfunction]
#[pyo3(signature = (gold, strata, runs, metrics, test, resamples, seed, alternative, alpha, relevance_level, by_stratum))]
#[allow(clippy::too_many_arguments)]
fn compare(
    py: Python<'_>,
    gold: &Bound<'_, PyTuple>,
    strata: Option<Vec<(String, String)>>,
    runs: Vec<(String, Bound<'_, PyTuple>)>,
    metrics: Vec<String>,
    test: &str,
    resamples: u32,
    seed: u64,
    alternative: &str,
    alpha: f64,
    relevance_level: i32,
    by_stratum: bool,
) -> PyResult<Rendered> {
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
        gold: gold_input(gold, strata, metrics, relevance_level)?,
        runs,
        chunks: Vec::new(),
        run_format: None,
        test: test_named(test)?,
        resamples,
        seed,
        alternative: alternative_named(alternative)?,
        alpha,
        by_stratum,
        weighting: Weighting::Micro,
    };
    let done = py.detach(|| -> anyhow::Result<Rendered> {
        let mut warnings = Warnings::default();
        let c = pipeline::compare(&opts, &mut warnings)?;
        let view = CompareView {
            prep: &c.prep,
            runs: &c.columns,
            comparisons: &c.comparisons,
            settings: &c.settings,
            alternative: c.alternative,
        };
        Ok((
            view.render(Format::Json)?,
            view.render(Format::Table)?,
            warnings.0,
        ))
    });
    done.map_err(|e| rgate_error(py, &e))
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
        let format = format_named(format)?;
        GateView {
            outcome: &self.outcome,
            command: "gate",
            color: false,
            quiet: false,
        }
        .render(format)
        .map_err(|e| rgate_error(py, &e))
    }

    fn exit_code(&self) -> u8 {
        self.outcome.exit_code()
    }
}

#[pyfunction]
#[pyo3(signature = (config, runs, candidates, baseline_ref))]
fn gate(
    py: Python<'_>,
    config: Option<PathBuf>,
    runs: Vec<(String, Bound<'_, PyTuple>)>,
    candidates: Vec<(String, Bound<'_, PyTuple>)>,
    baseline_ref: Option<String>,
) -> PyResult<GateReport> {
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
    let done = py.detach(|| -> anyhow::Result<GateOutcome> {
        let config = Config::load(config.as_deref())?;
        Ok(pipeline::gate(&config, &opts, &Unwatched)?.outcome)
    });
    done.map(|outcome| GateReport { outcome })
        .map_err(|e| rgate_error(py, &e))
}

/// A metric's name as reports key it (`"RR"` -> `"mrr"`, `"nDCG@10"` ->
/// `"ndcg@10"`), so a result is indexed by any spelling the input takes.
#[pyfunction]
fn metric_name(py: Python<'_>, name: &str) -> PyResult<String> {
    name.parse::<rgate::metrics::Metric>()
        .map(|m| m.name())
        .map_err(|e| rgate_error(py, &e))
}

/// The `rgate` command: `args` as `sys.argv` holds them, the program name
/// first. Returns the exit code.
#[pyfunction]
fn main(py: Python<'_>, args: Vec<OsString>) -> u8 {
    py.detach(|| rgate::commands::entry::main_with(args))
}

#[pymodule]
fn _rgate(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(evaluate, m)?)?;
    m.add_function(wrap_pyfunction!(compare, m)?)?;
    m.add_function(wrap_pyfunction!(gate, m)?)?;
    m.add_function(wrap_pyfunction!(main, m)?)?;
    m.add_function(wrap_pyfunction!(metric_name, m)?)?;
    m.add_class::<GateReport>()?;
    Ok(())
}
