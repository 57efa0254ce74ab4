#!/usr/bin/env python3
"""Whole-process `memctl search` latency on a store whose chunks all wait for the embedder.

usage: bench_search_pending.py <transcript.jsonl> <workdir> <runs> <label>=<bin dir> ...

Per label: an empty MEMCTL_HOME, one `memctl-hook UserPromptSubmit` first archive of the whole
transcript with the background embedder off (so every chunk stays pending, as after a big
history is archived and before the embedder caught up), then `runs` searches per query, each a
whole `memctl search --json --all-projects` process in hybrid mode (the default), timed by
perf_counter around fork/exec+wait4. Labels alternate query by query so that a drifting machine
bills both alike. The background embedder stays off during the searches too (a search would
otherwise start one, and its model load would be billed to the next search).

The build before measured 91 s for the first search after a 5,000-turn backlog (the search embedded
pending chunks in the foreground). Prints one JSON line per label: p50/p95/max wall ms, the
pending count the search reported, how many searches answered with results, exit codes.
Stdlib only.
"""
import json, os, shutil, statistics, subprocess, sys, time
from benchlib import first_archive_env, remove_tree, require_model, write_ups_input

QUERIES = [
    "failing test in the parser",
    "database migration error",
    "how did we configure the cache",
    "npm run build",
    "permission denied when writing the config file",
    "refactor the authentication middleware",
]

transcript, workdir, runs = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2]), int(sys.argv[3])
builds = [a.split("=", 1) for a in sys.argv[4:]]
for _label, _bindir in builds:
    require_model(os.path.join(_bindir, "memctl"), os.environ, "bench_search_pending")
if not builds:
    sys.exit(__doc__)
session, inp = write_ups_input(workdir, transcript)



def first_archive(bindir, home):
    remove_tree(home)
    with open(inp, "rb") as fin:
        r = subprocess.run([os.path.join(bindir, "memctl-hook"), "UserPromptSubmit"], stdin=fin,
                           env=first_archive_env(home), cwd=workdir, capture_output=True)
    if r.returncode != 0:
        sys.exit(f"first archive with {bindir} failed: {r.stderr.decode(errors='replace')[-500:]}")


def search_once(bindir, home, query):
    argv = [os.path.join(bindir, "memctl"), "search", "--json", "--all-projects", "-k", "5", query]
    t0 = time.perf_counter()
    r = subprocess.run(argv, env=first_archive_env(home), cwd=workdir, capture_output=True)
    wall = (time.perf_counter() - t0) * 1000.0
    doc = {}
    if r.returncode == 0:
        try:
            doc = json.loads(r.stdout)
        except ValueError:
            pass
    return {"wall_ms": wall, "rc": r.returncode, "pending": doc.get("pending"),
            "hits": len(doc.get("results") or [])}


homes = {}
for label, bindir in builds:
    homes[label] = os.path.join(workdir, "home-" + label)
    first_archive(os.path.abspath(bindir), homes[label])
res = {label: [] for label, _ in builds}
for _ in range(runs):
    for q in QUERIES:
        for label, bindir in builds:
            res[label].append(search_once(os.path.abspath(bindir), homes[label], q))
for label, _ in builds:
    walls = sorted(r["wall_ms"] for r in res[label])
    p95 = walls[min(len(walls) - 1, int(round(0.95 * (len(walls) - 1))))]
    print(json.dumps({
        "label": label, "transcript": os.path.basename(transcript), "searches": len(walls),
        "wall_ms_p50": round(statistics.median(walls), 1), "wall_ms_p95": round(p95, 1),
        "wall_ms_max": round(walls[-1], 1),
        "pending": max((r["pending"] or 0) for r in res[label]),
        "answered_with_results": sum(1 for r in res[label] if r["hits"] > 0),
        "exit_codes": sorted(set(r["rc"] for r in res[label])),
    }), flush=True)
