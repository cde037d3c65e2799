#!/usr/bin/env python3
"""PPI through the binary: do `rgate eval --labels ppi` intervals cover the
true mean, and does `rgate gate` under `labels: ppi` keep its false-alarm
rate and catch more real drops than `labels: people`? Issue 40's "done
when", measured from outside (SPEC "Gating on model labels (prediction-
powered inference)").

Every trial draws a world, writes it into a temporary directory as a native
YAML gold set and JSONL runs, and drives `--bin`:

- the gold set: every query carries the model's grade of every pooled pair
  (`model: {chunk: grade}`); the queries of a uniform random draw per
  stratum carry people's grades too (`relevant:` + `verified: true`), and
  the draw is recorded (`verify_sample: {seed, ids, drawn_at}`). People's
  grades are the truth; the model's have false positives and false
  negatives per pair.
- (a) `rgate eval --labels ppi --format json` and `--labels model`: the 95%
  interval of the mean recall@10 against the true mean (all queries scored
  with true labels), overall and per stratum; the people-only interval
  rgate prints beside PPI's; PPI narrower than people-only; the model-only
  mean's error and its interval's coverage.
- (b) a baseline recorded with `rgate baseline update` from the baseline
  run, then `rgate gate --run r=CURRENT` with one rule
  `{metric: recall@10, max_drop: 0, strata: overall}`, once with
  `labels: ppi` and once with `labels: people` (people's labels exist only
  on the verified queries) on the same world and the same draw, for two
  current runs: (i) an unchanged re-run (a share of the queries re-draw
  their ranking from the same distribution, nothing changes on average):
  the false-alarm rate, which must be <= alpha; (ii) a real drop (each
  relevant chunk in the top 10 leaves it with probability --drop, on top of
  the same re-run noise): the catch rate.

Worlds (`--worlds`, comma-separated):

  typical   four strata of 5-200 queries (uniform), a pool of 20 chunks with
            1-4 relevant, a judge with 15% false positives and 5% false
            negatives per pair, 15% of each stratum verified and at least
            10 (a stratum of fewer than 10 queries is verified in full and
            is people-only by the SPEC's rule), 10% of queries re-drawn in
            the re-run, drop 0.06 per relevant chunk
  useless   the same world and a near-useless judge (45% false positives,
            40% false negatives): lambda near 0, PPI ~ people-only
  moving    the judge's bias moves with the retriever (issue 48, item 6):
            one stratum of 150-250 queries, a pool of 20 chunks with 1-4
            relevant, 4 of the other chunks "near misses" that the judge
            calls relevant 60% of the time (the rest 10% false positives,
            5% false negatives); the current retriever (the re-run and the
            drop run) puts a near miss from below rank 10 in place of each
            other non-relevant chunk of its top 10 with probability 0.5, on
            every query: people's labels see no change from that, the
            model's see a rise on most queries; 10% of queries re-drawn,
            drop 0.08 per relevant chunk, 15% verified
  fixed     the same judge and world, the near misses where they were: a
            bias that does not move
  sparse    heavy tails: five strata of 5-200 queries (log-uniform), a pool
            of 30 with 1-12 relevant (Zipf-like), per-query retrieval
            quality from Beta(0.6, 0.4), 5% of queries re-drawn, 15%
            verified (at least 10), but in the last stratum only 6 (its
            other queries model-only): people-only by the SPEC's rule

The script computes the PPI++ estimate again in numpy (ppi-python 0.2.3's
power-tuned `ppi_mean_ci` formulas, with all model-graded queries as the
unlabeled set, as src/stats/ppi.rs documents) and counts how often rgate's
`ppi.recall@10.all` equals it to 1e-6. It reads the JSON defensively: a key
of the contract that is missing stops the run with the key's path.

Rates come with 95% Wilson intervals.

    python3 scripts/ppi_gate_sim.py --bin target/release/rgate [--trials 300]
        [--worlds typical,useless,sparse] [--seed 1] [--alpha 0.05]
        [--parts eval,gate] [--people-tests t-test] [--json out.json]
        [--write-world DIR] [--people-only]

`--people-tests t-test` gates `labels: people` with `gate.test: t-test` too:
the normal-theory test on the verified queries alone, the like-for-like
comparison for PPI's normal test (the default sign-flip test is exact and
more conservative on sparse deltas). `--people-only` runs the people half
on a binary without `--labels`.
"""

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

