"""The `rgate` console script of the wheel: the command line, with its exit
codes, from the library's entry point."""

import pathlib
import shutil
import subprocess
import sys

import rgate

CARGO_VERSION = next(
    line.split('"')[1]
    for line in (pathlib.Path(__file__).resolve().parents[2] / "Cargo.toml").read_text().splitlines()
    if line.startswith("version = ")
)


def run(*args, cwd=None):
    return subprocess.run(["rgate", *args], capture_output=True, text=True, cwd=cwd)


def test_the_console_script_is_the_venvs_and_says_its_version():
    script = shutil.which("rgate")
    assert script is not None and pathlib.Path(script).parent == pathlib.Path(sys.executable).parent
    got = run("--version")
    assert (got.returncode, got.stdout) == (0, f"rgate {CARGO_VERSION}\n")
    assert rgate.__version__ == CARGO_VERSION


def test_exit_codes_pass_regression_error(at_root):
    assert run("gate").returncode == 0
    failed = run("gate", "--run", "hybrid=config/demo/runs/hybrid-regressed.jsonl")
    assert failed.returncode == 1
    assert "FAIL" in failed.stdout
    bad = run("eval", "--gold", "nope.yaml", "--run", "config/demo/runs/bm25.jsonl")
    assert bad.returncode == 2
    assert bad.stderr.startswith("error: nope.yaml: cannot read gold set: ")
    assert "\nhint: " in bad.stderr
    usage = run("--no-such-flag")
    assert usage.returncode == 2 and usage.stdout == ""


def test_python_dash_m_runs_the_same_entry(at_root):
    got = subprocess.run([sys.executable, "-m", "rgate._cli", "--version"], capture_output=True, text=True)
    assert got.stdout == f"rgate {CARGO_VERSION}\n"


def test_python_dash_m_rgate_is_the_command(at_root):
    """`python -m rgate` (issue 50): the package runs as the command, with
    the command's output and exit codes."""
    got = subprocess.run([sys.executable, "-m", "rgate", "--version"], capture_output=True, text=True)
    assert (got.returncode, got.stdout) == (0, f"rgate {CARGO_VERSION}\n")
    failed = subprocess.run(
        [sys.executable, "-m", "rgate", "gate", "--run", "hybrid=config/demo/runs/hybrid-regressed.jsonl"],
        capture_output=True,
        text=True,
    )
    assert failed.returncode == 1 and "FAIL" in failed.stdout
    usage = subprocess.run([sys.executable, "-m", "rgate", "--no-such-flag"], capture_output=True, text=True)
    assert usage.returncode == 2 and usage.stdout == "" and "--no-such-flag" in usage.stderr
