#!/usr/bin/env python3
"""Hybrid search latency of two builds on one store, with the resident service up, in one run.

    scripts/bench_search_ab.py --before BIN_DIR --after BIN_DIR [--size 100000]
                               [--queries 40] [--rounds 3] [--seed 7] [--cache .cache/bench/scale]

The store is `scripts/gen_scale_store.py --vectors mixed` of --size chunks (made once and
cached by `scripts/bench_scale.py`'s rules, `m<N>` under --cache). Per round, each build in
turn (the order alternates, so load drifts hit both): its own `memctl embedder` starts on the
store (the saved vector index loads; the first start builds it) and, once the index answers:

  process  `memctl search --json -k 10 "<q>"`, one whole process per query (what a user runs)
  batch    `memctl search --queries Q.jsonl -k 10` (one process): ms between consecutive
           result lines, the first left out (it opens the store)

Queries (seeded, printed): a third bags of the generator's common words, a third questions
with a time phrase ("what did we decide about the cache retry last week?"), a third holding an
identifier (snake_case, a path with its line, a ticket): the shapes that exercise every
promotion a hybrid search may run. Prints one JSON object: p50 / p95 per build and figure,
and after/before ratios of the p50s.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_scale import (PROJECT, WORDS, env_for, pct, start_service, stop,  # noqa: E402
                         wait_indexed)

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TIME = ["last week", "yesterday", "in October", "3 days ago", "the first time", "recently"]


def make_queries(n, seed):
    rng = random.Random(seed)
    out = []
    for i in range(n):
        a, b = rng.sample(WORDS, 2)
        if i % 3 == 0:
            out.append(" ".join(rng.sample(WORDS, rng.randint(2, 4))))
        elif i % 3 == 1:
            out.append(f"what did we decide about the {a} {b} {rng.choice(TIME)}?")
        else:
            ident = rng.choice([f"{a}_{b}", f"src/{a}/{b}.rs:{rng.randint(10, 400)}",
                                f"{a.upper()}-{rng.randint(100, 9999)}"])
            out.append(f"where did {ident} fail with the {b} error")
    return out


def process(memctl, env, qs):
    ms = []
    for q in qs:
        t = time.perf_counter()
        p = subprocess.run([memctl, "search", "--json", "--project", PROJECT, "-k", "10", q],
                           env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        ms.append((time.perf_counter() - t) * 1000)
        if p.returncode != 0:
            sys.exit(f"search failed: {p.stderr[-1500:]}")
    return ms


def batch(memctl, env, qfile, n):
    # Raw reads: Python's read-ahead would hand lines over late and in bunches.
    p = subprocess.Popen([memctl, "search", "--queries", qfile, "--project", PROJECT, "-k", "10"],
                         env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, bufsize=0)
    stamps = []
    while chunk := os.read(p.stdout.fileno(), 1 << 20):
        stamps += [time.monotonic()] * chunk.count(b"\n")
    if p.wait() != 0 or len(stamps) != n:
        sys.exit(f"{memctl} --queries failed ({len(stamps)} of {n} answers)")
    return [(b - a) * 1000 for a, b in zip(stamps, stamps[1:])]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--before", required=True)
    ap.add_argument("--after", required=True)
    ap.add_argument("--size", type=int, default=100000)
    ap.add_argument("--queries", type=int, default=40)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--cache", default=os.path.join(REPO, ".cache/bench/scale"))
    a = ap.parse_args()
    home = os.path.join(a.cache, f"m{a.size}")
    if not os.path.exists(os.path.join(home, "memctl.redb")):
        sys.exit(f"no store {home}: make it with scripts/bench_scale.py --sizes {a.size}")
    qs = make_queries(a.queries, a.seed)
    print(f"bench_search_ab: seed {a.seed}, {len(qs)} queries", file=sys.stderr)
    qfile = os.path.join(home, "bench-ab-queries.jsonl")
    with open(qfile, "w") as f:
        for i, q in enumerate(qs):
            f.write(json.dumps({"qid": i, "query": q}) + "\n")
    bins = {"before": a.before, "after": a.after}
    res = {b: {"process": [], "batch": []} for b in bins}
    env = env_for(home, MEMCTL_ANN="1")
    out = {"seed": a.seed, "size": a.size, "queries": qs, "loadavg_start": os.getloadavg()}
    for r in range(a.rounds):
        for b in (["before", "after"] if r % 2 == 0 else ["after", "before"]):
            memctl = os.path.join(bins[b], "memctl")
            svc = start_service(memctl, env)
            if wait_indexed(memctl, env, qs[0], 3600, svc) is None:
                sys.exit(f"{b}: the service's index did not answer")
            res[b]["process"] += process(memctl, env, qs)
            res[b]["batch"] += batch(memctl, env, qfile, len(qs))
            stop(svc, home)
            print(f"round {r + 1} {b}: done", file=sys.stderr)
    for b in bins:
        for k, xs in res[b].items():
            out[f"{b}_{k}_p50_ms"] = round(pct(xs, 50), 1)
            out[f"{b}_{k}_p95_ms"] = round(pct(xs, 95), 1)
    for k in ("process", "batch"):
        out[f"{k}_p50_ratio"] = round(out[f"after_{k}_p50_ms"] / out[f"before_{k}_p50_ms"], 3)
    out["loadavg_end"] = os.getloadavg()
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
