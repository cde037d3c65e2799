#!/usr/bin/env bash
# Mutation testing (cargo-mutants) of the code that decides: statistics,
# compare, run reading, the gate and the baseline store. Too slow for every
# CI run (each mutant is a rebuild); run it before a release or after
# changing one of these areas, and read the survivors.
#
#   scripts/mutants.sh [AREA...]          AREA: stats compare run gate baseline gold
#                                         (default: all six, in that order)
#   MUTANTS_IN_DIFF=changes.diff scripts/mutants.sh gate   only mutants touched by a diff
#                                         (e.g. `git diff main > changes.diff`)
#   MUTANTS_JOBS=2  MUTANTS_TIMEOUT=60    parallel builds (one scratch tree each), test timeout in s
#   MUTANTS_FULL_TIMEOUT=300              the full pass's test timeout (the whole suite takes
#                                         35 s on an idle machine, several minutes under load)
#   MUTANTS_FAST=0                        skip the fast pass: every mutant against the whole suite
#   MUTANTS_SHARD=0/4                     a systematic sample: every 4th mutant of each area
#                                         (round-robin), for an estimate when the whole
#                                         run would take too long
#
# Per area, two passes:
#   1. fast: build and run only the tests that exercise the area (the
#      library's unit tests and the area's modules of the integration test
#      binary tests/it);
#   2. full: re-tests every mutant the fast pass did not catch (missed or
#      timed out) against the whole suite, so the selection can cost time
#      but never hides a kill.
# Results: target/mutants/AREA/{fast,full}/mutants.out/{caught,missed,timeout,unviable}.txt,
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
full_timeout=${MUTANTS_FULL_TIMEOUT:-300}
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
    gate) echo "src/gate/*.rs" ;;
    baseline) echo "src/baseline/*.rs" ;;
    gold) echo "src/gold/*.rs" ;;
    *)
        echo "error: unknown area \`$1\`" >&2
        echo "hint: areas are stats, compare, run, gate, baseline, gold" >&2
        exit 2
        ;;
    esac
}

# The test targets that exercise an area (the fast pass): the library's
# unit tests and/or the one integration test binary.
fast_targets() {
    case $1 in
    gate) echo "--test it" ;;
    *) echo "--lib --test it" ;;
    esac
}

# Which of their tests run (libtest filters, any one matching): the modules
# of tests/it/ that exercise the area (each a former tests/<name>.rs), and
# with --lib every unit test (all live in a `tests` module, hence
# `::tests::`; no integration test module has one).
fast_tests() {
    case $1 in
    stats) echo "::tests:: stats_conformance:: compare_values::" ;;
    compare) echo "::tests:: compare_values:: cli_compare:: gate_values:: gate_decisions::" ;;
    run) echo "::tests:: conformance_eval:: cli_eval:: properties_eval:: run_formats:: cli_inputs:: cli_spans:: baseline_depth::" ;;
    gate) echo "gate_values:: gate_decisions:: cli_gate::" ;;
    baseline) echo "::tests:: store_safety:: baseline_depth:: cli_baseline_ref:: gate_values::" ;;
    gold) echo "::tests:: gold_records:: gold_speed:: cli_inputs:: input_limits:: ppi_labels:: ppi_gate::" ;;
    esac
}

