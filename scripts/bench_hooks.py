#!/usr/bin/env python3
"""Whole-process hook latency of memctl, measured exactly like ../shared/peer/run_peer.sh
measures the peer: same transcript, same 2 appended turns (same seed), same event sequence,
every run a fresh fork/exec from the same starting state (data dir restored from a snapshot),
wall time by perf_counter around fork/exec+wait4, CPU and peak RSS from the child's rusage.

usage: bench_hooks.py <memctl-hook> <memctl> <transcript.jsonl> <workdir> [runs]
Prints one JSON line per event (ups_first, ups_incr, pre_compact, session_start, status),
plus {"event":"completeness", ...}: prompts in the transcript vs turns archived.
Stdlib only.
"""
import json, os, shutil, statistics, subprocess, sys, time
from benchlib import first_session_id, remove_tree, require_model, stop_dir_processes

hook, memctl, transcript, workdir = (os.path.abspath(a) for a in sys.argv[1:5])
runs = int(sys.argv[5]) if len(sys.argv) > 5 else 5
gen = os.environ.get("PEER_GEN") or os.path.join(os.path.dirname(__file__), "..", "..", "shared", "peer", "gen_transcript.py")
seed = os.environ.get("PEER_SEED", "7")

remove_tree(workdir)
os.makedirs(os.path.join(workdir, "out"))
home = os.path.join(workdir, "home")
base = os.path.join(workdir, "transcript.jsonl")
plus2 = os.path.join(workdir, "transcript_plus2.jsonl")
shutil.copyfile(transcript, base)
shutil.copyfile(transcript, plus2)
with open(plus2, "ab") as fh:
    subprocess.run([sys.executable, gen, "--append-to", base, "--turns", "2", "--seed", seed], stdout=fh, check=True)

session = first_session_id(base)

# Measure the inline archive path: with the default MEMCTL_HOOK_INLINE_BYTES (4 MiB) a first
# prompt on a larger backlog hands the work to a detached `memctl ingest`, which would race
# with the snapshot/restore between runs and hide the real cost; and a prompt's archive is
# deferred to a detached ingest by default (MEMCTL_HOOK_INLINE_PROMPT_ARCHIVE), which would too.
env = dict(os.environ, MEMCTL_HOME=home, MEMCTL_BACKGROUND_EMBED="0",
           MEMCTL_HOOK_INLINE_BYTES=os.environ.get("MEMCTL_HOOK_INLINE_BYTES", str(1 << 40)),
           MEMCTL_HOOK_INLINE_PROMPT_ARCHIVE=os.environ.get("MEMCTL_HOOK_INLINE_PROMPT_ARCHIVE", "1"))

# The hooks as shipped embed with the model (prompt recall, the resident embedder): without
# it the figures would be those of lexical + hash search.
require_model(memctl, env, "bench_hooks", cwd=workdir)

def hook_input(event, path, **kw):
    d = {"session_id": session, "transcript_path": path, "cwd": workdir, "hook_event_name": event}
    d.update(kw)
    p = os.path.join(workdir, "out", "%s.input.json" % event)
    with open(p, "w") as fh:
        json.dump(d, fh)
    return p


def snapshot(name):
    dst = os.path.join(workdir, "snap", name)
    remove_tree(dst)
    # What the runs started (SessionStart(compact) starts the resident embedder) ends before
    # the copy: its files are no part of the state the next event starts from.
    stop_dir_processes(home)
    if os.path.exists(home):
        shutil.copytree(home, dst)
    else:
        os.makedirs(dst)
    return dst


def restore(src):
    remove_tree(home)
    if src is not None:
        shutil.copytree(src, home)