Z95 = 1.959963984540054
DEPTH = 10
MIN_VERIFIED = 10
METRIC = "recall@10"

WORLDS = {
    "typical": {
        "strata": [("lookup", 0.85, [0.6, 0.3, 0.1, 0.0]), ("how-to", 0.65, [0.3, 0.4, 0.2, 0.1]),
                   ("multi-hop", 0.45, [0.0, 0.3, 0.4, 0.3]), ("misc", 0.70, [0.4, 0.3, 0.2, 0.1])],
        "sizes": "uniform", "pool": 20, "fp": 0.15, "fn": 0.05,
        "fraction": 0.15, "floor": MIN_VERIFIED, "churn": 0.10, "drop": 0.06, "beta": None,
    },
    "useless": {
        "strata": [("lookup", 0.85, [0.6, 0.3, 0.1, 0.0]), ("how-to", 0.65, [0.3, 0.4, 0.2, 0.1]),
                   ("multi-hop", 0.45, [0.0, 0.3, 0.4, 0.3]), ("misc", 0.70, [0.4, 0.3, 0.2, 0.1])],
        "sizes": "uniform", "pool": 20, "fp": 0.45, "fn": 0.40,
        "fraction": 0.15, "floor": MIN_VERIFIED, "churn": 0.10, "drop": 0.06, "beta": None,
    },
    "sparse": {
        # p_top is unused: each query draws its own from Beta(0.6, 0.4).
        # The last stratum's team verified only 6 queries (or all, if
        # fewer): people-only by the SPEC's rule, model-only queries beside.
        "strata": [("head", None, "zipf"), ("tail-a", None, "zipf"), ("tail-b", None, "zipf"),
                   ("tail-c", None, "zipf"), ("tail-d", None, "zipf", 6)],
        "sizes": "log", "pool": 30, "fp": 0.15, "fn": 0.05,
        "fraction": 0.15, "floor": MIN_VERIFIED, "churn": 0.05, "drop": 0.06, "beta": (0.6, 0.4),
    },
    "moving": {
        "strata": [("all-queries", 0.7, [0.3, 0.4, 0.2, 0.1])],
        "sizes": "big", "pool": 20, "fp": 0.10, "fn": 0.05, "near": 4, "fp_near": 0.6, "shift": 0.5,
        "fraction": 0.15, "floor": MIN_VERIFIED, "churn": 0.10, "drop": 0.08, "beta": None,
    },
    "fixed": {
        "strata": [("all-queries", 0.7, [0.3, 0.4, 0.2, 0.1])],
        "sizes": "big", "pool": 20, "fp": 0.10, "fn": 0.05, "near": 4, "fp_near": 0.6, "shift": 0.0,
        "fraction": 0.15, "floor": MIN_VERIFIED, "churn": 0.10, "drop": 0.08, "beta": None,
    },
}


def wilson(k, n, z=Z95):
    if n == 0:
        return (float("nan"), float("nan"))
    p = k / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return (c - h, c + h)


def rate(k, n):
    if n == 0:
        return "n/a (0 trials)"
    lo, hi = wilson(k, n)
    return "%.3f [%.3f, %.3f] (%d/%d)" % (k / n, lo, hi, k, n)


def rate_obj(k, n):
    lo, hi = wilson(k, n)
    return {"k": int(k), "n": int(n), "rate": k / n if n else None, "wilson95": [lo, hi]}


# ---------------------------------------------------------------- the world


class Stratum:
    """One stratum's queries: true and model relevance per pooled chunk, and
    three rankings of the pool per query (baseline, unchanged re-run, drop).
    Rankings are permutations of the pool's chunk indices."""

    def __init__(self, name, truth, model, base, same, drop, verified):
        self.name = name
        self.truth = truth          # (N, pool) 0/1
        self.model = model          # (N, pool) 0/1
        self.base = base            # (N, pool) chunk index by rank
        self.same = same
        self.drop = drop
        self.verified = verified    # sorted query indices


def n_relevant(rng, spec, size, pool):
    if spec == "zipf":
        # P(k) ~ k^-1.6 on 1..12: mostly one relevant chunk, a long tail.
        ks = np.arange(1, 13)
        p = ks ** -1.6
        return rng.choice(ks, size=size, p=p / p.sum())
    return rng.choice([1, 2, 3, 4], size=size, p=spec)


def weighted_order(rng, items, weight):
    """`items` in a random order where item i comes earlier the larger its
    weight (sampling without replacement, by exponential keys)."""
    if len(items) == 0:
        return items
    keys = rng.exponential(size=len(items)) / weight
    return items[np.argsort(keys)]


