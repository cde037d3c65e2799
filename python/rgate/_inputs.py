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
from array import array
from collections.abc import Mapping
from itertools import chain
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


# The native module reads ids packed into one UTF-8 buffer, separated by
# NUL, and numbers as one buffer of C doubles or ints: a handful of objects
# cross into Rust instead of one per id. Under CPython 3.9's limited API
# (abi3, SPEC "Python API") a str's text is reachable only through a new
# bytes object (PyUnicode_AsUTF8AndSize is limited API from 3.10 on), so
# 7 million ids read one by one cost 7 million encodes; one join and one
# encode cost one (scores stay a list of floats, which crosses cheaply).
# Whatever does not pack (an id that is not a str or
# holds a NUL, a value array() refuses) goes across as before, one object
# at a time, and is read, or refused with its query and document named,
# as it always was.
_SEP = "\0"
_INT32 = array("i").itemsize == 4


def _pack_ids(ids: Any) -> Optional[bytes]:
    try:
        text = _SEP.join(ids)
    except TypeError:  # an int id, say: read one by one (its decimal text)
        return None
    if _SEP in text:
        return None
    try:
        return text.encode()
    except UnicodeEncodeError:  # a lone surrogate: refused one by one
        return None


def _pack_numbers(values: Any, code: str) -> Optional[bytes]:
    # array("d") converts as the native reader's f64 extraction does
    # (PyFloat_AsDouble: floats, ints, __float__/__index__) and bit for
    # bit; array("i") takes ints that fit an i32 and nothing else, so a
    # grade like 2.0 from a CSV column goes the one-by-one way, which
    # takes it.
    if code == "i" and not _INT32:
        return None
    try:
        return array(code, values).tobytes()
    except (TypeError, ValueError, OverflowError):
        return None


def _pack_nested(kind: str, name: str, d: dict, code: Optional[str]) -> Optional[tuple]:
    """``(packed-kind, name, qids, counts, docs[, values])`` for a dict of
    dicts (``code`` the values' array type) or of lists (``code`` None)."""
    counts = [len(v) for v in d.values()]
    qids = _pack_ids(d.keys())
    docs = _pack_ids(chain.from_iterable(d.values()))
    if qids is None or docs is None:
        return None
    if code is None:
        return ("packed-" + kind, name, qids, counts, docs)
    values: Any = chain.from_iterable(v.values() for v in d.values())
    # Scores as one list: array("d") from 7 million floats costs three
    # times what list() does, and the native side reads a list's floats
    # fast (naming the query and document of one that is not a number).
    values = list(values) if code == "d" else _pack_numbers(values, code)
    if values is None:
        return None
    return ("packed-" + kind, name, qids, counts, docs, values)


def _pack_rows(name: str, qids: list, docs: list, values: list, code: str) -> Optional[tuple]:
    if not (len(qids) == len(docs) == len(values)):
        return None  # the one-by-one reader says which columns differ
    q = _pack_ids(qids)
    d = _pack_ids(docs)
    if q is None or d is None:
        return None
    v = values if code == "d" else _pack_numbers(values, code)
    if v is None:
        return None
    return ("packed-rows", name, q, d, v)


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
        return _pack_rows(name, *cols, "i") or ("rows", name, *cols)
    if isinstance(gold, Mapping):
        kind = _kind(gold, "gold set", "graded", "listed")
        d = _as_dicts(gold, dict if kind == "graded" else list)
        return _pack_nested(kind, name, d, "i" if kind == "graded" else None) or (kind, name, d)
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
        return _pack_rows(name, *cols, "d") or ("rows", name, *cols)
    if isinstance(run, Mapping):
        kind = _kind(run, "run", "scored", "ranked")
        d = _as_dicts(run, dict if kind == "scored" else list)
        return _pack_nested(kind, name, d, "d" if kind == "scored" else None) or (kind, name, d)
    raise RgateError(
        f"a run is a path, a dict or a DataFrame, not {type(run).__name__}",
        "pass a TREC/JSON/JSONL path, {qid: {doc: score}}, {qid: [doc, ...]}, or a DataFrame query_id, doc_id, score",
    )


def strata_list(strata: Optional[Mapping]) -> Optional[list]:
    if strata is None:
        return None
    if not isinstance(strata, Mapping):
        raise RgateError(
            f"strata is a dict {{qid: stratum}}, not {type(strata).__name__}",
            "pass strata={'q1': 'how-to', ...}",
        )
    return [(str(q), str(s)) for q, s in strata.items()]


def metric_list(metrics: Any) -> List[str]:
    if metrics is None:
        return []
    if isinstance(metrics, str):
        return [metrics]
    return [str(m) for m in metrics]
