"""The module's types as a typed codebase meets them (issue 50): pyright's
completeness score of the public API, and mypy --strict on a user's typed
script, so neither can regress unseen. pyright comes from npm (.ci/run
installs it; RGATE_PYRIGHT or PATH finds it), mypy from PyPI."""

import json
import os
import pathlib
import shutil
import subprocess
import sys
import textwrap

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def pyright() -> str:
    found = os.environ.get("RGATE_PYRIGHT") or shutil.which("pyright")
    local = ROOT / ".ci" / "node" / "node_modules" / ".bin" / "pyright"
    if not found and local.exists():
        found = str(local)
    if not found:
        pytest.skip("pyright is not installed (npm install pyright; .ci/run installs it)")
    return found


def test_pyright_finds_the_public_api_typed(tmp_path):
    got = subprocess.run(
        [pyright(), "--verifytypes", "rgate", "--ignoreexternal", "--outputjson", "--pythonpath", sys.executable],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    report = json.loads(got.stdout)
    completeness = report["typeCompleteness"]
    score = completeness["completenessScore"]
    unknown = [
        s["name"]
        for s in completeness["symbols"]
        if s.get("isExported") and not s.get("isTypeKnown", True)
    ]
    assert score >= 0.95, (score, unknown[:20])


USER_SCRIPT = '''
    from __future__ import annotations

    from typing import Any, Dict, List

    import pytest
    import rgate
    from rgate.testing import assert_no_regression


    def scores(qrels: Dict[str, Dict[str, int]], run: Dict[str, List[str]]) -> float:
        ev: rgate.Evaluation = rgate.evaluate(qrels, run, ("rr", "ndcg@10"), per_query=True)
        df = ev.to_pandas()
        print(df.shape, ev.per_query, ev.metrics, ev.warnings, ev.to_dict())
        html: str = ev._repr_html_()
        print(html)
        return ev["rr"]


    def compared(qrels: Dict[str, Dict[str, int]], a: Dict[str, List[str]], b: Dict[str, List[str]]) -> int:
        cmp = rgate.compare(qrels, {"a": a, "b": b}, "rr", test="t-test", alpha=0.01)
        frame = cmp.to_pandas(names="rgate")
        rows: List[Dict[str, Any]] = cmp.checks
        means: Dict[str, Dict[str, float]] = cmp.means
        return len(frame) + len(rows) + len(means)


    def gated() -> str:
        outcome = rgate.gate("config/rgate.yaml", runs={"bm25": "config/demo/runs/bm25.jsonl"})
        code: int = outcome.exit_code
        text: str = outcome.report("markdown")
        print(code, text, outcome.checks, outcome.flips, outcome.warnings, outcome.to_pandas())
        assert_no_regression("config/rgate.yaml")
        return outcome.verdict


    def caught() -> str:
        try:
            rgate.evaluate({"q": {"d": 1}}, {"q": ["d"]}, "no-such-metric")
        except rgate.RgateError as e:
            return e.message + (e.hint or "")
        return rgate.__version__


    @pytest.mark.rgate(config="config/rgate.yaml")
    def test_gate(rgate_gate: Any) -> None:
        outcome: rgate.GateOutcome = rgate_gate()
        assert outcome.verdict == "pass"
'''


def test_mypy_strict_on_a_typed_user_script_reports_nothing(tmp_path):
    pytest.importorskip("mypy")
    script = tmp_path / "user.py"
    script.write_text(textwrap.dedent(USER_SCRIPT))
    got = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--cache-dir", os.devnull, str(script)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert got.returncode == 0, got.stdout + got.stderr
    assert "Success" in got.stdout
