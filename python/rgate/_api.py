"""``evaluate``, ``compare`` and ``gate``: the library's pipeline, in process.

Each call runs the same Rust code as the ``rgate`` command (no subprocess,
no temporary file) and returns an object whose ``to_dict()`` is the
command's ``--format json`` report, key for key and value for value.
"""

from __future__ import annotations

import copy
import json
import os
import warnings
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

from rgate import _rgate
from rgate._errors import RgateError, RgateWarning
from rgate._inputs import gold_spec, metric_list, run_spec, strata_list

PathLike = Union[str, "os.PathLike[str]"]


def _warn(messages: Sequence[str]) -> None:
    for m in messages:
        # stacklevel 3: the line of the caller's evaluate()/compare()/gate().
        warnings.warn(m, RgateWarning, stacklevel=3)


def _native(fn, *args):
    """A call into the native module. Its own refusals of a value's type
    (a grade that is not an integer, a key that is not a string) come as
    ValueError or TypeError: raised as RgateError like every other. Any
    other exception from the caller's objects (a ``__fspath__`` or
    ``__index__`` that raises) is bad input too: an RgateError with the
    original as its cause. ``KeyboardInterrupt`` (a ``BaseException``)
    and ``MemoryError`` pass as they are."""
    try:
        return fn(*args)
    except (RgateError, MemoryError):
        raise
    except (ValueError, TypeError) as e:
        raise RgateError(_text(e)) from None
    except Exception as e:
        raise RgateError(_described(e)) from e


def _text(e: BaseException) -> str:
    """``str(e)``, or the exception's type when its ``__str__`` raises."""
    try:
        return str(e)
    except Exception:
        return type(e).__name__


def _described(e: BaseException) -> str:
    text = _text(e)
    return f"{type(e).__name__}: {text}" if text and text != type(e).__name__ else type(e).__name__


def _read(what: str, convert, value):
    """``convert(value)``, where ``value`` is the caller's: an exception
    the caller's own code raises while it is read (a ``keys()``, ``__bool__``
    or ``__str__`` that raises, a mapping changed as it is copied) is bad
    input, an RgateError naming the argument, the original its cause, so
    that ``except rgate.RgateError`` catches every refusal (issue 41)."""
    try:
        return convert(value)
    except (RgateError, MemoryError):
        raise
    except Exception as e:
        raise RgateError(
            f"{what}: reading it raised {_described(e)}",
            "the value's own code raised it (the exception's __cause__ has its traceback)",
        ) from e


def _runs(runs: Optional[Mapping[str, Any]]) -> list:
    return [] if runs is None else [(str(name), run_spec(r)) for name, r in runs.items()]


_LABELS = ("people", "model", "ppi")

# The longest shown part of a value an error names: a 1 MB string passed by
# mistake is named by its start and its length, not echoed whole.
_SHOWN = 200


def _shown(value: Any) -> str:
    """The caller's object named without running its code (``object``'s
    repr: type and address), cut to 200 characters."""
    try:
        text = object.__repr__(value)
    except Exception:
        text = type(value).__name__
    return text if len(text) <= _SHOWN else text[:_SHOWN] + "…"


def _labels(value: Any, optional: bool = False) -> Optional[str]:
    """``labels=``, validated as the command line's ``--labels``: exactly a
    ``str`` that is ``people``, ``model`` or ``ppi`` (``None`` too where the
    argument is optional). Nothing else is converted: an object whose
    ``str()`` says ``"ppi"`` is not a label mode, and its ``__str__`` is
    never called."""
    if value is None and optional:
        return None
    if type(value) is str and value in _LABELS:
        return value
    if type(value) is str:
        cut = value if len(value) <= _SHOWN else f"{value[:_SHOWN]}… ({len(value)} characters)"
        raise RgateError(
            f"unknown labels `{cut}`: people, model or ppi",
            "pass labels='people', 'model' or 'ppi'",
        )
    raise RgateError(
        f"labels is a str (people, model or ppi), not {type(value).__name__}: {_shown(value)}",
        "pass labels='people', 'model' or 'ppi'",
    )


def _correction(correction: Any) -> str:
    if not isinstance(correction, str) or correction not in ("holm", "bh", "none"):
        raise RgateError(
            f"correction={correction!r}: compare corrects by holm, bh (Benjamini-Hochberg) or none",
            "pass correction='holm', 'bh' or 'none'",
        )
    return correction


