"""The peer for rgate's bootstrap kernel: a plain numpy paired bootstrap of
the mean delta, 7,000 queries x 6 metrics x 10,000 resamples (issue 5's
reference figure), drawing each resample's indices once for all metrics, as
rgate does. Prints the best of --reps wall times in seconds as JSON.

Deltas mimic metric deltas: mostly ties, some binary flips, some graded
changes, so both sides do the same arithmetic on the same kind of data.
"""
import argparse
import json
import time

import numpy as np


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--queries", type=int, default=7000)
    ap.add_argument("--metrics", type=int, default=6)
    ap.add_argument("--resamples", type=int, default=10000)
    ap.add_argument("--reps", type=int, default=3)
    a = ap.parse_args()
    rng = np.random.default_rng(7)
    kind = rng.integers(0, 10, size=(a.queries, a.metrics))
    graded = rng.random((a.queries, a.metrics)) - rng.random((a.queries, a.metrics))
    d = np.where(kind <= 5, 0.0, np.where(kind == 6, 1.0, np.where(kind == 7, -1.0, graded)))
    observed = d.mean(axis=0)
    best = float("inf")
    for _ in range(a.reps):
        t = time.perf_counter()
        boot = np.empty((a.resamples, a.metrics))
        chunk = 500  # bounds memory: 500 x 7000 indices at a time
        for s in range(0, a.resamples, chunk):
            e = min(a.resamples, s + chunk)
            idx = rng.integers(0, a.queries, size=(e - s, a.queries))
            boot[s:e] = d[idx].mean(axis=1)
        null = boot - observed
        p_less = (1 + (null <= observed + 1e-12).sum(axis=0)) / (a.resamples + 1)
        ci = np.percentile(boot, [2.5, 97.5], axis=0)
        best = min(best, time.perf_counter() - t)
    print(json.dumps({"seconds": best, "p_less_first": float(p_less[0]), "ci_first": ci[:, 0].tolist()}))


if __name__ == "__main__":
    main()