def draw_ranking(rng, rel, p_top, pool, near=None, pref=1.0):
    """A ranking of the pool: each relevant chunk in the top 10 with p_top,
    the rest of the top 10 non-relevant chunks at random (near misses
    `pref` times as readily as the others), both parts in a random
    order."""
    idx = np.arange(pool)
    rel_idx = idx[rel]
    non = idx[~rel]
    inside = rel_idx[rng.random(len(rel_idx)) < p_top]
    outside_rel = np.setdiff1d(rel_idx, inside)
    if near is None or pref == 1.0:
        non = rng.permutation(non)
    else:
        non = weighted_order(rng, non, np.where(near[non], pref, 1.0))
    fill = DEPTH - len(inside)
    top = rng.permutation(np.concatenate([inside, non[:fill]]))
    rest = rng.permutation(np.concatenate([outside_rel, non[fill:]]))
    return np.concatenate([top, rest]).astype(int)


def apply_drop(rng, ranking, rel, d, near=None, pref=1.0):
    """Each relevant chunk in the top 10 leaves it with probability d: it
    swaps places with a non-relevant chunk below rank 10 (a near miss
    `pref` times as readily)."""
    r = ranking.copy()
    below = np.array([i for i in range(DEPTH, len(r)) if not rel[r[i]]], dtype=int)
    if near is None or pref == 1.0:
        below = list(rng.permutation(below))
    else:
        below = list(weighted_order(rng, below, np.where(near[r[below]], pref, 1.0))[::-1])
    for i in range(DEPTH):
        if rel[r[i]] and below and rng.random() < d:
            j = below.pop()
            r[i], r[j] = r[j], r[i]
    return r


def shift_near(rng, ranking, rel, near, p):
    """Each non-relevant chunk of the top 10 that is not a near miss gives
    its place to a near miss from below rank 10 with probability p: the
    relevant chunks stay where they are (people see no change), the
    model's over-graded near misses come up."""
    r = ranking.copy()
    below = [i for i in range(DEPTH, len(r)) if near[r[i]]]
    rng.shuffle(below)
    for i in range(DEPTH):
        c = r[i]
        if not rel[c] and not near[c] and below and rng.random() < p:
            j = below.pop()
            r[i], r[j] = r[j], r[i]
    return r


def stratum_size(rng, how):
    if how == "uniform":
        return int(rng.integers(5, 201))
    if how == "big":
        return int(rng.integers(150, 251))
    return int(round(math.exp(rng.uniform(math.log(5), math.log(200)))))


def draw_world(rng, w):
    pool = w["pool"]
    out = []
    for name, p_top, rel_spec, *cap in w["strata"]:
        size = stratum_size(rng, w["sizes"])
        k = n_relevant(rng, rel_spec, size, pool)
        truth = (np.arange(pool)[None, :] < k[:, None])
        # Chunk order within the pool is irrelevant to the metric; shuffle
        # so chunk ids say nothing about relevance.
        for q in range(size):
            truth[q] = rng.permutation(truth[q])
        u = rng.random((size, pool))
        # Near misses: non-relevant chunks the judge over-grades.
        near = np.zeros((size, pool), dtype=bool)
        for q in range(w.get("near", 0) and size):
            non = np.flatnonzero(~truth[q])
            near[q, rng.choice(non, size=min(w["near"], len(non)), replace=False)] = True
        fp = np.where(near, w.get("fp_near", w["fp"]), w["fp"])
        model = np.where(truth, u >= w["fn"], u < fp)
        shift = w.get("shift", 0.0)
        base = np.empty((size, pool), dtype=int)
        same = np.empty_like(base)
        drop = np.empty_like(base)
        for q in range(size):
            pt = p_top if w["beta"] is None else rng.beta(*w["beta"])
            base[q] = draw_ranking(rng, truth[q], pt, pool)
            same[q] = draw_ranking(rng, truth[q], pt, pool) if rng.random() < w["churn"] else base[q]
            if shift > 0:
                same[q] = shift_near(rng, same[q], truth[q], near[q], shift)
            drop[q] = apply_drop(rng, same[q], truth[q], w["drop"])
        n = min(size, max(w["floor"], math.ceil(w["fraction"] * size)), *cap)
        verified = np.sort(rng.choice(size, size=n, replace=False))
        out.append(Stratum(name, truth.astype(int), model.astype(int), base, same, drop, verified))
    return out


