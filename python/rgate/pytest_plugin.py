"""rgate's pytest plugin (entry point ``pytest11``): gate a retriever from a
test suite, the way ``pytest-benchmark`` and ``syrupy`` plug into one.

    # tests/test_retrieval.py
    import pytest

    @pytest.mark.rgate(config="rgate.yaml")
    def test_retrieval_quality(rgate_gate):
        outcome = rgate_gate()           # fails the test when the gate fails
        assert outcome.checks

    def test_new_reranker(rgate_gate):
        rgate_gate("rgate.yaml", runs={"reranked": "runs/candidate.jsonl"})

Options: ``--rgate-config PATH`` is the config a bare ``rgate_gate()``
uses (else the marker's, else ``rgate.yaml`` found as the command finds
it); ``--rgate-update-baseline`` records the gated retrievers' runs as their
new baselines after a gate that passes (``rgate baseline update``; a gate
that fails still fails the test, and accepting a regression stays a
reviewed command with ``--allow-regression --note``). The terminal summary
lists each gate the session ran.
"""

from __future__ import annotations

import os
from typing import Any, Callable, Dict, List, Optional, Tuple

import pytest

from rgate._api import GateOutcome, PathLike, gate

_RESULTS = pytest.StashKey[List[Tuple[str, str, str]]]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("rgate", "rgate: retrieval regression gate")
    group.addoption(
        "--rgate-config",
        action="store",
        default=None,
        metavar="PATH",
        help="the rgate config a bare rgate_gate() gates with",
    )
    group.addoption(
        "--rgate-update-baseline",
        action="store_true",
        default=False,
        help="record the gated retrievers' runs as new baselines when the gate passes",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "rgate(config=None, **gate_kwargs): the rgate config and rgate.gate() arguments "
        "the rgate_gate fixture uses in this test",
    )
    config.stash[_RESULTS] = []


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    results = config.stash.get(_RESULTS, [])
    if not results:
        return
    terminalreporter.section("rgate")
    for nodeid, verdict, what in results:
        terminalreporter.write_line(f"{verdict.upper():4} {nodeid}: {what}")


def _record(config: Optional[PathLike], names: List[str], kwargs: Dict[str, Any]) -> str:
    """``rgate baseline update NAME...`` through the command line's own
    entry point: the same refusals, lock and atomic write as the command.
    A run given to the gate in place of the configured one is recorded too
    (``--run NAME=PATH``); an in-memory run has no file to record."""
    from rgate import _rgate

    args = ["rgate", "baseline", "update", *names]
    if config is not None:
        args += ["--config", os.fspath(config)]
    for flag, key in (("--run", "runs"), ("--candidates", "candidates")):
        for name, run in (kwargs.get(key) or {}).items():
            if not isinstance(run, (str, os.PathLike)):
                pytest.fail(
                    f"--rgate-update-baseline: the {key[:-1]} of `{name}` is in memory; "
                    "a baseline is recorded from a file (pass a path, or run `rgate baseline update`)",
                    pytrace=False,
                )
            args += [flag, f"{name}={os.fspath(run)}"]
    if kwargs.get("baseline_ref") is not None or kwargs.get("labels") is not None:
        pytest.fail(
            "--rgate-update-baseline records with the config's labels against the working tree's baselines; "
            "drop baseline_ref=/labels= from this gate or record with `rgate baseline update`",
            pytrace=False,
        )
    code = _rgate.main(args)
    if code != 0:
        pytest.fail(f"rgate baseline update {' '.join(names)} exited {code} (its message is above)", pytrace=False)
    return f"baseline recorded for {', '.join(names)}"


@pytest.fixture
def rgate_gate(request: pytest.FixtureRequest) -> Callable[..., GateOutcome]:
    """A function that runs :func:`rgate.gate` and fails the test, with the
    gate's table report as the message, when the verdict is ``fail``;
    otherwise it returns the :class:`rgate.GateOutcome`. Arguments default
    to the test's ``@pytest.mark.rgate(...)``, then ``--rgate-config``."""
    marker = request.node.get_closest_marker("rgate")
    defaults: Dict[str, Any] = {}
    if marker is not None:
        if marker.args:
            defaults["config"] = marker.args[0]
        defaults.update(marker.kwargs)
    option = request.config.getoption("--rgate-config")
    if option is not None and "config" not in defaults:
        defaults["config"] = option
    results = request.config.stash[_RESULTS]
    update = request.config.getoption("--rgate-update-baseline")

    def run(config: Optional[PathLike] = None, **gate_kwargs: Any) -> GateOutcome:
        __tracebackhide__ = True  # noqa: F841 (read by pytest)
        kwargs = {**defaults, **gate_kwargs}
        cfg = config if config is not None else kwargs.pop("config", None)
        kwargs.pop("config", None)
        outcome = gate(cfg, **kwargs)
        names = [r["name"] for r in outcome.to_dict()["retrievers"]]
        what = f"{len(names)} retriever(s) gated"
        if outcome.verdict != "pass":
            results.append((request.node.nodeid, outcome.verdict, what))
            pytest.fail("rgate: the gate failed\n" + outcome.report("table"), pytrace=False)
        if update and names:
            what = _record(cfg, names, kwargs)
        results.append((request.node.nodeid, outcome.verdict, what))
        return outcome

    return run
