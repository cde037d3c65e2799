# Stubs of the native half (python/src/lib.rs). The public API is typed in
# the Python modules themselves; these are what they call.
from typing import Any, List, Optional, Sequence, Tuple

_Shape = tuple

__version__: str

def evaluate(
    gold: _Shape,
    strata: Optional[Sequence[Tuple[str, str]]],
    run: _Shape,
    metrics: Sequence[str],
    per_query: bool,
    relevance_level: Any,
    by_stratum: bool,
    labels: str,
) -> Tuple[str, str, List[str]]: ...
def compare(
    gold: _Shape,
    strata: Optional[Sequence[Tuple[str, str]]],
    runs: Sequence[Tuple[str, _Shape]],
    metrics: Sequence[str],
    test: str,
    resamples: Any,
    seed: Any,
    alternative: str,
    alpha: Any,
    relevance_level: Any,
    by_stratum: bool,
    correction: str,
    labels: str,
) -> Tuple[str, str, List[str]]: ...

class GateReport:
    def render(self, format: str) -> str: ...
    def exit_code(self) -> int: ...

def gate(
    config: Optional[str],
    runs: Sequence[Tuple[str, _Shape]],
    candidates: Sequence[Tuple[str, _Shape]],
    baseline_ref: Optional[str],
    labels: Optional[str],
) -> GateReport: ...
def main(args: Sequence[str]) -> int: ...
def _panic_on_purpose(where: str) -> None: ...
def _before_fork() -> None: ...
