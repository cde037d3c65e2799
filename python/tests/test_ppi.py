"""labels= on evaluate and gate: a gold set with model grades on every query
and people's on a recorded random draw (SPEC "Gating on model labels"). The
values are the command line's (`rgate eval --labels ppi --format json`),
and the PPI mean is checked against the PPI++ formulas written out here
(ppi-python 0.2.3's power-tuned ppi_mean_ci), not against rgate."""

import json
import math
import subprocess

import pytest

import rgate

# One stratum of 14 queries, two chunks each: `a` and `b`. The run ranks
# `a` first, so hit_rate@1 is 1 exactly when `a` is relevant. People say
# `a` is relevant on the queries in PEOPLE_HIT; the model on MODEL_HIT.
# People verified the first 10 (the draw); the last 4 are model-only.
N = 14
VERIFIED = list(range(10))
PEOPLE_HIT = {0, 1, 2, 3, 5, 6, 8}
MODEL_HIT = {0, 1, 2, 3, 4, 5, 6, 9, 10, 11, 12}


def qid(i):
    return f"q{i:02d}"


def write_fixture(d):
    lines = ["version: 1", "queries:"]
    for i in range(N):
        m = 2 if i in MODEL_HIT else 0
        lines += [f"  - id: {qid(i)}", f'    model: {{"{qid(i)}-a": {m}, "{qid(i)}-b": 1}}']
        if i in VERIFIED:
            p = 2 if i in PEOPLE_HIT else 0
            lines += [f'    relevant: {{"{qid(i)}-a": {p}, "{qid(i)}-b": 1}}', "    verified: true"]
    ids = ", ".join(qid(i) for i in VERIFIED)
    lines += ["verify_sample:", "  seed: 7", f"  ids: [{ids}]", "  drawn_at: 2026-12-07T01:00:00Z"]
    (d / "gold.yaml").write_text("\n".join(lines) + "\n")
    run = [json.dumps({"query_id": qid(i), "results": [f"{qid(i)}-a", f"{qid(i)}-b"]}) for i in range(N)]
    (d / "run.jsonl").write_text("\n".join(run) + "\n")
    # Relative names, from `d` as the working directory: reports print the
    # paths as given, so the command line's report matches key for key.
    return "gold.yaml", "run.jsonl"


def ppi_by_hand():
    """PPI++ for the mean (Angelopoulos, Duchi, Zrnic 2023), as ppi-python
    computes it: Y people's values on the verified queries, Yh the model's
    there, Yu the model's on all N (verified included)."""
    y = [1.0 if i in PEOPLE_HIT else 0.0 for i in VERIFIED]
    yh = [1.0 if i in MODEL_HIT else 0.0 for i in VERIFIED]
    yu = [1.0 if i in MODEL_HIT else 0.0 for i in range(N)]
    n, big = len(y), len(yu)

    def mean(v):
        return sum(v) / len(v)

    cov = sum((a - mean(y)) * (b - mean(yh)) for a, b in zip(y, yh)) / n
    pooled = yh + yu
    var = sum((v - mean(pooled)) ** 2 for v in pooled) / (len(pooled) - 1)
    lam = min(1.0, max(0.0, cov / ((1 + n / big) * var)))
    est = lam * mean(yu) + mean([a - lam * b for a, b in zip(y, yh)])
    rect = [a - lam * b for a, b in zip(y, yh)]
    var0 = lambda v: sum((x - mean(v)) ** 2 for x in v) / len(v)  # noqa: E731
    se = math.sqrt(var0([lam * v for v in yu]) / big + var0(rect) / n)
    return est, se, lam


def cli(*args, cwd):
    got = subprocess.run(["rgate", *args], capture_output=True, text=True, cwd=cwd)
    assert got.returncode == 0, got.stderr
    return json.loads(got.stdout)


