#!/usr/bin/env python3
"""Does rgate's PPI++ estimate (src/stats/ppi.rs) cover the truth, and is it
narrower than people's labels alone? A simulation of issue 40's setting.

Each trial builds a world: four strata of 5-200 queries (sizes drawn per
trial), each query with a pool of 20 chunks of which 1-4 are truly relevant.
A baseline run puts each relevant chunk in its top 10 with a stratum's
probability; the current run is the baseline after a drop (each relevant
chunk in the top 10 falls out with probability --drop) or, with --drop 0,
after churn only (every relevant chunk re-draws its place with the same
probability, so nothing changes on average). A model judge grades every
pooled pair with --fp false positives (a non-relevant pair graded relevant)
and --fn false negatives; people's grades are the truth. People verify a
uniform random sample of each stratum: round(--fraction x N_h) queries, at
least min(N_h, 10), so a stratum of 5 verifies all 5 and is people-only (the
SPEC's rule below 10 verified queries).

Per query the metric (recall@10; --metric hit@10 for the binary one) is
computed with the model's labels on every query and with the people's on the
verified ones, for both runs; the estimates, combined over strata by micro
weights (N_h / N) and by macro weights (1 / H), are
  ppi      PPI++ per stratum as ppi-python 0.2.3's ppi_mean_ci (power-tuned
           lambda clipped to [0, 1]; unlabeled set = all N model values),
           written again here in numpy from the formulas, not imported
  ppi-t    the same estimate and standard error with Student's t quantiles
           at Welch-Satterthwaite degrees of freedom (n_h - 1 per stratum):
           a diagnostic of how much of any shortfall is small-sample
  people   the verified sample alone (classical_mean_ci)
  model    the model's values on all N queries, a CLT interval (biased)
for the baseline's mean and for the mean delta (current - baseline).

Targets: "finite", the mean over all the world's queries with true labels
(issue 40's "true mean"); and "population", the generator's expected value
(Monte Carlo, 200,000 queries per stratum), which the gate's question is
about when the gold set is a sample of the queries users ask. Coverage of
95% intervals and detection rates are printed with 95% Wilson intervals.

The gate rows: a one-sided test at level --alpha of "the delta is below 0"
(p_below(0) < alpha, rgate's margin test at tolerance 0) with each estimate:
with --drop > 0 the share of trials that catch the drop, with --drop 0 the
false-alarm rate (nothing dropped on average).

--bin PATH drives rgate itself (`rgate eval --labels ppi --format json`,
SPEC "Gating on model labels"): it writes each world as a native JSON gold
set (`model`, `verified`, `verify_sample`) and a JSONL run, and reads the
`ppi` key for the baseline's mean. That mode needs a binary with `--labels`
(issue 40 item 3); the numpy mode runs without rgate.

usage: scripts/ppi_sim.py [--trials 1000] [--seed 1] [--fraction 0.15]
       [--fp 0.15] [--fn 0.05] [--drop 0.08] [--metric recall@10]
       [--bin target/release/rgate] [--check-ppi-python] [--write-world DIR]
"""

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile

import numpy as np

POOL = 20
DEPTH = 10
MIN_VERIFIED = 10
# Per stratum: chance a relevant chunk is in the baseline's top 10, and the
# weights of 1..4 relevant chunks.
STRATA = [
    ("lookup", 0.85, [0.6, 0.3, 0.1, 0.0]),
    ("how-to", 0.65, [0.3, 0.4, 0.2, 0.1]),
    ("multi-hop", 0.45, [0.0, 0.3, 0.4, 0.3]),
    ("misc", 0.70, [0.4, 0.3, 0.2, 0.1]),
]
Z95 = 1.959963984540054
RGATE_NAMES = {"recall@10": "recall@10", "hit@10": "hit_rate@10"}


def wilson(k, n, z=Z95):
    if n == 0:
        return (float("nan"), float("nan"))
    p = k / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return (c - h, c + h)


def rate(k, n):
    lo, hi = wilson(k, n)
    return "%.3f [%.3f, %.3f] (%d/%d)" % (k / n, lo, hi, k, n)


# ---------------------------------------------------------------- the world


