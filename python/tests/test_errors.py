"""Errors carry the command line's message and hint; warnings go through
Python's warnings module; the library prints nothing."""

import pickle
import warnings

import pytest

import rgate
from conftest import TREC


def test_rgate_error_is_a_value_error_with_the_cli_message_and_hint(tmp_path):
    missing = tmp_path / "nope.yaml"
    with pytest.raises(ValueError) as info:
        rgate.evaluate(str(missing), {"q1": ["a"]})
    err = info.value
    assert isinstance(err, rgate.RgateError)
    assert err.message.startswith(f"{missing}: cannot read gold set: ")
    assert err.hint == "check the path; gold sets are YAML, JSON, JSONL or TREC qrels"
    assert str(err) == f"{err.message}\nhint: {err.hint}"
    again = pickle.loads(pickle.dumps(err))
    assert (again.message, again.hint) == (err.message, err.hint)


@pytest.mark.parametrize(
    "gold, run, message",
    [
        ({"q1": {"a": 1, "b": 2}}, {"q1": {"a": float("nan")}}, "run dict: query `q1`, document `a`: score NaN is not a finite number"),
        ({"q1": {"a": 1.5}}, {"q1": ["a"]}, "query `q1`, document `a`: a grade is an integer, not 1.5"),
        ({}, {"q1": ["a"]}, "qrels dict: the gold set has no queries"),
        ({"q1": {"a": 1}}, {"q1": ["a"]}, None),
        ({"q1": ["a"]}, 42, "a run is a path, a dict or a DataFrame, not int"),
        ({"q1": ["a"]}, {"q1": "a"}, "the run's values are neither dicts nor lists (found str)"),
        # A score that is not a number, in the second query of a packed
        # run (scores cross as one list): named by its own query and doc.
        ({"q1": ["a"]}, {"q1": {"a": 1.0}, "q2": {"b": 0.5, "c": "x"}}, "query `q2`, document `c`: a score is a number, not 'x'"),
    ],
)
def test_bad_inputs_raise_with_the_reason(gold, run, message):
    if message is None:
        assert rgate.evaluate(gold, run, "RR")["rr"] == 1.0
        return
    with pytest.raises(rgate.RgateError) as info:
        rgate.evaluate(gold, run, "RR")
    assert str(info.value).startswith(message), str(info.value)


def test_ids_of_another_type_are_an_rgate_error():
    with pytest.raises(rgate.RgateError, match="a document id must be a string, not tuple"):
        rgate.evaluate({"q1": {("a",): 1}}, {"q1": ["a"]})


def test_an_unknown_metric_names_the_near_one():
    with pytest.raises(rgate.RgateError) as info:
        rgate.evaluate({"q1": ["a"]}, {"q1": ["a"]}, "ndgc@10")
    assert "ndgc@10" in info.value.message
    assert info.value.hint is not None


def test_a_duplicate_judgment_in_a_dataframe_is_refused_as_in_qrels():
    pd = pytest.importorskip("pandas")
    gold = pd.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["a", "a"], "relevance": [1, 2]})
    run = pd.DataFrame({"query_id": ["q1"], "doc_id": ["a"], "score": [1.0]})
    with pytest.raises(rgate.RgateError, match="query `q1`: label `a` appears twice"):
        rgate.evaluate(gold, run)


def test_warnings_go_through_the_warnings_module_and_nothing_is_printed(capfd):
    with pytest.warns(rgate.RgateWarning) as caught:
        ev = rgate.evaluate({"q1": ["a"], "q2": ["b"]}, {"q1": ["a"], "q9": ["x"]}, "RR")
    texts = [str(w.message) for w in caught]
    assert texts == [
        "run dict: 1 of 2 gold queries is absent; it scores 0 on every metric: `q2`",
        "run dict: 1 query is not in the gold set qrels dict; ignored",
    ]
    assert caught[0].filename == __file__  # points at the caller's line
    assert ev["rr"] == 0.5
    out, err = capfd.readouterr()
    assert (out, err) == ("", "")


def test_no_warning_for_a_clean_evaluation():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rgate.evaluate(str(TREC / "qrels.test"), str(TREC / "results.test"), "map")


def test_compare_refuses_a_correction_it_does_not_apply():
    with pytest.raises(rgate.RgateError, match="holm, bh"):
        rgate.compare({"q1": ["a"]}, {"a": {"q1": ["a"]}, "b": {"q1": ["a"]}}, correction="bonferroni")


def test_compare_corrects_by_bh_when_asked():
    gold = {f"q{i}": ["a"] for i in range(30)}
    base = {f"q{i}": ["b", "a"] for i in range(30)}
    cmp = rgate.compare(gold, {"base": base, "new": base}, ["rr"], correction="bh", resamples=200)
    assert cmp.to_dict()["settings"]["correction"] == "bh"
    assert cmp.to_dict()["statement"]["best"] is None