def recall(labels, ranking):
    """recall@10 per query with 0/1 `labels`; 0 when nothing is relevant
    (rgate keeps such a query in the averages at 0, and warns)."""
    n = labels.shape[0]
    top = ranking[:, :DEPTH]
    found = labels[np.arange(n)[:, None], top].sum(axis=1)
    total = labels.sum(axis=1)
    return np.where(total > 0, found / np.maximum(total, 1), 0.0)


# ---------------------------------------------------------------- files


def qid(s, q):
    return "%s-%03d" % (s.name, q)


def chunk(s, q, c):
    return "%s-%03d/c%02d" % (s.name, q, c)


def gold_yaml(world, seed, people_only=False):
    """Native YAML gold set. `people_only`: only the verified queries, with
    their people's labels and nothing of the model (what `labels: people`
    should score the same as the full set)."""
    lines = ["version: 1", "queries:"]
    ids = []
    for s in world:
        vset = set(int(i) for i in s.verified)
        pool = s.truth.shape[1]
        for q in range(s.truth.shape[0]):
            if people_only and q not in vset:
                continue
            lines.append("  - id: %s" % qid(s, q))
            lines.append("    stratum: %s" % s.name)
            if not people_only:
                # A relevant pair gets grade 1-3, as a model would say it.
                grades = ", ".join('"%s": %d' % (chunk(s, q, c), 2 if s.model[q, c] else 0) for c in range(pool))
                lines.append("    model: {%s}" % grades)
            if q in vset:
                grades = ", ".join('"%s": %d' % (chunk(s, q, c), 2 if s.truth[q, c] else 0) for c in range(pool))
                lines.append("    relevant: {%s}" % grades)
                if not people_only:
                    lines.append("    verified: true")
                ids.append(qid(s, q))
    if not people_only:
        lines.append("verify_sample:")
        lines.append("  seed: %d" % seed)
        lines.append("  ids: [%s]" % ", ".join(ids))
        lines.append("  drawn_at: 2026-12-07T00:00:00Z")
    return "\n".join(lines) + "\n"


def run_jsonl(world, which):
    lines = []
    for s in world:
        rankings = getattr(s, which)
        for q in range(rankings.shape[0]):
            results = [{"id": chunk(s, q, int(c)), "score": float(len(rankings[q]) - i)}
                       for i, c in enumerate(rankings[q])]
            lines.append(json.dumps({"query_id": qid(s, q), "results": results}))
    return "\n".join(lines) + "\n"


def config_yaml(labels, test=None):
    lines = ["gold: gold.yaml", "baselines: baselines-%s%s" % (labels or "default", "-" + test if test else "")]
    if labels:
        lines.append("labels: %s" % labels)
    lines += [
        "metrics: [%s]" % METRIC,
        "retrievers:",
        "  - name: r",
        "    run: runs/base.jsonl",
        "gate:",
    ] + (["  test: %s" % test] if test else []) + [
        "  rules:",
        "    - metric: %s" % METRIC,
        "      max_drop: 0",
        "      strata: overall",
    ]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- reference


def ppi_stratum(y, yh, yu):
    """(mean, se, people_mean, people_se, lambda): ppi-python 0.2.3's
    power-tuned ppi_mean_ci and classical_mean_ci, in numpy; people-only
    under MIN_VERIFIED (the SPEC's rule)."""
    n, big_n = len(y), len(yu)
    pm = float(y.mean())
    pse = math.inf if n < 2 else math.sqrt(y.var() / n)
    if n < MIN_VERIFIED:
        return pm, pse, pm, pse, 0.0
    cov = np.mean((y - y.mean()) * (yh - yh.mean()))
    var = np.var(np.concatenate([yh, yu]), ddof=1)
    lam = 0.0 if var == 0 else float(np.clip(cov / ((1 + n / big_n) * var), 0.0, 1.0))
    mean = np.mean(lam * yu) + np.mean(y - lam * yh)
    se = math.sqrt(np.var(lam * yu) / big_n + np.var(y - lam * yh) / n)
    return float(mean), se, pm, pse, lam


