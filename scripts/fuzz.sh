#!/usr/bin/env bash
# fuzz.sh — the fuzz targets of engine/src/fuzz, hooks/src/claude/fuzz_tests.rs (Claude Code's
# payloads) and cli/tests/testsuite/fuzz_cli.rs (proptest, stable Rust) run long, on demand.
# CI runs them short (1000 cases each, fixed seed). Prints executions per target and findings;
# a finding fails with its seed and the minimized input (add it as a regression test).
#   scripts/fuzz.sh [--cases N | --secs S] [--seed X] [TARGET-FILTER]
#     --cases N  cases per target
#     --secs S   seconds per target (default 60)
#     --seed X   seed (default: a new one from the clock, printed)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
mode=(MEMCTL_FUZZ_SECS=60) seed=$(date +%s) filter=""
while (($#)); do
    case $1 in
        --cases) mode=(MEMCTL_FUZZ_CASES="$2"); shift 2 ;;
        --secs) mode=(MEMCTL_FUZZ_SECS="$2"); shift 2 ;;
        --seed) seed=$2; shift 2 ;;
        -*) echo "usage: $0 [--cases N | --secs S] [--seed X] [TARGET-FILTER]" >&2; exit 2 ;;
        *) filter=$1; shift ;;
    esac
done
echo "fuzz.sh: ${mode[*]}, seed $seed"
LOG=$(mktemp "${TMPDIR:-/tmp}/memctl-fuzz.XXXXXX")
trap 'rm -f "$LOG"' EXIT
rc=0
env "${mode[@]}" MEMCTL_FUZZ_SEED="$seed" \
    cargo test -p memctl-engine --lib -- --nocapture "${filter:-fuzz::}" 2>&1 | tee "$LOG" || rc=$?
# The Claude Code adapter's payload parsing, with the engine's harness.
env "${mode[@]}" MEMCTL_FUZZ_SEED="$seed" \
    cargo test -p memctl-hooks --lib -- --nocapture "${filter:-fuzz_tests::}" 2>&1 \
    | tee -a "$LOG" || rc=$?
# The CLI target starts a process per case (~20 ms): cases, not seconds (30 a second asked).
if [[ -z $filter || $filter == *cli* ]]; then
    case ${mode[0]} in
        MEMCTL_FUZZ_SECS=*) cli_cases=$(( ${mode[0]#MEMCTL_FUZZ_SECS=} * 30 )) ;;
        *) cli_cases=${mode[0]#MEMCTL_FUZZ_CASES=} ;;
    esac
    MEMCTL_FUZZ_CASES=$cli_cases MEMCTL_FUZZ_SEED="$seed" \
        cargo test --workspace --test testsuite -- fuzz_cli:: --nocapture 2>&1 \
        | tee -a "$LOG" || rc=$?
fi
echo
echo "fuzz.sh: executions per target (seed $seed):"
grep -E "^fuzz target " "$LOG" | sed 's/^fuzz target /  /' || true
findings=$(grep -c "FINDING" "$LOG" || true)
echo "fuzz.sh: findings: $findings"
exit "$rc"
