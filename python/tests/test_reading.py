"""How the native module reads dicts: every str id as text (subclasses
too), numbers as Python converts them, and a dict changed while it is read
refused with a message rather than crashing the interpreter."""

import pytest

import rgate


class Id(str):
    """A str subclass, as some loaders hand ids over."""


class Score(float):
    """A float subclass (numpy.float64 is one)."""


class Changing:
    """An int-like grade whose conversion empties the dict being read."""

    def __init__(self, victim):
        self.victim = victim

    def __index__(self):
        self.victim.clear()
        return 1


def test_subclasses_and_non_ascii_ids_read_as_their_text():
    qrels = {Id("q1"): {"é≠𝄞": 1, Id("b"): 2}}
    run = {"q1": {Id("b"): Score(0.5), "é≠𝄞": 0.25, "c": 0.75}}
    # Hand-computed: c, b (grade 2), é≠𝄞 (grade 1): first relevant at 2.
    ev = rgate.evaluate(qrels, run, "RR,P@3", per_query=True)
    assert ev["rr"] == 0.5
    assert ev["P@3"] == 2 / 3
    assert [r["query_id"] for r in ev.per_query] == ["q1"]


def test_a_lone_surrogate_in_an_id_is_refused_by_name():
    with pytest.raises(rgate.RgateError, match=r"a document id '\\ud800' holds a lone surrogate"):
        rgate.evaluate({"q1": {"a": 1}}, {"q1": {"\ud800": 0.5}})


def test_a_dict_changed_while_it_is_read_is_an_rgate_error():
    labels = {"a": 1, "b": 1, "c": 1}
    labels["a"] = Changing(labels)
    with pytest.raises(rgate.RgateError, match="changed size while rgate read it"):
        rgate.evaluate({"q1": labels}, {"q1": ["a"]})
    ranked = ["a", "b", "c"]

    class ChangingId:
        def __index__(self):
            ranked.clear()
            return 7

    ranked.insert(0, ChangingId())
    with pytest.raises(rgate.RgateError, match="changed size while rgate read it"):
        rgate.evaluate({"q1": {"a": 1}}, {"q1": ranked})


def test_ranked_lists_and_scored_dicts_of_the_same_ranking_score_alike():
    qrels = {"q1": {"a": 1, "d": 2}, "q2": {"x": 1}}
    ranked = {"q1": ["c", "a", "b", "d", "a"], "q2": ["y", "x"]}
    scored = {"q1": {"c": 4.0, "a": 3.0, "b": 2.0, "d": 1.0}, "q2": {"y": 1.0, "x": 0.0}}
    with pytest.warns(rgate.RgateWarning, match="1 repeated document id"):
        by_list = rgate.evaluate(qrels, ranked, "ndcg@10,RR,map")
    by_score = rgate.evaluate(qrels, scored, "ndcg@10,RR,map")
    assert by_list.to_dict()["metrics"] == by_score.to_dict()["metrics"]
    # Hand-computed RR: q1 first relevant at 2, q2 at 2.
    assert by_list["rr"] == 0.5
