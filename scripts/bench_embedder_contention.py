#!/usr/bin/env python3
"""Whole-process UserPromptSubmit latency with no embedder running vs with the resident
service busy embedding a big backlog of pending chunks.

usage: bench_embedder_contention.py <session.jsonl> <backlog.jsonl> <workdir> <calls> <bin dir>
       [--block N] [--gap S] [--embedder <label>=<bin dir> ...] [--burner]
       [--hook <label>=<bin dir> ...] [--phases] [--ag19]

Setup (one MEMCTL_HOME): the backlog transcript (e.g. 5,000 turns) is archived with the
background embedder off, so its chunks (thousands) wait for the model; the session transcript
(e.g. 500 turns) is archived too, then copied to a live file that grows by one user turn and one
assistant turn before each call (a realistic prompt: the hook hands the new turns to a detached
`memctl ingest --background --no-embed`, so hook calls themselves never embed).

Modes, in alternating blocks of `--block` calls (default 10) so that a drifting machine bills
both alike:
- `idle`: nothing else of memctl runs;
- `embedder` (or `embedder-<label>` per `--embedder`, to compare embedder builds in one run;
  the hooks are always `<bin dir>`'s): the resident service `memctl embedder --background`
  runs (as the hooks start it; its bulk thread at nice 19, idle I/O class, at most cores - 1
  threads: one here), started before the block and killed (by its pid) after it; the script
  waits until its bulk thread has loaded its model and embedded a batch (the progress file
  says so) before the first call, and checks it still runs after.
  Sessions as with the real client: Claude Code (2.1.330, seen in the e2e harness) starts every
  hook command in a new session, and the embedder stays in the session of the hook that
  started it; with autogroups (Linux, processes in the root CPU cgroup) the scheduler shares
  the CPU between sessions first, so a SCHED_IDLE policy would not count against a hook
  (the embedder now runs SCHED_BATCH with a 100 ms slice: `engine/src/embed/priority.rs`).

Each call is `memctl-hook UserPromptSubmit` with the payload on stdin, in a session of its own,
timed on CLOCK_MONOTONIC (`time.monotonic_ns`) around fork/exec+wait4, then `--gap` seconds (default 0.3) to the next prompt. `--burner` adds a
reference mode, `burner`: instead of an embedder, a plain process that copies a 48 MiB buffer in a
loop at nice 19 under SCHED_IDLE (the embedder's policy before), i.e. what any background job costs
the hook on this machine, and `burner-slice`, the same under the embedder's policy now (SCHED_BATCH,
nice 19, a 100 ms slice). `--hook <label>=<dir>` adds `embedder-hook-<label>`, another build's
hooks beside the same service.
Prints one JSON
line per mode: calls, p50, p95, max wall ms, and for every other mode the ratio of its p95 to
idle's with a 90 % bootstrap interval (`p95_ratio_ci90`, seed printed) and how many calls saw
the embedder still running.

`--phases`: the hooks log at debug level, and each call is split at the hook's own clock
readings (its "hook done" line: `started_mono_ns` on CLOCK_MONOTONIC, `ms`,
`run_ms` / `wait_ms` of its main thread from `/proc/thread-self/schedstat`) into `to_main`
(the caller's spawn to the hook's `main`: fork, exec, loader, runtime start),
`main_to_end` and `end_to_return` (exit, the caller's wake-up), plus `main_thread_cpu` and
`main_thread_wait` (time on a CPU and waiting for one, since the fork); one more JSON line per
mode with p50 / p95 ms of each. `--ag19` adds `embedder-ag19`: the embedder's autogroup (its
session's) at nice 19, weight 15 against a hook's group at 1,024. Stdlib only.
"""
import json, os, random, re, shutil, signal, statistics, subprocess, sys, time, uuid
from benchlib import remove_tree, require_model
from benchlib import BURN_JOB, autogroup_nice, first_line_with, idle_policy, sched_attr_policy

