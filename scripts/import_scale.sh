#!/usr/bin/env bash
# Scale of `gold import` and of `eval` on what it writes (issue 41 items 6
# and 7): generates labeling sheets of 10,000 / 20,000 / 100,000 queries,
# 4 rows each, every row graded by a person with 2 opinions (a model's and
# a second person's), imports each into a new gold set, then evaluates a
# run against that gold set (with its provenance) and against the same
# labels without provenance. Prints wall time and peak RSS of each
# (`/usr/bin/time -v`).
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
  /usr/bin/time -v "$@" >/dev/null 2>time.txt || { tail -5 time.txt; echo "$label: failed"; return 0; }
  local wall rss
  wall=$(grep "Elapsed (wall clock)" time.txt | awk '{print $NF}')
  rss=$(grep "Maximum resident set size" time.txt | awk '{print $NF}')
  printf '%-34s %10s s  %8.1f MB\n' "$label" "$wall" "$(echo "$rss / 1024" | bc -l)"
}

for n in $SIZES; do
  python3 - "$n" <<'PY'
import json, sys
n = int(sys.argv[1])
with open(f"sheet{n}.jsonl", "w") as s, open(f"run{n}.jsonl", "w") as r:
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
PY
  measure "import $n queries" "$RGATE" gold import "sheet$n.jsonl" --into "gold$n.yaml"
  # The same labels without provenance.
  python3 - "$n" <<'PY'
import sys
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
PY
  measure "eval $n, with provenance" "$RGATE" eval --gold "gold$n.yaml" --run "run$n.jsonl"
  measure "eval $n, without provenance" "$RGATE" eval --gold "bare$n.yaml" --run "run$n.jsonl"
  rm -f "sheet$n.jsonl" "run$n.jsonl" "gold$n.yaml" "bare$n.yaml"
done
