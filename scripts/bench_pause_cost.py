#!/usr/bin/env python3
"""What UserPromptSubmit's pause of the background embedder costs the hook itself.

usage: bench_pause_cost.py <label>=<bin dir> ... [--rounds N] [--block N]

A `sleep` process in a session of its own is recorded as the data dir's embedder (the progress
record `embed-progress.json` with its pid and start time, as `hooks/src/progress.rs` writes
it), so a hook pauses it (SIGSTOP, guardian, SIGCONT) with nothing running to pause: what is
left is the pause's own price. Each call is a fail-open `memctl-hook UserPromptSubmit` (a
transcript that does not exist: no store), in a session of its own as Claude Code starts hooks,
timed from the caller's side, with `MEMCTL_HOOK_PAUSE_EMBEDDER` 0 and 1 for every label, in
alternating blocks of `--block` calls (default 20), `--rounds` times (default 25). Prints p50 /
p95 ms per (label, pause) and the pause's cost (pause on minus off) at p50 and p95, and fails
when the recorded process is left stopped. Stdlib only; Linux.
"""
import json, os, subprocess, sys, tempfile, time
from benchlib import take_opt

args = sys.argv[1:]


def opt(flag, default):
    return take_opt(args, flag, default)


rounds, block = int(opt("--rounds", "25")), int(opt("--block", "20"))
if not args or any("=" not in a for a in args):
    sys.exit(__doc__)
labels = [(a.split("=", 1)[0], os.path.join(os.path.abspath(a.split("=", 1)[1]), "memctl-hook")) for a in args]

home = tempfile.mkdtemp(prefix="memctl-pause-cost-")
target = subprocess.Popen(["sleep", "3600"], start_new_session=True, stdin=subprocess.DEVNULL)


def stat_fields(pid):
    with open(f"/proc/{pid}/stat") as fh:
        s = fh.read()
    return s[s.rfind(")") + 1:].split()  # field 3 (state) first


now = int(time.time())
with open(os.path.join(home, "embed-progress.json"), "w") as fh:
    json.dump({"pid": target.pid, "started_at": now, "updated_at": now, "embedded": 0, "busy_seconds": 0.0,
               "threads": 1, "start_ticks": int(stat_fields(target.pid)[19])}, fh)
payload = json.dumps({"session_id": "bench", "transcript_path": os.path.join(home, "absent.jsonl"), "cwd": home,
                      "hook_event_name": "UserPromptSubmit", "prompt": "x"}).encode()
res = {}
try:
    for _ in range(rounds):
        for label, hook in labels:
            for pause in ("0", "1"):
                env = dict(os.environ, MEMCTL_HOME=home, MEMCTL_HOOK_PAUSE_EMBEDDER=pause)
                for _ in range(block):
                    t0 = time.perf_counter()
                    r = subprocess.run([hook, "UserPromptSubmit"], input=payload, capture_output=True, env=env,
                                       start_new_session=True)
                    res.setdefault((label, pause), []).append((time.perf_counter() - t0) * 1000.0)
                    if r.returncode != 0:
                        sys.exit(f"{label}: hook exited {r.returncode}")
    time.sleep(1.2)  # past the guardian's lease: whatever happened, it is resumed by now
    if stat_fields(target.pid)[0] == "T":
        sys.exit("the recorded process was left stopped")
finally:
    target.kill()


def q(ws, f):
    s = sorted(ws)
    return s[int(round(f * (len(s) - 1)))]


for label, _ in labels:
    off, on = res[(label, "0")], res[(label, "1")]
    print(json.dumps({"label": label, "calls": len(on), "off_p50_ms": round(q(off, .5), 3),
                      "off_p95_ms": round(q(off, .95), 3), "on_p50_ms": round(q(on, .5), 3),
                      "on_p95_ms": round(q(on, .95), 3), "pause_p50_ms": round(q(on, .5) - q(off, .5), 3),
                      "pause_p95_ms": round(q(on, .95) - q(off, .95), 3)}), flush=True)