def _mapping(runs: Any) -> Mapping:
    if not isinstance(runs, Mapping):
        raise RgateError(
            f"runs is a dict {{name: run}}, not {type(runs).__name__}",
            "pass runs={'baseline': run_a, 'candidate': run_b}; the first is the baseline",
        )
    return runs


def _pandas():
    try:
        import pandas
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError("to_pandas() needs pandas: pip install pandas") from e
    return pandas


class _Report:
    """A report: the command line's JSON as a dict, its table as the repr."""

    def __init__(self, data: Dict[str, Any], table: str) -> None:
        self._data = data
        self._table = table.rstrip("\n")

    def to_dict(self) -> Dict[str, Any]:
        """The command line's ``--format json`` report, as a new dict."""
        return copy.deepcopy(self._data)

    def __repr__(self) -> str:
        return self._table

    def _repr_pretty_(self, p, cycle) -> None:  # IPython shows the table as is
        p.text(self._table)


class Evaluation(_Report):
    """One run's metrics on a gold set (``rgate eval``).

    ``ev["ndcg@10"]`` is the mean over all queries; ``ev.metrics`` maps each
    metric to its mean per scope (``all``, each stratum, ``macro``);
    ``ev.per_query`` lists each query's values (with ``per_query=True``).
    """

    @property
    def metrics(self) -> Dict[str, Dict[str, float]]:
        return copy.deepcopy(self._data["metrics"])

    @property
    def per_query(self) -> Optional[List[Dict[str, Any]]]:
        rows = self._data.get("per_query")
        return copy.deepcopy(rows) if rows is not None else None

    @property
    def warnings(self) -> List[str]:
        return list(self._data.get("warnings", []))

    def __getitem__(self, metric: str) -> float:
        """The mean over all queries of ``metric``, in any spelling the
        input takes (``"RR"``, ``"mrr"``, ``"MRR"``)."""
        metrics = self._data["metrics"]
        if metric not in metrics:
            metric = _native(_rgate.metric_name, metric)
        if metric not in metrics:
            raise KeyError(f"{metric} was not computed (computed: {', '.join(metrics)})")
        return metrics[metric]["all"]

    def to_pandas(self):
        """Per query (with ``per_query=True``): one row per query, indexed by
        ``query_id``; otherwise one row per metric, one column per scope."""
        pd = _pandas()
        rows = self._data.get("per_query")
        if rows is not None:
            return pd.DataFrame(rows).set_index("query_id")
        return pd.DataFrame(self._data["metrics"]).T


class Comparison(_Report):
    """Runs compared with the first, query by query (``rgate compare``).

    ``checks`` lists every (run, metric, stratum) row with its delta,
    interval and p-values; ``means`` each run's mean per metric.
    """

    @property
    def checks(self) -> List[Dict[str, Any]]:
        return [dict(c, run=r["name"]) for r in self._data["runs"] for c in r["checks"]]

    @property
    def means(self) -> Dict[str, Dict[str, float]]:
        out = {self._data["baseline_run"]["name"]: dict(self._data["baseline_run"]["means"])}
        for r in self._data["runs"]:
            out[r["name"]] = dict(r["means"])
        return out

    def to_pandas(self):
        """One row per check: run, metric, stratum, baseline, current,
        delta, ci_low, ci_high, p_value, p_adjusted, ..."""
        pd = _pandas()
        rows = [{k: v for k, v in c.items() if k != "skew"} for c in self.checks]
        front = ["run", "metric", "stratum"]
        df = pd.DataFrame(rows)
        return df[front + [c for c in df.columns if c not in front]]


