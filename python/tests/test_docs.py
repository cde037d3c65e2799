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
