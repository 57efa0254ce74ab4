#!/usr/bin/env bash
# bench.sh — one command: memctl vs the peer (claude-flow's context-persistence hook), same
# transcripts, same run, interleaved; criterion benches; a report with ratios and a plot.
#
#   scripts/bench.sh                 # full run (≈ 10–20 min on 2 cores)
#   BENCH_SIZES="50 500" BENCH_RUNS=3 scripts/bench.sh   # quicker
#   BENCH_SKIP_CRITERION=1 / BENCH_SKIP_PEER=1 / BENCH_SKIP_LOCOMO=0 (LoCoMo is off by default: ~10 min)
#   BENCH_BYTES_SIZES="500"  store bytes with model vectors only for these sizes (embedding 5,000 turns is slow)
#   BENCH_BASELINE=DIR   also time the first archive with the memctl-hook/memctl in DIR (an
#                        earlier build) in the same run, alternating with this one
#
# Writes benches/results/<date>.md and benches/results/<date>-hooks.png.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
SHARED="${MEMCTL_SHARED:-$ROOT/../shared}"
[ -d "$SHARED/peer" ] || { echo "bench: the comparison with the peer needs its hook and generator in $MEMCTL_SHARED/peer (default ../shared/peer); not found at $SHARED/peer" >&2; exit 2; }
SIZES="${BENCH_SIZES:-50 500 5000}"
RUNS="${BENCH_RUNS:-5}"
ROUNDS="${BENCH_ROUNDS:-2}"
OUT="$ROOT/.cache/bench"
DATE="$(date -u +%Y-%m-%d)"
mkdir -p "$OUT" benches/results

bash scripts/setup.sh
# shellcheck disable=SC1091
source .cache/env.sh
cargo build --release --quiet -p memctl-hooks
# shellcheck source=scripts/target_dir.sh
source "$ROOT/scripts/target_dir.sh"
RELEASE="$(cargo_target_dir "$ROOT")/release"
HOOK="$RELEASE/memctl-hook"
MEMCTL="$RELEASE/memctl"

# Plotting venv (matplotlib), cached.
if [ ! -x "$OUT/venv/bin/python" ]; then
  python3 -m venv "$OUT/venv"
  "$OUT/venv/bin/pip" install --quiet "matplotlib==3.10.*"
fi

if [ "${BENCH_SKIP_PEER:-0}" != 1 ]; then
  export PEER_ROOT="${PEER_ROOT:-$HOME/.cache/memctl-peer}"
  bash "$SHARED/peer/install.sh" "$PEER_ROOT" >/dev/null
fi

RAW="$OUT/raw.jsonl"
: > "$RAW"
for n in $SIZES; do
  T="$OUT/t$n.jsonl"
  [ -s "$T" ] || python3 "$SHARED/peer/gen_transcript.py" --turns "$n" --seed 42 > "$T"
  for round in $(seq 1 "$ROUNDS"); do
    # Interleave: alternate who goes first each round.
    order="memctl peer"; [ $((round % 2)) = 0 ] && order="peer memctl"
    for who in $order; do
      if [ "$who" = memctl ]; then
        echo "bench: memctl  n=$n round=$round" >&2
        PEER_GEN="$SHARED/peer/gen_transcript.py" python3 scripts/bench_hooks.py "$HOOK" "$MEMCTL" "$T" "$OUT/w-memctl-$n" "$RUNS" \
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

# First archive of the whole history (every turn, no deadline), this build and an optional
# earlier one alternating run by run; store bytes, chunks and chunk-text bytes beside it.
FA="$OUT/first_archive.jsonl"
: > "$FA"
for n in $SIZES; do
  [ "$n" -ge 500 ] || continue
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
  [ "$n" -ge 500 ] || continue
  echo "bench: store bytes with model vectors n=$n" >&2
  python3 scripts/bench_store_bytes.py "$OUT/t$n.jsonl" "$OUT/sb-$n" "now=$HOOK" >> "$SB"
done

# Search while every chunk of the biggest history still waits for the embedder (it once measured
# 91 s before searches stopped embedding in the foreground).
SP="$OUT/search_pending.jsonl"
: > "$SP"
big=""
for n in $SIZES; do [ "$n" -ge 500 ] && big="$n"; done
if [ -n "$big" ]; then
  echo "bench: search with every chunk pending n=$big" >&2
  python3 scripts/bench_search_pending.py "$OUT/t$big.jsonl" "$OUT/sp-$big" 3 "now=$RELEASE" >> "$SP"
fi

# Bulk embedding on 1 and 2 threads (real chunks of the 500-turn transcript), and
# UserPromptSubmit p50/p95 on a growing 500-turn session with no embedder vs a background
# embedder busy on the biggest history's backlog (`embedder`: the hooks as shipped, which pause it
# while they run; `embedder-nopause`: MEMCTL_HOOK_PAUSE_EMBEDDER=0).
ET="$OUT/embed_threads.jsonl"
CT="$OUT/contention.jsonl"
: > "$ET"; : > "$CT"
if [ -s "$OUT/t500.jsonl" ]; then
  echo "bench: embedding threads" >&2
  python3 scripts/bench_embed_threads.py "$OUT/t500.jsonl" "$OUT/et" 2 "now=$RELEASE" --limit 512 >> "$ET"
  if [ -n "$big" ]; then
    echo "bench: UserPromptSubmit with and without a running embedder (backlog n=$big)" >&2
    # 300 calls per mode in blocks of 20: at 100 calls, p95 is the 5th-worst call and one
    # scheduler tick moves it; each ratio comes with its 90 % bootstrap interval.
    python3 scripts/bench_embedder_contention.py "$OUT/t500.jsonl" "$OUT/t$big.jsonl" "$OUT/ct" 300 "$RELEASE" --block 20 --burner --no-pause >> "$CT"
  fi
fi

if [ "${BENCH_SKIP_CRITERION:-0}" != 1 ]; then
  cargo bench --quiet -p memctl-benches --bench embed --bench index --bench pipeline -- --warm-up-time 1 --measurement-time 3 2>&1 | tee "$OUT/criterion.txt" | grep -E "^[a-z_/0-9]+ +time:|recall" >&2 || true
fi
if [ "${BENCH_SKIP_LOCOMO:-1}" != 1 ] && [ -x scripts/locomo.sh ]; then
  bash scripts/locomo.sh > "$OUT/locomo.txt" 2>&1 || echo "bench: locomo failed (see $OUT/locomo.txt)" >&2
fi

"$OUT/venv/bin/python" scripts/bench_report.py "$RAW" "$OUT" "benches/results/$DATE.md" "benches/results/$DATE-hooks.png"
echo "bench: wrote benches/results/$DATE.md and benches/results/$DATE-hooks.png" >&2
