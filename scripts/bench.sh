#!/usr/bin/env bash
# bench.sh — one command: memctl vs the peer (claude-flow's context-persistence hook), same
# transcripts, same run, interleaved; criterion benches; a report with ratios and a plot.
#
#   scripts/bench.sh                 # full run (≈ 10–20 min on 2 cores)
#   BENCH_SIZES="50 500" BENCH_RUNS=3 scripts/bench.sh   # quicker
#   BENCH_SKIP_CRITERION=1 / BENCH_SKIP_PEER=1 / BENCH_SKIP_LOCOMO=0 (LoCoMo is off by default: ~10 min)
#   BENCH_ONLY_HOOKS=1   only the hook comparison with the peer (the README's table) and the report
#   BENCH_OUT=DIR        working folder (default .cache/bench)
#   BENCH_BYTES_SIZES="500"  store bytes with model vectors only for these sizes (embedding 5,000 turns is slow)
#   BENCH_BASELINE=DIR   also time the first archive with the memctl-hook/memctl in DIR (an
#                        earlier build) in the same run, alternating with this one
#   scripts/bench.sh --short   every step at tiny sizes with the debug binaries of
#                        the test profile's build (no release build, no criterion, no plot, no
#                        peer unless BENCH_SKIP_PEER=0), into a temporary folder that is
#                        removed at the end: scripts/test.sh runs it so that no step can rot.
#
# Writes benches/results/<date>.md and benches/results/<date>-hooks.png.
# Every benchmark ends what its runs started (the resident embedder SessionStart(compact)
# starts, detached ingests and embedders) before it removes a data dir: scripts/benchlib.py.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
start=$SECONDS
SHORT=0
for arg in "$@"; do
  case "$arg" in
    --short) SHORT=1 ;;
    *) echo "bench: unknown argument $arg (usage: scripts/bench.sh [--short])" >&2; exit 2 ;;
  esac
done
SHARED="${MEMCTL_SHARED:-$ROOT/../shared}"
if [ ! -d "$SHARED/peer" ]; then
  if [ "$SHORT" = 1 ]; then
    BENCH_SKIP_PEER=1
  else
    echo "bench: the comparison with the peer needs its hook and generator in \$MEMCTL_SHARED/peer (default ../shared/peer); not found at $SHARED/peer" >&2
    exit 2
  fi
fi
# The peer's transcript generator when it is there (the published figures use it), else ours.
GEN="$SHARED/peer/gen_transcript.py"
[ -f "$GEN" ] || GEN="$ROOT/scripts/gen_transcript.py"
# source .cache/env.sh below sets it; the benches check the model loads (benchlib.require_model).
if [ "$SHORT" = 1 ]; then
  SIZES="${BENCH_SIZES:-30}"
  RUNS="${BENCH_RUNS:-1}"
  ROUNDS="${BENCH_ROUNDS:-1}"
  MIN_BIG=0           # every size runs the first-archive, store-bytes and embedder steps
  CONTENTION_CALLS=2  # per mode, one block, no pause between prompts
  CONTENTION_BLOCK=2
  CONTENTION_GAP=0
  EMBED_LIMIT=16
  EMBED_ROUNDS=1
  BENCH_SKIP_CRITERION=1
  # The peer is not ours to keep from rotting, and costs a minute: BENCH_SKIP_PEER=0 runs it.
  BENCH_SKIP_PEER="${BENCH_SKIP_PEER:-1}"
  OUT="$(mktemp -d "${TMPDIR:-/tmp}/memctl-bench-short.XXXXXX")"
  REPORT="$OUT/report.md"
  PLOT="$OUT/hooks.png"
else
  SIZES="${BENCH_SIZES:-50 500 5000}"
  RUNS="${BENCH_RUNS:-5}"
  ROUNDS="${BENCH_ROUNDS:-2}"
  MIN_BIG=500
  CONTENTION_CALLS=300
  CONTENTION_BLOCK=20
  CONTENTION_GAP=0.3
  EMBED_LIMIT=512
  EMBED_ROUNDS=2
  OUT="${BENCH_OUT:-$ROOT/.cache/bench}"
  DATE="$(date -u +%Y-%m-%d)"
  REPORT="benches/results/$DATE.md"
  PLOT="benches/results/$DATE-hooks.png"
  mkdir -p benches/results
fi
mkdir -p "$OUT"