class GateOutcome(_Report):
    """The gate's decision (``rgate gate``): ``verdict`` is ``"pass"`` or
    ``"fail"``, ``exit_code`` the command's (0 or 1), ``checks`` and
    ``flips`` every retriever's, ``report(format)`` the report in any of the
    command's formats (``table``, ``json``, ``markdown``, ``csv``,
    ``junit``)."""

    def __init__(self, native: Any) -> None:
        self._native = native
        super().__init__(json.loads(native.render("json")), native.render("table"))

    @property
    def verdict(self) -> str:
        return self._data["verdict"]

    @property
    def exit_code(self) -> int:
        return self._native.exit_code()

    @property
    def checks(self) -> List[Dict[str, Any]]:
        return [dict(c, retriever=r["name"]) for r in self._data["retrievers"] for c in r["checks"]]

    @property
    def flips(self) -> List[Dict[str, Any]]:
        return [dict(f, retriever=r["name"]) for r in self._data["retrievers"] for f in r["flips"]]

    @property
    def warnings(self) -> List[str]:
        out = list(self._data.get("warnings", []))
        for r in self._data["retrievers"]:
            out.extend(f"{r['name']}: {w}" for w in r.get("warnings", []))
        return out

    def report(self, format: str = "table") -> str:
        """The report as ``rgate gate --format FORMAT`` prints it (without
        colour). An unknown format, or one that is not a string, is an
        RgateError like every other refusal."""
        return _native(self._native.render, format)

    def to_pandas(self):
        """One row per check: retriever, metric, stratum, baseline, current,
        delta, the interval, p-values, tolerance and verdict."""
        pd = _pandas()
        rows = [{k: v for k, v in c.items() if k != "skew"} for c in self.checks]
        front = ["retriever", "metric", "stratum", "verdict"]
        df = pd.DataFrame(rows)
        return df[front + [c for c in df.columns if c not in front]] if rows else df


def evaluate(
    gold: Any,
    run: Any,
    metrics: Union[None, str, Sequence[str]] = None,
    *,
    per_query: bool = False,
    relevance_level: int = 1,
    by_stratum: bool = False,
    strata: Optional[Mapping[str, str]] = None,
    labels: str = "people",
) -> Evaluation:
    """One run's metrics on a gold set, as ``rgate eval`` computes them.

    ``gold``: a path (YAML, JSON, JSONL or TREC qrels); ``{qid: {doc:
    grade}}`` (pytrec_eval's and ir_measures' qrels); ``{qid: [doc, ...]}``
    (each listed document relevant, grade 1); a DataFrame with columns
    ``query_id, doc_id, relevance``; or ranx's ``Qrels``. ``strata`` gives
    an in-memory gold set's strata, ``{qid: stratum}`` (others are in
    ``default``).

    ``run``: a path (TREC, JSON or JSONL); ``{qid: {doc: score}}``, ranked
    by score descending with ties broken by document id descending
    (trec_eval's rule, so the same as the TREC file written from it);
    ``{qid: [doc, ...]}`` in rank order, best first; a DataFrame with
    columns ``query_id, doc_id, score`` (ranked as the dict); or ranx's
    ``Run``. A gold query the run lacks scores 0 (trec_eval ``-c``), with
    a warning.

    ``metrics``: names as the command line takes them (``"ndcg@10"``,
    ir_measures' ``"P(rel=2)@10"``, a comma-separated list); none gives the
    default metrics. Warnings go through :mod:`warnings` as
    :class:`rgate.RgateWarning`; bad input raises :class:`rgate.RgateError`.

    ``labels`` (``rgate eval --labels``): ``"people"`` scores people's labels
    only; ``"model"`` the model's grades wherever no person graded (biased
    by the model's errors); ``"ppi"`` a prediction-powered estimate from a
    gold set with model grades and a recorded, verified random draw (``gold
    verify-sample``): the means are the PPI estimates, and
    ``.to_dict()["ppi"]`` holds, per metric and scope, the interval, the
    people-only interval beside it, lambda and the effective n.

    >>> import rgate
    >>> qrels = {"q1": {"d1": 1, "d2": 0}, "q2": {"d3": 2}}
    >>> run = {"q1": {"d1": 0.9, "d2": 0.4}, "q2": {"d4": 0.8, "d3": 0.7}}
    >>> ev = rgate.evaluate(qrels, run, ["rr", "ndcg@10"])
    >>> ev["rr"]
    0.75
    >>> ev.to_dict()["queries"]
    2
    """
    text, table, warns = _native(
        _rgate.evaluate,
        _read("gold", gold_spec, gold),
        _read("strata", strata_list, strata),
        _read("run", run_spec, run),
        _read("metrics", metric_list, metrics),
        _read("per_query", bool, per_query),
        # Numbers go over as they are: the native module reads them as the
        # command line reads its arguments (no int() that turns 1.9 into 1).
        relevance_level,
        _read("by_stratum", bool, by_stratum),
        _labels(labels),
    )
    _warn(warns)
    return Evaluation(json.loads(text), table)


