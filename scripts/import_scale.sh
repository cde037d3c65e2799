#!/usr/bin/env bash
# Scale of the gold set tools on large inputs (issue 41 items 10-12):
# generates labeling sheets of 10,000 / 20,000 / 100,000 queries, 4 rows
# each, every row graded by a person with 2 opinions (a model's and a
# second person's), and measures, for each size:
#   - `gold import` of the sheet into a new gold set, and again into the
#     gold set it wrote (every label unchanged: reads a large gold set);
#   - `eval` of a run against that gold set: with its provenance (block
#     style, as rgate writes it), without provenance, with the provenance
#     written by hand in flow style (each query a JSON-like flow map over
#     two lines), and as JSON and JSONL gold sets;
#   - `eval --curve recall@1..1000` (1,000 cutoffs on every query);
#   - `gold agreement` on the sheet (4 rows a query);
#   - `gate --format html` of a run that loses half the queries (n/2
#     flips), with the size of the page.
# Prints wall time, CPU time (user + sys: on a shared machine the wall
# time follows the load) and peak RSS of each (`/usr/bin/time -v`).
#
#   scripts/import_scale.sh [RGATE] [SIZES...]
#   scripts/import_scale.sh target/release/rgate 10000 20000 100000
set -euo pipefail
RGATE=${1:-target/release/rgate}
shift || true
SIZES=${*:-10000 20000 100000}
RGATE=$(cd "$(dirname "$RGATE")" && pwd)/$(basename "$RGATE")
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"

measure() { # label, command...
  local label=$1; shift
  /usr/bin/time -v "$@" >/dev/null 2>time.txt || {
    # exit 1 is a verdict (a gate that failed), not a failure to run.
    if ! grep -q "Exit status: 1$" time.txt; then tail -5 time.txt; echo "$label: failed"; return 0; fi
  }
  local wall cpu rss
  wall=$(grep "Elapsed (wall clock)" time.txt | awk '{print $NF}')
  cpu=$(awk -F': ' '/User time|System time/ {s += $2} END {printf "%.2f", s}' time.txt)
  rss=$(grep "Maximum resident set size" time.txt | awk '{print $NF}')
  printf '%-40s %10s s wall  %7s s CPU  %8.1f MB\n' "$label" "$wall" "$cpu" "$(echo "$rss / 1024" | bc -l)"
}

for n in $SIZES; do
  python3 - "$n" <<'PY'
import json, sys
n = int(sys.argv[1])
with open(f"sheet{n}.jsonl", "w") as s, open(f"run{n}.jsonl", "w") as r, open(f"flip{n}.jsonl", "w") as fl:
    for q in range(n):
        qid = f"q{q:06d}"
        for c in range(4):
            g = (q + c) % 4
            s.write(json.dumps({
                "query_id": qid, "query": f"text of query {q}", "stratum": f"s{q % 5}",
                "chunk_id": f"doc{q}.md#{c}", "text": f"chunk {c} of document {q}",
                "grade": g, "source": "person", "labeler": "ana", "verified": True,
                "labeled_at": "2026-11-30T10:00:00Z",
                "opinions": [
                    {"grade": (g + 1) % 4, "source": "model", "labeler": "gpt-4o", "prompt": "ab12", "labeled_at": "2026-11-29T10:00:00Z"},
                    {"grade": g, "source": "person", "labeler": "bo", "labeled_at": "2026-11-30T11:00:00Z"},
                ],
            }) + "\n")
        r.write(json.dumps({"query_id": qid, "results": [f"doc{q}.md#{c}" for c in (3, 0, 2, 1)]}) + "\n")
        # Every other query loses all its relevant chunks: n/2 flips.
        lost = [f"other{q}.md#{c}" for c in range(4)]
        fl.write(json.dumps({"query_id": qid, "results": lost if q % 2 == 0 else [f"doc{q}.md#{c}" for c in (3, 0, 2, 1)]}) + "\n")
