#!/usr/bin/env python3
"""Generate the demo's chunk-size sweep: the hybrid run at three chunkings.

The demo's chunk ids (`docs/auth.md#3`) are taken to be 400-character
chunks: chunk i of a file covers characters [400 i, 400 i + 400). This
script writes, under config/demo/sweep/:

  chunks-400.jsonl   the chunk map of that chunking ({id, doc, start, end})
  chunks-200.jsonl   the same files cut into 200-character chunks
  chunks-800.jsonl   ... and into 800-character chunks
  runs/c200.jsonl    hybrid's ranking at 200 characters: each 400 chunk
                     becomes its two halves, in place, cut to the top 20
  runs/c800.jsonl    ... at 800 characters: each 400 chunk becomes the 800
                     chunk holding it, first occurrence kept, top 20

(runs/hybrid.jsonl is the 400 chunking's run.) The retriever's judgement is the same at every size; only the unit it
returns changes, which is what a chunk-size sweep varies: small chunks put
fewer answers in a top 20 (each answer takes two slots), large ones put
more text, and so more answers, in each slot. The README's "Tuning knobs"
walks through comparing them with span labels (`rgate gold migrate` with
chunks-400.jsonl turns the gold set's chunk ids into the spans each id
covers, which every chunking can be judged against).

Only the standard library; re-running it reproduces the files byte for
byte:

    python3 scripts/make_demo_sweep.py
"""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_demo import chunk_universe  # noqa: E402

BASE = 400


def chunk_map(by_doc: dict[str, list[str]], size: int) -> list[dict]:
    """Every file cut into chunks of `size` characters (the file's length is
    its number of 400-character chunks times 400)."""
    out = []
    for doc, ids in by_doc.items():
        length = len(ids) * BASE
        for j in range((length + size - 1) // size):
            cid = f"{doc}#{j}" if size == BASE else f"{doc}~{size}#{j}"
            out.append({"id": cid, "doc": doc, "start": j * size, "end": min(length, (j + 1) * size)})
    return out


def rechunk(results: list[dict], size: int, depth: int) -> list[dict]:
    """A ranking of 400 chunks as the same retriever's ranking of `size`
    chunks: each result becomes the chunks holding its text, in place, the
    first occurrence of each kept; scores carry over; cut at `depth`."""
    out: list[dict] = []
    seen: set[str] = set()
    for r in results:
        doc, _, n = r["id"].partition("#")
        i = int(n)
        first, last = (i * BASE) // size, ((i + 1) * BASE - 1) // size
        for j in range(first, last + 1):
            cid = f"{doc}~{size}#{j}"
            if cid not in seen:
                seen.add(cid)
                out.append({"id": cid, "score": r["score"]})
    return out[:depth]


def write_jsonl(path: str, rows: list[dict]) -> None:
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        for row in rows:
            f.write(json.dumps(row) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    here = os.path.dirname(os.path.abspath(__file__))
    demo = os.path.join(here, "..", "config", "demo")
    parser.add_argument("--demo", default=demo, help="the demo directory (default: config/demo)")
    args = parser.parse_args()
    out = os.path.join(args.demo, "sweep")
    os.makedirs(os.path.join(out, "runs"), exist_ok=True)
    _, by_doc, _ = chunk_universe()
    for size in (200, 400, 800):
        write_jsonl(os.path.join(out, f"chunks-{size}.jsonl"), chunk_map(by_doc, size))
    with open(os.path.join(args.demo, "runs", "hybrid.jsonl"), encoding="utf-8") as f:
        hybrid = [json.loads(line) for line in f if line.strip()]
    for size in (200, 800):
        rows = [{"query_id": q["query_id"], "results": rechunk(q["results"], size, 20)} for q in hybrid]
        write_jsonl(os.path.join(out, "runs", f"c{size}.jsonl"), rows)


if __name__ == "__main__":
    main()
