#!/usr/bin/env python3
"""BM25-only search latency at scale, two binaries on the same stores, in one run.

    scripts/bench_bm25_scale.py --stores DIR[,DIR...] --before BIN_DIR --after BIN_DIR
                                [--queries 40] [--seed 7] [--rounds 2]

Each DIR is a data dir made by scripts/gen_scale_store.py (project /bench/scale). The
`--before` binary searches DIR as it is; DIR is copied to DIR.after and the `--after` binary
migrates the copy first (`memctl migrate`, timed) when its schema is newer; a store named by
--in-place is measured with `before` first and then migrated in place. Queries: 3-6 words,
one to three of them among the sample transcript's 30 most frequent words (the head of the
generator's Zipf vocabulary: in a large share of all chunks), the rest other sample words;
drawn from `random.Random(seed)` (printed).

Two figures per (store, binary), p50 / p95 in ms:
  warm     `memctl search --queries Q.jsonl --mode lexical -k 10` (one process, every query):
           time between consecutive result lines (stdout is line-buffered; read raw), the first query
           left out (it opens the store and warms the page cache)
  process  one `memctl search --mode lexical -k 10 --json "<q>"` process per query: wall time
           of the whole process (store open, BM25, loading the hits, printing)
The binaries alternate per round so that load drifts hit both. Searches run with
MEMCTL_EMBEDDER=hash (the stores have no model vectors; lexical mode embeds nothing).
Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SAMPLE = os.path.join(REPO, "tests/fixtures/sample/db5b5fab-8f4d-4e27-9da1-494c73cf256d.jsonl")
PROJECT = "/bench/scale"


def sample_words():
    counts = {}
    for line in open(SAMPLE):
        rec = json.loads(line)
        msg = rec.get("message") or {}
        content = msg.get("content")
        texts = [content] if isinstance(content, str) else [
            c.get("text", "") for c in (content or []) if isinstance(c, dict)]
        for t in texts:
            for w in t.split():
                w = w.strip(".,:;()[]{}`'\"!?").lower()
                if w.isalpha() and 4 <= len(w) <= 12:
                    counts[w] = counts.get(w, 0) + 1
    return sorted(counts, key=lambda w: (-counts[w], w))


def make_queries(rng, n):
    words = sample_words()
    common, rest = words[:30], words[30:]
    out = []
    for _ in range(n):
        k = rng.randint(3, 6)
        c = rng.randint(1, min(3, k))
        out.append(" ".join(rng.sample(common, c) + rng.sample(rest, k - c)))
    return out


def pct(xs, p):
    xs = sorted(xs)
    return round(xs[min(len(xs) - 1, int(p * len(xs)))], 2)


def env_for(data_dir):
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMCTL_")}
    env.update(MEMCTL_HOME=data_dir, MEMCTL_EMBEDDER="hash",
               XDG_CONFIG_HOME=os.path.join(data_dir, "no-config"))
    return env


def warm(memctl, data_dir, qfile, n):
    # Raw reads (no Python read-ahead, which would hand over lines late and in bunches).
    p = subprocess.Popen([memctl, "search", "--queries", qfile, "--project", PROJECT,
                          "--mode", "lexical", "-k", "10"], env=env_for(data_dir),
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, bufsize=0)
    fd = p.stdout.fileno()
    stamps = []
    while True:
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            break
        now = time.monotonic()
        stamps += [now] * chunk.count(b"\n")
    if p.wait() != 0 or len(stamps) != n:
        sys.exit(f"{memctl} --queries failed ({len(stamps)} of {n} answers)")
    return [(b - a) * 1000 for a, b in zip(stamps, stamps[1:])]


def process(memctl, data_dir, queries):
    ms = []
    for q in queries:
        t0 = time.monotonic()
        r = subprocess.run([memctl, "search", "--project", PROJECT, "--mode", "lexical",
                            "-k", "10", "--json", q], env=env_for(data_dir),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        ms.append((time.monotonic() - t0) * 1000)
        if r.returncode != 0:
            sys.exit(f"search failed: {r.stderr[-1000:]}")
    return ms


def measure(bins, dirs, b, qfile, queries, res):
    res[b]["warm"] += warm(bins[b], dirs[b], qfile, len(queries))
    res[b]["process"] += process(bins[b], dirs[b], queries)


def migrate(memctl, data_dir):
    """`memctl migrate` (timed); the pre-migration file it keeps is removed (a scratch store,
    and at 1e6 it is gigabytes)."""
    t0 = time.monotonic()
    mig = subprocess.run([memctl, "migrate", "--json"], env=env_for(data_dir),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    secs = time.monotonic() - t0
    if mig.returncode != 0:
        sys.exit(f"migrate failed: {mig.stderr[-1000:]}")
    shutil.rmtree(os.path.join(data_dir, "backups"), ignore_errors=True)
    return secs, mig.stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--stores", required=True)
    ap.add_argument("--before", required=True)
    ap.add_argument("--after", required=True)
    ap.add_argument("--queries", type=int, default=40)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--in-place", default="", metavar="DIR[,DIR]",
                    help="stores to migrate in place instead of copying (no disk for a copy): "
                         "all `before` rounds run first")
    a = ap.parse_args()
    print(f"bench_bm25_scale: seed {a.seed}", file=sys.stderr)
    rng = random.Random(a.seed)
    queries = make_queries(rng, a.queries)
    bins = {"before": os.path.join(a.before, "memctl"), "after": os.path.join(a.after, "memctl")}
    out = {"seed": a.seed, "queries": queries, "loadavg_start": os.getloadavg(), "stores": {}}
    in_place = set(filter(None, a.in_place.split(",")))
    for store in a.stores.split(","):
        dirs = {"before": store, "after": store}
        res = {b: {"warm": [], "process": []} for b in bins}
        qfile = os.path.join(os.path.dirname(store.rstrip("/")), "bench-bm25-queries.jsonl")
        with open(qfile, "w") as f:
            for i, q in enumerate(queries):
                f.write(json.dumps({"qid": i, "query": q}) + "\n")
        if store in in_place:
            # No room for a copy: every round of `before` first, then the migration.
            for _ in range(a.rounds):
                measure(bins, dirs, "before", qfile, queries, res)
        else:
            dirs["after"] = store.rstrip("/") + ".after"
            if not os.path.exists(dirs["after"]):
                shutil.copytree(store, dirs["after"])
        mig_s, mig = migrate(bins["after"], dirs["after"])
        for r in range(a.rounds):
            order = ["after"] if store in in_place else \
                list(bins) if r % 2 == 0 else list(reversed(bins))
            for b in order:
                measure(bins, dirs, b, qfile, queries, res)
        row = {"migrate_s": round(mig_s, 1), "migrate": json.loads(mig),
               "in_place": store in in_place}
        for b in bins:
            for kind in ("warm", "process"):
                xs = res[b][kind]
                row[f"{b}_{kind}_p50_ms"] = pct(xs, 0.5)
                row[f"{b}_{kind}_p95_ms"] = pct(xs, 0.95)
        out["stores"][store] = row
        print(json.dumps({store: row}), file=sys.stderr)
    out["loadavg_end"] = os.getloadavg()
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
