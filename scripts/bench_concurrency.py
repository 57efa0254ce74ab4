#!/usr/bin/env python3
"""Hook latency under contention: N concurrent sessions firing hooks on one store while M
`memctl ingest` processes archive big transcripts into it (by default 8 + 4).

    python3 scripts/bench_concurrency.py [--bin target/release] [--sessions 8] [--ingests 4]
                                         [--prompts 30] [--seed 10] [--admin]

Each session grows its own generated transcript piece by piece and runs, as Claude Code would,
UserPromptSubmit after every piece, PostToolUse with a ~20 KB Bash output every third prompt,
PreCompact + SessionStart(compact) half-way and SessionEnd at the end. Every hook is a fresh
process, timed whole (spawn to exit). Prints p50 / p95 / max per event against the hook's own
deadline, the exit codes, and what the log says was spooled. Background embedding is left on
(as users run it). Needs `scripts/setup.sh` (for the background embedder) and a release build.

--admin: meanwhile one more thread runs the store's maintenance commands one after another
until the sessions end (`memctl export --all-projects`, `memctl backup`, `memctl forget
--session <an ingested session> --yes`), and their times are printed too: the hooks must keep
their deadlines beside a store being rewritten, copied and read whole.
"""

import argparse
import concurrent.futures as cf
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GEN = os.path.join(ROOT, "scripts", "gen_transcript.py")
# The hook's internal deadlines (hooks/src/hook.rs `deadline_for`).
DEADLINE_MS = {"UserPromptSubmit": 2000, "PostToolUse": 2000, "SessionStart": 3000,
               "PreCompact": 8000, "SessionEnd": 900}


def gen(turns, seed, path):
    with open(path, "wb") as f:
        subprocess.run([sys.executable, GEN, "--turns", str(turns), "--seed", str(seed),
                        "--layout", "split"], stdout=f, check=True)


