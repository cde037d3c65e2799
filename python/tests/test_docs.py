"""Every docstring's example runs (from the repository's root, where the
gate's examples find the demo config), and the stubs ship."""

import doctest
import importlib
import pathlib

import pytest

import rgate

MODULES = ["rgate", "rgate._api", "rgate._errors", "rgate.testing"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name, at_root):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
    # Each public function's docstring holds an example.
    assert result.attempted > 0


def test_type_stubs_and_the_typed_marker_are_installed():
    package = pathlib.Path(rgate.__file__).parent
    assert (package / "py.typed").is_file()
    assert (package / "_rgate.pyi").is_file()
    for f in (rgate.evaluate, rgate.compare, rgate.gate):
        assert ">>> " in f.__doc__


def test_the_readmes_notebook_example_runs():
    """The README's Series-strata example (issue 50), as doctest runs it."""
    pytest.importorskip("pandas")
    readme = (pathlib.Path(__file__).resolve().parents[2] / "README.md").read_text()
    start = readme.index(">>> import pandas as pd, rgate")
    block = readme[start : readme.index("```", start)]
    test = doctest.DocTestParser().get_doctest(block, {}, "README notebook example", "README.md", 0)
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    runner.run(test)
    assert runner.failures == 0 and runner.tries == 6
