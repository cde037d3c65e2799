#!/usr/bin/env bash
# Mutation testing (cargo-mutants) of the code that decides: statistics,
# compare, run reading, the gate and the baseline store. Too slow for every
# CI run (each mutant is a rebuild); run it before a release or after
# changing one of these areas, and read the survivors.
#
#   scripts/mutants.sh [AREA...]          AREA: stats compare run gate baseline
#                                         (default: all five, in that order)
#   MUTANTS_IN_DIFF=changes.diff scripts/mutants.sh gate   only mutants touched by a diff
#                                         (e.g. `git diff main > changes.diff`)
#   MUTANTS_JOBS=2  MUTANTS_TIMEOUT=60    parallel builds (one scratch tree each), test timeout in s
#   MUTANTS_FAST=0                        skip the fast pass: every mutant against the whole suite
#   MUTANTS_SHARD=0/4                     a systematic sample: every 4th mutant of each area
#                                         (round-robin), for an estimate when the whole
#                                         run would take too long
#
# Per area, two passes:
#   1. fast: build and run only the test targets that exercise the area
#      (the library's unit tests and the area's integration tests), which
#      links a handful of test binaries instead of all of them;
#   2. full: `--iterate` re-tests every mutant the fast pass did not catch
#      against the whole suite, so the selection can cost time but never
#      hides a kill.
# Results: target/mutants/AREA/mutants.out/{caught,missed,timeout,unviable}.txt,
# and a per-file summary printed at the end.
#
# Builds use opt-level 0 without debug info: on the 2-core development
# machine under load that took a mutant from about 3 minutes (opt-level 1,
# debug info, every test binary) to about 10 seconds; the selected tests
# still run in a second or two unoptimized. The first build of each pass
# rebuilds the dependencies once for this profile, so target/ is not copied
# into the scratch tree (its artifacts are for another profile, and a copy
# per job can fill a small disk).
set -euo pipefail
cd "$(dirname "$0")/.."

if ! cargo mutants --version >/dev/null 2>&1; then
    echo "error: cargo-mutants is not installed" >&2
    echo "hint: cargo install cargo-mutants --locked" >&2
    exit 2
fi

jobs=${MUTANTS_JOBS:-1}
timeout=${MUTANTS_TIMEOUT:-60}
fast=${MUTANTS_FAST:-1}
export CARGO_PROFILE_DEV_DEBUG=0
export CARGO_PROFILE_DEV_OPT_LEVEL=0
export CARGO_TERM_COLOR=never

# The files of an area.
files() {
    case $1 in
    stats) echo "src/stats/*.rs" ;;
    compare) echo "src/compare.rs" ;;
    run) echo "src/run/*.rs" ;;
    gate) echo "src/gate.rs" ;;
    baseline) echo "src/baseline.rs" ;;
    *)
        echo "error: unknown area \`$1\`" >&2
        echo "hint: areas are stats, compare, run, gate, baseline" >&2
        exit 2
        ;;
    esac
}

# The test targets that exercise an area (the fast pass).
fast_tests() {
    case $1 in
    stats) echo "--lib --test stats_conformance --test compare_values" ;;
    compare) echo "--test compare_values --test cli_compare --test gate_values" ;;
    run) echo "--lib --test conformance_eval --test cli_eval --test properties_eval" ;;
    gate) echo "--test gate_values --test cli_gate" ;;
    baseline) echo "--lib --test cli_gate --test gate_values" ;;
    esac
}

areas=("$@")
[ ${#areas[@]} -eq 0 ] && areas=(stats compare run gate baseline)

for area in "${areas[@]}"; do
    glob=$(files "$area")
    out="target/mutants/$area"
    mkdir -p "$out"
    common=(--file "$glob" --jobs "$jobs" --timeout "$timeout" --output "$out"
        --copy-target false --no-shuffle)
    [ -n "${MUTANTS_IN_DIFF:-}" ] && common+=(--in-diff "$MUTANTS_IN_DIFF")
    # Only the first pass is sharded: the second (--iterate) re-tests that
    # pass's survivors, and sharding its shorter list would pick others.
    shard=()
    [ -n "${MUTANTS_SHARD:-}" ] && shard=(--shard "$MUTANTS_SHARD" --sharding round-robin)
    if [ "$fast" = 1 ]; then
        echo "== $area: fast pass ($(fast_tests "$area"))"
        # --cargo-arg, not --cargo-test-arg: the selection must reach the
        # build (`cargo test --no-run`) too, or every test binary is linked.
        sel=()
        for a in $(fast_tests "$area"); do sel+=(--cargo-arg="$a"); done
        # Fewer proptest cases, and no statistics unit tests (the slowest,
        # unoptimized) outside the stats area; the full pass runs them all.
        skip=()
        [ "$area" != stats ] && skip=(-- -- --skip stats::)
        PROPTEST_CASES=24 cargo mutants "${common[@]}" "${shard[@]}" "${sel[@]}" "${skip[@]}" || true
        echo "== $area: full suite on what the fast pass did not catch"
        cargo mutants "${common[@]}" --iterate --baseline skip || true
    else
        echo "== $area: full suite"
        cargo mutants "${common[@]}" "${shard[@]}" || true
    fi
done

# Per-file counts. After two passes, mutants.out is the full pass (its
# missed and timeout lists are final) and mutants.out.old the fast one
# (whose catches and unviable mutants the full pass skipped).
count() { # FILE LIST... : lines of the lists that name FILE
    cat "${@:2}" 2>/dev/null | grep -c "^$1:" || true
}
echo
printf '%-28s %7s %7s %8s %9s %7s\n' file caught missed timeout unviable score
for area in stats compare run gate baseline; do
    dir="target/mutants/$area/mutants.out"
    [ -d "$dir" ] || continue
    caught=("$dir/caught.txt")
    unviable=("$dir/unviable.txt")
    if [ -f "$dir/previously_caught.txt" ]; then
        caught+=("$dir.old/caught.txt")
        unviable+=("$dir.old/unviable.txt")
    fi
    for f in $(cat "${caught[@]}" "${unviable[@]}" "$dir"/{missed,timeout}.txt 2>/dev/null | cut -d: -f1 | sort -u); do
        c=$(count "$f" "${caught[@]}")
        m=$(count "$f" "$dir/missed.txt")
        t=$(count "$f" "$dir/timeout.txt")
        u=$(count "$f" "${unviable[@]}")
        awk -v f="$f" -v c="$c" -v m="$m" -v t="$t" -v u="$u" 'BEGIN {
            v = c + m + t
            printf "%-28s %7d %7d %8d %9d %6.1f%%\n", f, c, m, t, u, v ? 100 * (c + t) / v : 100 }'
    done
done
echo "(score = (caught + timeout) / viable; survivors: target/mutants/*/mutants.out/missed.txt)"
