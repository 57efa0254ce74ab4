#!/usr/bin/env bash
# restore_before_after.sh — the restore block of one generated session, by the restore code of
# commit 2ce14cc (before the restore line rules) and by this checkout, at 1000 / 4000 / 8000 chars,
# with a few counts per block. Writes docs/restore-before-after.md (or --out FILE).
#
#   scripts/restore_before_after.sh [--before-bin PATH] [--out FILE] [--seed S] [--turns N]
#
# The session: `memctl-gen-transcript --turns 500 --seed 4242` (deterministic), archived with
# hash vectors into a temporary store (`MEMCTL_EMBEDDER=hash`: restore never loads the model),
# then `memctl restore <session> --chars N` as after its compaction. Without --before-bin the
# "before" binary is built from a temporary git worktree of 2ce14cc into target/restore-before
# (kept: later runs are incremental).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
BEFORE_REV=2ce14cc
SEED=4242
TURNS=500
OUT="docs/restore-before-after.md"
BEFORE_BIN=""
while [[ $# -gt 0 ]]; do
    case "$1" in
        --before-bin) BEFORE_BIN="$2"; shift 2 ;;
        --out) OUT="$2"; shift 2 ;;
        --seed) SEED="$2"; shift 2 ;;
        --turns) TURNS="$2"; shift 2 ;;
        *) echo "usage: $0 [--before-bin PATH] [--out FILE] [--seed S] [--turns N]" >&2; exit 2 ;;
    esac
done
TARGET="${CARGO_TARGET_DIR:-$ROOT/target}"
work="$(mktemp -d)"
cleanup() {
    if [[ -d "$work/before-src" ]]; then
        git -C "$ROOT" worktree remove --force "$work/before-src"
    fi
    rm -rf "$work"
}
trap cleanup EXIT

cargo build -q -p memctl-hooks -p memctl-cli -p memctl-tests --bins
AFTER_BIN="$TARGET/debug/memctl"
GEN_BIN="$TARGET/debug/memctl-gen-transcript"
if [[ -z "$BEFORE_BIN" ]]; then
    git -C "$ROOT" worktree add --detach "$work/before-src" "$BEFORE_REV" >/dev/null
    (cd "$work/before-src" && CARGO_TARGET_DIR="$TARGET/restore-before" cargo build -q --workspace --bins)
    BEFORE_BIN="$TARGET/restore-before/debug/memctl"
fi

transcripts="$work/transcripts"
mkdir -p "$transcripts"
"$GEN_BIN" --turns "$TURNS" --seed "$SEED" > "$transcripts/session.jsonl"
session="$(head -c 200000 "$transcripts/session.jsonl" | grep -o '"sessionId":"[^"]*"' | head -1 | cut -d'"' -f4)"

run() { # run <label> <binary> <chars>
    local home="$work/home-$1"
    if [[ ! -f "$home/.ingested" ]]; then
        mkdir -p "$home"
        env -u MEMCTL_RESTORE_CHARS MEMCTL_HOME="$home" MEMCTL_EMBEDDER=hash HOME="$work" \
            "$2" ingest --no-embed --quiet "$transcripts" >/dev/null
        touch "$home/.ingested"
    fi
    env MEMCTL_HOME="$home" MEMCTL_EMBEDDER=hash MEMCTL_MEMORY=0 HOME="$work" \
        "$2" restore "$session" --chars "$3" > "$work/$1-$3.txt"
}
for chars in 1000 4000 8000; do
    run before "$BEFORE_BIN" "$chars"
    run after "$AFTER_BIN" "$chars"
done

python3 - "$work" "$OUT" "$SEED" "$TURNS" "$session" "$BEFORE_REV" <<'EOF'
import re, sys
work, out, seed, turns, session, rev = sys.argv[1:]
ACKS = {"continue", "yes, do that", "looks good, commit it", "run the tests again", "ok",
        "go ahead", "try again", "now push it", "lgtm, next", "undo that last change"}

def stats(text):
    items = [l for l in text.splitlines() if l.startswith("- ")]
    errors = [l.split(" · error: ", 1)[1] for l in items if " · error: " in l]
    # Not a failure: a passing run, file content shown by Read (`  12→code`), the assistant's
    # own bullet, or a line without any failure word.
    bad_errors = [e for e in errors if "test result: ok" in e or "0 failed" in e
                  or "\u2192" in e or e.startswith("- ")
                  or not re.search(r"(?i)error|panicked|fail|traceback|exception|ERR!", e)]
    filler = [l for l in items if re.search(r"→ (Here's a summary|Let me|I'll )", l)
              or l.rstrip().endswith(":")]
    trivial = [l for l in items if re.match(r"- \[(?:session \w+ )?turn [^\]]*\] ([^→·]+?) → All \d+ tests pass now\.$",
                                              l) and re.match(r"- \[[^\]]*\] ([^→]+?) →", l).group(1) in ACKS]
    absolute = [l for l in items if "/home/dev/src/" in l]
    failure_prompts = [l for l in items if "The build is failing with this:" in l]
    failure_kept = [l for l in failure_prompts if re.search(r"this: ?`|error|Error|FAIL|panicked", l.split("→")[0].split("this:", 1)[1])]
    decisions = [l for l in items if l.startswith("- Decision: ") or l.startswith("- Open: ")]
    useful = len(items) - len(set(filler) | set(trivial))
    return dict(chars=len(text), lines=len(items), useful=useful, filler=len(filler),
                trivial=len(trivial), errors=len(errors), bad_errors=len(bad_errors),
                absolute=len(absolute), failure=f"{len(failure_kept)}/{len(failure_prompts)}",
                decisions=len(decisions))

rows, blocks = [], []
for chars in (1000, 4000, 8000):
    for label in ("before", "after"):
        text = open(f"{work}/{label}-{chars}.txt").read().rstrip("\n")
        rows.append((chars, label, stats(text)))
        blocks.append((chars, label, text))

cols = ["chars", "lines", "useful", "filler", "trivial", "errors", "bad_errors", "absolute",
        "failure", "decisions"]
md = [f"# Restore block before and after", "",
      f"Reproduce: `scripts/restore_before_after.sh` (generated session: `memctl-gen-transcript "
      f"--turns {turns} --seed {seed}`, session `{session[:8]}`, archived with hash vectors; "
      f"`memctl restore <session> --chars N` as after its compaction; before = commit `{rev}`, "
      f"after = this checkout). No project memory files (`MEMCTL_MEMORY=0`).", "",
      "Columns: `chars` used of the budget; `lines` restored; `useful` = lines minus filler "
      "and trivial ones; `filler` = lines whose answer is an announcement (\"Here's a summary "
      "of the changes:\", \"Let me…\") or that end in `:`; `trivial` = an acknowledgement "
      "answered by \"All N tests pass now.\"; `errors` = `error:` labels, `bad_errors` = those "
      "on a passing run, on file content shown by Read, on the assistant's own words or on a "
      "line with no failure in it; `absolute` = lines with a path under "
      "the project written absolute; `failure` = prompts with a pasted failure log whose line "
      "keeps the failure, of those shown; `decisions` = decision and open-item lines.", "",
      "| budget | code | " + " | ".join(cols) + " |",
      "|---|---|" + "---|" * len(cols)]
for chars, label, st in rows:
    md.append(f"| {chars} | {label} | " + " | ".join(str(st[c]) for c in cols) + " |")
for chars, label, text in blocks:
    md += ["", f"## {label}, {chars} chars", "", "```text", text, "```"]
open(out, "w").write("\n".join(md) + "\n")
print("\n".join(md[:len(rows) + 12]))
EOF
echo "wrote $OUT"
