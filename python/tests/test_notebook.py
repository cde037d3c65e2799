"""rgate as a notebook and a pandas user meets it (issue 50): HTML reprs,
strata from a Series, DataFrames named as asked, errors that stay short."""

import html.parser

import pytest

import rgate

QRELS = {"q1": {"d1": 1, "d2": 0}, "q2": {"d3": 2}, "q3": {"d5": 1}, "q4": {"d6": 1}}
RUN = {"q1": ["d1", "d2"], "q2": ["d4", "d3"], "q3": ["d9", "d8"], "q4": ["d6"]}
WORSE = {"q1": ["d2", "d1"], "q2": ["d4", "d8"], "q3": ["d9", "d8"], "q4": ["d7", "d6"]}


class Cells(html.parser.HTMLParser):
    """The tags and the text of each cell of an HTML fragment."""

    def __init__(self):
        super().__init__()
        self.tags, self.cells, self._in = [], [], False

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self._in = tag in ("td", "th")
        if self._in:
            self.cells.append("")

    def handle_endtag(self, tag):
        self._in = False

    def handle_data(self, data):
        if self._in:
            self.cells[-1] += data


def parsed(fragment):
    p = Cells()
    p.feed(fragment)
    return p


def test_evaluation_has_an_html_table_of_its_means():
    ev = rgate.evaluate(QRELS, RUN, ["RR", "P@1"])
    p = parsed(ev._repr_html_())
    assert "table" in p.tags and "script" not in p.tags
    # One stratum: the `all` column alone. RR: (1 + 1/2 + 0 + 1) / 4;
    # P@1: (1 + 0 + 0 + 1) / 4.
    assert p.cells == ["metric", "all", "RR", "0.6250", "P@1", "0.5000"]


def test_comparison_and_gate_have_html_tables_failing_first(at_root):
    cmp = rgate.compare(QRELS, {"base": RUN, "worse": WORSE}, ["RR"], resamples=1000)
    p = parsed(cmp._repr_html_())
    assert p.cells[:9] == ["run", "metric", "stratum", "baseline", "current", "delta", "ci_low", "ci_high", "p_adjusted"]
    # RR: base 0.625; worse (1/2 + 0 + 0 + 1/2) / 4 = 0.25.
    assert p.cells[9:15] == ["worse", "RR", "all", "0.6250", "0.2500", "-0.3750"]
    outcome = rgate.gate("config/rgate.yaml", runs={"hybrid": "config/demo/runs/hybrid-regressed.jsonl"})
    p = parsed(outcome._repr_html_())
    assert "script" not in p.tags
    assert p.cells[:7] == ["retriever", "metric", "stratum", "baseline", "current", "delta", "verdict"]
    # The first row is a failed check of the regressed retriever.
    assert p.cells[7] == "hybrid" and p.cells[13] == "fail"


def test_html_escapes_what_came_from_the_input():
    ev = rgate.compare({"q1": {"d": 1}}, {"a": {"q1": ["d"]}, "<b>x</b>": {"q1": ["e", "d"]}}, ["rr"], resamples=100)
    fragment = ev._repr_html_()
    assert "<b>" not in fragment and "&lt;b&gt;x&lt;/b&gt;" in fragment


def test_strata_from_a_pandas_series():
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({"qid": ["q1", "q2", "q3", "q4"], "category": ["a", "a", "b", "b"]})
    ev = rgate.evaluate(QRELS, RUN, ["RR"], strata=df.set_index("qid")["category"], by_stratum=True)
    m = ev.metrics["mrr"]
    # a: (1 + 1/2) / 2; b: (0 + 1) / 2; macro: the mean of the two.
    assert (m["a"], m["b"], m["macro"]) == (0.75, 0.5, 0.625)
    frame = ev.to_pandas()
    assert list(frame.columns) == ["all", "a", "b", "macro"]


def test_a_missing_stratum_in_a_series_names_its_query():
    pd = pytest.importorskip("pandas")
    s = pd.Series({"q1": "a", "q2": None})
    with pytest.raises(rgate.RgateError, match=r"query `q2` has no stratum"):
        rgate.evaluate(QRELS, RUN, ["RR"], strata=s)
    with pytest.raises(rgate.RgateError, match="a mapping .* or a pandas Series, not list"):
        rgate.evaluate(QRELS, RUN, ["RR"], strata=["a"])


def test_dataframes_keep_the_callers_spellings_and_no_duplicate_columns():
    pytest.importorskip("pandas")
    ev = rgate.evaluate(QRELS, RUN, "RR,P@1")
    frame = ev.to_pandas()
    assert list(frame.columns) == ["all"]
    assert list(frame.index) == ["RR", "P@1"]
    assert list(ev.to_pandas(names="rgate").index) == ["mrr", "precision@1"]
    per_query = rgate.evaluate(QRELS, RUN, iter(["RR", "ndcg@10"]), per_query=True).to_pandas()
    assert [c for c in per_query.columns if c in ("RR", "ndcg@10", "mrr")] == ["RR", "ndcg@10"]
    assert per_query.columns.is_unique
    cmp = rgate.compare(QRELS, {"base": RUN, "worse": WORSE}, ["RR"], resamples=100)
    assert list(cmp.to_pandas()["metric"]) == ["RR"]
    assert list(cmp.to_pandas(names="rgate")["metric"]) == ["mrr"]
    with pytest.raises(rgate.RgateError, match="names='asked'"):
        ev.to_pandas(names="x" * 100_000)
    with pytest.raises(rgate.RgateError) as e:
        ev.to_pandas(names="x" * 100_000)
    assert len(str(e.value)) < 400


def test_an_error_shows_the_callers_frame_not_rgates():
    import traceback

    try:
        rgate.evaluate(QRELS, RUN, "no-such-metric")
    except rgate.RgateError as e:
        frames = [f.filename for f in traceback.extract_tb(e.__traceback__)]
    assert frames[0] == __file__
    # The public entry's own frame is all that remains of rgate's.
    assert sum("rgate" in f and f != __file__ for f in frames) <= 1, frames


def test_a_bad_value_names_its_query_and_its_retriever(at_root):
    """Issue 50: a tuple document id named no query; a bad score in
    gate(runs=...) named no retriever."""
    with pytest.raises(rgate.RgateError, match=r"^query `q1`'s dict: a document id must be a string, not tuple"):
        rgate.evaluate({"q1": {"d1": 1}}, {"q1": {("a", "b"): 1.0}}, "rr")
    with pytest.raises(rgate.RgateError, match=r"^query `q1`: a document id must be a string, not tuple"):
        rgate.evaluate({"q1": {"d1": 1}}, {"q1": [("a",)]}, "rr")
    with pytest.raises(rgate.RgateError, match=r"^query `q1`'s dict: a document id must be a string, not tuple"):
        rgate.evaluate({"q1": {("a",): 1}}, {"q1": ["d1"]}, "rr")
    from conftest import read_jsonl_run

    run = {q: {d: 1.0 for d in ds} for q, ds in read_jsonl_run(at_root / "config/demo/runs/bm25.jsonl").items()}
    q = sorted(run)[3]
    run[q][next(iter(run[q]))] = "x" * 1_000_000
    with pytest.raises(rgate.RgateError) as e:
        rgate.gate("config/rgate.yaml", runs={"bm25": run})
    text = str(e.value)
    assert text.startswith(f"the run of `bm25`: query `{q}`, document "), text[:200]
    assert "a score is a number" in text and len(text) < 400
