"""The gate on the shipped demo, from Python, and the pytest helper."""

import pytest

import rgate
from rgate.testing import assert_no_regression
from conftest import DEMO, read_jsonl_run

REGRESSED = "config/demo/runs/hybrid-regressed.jsonl"


def test_the_demo_passes(at_root):
    outcome = rgate.gate("config/rgate.yaml")
    assert (outcome.verdict, outcome.exit_code) == ("pass", 0)
    assert {c["retriever"] for c in outcome.checks} == {"bm25", "hybrid", "reranked"}
    assert outcome.report("junit").startswith("<?xml")
    assert "PASS" in repr(outcome)
    # A format the command would refuse is refused as the command's
    # refusals are: an RgateError (not a bare ValueError or TypeError).
    for bad in ("html5", 3, None):
        with pytest.raises(rgate.RgateError) as info:
            outcome.report(bad)
        assert type(info.value) is rgate.RgateError
    with pytest.raises(rgate.RgateError) as info:
        outcome.report("nope")
    assert info.value.message == "unknown format `nope`: table, json, markdown, csv, junit or trec"


def failed(outcome):
    return [(c["retriever"], c["metric"], c["stratum"]) for c in outcome.checks if c["verdict"] == "fail"]


def test_the_regressed_run_fails_by_path_and_in_memory(at_root):
    # The README's regressed demo run: recall@10 and ndcg@10 overall and
    # hit_rate@3 on identifier-lookup (the command's report says so).
    by_path = rgate.gate(runs={"hybrid": REGRESSED})
    assert (by_path.verdict, by_path.exit_code) == ("fail", 1)
    assert failed(by_path) == [
        ("hybrid", "recall@10", "all"),
        ("hybrid", "ndcg@10", "all"),
        ("hybrid", "hit_rate@3", "identifier-lookup"),
    ]
    in_memory = rgate.gate(runs={"hybrid": read_jsonl_run(DEMO / "runs" / "hybrid-regressed.jsonl")})
    assert failed(in_memory) == failed(by_path)
    assert [c["p_value"] for c in in_memory.checks] == [c["p_value"] for c in by_path.checks]
    assert "FAIL" in by_path.report("markdown")


def test_assert_no_regression_passes_the_demo_and_fails_the_regression(at_root):
    assert assert_no_regression().verdict == "pass"
    with pytest.raises(AssertionError) as info:
        assert_no_regression("config/rgate.yaml", runs={"hybrid": REGRESSED})
    message = str(info.value)
    assert message.startswith("rgate: the gate failed\n")
    assert "hit_rate@3" in message and "identifier-lookup" in message


def test_a_gate_without_config_is_an_rgate_error(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(rgate.RgateError) as info:
        rgate.gate()
    assert info.value.message == "config/rgate.yaml: no config found here or in any parent directory"
    assert info.value.hint.startswith("run `rgate init` to write one")