def make_stratum(rng, size, p_top, rel_weights, args):
    """Labels and both runs' top-10 membership for `size` queries.

    Returns arrays of shape (size, POOL): truth (0/1), model (0/1), in the
    baseline's top 10 (bool), in the current run's top 10 (bool)."""
    n_rel = rng.choice([1, 2, 3, 4], size=size, p=rel_weights)
    slot = np.arange(POOL)[None, :]
    truth = (slot < n_rel[:, None]).astype(float)  # relevant chunks first
    rel = truth > 0
    # Baseline: each relevant chunk in the top 10 with p_top; the rest of the
    # top 10 filled with non-relevant chunks (there are >= 16 of them).
    base_rel = rel & (rng.random((size, POOL)) < p_top)
    if args.drop > 0:
        cur_rel = base_rel & (rng.random((size, POOL)) >= args.drop)
    else:
        cur_rel = rel & (rng.random((size, POOL)) < p_top)
    base = fill_top(rng, base_rel, rel)
    cur = fill_top(rng, cur_rel, rel)
    u = rng.random((size, POOL))
    model = np.where(rel, u >= args.fn, u < args.fp).astype(float)
    return truth, model, base, cur


def fill_top(rng, rel_in, rel):
    """Top-10 membership: the chosen relevant chunks plus non-relevant ones
    at random to make 10."""
    size = rel.shape[0]
    top = rel_in.copy()
    keys = np.where(rel, np.inf, rng.random(rel.shape))
    order = np.argsort(keys, axis=1)
    need = DEPTH - top.sum(axis=1)
    ranks = np.empty_like(order)
    ranks[np.arange(size)[:, None], order] = np.arange(POOL)[None, :]
    top |= (~rel) & (ranks < need[:, None])
    return top


def metric(labels, top, name):
    """recall@10 or hit@10 of each query with `labels` (0 when the labels
    mark nothing relevant: nothing to find)."""
    found = (labels * top).sum(axis=1)
    total = labels.sum(axis=1)
    if name == "hit@10":
        return (found > 0).astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total > 0, found / np.maximum(total, 1), 0.0)


# ---------------------------------------------------------------- estimators


def ppi_stratum(y, yh, yu):
    """(mean, se, people_mean, people_se, lambda) of one stratum, from the
    formulas of ppi-python 0.2.3 (see src/stats/ppi.rs)."""
    n, big_n = len(y), len(yu)
    pm = y.mean()
    pse = math.inf if n < 2 else math.sqrt(y.var() / n)
    if n < MIN_VERIFIED:
        return pm, pse, pm, pse, 0.0
    cov = np.mean((y - y.mean()) * (yh - yh.mean()))
    var = np.var(np.concatenate([yh, yu]), ddof=1)
    lam = 0.0 if var == 0 else float(np.clip(cov / ((1 + n / big_n) * var), 0.0, 1.0))
    mean = np.mean(lam * yu) + np.mean(y - lam * yh)
    se = math.sqrt(np.var(lam * yu) / big_n + np.var(y - lam * yh) / n)
    return mean, se, pm, pse, lam


def combine(parts, weights, ns):
    m = sum(w * p[0] for w, p in zip(weights, parts))
    se = math.sqrt(sum(w * w * p[1] ** 2 for w, p in zip(weights, parts)))
    pm = sum(w * p[2] for w, p in zip(weights, parts))
    pse = math.sqrt(sum(w * w * p[3] ** 2 for w, p in zip(weights, parts)))
    return m, se, pm, pse, satterthwaite([w * w * p[1] ** 2 for w, p in zip(weights, parts)], ns)


def satterthwaite(variances, ns):
    """Welch-Satterthwaite degrees of freedom of a sum of independent
    variance estimates with n_h - 1 degrees of freedom each."""
    den = sum(v * v / (n - 1) for v, n in zip(variances, ns) if n > 1)
    total = sum(variances)
    if den == 0:
        return math.inf
    return max(1.0, total * total / den)


def t_quantile(p, df):
    from statistics import NormalDist

    if not math.isfinite(df):
        return NormalDist().inv_cdf(p)
    from scipy.stats import t

    return float(t.ppf(p, df))


def model_only(values, weights):
    m = sum(w * v.mean() for w, v in zip(weights, values))
    se = math.sqrt(sum(w * w * v.var(ddof=1) / len(v) for w, v in zip(weights, values)))
    return m, se


def normal_cdf(x):
    return 0.5 * math.erfc(-x / math.sqrt(2))


