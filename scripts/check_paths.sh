#!/usr/bin/env bash
# check_paths.sh — no absolute path of a developer's machine in any tracked file.
#
# A test or script that reads /work/..., /root/... or this machine's home passes on one machine
# and fails (or, worse, skips) everywhere else. Synthetic project names such as /home/dev/src/x
# are data (never opened) and pass; fixture transcripts and benchmark reports (which record where
# a measurement ran) are exempt.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
pattern='(^|[^A-Za-z0-9_.~-])/(work|root|Users/[A-Za-z0-9_.-]+)/'
hits=$(git grep -nIE "$pattern" -- . ':!*/fixtures/*' ':!benches/results/*' ':!scripts/check_paths.sh' || true)
# This machine's own locations, whatever they are called.
for p in "$ROOT" "$HOME"; do
    [[ $p == / || -z $p ]] && continue
    more=$(git grep -nIF "$p/" -- . ':!*/fixtures/*' ':!benches/results/*' ':!scripts/check_paths.sh' || true)
    [[ -n $more ]] && hits+=$'\n'"$more"
done
hits=$(sed '/^$/d' <<<"$hits")
if [[ -n $hits ]]; then
    echo "check_paths: absolute machine paths in tracked files (use a path relative to the repository):" >&2
    echo "$hits" >&2
    exit 1
fi
echo "check_paths: ok (no absolute machine paths in tracked files)"