bash scripts/setup.sh
# shellcheck disable=SC1091
source .cache/env.sh
# shellcheck source=scripts/target_dir.sh
source "$ROOT/scripts/target_dir.sh"
if [ "$SHORT" = 1 ]; then
  build_test_units "$ROOT"
  RELEASE="$(cargo_target_dir "$ROOT")/debug"
  PY=python3
else
  cargo build --release --quiet -p memctl-hooks -p memctl-cli
  RELEASE="$(cargo_target_dir "$ROOT")/release"
  # Plotting venv (matplotlib), cached.
  if [ ! -x "$OUT/venv/bin/python" ]; then
    python3 -m venv "$OUT/venv"
    "$OUT/venv/bin/pip" install --quiet "matplotlib==3.10.*"
  fi
  PY="$OUT/venv/bin/python"
fi
HOOK="$RELEASE/memctl-hook"
MEMCTL="$RELEASE/memctl"
# Whatever a step leaves running in the output folder ends with the script, and a short run's
# folder goes.
cleanup() {
  python3 -c 'import sys; sys.path.insert(0, "scripts"); import benchlib; benchlib.stop_dir_processes(sys.argv[1])' "$OUT" || true
  if [ "$SHORT" = 1 ]; then rm -rf "$OUT"; fi
}
trap cleanup EXIT

if [ "${BENCH_SKIP_PEER:-0}" != 1 ]; then
  export PEER_ROOT="${PEER_ROOT:-$HOME/.cache/memctl-peer}"
  bash "$SHARED/peer/install.sh" "$PEER_ROOT" >/dev/null
fi

RAW="$OUT/raw.jsonl"
: > "$RAW"
for n in $SIZES; do
  T="$OUT/t$n.jsonl"
  [ -s "$T" ] || python3 "$GEN" --turns "$n" --seed 42 > "$T"
  for round in $(seq 1 "$ROUNDS"); do
    # Interleave: alternate who goes first each round.
    order="memctl peer"; [ $((round % 2)) = 0 ] && order="peer memctl"
    for who in $order; do
      if [ "$who" = memctl ]; then
        echo "bench: memctl  n=$n round=$round" >&2
        PEER_GEN="$GEN" python3 scripts/bench_hooks.py "$HOOK" "$MEMCTL" "$T" "$OUT/w-memctl-$n" "$RUNS" \
          | sed "s/^{/{\"tool\":\"memctl\",\"size\":$n,\"round\":$round,/" >> "$RAW"
      elif [ "${BENCH_SKIP_PEER:-0}" != 1 ]; then
        echo "bench: peer    n=$n round=$round" >&2
        bash "$SHARED/peer/run_peer.sh" "$T" "$OUT/w-peer-$n" "$RUNS" \
          | sed "s/^{/{\"tool\":\"peer\",\"size\":$n,\"round\":$round,/" >> "$RAW"
        python3 scripts/bench_peer_completeness.py "$OUT/w-peer-$n" \
          | sed "s/^{/{\"tool\":\"peer\",\"size\":$n,\"round\":$round,/" >> "$RAW"
      fi
    done
  done
done

if [ "${BENCH_ONLY_HOOKS:-0}" = 1 ]; then
  "$PY" scripts/bench_report.py "$RAW" "$OUT" "$REPORT" "$PLOT"
  echo "bench: hooks only; wrote $REPORT and $PLOT in $((SECONDS - start)) s" >&2
  exit 0
fi

# First archive of the whole history (every turn, no deadline), this build and an optional
# earlier one alternating run by run; store bytes, chunks and chunk-text bytes beside it.
FA="$OUT/first_archive.jsonl"
: > "$FA"
for n in $SIZES; do
  [ "$n" -ge "$MIN_BIG" ] || continue
  builds=("now=$HOOK")
  [ -n "${BENCH_BASELINE:-}" ] && builds+=("baseline=$BENCH_BASELINE/memctl-hook")
  echo "bench: first archive n=$n (${builds[*]})" >&2
  python3 scripts/bench_first_archive.py "$OUT/t$n.jsonl" "$OUT/fa-$n" 3 "${builds[@]}" >> "$FA"
done

# Store bytes per chunk with the model vectors in (first archive, then the embedder until
# nothing is pending and the quiet-moment reclaim). BENCH_BYTES_SIZES (default: every size
# from 500 on; embedding 5,000 turns takes ≈ 5–10 min).
SB="$OUT/store_bytes.jsonl"
: > "$SB"
for n in ${BENCH_BYTES_SIZES:-$SIZES}; do
  [ "$n" -ge "$MIN_BIG" ] || continue
  echo "bench: store bytes with model vectors n=$n" >&2
  python3 scripts/bench_store_bytes.py "$OUT/t$n.jsonl" "$OUT/sb-$n" "now=$HOOK" >> "$SB"
