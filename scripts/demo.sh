#!/usr/bin/env bash
# demo.sh — the main job end to end on a fresh machine:
#   setup (ONNX Runtime + all-MiniLM-L6-v2, cached) → release build → ingest the sample
#   transcripts shipped in tests/fixtures/sample → search them → print results.
# Uses a throwaway data dir (.cache/demo-home) so it never touches your real memory store.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
# What the demo needs before it spends minutes on set-up: a missing tool is named at once.
for tool in cargo python3; do
  command -v "$tool" >/dev/null || {
    echo "demo.sh: $tool not found on PATH (prerequisites: README.md, \"Prerequisites and cost\")" >&2
    exit 1
  }
done
bash scripts/setup.sh
# shellcheck disable=SC1091
source .cache/env.sh
cargo build --release --quiet -p memctl-hooks -p memctl-cli
# shellcheck source=scripts/target_dir.sh
source scripts/target_dir.sh
MEMCTL="$(cargo_target_dir "$ROOT")/release/memctl"
export MEMCTL_HOME="$ROOT/.cache/demo-home"
rm -rf "$MEMCTL_HOME"
# Restore blocks name `memctl ...` commands for the agent: the demo's binary is the one on PATH
# (doctor checks that), as `cargo install --locked --path cli && cargo install --locked --path hooks` makes it for a user.
PATH="$(dirname "$MEMCTL"):$PATH"
export PATH
echo "== memctl doctor"
# The demo installs no hooks (doctor warns about that, exit 0): everything else must be ok.
"$MEMCTL" doctor
echo "== memctl ingest tests/fixtures/sample"
"$MEMCTL" ingest tests/fixtures/sample
echo "== memctl sessions"
"$MEMCTL" sessions
for q in "${@:-which test was failing and how did we fix it}"; do
  echo "== memctl search --all-projects \"$q\""
  "$MEMCTL" search --all-projects -k 5 "$q"
done