def p_below(mean, se, margin):
    if not math.isfinite(se):
        return 1.0
    if se == 0:
        return 0.0 if mean < margin else 1.0
    return normal_cdf((mean - margin) / se)


# ---------------------------------------------------------------- trials


def population_means(args):
    """Expected metric of each stratum for both runs and their delta."""
    rng = np.random.default_rng(12345)
    out = []
    for _, p_top, weights in STRATA:
        truth, _, base, cur = make_stratum(rng, 200_000, p_top, weights, args)
        b = metric(truth, base, args.metric)
        c = metric(truth, cur, args.metric)
        out.append((b.mean(), (c - b).mean()))
    return out


def draw_world(rng, args):
    world = []
    for _, p_top, weights in STRATA:
        size = int(rng.integers(5, 201))
        truth, model, base, cur = make_stratum(rng, size, p_top, weights, args)
        n = min(size, max(MIN_VERIFIED, round(args.fraction * size)))
        verified = np.sort(rng.choice(size, size=n, replace=False))
        world.append((truth, model, base, cur, verified))
    return world


def estimates(world, args):
    """Per quantity ('mean', 'delta') and weighting: the three estimates and
    the finite target."""
    sizes = np.array([w[0].shape[0] for w in world], dtype=float)
    weights = {"micro": sizes / sizes.sum(), "macro": np.full(len(world), 1 / len(world))}
    per = {"mean": [], "delta": []}
    for truth, model, base, cur, verified in world:
        b_m, b_t = metric(model, base, args.metric), metric(truth, base, args.metric)
        c_m, c_t = metric(model, cur, args.metric), metric(truth, cur, args.metric)
        for key, model_vals, true_vals in [("mean", b_m, b_t), ("delta", c_m - b_m, c_t - b_t)]:
            per[key].append((model_vals, true_vals, verified))
    out = {}
    for key, strata in per.items():
        parts = [ppi_stratum(t[v], m[v], m) for m, t, v in strata]
        ns = [len(v) for _, _, v in strata]
        for wname, w in weights.items():
            m, se, pm, pse, df = combine(parts, w, ns)
            mm, mse = model_only([s[0] for s in strata], w)
            truth = sum(wi * s[1].mean() for wi, s in zip(w, strata))
            out[(key, wname)] = {
                "ppi": (m, se),
                "people": (pm, pse),
                "model": (mm, mse),
                "df": df,
                "finite": truth,
                "weights": w,
                "lambda": [p[4] for p in parts],
            }
        # Each stratum's own interval against its own finite mean.
        out[(key, "strata")] = [
            (len(v), p, t.mean()) for p, (_, t, v) in zip(parts, strata)
        ]
    return out


BINS = [(1, 9, "people-only (< 10)"), (10, 14, "10-14"), (15, 29, "15-29"), (30, 10**9, "30+")]


def check_against_ppi_python(world, args):
    """Optional: the numpy formulas above equal ppi-python's on every
    stratum with enough verified queries."""
    from ppi_py import ppi_mean_ci

    for truth, model, base, _, verified in world:
        m, t = metric(model, base, args.metric), metric(truth, base, args.metric)
        if len(verified) < MIN_VERIFIED:
            continue
        mean, se, _, _, _ = ppi_stratum(t[verified], m[verified], m)
        lo, hi = ppi_mean_ci(t[verified], m[verified], m, alpha=0.05)
        if not math.isclose(mean - Z95 * se, float(np.asarray(lo).item()), abs_tol=1e-9):
            sys.exit("numpy PPI differs from ppi-python: %r vs %r" % (mean - Z95 * se, lo))
        if not math.isclose(mean + Z95 * se, float(np.asarray(hi).item()), abs_tol=1e-9):
            sys.exit("numpy PPI differs from ppi-python: %r vs %r" % (mean + Z95 * se, hi))


# ---------------------------------------------------------------- --bin mode


