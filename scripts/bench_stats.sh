#!/usr/bin/env bash
# The bootstrap kernel against numpy in the same run: 7,000 queries x 6
# metrics x 10,000 resamples, indices drawn once per resample for all
# metrics on both sides. Best of 3 wall times each, in process (no startup).
#
# Usage: scripts/bench_stats.sh     (installs numpy with pip when missing)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
PY="${PYTHON:-python3}"
"$PY" -c "import numpy" 2>/dev/null || "$PY" -m pip install --quiet numpy
cargo build --release --quiet --example bench_stats
rg_line=$(target/release/examples/bench_stats 2 | grep "8 strata, micro")
rg_s=$(printf '%s\n' "$rg_line" | sed -E 's/.*: ([0-9.]+)(ms|s)$/\1 \2/' | awk '{ print ($2 == "ms") ? $1 / 1000 : $1 }')
np_s=$("$PY" scripts/numpy_bootstrap_bench.py | "$PY" -c "import json,sys; print(json.load(sys.stdin)['seconds'])")
echo "| kernel: bootstrap 7000 x 6 x 10000 | wall s |"
echo "|---|---:|"
printf '| numpy (indices once per resample, chunked) | %.3f |\n' "$np_s"
printf '| rgate::stats::bootstrap (2 threads, 8 strata) | %.3f |\n' "$rg_s"
awk -v a="$np_s" -v b="$rg_s" 'BEGIN { printf "\nrgate is %.1fx faster than numpy on this machine.\n", a / b }'
