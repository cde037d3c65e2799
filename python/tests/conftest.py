"""The pytest suite of the Python module, run by .ci/run against the wheel
installed in a fresh venv (not against the source tree: `import rgate`
must find the installed package, native module included)."""

import json
import os
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
TREC = ROOT / "tests" / "fixtures" / "trec_eval"
DEMO = ROOT / "config" / "demo"


@pytest.fixture
def at_root(monkeypatch):
    """The repository's root as the working directory: the demo config's
    relative paths resolve there, as the README's commands do."""
    monkeypatch.chdir(ROOT)
    return ROOT


def read_qrels(path):
    out = {}
    for line in pathlib.Path(path).read_text().splitlines():
        if line.strip():
            q, _, d, g = line.split()
            out.setdefault(q, {})[d] = int(g)
    return out


def read_trec_run(path):
    out = {}
    for line in pathlib.Path(path).read_text().splitlines():
        if line.strip():
            q, _, d, _, s, _ = line.split()
            out.setdefault(q, {})[d] = float(s)
    return out


def read_jsonl_run(path):
    """A demo run as ranked lists, best first."""
    out = {}
    for line in pathlib.Path(path).read_text().splitlines():
        if line.strip():
            row = json.loads(line)
            out[row["query_id"]] = [r["id"] if isinstance(r, dict) else r for r in row["results"]]
    return out
