"""Every argument is checked as the command line checks it, through the
library's one function, with its message (issue 41, items 6, 9 and 14);
the expected messages are read from the `rgate` command's own stderr."""

import subprocess

import pytest

import rgate
from conftest import TREC

GOLD = {f"q{i}": {"a": 1, "z": 0} for i in range(30)}
RUN = {f"q{i}": ["z", "a"] for i in range(30)}


def cli_error(*args):
    """The `error: ...` line of the command, without its prefix."""
    got = subprocess.run(["rgate", *args], capture_output=True, text=True)
    assert got.returncode == 2, got
    first = got.stderr.splitlines()[0]
    assert first.startswith("error: "), got.stderr
    return got.stderr


def test_compare_with_one_run_or_none_is_refused_with_the_commands_message():
    qrels, run = str(TREC / "qrels.test"), str(TREC / "results.test")
    cli = cli_error("compare", "--gold", qrels, run)
    with pytest.raises(rgate.RgateError) as one:
        rgate.compare(qrels, {"only": run})
    assert f"error: {one.value.message}\nhint: {one.value.hint}\n" == cli
    # None: was an index out of bounds in Rust, a PanicException (not an
    # Exception), and a backtrace note on stderr.
    with pytest.raises(rgate.RgateError) as none:
        rgate.compare(qrels, {})
    assert none.value.message == one.value.message.replace("got 1", "got 0")


@pytest.mark.parametrize("level", [0, -5, 1.9, True, "2", 2**40])
def test_a_relevance_level_is_refused_with_the_commands_message(level):
    word = {True: "True", "2": "'2'"}.get(level, str(level))
    cli = cli_error("eval", "--gold", str(TREC / "qrels.test"), "--run", str(TREC / "results.test"), f"--relevance-level={word}")
    for call in (
        lambda: rgate.evaluate(GOLD, RUN, "recall@10", relevance_level=level),
        lambda: rgate.compare(GOLD, {"a": RUN, "b": RUN}, "rr", relevance_level=level, resamples=200),
    ):
        with pytest.raises(rgate.RgateError) as info:
            call()
        # clap puts "invalid value '0' for '--relevance-level <N>': " first.
        assert f": {info.value.message}\nhint: {info.value.hint}" in cli, (cli, info.value)


def test_a_relevance_level_of_two_counts_only_grades_of_two_or_more():
    np = pytest.importorskip("numpy")
    gold = {"q1": {"a": 1, "b": 2}, "q2": {"c": 1}}
    run = {"q1": ["a", "b"], "q2": ["c"]}
    # Hand-computed: at level 2, q1's only relevant document is b (rank 2)
    # and q2 has none (0, as trec_eval scores it).
    for level in (2, np.int64(2)):
        with pytest.warns(rgate.RgateWarning, match="no label with grade >= 2"):
            ev = rgate.evaluate(gold, run, "RR", relevance_level=level)
        assert ev["rr"] == (0.5 + 0.0) / 2
    # At 1 (the default): both first at rank 1.
    assert rgate.evaluate(gold, run, "RR")["rr"] == 1.0


@pytest.mark.parametrize(
    "kwargs, cli_args, message",
    [
        # The command line names the flag (--resamples 10), Python the argument.
        ({"resamples": 10}, ["--resamples", "10"], "resamples 10 is too few for a p-value"),
        ({"alpha": 1.5}, ["--alpha", "1.5"], "alpha 1.5 is outside (0, 1)"),
        ({"resamples": 2_000_000}, ["--resamples", "2000000"], "resamples 2000000 is more than the 1000000 rgate accepts"),
    ],
)
def test_compares_settings_get_the_commands_checks(kwargs, cli_args, message):
    cli = cli_error("compare", "--gold", str(TREC / "qrels.test"), *cli_args, str(TREC / "results.test"), str(TREC / "results.test"))
    with pytest.raises(rgate.RgateError) as info:
        rgate.compare(GOLD, {"a": RUN, "b": RUN}, "rr", **kwargs)
    assert info.value.message == message
    # The command line says `--alpha 1.5 is ...` (its pipeline's check) or
    # `invalid value '10' for '--resamples <B>': resamples 10 is ...` (its
    # parser's, the function Python's goes through).
    assert f"{message}\nhint: {info.value.hint}\n" in cli


