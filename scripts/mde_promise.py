#!/usr/bin/env python3
"""The printed mde's promise, measured through the binary on worlds the
suite does not hold (issue 49, item 3): for each world, case and test, the
mde the gate prints under no change (mean over pilots), then a true drop
equal to it, and how often the gate fails it (promise: >= 0.80), with 95%
Wilson intervals. Reuses calibrate_binary.py's worlds, metric code and
runner; the drop is calibrate_binary's (the top relevant chunk moved down k
ranks with probability pi, pi solved exactly by enumeration).

Worlds:
  fresh-100   3 strata (50, 30, 20), every query's ranking redrawn
  fresh-50    3 strata (25, 15, 10)
  ann-4       held out: 4 strata (40, 30, 20, 10), ANN-style re-runs (misses
              and adjacent swaps below rank 4), 30% of queries deep (heavy
              tails), discrete metrics (ties)

    python3 scripts/mde_promise.py --bin target/release/rgate --trials 200 \
        [--tests default,bootstrap,t-test,randomization] [--worlds ...]
"""
import argparse
import os
import random
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import calibrate_binary as cb  # noqa: E402


def draw_ann_regress(world, rng, deep, regress=None):
    base, cur = cb.draw_ann(world, rng, deep=deep)
    if regress is not None:
        stratum, k, pi = regress
        for i, q in enumerate(world.queries):
            if stratum in (None, "all", q.stratum) and rng.random() < pi:
                cur[i] = cb.move_down(cur[i], k, q.depth)
    return base, cur


def solve_empirical(world, draw, metric, stratum, drop, draws=150, seed=7, ks=(3, 5, 8, 12, 20)):
    """(k, pi) as World.solve_down, with each D_k the mean loss of moving
    the top relevant chunk down k ranks over `draws` draws of the world's
    current runs (the ANN world's rankings are not World's states)."""
    rng = random.Random(seed)
    scope = [i for i, q in enumerate(world.queries) if stratum in (None, "all", q.stratum)]
    loss = {k: 0.0 for k in ks}
    for _ in range(draws):
        _, cur = draw(rng, None)
        for i in scope:
            q = world.queries[i]
            v = q.value(metric, cur[i])
            for k in ks:
                loss[k] += v - q.value(metric, cb.move_down(cur[i], k, q.depth))
    for k in ks:
        loss[k] /= draws * len(scope)
    if drop <= 0:
        return ks[0], 0.0
    for k in ks:
        if loss[k] > 0 and drop / loss[k] <= 0.9:
            return k, drop / loss[k]
    return ks[-1], min(1.0, drop / loss[ks[-1]])


def measure(runner, world, draw, label, metric, stratum, strata, test, trials, seed, tol, empirical=False):
    rng = random.Random(seed)
    rules = [{"metric": metric, "max_drop": tol, "strata": strata}]
    cfg = cb.config_yaml(["sim"], rules, test=None if test == "default" else test)
    pilots = max(20, trials // 10)
    mdes = []
    for _ in range(pilots):
        _, rep = runner.gate(world, {"sim": draw(rng, None)}, cfg)
        c = cb.find(rep, "sim", metric, stratum)
        if c.get("mde") is not None:
            mdes.append(c["mde"])
    if not mdes:
        print(f"{label} [{test}]: no mde printed", flush=True)
        return None
    mde = sum(mdes) / len(mdes)
    if empirical:
        k, pi = solve_empirical(world, draw, metric, stratum, mde)
    else:
        k, pi = world.solve_down(metric, stratum, mde)
    caught, used = 0, None
    for _ in range(trials):
        _, rep = runner.gate(world, {"sim": draw(rng, (stratum, k, pi))}, cfg)
        c = cb.find(rep, "sim", metric, stratum)
        used = c["test"]
        caught += c["verdict"] == "fail"
    r = cb.rate(caught, trials)
    print(f"{label} [{test} -> {used}]: printed mde {mde:.4f}; caught {cb.fmt_rate(r)}", flush=True)
    return r


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="target/release/rgate")
    ap.add_argument("--trials", type=int, default=200)
    ap.add_argument("--seed", type=int, default=49)
    ap.add_argument("--tol", type=float, default=0.0)
    ap.add_argument("--tests", default="default,bootstrap,t-test")
    ap.add_argument("--worlds", default="fresh-100,fresh-50,ann-4")
    ap.add_argument("--cases", default=None, help="metrics to run, comma-separated (default: every case of the world)")
    args = ap.parse_args()
    tests = args.tests.split(",")
    worlds = args.worlds.split(",")
    with tempfile.TemporaryDirectory(prefix="rgate-mde-") as tmp:
        runner = cb.Runner(os.path.abspath(args.bin), tmp)
        for wname in worlds:
            if wname.startswith("fresh"):
                sizes = [50, 30, 20] if wname == "fresh-100" else [25, 15, 10]
                w = cb.World(sizes, args.seed)
                draw = lambda rng, reg, w=w: cb.draw_pair(w, rng, regress=reg)  # noqa: E731
                cases = [("hit_rate@3", "all", "overall"), ("recall@10", "all", "overall"),
                         ("ndcg@10", "all", "overall")]
            else:
                w = cb.World([40, 30, 20, 10], args.seed + 1)
                w.set_depth(50)
                rng0 = random.Random(args.seed + 2)
                deep = frozenset(i for i in range(len(w.queries)) if rng0.random() < 0.3)
                draw = lambda rng, reg, w=w, deep=deep: draw_ann_regress(w, rng, deep, reg)  # noqa: E731
                cases = [("err@10", "all", "overall"), ("hit_rate@3", "all", "overall"),
                         ("ndcg@10", "all", "overall"), ("ndcg@10", "s0", ["s0"])]
            if args.cases:
                cases = [c for c in cases if c[0] in args.cases.split(",")]
            for metric, stratum, strata in cases:
                for test in tests:
                    label = f"{wname} {metric} {stratum}"
                    measure(runner, w, draw, label, metric, stratum, strata, test, args.trials,
                            args.seed + len(label) * 7 + len(metric), args.tol, not wname.startswith("fresh"))


if __name__ == "__main__":
    main()
