"""Gating from a test suite: ``assert_no_regression`` fails the test with
the gate's report when the gate fails.

    # tests/test_retrieval.py
    from rgate.testing import assert_no_regression

    def test_retrieval_quality():
        assert_no_regression("rgate.yaml")
"""

from __future__ import annotations

from typing import Any, Optional

from rgate._api import GateOutcome, PathLike, gate


def assert_no_regression(config: Optional[PathLike] = None, **gate_kwargs: Any) -> GateOutcome:
    """Runs :func:`rgate.gate` and raises ``AssertionError`` whose message
    is the gate's table report when the verdict is ``fail``; returns the
    outcome when it passes. ``gate_kwargs`` are :func:`rgate.gate`'s
    (``runs=``, ``candidates=``, ``baseline_ref=``). Errors (a missing
    config, a broken run) raise :class:`rgate.RgateError`, as the gate's
    exit code 2.

    >>> from rgate.testing import assert_no_regression
    >>> assert_no_regression("config/rgate.yaml").verdict   # the demo passes
    'pass'
    """
    __tracebackhide__ = True  # pytest shows the caller's line, not this one
    outcome = gate(config, **gate_kwargs)
    if outcome.verdict != "pass":
        raise AssertionError("rgate: the gate failed\n" + outcome.report("table"))
    return outcome
