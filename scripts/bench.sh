#!/usr/bin/env bash
# rgate performance benchmark (issue 5): `rgate eval` and `rgate compare`
# against pytrec_eval (and trec_eval when one is on PATH), on the same files
# and the same six measures, in the same run.
#
# Usage:
#   cargo build --release            # build rgate first (this script does not)
#   scripts/bench.sh [SIZE ...]      # default "1M 7M 70kq"; 28M optional
#
# A size is run lines (1M, 7M, 28M: 1,000 results per query), or NNkq for the
# many-small-queries case (70kq: 70,000 queries x 100 results, ~525k qrels
# lines; issue 17).
#
# For each size it generates (once; cached with a stamp) qrels and two paired
# runs with scripts/gen_bench_data.py, then times, each under /usr/bin/time -v:
#   pytrec_eval     scripts/pytrec_eval_bench.py qrels run_a (parse + evaluate)
#   rgate eval      --gold qrels --run run_a --metrics M --format json
#   rgate compare   --gold qrels run_a run_b --metrics M --resamples B --format json
#   rgate gate      run_b against a baseline of run_a (config with the six
#                   measures, B resamples; the baseline is recorded untimed)
#   rgate baseline update   run_a recorded again over that baseline
#   trec_eval       -m recall.10,100 -m P.10 -m recip_rank -m ndcg_cut.10 -m map (if on PATH)
#   trec_eval all_trec / rgate eval all_trec: every trec_eval measure, both
#                   (with trec_eval); their outputs are compared byte for byte
#   rgate eval (before): the six measures with RGATE_BEFORE_BIN, an earlier
#                   build, to show a change kept the speed
# with M = recall@10,recall@100,P@10,RR,nDCG@10,AP. Each is run BENCH_REPEAT
# times: the table shows the smallest wall time and the largest peak RSS
# ("Maximum resident set size"), and the ratios to pytrec_eval. Wall time is
# taken with a microsecond clock around the command; /usr/bin/time's
# "Elapsed (wall clock) time" (10 ms resolution) is kept in results.tsv.
# The files are read once before timing, so every tool starts from a warm
# page cache. It also checks (and reports, never fails on) whether rgate's
# means equal pytrec_eval's to 4 decimals.
#
# Environment:
#   TREC_EVAL        trec_eval binary (default: trec_eval on PATH)
#   RGATE_BEFORE_BIN an earlier rgate build, timed beside this one
#   RGATE_BIN        rgate binary (default <repo>/target/release/rgate); when it
#                    is missing the rgate rows say "rgate: not built"
#   BENCH_BUILD=1    with RGATE_BIN unset: run `cargo build --release` first
#   BENCH_DIR        data and results (default <repo>/target/bench-data);
#                    writes BENCH_DIR/results.md and BENCH_DIR/results.tsv
#   BENCH_REPEAT     runs per measurement (default 3)
#   BENCH_RESAMPLES  bootstrap resamples for compare (default 10000)
#   PYTHON           Python interpreter (default python3); pytrec-eval-terrier
#                    is pip-installed into it when missing
#
# Needs GNU time (/usr/bin/time; Debian package `time`), python3, awk.
# Runtime for the default sizes on 2 cores: data generation ~20 s the first
# time, then pytrec_eval dominates (3 x ~12 s at 7M lines).
set -euo pipefail
export LC_ALL=C

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PY="${PYTHON:-python3}"
REPEAT="${BENCH_REPEAT:-3}"
RESAMPLES="${BENCH_RESAMPLES:-10000}"
METRICS="recall@10,recall@100,P@10,RR,nDCG@10,AP"
BENCH_DIR="${BENCH_DIR:-$REPO/target/bench-data}"
mkdir -p "$BENCH_DIR"
BENCH_DIR="$(cd "$BENCH_DIR" && pwd)"
SIZES=("$@")
[[ ${#SIZES[@]} -gt 0 ]] || SIZES=(1M 7M 70kq)

log() { printf '%s\n' "$*" >&2; }
die() { log "bench.sh: $*"; exit 2; }

[[ -x /usr/bin/time ]] || die "/usr/bin/time (GNU time) is missing: apt-get install time"
[[ "$REPEAT" =~ ^[1-9][0-9]*$ ]] || die "BENCH_REPEAT must be a positive integer, got '$REPEAT'"

# --- rgate -------------------------------------------------------------------
if [[ -z "${RGATE_BIN+x}" && "${BENCH_BUILD:-0}" == 1 ]]; then
    log "bench.sh: cargo build --release in $REPO"
    (cd "$REPO" && cargo build --release)
fi
RGATE_BIN="${RGATE_BIN:-$REPO/target/release/rgate}"
RGATE_OK=0
RGATE_VERSION="not built"
if [[ -x "$RGATE_BIN" && -f "$RGATE_BIN" ]]; then
    RGATE_OK=1
    RGATE_VERSION="$("$RGATE_BIN" --version 2>/dev/null | head -n1 || true)"
    [[ -n "$RGATE_VERSION" ]] || RGATE_VERSION="$RGATE_BIN"
else
    log "bench.sh: no rgate binary at $RGATE_BIN (build with: cargo build --release); rgate rows will say so"
fi

# --- pytrec_eval ---------------------------------------------------------------
PYTREC_OK=1
if ! "$PY" -c 'import pytrec_eval' 2>/dev/null; then
    log "bench.sh: installing pytrec-eval-terrier"
    if ! PIP_ROOT_USER_ACTION=ignore "$PY" -m pip install -q --disable-pip-version-check pytrec-eval-terrier >&2 \
        || ! "$PY" -c 'import pytrec_eval' 2>/dev/null; then
        log "bench.sh: pytrec_eval unavailable; its rows and the ratios will be missing"
        PYTREC_OK=0
    fi
fi

TREC_EVAL="${TREC_EVAL:-$(command -v trec_eval || true)}"
RGATE_BEFORE_BIN="${RGATE_BEFORE_BIN:-}"

# --- measurement -----------------------------------------------------------------
TSV="$BENCH_DIR/results.tsv"
printf 'size\ttool\tstatus\twall_s_min\tmax_rss_kb\twall_s_all\telapsed_s_all\toutput\n' >"$TSV"
TMPD="$(mktemp -d)"
trap 'rm -rf "$TMPD"' EXIT

now() { if [[ -n "${EPOCHREALTIME:-}" ]]; then printf '%s' "$EPOCHREALTIME"; else date +%s.%N; fi; }

# measure SIZE TOOL OUTFILE CMD...: REPEAT runs under /usr/bin/time -v; one TSV row
measure() {
    local size=$1 tool=$2 out=$3
    shift 3
    local i rc t0 t1 wall el rss walls=() els=() rss_max=0 status=ok
    for ((i = 1; i <= REPEAT; i++)); do
        t0=$(now)
        rc=0
        /usr/bin/time -v -o "$TMPD/time.txt" "$@" >"$out" 2>"$out.stderr" || rc=$?
        t1=$(now)
        # MAX_OK_EXIT: the gate's exit 1 is a verdict (fail), not an error.
        if ((rc > ${MAX_OK_EXIT:-0})); then
            status="failed (exit $rc)"
            log "bench.sh: [$size] $tool failed (exit $rc): $*"
            tail -n 5 "$out.stderr" | sed 's/^/    /' >&2 || true
            break
        fi
        wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
        el=$(awk -F': ' '/Elapsed \(wall clock\) time/ {
                n = split($2, p, ":"); s = 0
                for (k = 1; k <= n; k++) s = s * 60 + p[k]
                printf "%.2f", s }' "$TMPD/time.txt")
        rss=$(awk -F': ' '/Maximum resident set size/ { print $2 + 0 }' "$TMPD/time.txt")
        rss=${rss:-0}
        walls+=("$wall")
        els+=("${el:-?}")
        ((rss > rss_max)) && rss_max=$rss
        log "bench.sh: [$size] $tool run $i/$REPEAT: ${wall} s, $((rss / 1024)) MiB"
    done
    # The minimum: the run least disturbed by anything else on the machine.
    local med=""
    if ((${#walls[@]} > 0)); then
        med=$(printf '%s\n' "${walls[@]}" | sort -g | head -n1)
    fi
    local IFS=,
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$size" "$tool" "$status" "$med" "$rss_max" \
        "${walls[*]}" "${els[*]}" "$out" >>"$TSV"
}

skip_row() { printf '%s\t%s\t%s\t\t\t\t\t\n' "$1" "$2" "$3" >>"$TSV"; }

for size in "${SIZES[@]}"; do
    dir="$BENCH_DIR/$size"
    if [[ "$size" =~ ^([0-9]+k?)q$ ]]; then
        "$PY" "$REPO/scripts/gen_bench_data.py" --queries "${BASH_REMATCH[1]}" --depth 100 --out "$dir"
    else
        "$PY" "$REPO/scripts/gen_bench_data.py" --lines "$size" --out "$dir"
    fi
    out="$dir/out"
    mkdir -p "$out"
    qrels="$dir/qrels.txt" run_a="$dir/run_a.trec" run_b="$dir/run_b.trec"
    cat "$qrels" "$run_a" "$run_b" >/dev/null   # warm the page cache

    if ((PYTREC_OK)); then
        measure "$size" "pytrec_eval" "$out/pytrec_a.json" "$PY" "$REPO/scripts/pytrec_eval_bench.py" "$qrels" "$run_a"
    else
        skip_row "$size" "pytrec_eval" "pytrec_eval: not installed"
    fi
    if ((RGATE_OK)); then
        measure "$size" "rgate eval" "$out/rgate_eval.json" \
            "$RGATE_BIN" eval --gold "$qrels" --run "$run_a" --metrics "$METRICS" --format json
        measure "$size" "rgate compare" "$out/rgate_compare.json" \
            "$RGATE_BIN" compare --gold "$qrels" "$run_a" "$run_b" --metrics "$METRICS" \
            --resamples "$RESAMPLES" --format json
        if ((PYTREC_OK)) && [[ ! -s "$out/pytrec_b.json" || "$out/pytrec_b.json" -ot "$run_b" ]]; then
            # untimed: run_b's means, to check compare's "current" column
            "$PY" "$REPO/scripts/pytrec_eval_bench.py" "$qrels" "$run_b" >"$out/pytrec_b.json" || rm -f "$out/pytrec_b.json"
        fi
        # The gate on a baseline of this gold set: run_a recorded (untimed,
        # from scratch), then run_b gated against it, and run_a recorded
        # again over the existing baseline (the update path re-reads it).
        gdir="$dir/gate"
        rm -rf "$gdir"
        mkdir -p "$gdir"
        cat >"$gdir/rgate.yaml" <<EOF
gold: $qrels
baselines: $gdir/baselines
metrics: [${METRICS//,/, }]
retrievers:
  - name: bench
    run: $run_a
gate:
  resamples: $RESAMPLES
EOF
        if "$RGATE_BIN" baseline update --config "$gdir/rgate.yaml" --quiet >"$gdir/update.out" 2>&1; then
            MAX_OK_EXIT=1 measure "$size" "rgate gate" "$out/rgate_gate.json" \
                "$RGATE_BIN" gate --config "$gdir/rgate.yaml" --run "bench=$run_b" --format json
            measure "$size" "rgate baseline update" "$out/rgate_update.txt" \
                "$RGATE_BIN" baseline update --config "$gdir/rgate.yaml" --quiet
            bytes=$(wc -c <"$gdir/baselines/bench.json")
            skip_row "$size" "baseline file" "$(awk -v b="$bytes" 'BEGIN { printf "%.1f MB", b / 1e6 }')"
        else
            log "bench.sh: [$size] baseline update failed:"
            tail -n 5 "$gdir/update.out" | sed 's/^/    /' >&2 || true
            skip_row "$size" "rgate gate" "baseline update failed"
        fi
    else
        skip_row "$size" "rgate eval" "rgate: not built"
        skip_row "$size" "rgate compare" "rgate: not built"
        skip_row "$size" "rgate gate" "rgate: not built"
    fi
    if [[ -n "$RGATE_BEFORE_BIN" ]]; then
        measure "$size" "rgate eval (before)" "$out/rgate_eval_before.json" \
            "$RGATE_BEFORE_BIN" eval --gold "$qrels" --run "$run_a" --metrics "$METRICS" --format json
    fi
    if [[ -n "$TREC_EVAL" ]]; then
        measure "$size" "trec_eval" "$out/trec_eval.txt" "$TREC_EVAL" -m recall.10,100 -m P.10 \
            -m recip_rank -m ndcg_cut.10 -m map "$qrels" "$run_a"
        # Every measure trec_eval has (issue 30): both print the same lines,
        # so their outputs are compared byte for byte below.
        measure "$size" "trec_eval all_trec" "$out/trec_eval_all.txt" "$TREC_EVAL" -m all_trec "$qrels" "$run_a"
        if ((RGATE_OK)); then
            measure "$size" "rgate eval all_trec" "$out/rgate_eval_all.txt" \
                "$RGATE_BIN" eval --gold "$qrels" --run "$run_a" --metrics all_trec --names trec_eval --format trec
        fi
    fi
done

# --- report ------------------------------------------------------------------------
HEADER="rgate benchmark, $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) CPUs ($(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null || echo unknown CPU)), rgate: $RGATE_VERSION, compare B=$RESAMPLES, $REPEAT runs each (min wall, max peak RSS); load before: $(cut -d' ' -f1-3 /proc/loadavg), metrics $METRICS"
"$PY" - "$TSV" "$BENCH_DIR/results.md" "$HEADER" <<'PYEOF'
import csv, json, math, re, sys

tsv, md_path, header = sys.argv[1:4]
rows = list(csv.DictReader(open(tsv), delimiter="\t"))
sizes = list(dict.fromkeys(r["size"] for r in rows))


def size_lines(s):
    t = s.lower()
    m = {"m": 1e6, "k": 1e3}.get(t[-1:], 1)
    try:
        return float(t.rstrip("mk")) * m
    except ValueError:
        return float("nan")


def num(x):
    try:
        return float(x)
    except (TypeError, ValueError):
        return None


by = {(r["size"], r["tool"]): r for r in rows}
out = [f"# {header}", "",
       "| size | tool | wall s | peak MiB | time vs pytrec_eval | memory vs pytrec_eval | target |",
       "|---|---|---:|---:|---|---|---|"]
for r in rows:
    size, tool = r["size"], r["tool"]
    wall, rss = num(r["wall_s_min"]), num(r["max_rss_kb"])
    # Issue 17 sets the gate, compare and baseline-file targets on the
    # 7,000-query (1,000-deep) case; the many-small-queries case has an
    # eval target only, so its other rows are measured, not judged.
    small = size.endswith("q")
    if tool == "baseline file":
        mb = num(r["status"].split()[0])
        ok = "ok" if mb is not None and mb <= 20 else "MISSED"
        target = "" if small else f"{ok} (<=20 MB)"
        out.append(f"| {size} | {tool} | {r['status']} | | | | {target} |")
        continue
    if r["status"] != "ok" or wall is None:
        out.append(f"| {size} | {tool} | {r['status']} | | | | |")
        continue
    mib = rss / 1024
    ref = by.get((size, "pytrec_eval"))
    tr = mr = ""
    tratio = None
    if ref and ref["status"] == "ok" and tool != "pytrec_eval":
        pw, pr = num(ref["wall_s_min"]), num(ref["max_rss_kb"])
        tratio = pw / wall if wall > 0 else math.inf
        tr = f"{tratio:.1f}x faster" if tratio >= 1 else f"{1 / tratio:.1f}x slower"
        m = pr / rss if rss > 0 else math.inf
        mr = "same" if 0.95 <= m <= 1.05 else f"{m:.1f}x less" if m >= 1 else f"{1 / m:.1f}x more"
    elif tool == "pytrec_eval":
        tr = mr = "1.0x"
    target = ""
    # Issue 17's targets: eval >= 30x pytrec_eval and <= 60 MiB on the
    # 1,000-deep cases, >= 25x on the many-small-queries case; compare
    # >= 12x faster than one pytrec_eval eval.
    if tool == "rgate eval":
        want = 25 if small else 30
        ok_t = tratio is not None and tratio >= want
        ok_m = small or mib <= 60
        target = ("ok" if ok_t and ok_m else "MISSED") + \
            f" (>={want}x: {'yes' if ok_t else 'no' if tratio is not None else 'n/a'}" + \
            ("" if small else f", <=60 MiB: {'yes' if ok_m else 'no'}") + ")"
    elif small:
        pass
    elif tool == "rgate gate":
        ok_t = tratio is not None and tratio >= 5
        ok_m = mib <= 250
        target = ("ok" if ok_t and ok_m else "MISSED") + \
            f" (>=5x pytrec_eval on one run: {'yes' if ok_t else 'no'}, <=250 MiB: {'yes' if ok_m else 'no'})"
    elif tool == "rgate compare":
        ok_t = tratio is not None and tratio >= 12
        target = ("ok" if ok_t else "MISSED") + " (>=12x pytrec_eval on one run)"
    out.append(f"| {size} | {tool} | {wall:.3f} | {mib:.0f} | {tr} | {mr} | {target} |")

# scaling: time per million lines and memory across sizes
tools = list(dict.fromkeys(r["tool"] for r in rows))
if len(sizes) > 1:
    out += ["", "Scaling (linear = constant s per million lines; memory of a streaming tool stays flat):", ""]
    for tool in tools:
        pts = []
        for s in sizes:
            if s.endswith("q"):
                continue
            r = by.get((s, tool))
            if r and r["status"] == "ok" and num(r["wall_s_min"]) is not None:
                n = size_lines(s) / 1e6
                pts.append((s, num(r["wall_s_min"]) / n, num(r["max_rss_kb"]) / 1024))
        if len(pts) > 1:
            desc = ", ".join(f"{s}: {spm:.3f} s/Mline, {mib:.0f} MiB" for s, spm, mib in pts)
            out.append(f"- {tool}: {desc}; s/Mline {pts[-1][0]} vs {pts[0][0]}: {pts[-1][1] / pts[0][1]:.2f}x")

# rgate against itself before a change, and against trec_eval on every
# measure: ratios of two tools timed in this same run.
pairs = [("rgate eval", "rgate eval (before)", "six measures, this build vs RGATE_BEFORE_BIN"),
         ("rgate eval all_trec", "trec_eval all_trec", "all_trec, rgate vs trec_eval"),
         ("rgate eval", "trec_eval", "six measures, rgate vs trec_eval")]
lines = []
for s in sizes:
    for mine, other, label in pairs:
        a, b = by.get((s, mine)), by.get((s, other))
        if not (a and b and a["status"] == "ok" and b["status"] == "ok"):
            continue
        wa, wb = num(a["wall_s_min"]), num(b["wall_s_min"])
        ra, rb = num(a["max_rss_kb"]), num(b["max_rss_kb"])
        if not (wa and wb and ra and rb):
            continue
        lines.append(f"- {s} {label}: {wa:.3f} s vs {wb:.3f} s ({wb / wa:.2f}x), "
                     f"{ra / 1024:.0f} MiB vs {rb / 1024:.0f} MiB ({rb / ra:.2f}x)")
    a, b = by.get((s, "rgate eval all_trec")), by.get((s, "trec_eval all_trec"))
    if a and b and a["status"] == "ok" and b["status"] == "ok":
        same = open(a["output"], "rb").read() == open(b["output"], "rb").read()
        lines.append(f"- {s} all_trec output: {'byte for byte equal to' if same else 'DIFFERS from'} trec_eval's")
if lines:
    out += ["", "Ratios (the second tool's wall time and memory over the first's):", ""] + lines

# agreement with pytrec_eval, 4 decimals
NAMES = [("recall_10", "recall@10"), ("recall_100", "recall@100"), ("P_10", "precision@10"),
         ("recip_rank", "mrr"), ("ndcg_cut_10", "ndcg@10"), ("map", "map")]
ALIAS = {"p@10": "precision@10", "r@10": "recall@10", "r@100": "recall@100", "rr": "mrr",
         "ap": "map", "recip_rank": "mrr", "ndcg_cut_10": "ndcg@10", "p_10": "precision@10"}


def norm(name):
    n = str(name).strip().lower()
    return ALIAS.get(n, n)


def scalar(v):
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, dict):
        for k in ("all", "overall", "mean", "value"):
            if k in v:
                return scalar(v[k])
    return None


def eval_means(doc):
    """{"metrics": {"recall@10": {"all": x}}} (or a few close variants)."""
    found = {}
    m = doc.get("metrics") if isinstance(doc, dict) else None
    if isinstance(m, dict):
        for k, v in m.items():
            x = scalar(v)
            if x is not None:
                found[norm(k)] = x
    elif isinstance(m, list):
        for row in m:
            if isinstance(row, dict) and "metric" in row and row.get("stratum", "all") == "all":
                x = scalar({k: row[k] for k in ("all", "mean", "value") if k in row})
                if x is not None:
                    found[norm(row["metric"])] = x
    return found


def compare_means(doc):
    """runs[] holds the candidates (the first run is the baseline): (baseline, current) per metric of the first candidate, stratum all."""
    base, cur = {}, {}
    runs = doc.get("runs") if isinstance(doc, dict) else None
    if isinstance(runs, list):
        for run in runs[:1]:
            for row in (run.get("checks") or []) if isinstance(run, dict) else []:
                if isinstance(row, dict) and row.get("stratum", "all") == "all" and "metric" in row:
                    b, c = scalar(row.get("baseline")), scalar(row.get("current"))
                    if b is not None:
                        base[norm(row["metric"])] = b
                    if c is not None:
                        cur[norm(row["metric"])] = c
    return base, cur


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def check(label, ref, got):
    if ref is None:
        return f"- {label}: no pytrec_eval reference"
    if got is None:
        return f"- {label}: no output to check"
    if not got:
        return f"- {label}: output has no recognisable metric means (unexpected JSON shape)"
    parts, bad = [], 0
    for pk, rk in NAMES:
        p, g = ref.get(pk), got.get(rk)
        if p is None:
            continue
        if g is None:
            parts.append(f"{rk} missing")
            bad += 1
        elif abs(p - g) <= 5e-5 + 1e-12:
            parts.append(f"{rk} {g:.4f} =")
        else:
            parts.append(f"{rk} {g:.4f} != {p:.4f}")
            bad += 1
    verdict = "EQUAL to 4 decimals" if bad == 0 else f"{bad} DIFFER"
    return f"- {label}: {verdict}: " + ", ".join(parts)


out += ["", "Agreement with pytrec_eval (means, 4 decimals; reported, never fatal):", ""]
for s in sizes:
    ref_a = ref_b = None
    r = by.get((s, "pytrec_eval"))
    if r and r["status"] == "ok":
        ref_a = load(r["output"])
        out_dir = r["output"].rsplit("/", 1)[0]
        ref_b = load(out_dir + "/pytrec_b.json")
    if ref_a:
        out.append(f"- {s} pytrec_eval run_a: " + ", ".join(f"{k} {ref_a[k]:.4f}" for k, _ in NAMES if k in ref_a)
                   + f" ({ref_a.get('num_q', '?')} queries)")
    for tool in ("rgate eval", "rgate compare"):
        r = by.get((s, tool))
        if not r:
            continue
        if r["status"] != "ok":
            out.append(f"- {s} {tool}: not checked ({r['status']})")
            continue
        doc = load(r["output"])
        if doc is None:
            out.append(f"- {s} {tool}: output is not JSON ({r['output']})")
        elif tool == "rgate eval":
            out.append(check(f"{s} rgate eval run_a", ref_a, eval_means(doc)))
        else:
            base, cur = compare_means(doc)
            out.append(check(f"{s} rgate compare baseline (run_a)", ref_a, base))
            out.append(check(f"{s} rgate compare current (run_b)", ref_b, cur))

text = "\n".join(out) + "\n"
with open(md_path, "w") as f:
    f.write(text)
sys.stdout.write(text)
PYEOF
log "bench.sh: results in $BENCH_DIR/results.md (raw: $TSV)"