def reference(world, which="base"):
    """The numpy PPI (micro: strata weighted by their sizes) of the mean
    recall@10 of one run, the people-only estimate with the same weights,
    and the true means, overall and per stratum."""
    parts, sizes, truths, per = [], [], [], {}
    for s in world:
        rk = getattr(s, which)
        t = recall(s.truth, rk)
        m = recall(s.model, rk)
        v = s.verified
        p = ppi_stratum(t[v], m[v], m)
        parts.append(p)
        sizes.append(len(t))
        truths.append(t)
        per[s.name] = (p, float(t.mean()))
    w = np.array(sizes, dtype=float) / sum(sizes)
    return {
        "mean": float(sum(wi * p[0] for wi, p in zip(w, parts))),
        "se": math.sqrt(sum(wi * wi * p[1] ** 2 for wi, p in zip(w, parts))),
        "people_mean": float(sum(wi * p[2] for wi, p in zip(w, parts))),
        "people_se": math.sqrt(sum(wi * wi * p[3] ** 2 for wi, p in zip(w, parts))),
        "true": float(np.concatenate(truths).mean()),
        "strata": per,
    }


def true_delta(world, which):
    d = [recall(s.truth, getattr(s, which)) - recall(s.truth, s.base) for s in world]
    return float(np.concatenate(d).mean())


# ---------------------------------------------------------------- the binary


class Contract(Exception):
    pass


def dig(doc, path):
    """doc[path[0]][path[1]]...; Contract naming the missing key."""
    cur = doc
    for i, k in enumerate(path):
        if not isinstance(cur, dict) or k not in cur:
            have = sorted(cur) if isinstance(cur, dict) else type(cur).__name__
            raise Contract("rgate's JSON has no %s (keys beside it: %s)" % (".".join(path[: i + 1]), have))
        cur = cur[k]
    return cur


def num(doc, path, null=float("nan")):
    """A number of the report; `null` for JSON null (rgate writes a
    non-finite value, such as the bound of an infinite interval, as null)."""
    x = dig(doc, path)
    if x is None:
        return null
    if not isinstance(x, (int, float)):
        raise Contract("%s is %r, not a number" % (".".join(path), x))
    return float(x)


def bounds(doc, path, prefix=""):
    """(ci_low, ci_high) at `path`, null read as an unbounded side (one
    verified query in a people-only stratum: an infinite se)."""
    return (num(doc, path + [prefix + "ci_low"], -math.inf), num(doc, path + [prefix + "ci_high"], math.inf))


PPI_FIELDS = ("mean", "se", "ci_low", "ci_high", "people_mean", "people_ci_low", "people_ci_high",
              "n_model", "n_verified", "lambda", "effective_n")


class Runner:
    def __init__(self, binary, tmp):
        self.bin = os.path.abspath(binary)
        self.tmp = tmp
        self.calls = 0
        self.seconds = 0.0

    def run(self, args, ok=(0,)):
        self.calls += 1
        env = dict(os.environ)
        env.pop("RGATE_CONFIG", None)
        env["NO_COLOR"] = "1"
        t = time.monotonic()
        r = subprocess.run([self.bin] + args, cwd=self.tmp, capture_output=True, text=True, env=env)
        self.seconds += time.monotonic() - t
        if r.returncode not in ok:
            sys.exit("rgate %s exited %d:\n%s" % (" ".join(args), r.returncode, r.stderr))
        return r

    def write(self, name, text):
        path = os.path.join(self.tmp, name)
        os.makedirs(os.path.dirname(path) or self.tmp, exist_ok=True)
        with open(path, "w") as f:
            f.write(text)

    def eval(self, labels, gold="gold.yaml"):
        args = ["eval", "--gold", gold, "--run", "runs/base.jsonl", "--metrics", METRIC, "--format", "json"]
        if labels:
            args += ["--labels", labels]
        return json.loads(self.run(args).stdout)

    def gate(self, labels, current, test=None):
        """Baseline recorded from runs/base.jsonl under `labels`, then the
        gate on `current`; (exit code, the recall@10 overall check)."""
        tag = (labels or "default") + ("-" + test if test else "")
        cfg = "rgate-%s.yaml" % tag
        self.write(cfg, config_yaml(labels, test))
        store = os.path.join(self.tmp, "baselines-%s" % tag)
        if not os.path.exists(store):
            self.run(["--config", cfg, "baseline", "update", "--note", "ppi-sim"])
        r = self.run(["--config", cfg, "--format", "json", "gate", "--run", "r=runs/%s.jsonl" % current], ok=(0, 1))
        doc = json.loads(r.stdout)
        for ret in dig(doc, ["retrievers"]):
            for c in ret.get("checks", []):
                if c.get("metric") == METRIC and c.get("stratum") in ("all", "overall"):
                    return r.returncode, c
        raise Contract("gate JSON has no %s check on stratum all/overall" % METRIC)


