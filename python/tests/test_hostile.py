"""A property over hostile input: whatever `evaluate`, `compare` and `gate`
are given, they return a result or raise `rgate.RgateError`, never another
exception (a PanicException, an OverflowError, a user's own exception
unwrapped) and never crash the interpreter (issue 41). Hypothesis draws
the inputs: empty and one-run dicts, wrong types, NaN, huge numbers, lone
surrogates, subclasses whose dunders raise, values that change the dict or
list being read."""

import warnings
from collections.abc import Mapping

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rgate


class Boom(Exception):
    pass


class RaisingFloat(int):
    def __float__(self):
        raise Boom("__float__")


class RaisingIndex:
    def __index__(self):
        raise Boom("__index__")

    def __float__(self):
        raise Boom("__float__")


class RaisingRepr(float):
    def __repr__(self):
        raise Boom("__repr__")


class RaisingStr(str):
    def __str__(self):
        raise Boom("__str__")


class RaisingBool:
    def __bool__(self):
        raise Boom("__bool__")


class RaisingMapping(Mapping):
    """A Mapping whose reading raises."""

    def __getitem__(self, k):
        raise Boom("__getitem__")

    def __iter__(self):
        raise Boom("__iter__")

    def __len__(self):
        return 1


class RaisingPath:
    def __fspath__(self):
        raise Boom("__fspath__")


class Mutator:
    """A number whose conversion changes the container it sits in."""

    def __init__(self, how):
        self.how = how
        self.victim = None

    def _mutate(self):
        v = self.victim
        if v is None:
            return
        if self.how == "clear":
            v.clear()
        elif isinstance(v, dict):
            v[f"new{len(v)}"] = 1
        else:
            v.append("new")

    def __index__(self):
        self._mutate()
        return 1

    def __float__(self):
        self._mutate()
        return 1.0


def with_victims(container):
    """Points each Mutator in `container` (one level down) at its holder."""
    items = container.values() if isinstance(container, dict) else container
    for v in list(items):
        if isinstance(v, Mutator):
            v.victim = container
        elif isinstance(v, (dict, list)):
            with_victims(v)
    return container


ids = st.one_of(
    st.sampled_from(["q1", "q2", "a", "b", "", " ", "q 1", "\x00", "é", "\ud800", "a\udcff", "𝄞" * 3]),
    st.text(max_size=4),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([None, 1.5, float("nan"), (1,), b"q1", True, RaisingStr("s")]),
)
numbers = st.one_of(
    st.integers(min_value=-(2**80), max_value=2**80),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([10**400, -(10**400), 2**31, -(2**31) - 1, True, None, "1", b"1", [], {}]),
    st.builds(RaisingFloat, st.integers(0, 3)),
    st.builds(RaisingIndex),
    st.builds(RaisingRepr, st.floats(0, 1)),
    st.builds(Mutator, st.sampled_from(["clear", "grow"])),
)
scored = st.dictionaries(ids, numbers, max_size=4)
ranked = st.lists(st.one_of(ids, st.builds(Mutator, st.sampled_from(["clear", "grow"]))), max_size=4)
# Hashable ids only as dict keys: a RaisingStr hashes as str does.
per_query = st.one_of(scored, ranked, numbers, st.sampled_from([None, "a", (), set(), RaisingMapping()]))
# Well-formed sets too, so that the draws reach the pipeline (where compare
# with no run was a panic) and not only the readers.
plausible = st.sampled_from(
    [{"q1": {"a": 1}, "q2": {"b": 2, "c": 0}}, {"q1": ["a"], "q2": ["b"]}, {"q1": {"a": 0.5, "b": 0.25}}, {"q2": ["c", "b"]}]
)
container = st.one_of(
    plausible,
    st.dictionaries(ids, per_query, max_size=4).map(with_victims),
    st.sampled_from([{}, None, 5, "missing.yaml", [], RaisingMapping(), RaisingPath(), b"x"]),
)
metrics = st.one_of(
    st.none(),
    st.sampled_from(["rr", "ndcg@10,recall@5", "", "bogus", "P@0", "all_trec", 5, [None], [RaisingStr("rr")]]),
)
flags = st.one_of(st.booleans(), st.sampled_from([RaisingBool(), None, 2]))
level = st.one_of(st.integers(-3, 4), numbers)

SETTINGS = settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    database=None,
)


def only_rgate_errors(call):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            call()
        except rgate.RgateError:
            pass


@SETTINGS
@given(gold=container, run=container, metrics=metrics, per_query=flags, by_stratum=flags, relevance_level=level)
def test_evaluate_refuses_only_with_rgate_error(gold, run, metrics, per_query, by_stratum, relevance_level):
    only_rgate_errors(
        lambda: rgate.evaluate(
            gold, run, metrics, per_query=per_query, by_stratum=by_stratum, relevance_level=relevance_level
        )
    )


runs = st.one_of(
    st.dictionaries(st.sampled_from(["base", "new", "third"]), plausible, max_size=3),
    st.dictionaries(st.one_of(ids, st.sampled_from(["base", "new"])), container, max_size=3),
    st.sampled_from([None, [], 5, RaisingMapping()]),
)


@SETTINGS
@given(
    gold=container,
    runs=runs,
    metrics=metrics,
    resamples=st.one_of(st.sampled_from([100, 200]), numbers),
    seed=st.one_of(st.integers(0, 5), numbers),
    alpha=st.one_of(st.sampled_from([0.05]), numbers),
    test=st.sampled_from(["bootstrap", "t-test", "randomization", "nope", 5]),
    alternative=st.sampled_from(["two-sided", "less", "nope", None]),
    correction=st.sampled_from(["holm", "bh", "none", "nope", None, RaisingStr("holm")]),
    relevance_level=level,
)
def test_compare_refuses_only_with_rgate_error(gold, runs, metrics, resamples, seed, alpha, test, alternative, correction, relevance_level):
    only_rgate_errors(
        lambda: rgate.compare(
            gold,
            runs,
            metrics,
            test=test,
            resamples=resamples,
            seed=seed,
            alpha=alpha,
            alternative=alternative,
            correction=correction,
            relevance_level=relevance_level,
        )
    )


@pytest.mark.parametrize(
    "kwargs",
    [
        {"config": RaisingPath()},
        {"config": 5},
        {"config": "no/such/rgate.yaml"},
        {"runs": 5},
        {"runs": RaisingMapping()},
        {"runs": {"hybrid": {"q1": {"a": RaisingFloat(1)}}}},
        {"runs": {"nope": {}}},
        {"candidates": {"hybrid": [1, 2]}},
        {"baseline_ref": 5},
        {"baseline_ref": "\ud800"},
    ],
)
def test_gate_refuses_only_with_rgate_error(kwargs, at_root):
    kwargs.setdefault("config", "config/rgate.yaml")
    with pytest.raises(rgate.RgateError):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            rgate.gate(**kwargs)


def test_a_users_exception_is_the_errors_cause():
    with pytest.raises(rgate.RgateError) as info:
        rgate.evaluate({"q1": ["a"]}, {"q1": ["a"]}, per_query=RaisingBool())
    assert info.value.message == "per_query: reading it raised Boom: __bool__"
    assert isinstance(info.value.__cause__, Boom)