def compare(
    gold: Any,
    runs: Mapping[str, Any],
    metrics: Union[None, str, Sequence[str]] = None,
    *,
    test: str = "randomization",
    resamples: int = 10000,
    seed: int = 20261129,
    alternative: str = "two-sided",
    correction: str = "holm",
    alpha: float = 0.05,
    relevance_level: int = 1,
    by_stratum: bool = False,
    strata: Optional[Mapping[str, str]] = None,
    labels: str = "people",
) -> Comparison:
    """Each run after the first compared with the first, query by query,
    with a paired test (``rgate compare``): deltas, intervals, p-values
    adjusted across every row of every run as one family (``correction``:
    ``holm``, ``bh`` for Benjamini-Hochberg, or ``none``), the runs ranked
    and the best one named (``.to_dict()["ranking"]``, ``["statement"]``).

    ``runs`` maps a name to a run (any shape :func:`evaluate` takes); the
    first is the baseline. ``test``: ``bootstrap``, ``t-test`` or
    ``randomization``; ``alternative``: ``two-sided``, ``less`` or
    ``greater``. The same ``seed`` gives the same p-values every time.
    ``labels``: ``people``, ``model`` or ``ppi``, as :func:`evaluate`'s
    (``rgate compare --labels``).

    >>> import rgate
    >>> qrels = {f"q{i}": {"a": 1} for i in range(30)}
    >>> base = {f"q{i}": ["b", "a"] for i in range(30)}
    >>> better = {f"q{i}": ["a", "b"] for i in range(30)}
    >>> cmp = rgate.compare(qrels, {"base": base, "new": better}, ["rr"], resamples=1000)
    >>> [(c["run"], c["metric"], c["delta"]) for c in cmp.checks]
    [('new', 'mrr', 0.5)]
    """
    correction = _read("correction", _correction, correction)
    runs = _read("runs", _mapping, runs)
    text, table, warns = _native(
        _rgate.compare,
        _read("gold", gold_spec, gold),
        _read("strata", strata_list, strata),
        _read("runs", _runs, runs),
        _read("metrics", metric_list, metrics),
        test,
        # As evaluate's relevance_level: read natively, as the CLI reads them.
        resamples,
        seed,
        alternative,
        alpha,
        relevance_level,
        _read("by_stratum", bool, by_stratum),
        correction,
        _labels(labels),
    )
    _warn(warns)
    return Comparison(json.loads(text), table)


def gate(
    config: Optional[PathLike] = None,
    *,
    runs: Optional[Mapping[str, Any]] = None,
    candidates: Optional[Mapping[str, Any]] = None,
    baseline_ref: Optional[str] = None,
    labels: Optional[str] = None,
) -> GateOutcome:
    """The gate (``rgate gate``): every configured retriever's run against
    its baseline, decided by the config's rules.

    ``config``: the config's path; none finds ``rgate.yaml`` here or in a
    parent directory, as the command does. ``runs`` and ``candidates`` map a
    retriever's name to a run (a path, or any in-memory shape
    :func:`evaluate` takes) that replaces its configured one (``--run``,
    ``--candidates``). ``baseline_ref`` reads the baselines as they are at a
    git ref. ``labels`` (``"people"``, ``"model"`` or ``"ppi"``) replaces
    the config's ``labels:`` key, as ``rgate gate --labels`` does; none
    keeps the config's. Nothing is recorded and nothing printed; the gate's
    warnings go through :mod:`warnings`.

    >>> import rgate
    >>> outcome = rgate.gate("config/rgate.yaml")   # the repository's demo
    >>> outcome.verdict, outcome.exit_code
    ('pass', 0)
    """
    native = _native(
        _rgate.gate,
        _read("config", lambda c: os.fspath(c) if c is not None else None, config),
        _read("runs", _runs, runs),
        _read("candidates", _runs, candidates),
        baseline_ref,
        _labels(labels, optional=True),
    )
    outcome = GateOutcome(native)
    _warn(outcome.warnings)
    return outcome
