#!/usr/bin/env bash
# test.sh — every test, on a fresh machine: setup (cached), the whole workspace test suite with
# the real ONNX model and real redb files, then end-to-end scenarios with the real Claude Code
# CLI (../shared/harness; the CLI is installed with npm into ~/.cache/cc-harness on first run).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
bash scripts/setup.sh
# shellcheck disable=SC1091
source .cache/env.sh
cargo build --workspace --quiet
cargo test --workspace --no-fail-fast
MEMCTL_E2E_NO_BUILD=1 bash scripts/e2e.sh
