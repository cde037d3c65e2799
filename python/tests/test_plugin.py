"""The pytest plugin (entry point pytest11, issue 50): the rgate_gate
fixture and the rgate marker, run in a separate pytest through pytester,
against a copy of the shipped demo."""

import json
import shutil

import pytest

from conftest import ROOT

pytest_plugins = ["pytester"]


@pytest.fixture
def demo(pytester):
    """The demo config and data in pytester's directory."""
    shutil.copytree(ROOT / "config", pytester.path / "config")
    return pytester


def test_the_plugin_is_registered_through_its_entry_point(demo):
    got = demo.runpytest_subprocess("--help")
    out = got.stdout.str()
    assert "--rgate-config" in out and "--rgate-update-baseline" in out
    markers = demo.runpytest_subprocess("--markers").stdout.str()
    assert "@pytest.mark.rgate(config=None, **gate_kwargs)" in markers


def test_a_passing_gate_passes_and_a_regression_fails_with_the_report(demo):
    demo.makepyfile(
        test_gates="""
        import pytest

        @pytest.mark.rgate(config="config/rgate.yaml")
        def test_demo(rgate_gate):
            assert rgate_gate().verdict == "pass"

        def test_regressed(rgate_gate):
            rgate_gate("config/rgate.yaml", runs={"hybrid": "config/demo/runs/hybrid-regressed.jsonl"})
        """
    )
    got = demo.runpytest_subprocess("-p", "no:cacheprovider")
    got.assert_outcomes(passed=1, failed=1)
    out = got.stdout.str()
    assert "rgate: the gate failed" in out
    assert "FAIL hybrid" in out  # the gate's own table report is the message
    # pytrace=False: the failure shows the report, not rgate's frames.
    assert "pytest_plugin.py" not in out and "_api.py" not in out
    # The terminal summary names both gates.
    assert "PASS test_gates.py::test_demo" in out
    assert "FAIL test_gates.py::test_regressed" in out


def test_rgate_config_option_is_a_bare_calls_config(demo):
    demo.makepyfile(test_bare="def test_bare(rgate_gate):\n    assert rgate_gate().verdict == 'pass'\n")
    demo.runpytest_subprocess("--rgate-config", "config/rgate.yaml").assert_outcomes(passed=1)


def test_update_baseline_records_after_a_passing_gate_only(demo):
    stored = demo.path / "config" / "demo" / "baselines" / "bm25.json"
    before = json.loads(stored.read_text())
    demo.makepyfile(
        test_rec="""
        def test_rec(rgate_gate):
            rgate_gate("config/rgate.yaml", runs={"bm25": "config/demo/runs/hybrid.jsonl"})
        """
    )
    # Without the option nothing is written.
    demo.runpytest_subprocess()
    assert json.loads(stored.read_text()) == before
    got = demo.runpytest_subprocess("--rgate-update-baseline")
    after = json.loads(stored.read_text())
    # hybrid's run is better than bm25's: the gate passes and bm25's
    # baseline now holds hybrid's means.
    got.assert_outcomes(passed=1)
    assert after != before
    hybrid = json.loads((demo.path / "config" / "demo" / "baselines" / "hybrid.json").read_text())
    assert after["aggregates"]["all"]["recall@10"] == hybrid["aggregates"]["all"]["recall@10"]
    assert after["aggregates"]["all"]["recall@10"] != before["aggregates"]["all"]["recall@10"]
    assert "baseline recorded for bm25, hybrid, reranked" in got.stdout.str()


def test_update_baseline_refuses_an_in_memory_run(demo):
    demo.makepyfile(
        test_mem="""
        import json

        def test_mem(rgate_gate):
            run = {}
            with open("config/demo/runs/bm25.jsonl") as f:
                for line in f:
                    row = json.loads(line)
                    run[row["query_id"]] = [r["id"] if isinstance(r, dict) else r for r in row["results"]]
            rgate_gate("config/rgate.yaml", runs={"bm25": run})
        """
    )
    got = demo.runpytest_subprocess("--rgate-update-baseline")
    got.assert_outcomes(failed=1)
    assert "the run of `bm25` is in memory" in got.stdout.str()


def test_warnings_point_at_the_callers_line(at_root, recwarn):
    """A warning from assert_no_regression (a run that lacks a gold query)
    names this file, not rgate/testing.py or rgate/_api.py."""
    import warnings

    from conftest import read_jsonl_run
    from rgate.testing import assert_no_regression

    run = read_jsonl_run(ROOT / "config" / "demo" / "runs" / "bm25.jsonl")
    run.pop(sorted(run)[0])
    warnings.simplefilter("always")
    assert_no_regression("config/rgate.yaml", runs={"bm25": run})
    files = {w.filename for w in recwarn.list}
    assert any("gold queries is absent" in str(w.message) for w in recwarn.list), [
        str(w.message) for w in recwarn.list
    ]
    assert files == {__file__}, files