args = sys.argv[1:]
block, gap = 10, 0.3


def take_pairs(flag, prefix):
    """Remove every `flag label=dir` from args: [(prefix + label, absolute dir)]."""
    out = []
    while flag in args:
        i = args.index(flag)
        label, d = args[i + 1].split("=", 1)
        out.append((prefix + label, os.path.abspath(d)))
        del args[i:i + 2]
    return out


embedders = take_pairs("--embedder", "embedder-")
# `--hook label=dir`: the mode `embedder-hook-<label>` runs that build's hooks beside the
# embedder (an A/B of hook builds in one run; the embedder is always `<bin dir>`'s).
other_hooks = take_pairs("--hook", "embedder-hook-")
burner = "--burner" in args
if burner:
    args.remove("--burner")
phases = "--phases" in args
if phases:
    args.remove("--phases")
ag19 = "--ag19" in args
if ag19:
    args.remove("--ag19")
if "--block" in args:
    i = args.index("--block")
    block = int(args[i + 1])
    del args[i:i + 2]
if "--gap" in args:
    i = args.index("--gap")
    gap = float(args[i + 1])
    del args[i:i + 2]
if len(args) != 5:
    sys.exit(__doc__)
session_src, backlog_src, workdir, calls, bindir = (os.path.abspath(args[0]), os.path.abspath(args[1]),
                                                    os.path.abspath(args[2]), int(args[3]),
                                                    os.path.abspath(args[4]))
hook, memctl = os.path.join(bindir, "memctl-hook"), os.path.join(bindir, "memctl")
embedders = [(m, d or bindir) for m, d in embedders]
hook_of = {m: os.path.join(d, "memctl-hook") for m, d in other_hooks}
if not embedders:
    embedders = [("embedder", bindir)]
embedders += [(m, bindir) for m, _ in other_hooks]
if ag19:
    embedders.append(("embedder-ag19", bindir))
home = os.path.join(workdir, "home")
require_model(memctl, os.environ, "bench_embedder_contention")
remove_tree(workdir)
os.makedirs(workdir)
live = os.path.join(workdir, "live.jsonl")
shutil.copyfile(session_src, live)


head = first_line_with(live, "sessionId")
session = head.get("sessionId")


def env(**extra):
    e = dict(os.environ, MEMCTL_HOME=home, MEMCTL_BACKGROUND_EMBED="0", MEMCTL_RESIDENT="0")
    if phases:
        e["MEMCTL_LOG"] = "debug"
    e.update(extra)
    return e


def payload(path, sid):
    return json.dumps({"session_id": sid, "transcript_path": path, "cwd": workdir,
                       "hook_event_name": "UserPromptSubmit", "prompt": "continue"}).encode()


def archive_inline(path, sid):
    r = subprocess.run([hook, "UserPromptSubmit"], input=payload(path, sid), capture_output=True,
                       env=env(MEMCTL_HOOK_INLINE_BYTES=str(1 << 40), MEMCTL_HOOK_INLINE_PROMPT_ARCHIVE="1",
                               MEMCTL_HOOK_DEADLINE_MS="600000"), cwd=workdir)
    if r.returncode != 0:
        sys.exit(f"archive of {path} failed: {r.stderr.decode(errors='replace')[-500:]}")


archive_inline(backlog_src, first_line_with(backlog_src, "sessionId").get("sessionId"))
archive_inline(live, session)
status = json.loads(subprocess.run([memctl, "status", "--json"], env=env(), capture_output=True,
                                   cwd=workdir, check=True).stdout)
pending_at_start = status["pending"]

parent = None
with open(live, encoding="utf-8") as fh:
    for line in fh:
        try:
            d = json.loads(line)
        except ValueError:
            continue
        parent = d.get("uuid", parent)


