#!/usr/bin/env python3
"""A gold set with a model's grades and a verified random sample, a run, and
what `rgate eval --labels ppi` must print for them, computed here without
rgate: per-query recall@10 and hit_rate@10 by their definitions, then
ppi-python 0.2.3 (`pip install ppi-python==0.2.3`) on those values.

One stratum of 60 queries, each with 3 pooled chunks; the model grades every
pooled chunk (a 20% chance of flipping each person's grade), 20 queries are
drawn and verified. ppi-python is given Y = people's values on the verified
queries, Yhat = the model's on the same, Yhat_unlabeled = the model's on all
60 (rgate's layout, src/stats/ppi.rs). A second stratum of 12 people-only
queries checks the combination: micro weights 60/72 and 12/72, the
people-only part a classical mean (se = sd0 / sqrt(n)).

Run from the repository root:

    python3 scripts/ppi_labels_fixture.py tests/fixtures/ppi/labels
"""

import json
import sys
from importlib.metadata import version
from pathlib import Path

import numpy as np
from ppi_py import classical_mean_ci, ppi_mean_ci, ppi_mean_pointestimate

assert version("ppi-python").startswith("0.2."), version("ppi-python")

out = Path(sys.argv[1])
rng = np.random.default_rng(20261207)
N, n, P = 60, 20, 12
queries, run = [], []
model_vals = {"recall@10": [], "hit_rate@10": []}
people_vals = {"recall@10": {}, "hit_rate@10": {}}
only_vals = {"recall@10": [], "hit_rate@10": []}


def metrics(relevant, ranked):
    top = ranked[:10]
    rel = [c for c, g in relevant.items() if g >= 1]
    hits = sum(1 for c in rel if c in top)
    recall = hits / len(rel) if rel else 0.0
    return {"recall@10": recall, "hit_rate@10": 1.0 if hits else 0.0}


drawn = sorted(rng.choice(N, size=n, replace=False).tolist())
for i in range(N + P):
    qid = f"q{i:03d}"
    pool = [f"c{i}-{k}" for k in range(3)]
    people = {c: int(rng.random() < 0.5) for c in pool}
    if not any(people.values()):
        people[pool[0]] = 1
    # The run: 10 distractors and the pooled chunks at random ranks in 1..20.
    ranked = [f"x{i}-{k}" for k in range(17)]
    for c in pool:
        ranked.insert(int(rng.integers(0, len(ranked) + 1)), c)
    run.append({"query_id": qid, "results": [{"id": c, "score": float(100 - r)} for r, c in enumerate(ranked)]})
    if i >= N:
        queries.append({"id": qid, "stratum": "people", "relevant": people})
        for m, v in metrics(people, ranked).items():
            only_vals[m].append(v)
        continue
    model = {c: (1 - g if rng.random() < 0.2 else g) for c, g in people.items()}
    q = {"id": qid, "stratum": "judged", "model": model}
    for m, v in metrics(model, ranked).items():
        model_vals[m].append(v)
    if i in drawn:
        q["relevant"] = people
        q["verified"] = True
        for m, v in metrics(people, ranked).items():
            people_vals[m][i] = v
    queries.append(q)

ids = [f"q{i:03d}" for i in drawn]
gold = {"queries": queries, "verify_sample": {"seed": 7, "ids": ids, "drawn_at": "2026-12-07T00:00:00Z"}}
(out / "gold.json").write_text(json.dumps(gold, indent=1) + "\n")
(out / "run.jsonl").write_text("".join(json.dumps(r) + "\n" for r in run))

expected = {}
for m in ["recall@10", "hit_rate@10"]:
    yu = np.array(model_vals[m])
    yh = yu[drawn]
    y = np.array([people_vals[m][i] for i in drawn])
    mean = float(ppi_mean_pointestimate(y, yh, yu, lam=None)[0])
    lo, hi = (float(x[0]) for x in ppi_mean_ci(y, yh, yu, alpha=0.05, lam=None))
    plo, phi = (float(x) for x in classical_mean_ci(y, alpha=0.05))
    # The people-only stratum: a classical mean of its 12 values.
    po = np.array(only_vals[m])
    se_ppi = (hi - lo) / 2 / 1.959963984540054
    se_po = po.std() / np.sqrt(P)
    w1, w2 = N / (N + P), P / (N + P)
    expected[m] = {
        "judged": {"mean": mean, "ci_low": lo, "ci_high": hi, "people_ci_low": plo, "people_ci_high": phi},
        "people": {"mean": float(po.mean()), "se": float(se_po)},
        "all": {"mean": w1 * mean + w2 * float(po.mean()), "se": float(np.sqrt(w1**2 * se_ppi**2 + w2**2 * se_po**2))},
    }
(out / "expected.json").write_text(json.dumps(expected, indent=1) + "\n")
