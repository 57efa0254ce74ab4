#!/usr/bin/env python3
"""What a background job's CPU policy costs a hook process started beside it.

usage: bench_bg_policy.py <memctl-hook> [--calls N] [--job burn|spin] [--block N]

Each call spawns `<memctl-hook> UserPromptSubmit` with a payload naming a transcript that does
not exist (the hook fails open after its settings, log and payload: process start, `main` and
exit, no store), in a session of its own as Claude Code starts hooks, and times it from the
caller's side. Modes, in alternating blocks of `--block` calls (default 25), each with one busy
job in another session (as the background embedder sits in the session of the hook that
started it):
- `none`: no job;
- `idle`: nice 19 under SCHED_IDLE (the embedder's policy before);
- `batch-slice`: SCHED_BATCH, nice 19, a 100 ms custom slice (the embedder's policy now, Linux
  >= 6.12; `engine/src/embed/priority.rs` says why);
- `nice19`: SCHED_OTHER at nice 19 with the default slice;
- `ag19-batch-slice`, `ag19-idle`: as `batch-slice` and `idle`, with the job's autogroup (its
  session's) at nice 19 (`/proc/self/autogroup`; weight 15 against a hook's group at 1024).
The job is `burn` (copies a 48 MiB buffer in a loop: memory-bound, like inference; default) or
`spin` (an empty loop). Prints p50 / p90 / p95 / p99 / mean ms per mode and p95 against `none`.
Many short calls (hundreds per mode) make the tail readable where the whole-hook bench
(`bench_embedder_contention.py`, 6 ms calls, a model load per block) moves by ±25 % at p95.
Stdlib only; x86-64 Linux (the raw sched_setattr syscall number).
"""
import json, os, statistics, subprocess, sys, tempfile, time
from benchlib import BURN_JOB, autogroup_nice, idle_policy, sched_attr_policy, take_opt

args = sys.argv[1:]


def opt(flag, default):
    return take_opt(args, flag, default)


calls = int(opt("--calls", "400"))
block = int(opt("--block", "25"))
job = opt("--job", "burn")
if len(args) != 1 or job not in ("burn", "spin"):
    sys.exit(__doc__)
hook = os.path.abspath(args[0])


JOBS = {"burn": BURN_JOB, "spin": "while True:\n    pass\n"}
MODES = [("none", None), ("idle", idle_policy), ("batch-slice", sched_attr_policy(os.SCHED_BATCH, 19, 100_000_000)),
         ("nice19", sched_attr_policy(os.SCHED_OTHER, 19, 0)),
         ("ag19-batch-slice", autogroup_nice(sched_attr_policy(os.SCHED_BATCH, 19, 100_000_000))),
         ("ag19-idle", autogroup_nice(idle_policy))]

home = tempfile.mkdtemp(prefix="memctl-bg-policy-")
env = dict(os.environ, MEMCTL_HOME=home)
payload = json.dumps({"session_id": "bench", "transcript_path": os.path.join(home, "absent.jsonl"),
                      "cwd": home, "hook_event_name": "UserPromptSubmit", "prompt": "x"}).encode()
res = {m: [] for m, _ in MODES}
while len(res["none"]) < calls:
    for mode, policy in MODES:
        proc = None
        if policy:
            proc = subprocess.Popen([sys.executable, "-c", JOBS[job]], preexec_fn=policy,
                                    start_new_session=True, stdin=subprocess.DEVNULL)
            time.sleep(0.3)
            if proc.poll() is not None:
                sys.exit(f"{mode}: the job did not start (exit {proc.returncode})")
        for _ in range(block):
            t0 = time.perf_counter()
            r = subprocess.run([hook, "UserPromptSubmit"], input=payload, capture_output=True, env=env,
                               start_new_session=True)
            res[mode].append((time.perf_counter() - t0) * 1000.0)
            if r.returncode != 0:
                sys.exit(f"hook exited {r.returncode}: {r.stderr.decode(errors='replace')[-300:]}")
            time.sleep(0.02)
        if proc:
            proc.kill()
            proc.wait()


def q(s, f):
    return s[int(round(f * (len(s) - 1)))]


base = q(sorted(res["none"]), 0.95)
for mode, ws in res.items():
    s = sorted(ws)
    print(json.dumps({"mode": mode, "job": job, "calls": len(s), "p50_ms": round(q(s, .5), 2),
                      "p90_ms": round(q(s, .9), 2), "p95_ms": round(q(s, .95), 2), "p99_ms": round(q(s, .99), 2),
                      "mean_ms": round(statistics.mean(s), 2), "p95_ratio_vs_none": round(q(s, .95) / base, 2)}),
          flush=True)