def ppi_entry(doc, scope="all"):
    """ppi.recall@10.<scope> with the contract's fields."""
    e = dig(doc, ["ppi", METRIC, scope])
    for k in PPI_FIELDS:
        dig(doc, ["ppi", METRIC, scope, k])
    return e


def metric_interval(doc, scope="all"):
    """(mean, lo, hi) of recall@10 on `scope` in eval JSON: the value in
    metrics.<metric>.<scope>, its 95% interval (eval's stratified bootstrap)
    in intervals.<metric>.<scope> (None when eval printed none)."""
    mean = num(doc, ["metrics", METRIC, scope])
    iv = doc.get("intervals", {}).get(METRIC, {}).get(scope)
    if not isinstance(iv, dict):
        return mean, None, None
    return mean, num(doc, ["intervals", METRIC, scope, "ci_low"]), num(doc, ["intervals", METRIC, scope, "ci_high"])


def supports_labels(binary):
    r = subprocess.run([binary, "eval", "--help"], capture_output=True, text=True)
    return "--labels" in r.stdout


# ---------------------------------------------------------------- trials


class Tally:
    def __init__(self):
        self.k = {}
        self.n = {}
        self.vals = {}

    def hit(self, key, ok):
        self.k[key] = self.k.get(key, 0) + int(bool(ok))
        self.n[key] = self.n.get(key, 0) + 1

    def add(self, key, x):
        self.vals.setdefault(key, []).append(x)

    def rate(self, key):
        return rate(self.k.get(key, 0), self.n.get(key, 0))


def one_trial(runner, world, w, seed, args, tally, ppi):
    runner.write("gold.yaml", gold_yaml(world, seed))
    runner.write("gold-people.yaml", gold_yaml(world, seed, people_only=True))
    for which in ("base", "same", "drop"):
        runner.write("runs/%s.jsonl" % which, run_jsonl(world, which))
    ref = reference(world)
    truth = ref["true"]

    if "eval" in args.parts:
        eval_part(runner, world, args, tally, ppi, ref, truth)
    if "gate" in args.parts:
        gate_part(runner, world, tally, ppi, [t for t in args.people_tests.split(",") if t])


def eval_part(runner, world, args, tally, ppi, ref, truth):
    # (a) eval. The verified queries alone, scored as any gold set of
    # people's labels (what `labels: people` scores): its `all` weights the
    # strata by their verified counts, not by their sizes, so it estimates
    # another mean where the draw is not proportional (the floor of 10).
    doc = runner.eval(None, "gold-people.yaml")
    pm, plo, phi = metric_interval(doc)
    if plo is not None:
        tally.hit("people-subset covers", plo <= truth <= phi)
        tally.add("people-subset width", phi - plo)
    if ppi:
        doc = runner.eval("ppi")
        if dig(doc, ["labels"]) != "ppi":
            raise Contract("eval --labels ppi JSON says labels %r" % doc.get("labels"))
        e = ppi_entry(doc)
        lo, hi = bounds(doc, ["ppi", METRIC, "all"])
        plo2, phi2 = bounds(doc, ["ppi", METRIC, "all"], "people_")
        tally.hit("ppi covers", lo <= truth <= hi)
        tally.hit("people covers", plo2 <= truth <= phi2)
        tally.hit("ppi narrower", (hi - lo) < (phi2 - plo2))
        if math.isfinite(hi - lo):
            tally.add("ppi width", hi - lo)
        if math.isfinite(phi2 - plo2):
            tally.add("people width", phi2 - plo2)
        if math.isfinite(phi2 - plo2) and phi2 > plo2:
            tally.add("ppi width / people width", (hi - lo) / (phi2 - plo2))
        tally.add("ppi error", e["mean"] - truth)
        tally.add("lambda", num(doc, ["ppi", METRIC, "all", "lambda"]))
        tally.add("effective_n / n_verified", num(doc, ["ppi", METRIC, "all", "effective_n"])
                  / max(1.0, num(doc, ["ppi", METRIC, "all", "n_verified"])))
        se = num(doc, ["ppi", METRIC, "all", "se"], math.inf)
        tally.hit("rgate = numpy PPI (1e-6)", abs(e["mean"] - ref["mean"]) < 1e-6
                  and (abs(se - ref["se"]) < 1e-6 or se == ref["se"] == math.inf))
        tally.hit("rgate people-only = numpy (1e-6)",
                  abs(num(doc, ["ppi", METRIC, "all", "people_mean"]) - ref["people_mean"]) < 1e-6)
        for s in world:
            p, t = ref["strata"][s.name]
            if dig(doc, ["ppi", METRIC, s.name]) is None:
                tally.hit("stratum estimate null", True)
                continue
            lo, hi = bounds(doc, ["ppi", METRIC, s.name])
            nv = len(s.verified)
            band = "= N (all verified)" if nv == len(s.truth) else "<10 (people-only)" if nv < MIN_VERIFIED else "10-14" if nv < 15 else "15-29" if nv < 30 else "30+"
            tally.hit("stratum ppi covers, n_verified " + band, lo <= t <= hi)
        doc = runner.eval("model")
        mm, mlo, mhi = metric_interval(doc)
        tally.add("model error", mm - truth)
        if mlo is not None:
            tally.hit("model covers", mlo <= truth <= mhi)



