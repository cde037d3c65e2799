#!/usr/bin/env bash
# Reproduces issue 25's figures for a team sharing one gold set (item 1):
#   1. four concurrent `gold import`s of disjoint 1,500-query sheets into one
#      gold file (JSON and YAML), five rounds each: queries kept of 6,000;
#   2. two people labeling one sheet in `gold label` (under tmux) while a
#      `gold suggest` that read the sheet first is still running: grades kept.
# Usage: scripts/team_safety.sh [PATH/TO/rgate]   (default: target/release/rgate)
set -euo pipefail
BIN=$(realpath "${1:-target/release/rgate}")
work=$(mktemp -d)
trap 'tmux -L "rgate-team-$$" kill-server 2>/dev/null || true; rm -rf "$work"' EXIT
cd "$work"

python3 - <<'PY'
import json
for s in range(4):
    with open(f"sheet{s}.jsonl", "w") as f:
        for i in range(1500):
            f.write(json.dumps({"query_id": f"s{s}-q{i}", "query": f"text {s} {i}",
                "stratum": "how-to", "chunk_id": "c1", "text": "t", "grade": 1,
                "source": "person", "labeler": "ana", "verified": True}) + "\n")
PY
for ext in json yaml; do
  for round in 1 2 3 4 5; do
    rm -f "gold.$ext"
    start=$(date +%s.%N)
    for s in 0 1 2 3; do "$BIN" gold import "sheet$s.jsonl" --into "gold.$ext" >/dev/null 2>>import.err & done
    wait
    end=$(date +%s.%N)
    kept=$("$BIN" gold stats --gold "gold.$ext" --format json | python3 -c 'import json,sys; print(json.load(sys.stdin)["queries"])')
    printf 'imports into gold.%s, round %d: %s of 6000 queries kept (%.2f s)\n' "$ext" "$round" "$kept" "$(echo "$end - $start" | bc)"
  done
done

# 20 ungraded rows; bo opens a session first, ana grades rows 1-5 and quits,
# bo skips to rows 6-10 and grades them, then the suggester (which read all
# 20 rows before anyone graded) answers every row, then bo quits.
python3 - <<'PY'
import json
with open("sheet.jsonl", "w") as f:
    for i in range(1, 21):
        f.write(json.dumps({"query_id": f"q{i:02}", "query": "t", "stratum": "s", "chunk_id": "c1",
            "text": "x", "grade": None, "source": None, "labeler": None, "verified": False}) + "\n")
PY
cat > judge.py <<'PY'
import json, os, sys, time
rows = [json.loads(l) for l in sys.stdin]
open("started", "w").close()
while not os.path.exists("go"):
    time.sleep(0.02)
for r in rows:
    print(json.dumps({"query_id": r["query_id"], "chunk_id": r["chunk_id"], "grade": 1}))
PY
"$BIN" gold suggest sheet.jsonl --timeout-s 60 --command python3 judge.py 2>suggest.err &
suggester=$!
while [ ! -f started ]; do sleep 0.05; done
T="tmux -L rgate-team-$$"
$T new-session -d -s bo -x 100 -y 30 "env NO_COLOR=1 $BIN gold label --labeler bo sheet.jsonl"
sleep 0.5
$T new-session -d -s ana -x 100 -y 30 "env NO_COLOR=1 $BIN gold label --labeler ana sheet.jsonl"
sleep 0.5
for _ in 1 2 3 4 5; do $T send-keys -t ana -l 2; sleep 0.3; done
$T send-keys -t ana -l q; sleep 0.5
for _ in 1 2 3 4 5; do $T send-keys -t bo -l s; sleep 0.2; done
for _ in 1 2 3 4 5; do $T send-keys -t bo -l 3; sleep 0.3; done
touch go
wait "$suggester"
$T send-keys -t bo -l q; sleep 0.5
python3 - <<'PY'
import json
rows = [json.loads(l) for l in open("sheet.jsonl")]
n = lambda f: sum(1 for r in rows if f(r))
print(f"one sheet, two labelers and a suggester: ana kept {n(lambda r: r['labeler'] == 'ana')} of 5, "
      f"bo kept {n(lambda r: r['labeler'] == 'bo')} of 5, "
      f"model {n(lambda r: r['source'] == 'model')} of the 10 rows nobody graded")
PY
tail -n 1 suggest.err
