"""``evaluate``, ``compare`` and ``gate``: the library's pipeline, in process.

Each call runs the same Rust code as the ``rgate`` command (no subprocess,
no temporary file) and returns an object whose ``to_dict()`` is the
command's ``--format json`` report, key for key and value for value.
"""

from __future__ import annotations

import copy
import functools
import html
import json
import os
import sys
import warnings
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, TypeVar, Union

from rgate import _rgate
from rgate._errors import RgateError, RgateWarning
from rgate._inputs import gold_spec, metric_list, run_spec, strata_list

if TYPE_CHECKING:
    import pandas

PathLike = Union[str, "os.PathLike[str]"]
"""A path: a ``str`` or any ``os.PathLike[str]`` (``pathlib.Path``)."""

Metrics = Union[None, str, Iterable[str]]
"""Metric names as the command line takes them: one string (comma-separated
allowed), any iterable of strings, or ``None`` for the defaults."""

_F = TypeVar("_F", bound=Callable[..., Any])


def _caller_level() -> int:
    """``warnings.warn``'s stacklevel that names the first frame outside the
    rgate package: the user's line, whether they called ``rgate.gate`` or
    ``rgate.testing.assert_no_regression`` (issue 50: a warning pointing
    into rgate/testing.py tells the user nothing)."""
    level = 1
    frame = sys._getframe(1)
    while frame is not None and frame.f_globals.get("__name__", "").split(".")[0] == "rgate":
        frame = frame.f_back
        level += 1
    return level


def _warn(messages: Sequence[str]) -> None:
    if not messages:
        return
    level = _caller_level()
    for m in messages:
        warnings.warn(m, RgateWarning, stacklevel=level)


def _public(fn: _F) -> _F:
    """An entry point whose refusals show the caller's line, not rgate's
    internal frames: an RgateError is raised again from here with the
    frames below cut off (Python keeps this one frame; pytest hides it too,
    through ``__tracebackhide__``). Its ``__cause__`` is kept."""

    @functools.wraps(fn)
    def entry(*args: Any, **kwargs: Any) -> Any:
        __tracebackhide__ = True  # noqa: F841 (read by pytest)
        try:
            return fn(*args, **kwargs)
        except RgateError as e:
            raise e.with_traceback(None) from e.__cause__

    return entry  # type: ignore[return-value]


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


def _pandas() -> Any:
    try:
        import pandas
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError("to_pandas() needs pandas: pip install pandas") from e
    return pandas


def _asked_names(metrics: List[str]) -> Dict[str, str]:
    """rgate's name of each metric -> the spelling the caller asked for it
    by (``"RR"`` for ``mrr``, ``"P@5"`` for ``precision@5``), so DataFrame
    columns read as the caller wrote them. Only spellings that differ; the
    first spelling of a metric asked for twice wins."""
    out: Dict[str, str] = {}
    for m in metrics:
        for word in m.split(","):
            word = word.strip()
            if not word:
                continue
            try:
                name = _rgate.metric_name(word)
            except Exception:  # the native call refused it already, or will
                continue
            if name != word and name not in out:
                out[name] = word
    return out


def _names_option(names: str) -> bool:
    """``to_pandas(names=...)``: True for the caller's spellings."""
    if not isinstance(names, str) or names not in ("asked", "rgate"):
        raise RgateError(
            f"names={_short(names)}: to_pandas names metrics as asked or as rgate names them",
            "pass names='asked' (the spellings you passed, the default) or names='rgate' (the JSON report's keys)",
        )
    return names == "asked"


def _short(v: Any, limit: int = 80) -> str:
    """``repr(v)`` cut to ``limit`` characters: an error message stays short
    whatever the value (issue 50: a 1 MB value was echoed whole)."""
    try:
        r = repr(v)
    except Exception:
        r = f"<{type(v).__name__}>"
    return r if len(r) <= limit else r[: limit - 1] + "…"