@pytest.mark.parametrize(
    "kwargs, word, message",
    [
        # The command line said "-1 is not in 0..=4294967295" (clap's u32)
        # and Python "resamples -1 is too few": two parsers, two messages.
        ({"resamples": -1}, "--resamples=-1", "resamples -1 is too few for a p-value"),
        ({"resamples": 2**70}, f"--resamples={2**70}", f"resamples {2**70} is more than the 1000000 rgate accepts"),
        ({"resamples": 1.5}, "--resamples=1.5", "resamples `1.5` is not a whole number"),
        # "invalid digit found in string" from the command line.
        ({"seed": -1}, "--seed=-1", "seed -1 is not a whole number from 0 to 18446744073709551615"),
        ({"seed": 2**64}, f"--seed={2**64}", f"seed {2**64} is not a whole number from 0 to 18446744073709551615"),
    ],
)
def test_resamples_and_seed_are_read_by_one_function_for_both(kwargs, word, message):
    cli = cli_error("compare", "--gold", str(TREC / "qrels.test"), word, str(TREC / "results.test"), str(TREC / "results.test"))
    with pytest.raises(rgate.RgateError) as info:
        rgate.compare(GOLD, {"a": RUN, "b": RUN}, "rr", **kwargs)
    assert info.value.message == message
    flag = word.split("=")[0]
    assert f"for '{flag} <" in cli and f">': {message}\nhint: {info.value.hint}\n" in cli, cli


@pytest.mark.parametrize(
    "kwargs, message",
    [
        # Was an OverflowError: the u32 the native call took.
        ({"resamples": -1}, "resamples -1 is too few for a p-value"),
        ({"resamples": 2**70}, f"resamples {2**70} is more than the 1000000 rgate accepts"),
        ({"resamples": 1000.0}, "resamples `1000.0` is not a whole number"),
        ({"resamples": None}, "resamples `None` is not a whole number"),
        ({"seed": -1}, "seed -1 is not a whole number from 0 to 18446744073709551615"),
        ({"seed": 2**64}, f"seed {2**64} is not a whole number from 0 to 18446744073709551615"),
        ({"alpha": "0.05"}, "alpha '0.05' is not a number"),
        ({"alpha": float("nan")}, "alpha NaN is outside (0, 1)"),
        ({"correction": 5}, "correction=5: compare corrects by holm, bh (Benjamini-Hochberg) or none"),
    ],
)
def test_settings_python_alone_can_pass_are_rgate_errors(kwargs, message):
    with pytest.raises(rgate.RgateError) as info:
        rgate.compare(GOLD, {"a": RUN, "b": RUN}, "rr", **kwargs)
    assert info.value.message == message
    assert info.value.hint


def test_numpy_integers_and_floats_are_numbers():
    np = pytest.importorskip("numpy")
    a = rgate.compare(GOLD, {"a": RUN, "b": RUN}, "rr", resamples=np.int64(300), seed=np.uint64(7), alpha=np.float64(0.1))
    b = rgate.compare(GOLD, {"a": RUN, "b": RUN}, "rr", resamples=300, seed=7, alpha=0.1)
    assert a.to_dict() == b.to_dict()
    assert a.to_dict()["settings"]["resamples"] == 300


class Id(str):
    pass


class BadFloat(int):
    """An int whose conversion to float raises."""

    def __float__(self):
        raise ZeroDivisionError("no float today")


@pytest.mark.parametrize(
    "gold, run, message",
    [
        # Issue 41, item 14: "a query id must be a string, not str".
        ({"q1": {"a": 1}}, {"\ud800": ["a"]}, "a query id '\\ud800' holds a lone surrogate, which is not text"),
        (
            {"q1": {"a": 1}},
            {"q1": {Id("b\udcff"): 0.5}},
            # Issue 50: and names the query.
            "query `q1`'s dict: a document id 'b\\udcff' holds a lone surrogate",
        ),
        # Issue 41, item 14: "a score is a number, not 2".
        (
            {"q1": {"a": 1}},
            {"q1": {"a": BadFloat(2)}},
            "query `q1`, document `a`: score 2 could not be read as a number: ZeroDivisionError: no float today",
        ),
        (
            {"q1": {"a": 1}},
            {"q1": {"a": 10**400}},
            # repr cut to 60 characters, the last an ellipsis.
            "query `q1`, document `a`: score 1" + "0" * 58 + "… could not be read as a number: "
            "OverflowError: int too large to convert to float",
        ),
        ({"q1": {"a": 2**40}}, {"q1": ["a"]}, "query `q1`, document `a`: grade 1099511627776 is out of range (grades are integers below 2^31)"),
        ({"q1": {"a": 1}}, {"q1": {"a": "x"}}, "query `q1`, document `a`: a score is a number, not 'x'"),
    ],
)
def test_values_that_cannot_be_read_say_why(gold, run, message):
    with pytest.raises(rgate.RgateError) as info:
        rgate.evaluate(gold, run, "RR")
    assert info.value.message.startswith(message), info.value.message
