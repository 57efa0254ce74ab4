#!/usr/bin/env python3
"""First archive of an existing history, several memctl builds side by side in one run.

usage: bench_first_archive.py <transcript.jsonl> <workdir> <runs> <label>=<memctl-hook> ...

Every run: an empty MEMCTL_HOME, one whole UserPromptSubmit process on the transcript (inline
archive with no deadline so that every turn is archived, no background embedder: the same setting as bench_hooks.py's ups_first), wall time by
perf_counter around fork/exec+wait4, CPU from the child's rusage. Builds alternate run by run,
in reversed order every other run (A, B, B, A, ...), so that a machine whose speed drifts, and
the position of a run in the sequence, bill both alike. Prints one JSON
line per label: wall/CPU medians, the store's size, its chunks and their text bytes (from
`memctl status --json` of the label's sibling `memctl` binary), the transcript's size.
Stdlib only.
"""
import json, os, shutil, statistics, subprocess, sys, time
from benchlib import first_archive_env, remove_tree, write_ups_input

transcript, workdir, runs = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2]), int(sys.argv[3])
builds = [a.split("=", 1) for a in sys.argv[4:]]
if not builds:
    sys.exit("usage: bench_first_archive.py <transcript> <workdir> <runs> <label>=<memctl-hook> ...")
session, inp = write_ups_input(workdir, transcript)



def run_once(hook, home):
    remove_tree(home)
    os.sync()
    fin = os.open(inp, os.O_RDONLY)
    fnull = os.open(os.devnull, os.O_WRONLY)
    t0 = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        try:
            os.chdir(workdir)
            os.dup2(fin, 0); os.dup2(fnull, 1); os.dup2(fnull, 2)
            os.execvpe(hook, [hook, "UserPromptSubmit"], first_archive_env(home))
        finally:
            os._exit(127)
    _, status, ru = os.wait4(pid, 0)
    t1 = time.perf_counter()
    os.close(fin); os.close(fnull)
    return {"wall_ms": (t1 - t0) * 1000.0, "cpu_ms": (ru.ru_utime + ru.ru_stime) * 1000.0,
            "rc": os.waitstatus_to_exitcode(status)}


res = {label: [] for label, _ in builds}
for run in range(runs):
    # A, B, then B, A: a run right after another tool's (or an `rm` of a big store) was measured
    # up to 0.25 s slower at 5,000 turns, so no build may always go first.
    for label, hook in (builds if run % 2 == 0 else builds[::-1]):
        res[label].append(run_once(hook, os.path.join(workdir, "home-" + label)))
for label, hook in builds:
    home = os.path.join(workdir, "home-" + label)
    memctl = os.path.join(os.path.dirname(hook), "memctl")
    st = subprocess.run([memctl, "status", "--json"], env=first_archive_env(home), capture_output=True, text=True)
    status = json.loads(st.stdout) if st.returncode == 0 else {}
    text_bytes = None
    shown = subprocess.run([memctl, "show", session, "--json"], env=first_archive_env(home), capture_output=True, text=True)
    if shown.returncode == 0:
        chunks = json.loads(shown.stdout).get("chunks", [])
        text_bytes = sum(len(c.get("text", "").encode()) for c in chunks)
        n_chunks = len(chunks)
    else:
        n_chunks = None
    store = os.path.join(home, "memctl.redb")
    size = os.path.getsize(store) if os.path.exists(store) else None
    walls = [r["wall_ms"] for r in res[label]]
    print(json.dumps({
        "label": label, "transcript": os.path.basename(transcript), "runs": runs,
        "wall_ms_median": round(statistics.median(walls), 1), "wall_ms_all": [round(w, 1) for w in walls],
        "cpu_ms_median": round(statistics.median(r["cpu_ms"] for r in res[label]), 1),
        "exit_codes": sorted(set(r["rc"] for r in res[label])),
        "store_bytes": size, "chunks": n_chunks, "chunk_text_bytes": text_bytes,
        "bytes_per_chunk": round(size / n_chunks) if size and n_chunks else None,
        "transcript_bytes": os.path.getsize(transcript),
        "status_chunks": status.get("chunks") if isinstance(status, dict) else None,
    }), flush=True)