def _cell(v: Any) -> str:
    """A value as a report cell: numbers to four decimals (trec_eval's
    precision), None as a dash, text escaped."""
    if v is None:
        return "–"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return f"{v:.4f}"
    return html.escape(str(v), quote=True)


def _html_table(caption: str, header: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    """A self-contained HTML table (no script, no style sheet, every value
    escaped) for Jupyter's ``_repr_html_``."""
    head = "".join(f'<th style="text-align:left">{html.escape(h)}</th>' for h in header)
    body = "".join("<tr>" + "".join(f"<td>{_cell(c)}</td>" for c in row) + "</tr>" for row in rows)
    return (
        f"<table><caption style=\"text-align:left\">{html.escape(caption)}</caption>"
        f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
    )


# Rows shown in a notebook: a 70,000-query comparison must not print 70,000
# rows; to_pandas() has them all.
_HTML_ROWS = 200


class _Report:
    """A report: the command line's JSON as a dict, its table as the repr."""

    def __init__(self, data: Dict[str, Any], table: str, asked: Optional[Dict[str, str]] = None) -> None:
        self._data = data
        self._table = table.rstrip("\n")
        self._asked: Dict[str, str] = asked or {}

    def to_dict(self) -> Dict[str, Any]:
        """The command line's ``--format json`` report, as a new dict."""
        return copy.deepcopy(self._data)

    def __repr__(self) -> str:
        return self._table

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:  # IPython shows the table as is
        p.text(self._table)

    def _shown(self, name: str, asked: bool = True) -> str:
        return self._asked.get(name, name) if asked else name


class Evaluation(_Report):
    """One run's metrics on a gold set (``rgate eval``).

    ``ev["ndcg@10"]`` is the mean over all queries; ``ev.metrics`` maps each
    metric to its mean per scope (``all``, each stratum, ``macro``);
    ``ev.per_query`` lists each query's values (with ``per_query=True``).
    """

    @property
    def metrics(self) -> Dict[str, Dict[str, float]]:
        """rgate's name of each metric -> its mean per scope."""
        return copy.deepcopy(self._data["metrics"])

    @property
    def per_query(self) -> Optional[List[Dict[str, Any]]]:
        """Each query's values (``per_query=True``), keyed as the JSON report."""
        rows = self._data.get("per_query")
        return copy.deepcopy(rows) if rows is not None else None

    @property
    def warnings(self) -> List[str]:
        """The command's warnings (also raised as :class:`RgateWarning`)."""
        return list(self._data.get("warnings", []))

    def __getitem__(self, metric: str) -> float:
        """The mean over all queries of ``metric``, in any spelling the
        input takes (``"RR"``, ``"mrr"``, ``"MRR"``)."""
        metrics = self._data["metrics"]
        if metric not in metrics:
            metric = _native(_rgate.metric_name, metric)
        if metric not in metrics:
            raise KeyError(f"{metric} was not computed (computed: {', '.join(metrics)})")
        value: float = metrics[metric]["all"]
        return value

    def _scopes(self) -> List[str]:
        """The scopes that say something: ``all`` alone when the gold set
        has one stratum (its stratum and the macro mean are ``all`` again),
        else ``all``, each stratum, ``macro``."""
        first = next(iter(self._data["metrics"].values()), {})
        scopes = list(first)
        strata = [s for s in scopes if s not in ("all", "macro")]
        return ["all"] if len(strata) <= 1 else scopes

    def to_pandas(self, names: str = "asked") -> "pandas.DataFrame":
        """Per query (with ``per_query=True``): one row per query, indexed by
        ``query_id``; otherwise one row per metric, one column per scope
        (``all`` alone when the gold set has one stratum). Metrics are named
        as you asked for them (``"RR"`` stays ``RR``); ``names="rgate"``
        names them as the JSON report does (``mrr``)."""
        asked = _names_option(names)
        pd = _pandas()
        rows = self._data.get("per_query")
        if rows is not None:
            df = pd.DataFrame(rows).set_index("query_id")
            return df.rename(columns={k: self._shown(k, asked) for k in self._data["metrics"]})
        scopes = self._scopes()
        table = {self._shown(m, asked): {s: v[s] for s in scopes} for m, v in self._data["metrics"].items()}
        return pd.DataFrame(table).T[scopes]

    def _repr_html_(self) -> str:
        scopes = self._scopes()
        rows = [[self._shown(m)] + [v.get(s) for s in scopes] for m, v in self._data["metrics"].items()]
        caption = f"rgate eval: {self._data.get('queries', '?')} queries"
        return _html_table(caption, ["metric", *scopes], rows)


class Comparison(_Report):
    """Runs compared with the first, query by query (``rgate compare``).

    ``checks`` lists every (run, metric, stratum) row with its delta,
    interval and p-values; ``means`` each run's mean per metric.
    """

    @property
    def checks(self) -> List[Dict[str, Any]]:
        """Every (run, metric, stratum) row, with ``run`` added."""
        return [dict(c, run=r["name"]) for r in self._data["runs"] for c in r["checks"]]

    @property
    def means(self) -> Dict[str, Dict[str, float]]:
        """Each run's mean per metric, the baseline's first."""
        out = {self._data["baseline_run"]["name"]: dict(self._data["baseline_run"]["means"])}
        for r in self._data["runs"]:
            out[r["name"]] = dict(r["means"])
        return out

    def to_pandas(self, names: str = "asked") -> "pandas.DataFrame":
        """One row per check: run, metric, stratum, baseline, current,
        delta, ci_low, ci_high, p_value, p_adjusted, ... Metrics are named
        as you asked for them; ``names="rgate"`` as the JSON report does."""
        asked = _names_option(names)
        pd = _pandas()
        rows = [
            {k: (self._shown(v, asked) if k == "metric" else v) for k, v in c.items() if k != "skew"}
            for c in self.checks
        ]
        front = ["run", "metric", "stratum"]
        df = pd.DataFrame(rows)
        return df[front + [c for c in df.columns if c not in front]] if rows else df

    def _repr_html_(self) -> str:
        checks = self.checks
        rows = [
            [c["run"], self._shown(c["metric"]), c["stratum"], c.get("baseline"), c.get("current"),
             c.get("delta"), c.get("ci_low"), c.get("ci_high"), c.get("p_adjusted")]
            for c in checks[:_HTML_ROWS]
        ]
        caption = f"rgate compare: {len(self._data['runs'])} run(s) against {self._data['baseline_run']['name']}"
        if len(checks) > _HTML_ROWS:
            caption += f" (first {_HTML_ROWS} of {len(checks)} rows; to_pandas() has all)"
        header = ["run", "metric", "stratum", "baseline", "current", "delta", "ci_low", "ci_high", "p_adjusted"]
        return _html_table(caption, header, rows)


class GateOutcome(_Report):
    """The gate's decision (``rgate gate``): ``verdict`` is ``"pass"`` or
    ``"fail"``, ``exit_code`` the command's (0 or 1), ``checks`` and
    ``flips`` every retriever's, ``report(format)`` the report in any of the
    command's formats (``table``, ``json``, ``markdown``, ``csv``,
    ``junit``, ``html``)."""

    def __init__(self, native: Any) -> None:
        self._native = native
        super().__init__(json.loads(native.render("json")), native.render("table"))

    @property
    def verdict(self) -> str:
        """``"pass"`` or ``"fail"``."""
        verdict: str = self._data["verdict"]
        return verdict

    @property
    def exit_code(self) -> int:
        """The command's exit code: 0 pass, 1 fail."""
        code: int = self._native.exit_code()
        return code

    @property
    def checks(self) -> List[Dict[str, Any]]:
        """Every retriever's checks, with ``retriever`` added."""
        return [dict(c, retriever=r["name"]) for r in self._data["retrievers"] for c in r["checks"]]

    @property
    def flips(self) -> List[Dict[str, Any]]:
        """Every retriever's queries that flipped, with ``retriever`` added."""
        return [dict(f, retriever=r["name"]) for r in self._data["retrievers"] for f in r["flips"]]

    @property
    def warnings(self) -> List[str]:
        """The gate's warnings, a retriever's prefixed with its name."""
        out = list(self._data.get("warnings", []))
        for r in self._data["retrievers"]:
            out.extend(f"{r['name']}: {w}" for w in r.get("warnings", []))
        return out

    def report(self, format: str = "table") -> str:
        """The report as ``rgate gate --format FORMAT`` prints it (without
        colour). An unknown format, or one that is not a string, is an
        RgateError like every other refusal."""
        __tracebackhide__ = True  # noqa: F841 (read by pytest)
        text: str = _native(self._native.render, format)
        return text

    def to_pandas(self) -> "pandas.DataFrame":
        """One row per check: retriever, metric, stratum, baseline, current,
        delta, the interval, p-values, tolerance and verdict."""
        pd = _pandas()
        rows = [{k: v for k, v in c.items() if k != "skew"} for c in self.checks]
        front = ["retriever", "metric", "stratum", "verdict"]
        df = pd.DataFrame(rows)
        return df[front + [c for c in df.columns if c not in front]] if rows else df

    def _repr_html_(self) -> str:
        # The failing checks first, as every report of the gate leads.
        checks = sorted(self.checks, key=lambda c: c.get("verdict") != "fail")
        rows = [
            [c["retriever"], c["metric"], c["stratum"], c.get("baseline"), c.get("current"),
             c.get("delta"), c.get("verdict")]
            for c in checks[:_HTML_ROWS]
        ]
        caption = f"rgate gate: {self.verdict.upper()}"
        if len(checks) > _HTML_ROWS:
            caption += f" (first {_HTML_ROWS} of {len(checks)} checks; to_pandas() has all)"
        header = ["retriever", "metric", "stratum", "baseline", "current", "delta", "verdict"]
        return _html_table(caption, header, rows)


@_public
def evaluate(
    gold: Any,
    run: Any,
    metrics: Metrics = None,
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

    ``relevance_level``: the lowest grade counted relevant (an integer, 1
    by default). ``by_stratum``: report each stratum's mean and the macro
    mean too. ``strata``: a mapping or a pandas Series ``{qid: stratum}``.

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
    names = _read("metrics", metric_list, metrics)
    text, table, warns = _native(
        _rgate.evaluate,
        _read("gold", gold_spec, gold),
        _read("strata", strata_list, strata),
        _read("run", run_spec, run),
        names,
        _read("per_query", bool, per_query),
        # Numbers go over as they are: the native module reads them as the
        # command line reads its arguments (no int() that turns 1.9 into 1).
        relevance_level,
        _read("by_stratum", bool, by_stratum),
        _labels(labels),
    )
    _warn(warns)
    return Evaluation(json.loads(text), table, _asked_names(names))


@_public
def compare(
    gold: Any,
    runs: Mapping[str, Any],
    metrics: Metrics = None,
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

    ``alpha``: the level each adjusted p-value is held to (``--alpha``,
    default 0.05). ``relevance_level``: the lowest grade counted relevant
    (``--relevance-level``, default 1; an integer). ``by_stratum``: rows per
    stratum and the macro mean too, besides ``all``. ``strata``: an
    in-memory gold set's strata, as :func:`evaluate`'s. ``resamples``: the
    test's resamples (bootstrap, randomization). ``metrics``: as
    :func:`evaluate`'s; ``to_pandas()`` names them as you spelled them.

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
    names = _read("metrics", metric_list, metrics)
    text, table, warns = _native(
        _rgate.compare,
        _read("gold", gold_spec, gold),
        _read("strata", strata_list, strata),
        _read("runs", _runs, runs),
        names,
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
    return Comparison(json.loads(text), table, _asked_names(names))


@_public
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