PY
  measure "import $n queries" "$RGATE" gold import "sheet$n.jsonl" --into "gold$n.yaml"
  cp "gold$n.yaml" "again$n.yaml"
  measure "import $n again (all unchanged)" "$RGATE" gold import "sheet$n.jsonl" --into "again$n.yaml"
  # The same labels without provenance; with it in flow style; as JSON.
  python3 - "$n" <<'PY'
import json, sys
n = sys.argv[1]
with open(f"gold{n}.yaml") as f, open(f"bare{n}.yaml", "w") as out:
    skip = False
    for line in f:
        if line.startswith("  provenance:"):
            skip = True
            continue
        if skip and line.startswith("    "):
            continue
        skip = False
        out.write(line)
# The gold set as data (the sheet says it all), then written out again.
queries = {}
for line in open(f"sheet{n}.jsonl"):
    r = json.loads(line)
    q = queries.setdefault(r["query_id"], {"id": r["query_id"], "text": r["query"], "stratum": r["stratum"], "relevant": {}, "provenance": {}})
    q["relevant"][r["chunk_id"]] = r["grade"]
    q["provenance"][r["chunk_id"]] = {"source": r["source"], "labeler": r["labeler"], "at": r["labeled_at"], "verified": r["verified"],
        "opinions": [{"grade": o["grade"], "source": o["source"], "labeler": o["labeler"], "at": o["labeled_at"]} for o in r["opinions"]]}
with open(f"flow{n}.yaml", "w") as out:
    out.write("version: 1\nqueries:\n")
    for q in queries.values():
        p = q.pop("provenance")
        out.write("- " + json.dumps(q)[:-1] + ",\n  \"provenance\": " + json.dumps(p) + "}\n")
        q["provenance"] = p
with open(f"gold{n}.json", "w") as out:
    json.dump({"version": 1, "queries": list(queries.values())}, out, indent=2)
with open(f"gold{n}.jsonl", "w") as out:
    for q in queries.values():
        out.write(json.dumps(q) + "\n")
PY
  measure "eval $n, with provenance" "$RGATE" eval --gold "gold$n.yaml" --run "run$n.jsonl"
  measure "eval $n, without provenance" "$RGATE" eval --gold "bare$n.yaml" --run "run$n.jsonl"
  measure "eval $n, provenance in flow style" "$RGATE" eval --gold "flow$n.yaml" --run "run$n.jsonl"
  measure "eval $n, JSON with provenance" "$RGATE" eval --gold "gold$n.json" --run "run$n.jsonl"
  measure "eval $n, JSONL with provenance" "$RGATE" eval --gold "gold$n.jsonl" --run "run$n.jsonl"
  measure "eval $n --curve recall@1..1000" "$RGATE" eval --gold "bare$n.yaml" --run "run$n.jsonl" --curve "recall@1..1000"
  measure "gold agreement, $((4 * n)) rows" "$RGATE" gold agreement "sheet$n.jsonl"
  mkdir -p "base$n"
  cat > "cfg$n.yaml" <<EOF
gold: bare$n.yaml
baselines: base$n
metrics: [recall@10]
retrievers:
  - name: r
    run: run$n.jsonl
gate:
  resamples: 1000
EOF
  "$RGATE" baseline update --config "cfg$n.yaml" >/dev/null 2>&1 || echo "baseline update $n failed"
  measure "gate $n, $((n / 2)) flips, HTML" "$RGATE" gate --config "cfg$n.yaml" --run "r=flip$n.jsonl" --format html --output "gate$n.html"
  printf '%-40s %10s\n' "  HTML page, $((n / 2)) flips" "$(du -h "gate$n.html" | cut -f1)"
  rm -rf "sheet$n.jsonl" "run$n.jsonl" "flip$n.jsonl" gold"$n".* "again$n.yaml" "bare$n.yaml" "flow$n.yaml" "base$n" "cfg$n.yaml" "gate$n.html"
done
