#!/bin/sh
# chaos-hook.sh <memctl-hook> <Event>
#
# Hook command prefix for the e2e `failures` scenario: runs memctl-hook with a damaged input
# or environment, chosen per step by CCH_E2E_CHAOS (a step's `env` reaches the hooks; the CCH_
# prefix makes the harness's hook_tee.py record it with each call, so checks can select calls
# by mode):
#
#   none                 pass the payload through unchanged
#   garbage              stdin replaced by bytes that are not JSON (and not UTF-8)
#   truncated            the real payload cut after 40 bytes
#   empty                empty stdin
#   wrongtypes           JSON of the wrong shape (numbers where strings belong, an array, ...)
#   missing-transcript   the real payload with transcript_path pointing at a file that does not exist
#   dir-transcript       transcript_path pointing at a directory
#   junk-transcript      transcript_path pointing at a file of broken / unknown JSONL lines
#   readonly             MEMCTL_HOME (set by the scenario) made read-only for this hook only
#                        (a read-only bind mount in a private mount namespace; without one, a
#                        read-only copy); CCH_E2E_RO_DIR instead names a directory to create
#                        read-only and use as MEMCTL_HOME (an empty, unwritable data dir).
#                        Root without mount namespaces falls back to an uncreatable data dir.
#
# The wrapper fails loudly (exit 97) on an unknown mode, so that a broken test setup never
# passes as "the hook coped".
set -eu
mode=${CCH_E2E_CHAOS:-none}
tmp=${TMPDIR:-/tmp}

# Rewrite transcript_path in the payload read from stdin (python3: the harness needs it anyway).
retarget() {
    python3 -c '
import json, sys
raw = sys.stdin.buffer.read()
try:
    p = json.loads(raw)
    p["transcript_path"] = sys.argv[1]
    sys.stdout.write(json.dumps(p))
except Exception:
    sys.stdout.buffer.write(raw)
' "$1"
}

make_readonly() {  # make_readonly <dir> <command...>: exec the command with MEMCTL_HOME=<dir> read-only
    dir=$1
    shift
    mkdir -p "$dir"
    # 1. A private mount namespace with a read-only bind mount (root, or root in the harness's
    #    user namespace): only this hook sees the directory read-only. Probed first, because
    #    containers may allow `unshare -m` but not mounts.
    ro_mount='mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" "$0" || exit 97
              if touch "$0/.rw-probe" 2>/dev/null; then rm -f "$0/.rw-probe"; exit 98; fi'
    if unshare -m sh -c "$ro_mount" "$dir" 2>/dev/null; then
        exec unshare -m sh -c "$ro_mount"'
            MEMCTL_HOME="$0" exec "$@"' "$dir" "$@"
    fi
    # 2. An ordinary user: a read-only copy (permissions bind non-root users).
    copy=$(mktemp -d "$tmp/ro-store.XXXXXX")
    cp -a "$dir/." "$copy/" 2>/dev/null || true
    chmod -R a-w "$copy"
    if ! touch "$copy/.rw-probe" 2>/dev/null; then
        MEMCTL_HOME=$copy exec "$@"
    fi
    chmod -R u+w "$copy"
    rm -rf "$copy"
    # 3. Root without mount namespaces (e.g. a container): nothing is read-only for root, so
    #    use a data dir that cannot even be created (under /proc).
    echo "chaos-hook: no read-only mount possible here; using an uncreatable data dir" >&2
    MEMCTL_HOME=/proc/memctl-e2e-uncreatable/data exec "$@"
}

case $mode in
none) exec "$@" ;;
garbage)
    cat >/dev/null
    printf '\377\376not json at all {{{ \000\001 ]]\n' | exec "$@"
    ;;
truncated)
    head -c 40 | exec "$@"
    ;;
empty)
    cat >/dev/null
    exec "$@" </dev/null
    ;;
wrongtypes)
    cat >/dev/null
    printf '%s' '{"session_id": 42, "transcript_path": ["x"], "cwd": {"a": 1}, "hook_event_name": 7, "source": 3, "prompt": null, "trigger": [], "reason": false, "tool_name": 1}' | exec "$@"
    ;;
missing-transcript)
    retarget "$tmp/no-such-dir/missing-transcript.jsonl" | exec "$@"
    ;;
dir-transcript)
    mkdir -p "$tmp/a-directory.jsonl"
    retarget "$tmp/a-directory.jsonl" | exec "$@"
    ;;
junk-transcript)
    junk=$tmp/junk-transcript.jsonl
    if [ ! -f "$junk" ]; then  # several hooks may race here: write aside, then rename
        python3 -c '
import json, sys
lines = [
    b"this is not json",
    b"{\"type\": \"user\", \"message\": ",
    b"[1, 2, 3]",
    b"null",
    b"{\"type\": \"user\"}",
    b"{\"type\": \"user\", \"message\": {\"role\": \"user\", \"content\": 12345}, \"uuid\": \"u1\"}",
    b"{\"type\": \"assistant\", \"message\": {\"content\": [{\"type\": \"tool_use\", \"id\": 5, \"input\": \"x\"}]}}",
    b"{\"type\": \"brand-new-line-type\", \"payload\": {\"deep\": [1, {\"x\": null}]}}",
    b"\xff\xfe\xfd invalid utf-8 \xc3\x28",
    json.dumps({"type": "user", "uuid": "u2", "message": {"role": "user", "content": "junk transcript prompt " + "x" * 300000}}).encode(),
    b"{\"type\": \"user\", \"uuid\": \"u3\", \"message\": {\"role\": \"user\", \"content\": [{\"type\": \"tool_result\", \"content\": {\"weird\": true}}]}}",
]
sys.stdout.buffer.write(b"\n".join(lines))   # no newline at the end: a torn last line
' >"$junk.$$"
        mv -f "$junk.$$" "$junk"
    fi
    retarget "$junk" | exec "$@"
    ;;
readonly)
    if [ -n "${CCH_E2E_RO_DIR:-}" ]; then
        make_readonly "$CCH_E2E_RO_DIR" "$@"
    fi
    [ -n "${MEMCTL_HOME:-}" ] || { echo "chaos-hook: readonly needs MEMCTL_HOME or CCH_E2E_RO_DIR" >&2; exit 97; }
    make_readonly "$MEMCTL_HOME" "$@"
    ;;
*)
    echo "chaos-hook: unknown CCH_E2E_CHAOS=$mode" >&2
    exit 97
    ;;
esac