def gate_part(runner, world, tally, ppi, people_tests):
    # (b) the gate.
    for which in ("same", "drop"):
        tally.add("true delta " + which, true_delta(world, which))
    modes = [("ppi", None), ("people", None)] + [("people", t) for t in people_tests] if ppi else []
    failed = {}
    for mode, test in modes:
        name = mode + (" test: " + test if test else "")
        for which in ("same", "drop"):
            code, c = runner.gate(mode, which, test)
            failed[(name, which)] = c.get("verdict") == "fail"
            tally.hit("gate %s %s fail" % (name, which), c.get("verdict") == "fail")
            tally.hit("gate %s %s exit 1" % (name, which), code == 1)
            if mode == "ppi" and not test:
                p = dig(c, ["ppi"])
                for k in PPI_FIELDS:
                    dig(c, ["ppi", k])
                lo, hi = bounds(c, ["ppi"])
                tally.hit("gate ppi %s delta covered" % which, lo <= true_delta(world, which) <= hi)
                plo, phi = bounds(c, ["ppi"], "people_")
                tally.hit("gate ppi %s delta narrower" % which, (hi - lo) < (phi - plo))
                tally.add("gate ppi lambda", p["lambda"])
                if p.get("effective_n") is not None and p["n_verified"]:
                    tally.add("gate ppi effective_n / n_verified", p["effective_n"] / p["n_verified"])
    # The same sample, both label modes: drops one caught and the other missed.
    for which in ("same", "drop"):
        if ("ppi", which) in failed and ("people", which) in failed:
            a, b = failed[("ppi", which)], failed[("people", which)]
            tally.hit("gate %s: ppi fails, people not" % which, a and not b)
            tally.hit("gate %s: people fails, ppi not" % which, b and not a)
    if not ppi:
        # Before --labels: people's half only, on the verified queries'
        # gold set (what `labels: people` scores).
        os.replace(os.path.join(runner.tmp, "gold-people.yaml"), os.path.join(runner.tmp, "gold.yaml"))
        for which in ("same", "drop"):
            code, c = runner.gate(None, which)
            tally.hit("gate people(subset) %s fail" % which, c.get("verdict") == "fail")