done

# Search while every chunk of the biggest history still waits for the embedder (it once measured
# 91 s before searches stopped embedding in the foreground).
SP="$OUT/search_pending.jsonl"
: > "$SP"
big=""
small=""
for n in $SIZES; do
  [ "$n" -ge "$MIN_BIG" ] && big="$n"
  [ -z "$small" ] && [ "$n" -ge "$MIN_BIG" ] && small="$n"
done
if [ -n "$big" ]; then
  echo "bench: search with every chunk pending n=$big" >&2
  python3 scripts/bench_search_pending.py "$OUT/t$big.jsonl" "$OUT/sp-$big" 3 "now=$RELEASE" >> "$SP"
fi

# Bulk embedding on 1 and 2 threads (real chunks of the 500-turn transcript), and
# UserPromptSubmit p50/p95 on a growing 500-turn session with no embedder vs the resident
# service busy embedding the biggest history's backlog (`embedder`).
ET="$OUT/embed_threads.jsonl"
CT="$OUT/contention.jsonl"
: > "$ET"; : > "$CT"
# The session transcript: 500 turns in a full run, the smallest size in a short one.
sess="$OUT/t500.jsonl"
[ "$SHORT" = 1 ] && [ -n "$small" ] && sess="$OUT/t$small.jsonl"
if [ -s "$sess" ]; then
  echo "bench: embedding threads" >&2
  python3 scripts/bench_embed_threads.py "$sess" "$OUT/et" "$EMBED_ROUNDS" "now=$RELEASE" --limit "$EMBED_LIMIT" >> "$ET"
  if [ -n "$big" ]; then
    echo "bench: UserPromptSubmit with and without a running embedder (backlog n=$big)" >&2
    # 300 calls per mode in blocks of 20: at 100 calls, p95 is the 5th-worst call and one
    # scheduler tick moves it; each ratio comes with its 90 % bootstrap interval.
    python3 scripts/bench_embedder_contention.py "$sess" "$OUT/t$big.jsonl" "$OUT/ct" "$CONTENTION_CALLS" "$RELEASE" --block "$CONTENTION_BLOCK" --gap "$CONTENTION_GAP" --burner >> "$CT"
  fi
fi

if [ "${BENCH_SKIP_CRITERION:-0}" != 1 ]; then
  cargo bench --quiet -p memctl-benches --bench embed --bench index --bench pipeline -- --warm-up-time 1 --measurement-time 3 2>&1 | tee "$OUT/criterion.txt" | grep -E "^[a-z_/0-9]+ +time:|recall" >&2 || true
fi
if [ "${BENCH_SKIP_LOCOMO:-1}" != 1 ] && [ -x scripts/locomo.sh ]; then
  bash scripts/locomo.sh > "$OUT/locomo.txt" 2>&1 || echo "bench: locomo failed (see $OUT/locomo.txt)" >&2
fi

"$PY" scripts/bench_report.py "$RAW" "$OUT" "$REPORT" "$PLOT"
if [ "$SHORT" = 1 ]; then
  # Every step must have produced its lines: a step that printed nothing has rotted.
  for f in raw first_archive store_bytes search_pending embed_threads contention; do
    [ -s "$OUT/$f.jsonl" ] || { echo "bench --short: $f.jsonl is empty" >&2; exit 1; }
  done
  [ -s "$REPORT" ] || { echo "bench --short: no report" >&2; exit 1; }
  # A bench that cannot load the model it claims to measure stops with an error.
  rc=0
  MEMCTL_MODEL_DIR="$OUT/no-model" python3 -c 'import os, sys; sys.path.insert(0, "scripts"); import benchlib; benchlib.require_model(sys.argv[1], os.environ, "bench --short check", cwd=sys.argv[2])' "$MEMCTL" "$OUT" 2>"$OUT/no-model.err" || rc=$?
  if [ "$rc" != 2 ] || ! grep -q "does not load it" "$OUT/no-model.err"; then
    echo "bench --short: require_model did not stop a bench without the model (rc=$rc): $(cat "$OUT/no-model.err")" >&2
    exit 1
  fi
  echo "bench --short: every step ran (sizes $SIZES) in $((SECONDS - start)) s" >&2
else
  echo "bench: wrote $REPORT and $PLOT in $((SECONDS - start)) s" >&2
fi