def write_world(world, directory, args):
    """A native JSON gold set (model grades everywhere, people's on the
    verified sample, the draw recorded) and the baseline run as JSONL."""
    queries, ids, run_lines = [], [], []
    for h, (truth, model, base, _, verified) in enumerate(world):
        name = STRATA[h][0]
        vset = set(int(i) for i in verified)
        for q in range(truth.shape[0]):
            qid = "%s-%03d" % (name, q)
            chunks = ["%s/c%02d" % (qid, c) for c in range(POOL)]
            entry = {
                "id": qid,
                "text": "query %s" % qid,
                "stratum": name,
                "model": {chunks[c]: int(model[q, c]) for c in range(POOL)},
            }
            if q in vset:
                entry["verified"] = True
                entry["relevant"] = {chunks[c]: int(truth[q, c]) for c in range(POOL)}
                ids.append(qid)
            queries.append(entry)
            top = [chunks[c] for c in range(POOL) if base[q, c]]
            results = [{"id": c, "score": float(DEPTH - i)} for i, c in enumerate(top)]
            run_lines.append(json.dumps({"query_id": qid, "results": results}))
    gold = {
        "version": 1,
        "queries": queries,
        "verify_sample": {"seed": args.seed, "ids": ids, "drawn_at": "2026-12-07T00:00:00Z"},
    }
    gold_path = os.path.join(directory, "gold.json")
    run_path = os.path.join(directory, "run.jsonl")
    with open(gold_path, "w") as f:
        json.dump(gold, f)
    with open(run_path, "w") as f:
        f.write("\n".join(run_lines) + "\n")
    return gold_path, run_path


def bin_estimate(binary, world, args):
    """rgate's PPI interval for the baseline's mean (micro, `all`)."""
    with tempfile.TemporaryDirectory() as d:
        gold, run = write_world(world, d, args)
        name = RGATE_NAMES[args.metric]
        cmd = [binary, "eval", "--gold", gold, "--run", run, "--metrics", name,
               "--labels", "ppi", "--format", "json", "--resamples", "0"]
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            sys.exit("rgate failed (%d): %s\n%s" % (done.returncode, " ".join(cmd), done.stderr))
        doc = json.loads(done.stdout)
    entry = doc.get("ppi", {}).get(name, {}).get("all")
    if not isinstance(entry, dict):
        sys.exit("no ppi.%s.all in rgate's JSON; keys: %s" % (name, sorted(doc)))
    lo = entry.get("ci_low", (entry.get("interval") or [None, None])[0])
    hi = entry.get("ci_high", (entry.get("interval") or [None, None])[1])
    return entry.get("mean"), lo, hi


