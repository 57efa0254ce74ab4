#!/usr/bin/env bash
# e2e.sh — end-to-end tests of memctl-hook with the real Claude Code CLI.
#
#   scripts/e2e.sh                      # every scenario in tests/e2e/scenarios/
#   scripts/e2e.sh compact-recall clear # only these (file names without .json)
#
# Uses only the repository's own harness, tests/e2e/harness (Python 3.11 stdlib): driver.py runs
# the real `claude` CLI (npm @anthropic-ai/claude-code, pinned) offline against a scripted fake
# Messages API on loopback (fake_api.py), with every hook event wired through hook_tee.py to
# memctl-hook, and records every hook call, API request and transcript. Scenario files are typed
# (scenario.py) and checked before anything runs. Each scenario runs in a fresh output folder with
# its own HOME, so each gets its own memctl store. After the harness's own `expect` checks,
# tests/e2e/check.py evaluates the scenario's `memctl_checks` (exact hook output reaching the
# model, text outside memctl's blocks, tool results, the store, the log).
#
# Needs: cargo, python3 (>= 3.11), npm (first run only: the harness installs
# @anthropic-ai/claude-code into ${XDG_CACHE_HOME:-~/.cache}/memctl-e2e/<version>), unshare + ip
# for network isolation (optional; without them the harness warns and falls back).
# Knobs: MEMCTL_E2E_OUT=<dir> (keep outputs there), MEMCTL_E2E_KEEP=1 (keep outputs of passing
# scenarios too), MEMCTL_E2E_NO_BUILD=1 (skip `cargo build`); harness: CC_VERSION, CCH_CLAUDE_BIN,
# CCH_CACHE, CCH_NO_NETNS=1, CCH_STEP_TIMEOUT (see tests/e2e/README.md).
set -euo pipefail

T_START=$SECONDS
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
E2E=$REPO/tests/e2e
HARNESS=$E2E/harness
CHECK=$E2E/check.py

die() { printf 'e2e: ERROR: %s\n' "$*" >&2; exit 2; }

