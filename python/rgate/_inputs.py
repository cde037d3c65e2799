"""Which shape of input is which: paths, dicts, DataFrames, ranx objects.

The native module reads four shapes of gold set and of run; this module
names the shape of what a caller passed and nothing more. Rankings follow
the rules of TREC input: ``{doc: score}`` ranks by score descending, ties
broken by document id descending (trec_eval's rule, as pytrec_eval ranks);
a list is already in rank order.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from typing import Any, List, Optional, Tuple

from rgate._errors import RgateError

# Column spellings: rgate's and ir_measures' first, then PyTerrier's.
_QUERY = ("query_id", "qid")
_DOC = ("doc_id", "docno")
_GRADE = ("relevance", "label")
_SCORE = ("score",)


def _is_dataframe(x: Any) -> bool:
    pd = sys.modules.get("pandas")
    return pd is not None and isinstance(x, pd.DataFrame)


def _column(df: Any, names: Tuple[str, ...], what: str) -> List[Any]:
    for n in names:
        if n in df.columns:
            return df[n].tolist()
    raise RgateError(
        f"the {what} DataFrame has no `{names[0]}` column (its columns: {', '.join(map(str, df.columns))})",
        f"name the columns {', '.join(names[0] for names in (_QUERY, _DOC))} and "
        + ("relevance" if what == "gold" else "score"),
    )


def _plain(x: Any) -> Any:
    """ranx's ``Qrels``/``Run`` (and anything else with ``to_dict``) as the
    dict it stands for; other values as they are."""
    if isinstance(x, (str, bytes, os.PathLike, Mapping)) or _is_dataframe(x):
        return x
    to_dict = getattr(x, "to_dict", None)
    return to_dict() if callable(to_dict) else x


def _as_dicts(d: Mapping, inner_type: type) -> dict:
    """``d`` as a plain dict whose values are plain ``inner_type``s (the
    native reader takes exactly those)."""
    out = d if type(d) is dict else dict(d)
    if any(type(v) is not inner_type for v in out.values()):
        out = {k: (v if type(v) is inner_type else inner_type(v)) for k, v in out.items()}
    return out


def _kind(d: Mapping, what: str, scored: str, listed: str) -> str:
    for v in d.values():
        if isinstance(v, Mapping):
            return scored
        if isinstance(v, (list, tuple)):
            return listed
        raise RgateError(
            f"the {what}'s values are neither dicts nor lists (found {type(v).__name__})",
            "pass {qid: {doc: " + ("grade" if what == "gold set" else "score") + "}} or {qid: [doc, ...]}",
        )
    return scored


def gold_spec(gold: Any) -> tuple:
    """``(kind, name, payload...)``: ``name`` ("qrels dict", "qrels
    DataFrame") stands where a file's path would in messages."""
    name = f"qrels {type(gold).__name__}"
    gold = _plain(gold)
    if isinstance(gold, (str, os.PathLike)):
        return ("path", name, os.fspath(gold))
    if _is_dataframe(gold):
        cols = (_column(gold, _QUERY, "gold"), _column(gold, _DOC, "gold"), _column(gold, _GRADE, "gold"))
        return ("rows", name, *cols)
    if isinstance(gold, Mapping):
        kind = _kind(gold, "gold set", "graded", "listed")
        d = _as_dicts(gold, dict if kind == "graded" else list)
        return (kind, name, d)
    raise RgateError(
        f"a gold set is a path, a dict or a DataFrame, not {type(gold).__name__}",
        "pass a qrels/YAML path, {qid: {doc: grade}}, {qid: [doc, ...]}, or a DataFrame query_id, doc_id, relevance",
    )


def run_spec(run: Any) -> tuple:
    """As :func:`gold_spec`: "run dict", "run DataFrame"."""
    name = f"run {type(run).__name__}"
    run = _plain(run)
    if isinstance(run, (str, os.PathLike)):
        return ("path", name, os.fspath(run))
    if _is_dataframe(run):
        cols = (_column(run, _QUERY, "run"), _column(run, _DOC, "run"), _column(run, _SCORE, "run"))
        return ("rows", name, *cols)
    if isinstance(run, Mapping):
        kind = _kind(run, "run", "scored", "ranked")
        d = _as_dicts(run, dict if kind == "scored" else list)
        return (kind, name, d)
    raise RgateError(
        f"a run is a path, a dict or a DataFrame, not {type(run).__name__}",
        "pass a TREC/JSON/JSONL path, {qid: {doc: score}}, {qid: [doc, ...]}, or a DataFrame query_id, doc_id, score",
    )


def strata_list(strata: Any) -> Optional[list]:
    """``{qid: stratum}`` as pairs. Any mapping, or anything with mapping's
    ``items()`` (a pandas Series indexed by query id, as
    ``df.set_index("qid")["category"]`` gives: issue 50). A stratum that is
    missing (None, NaN) is refused naming its query: ``str()`` would make
    it a stratum called "nan"."""
    if strata is None:
        return None
    items = getattr(strata, "items", None)
    if isinstance(strata, (str, bytes)) or not callable(items):
        raise RgateError(
            f"strata is a mapping {{qid: stratum}} or a pandas Series, not {type(strata).__name__}",
            "pass strata={'q1': 'how-to', ...} or strata=df.set_index('query_id')['stratum']",
        )
    out = []
    for q, s in items():
        if s is None or (isinstance(s, float) and s != s):
            raise RgateError(
                f"strata: query `{_clip(str(q))}` has no stratum ({s!r})",
                "give every listed query a stratum, or leave the query out (it goes to `default`)",
            )
        out.append((str(q), str(s)))
    return out


def _clip(text: str, limit: int = 80) -> str:
    """A user's value cut for a message: errors stay short whatever the input."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def metric_list(metrics: Any) -> List[str]:
    """Metric names: a string (comma-separated allowed), any iterable of
    them (a list, a tuple, a generator, a pandas Index), or None."""
    if metrics is None:
        return []
    if isinstance(metrics, str):
        return [metrics]
    return [str(m) for m in metrics]