# ---------------------------------------------------------------- main


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trials", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--fraction", type=float, default=0.15)
    ap.add_argument("--fp", type=float, default=0.15)
    ap.add_argument("--fn", type=float, default=0.05)
    ap.add_argument("--drop", type=float, default=0.08)
    ap.add_argument("--alpha", type=float, default=0.05)
    ap.add_argument("--metric", choices=["recall@10", "hit@10"], default="recall@10")
    ap.add_argument("--bin", help="an rgate binary with --labels ppi")
    ap.add_argument("--write-world", metavar="DIR",
                    help="write the first world's gold set and run into DIR and stop")
    ap.add_argument("--check-ppi-python", action="store_true",
                    help="compare the numpy PPI with ppi-python on every trial")
    args = ap.parse_args()

    rng = np.random.default_rng(args.seed)
    if args.write_world:
        os.makedirs(args.write_world, exist_ok=True)
        print("\n".join(write_world(draw_world(rng, args), args.write_world, args)))
        return
    pop = population_means(args)
    keys = [(q, w) for q in ("mean", "delta") for w in ("micro", "macro")]
    kinds = ("ppi", "ppi-t", "people", "model")
    cover = {(k, e, t): 0 for k in keys for e in kinds for t in ("finite", "population")}
    narrower = {k: 0 for k in keys}
    not_wider = {k: 0 for k in keys}
    ratio = {k: [] for k in keys}
    bias = {k: [] for k in keys}
    fails = {e: 0 for e in ("ppi", "ppi-t", "people", "model")}
    lambdas = []
    by_n = {(q, b[2], e): [0, 0] for q in ("mean", "delta") for b in BINS for e in ("ppi", "people")}
    bin_cover = {"finite": 0, "population": 0, "narrower": 0, "agree": 0}

    for _ in range(args.trials):
        world = draw_world(rng, args)
        if args.check_ppi_python:
            check_against_ppi_python(world, args)
        est = estimates(world, args)
        for (q, w) in keys:
            e = est[(q, w)]
            pop_target = sum(wi * p[0 if q == "mean" else 1] for wi, p in zip(e["weights"], pop))
            tq = t_quantile(0.975, e["df"])
            for name in kinds:
                m, se = e["ppi" if name == "ppi-t" else name]
                z = tq if name == "ppi-t" else Z95
                for t, target in (("finite", e["finite"]), ("population", pop_target)):
                    cover[((q, w), name, t)] += abs(m - target) <= z * se
            narrower[(q, w)] += e["ppi"][1] < e["people"][1]
            not_wider[(q, w)] += e["ppi"][1] <= e["people"][1]
            if e["people"][1] > 0:
                ratio[(q, w)].append(e["ppi"][1] / e["people"][1])
            bias[(q, w)].append(e["model"][0] - e["finite"])
        lambdas.extend(est[("mean", "micro")]["lambda"])
        for q in ("mean", "delta"):
            for nv, p, target in est[(q, "strata")]:
                label = next(b[2] for b in BINS if b[0] <= nv <= b[1])
                for name, (m, se) in (("ppi", p[:2]), ("people", p[2:4])):
                    cell = by_n[(q, label, name)]
                    cell[0] += abs(m - target) <= Z95 * se
                    cell[1] += 1
        for name in fails:
            e = est[("delta", "micro")]
            m, se = e["ppi" if name == "ppi-t" else name]
            if name == "ppi-t":
                fails[name] += se > 0 and m < -t_quantile(1 - args.alpha, e["df"]) * se
            else:
                fails[name] += p_below(m, se, 0.0) < args.alpha
        if args.bin:
            m, lo, hi = bin_estimate(args.bin, world, args)
            e = est[("mean", "micro")]
            pop_target = sum(wi * p[0] for wi, p in zip(e["weights"], pop))
            bin_cover["finite"] += lo <= e["finite"] <= hi
            bin_cover["population"] += lo <= pop_target <= hi
            bin_cover["narrower"] += (hi - lo) < 2 * Z95 * e["people"][1]
            pm, pse = e["ppi"]
            bin_cover["agree"] += abs(lo - (pm - Z95 * pse)) < 1e-6 and abs(hi - (pm + Z95 * pse)) < 1e-6

    n = args.trials
    print("PPI simulation: %d trials, seed %d, %s, model fp %.2f fn %.2f, verified %.0f%% "
          "(>= 10 per stratum), drop %.2f" % (n, args.seed, args.metric, args.fp, args.fn,
                                              100 * args.fraction, args.drop))
    print("lambda per stratum (baseline mean): median %.3f, 10%%-90%% %.3f-%.3f"
          % tuple(np.quantile(lambdas, [0.5, 0.1, 0.9])))
    for k in keys:
        print("\n%s (%s):" % k)
        for name in kinds:
            print("  %-6s 95%% coverage, finite target %s; population target %s"
                  % (name, rate(cover[(k, name, "finite")], n), rate(cover[(k, name, "population")], n)))
        r = np.array(ratio[k])
        print("  ppi narrower than people-only: %s, not wider %s; se ratio ppi/people median %.3f "
              "(effective n x%.2f)" % (rate(narrower[k], n), rate(not_wider[k], n), np.median(r),
                                       np.median(1 / r ** 2)))
        print("  model-only bias vs finite target: mean %+.4f" % np.mean(bias[k]))
    print("\nper stratum, 95% coverage of the stratum's finite mean by verified queries:")
    for q in ("mean", "delta"):
        for b in BINS:
            cells = [by_n[(q, b[2], e)] for e in ("ppi", "people")]
            if cells[0][1]:
                print("  %-5s n %-18s ppi %s; people %s" % (q, b[2], rate(*cells[0]), rate(*cells[1])))
    what = "caught the drop" if args.drop > 0 else "false alarm (no drop on average)"
    print("\ngate, delta micro, p_below(0) < %.3f, %s:" % (args.alpha, what))
    for name in kinds:
        print("  %-6s %s" % (name, rate(fails[name], n)))
    if args.bin:
        print("\nrgate --labels ppi (mean, all): covers finite %s, population %s; narrower %s; "
              "equals the numpy PPI to 1e-6 %s" % (rate(bin_cover["finite"], n), rate(bin_cover["population"], n),
                                                  rate(bin_cover["narrower"], n), rate(bin_cover["agree"], n)))


if __name__ == "__main__":
    main()
