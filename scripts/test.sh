#!/usr/bin/env bash
# test.sh — every test, on a fresh machine with Rust, Python >= 3.11 and Node/npm (Debian's
# Chromium and chromedriver for the viewer's browser tests are installed here): setup (cached),
# the whole workspace test suite with the real ONNX model and real redb files, then end-to-end
# scenarios with the real Claude Code CLI (tests/e2e/harness; the CLI is installed with npm into
# a cache on first run), then the benchmarks at tiny sizes (`scripts/bench.sh --short`). Needs
# nothing outside the repository. Ends with the number of tests executed by kind (unit,
# integration, process, doc, e2e), so that a drop is visible.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
start=$SECONDS
# Everything the machine must provide, before a minute is spent building.
bash scripts/prereqs.sh
bash scripts/setup.sh
# The viewer's browser tests (cli/tests/testsuite/ui_browser.rs) drive Debian's Chromium.
bash scripts/install_chromium.sh
# shellcheck disable=SC1091
source .cache/env.sh
# Every step finds the binaries where cargo puts them: the e2e step runs with CARGO_TARGET_DIR
# set, as it is for developers who share one target dir between checkouts.
# shellcheck source=scripts/target_dir.sh
source scripts/target_dir.sh
CARGO_TARGET_DIR=$(cargo_target_dir "$ROOT")
export CARGO_TARGET_DIR
# ONNX Runtime's own usage telemetry stays off in the tests that load it in process (the
# memctl CLI sets this for itself; the process tests check that it does).
export ORT_DISABLE_TELEMETRY=1
# One build for everything below: `cargo test`, the e2e step and `bench.sh --short` all use
# these units (memctl-hook is not built by `cargo test` itself: its package has no test binary).
build_test_units "$ROOT"
LOG=$(mktemp "${TMPDIR:-/tmp}/memctl-test.XXXXXX")
# A real PostgreSQL 18 + pgvector for the team-memory tests (cli/tests/testsuite/team.rs), from
# the pinned wheel; stopped on exit whatever happens. A server that does not start fails the run.
PG_RUN=
PG_TLS_RUN=
trap 'rm -f "$LOG"; [[ -z $PG_RUN ]] || bash scripts/pg.sh stop "$PG_RUN"; [[ -z $PG_TLS_RUN ]] || bash scripts/pg.sh stop "$PG_TLS_RUN"' EXIT
PG_RUN=$(bash scripts/pg.sh start)
MEMCTL_TEST_PG_URL=$(<"$PG_RUN/url")
export MEMCTL_TEST_PG_URL
# TLS tests (cli/tests/testsuite/team_tls.rs): the distribution's PostgreSQL with ssl=on (the wheel's
# is built without OpenSSL); its dir holds the throw-away CA (ca.crt) that signed the server's
# certificate, and one (other-ca.crt) that did not.
PG_TLS_RUN=$(bash scripts/pg.sh start-tls)
MEMCTL_TEST_PG_TLS_URL=$(<"$PG_TLS_RUN/url")
MEMCTL_TEST_PG_TLS_DIR=$PG_TLS_RUN/tls
export MEMCTL_TEST_PG_TLS_URL MEMCTL_TEST_PG_TLS_DIR
rc=0
cargo test --workspace --no-fail-fast 2>&1 | tee "$LOG" || rc=$?
e2e_rc=0
MEMCTL_E2E_NO_BUILD=1 bash scripts/e2e.sh 2>&1 | tee -a "$LOG" || e2e_rc=$?
# The benchmarks at tiny sizes with the debug binaries (about a minute): every step of
# scripts/bench.sh runs and ends what it started, so none can rot unseen.
bench_rc=0
bench_start=$SECONDS
bash scripts/bench.sh --short || bench_rc=$?
echo "test.sh: bench.sh --short rc=$bench_rc in $((SECONDS - bench_start)) s"
count_rc=0
python3 scripts/test_counts.py "$LOG" || count_rc=$?
echo "test.sh: cargo test rc=$rc, e2e rc=$e2e_rc, bench --short rc=$bench_rc, in $((SECONDS - start)) s"
((rc == 0 && e2e_rc == 0 && bench_rc == 0 && count_rc == 0))
