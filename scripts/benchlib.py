"""What the first-archive benchmarks share (bench_first_archive, bench_search_pending,
bench_store_bytes, bench_embed_threads, bench_hooks): the transcript's session id, the
UserPromptSubmit payload on it, and the environment of a first archive that stores every turn
inline (no deadline, no background embedder); and for the contention benchmarks
(bench_embedder_contention, bench_bg_policy) the reference busy job and the CPU policies a
background job can run under. Stdlib only."""
import ctypes
import json
import os
import struct

# The reference busy job: memory-bound, like inference (`python3 -c BURN_JOB`).
BURN_JOB = "b = bytearray(48 << 20)\nc = bytearray(48 << 20)\nwhile True:\n    c[:] = b\n"
SYS_SCHED_SETATTR = 314  # x86-64


def idle_policy():
    """preexec_fn: nice 19 under SCHED_IDLE (the background embedder's policy before)."""
    os.nice(19)
    os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))


def sched_attr_policy(policy, nice, slice_ns):
    """A preexec_fn that sets `policy` at `nice` with a custom slice (0: the default) through
    the raw sched_setattr syscall (the stdlib has no wrapper); exits 99 when refused.
    `sched_attr_policy(os.SCHED_BATCH, 19, 100_000_000)` is what `lower_priority` gives the
    background embedder on Linux >= 6.12."""
    def apply():
        attr = struct.pack("IIQiIQQQ", 48, policy, 0, nice, 0, slice_ns, 0, 0)
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.syscall(SYS_SCHED_SETATTR, 0, ctypes.create_string_buffer(attr), 0) != 0:
            os._exit(99)
    return apply


def autogroup_nice(then=None):
    """A preexec_fn for a job started in a session of its own (`start_new_session=True`, so
    in an autogroup of its own where autogroups are on): the autogroup's nice to 19 (weight 15
    against a hook's group at 1024), then `then` (another preexec_fn) if given; exits 98 when
    refused."""
    def apply():
        try:
            with open("/proc/self/autogroup", "w") as f:
                f.write("19")
        except OSError:
            os._exit(98)
        if then:
            then()
    return apply


def take_opt(args, flag, default):
    """Remove `flag value` from the argument list `args` and return the value (`default` when
    the flag is absent)."""
    if flag in args:
        i = args.index(flag)
        value = args[i + 1]
        del args[i:i + 2]
        return value
    return default


def json_lines(path):
    """The JSON objects of a JSON-lines file, in order; lines that are not one are skipped."""
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            try:
                d = json.loads(line)
            except ValueError:
                continue
            if isinstance(d, dict):
                yield d


def first_line_with(path, key):
    """The first JSON line of a transcript with a non-empty `key` ({} when none has one)."""
    return next((d for d in json_lines(path) if d.get(key)), {})


def first_session_id(path):
    """The first `sessionId` in a transcript (None when no line has one)."""
    return first_line_with(path, "sessionId").get("sessionId")


def write_ups_input(workdir, transcript):
    """Write `<workdir>/ups.input.json`, a UserPromptSubmit payload on `transcript`; return
    (session id, payload path)."""
    session = first_session_id(transcript)
    os.makedirs(workdir, exist_ok=True)
    inp = os.path.join(workdir, "ups.input.json")
    with open(inp, "w") as fh:
        json.dump({"session_id": session, "transcript_path": transcript, "cwd": workdir,
                   "hook_event_name": "UserPromptSubmit", "prompt": "continue"}, fh)
    return session, inp


def first_archive_env(home, **extra):
    """The environment of a whole-history first archive: inline, every turn, no background
    embedder; MEMCTL_HOOK_DEADLINE_MS may be overridden from outside."""
    return dict(os.environ, MEMCTL_HOME=home, MEMCTL_BACKGROUND_EMBED="0",
                MEMCTL_HOOK_INLINE_BYTES=str(1 << 40), MEMCTL_HOOK_INLINE_PROMPT_ARCHIVE="1",
                MEMCTL_HOOK_DEADLINE_MS=os.environ.get("MEMCTL_HOOK_DEADLINE_MS", "600000"),
                **extra)