def run_once(cmd, stdin_path):
    fin = os.open(stdin_path, os.O_RDONLY) if stdin_path else os.open(os.devnull, os.O_RDONLY)
    out_path = os.path.join(workdir, "out", ".stdout.tmp")
    err_path = os.path.join(workdir, "out", ".stderr.tmp")
    fout = os.open(out_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    ferr = os.open(err_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    t0 = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        try:
            os.chdir(workdir)
            os.dup2(fin, 0); os.dup2(fout, 1); os.dup2(ferr, 2)
            os.execvpe(cmd[0], cmd, env)
        finally:
            os._exit(127)
    _, status, ru = os.wait4(pid, 0)
    t1 = time.perf_counter()
    for f in (fin, fout, ferr):
        os.close(f)
    out = open(out_path, "rb").read()
    return {"wall_ms": (t1 - t0) * 1000.0, "user_ms": ru.ru_utime * 1000.0, "sys_ms": ru.ru_stime * 1000.0,
            "rss_kb": ru.ru_maxrss, "rc": os.waitstatus_to_exitcode(status), "out": out}


def bench(label, cmd, stdin_path, before):
    res = []
    for _ in range(runs):
        restore(before)
        # The restored copy is dirty in the page cache; redb fdatasyncs at open and commit, so
        # without this the copy's write-back would be billed to the hook (a live store was
        # already synced by the commit that wrote it). SQLite (the peer) does not sync at open.
        os.sync()
        res.append(run_once(cmd, stdin_path))
    last = res[-1]
    with open(os.path.join(workdir, "out", label + ".stdout"), "wb") as fh:
        fh.write(last["out"])
    walls = [r["wall_ms"] for r in res]
    line = {
        "event": label, "transcript": os.path.basename(transcript), "runs": runs,
        "transcript_bytes": os.path.getsize(json.load(open(stdin_path))["transcript_path"]) if stdin_path else None,
        "wall_ms_median": round(statistics.median(walls), 1), "wall_ms_min": round(min(walls), 1),
        "wall_ms_max": round(max(walls), 1), "wall_ms_all": [round(w, 1) for w in walls],
        "user_ms_median": round(statistics.median(r["user_ms"] for r in res), 1),
        "sys_ms_median": round(statistics.median(r["sys_ms"] for r in res), 1),
        "peak_rss_kb_median": int(statistics.median(r["rss_kb"] for r in res)),
        "exit_codes": sorted(set(r["rc"] for r in res)), "stdout_bytes": len(last["out"]),
        "loadavg_1m": float(open("/proc/loadavg").read().split()[0]),
    }
    print(json.dumps(line), flush=True)
    return snapshot(label)


s = bench("ups_first", [hook, "UserPromptSubmit"], hook_input("UserPromptSubmit", base, prompt="continue"), None)
# A first prompt over a long history stops at the hook's deadline and leaves the rest of the
# archive to the next event (as shipped, a backlog over MEMCTL_HOOK_INLINE_BYTES goes to a
# detached ingest at once). The incremental prompt is measured from a complete archive, the
# state a user is in once that ingest finished; else it would bill the backlog to it.
subprocess.run([memctl, "ingest", "--quiet", "--no-embed", base], env=dict(env, MEMCTL_HOME=s),
               cwd=workdir, check=True)
s = bench("ups_incr", [hook, "UserPromptSubmit"], hook_input("UserPromptSubmit", plus2, prompt="run the tests again"), s)
s = bench("pre_compact", [hook, "PreCompact"], hook_input("PreCompact", plus2, trigger="auto", custom_instructions=""), s)
s = bench("session_start", [hook, "SessionStart"], hook_input("SessionStart", plus2, source="compact"), s)
bench("status", [memctl, "status"], None, s)

# Archive completeness: the transcript's prompts found in the archive (scripts/bench_prompts.py).
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_prompts import prompt_keys  # noqa: E402

keys = prompt_keys(plus2)
restore(s)
shown = json.loads(subprocess.run([memctl, "show", session, "--json"], env=env, capture_output=True, check=True).stdout)
turns = len({c["turn_index"] for c in shown["chunks"]})
archive = "\n".join(c.get("text", "") for c in shown["chunks"])
found = sum(1 for k in keys if k in archive)
store_bytes = os.path.getsize(os.path.join(home, "memctl.redb"))
print(json.dumps({"event": "completeness", "prompts": len(keys), "turns_archived": found, "turn_ids": turns,
                  "chunks": len(shown["chunks"]), "store_bytes": store_bytes,
                  "transcript_bytes": os.path.getsize(plus2)}), flush=True)
stop_dir_processes(workdir)