def test_evaluate_ppi_equals_the_formulas_and_the_command_line(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    gold, run = write_fixture(tmp_path)
    ev = rgate.evaluate(gold, run, ["hit_rate@1"], labels="ppi")
    got = ev.to_dict()
    est, se, lam = ppi_by_hand()
    e = got["ppi"]["hit_rate@1"]["all"]
    assert got["labels"] == "ppi"
    assert (e["n_model"], e["n_verified"], e["people_only_strata"]) == (14, 10, 0)
    assert e["lambda"] == pytest.approx(lam, abs=1e-12)
    assert e["mean"] == pytest.approx(est, abs=1e-12)
    assert e["se"] == pytest.approx(se, abs=1e-12)
    # People alone: 7 of the 10 verified.
    assert e["people_mean"] == pytest.approx(0.7, abs=1e-12)
    assert ev["hit_rate@1"] == pytest.approx(est, abs=1e-12)
    assert got == cli("eval", "--gold", "gold.yaml", "--run", "run.jsonl", "--metrics", "hit_rate@1",
                      "--labels", "ppi", "--format", "json", cwd=tmp_path)


@pytest.mark.parametrize("labels,expected", [("people", 0.7), ("model", 0.7 + 0.0)])
def test_evaluate_people_and_model_labels(tmp_path, monkeypatch, labels, expected):
    monkeypatch.chdir(tmp_path)
    gold, run = write_fixture(tmp_path)
    got = rgate.evaluate(gold, run, ["hit_rate@1"], labels=labels).to_dict()
    if labels == "people":
        # The 10 verified queries, people's labels: 7 hits.
        assert got["queries"] == 10
    else:
        # People's labels where verified (7 hits), the model's on the 4
        # model-only queries (3 hits: q10, q11, q12): 10 of 14.
        expected = 10 / 14
        assert got["queries"] == 14
    assert got["labels"] == labels
    assert got["metrics"]["hit_rate@1"]["all"] == pytest.approx(expected, abs=1e-12)
    assert got == cli("eval", "--gold", "gold.yaml", "--run", "run.jsonl", "--metrics", "hit_rate@1",
                      "--labels", labels, "--format", "json", cwd=tmp_path)


def test_default_labels_are_people(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    gold, run = write_fixture(tmp_path)
    a = rgate.evaluate(gold, run, ["hit_rate@1"]).to_dict()
    b = rgate.evaluate(gold, run, ["hit_rate@1"], labels="people").to_dict()
    assert a == b


def test_unknown_labels_are_an_rgate_error(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    gold, run = write_fixture(tmp_path)
    with pytest.raises(rgate.RgateError) as info:
        rgate.evaluate(gold, run, ["hit_rate@1"], labels="humans")
    assert info.value.message == "unknown labels `humans`: people, model or ppi"
    with pytest.raises(rgate.RgateError):
        rgate.gate("rgate.yaml", labels="humans")


def test_ppi_without_a_recorded_draw_is_refused(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    gold, run = write_fixture(tmp_path)
    text = (tmp_path / gold).read_text()
    (tmp_path / gold).write_text(text[: text.index("verify_sample:")])
    with pytest.raises(rgate.RgateError) as info:
        rgate.evaluate(gold, run, ["hit_rate@1"], labels="ppi")
    assert "verify_sample" in info.value.message
    assert "gold verify-sample" in info.value.hint


def write_config(d, labels=None):
    lines = ["gold: gold.yaml", "baselines: baselines"]
    if labels:
        lines.append(f"labels: {labels}")
    lines += [
        "metrics: [hit_rate@1]",
        "retrievers:",
        "  - name: r",
        "    run: run.jsonl",
        "gate:",
        "  rules:",
        "    - metric: hit_rate@1",
        "      max_drop: 0",
        "      strata: overall",
    ]
    (d / "rgate.yaml").write_text("\n".join(lines) + "\n")


def test_gate_labels_overrides_the_config_and_equals_the_command_line(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write_fixture(tmp_path)
    write_config(tmp_path, "ppi")
    got = subprocess.run(["rgate", "--config", "rgate.yaml", "baseline", "update", "--note", "t"],
                         capture_output=True, text=True, cwd=tmp_path)
    assert got.returncode == 0, got.stderr
    from_config = rgate.gate("rgate.yaml")
    assert from_config.verdict == "pass"
    [check] = from_config.checks
    # An unchanged run: every per-query delta is 0.
    assert check["ppi"]["mean"] == 0 and check["ppi"]["n_verified"] == 10
    command = cli("--config", "rgate.yaml", "--format", "json", "gate", cwd=tmp_path)
    assert json.loads(from_config.report("json")) == command
    # labels= replaces the config's key, as --labels does.
    write_config(tmp_path)
    by_argument = rgate.gate("rgate.yaml", labels="ppi")
    assert json.loads(by_argument.report("json")) == command
    people = rgate.gate("rgate.yaml", labels="people")
    assert "ppi" not in people.checks[0]


def test_compare_labels_equal_the_command_line(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    gold, run = write_fixture(tmp_path)
    # The variant ranks `b` first: a hit at 1 only where `b` is relevant
    # (every query, both label sets), so its delta is 1 - base per query.
    lines = [json.dumps({"query_id": qid(i), "results": [f"{qid(i)}-b", f"{qid(i)}-a"]}) for i in range(N)]
    (tmp_path / "b.jsonl").write_text("\n".join(lines) + "\n")
    for labels in ("people", "model", "ppi"):
        got = rgate.compare(gold, {"base": run, "b": "b.jsonl"}, ["hit_rate@1"], labels=labels).to_dict()
        assert got == cli("compare", "--gold", gold, "--metrics", "hit_rate@1", "--labels", labels,
                          "--format", "json", f"base={run}", "b=b.jsonl", cwd=tmp_path)
    est, _, _ = ppi_by_hand()
    # Under ppi the baseline's mean is the PPI estimate of hit_rate@1 (the
    # variant's is 1 on every query, by both label sets).
    assert got["baseline_run"]["means"]["hit_rate@1"] == pytest.approx(est, abs=1e-9)


class _LooksLikePpi:
    """An object whose str() is "ppi": not a label mode."""

    def __str__(self):
        return "ppi"


class _StrSubclass(str):
    pass


@pytest.mark.parametrize("value", [_LooksLikePpi(), _StrSubclass("ppi"), b"ppi", 1, ["ppi"]])
def test_labels_are_only_the_three_strings(tmp_path, monkeypatch, value):
    # As the command line's --labels: only the str "people", "model" or
    # "ppi"; a look-alike is refused without its __str__ being trusted.
    monkeypatch.chdir(tmp_path)
    gold, run = write_fixture(tmp_path)
    with pytest.raises(rgate.RgateError) as info:
        rgate.evaluate(gold, run, ["hit_rate@1"], labels=value)
    assert info.value.message.startswith("labels is a str (people, model or ppi), not ")
    with pytest.raises(rgate.RgateError):
        rgate.gate("rgate.yaml", labels=value)
    with pytest.raises(rgate.RgateError):
        rgate.compare(gold, {"a": run, "b": run}, ["hit_rate@1"], labels=value)


def test_a_huge_bad_labels_value_is_not_echoed(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    gold, run = write_fixture(tmp_path)
    huge = "x" * 1_000_000
    with pytest.raises(rgate.RgateError) as info:
        rgate.evaluate(gold, run, ["hit_rate@1"], labels=huge)
    msg = str(info.value)
    assert len(msg) < 400, len(msg)
    assert "(1000000 characters)" in msg
    assert info.value.message.startswith("unknown labels `" + "x" * 200 + "…")
