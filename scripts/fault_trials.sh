#!/usr/bin/env bash
# fault_trials.sh — the fault trials at full size (CI runs them reduced):
#   kill -9 at random points of `memctl ingest` and of each hook
#   (cli/tests/testsuite/kill_trials.rs),
#   I/O faults injected under redb (engine/src/store/fault_inject.rs).
# Prints each trial's seed and the outcome tables.
#   scripts/fault_trials.sh [--kills N] [--io N] [--seed S]
#     --kills N  kill -9 trials (default 200)
#     --io N     injected-fault trials per fault kind (default 40; 5 kinds)
#     --seed S   first seed (default: each test's own)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
kills=200 io=40 seed=""
while (($#)); do
    case $1 in
        --kills) kills=$2; shift 2 ;;
        --io) io=$2; shift 2 ;;
        --seed) seed=$2; shift 2 ;;
        *) echo "usage: $0 [--kills N] [--io N] [--seed S]" >&2; exit 2 ;;
    esac
done
if [[ -f .cache/env.sh ]]; then
    # shellcheck disable=SC1091
    source .cache/env.sh
fi
seed_env=()
[[ -z $seed ]] || seed_env=(MEMCTL_TRIAL_SEED="$seed")
start=$SECONDS
env "${seed_env[@]}" MEMCTL_FAULT_TRIALS="$kills" \
    cargo test --workspace --test testsuite -- kill_trials:: --nocapture --test-threads 1
env "${seed_env[@]}" MEMCTL_FAULT_TRIALS="$io" \
    cargo test -p memctl-engine --lib store::fault_inject -- --nocapture --test-threads 1
echo "fault_trials.sh: $kills kill -9 trials, $((io * 5)) injected-fault trials: ok in $((SECONDS - start)) s"
