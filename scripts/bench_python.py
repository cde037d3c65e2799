#!/usr/bin/env python3
"""The Python module's benchmark (issue 28, item 10), beside scripts/bench.sh.

    python3 scripts/bench_python.py [--sizes 7M,70kq] [--repeat 3]

Run it in a venv where the wheel is installed (`pip install .`, or the
wheel `.ci/run` builds) with pytrec_eval-terrier (and ranx, if you want its
row). It reuses scripts/gen_bench_data.py's data in target/bench-data
(generated once, as bench.sh does) and prints, for each size, the smallest
wall time of `--repeat` runs and the ratios between tools measured in the
same run. It never asserts a time.

- 7M (a 7,000-query x 1,000-result TREC run): `rgate eval` (the command,
  a process) against `rgate.evaluate(path)` (in process), same files and
  metrics. The issue asks the second within 1.2x of the first.
- 70kq (70,000 queries x 100 results): the run and qrels loaded into
  Python dicts first (untimed, as a notebook holds them), then
  `rgate.evaluate(dict, dict)` against pytrec_eval's `RelevanceEvaluator`
  (construction included) and, when installed, ranx's `evaluate` warm (its
  numba functions compiled by a first, untimed call). The issue asks rgate
  at least 2x faster than pytrec_eval and faster than ranx warm.
"""

import argparse
import os
import pathlib
import shutil
import subprocess
import sys
import time

REPO = pathlib.Path(__file__).resolve().parents[1]
METRICS = "recall@10,recall@100,P@10,RR,nDCG@10,AP"
PYTREC = {"recall_10", "recall_100", "P_10", "recip_rank", "ndcg_cut_10", "map"}
RANX = ["recall@10", "recall@100", "precision@10", "mrr", "ndcg@10", "map"]


def data(size):
    out = REPO / "target" / "bench-data" / size
    args = ["--queries", "70000", "--depth", "100"] if size == "70kq" else ["--lines", size]
    subprocess.run([sys.executable, str(REPO / "scripts" / "gen_bench_data.py"), *args, "--out", str(out)], check=True)
    return out / "qrels.txt", out / "run_a.trec"


def best(fn, repeat):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def read_qrels(path):
    out = {}
    with open(path) as f:
        for line in f:
            q, _, d, g = line.split()
            out.setdefault(q, {})[d] = int(g)
    return out


def read_run(path):
    out = {}
    with open(path) as f:
        for line in f:
            q, _, d, _, s, _ = line.split()
            out.setdefault(q, {})[d] = float(s)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="7M,70kq")
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    import rgate

    cli = shutil.which("rgate")
    rows = []
    for size in a.sizes.split(","):
        qrels, run = data(size)
        if size != "70kq":
            cmd = [cli, "eval", "--gold", str(qrels), "--run", str(run), "--metrics", METRICS, "--format", "json"]
            t_cli = best(lambda: subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL), a.repeat)
            t_py = best(lambda: rgate.evaluate(str(qrels), str(run), METRICS), a.repeat)
            rows.append((size, "rgate eval (command)", t_cli, 1.0))
            rows.append((size, "rgate.evaluate(path)", t_py, t_py / t_cli))
            continue
        q, r = read_qrels(qrels), read_run(run)
        t_rg = best(lambda: rgate.evaluate(q, r, METRICS), a.repeat)
        rows.append((size, "rgate.evaluate(dicts)", t_rg, 1.0))
        try:
            import pytrec_eval

            t_pt = best(lambda: pytrec_eval.RelevanceEvaluator(q, PYTREC).evaluate(r), a.repeat)
            rows.append((size, "pytrec_eval RelevanceEvaluator + evaluate", t_pt, t_pt / t_rg))
        except ImportError:
            rows.append((size, "pytrec_eval: not installed", float("nan"), float("nan")))
        try:
            import ranx

            rq, rr = ranx.Qrels(q), ranx.Run(r)
            ranx.evaluate(rq, rr, RANX)  # compiles its numba functions
            t_rx = best(lambda: ranx.evaluate(rq, rr, RANX), a.repeat)
            rows.append((size, "ranx evaluate (warm)", t_rx, t_rx / t_rg))
        except ImportError:
            rows.append((size, "ranx: not installed", float("nan"), float("nan")))
    print(f"rgate {rgate.__version__}, Python {sys.version.split()[0]}, {os.cpu_count()} cores, best of {a.repeat}")
    print("| size | tool | wall s | ratio to the size's first row |")
    print("|---|---|---|---|")
    for size, tool, t, ratio in rows:
        print(f"| {size} | {tool} | {t:.3f} | {ratio:.2f} |")


if __name__ == "__main__":
    main()
