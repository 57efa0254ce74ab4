#!/usr/bin/env bash
# run-scenario.sh <hook-command-prefix> <scenario.json> <outdir>
#
# Runs the real Claude Code CLI (npm package @anthropic-ai/claude-code) against
# the fake Messages API in this folder, with every hook event wired to
# "<hook-command-prefix> <EventName>" (through hooks/hook_tee.py, which records
# each call).  The prefix "capture" means the built-in marker hook.
#
# Leaves in <outdir>: hooks/ (one JSON record per hook call), requests.jsonl
# (every request the CLI sent), transcripts/ (the CLI's session JSONL files),
# steps/ (per step: command, stream-json stdout, stderr, debug log),
# summary.txt / summary.json, home/ (the isolated HOME the CLI used).
#
# Environment knobs:
#   CC_VERSION        npm version of @anthropic-ai/claude-code (default below)
#   CCH_CLAUDE_BIN    use this claude binary instead of installing one
#   CCH_CACHE         where the CLI is installed and kept (default ~/.cache/memctl-e2e)
#   CCH_NO_NETNS=1    do not run inside a private network namespace
#   CCH_STEP_TIMEOUT  seconds per CLI invocation (default 180)
#
# Only 127.0.0.1 is talked to: when it can, the script runs the CLI, the hooks
# and the fake server in a new network namespace that has nothing but loopback
# (unshare -n, or unshare -rn without root); otherwise it warns and relies on
# the CLI's own "no non-essential traffic" settings and a dead proxy.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CC_VERSION="${CC_VERSION:-2.1.330}"

usage() { echo "usage: $0 <hook-command-prefix|capture> <scenario.json> <outdir>" >&2; exit 2; }
[ $# -eq 3 ] || usage
PREFIX="$1"; SCENARIO="$2"; OUTDIR="$3"
[ -f "$SCENARIO" ] || { echo "no such scenario: $SCENARIO" >&2; exit 2; }
command -v python3 >/dev/null || { echo "python3 is required" >&2; exit 2; }
SCENARIO="$(cd "$(dirname "$SCENARIO")" && pwd)/$(basename "$SCENARIO")"
if [ -e "$OUTDIR" ] && [ -n "$(ls -A "$OUTDIR" 2>/dev/null)" ] && [ -z "${CCH_IN_NETNS:-}" ]; then
  echo "outdir $OUTDIR is not empty; give a new or empty folder" >&2; exit 2
fi
mkdir -p "$OUTDIR"
OUTDIR="$(cd "$OUTDIR" && pwd)"

# ---- 1. the CLI (outside the namespace: installing needs the package registry) ----
find_bin() {
  local root="$1" arch libc=""
  case "$(uname -m)" in x86_64|amd64) arch=x64 ;; aarch64|arm64) arch=arm64 ;; *) return 1 ;; esac
  if ldd --version 2>&1 | grep -qi musl; then libc="-musl"; fi
  local b="$root/node_modules/@anthropic-ai/claude-code-linux-${arch}${libc}/claude"
  [ -x "$b" ] && { echo "$b"; return 0; }
  # a wrapper whose postinstall already copied the native binary in place
  b="$root/node_modules/@anthropic-ai/claude-code/bin/claude.exe"
  [ -x "$b" ] && [ "$(stat -c %s "$b")" -gt 1000000 ] && { echo "$b"; return 0; }
  return 1
}

if [ -z "${CCH_CLAUDE_BIN:-}" ]; then
  CC_ROOT="${CCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/memctl-e2e}/$CC_VERSION"
  if ! CCH_CLAUDE_BIN="$(find_bin "$CC_ROOT")"; then
    command -v npm >/dev/null || { echo "npm is required to install @anthropic-ai/claude-code" >&2; exit 2; }
    echo "[run-scenario] installing @anthropic-ai/claude-code@$CC_VERSION into $CC_ROOT" >&2
    mkdir -p "$CC_ROOT"
    [ -f "$CC_ROOT/package.json" ] || echo '{"name":"cch-claude","private":true}' > "$CC_ROOT/package.json"
    # --ignore-scripts: the native binary comes from the platform package
    # (an optional dependency); its postinstall copy is not needed.
    (cd "$CC_ROOT" && npm install --no-audit --no-fund --ignore-scripts --loglevel=error \
        "@anthropic-ai/claude-code@$CC_VERSION" >&2)
    CCH_CLAUDE_BIN="$(find_bin "$CC_ROOT")" || { echo "no native claude binary found under $CC_ROOT" >&2; exit 2; }
  fi
fi
export CCH_CLAUDE_BIN
"$CCH_CLAUDE_BIN" --version > "$OUTDIR/claude-version.txt" 2>&1 || true
echo "[run-scenario] claude: $CCH_CLAUDE_BIN ($(cat "$OUTDIR/claude-version.txt"))" >&2

# ---- 2. a network namespace with only loopback ----
if [ -z "${CCH_IN_NETNS:-}" ] && [ "${CCH_NO_NETNS:-0}" != 1 ]; then
  for flags in "-n" "-rn"; do
    if unshare $flags sh -c 'ip link set lo up' 2>/dev/null; then
      echo "[run-scenario] running inside a private network namespace (unshare $flags)" >&2
      echo "unshare $flags" > "$OUTDIR/network.txt"
      set +e
      CCH_IN_NETNS=1 unshare $flags -- "$0" "$@" &
      child=$!
      trap 'kill -TERM "$child" 2>/dev/null; wait "$child"; exit 130' INT TERM
      wait "$child"; rc=$?
      trap - INT TERM
      exit $rc
    fi
  done
  echo "[run-scenario] WARNING: no network namespace available (need root or unprivileged user namespaces, and 'ip');" \
       "relying on the CLI's traffic settings and a dead proxy instead" >&2
  echo "no namespace" > "$OUTDIR/network.txt"
fi
if [ -n "${CCH_IN_NETNS:-}" ]; then
  ip link set lo up
fi

# ---- 3. the run ----
set +e
python3 "$HERE/driver.py" --claude "$CCH_CLAUDE_BIN" --hook-prefix "$PREFIX" \
  --scenario "$SCENARIO" --outdir "$OUTDIR" --step-timeout "${CCH_STEP_TIMEOUT:-180}" &
drv=$!
trap 'kill -TERM "$drv" 2>/dev/null; wait "$drv"; exit 130' INT TERM
wait "$drv"; rc=$?
trap - INT TERM
echo "[run-scenario] done (rc=$rc); see $OUTDIR/summary.txt" >&2
exit $rc