def summarize(name, w, tally, trials, ppi):
    print("\n== world %s: %d trials; judge fp %.2f fn %.2f; verified %.0f%% (floor %d); "
          "re-run moves %.0f%% of queries; drop %.2f per relevant chunk in the top 10"
          % (name, trials, w["fp"], w["fn"], 100 * w["fraction"], w["floor"], 100 * w["churn"], w["drop"]))
    rows = [
        ("(a) 95% interval covers the true mean (recall@10, all)", ["ppi covers", "people covers", "model covers", "people-subset covers"]),
        ("    per stratum, PPI interval covers the stratum's true mean", sorted(k for k in tally.n if k.startswith("stratum "))),
        ("    PPI narrower than people-only (same n_verified)", ["ppi narrower"]),
        ("    checks", ["rgate = numpy PPI (1e-6)", "rgate people-only = numpy (1e-6)"]),
        ("(b) gate, one rule recall@10 max_drop 0 overall: (i) unchanged re-run fails (false alarm)",
         sorted(k for k in tally.n if k.startswith("gate ") and k.endswith(" same fail"))),
        ("    (ii) real drop caught", sorted(k for k in tally.n if k.startswith("gate ") and k.endswith(" drop fail"))),
        ("    same sample, discordant verdicts", sorted(k for k in tally.n if ": ppi fails" in k or ": people fails" in k)),
        ("    gate's PPI delta interval", ["gate ppi same delta covered", "gate ppi drop delta covered",
                                          "gate ppi same delta narrower", "gate ppi drop delta narrower"]),
    ]
    for title, keys in rows:
        keys = [k for k in keys if k in tally.n]
        if not keys:
            continue
        print(title)
        for k in keys:
            print("  %-48s %s" % (k, tally.rate(k)))
    for k in ("ppi width", "people width", "ppi width / people width", "people-subset width", "ppi error", "model error", "lambda",
              "effective_n / n_verified", "gate ppi lambda", "gate ppi effective_n / n_verified", "true delta same", "true delta drop"):
        v = tally.vals.get(k)
        if v:
            a = np.array(v, dtype=float)
            print("  %-48s mean %+.4f, median %+.4f, 10%%-90%% %+.4f..%+.4f"
                  % (k, a.mean(), np.median(a), *np.quantile(a, [0.1, 0.9])))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", default="target/release/rgate")
    ap.add_argument("--trials", type=int, default=300)
    ap.add_argument("--worlds", default="typical,useless,sparse")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--alpha", type=float, default=0.05,
                    help="the gate's default alpha; only printed beside the false-alarm rates")
    ap.add_argument("--parts", default="eval,gate", help="eval (a), gate (b), or both")
    ap.add_argument("--people-tests", default="",
                    help="comma-separated `gate.test` values to gate labels: people with too (e.g. t-test:"
                         " the normal test PPI uses, on the verified queries alone)")
    ap.add_argument("--json", help="write the tallies here")
    ap.add_argument("--write-world", metavar="DIR", help="write the first world's files into DIR and stop")
    ap.add_argument("--people-only", action="store_true",
                    help="skip --labels (a binary without it): the people half on the verified queries")
    args = ap.parse_args()

    names = [x for x in args.worlds.split(",") if x]
    for n in names:
        if n not in WORLDS:
            sys.exit("unknown world %r (have %s)" % (n, ", ".join(WORLDS)))
    ppi = not args.people_only
    if ppi and not args.write_world and not supports_labels(args.bin):
        sys.exit("%s has no --labels (issue 40's wiring); use --people-only for the people half" % args.bin)

    out = {}
    for wi, name in enumerate(names):
        w = WORLDS[name]
        rng = np.random.default_rng([args.seed, wi])
        if args.write_world:
            world = draw_world(rng, w)
            d = args.write_world
            os.makedirs(os.path.join(d, "runs"), exist_ok=True)
            with open(os.path.join(d, "gold.yaml"), "w") as f:
                f.write(gold_yaml(world, args.seed))
            for which in ("base", "same", "drop"):
                with open(os.path.join(d, "runs", which + ".jsonl"), "w") as f:
                    f.write(run_jsonl(world, which))
            for labels in ("ppi", "people"):
                with open(os.path.join(d, "rgate-%s.yaml" % labels), "w") as f:
                    f.write(config_yaml(labels))
            print(d)
            return
        tally = Tally()
        start = time.monotonic()
        tmp = tempfile.mkdtemp(prefix="ppi-gate-sim-")
        runner = Runner(args.bin, tmp)
        try:
            for t in range(args.trials):
                for sub in os.listdir(tmp):
                    p = os.path.join(tmp, sub)
                    shutil.rmtree(p) if os.path.isdir(p) else os.remove(p)
                world = draw_world(rng, w)
                try:
                    one_trial(runner, world, w, args.seed, args, tally, ppi)
                except Contract as e:
                    sys.exit("contract: %s (world %s, trial %d; files in %s)" % (e, name, t, tmp))
        finally:
            if os.path.isdir(tmp):
                shutil.rmtree(tmp, ignore_errors=True)
        summarize(name, w, tally, args.trials, ppi)
        print("  (%d rgate calls, %.0f s in rgate, %.0f s wall)" % (runner.calls, runner.seconds, time.monotonic() - start))
        out[name] = {"rates": {k: rate_obj(tally.k[k], tally.n[k]) for k in tally.n},
                     "values": {k: {"mean": float(np.mean(v)), "median": float(np.median(v))}
                                for k, v in tally.vals.items()},
                     "world": {k: v for k, v in w.items() if k != "strata"}}
    print("\nalpha %.3f; commands: %s" % (args.alpha, " ".join(sys.argv)))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
