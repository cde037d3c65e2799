#!/usr/bin/env python3
"""Generate the demo's two-stage retriever: a reranker over hybrid's top 20.

Reads config/demo/gold.yaml and config/demo/runs/hybrid.jsonl (written by
scripts/make_demo.py) and writes, under config/demo/runs/:

  reranked.jsonl            the reranker's top 10 of hybrid's 20 candidates
  reranked-regressed.jsonl  the same reranker after a change that stops it
                            matching identifiers exactly

`hybrid.jsonl` itself is the candidate list (`candidates:` in
config/rgate.yaml): the reranker only reorders it, so every final result is
one of its candidates.

Why the data looks the way it does:

- The reranker is simulated, like the runs of make_demo.py: a candidate's
  score is its first-stage rank (a weak prior), plus a boost for chunks the
  gold set grades relevant (a cross-encoder reads the passage, so it mostly
  recognises the answer), plus noise. It lifts most reachable answers into
  the top 3, but not all: its final/ceiling ratio stays below 1.
- The regressed reranker lost its exact-identifier matching (a tokenizer
  normalising "LMN-4031" to "lmn 4031"): on identifier lookups the boost is
  gone and the noise grows, so answers that are among the candidates drop
  below rank 3. The candidates do not change, so every lost query is lost
  in the rerank, and the gate says so.

Standard library only, fixed seed: re-running reproduces the files byte for
byte.

    python3 scripts/make_demo_reranked.py [--demo DIR]
"""

from __future__ import annotations

import argparse
import json
import math
import random
from pathlib import Path

SEED = 20261130
DEPTH = 10


def read_gold(path: Path) -> list[dict]:
    """The generated gold.yaml: `- id:`, `stratum:` and `relevant:` lines,
    each `relevant` value a JSON list (grade 1) or map (grades)."""
    queries: list[dict] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        s = line.strip()
        if s.startswith("- id: "):
            queries.append({"id": s[len("- id: "):]})
        elif s.startswith("stratum: ") and queries:
            queries[-1]["stratum"] = s[len("stratum: "):]
        elif s.startswith("relevant: ") and queries:
            rel = json.loads(s[len("relevant: "):])
            queries[-1]["grades"] = rel if isinstance(rel, dict) else {c: 1 for c in rel}
    return queries


def rerank(rng: random.Random, q: dict, candidates: list[dict], broken: bool) -> list[dict]:
    lookup = q["stratum"] == "identifier-lookup"
    boost, noise = (0.0, 1.2) if broken and lookup else (1.6, 0.7)
    scored = []
    for rank, c in enumerate(candidates, start=1):
        grade = q["grades"].get(c["id"], 0)
        s = -0.6 * math.log(rank) + boost * max(grade, 0) + rng.gauss(0.0, noise)
        scored.append((s, rank, c["id"]))
    scored.sort(key=lambda t: (-t[0], t[1]))
    return [{"id": cid, "score": round(1.0 / (1.0 + math.exp(-s)), 4)} for s, _, cid in scored[:DEPTH]]


def write(path: Path, gold: list[dict], run: dict[str, list]) -> None:
    lines = [json.dumps({"query_id": q["id"], "results": run[q["id"]]}) for q in gold]
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write("\n".join(lines) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    root = Path(__file__).resolve().parent.parent
    parser.add_argument("--demo", type=Path, default=root / "config" / "demo",
                        help="the demo directory (default: config/demo)")
    args = parser.parse_args()
    gold = read_gold(args.demo / "gold.yaml")
    hybrid = {}
    for line in (args.demo / "runs" / "hybrid.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        hybrid[row["query_id"]] = row["results"]
    for name, broken in [("reranked", False), ("reranked-regressed", True)]:
        # One stream per file, drawn in gold order: the regressed run differs
        # from the good one only where the change bites.
        rng = random.Random(SEED)
        run = {q["id"]: rerank(rng, q, hybrid[q["id"]], broken) for q in gold}
        write(args.demo / "runs" / f"{name}.jsonl", gold, run)
    print(f"wrote reranked runs for {len(gold)} queries to {args.demo / 'runs'}")


if __name__ == "__main__":
    main()