[[ -f $HARNESS/driver.py ]] || die "harness missing at $HARNESS (a broken checkout?)"
command -v python3 >/dev/null || die "python3 (>= 3.11) is required"
python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' || die "python3 >= 3.11 is required"
# no __pycache__ folders in the checkout
export PYTHONDONTWRITEBYTECODE=1
if [[ -z ${CCH_CLAUDE_BIN:-} ]] && ! ls "${CCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/memctl-e2e}"/*/node_modules >/dev/null 2>&1; then
    command -v npm >/dev/null || die "npm is required on the first run (the harness installs the Claude Code CLI with it)"
fi

# The hooks and the CLI inherit this environment: never let a developer's own memctl settings
# (their real store in MEMCTL_HOME, restore knobs) leak into a run.
for name in $(compgen -e); do
    case $name in MEMCTL_E2E_*) ;; MEMCTL_*) unset "$name" ;; esac
done
unset XDG_DATA_HOME

# shellcheck source=scripts/target_dir.sh
source "$REPO/scripts/target_dir.sh"
if [[ ${MEMCTL_E2E_NO_BUILD:-0} != 1 ]]; then
    build_test_units "$REPO" || die "cargo build of the test profile failed"
fi
# Private copies of the binaries: a concurrent `cargo build`/`cargo test` in this checkout
# replaces target/debug/* mid-run ("memctl-hook: not found", exit 127). They stay under target/
# so that the binaries still find the repo's .cache/ (ONNX Runtime) and models/ by walking up.
TARGET=$(cargo_target_dir "$REPO")
BIN=$REPO/target/e2e-bin/$$
rm -rf "$BIN"
mkdir -p "$BIN"
trap 'rm -rf "$BIN"' EXIT
for b in memctl memctl-hook; do
    [[ -x $TARGET/debug/$b ]] || die "missing $TARGET/debug/$b (scripts/test.sh builds it)"
    cp "$TARGET/debug/$b" "$BIN/$b"
done

# Scenarios to run: Claude Code's (scenario files) and the other agents' (harness/agents.py).
AGENT_SCENARIOS=(codex-compact codex-swap gemini-session gemini-compress cross-agent to-claude)
SCENARIOS=()
RUN_AGENTS=()
if (($#)); then
    for n in "$@"; do
        if [[ " ${AGENT_SCENARIOS[*]} " == *" $n "* ]]; then
            RUN_AGENTS+=("$n")
            continue
        fi
        f=$E2E/scenarios/${n%.json}.json
        [[ -f $f ]] || die "no scenario $f"
        SCENARIOS+=("$f")
    done
else
    SCENARIOS=("$E2E"/scenarios/*.json)
    RUN_AGENTS=("${AGENT_SCENARIOS[@]}")
fi
# Typed scenario files: a typo fails here, with the file and the field, before anything runs.
if ((${#SCENARIOS[@]})); then
    python3 "$HARNESS/scenario.py" "${SCENARIOS[@]}" || die "invalid scenario file"
    python3 "$CHECK" validate "${SCENARIOS[@]}" || die "invalid memctl_checks in a scenario file"
fi

OUTROOT=${MEMCTL_E2E_OUT:-$(mktemp -d "${TMPDIR:-/tmp}/memctl-e2e.XXXXXX")}
mkdir -p "$OUTROOT"
OUTROOT=$(cd "$OUTROOT" && pwd -P)
printf 'e2e: %d scenario(s), harness %s, outputs in %s\n' "$((${#SCENARIOS[@]} + ${#RUN_AGENTS[@]}))" "$HARNESS" "$OUTROOT"

failed=()
for scen in "${SCENARIOS[@]+"${SCENARIOS[@]}"}"; do
    name=$(basename "$scen" .json)
    out=$OUTROOT/$name
    rm -rf "$out"
    mkdir -p "$OUTROOT/.rendered"
    rendered=$OUTROOT/.rendered/$name.json
    python3 "$CHECK" render "$scen" "$rendered" --repo "$REPO" --bin "$BIN"
    prefix=$(python3 "$CHECK" prefix "$scen" --repo "$REPO" --bin "$BIN")
    t0=$SECONDS
    h_rc=0
    python3 "$HARNESS/driver.py" --hook-prefix "$prefix" --scenario "$rendered" --outdir "$out" \
        >"$OUTROOT/$name.harness.log" 2>&1 || h_rc=$?
    c_rc=0
    if [[ -d $out/hooks ]]; then
        python3 "$CHECK" check "$rendered" "$out" --repo "$REPO" --bin "$BIN" >"$OUTROOT/$name.checks.log" 2>&1 || c_rc=$?
    else
        c_rc=1
        echo "no hooks/ folder: the harness did not run" >"$OUTROOT/$name.checks.log"
    fi
    # Stop the scenario's resident embedders (started by its hooks): removing the socket is
    # their documented stop signal, so none outlives the run by its idle timeout.
    find "$out" -name embedder.sock -delete 2>/dev/null || true
    dt=$((SECONDS - t0))
    if ((h_rc == 0 && c_rc == 0)); then
        printf 'PASS  %-24s %4ds\n' "$name" "$dt"
        [[ ${MEMCTL_E2E_KEEP:-0} == 1 || -n ${MEMCTL_E2E_OUT:-} ]] || rm -rf "$out"
    else
        printf 'FAIL  %-24s %4ds  (harness rc=%d, memctl checks rc=%d)\n' "$name" "$dt" "$h_rc" "$c_rc"
        failed+=("$name")
        {
            echo "---- $name: harness log (tail) ----"
            grep -E '^\[driver\]|Traceback|Error' "$OUTROOT/$name.harness.log" | tail -n 25 || true
            if [[ -f $out/summary.txt ]]; then
                echo "---- $name: $out/summary.txt ----"
                cat "$out/summary.txt"
            fi
            echo "---- $name: memctl checks ----"
            cat "$OUTROOT/$name.checks.log"
            while IFS= read -r -d '' log; do
                echo "---- $name: tail of $log ----"
                tail -n 30 "$log"
            done < <(find "$out" -name 'memctl.log*' -type f -print0 2>/dev/null)
        } | sed 's/^/    /'
    fi
done

# Codex CLI and Gemini CLI (and a Claude Code step of the cross-agent scenario).
if ((${#RUN_AGENTS[@]})); then
    a_rc=0
    python3 "$HARNESS/agents.py" --bin "$BIN" --outdir "$OUTROOT/agents" "${RUN_AGENTS[@]}" \
        >"$OUTROOT/agents.log" 2>&1 || a_rc=$?
    grep -E '^(PASS|FAIL) ' "$OUTROOT/agents.log" || true
    if ((a_rc != 0)); then
        while read -r _ name _; do failed+=("$name"); done < <(grep -E '^FAIL ' "$OUTROOT/agents.log")
        ((${#failed[@]})) || failed+=("agents")
        sed 's/^/    /' "$OUTROOT/agents.log" | tail -n 40
        while IFS= read -r -d '' log; do
            echo "---- tail of $log ----"
            tail -n 30 "$log"
        done < <(find "$OUTROOT/agents" -name 'memctl.log*' -type f -print0 2>/dev/null) | sed 's/^/    /'
    fi
    find "$OUTROOT/agents" -name embedder.sock -delete 2>/dev/null || true
fi

total=$((SECONDS - T_START))
npass=$((${#SCENARIOS[@]} + ${#RUN_AGENTS[@]} - ${#failed[@]}))
printf 'e2e: %d passed, %d failed in %ds; outputs: %s\n' "$npass" "${#failed[@]}" "$total" "$OUTROOT"
if ((${#failed[@]})); then
    printf 'e2e: failed: %s\n' "${failed[*]}"
    exit 1
fi
[[ ${MEMCTL_E2E_KEEP:-0} == 1 || -n ${MEMCTL_E2E_OUT:-} ]] || rm -rf "$OUTROOT"