def append_turn(i):
    global parent
    now = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime())
    lines = []
    for role, text in (("user", f"step {i}: check why the cache test fails after the refactor of module {i}"),
                       ("assistant", f"The cache test {i} fails because the key now includes the tenant id; "
                                     f"I updated the fixture in tests/cache_{i}.rs and re-ran cargo test.")):
        u = str(uuid.uuid4())
        msg = {"role": role, "content": text} if role == "user" else \
            {"role": "assistant", "content": [{"type": "text", "text": text}]}
        lines.append(json.dumps({"type": role, "uuid": u, "parentUuid": parent, "sessionId": session,
                                 "timestamp": now, "cwd": workdir, "message": msg}))
        parent = u
    with open(live, "a", encoding="utf-8") as fh:
        fh.write("\n".join(lines) + "\n")


def embedder_running():
    r = subprocess.run([memctl, "status", "--json"], env=env(), capture_output=True, cwd=workdir)
    try:
        return json.loads(r.stdout)["background"]["running"]
    except (ValueError, KeyError):
        return None


def progress():
    try:
        with open(os.path.join(home, "embed-progress.json")) as fh:
            return json.load(fh)
    except (OSError, ValueError):
        return None


LOG = os.path.join(home, "logs", "memctl.log")
DONE = re.compile(r"hook done .*?ms=([0-9.]+) started_mono_ns=([0-9]+)"
                  r"(?: run_ms=([0-9.]+) wait_ms=([0-9.]+))?")
log_at = [0]


def new_log_text():
    """What was appended to the data dir's log since the last call of this function."""
    try:
        with open(LOG, "rb") as fh:
            if os.fstat(fh.fileno()).st_size < log_at[0]:
                log_at[0] = 0
            fh.seek(log_at[0])
            new = fh.read()
    except OSError:
        return ""
    log_at[0] += len(new)
    return new.decode(errors="replace")


def hook_phases(t0_ns, t1_ns):
    """The phases of the call that just ended, from the hook's last "hook done" line."""
    m = None
    for line in new_log_text().splitlines():
        m = DONE.search(line) or m
    if not m:
        return None
    opt = lambda g: float(m.group(g)) if m.group(g) else None
    ms, start = float(m.group(1)), int(m.group(2))
    return {"to_main": (start - t0_ns) / 1e6, "main_to_end": ms,
            "end_to_return": (t1_ns - start) / 1e6 - ms, "main_thread_cpu": opt(3),
            "main_thread_wait": opt(4)}


def call(i, hook_bin=None, mode=None):
    append_turn(i)
    if phases:
        new_log_text()  # skip what others logged since the last call
    # CLOCK_MONOTONIC, the clock of the hook's `started_mono_ns`.
    t0_ns = time.monotonic_ns()
    # A session of its own, as Claude Code (2.1.330) starts every hook command.
    r = subprocess.run([hook_bin or hook, "UserPromptSubmit"], input=payload(live, session), capture_output=True,
                       env=env(), cwd=workdir, start_new_session=True)
    t1_ns = time.monotonic_ns()
    wall = (t1_ns - t0_ns) / 1e6
    if r.returncode != 0:
        sys.exit(f"hook call failed: {r.stderr.decode(errors='replace')[-500:]}")
    if phases:
        ph = hook_phases(t0_ns, t1_ns)
        if ph is None:
            sys.exit("--phases: no 'hook done' line with started_mono_ns (a build from before it?)")
        phase_rows.setdefault(mode, []).append(ph)
    time.sleep(gap)
    return wall


# `--burner` modes: the reference job under the policy the embedder had before (`burner`) and
# under the one it has now (`burner-slice`).
BURNERS = [("burner", idle_policy), ("burner-slice", sched_attr_policy(os.SCHED_BATCH, 19, 100_000_000))] \
    if burner else []


