#!/usr/bin/env bash
# LoCoMo retrieval benchmark for memctl, end to end (see ../shared/bench/locomo/README.md).
#
#   scripts/locomo.sh                       # from any cwd, after (or without) scripts/setup.sh
#
# Steps: setup + release build -> to_transcripts.py (LoCoMo -> Claude Code transcripts) ->
# `memctl ingest` into a fresh store -> `memctl search --queries` in modes dense, lexical,
# hybrid (k = 10) -> run files -> reference_eval.py --score-run -> table, written to
# benches/results/locomo-<date>.md with the reference numbers next to it.
#
# Environment:
#   MEMCTL_SHARED        the shared directory (default: <repo>/../shared)
#   LOCOMO_OUT           work directory (default: <repo>/.cache/locomo; nothing is written to shared)
#   LOCOMO_REUSE_STORE=1 keep an existing store if it was built from the same transcripts and
#                        binary (searching never modifies it); default: ingest into a fresh store
#   LOCOMO_SWEEP="a,b,c ..."  also score hybrid with each --fusion lexical_max,lexical_min,dense_floor
#   LOCOMO_RESULT        result file (default: benches/results/locomo-<YYYY-MM-DD>.md; "-" = none)
#   MEMCTL_BIN           use this memctl binary instead of building target/release/memctl
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
SHARED=${MEMCTL_SHARED:-$REPO/../shared}
BENCH=$SHARED/bench/locomo
OUT=${LOCOMO_OUT:-$REPO/.cache/locomo}
DATA=$OUT/data
HOME_DIR=$OUT/home
RESULTS=$OUT/results
GLUE=$REPO/scripts/locomo_run.py
K=10
DATE=$(date +%F)
RESULT_MD=${LOCOMO_RESULT:-$REPO/benches/results/locomo-$DATE.md}

log() { printf 'locomo: %s\n' "$*" >&2; }
die() { printf 'locomo: ERROR: %s\n' "$*" >&2; exit 1; }
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

[[ -d $BENCH ]] || die "no $BENCH (set MEMCTL_SHARED to the shared directory)"
LOCOMO_JSON=$BENCH/data/locomo10.json
[[ -f $LOCOMO_JSON ]] || die "no $LOCOMO_JSON (see $BENCH/README.md, 'Data source')"
EXPECT_SHA=79fa87e90f04081343b8c8debecb80a9a6842b76a7aa537dc9fdf651ea698ff4
[[ $(sha256sum "$LOCOMO_JSON" | cut -d' ' -f1) == "$EXPECT_SHA" ]] \
    || die "$LOCOMO_JSON does not have the pinned sha256 $EXPECT_SHA"
mkdir -p "$OUT" "$RESULTS"

# --- 1. runtime, model, binary ----------------------------------------------------------------
bash "$REPO/scripts/setup.sh" >&2
# shellcheck disable=SC1091
source "$REPO/.cache/env.sh"
if [[ -n ${MEMCTL_BIN:-} ]]; then
    BIN=$MEMCTL_BIN
else
    log "cargo build --release -p memctl-hooks -p memctl-cli"
    (cd "$REPO" && cargo build --release -p memctl-hooks -p memctl-cli >&2)
    # A private copy: other builds of the workspace must not swap the binary mid-run.
    # shellcheck source=scripts/target_dir.sh
    source "$REPO/scripts/target_dir.sh"
    cp "$(cargo_target_dir "$REPO")/release/memctl" "$OUT/memctl"
    BIN=$OUT/memctl
fi
[[ -x $BIN ]] || die "no memctl binary at $BIN"

# Python for the scorer: reference_eval.py --score-run needs numpy only.
PY=$REPO/.cache/venv/bin/python
if ! "$PY" -c 'import numpy' 2>/dev/null; then
    PY=$OUT/venv/bin/python
    if ! "$PY" -c 'import numpy' 2>/dev/null; then
        log "creating $OUT/venv from $BENCH/requirements.txt"
        python3 -m venv "$OUT/venv"
        "$OUT/venv/bin/pip" install -q -r "$BENCH/requirements.txt" >&2
    fi
fi

# --- 2. LoCoMo -> transcripts (deterministic, ~1 s) ---------------------------------------------
python3 "$BENCH/to_transcripts.py" --locomo "$LOCOMO_JSON" --out "$DATA" >/dev/null
N_FILES=$(find "$DATA/projects" -name '*.jsonl' | wc -l)
log "converted: $N_FILES transcripts in $DATA/projects"

