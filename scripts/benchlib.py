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


# --- Processes a benchmark started, and the model it claims to measure ---------------------

def _under(path, root):
    return path == root or path.startswith(root.rstrip("/") + "/")


def _ancestors():
    """This process and its ancestors (never stopped: a bench may run inside a data dir)."""
    pids, pid = set(), os.getpid()
    while pid > 1 and pid not in pids:
        pids.add(pid)
        try:
            with open("/proc/%d/stat" % pid) as fh:
                pid = int(fh.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            break
    return pids


def dir_processes(root):
    """Pids of this user's processes that work in `root`: their MEMCTL_HOME, working dir or an
    open file is in it. Hooks start the resident embedder and background ingest/embed jobs
    detached (own process group, no pid file), so this is how a bench finds them."""
    root = os.path.realpath(root)
    me, uid, found = _ancestors(), os.getuid(), []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) in me:
            continue
        proc = "/proc/" + entry
        try:
            if os.stat(proc).st_uid != uid:
                continue
            with open(proc + "/stat") as fh:
                if fh.read().rsplit(")", 1)[1].split()[0] == "Z":
                    continue
            with open(proc + "/environ", "rb") as fh:
                env = fh.read().split(b"\0")
            homes = [e[len(b"MEMCTL_HOME="):].decode(errors="replace") for e in env
                     if e.startswith(b"MEMCTL_HOME=")]
            paths = [os.readlink(proc + "/cwd")]
            for fd in os.listdir(proc + "/fd"):
                try:
                    paths.append(os.readlink(proc + "/fd/" + fd))
                except OSError:
                    pass
        except OSError:
            continue  # gone meanwhile, or not ours to read
        if any(_under(os.path.realpath(h), root) for h in homes if h) or \
                any(_under(p, root) for p in paths):
            found.append(int(entry))
    return found


def stop_dir_processes(root, grace=5.0):
    """End every process working in `root` (see `dir_processes`): SIGTERM, then SIGKILL after
    `grace` seconds; returns once none is left, with the pids it ended. A bench calls this
    before it copies over or removes a data dir (a resident embedder still writing its socket
    there made `rmtree` fail with `Directory not empty`), and before its next timed run (a
    model load on the other core is not the hook's cost)."""
    import signal
    import time
    if not os.path.isdir(root):
        return []
    ended = []
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, grace)):
        pids = dir_processes(root)
        if not pids:
            break
        for pid in pids:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        ended.extend(p for p in pids if p not in ended)
        stop = time.monotonic() + wait
        while time.monotonic() < stop and dir_processes(root):
            time.sleep(0.02)
    left = dir_processes(root)
    if left:
        raise RuntimeError("processes still working in %s after SIGKILL: %s" % (root, left))
    return ended


def remove_tree(path):
    """`shutil.rmtree(path)` once no process works in it any more (a no-op when absent)."""
    import shutil
    if os.path.lexists(path):
        stop_dir_processes(path)
        shutil.rmtree(path)


class BenchDir:
    """A temporary directory (`with BenchDir("prefix-") as tmp:`) whose processes are ended
    before it is removed, whatever happens in the block."""

    def __init__(self, prefix="memctl-bench-"):
        import tempfile
        self.path = tempfile.mkdtemp(prefix=prefix)

    def __enter__(self):
        return self.path

    def __exit__(self, *exc):
        remove_tree(self.path)
        return False


def require_model(memctl, env, what="this benchmark", cwd=None):
    """Stop the benchmark (exit 2, a clear message) unless `memctl` under `env` loads the ONNX
    model and embeds with it. Why: without it memctl falls back to the hash embedder and
    lexical search, silently, and the figures would be of a different system (a binary
    outside a checkout with MEMCTL_MODEL_DIR stripped finds no model). `memctl doctor`'s
    `embedder` check loads the model and embeds one text; it runs on an empty data dir of its
    own so the measured one is untouched; `cwd` is the working dir the bench runs memctl in (a
    relative model dir is looked up from there). Returns the embedder's description."""
    import subprocess
    import sys
    import tempfile
    memctl = os.path.abspath(memctl)
    with tempfile.TemporaryDirectory(prefix="memctl-model-check-") as tmp:
        run_env = dict(env, MEMCTL_HOME=tmp)
        try:
            r = subprocess.run([memctl, "doctor", "--json"], env=run_env, capture_output=True,
                               text=True, timeout=120, cwd=cwd)
            checks = {c["name"]: c for c in json.loads(r.stdout)["checks"]}
        except (OSError, subprocess.SubprocessError, ValueError, KeyError, TypeError) as e:
            print("%s: cannot tell whether %s loads the model (`memctl doctor --json`: %s)"
                  % (what, memctl, e), file=sys.stderr)
            sys.exit(2)
        finally:
            stop_dir_processes(tmp)
    emb = checks.get("embedder", {})
    detail = str(emb.get("detail", ""))
    if emb.get("status") != "ok" or "FALLBACK" in detail.upper():
        problems = "; ".join("%s: %s" % (n, c.get("detail")) for n, c in checks.items()
                             if n in ("runtime", "model", "query_model", "embedder")
                             and c.get("status") != "ok")
        print("%s measures the ONNX model, but %s does not load it (%s). Run scripts/setup.sh "
              "and `source .cache/env.sh` (ORT_DYLIB_PATH, MEMCTL_MODEL_DIR), or pass them "
              "through to the benchmark's environment." % (what, memctl, problems or detail),
              file=sys.stderr)
        sys.exit(2)
    return detail