areas=("$@")
[ ${#areas[@]} -eq 0 ] && areas=(stats compare run gate baseline gold)

# Each area's files must exist: a moved module would otherwise leave its
# area with no mutants, and a run that reports nothing looks like a pass.
for area in "${areas[@]}"; do
    glob=$(files "$area")
    # shellcheck disable=SC2086 # the glob is meant to expand
    if ! compgen -G "$glob" >/dev/null; then
        echo "error: area \`$area\`: no file matches $glob" >&2
        echo "hint: point files() in scripts/mutants.sh at the area's current files" >&2
        exit 2
    fi
done

for area in "${areas[@]}"; do
    glob=$(files "$area")
    out="target/mutants/$area"
    rm -rf "$out/fast" "$out/full"
    mkdir -p "$out/fast" "$out/full"
    common=(--file "$glob" --jobs "$jobs" --copy-target false --no-shuffle)
    [ -n "${MUTANTS_IN_DIFF:-}" ] && common+=(--in-diff "$MUTANTS_IN_DIFF")
    shard=()
    [ -n "${MUTANTS_SHARD:-}" ] && shard=(--shard "$MUTANTS_SHARD" --sharding round-robin)
    if [ "$fast" = 1 ]; then
        echo "== $area: fast pass ($(fast_targets "$area"): $(fast_tests "$area"))"
        # --cargo-arg, not --cargo-test-arg: the selection must reach the
        # build (`cargo test --no-run`) too, or every test target is built.
        sel=()
        for a in $(fast_targets "$area"); do sel+=(--cargo-arg="$a"); done
        # Fewer proptest cases, and no statistics unit tests (the slowest,
        # unoptimized) outside the stats area; the full pass runs them all.
        filter=(-- --)
        for a in $(fast_tests "$area"); do filter+=("$a"); done
        [ "$area" != stats ] && filter+=(--skip stats::)
        PROPTEST_CASES=24 cargo mutants "${common[@]}" "${shard[@]}" --timeout "$timeout" \
            --output "$out/fast" "${sel[@]}" "${filter[@]}" || true
        # Exactly the fast pass's survivors, by name: not `--iterate`, which
        # would also take every mutant a sharded fast pass never drew.
        names=()
        while IFS= read -r name; do
            [ -n "$name" ] && names+=(-F "^$(printf '%s' "$name" | sed 's/[][\.*^$()+?{}|]/\\&/g')\$")
        done < <(cat "$out/fast/mutants.out/missed.txt" "$out/fast/mutants.out/timeout.txt" 2>/dev/null)
        if [ ${#names[@]} -gt 0 ]; then
            echo "== $area: full suite on the $((${#names[@]} / 2)) the fast pass did not catch"
            cargo mutants "${common[@]}" --timeout "$full_timeout" --output "$out/full" \
                --baseline skip "${names[@]}" || true
        fi
    else
        echo "== $area: full suite"
        cargo mutants "${common[@]}" "${shard[@]}" --timeout "$full_timeout" --output "$out/full" || true
    fi
done

# Per-file counts: caught and unviable from both passes; missed and timed
# out from the full pass, whose verdicts on the fast pass's survivors are final.
count() { # FILE LIST... : lines of the lists that name FILE
    cat "${@:2}" 2>/dev/null | grep -c "^$1:" || true
}
echo
printf '%-28s %7s %7s %8s %9s %7s\n' file caught missed timeout unviable score
for area in stats compare run gate baseline; do
    base="target/mutants/$area"
    [ -d "$base/full" ] || continue
    caught=("$base"/{fast,full}/mutants.out/caught.txt)
    unviable=("$base"/{fast,full}/mutants.out/unviable.txt)
    final=("$base/full/mutants.out")
    for f in $(cat "${caught[@]}" "${unviable[@]}" "$final"/{missed,timeout}.txt 2>/dev/null | cut -d: -f1 | sort -u); do
        c=$(count "$f" "${caught[@]}")
        m=$(count "$f" "$final/missed.txt")
        t=$(count "$f" "$final/timeout.txt")
        u=$(count "$f" "${unviable[@]}")
        awk -v f="$f" -v c="$c" -v m="$m" -v t="$t" -v u="$u" 'BEGIN {
            v = c + m + t
            printf "%-28s %7d %7d %8d %9d %6.1f%%\n", f, c, m, t, u, v ? 100 * (c + t) / v : 100 }'
    done
done
echo "(score = (caught + timeout) / viable; survivors: target/mutants/*/full/mutants.out/missed.txt)"
