#!/usr/bin/env bash
# test.sh — every test, on a fresh machine: setup (cached) then the whole workspace test suite
# with the real ONNX model and real redb files.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
bash scripts/setup.sh
# shellcheck disable=SC1091
source .cache/env.sh
cargo build --workspace --quiet
cargo test --workspace --no-fail-fast
