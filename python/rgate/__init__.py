"""rgate: a regression gate for retrieval quality, in process.

``evaluate`` (trec_eval's measures, exactly), ``compare`` (A/B with paired
significance tests) and ``gate`` (the CI verdict against stored baselines)
run the same Rust code as the ``rgate`` command, on paths or on the dicts
and DataFrames Python users hold; ``rgate.testing.assert_no_regression``
gates from a pytest test. Errors raise :class:`RgateError` (a
``ValueError``) with the command's message and hint; warnings go through
:mod:`warnings` as :class:`RgateWarning`; nothing is printed.

>>> import rgate
>>> rgate.evaluate({"q1": {"d1": 1}}, {"q1": ["d0", "d1"]}, "recall@1,rr")["rr"]
0.5
"""

import os as _os

from rgate import _rgate
from rgate._errors import RgateError, RgateWarning

# The native module keeps a thread pool between calls; it must not cross a
# fork, whose child would wait for threads it lacks (python/src/work.rs).
if hasattr(_os, "register_at_fork"):
    _os.register_at_fork(before=_rgate._before_fork)

# typing's own TYPE_CHECKING costs an import of typing (7 ms) on every
# command; type checkers read a module-level `TYPE_CHECKING = False` alike.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from rgate._api import Comparison, Evaluation, GateOutcome, compare, evaluate, gate

__version__: str = _rgate.__version__

_API = {"Comparison", "Evaluation", "GateOutcome", "compare", "evaluate", "gate"}


def __getattr__(name: str) -> "object":
    # The API (and json, copy, warnings with it) is imported on first use:
    # the `rgate` console script imports this package and needs none of it,
    # and every import is start-up time of every command (README, "From
    # Python").
    if name in _API:
        from rgate import _api

        return getattr(_api, name)
    raise AttributeError(f"module 'rgate' has no attribute {name!r}")


def __dir__() -> "list[str]":
    return sorted(set(globals()) | _API)

__all__ = [
    "Comparison",
    "Evaluation",
    "GateOutcome",
    "RgateError",
    "RgateWarning",
    "compare",
    "evaluate",
    "gate",
    "__version__",
]
