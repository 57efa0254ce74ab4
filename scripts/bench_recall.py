#!/usr/bin/env python3
"""Whole-process UserPromptSubmit latency, with and without prompt-time recall.

    python3 scripts/bench_recall.py [--bin target/release] [--turns 500 5000] [--runs 30] [--seed 1]

Per transcript size: a generated transcript (scripts/gen_transcript.py, split layout) is
ingested with the model, then `memctl-hook UserPromptSubmit` is timed from posix_spawn to wait4:
  a      uncompacted session, one new turn appended before each call (the common path; the
         detached `memctl ingest --background` the hook starts, which archives the turn and
         embeds it, is waited for between calls);
  bres   after compaction: the session's context state says it lost context, so recall runs
         (the state is rewritten before every call, so each starts from a fresh boundary); the
         prompt vector comes from a running resident embedder (`memctl embedder`, as hooks
         start it after a compaction);
  abg    a without waiting: 100 ms after each call the next turn comes, while the previous
         call's detached archive and embedder still run;
  b      the same without a resident embedder (MEMCTL_RESIDENT=0): the hook loads the model;
  bhash  b without the model (MEMCTL_EMBEDDER=hash): lexical-only recall.
Prints p50 / p95 / max ms, CPU and peak RSS, and how many calls printed a recall block.
Needs `scripts/setup.sh` and `cargo build --release -p memctl-hooks -p memctl-cli`.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
from benchlib import BenchDir, require_model
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXTRA = 60  # turns appended one per call in cases a and abg
QUESTIONS = ["which command fixed the failing build earlier?",
             "what did we decide about the cache layer?",
             "why did we pick SQLite WAL mode instead of a JSON file?",
             "where was the database is locked error coming from and how did we fix it?",
             "what was the TODO left in src/config.ts about request tracing ids?"]


def split_turns(text):
    """Lines, and the index of each turn's first line (a file-history-snapshot precedes each
    user prompt in the generated transcripts)."""
    lines = text.splitlines(keepends=True)
    return lines, [i for i, l in enumerate(lines) if '"file-history-snapshot"' in l]


def run_once(hook, env, payload, work):
    pin = os.path.join(work, "in.json")
    with open(pin, "w") as f:
        json.dump(payload, f)
    out = os.path.join(work, "out.txt")
    fin, fo = os.open(pin, os.O_RDONLY), os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    fe = os.open(os.devnull, os.O_WRONLY)
    # posix_spawn (vfork + exec), not fork: a forked child of this Python process (which holds
    # the whole transcript) would pay for tearing down a copy of its address space, and its
    # peak RSS would be Python's.
    actions = [(os.POSIX_SPAWN_DUP2, fin, 0), (os.POSIX_SPAWN_DUP2, fo, 1), (os.POSIX_SPAWN_DUP2, fe, 2)]
    t0 = time.perf_counter()
    pid = os.posix_spawn(hook, [hook, "UserPromptSubmit"], env, file_actions=actions)
    _, st, ru = os.wait4(pid, 0)
    wall = (time.perf_counter() - t0) * 1e3
    for f in (fin, fo, fe):
        os.close(f)
    text = open(out, encoding="utf-8", errors="replace").read()
    try:
        text = json.loads(text)["hookSpecificOutput"]["additionalContext"]
    except (ValueError, KeyError, TypeError):
        pass
    return {"wall": wall, "cpu": (ru.ru_utime + ru.ru_stime) * 1e3, "rss": ru.ru_maxrss,
            "rc": os.waitstatus_to_exitcode(st), "recall": '<memctl-context kind="recall"' in text}


def wait_embedder(home, limit=20.0):
    """Wait for the detached background embedder of this data dir to exit."""
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < limit:
        busy = False
        for p in filter(str.isdigit, os.listdir("/proc")):
            try:
                cmd = open(f"/proc/{p}/cmdline", "rb").read()
                if (b"embed-pending" in cmd or b"--background" in cmd) and b"embedder" not in cmd and f"MEMCTL_HOME={home}".encode() in open(f"/proc/{p}/environ", "rb").read():
                    busy = True
            except OSError:
                pass
        if not busy:
            return
        time.sleep(0.02)


def summary(rows):
    w = sorted(r["wall"] for r in rows)
    return {"p50": statistics.median(w), "p95": w[min(len(w) - 1, round(0.95 * (len(w) - 1)))], "max": w[-1],
            "cpu_p50": statistics.median(r["cpu"] for r in rows), "rss_kb": max(r["rss"] for r in rows),
            "blocks": sum(r["recall"] for r in rows), "rc": sorted({r["rc"] for r in rows})}


def bench(n, a, work):
    hook, memctl = os.path.join(a.bin, "memctl-hook"), os.path.join(a.bin, "memctl")
    full = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "gen_transcript.py"), "--turns",
                           str(n + EXTRA), "--seed", str(a.seed), "--layout", "split"],
                          capture_output=True, text=True, check=True).stdout
    lines, starts = split_turns(full)
    sid = next(json.loads(l)["sessionId"] for l in lines if '"sessionId"' in l)
    cwd = next(json.loads(l)["cwd"] for l in lines if '"cwd"' in l)
    home, tr = os.path.join(work, f"home{n}"), os.path.join(work, f"t{n}.jsonl")
    with open(tr, "w") as f:
        f.write("".join(lines[:starts[n]]))
    # The caller's settings stay out, but not where the model is (see benchlib.require_model).
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("MEMCTL_") or k == "MEMCTL_MODEL_DIR"}
    env["MEMCTL_HOME"] = home
    require_model(memctl, env, "bench_recall", cwd=work)
    subprocess.run([memctl, "ingest", "--quiet", tr], env=env, check=True)
    base = {"session_id": sid, "transcript_path": tr, "cwd": cwd, "hook_event_name": "UserPromptSubmit"}
    out = {}
    runs = min(a.runs, EXTRA // 2)
    for mode in ("a", "abg"):
        rows = []
        for k in range(runs):
            i = n + k + (runs if mode == "abg" else 0)
            block = lines[starts[i]:starts[i + 1] if i + 1 < len(starts) else len(lines)]
            with open(tr, "a") as f:
                f.write("".join(block))
            rows.append(run_once(hook, env, dict(base, prompt=f"continue with step {k}"), work))
            if mode == "a":
                wait_embedder(home)
            else:
                time.sleep(0.1)  # the previous prompt's detached archive + embedder still runs
        out[mode] = summary(rows)
    wait_embedder(home)

    def archived():
        return max(s["turns"] for s in json.loads(subprocess.run(
            [memctl, "sessions", "--json"], env=env, capture_output=True, check=True).stdout)
            if s["session_id"] == sid)
    boundary = archived()
    fresh = dict(env, MEMCTL_HOME=os.path.join(work, f"fresh{n}"), MEMCTL_EMBEDDER="hash")
    subprocess.run([memctl, "ingest", "--quiet", tr], env=fresh, check=True)
    want = max(s["turns"] for s in json.loads(subprocess.run(
        [memctl, "sessions", "--json"], env=fresh, capture_output=True, check=True).stdout)
        if s["session_id"] == sid)
    print(f"{n:5d}  turns archived by the hooks' detached archives: {boundary}; "
          f"by one inline ingest of the same transcript: {want} ({'same' if boundary == want else 'DIFFERENT'})")
    state = os.path.join(home, "context", f"{sid}.json")
    sock = os.path.join(home, "embedder.sock")
    server = subprocess.Popen([memctl, "embedder"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    t0 = time.perf_counter()
    while not os.path.exists(sock) and time.perf_counter() - t0 < 60:
        time.sleep(0.05)
    cases = (("bres", {}), ("b", {"MEMCTL_RESIDENT": "0"}), ("bhash", {"MEMCTL_EMBEDDER": "hash"}))
    for mode, extra in cases:
        if mode == "b":
            os.remove(sock)  # the documented stop signal
            server.wait(timeout=30)
        rows = []
        for k in range(a.runs):
            os.makedirs(os.path.dirname(state), exist_ok=True)
            with open(state, "w") as f:
                json.dump({"lost": True, "boundary_turn": boundary, "injected": [], "recalled": []}, f)
            rows.append(run_once(hook, dict(env, **extra), dict(base, prompt=QUESTIONS[k % len(QUESTIONS)]), work))
        out[mode] = summary(rows)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default=os.path.join(ROOT, "target", "release"))
    ap.add_argument("--turns", type=int, nargs="+", default=[500, 5000])
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    print(f"seed {a.seed}, {a.runs} runs per case, binaries {a.bin}, load {open('/proc/loadavg').read().split()[:3]}")
    print("turns  case   p50 ms   p95 ms   max ms  cpu p50 ms  recall blocks  exit codes")
    with BenchDir(prefix="memctl-recall-bench.") as work:
        for n in a.turns:
            for mode, s in bench(n, a, work).items():
                print(f"{n:5d}  {mode:5s} {s['p50']:8.1f} {s['p95']:8.1f} {s['max']:8.1f} {s['cpu_p50']:11.1f} "
                      f"{s['blocks']:8d}/{a.runs}  {s['rc']}")


if __name__ == "__main__":
    main()