res = {"idle": []}
phase_rows = {}
running_seen = {}
i = 0
while len(res["idle"]) < calls:
    for _ in range(block):
        res["idle"].append(call(i, mode="idle"))
        i += 1
    for bname, policy in BURNERS:
        proc = subprocess.Popen([sys.executable, "-c", BURN_JOB], preexec_fn=policy, start_new_session=True,
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(1.0)
        if proc.poll() is not None:
            sys.exit(f"{bname}: the reference job did not start (exit {proc.returncode})")
        for _ in range(block):
            res.setdefault(bname, []).append(call(i, mode=bname))
            i += 1
        proc.kill()
        proc.wait()
    for mode, ebin in embedders:
        proc = subprocess.Popen([os.path.join(ebin, "memctl"), "embedder", "--background"],
                                env=env(MEMCTL_BACKGROUND_EMBED="1", MEMCTL_RESIDENT_IDLE_SECS="3600"), cwd=workdir, stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
                                preexec_fn=autogroup_nice() if mode == "embedder-ag19" else None)
        # A build without the progress record: give it time to load the model instead.
        deadline = time.time() + 30
        while time.time() < deadline:
            p = progress()
            if p and p.get("pid") == proc.pid and p.get("embedded", 0) > 0:
                break
            if not p or p.get("pid") != proc.pid:
                if time.time() > deadline - 25:
                    break
            time.sleep(0.05)
        for _ in range(block):
            res.setdefault(mode, []).append(call(i, hook_of.get(mode), mode))
            i += 1
            if proc.poll() is None:
                running_seen[mode] = running_seen.get(mode, 0) + 1
        proc.send_signal(signal.SIGTERM)
        proc.wait()


def p95_of(ws):
    s = sorted(ws)
    return s[min(len(s) - 1, int(round(0.95 * (len(s) - 1))))]


def summary(ws):
    s = sorted(ws)
    return round(statistics.median(s), 1), round(p95_of(s), 1), round(s[-1], 1)


# How sure a p95 ratio is: a few hundred calls move p95 by more than the effect here
# (docs/perf/embedder-contention.md), so each ratio comes with a 90 % bootstrap interval (both modes'
# calls resampled with replacement, BOOT_ROUNDS times, seed printed).
BOOT_SEED, BOOT_ROUNDS = 17, 2000


def ratio_interval(mode_ws, idle_ws):
    rng = random.Random(BOOT_SEED)
    rs = sorted(p95_of(rng.choices(mode_ws, k=len(mode_ws))) / p95_of(rng.choices(idle_ws, k=len(idle_ws)))
                for _ in range(BOOT_ROUNDS))
    return [round(rs[int(0.05 * BOOT_ROUNDS)], 2), round(rs[int(0.95 * BOOT_ROUNDS) - 1], 2)]


idle = summary(res["idle"])
for mode in ["idle"] + [b for b, _ in BURNERS] + [m for m, _ in embedders]:
    p50, p95, mx = summary(res[mode])
    rec = {"mode": mode, "transcript": os.path.basename(session_src), "calls": len(res[mode]),
           "p50_ms": p50, "p95_ms": p95, "max_ms": mx, "pending_at_start": pending_at_start}
    if mode != "idle":
        rec["p95_ratio_vs_idle"] = round(p95 / idle[1], 2) if idle[1] else None
        rec["p95_ratio_ci90"] = ratio_interval(res[mode], res["idle"])
        rec["bootstrap_seed"] = BOOT_SEED
        if not mode.startswith("burner"):
            rec["calls_with_embedder_running"] = running_seen.get(mode, 0)
    print(json.dumps(rec), flush=True)
    if phases:
        rows = phase_rows.get(mode, [])
        out = {}
        for k in ("to_main", "main_to_end", "end_to_return", "main_thread_cpu",
                  "main_thread_wait"):
            v = sorted(r[k] for r in rows if r[k] is not None)
            out[k] = [round(statistics.median(v), 2), round(p95_of(v), 2)] if v else None
        print(json.dumps({"mode": mode, "phases_p50_p95_ms": out, "calls": len(rows)}), flush=True)