# --- 3. ingest into a fresh store -----------------------------------------------------------------
STAMP_NOW=$( (cat "$DATA"/projects/*/*.jsonl | sha256sum; sha256sum "$BIN") | sha256sum | cut -c1-16)
STAMP_FILE=$HOME_DIR/.locomo-stamp
INGEST_S="reused"
INGEST_LINE="(store reused)"
if [[ ${LOCOMO_REUSE_STORE:-0} == 1 && -f $STAMP_FILE && $(<"$STAMP_FILE") == "$STAMP_NOW" ]]; then
    log "reusing the store in $HOME_DIR"
    if [[ -f $HOME_DIR/.locomo-ingest ]]; then
        IFS='|' read -r INGEST_S INGEST_LINE <"$HOME_DIR/.locomo-ingest"
        INGEST_LINE="store reused; built with: $INGEST_LINE"
    fi
else
    rm -rf "$HOME_DIR"
    mkdir -p "$HOME_DIR"
    log "ingesting into $HOME_DIR (embeds every turn with the model: about a minute on 2 cores)"
    t0=$(now)
    INGEST_LINE=$(MEMCTL_HOME=$HOME_DIR "$BIN" ingest "$DATA/projects")
    INGEST_S=$(secs "$t0" "$(now)")
    echo "$STAMP_NOW" >"$STAMP_FILE"
    echo "$INGEST_S|$INGEST_LINE" >"$HOME_DIR/.locomo-ingest"
    log "$INGEST_LINE"
    log "ingest: ${INGEST_S} s"
fi
STORE_BYTES=$(stat -c %s "$HOME_DIR/memctl.redb")
STATUS=$(MEMCTL_HOME=$HOME_DIR "$BIN" status)

# Every LoCoMo line must be inside a stored chunk (sessions that open with the second speaker
# start with an assistant line: a "preamble" turn). One dense query per project lists them all.
python3 "$GLUE" coverage-queries "$DATA" "$OUT/coverage_q.jsonl"
MEMCTL_HOME=$HOME_DIR "$BIN" search --queries "$OUT/coverage_q.jsonl" --mode dense --k 5000 --json \
    >"$OUT/coverage.jsonl"
COVERAGE=$(python3 "$GLUE" coverage "$DATA" "$OUT/coverage.jsonl" 2>&1) || { echo "$COVERAGE" >&2; die "some LoCoMo lines are not retrievable"; }
log "$COVERAGE"

# --- 4. search (batch) + score ----------------------------------------------------------------------
python3 "$GLUE" queries "$DATA" "$OUT/queries.jsonl"
N_Q=$(wc -l <"$OUT/queries.jsonl")
declare -A SEARCH_S
PAIRS=()
run_one() { # label mode [fusion]
    local label=$1 mode=$2 fusion=${3:-} t0 extra=()
    [[ -n $fusion ]] && extra=(--fusion "$fusion")
    t0=$(now)
    MEMCTL_HOME=$HOME_DIR "$BIN" search --queries "$OUT/queries.jsonl" --mode "$mode" --k "$K" --json \
        "${extra[@]}" >"$OUT/out_$label.jsonl"
    SEARCH_S[$label]=$(secs "$t0" "$(now)")
    python3 "$GLUE" convert "$OUT/out_$label.jsonl" "$OUT/run_$label.jsonl" 2>/dev/null
    "$PY" "$BENCH/reference_eval.py" --data "$DATA" --out "$RESULTS" \
        --score-run "$OUT/run_$label.jsonl" >"$RESULTS/score_$label.txt"
    PAIRS+=("$label=score_run_$label.jsonl.json")
    log "$label: ${SEARCH_S[$label]} s for $N_Q queries"
}
run_one dense dense
run_one lexical lexical
run_one hybrid hybrid
for f in ${LOCOMO_SWEEP:-}; do
    run_one "hybrid@$f" hybrid "$f"
done

TABLE=$(python3 "$GLUE" table "$RESULTS" "${PAIRS[@]}" --reference "$BENCH/README.md")
echo "$TABLE"
CATS=$(python3 "$GLUE" categories "$RESULTS" "${PAIRS[@]}")
echo "$CATS"

# --- 5. result file ------------------------------------------------------------------------------
[[ $RESULT_MD == - ]] && exit 0
mkdir -p "$(dirname "$RESULT_MD")"
ms() { awk -v s="$1" -v n="$N_Q" 'BEGIN { printf "%.2f", 1000 * s / n }'; }
{
    echo "# LoCoMo retrieval: memctl ($DATE)"
    echo
    echo "Reproduce: \`bash scripts/locomo.sh\` (from the repo root; shared dir: \`MEMCTL_SHARED\`, default \`../shared\`)."
    echo "memctl $(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo '?')$(git -C "$REPO" diff --quiet 2>/dev/null || echo '+dirty'), k = $K, 10 conversations, $N_Q questions"
    echo "(scored: those with resolvable evidence), one store, each conversation searched as its own project."
    echo
    echo "$TABLE"
    echo
    echo "Recall of evidence turns / sessions, \"overall\" = all categories including adversarial."
    echo "A memctl result is one turn chunk = a user line plus the assistant reply (plus preamble"
    echo "turns: a session that opens with the second speaker gives a one-line chunk). It is scored as"
    echo "the list of its line uuids, and it **covers every evidence line it contains**: the same"
    echo "granularity as the reference \"pair\" chunking (3,075 chunks there and here), so compare with"
    echo "the reference \`/pair\` rows; the \`/turn\` rows (one line per result) are shown for context only."
    echo
    echo "Per LoCoMo category (the scorer's names; 2 = temporal):"
    echo
    echo "$CATS"
    echo
    echo "- ingest: $INGEST_S s wall ($INGEST_LINE)"
    echo "- $COVERAGE"
    echo "- store: $STORE_BYTES bytes ($HOME_DIR/memctl.redb, model vectors: a model-embedded chunk keeps no hash vector from schema 4 on)"
    for label in "${!SEARCH_S[@]}"; do
        echo "- search $label: ${SEARCH_S[$label]} s for $N_Q queries = $(ms "${SEARCH_S[$label]}") ms/query (batch, one process, model loaded once)"
    done | sort
    echo "- machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
    echo
    echo '```'
    echo "$STATUS"
    echo '```'
} >"$RESULT_MD"
log "wrote $RESULT_MD"
