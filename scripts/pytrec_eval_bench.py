#!/usr/bin/env python3
"""pytrec_eval reference for rgate's benchmark (issue 5).

    python3 scripts/pytrec_eval_bench.py QRELS RUN [--timings] [--mrr-cut 10]

Loads TREC qrels and one TREC run the way pytrec_eval users do (read the lines,
build a dict of dicts), evaluates recall.10,100, P.10, recip_rank, ndcg_cut.10
and map, and prints the means over the evaluated queries as JSON on stdout:
{"recall_10": ..., "recall_100": ..., "P_10": ..., "recip_rank": ...,
 "ndcg_cut_10": ..., "map": ..., "num_q": N}. The whole thing is what the
benchmark times: parsing + evaluation + averaging, as a user pays it.

--timings prints the parse / evaluate / total seconds to stderr.
--mrr-cut K adds "recip_rank_cut_K" (RR counted only when the first relevant
document is within rank K; derived from the per-query recip_rank).
"""

import argparse
import json
import sys
import time

import pytrec_eval

MEASURES = {"recall.10,100", "P.10", "recip_rank", "ndcg_cut.10", "map"}
KEYS = ["recall_10", "recall_100", "P_10", "recip_rank", "ndcg_cut_10", "map"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("qrels")
    ap.add_argument("run")
    ap.add_argument("--timings", action="store_true")
    ap.add_argument("--mrr-cut", type=int, default=0)
    opts = ap.parse_args()

    t0 = time.perf_counter()
    qrel = {}
    with open(opts.qrels) as f:
        for line in f:
            qid, _, docid, rel = line.split()
            qrel.setdefault(qid, {})[docid] = int(rel)
    run = {}
    with open(opts.run) as f:
        for line in f:
            qid, _, docid, _, score, _ = line.split()
            run.setdefault(qid, {})[docid] = float(score)
    t1 = time.perf_counter()

    evaluator = pytrec_eval.RelevanceEvaluator(qrel, MEASURES)
    results = evaluator.evaluate(run)
    t2 = time.perf_counter()

    out = {}
    for key in KEYS:
        out[key] = pytrec_eval.compute_aggregated_measure(
            key, [per_query[key] for per_query in results.values()])
    out["num_q"] = len(results)
    if opts.mrr_cut:
        k = opts.mrr_cut
        vals = [q["recip_rank"] for q in results.values()]
        out[f"recip_rank_cut_{k}"] = sum(v for v in vals if v >= 1.0 / k - 1e-12) / max(1, len(vals))
    t3 = time.perf_counter()
    json.dump(out, sys.stdout)
    sys.stdout.write("\n")
    if opts.timings:
        print(f"pytrec_eval: parse {t1 - t0:.2f} s, evaluate {t2 - t1:.2f} s, "
              f"total {t3 - t0:.2f} s, {len(run)} run queries, {len(qrel)} qrels queries",
              file=sys.stderr)


if __name__ == "__main__":
    main()