def run_hook(hook, env, event, payload):
    t0 = time.perf_counter()
    p = subprocess.run([hook, event], input=json.dumps(payload).encode(), env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return event, (time.perf_counter() - t0) * 1e3, p.returncode


def session(i, a, hook, env, work):
    rng = random.Random(a.seed * 100 + i)
    full = os.path.join(work, f"full-{i}.jsonl")
    gen(a.prompts * 2, a.seed * 100 + i, full)
    with open(full, "rb") as f:
        lines = f.read().splitlines(keepends=True)
    sid = f"bench-{i:02d}-0000-4000-8000-000000000000"
    t = os.path.join(work, f"{sid}.jsonl")
    open(t, "wb").close()
    cwd = f"/home/dev/src/bench-{i % 3}"
    base = {"session_id": sid, "transcript_path": t, "cwd": cwd}
    step = max(1, len(lines) // a.prompts)
    out = []
    for k in range(a.prompts):
        with open(t, "ab") as f:
            f.writelines(lines[k * step:(k + 1) * step])
        out.append(run_hook(hook, env, "UserPromptSubmit",
                            {**base, "hook_event_name": "UserPromptSubmit", "prompt": f"step {k}"}))
        if k % 3 == 2:
            stdout = "\n".join(f"test case_{k}_{j} ... ok ({rng.randrange(1, 900)} ms)" for j in range(600))
            out.append(run_hook(hook, env, "PostToolUse", {
                **base, "hook_event_name": "PostToolUse", "tool_name": "Bash",
                "tool_input": {"command": f"cargo test -p case{k}"}, "tool_use_id": f"toolu_{i}_{k}",
                "tool_response": {"stdout": stdout, "stderr": "", "interrupted": False, "isImage": False}}))
        if k == a.prompts // 2:
            out.append(run_hook(hook, env, "PreCompact", {**base, "hook_event_name": "PreCompact",
                                                          "trigger": "auto", "custom_instructions": None}))
            out.append(run_hook(hook, env, "SessionStart", {**base, "hook_event_name": "SessionStart",
                                                            "source": "compact"}))
    out.append(run_hook(hook, env, "SessionEnd", {**base, "hook_event_name": "SessionEnd", "reason": "other"}))
    return out


def session_of(path):
    with open(path, encoding="utf-8") as f:
        for line in f:
            sid = json.loads(line).get("sessionId")
            if sid:
                return sid
    return None


def admin(memctl, env, work, big, stop):
    """Maintenance commands back to back until `stop` is set: (command, ms, exit code)."""
    sids = [s for s in (session_of(p) for p in big) if s]
    out, n = [], 0
    while not stop.is_set():
        kind = ["export", "backup", "forget"][n % 3]
        if kind == "export":
            args = ["export", "--all-projects", "--out", os.path.join(work, f"export-{n}.jsonl")]
        elif kind == "backup":
            args = ["backup", "--out", os.path.join(work, f"backup-{n}.redb")]
        elif sids:
            args = ["forget", "--session", sids[(n // 3) % len(sids)], "--yes"]
        else:
            n += 1
            continue
        t0 = time.perf_counter()
        p = subprocess.run([memctl, *args], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        out.append((kind, (time.perf_counter() - t0) * 1e3, p.returncode))
        if p.returncode != 0:
            print(f"{kind} failed (rc {p.returncode}): {p.stderr.decode(errors='replace').strip()[-300:]}")
        n += 1
    return out


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default=os.path.join(ROOT, "target", "release"))
    ap.add_argument("--sessions", type=int, default=8)
    ap.add_argument("--ingests", type=int, default=4)
    ap.add_argument("--prompts", type=int, default=30)
    ap.add_argument("--ingest-turns", type=int, default=1500)
    ap.add_argument("--seed", type=int, default=10)
    ap.add_argument("--admin", action="store_true",
                    help="run export / backup / forget back to back beside the sessions")
    a = ap.parse_args()
    hook, memctl = os.path.join(a.bin, "memctl-hook"), os.path.join(a.bin, "memctl")
    for b in (hook, memctl):
        if not os.access(b, os.X_OK):
            sys.exit(f"bench_concurrency: {b} missing (cargo build --release -p memctl-hooks -p memctl-cli)")
    print(f"seed {a.seed}; {a.sessions} sessions x {a.prompts} prompts, {a.ingests} concurrent ingests of "
          f"{a.ingest_turns} turns; binaries {a.bin}")
    work = tempfile.mkdtemp(prefix="memctl-conc.")
    home = os.path.join(work, "home")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMCTL_")}
    env["MEMCTL_HOME"] = home
    big = []
    for j in range(a.ingests):
        p = os.path.join(work, f"ingest-{j}.jsonl")
        gen(a.ingest_turns, 9000 + j, p)
        big.append(p)
    t0 = time.perf_counter()
    ingests = [subprocess.Popen([memctl, "ingest", "--no-embed", "--quiet", p], env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE) for p in big]
    stop = threading.Event()
    with cf.ThreadPoolExecutor(a.sessions + 1) as ex:
        maint = ex.submit(admin, memctl, env, work, big, stop) if a.admin else None
        results = [r for fut in [ex.submit(session, i, a, hook, env, work) for i in range(a.sessions)]
                   for r in fut.result()]
        stop.set()
        maint_results = maint.result() if maint else []
    sessions_s = time.perf_counter() - t0
    ingest_rc = [p.wait() for p in ingests]
    for p, rc in zip(ingests, ingest_rc):
        if rc != 0:
            print(f"ingest failed (rc {rc}): {p.stderr.read().decode(errors='replace').strip()[-400:]}")
    ingest_s = time.perf_counter() - t0
    by = {}
    for ev, ms, rc in results:
        by.setdefault(ev, []).append((ms, rc))
    print(f"{'event':<18}{'n':>5}{'p50 ms':>9}{'p95 ms':>9}{'max ms':>9}{'deadline':>10}{'over':>6}{'rc!=0':>7}")
    worst = 0.0
    for ev in ["UserPromptSubmit", "PostToolUse", "PreCompact", "SessionStart", "SessionEnd"]:
        xs = [ms for ms, _ in by.get(ev, [])]
        if not xs:
            continue
        d = DEADLINE_MS[ev]
        over = sum(1 for x in xs if x > d)
        bad = sum(1 for _, rc in by[ev] if rc != 0)
        worst = max(worst, max(xs))
        print(f"{ev:<18}{len(xs):>5}{statistics.median(xs):>9.1f}{pct(xs, 95):>9.1f}{max(xs):>9.1f}{d:>10}{over:>6}{bad:>7}")
    allx = [ms for ms, _, in [(r[1], r[2]) for r in results]]
    print(f"{'all':<18}{len(allx):>5}{statistics.median(allx):>9.1f}{pct(allx, 95):>9.1f}{max(allx):>9.1f}")
    for kind in ["export", "backup", "forget"]:
        xs = [ms for k, ms, _ in maint_results if k == kind]
        if xs:
            bad = sum(1 for k, _, rc in maint_results if k == kind and rc != 0)
            print(f"{'memctl ' + kind:<18}{len(xs):>5}{statistics.median(xs):>9.1f}{pct(xs, 95):>9.1f}"
                  f"{max(xs):>9.1f}{'-':>10}{'-':>6}{bad:>7}")
    log = os.path.join(home, "logs", "memctl.log")
    text = open(log, encoding="utf-8", errors="replace").read() if os.path.exists(log) else ""
    print(f"sessions done in {sessions_s:.1f} s; ingests done in {ingest_s:.1f} s (exit codes {ingest_rc})")
    for needle in ["deadline passed", "store busy; transcript spooled", "store busy; tool output spooled",
                   "tool output lost", "took over work"]:
        print(f"log: {text.count(needle):>4} x {needle!r}")
    # The spool must be empty once a last hook has drained it.
    run_hook(hook, env, "UserPromptSubmit", {"session_id": "drain", "transcript_path": "", "cwd": "/x",
                                             "hook_event_name": "UserPromptSubmit", "prompt": "drain"})
    spool = os.path.join(home, "spool")
    left = []
    for dp, _, fs in os.walk(spool):
        left += [os.path.join(dp, f) for f in fs]
    print(f"spool after a final hook: {len(left)} file(s) left {left[:3]}")
    print(f"work dir: {work}")


if __name__ == "__main__":
    main()
