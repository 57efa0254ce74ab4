#!/usr/bin/env python3
"""Team memory figures: `memctl sync` throughput and team search latency and recall at scale,
on a real PostgreSQL 18 + pgvector 0.8.5 (scripts/pg.sh, the pinned wheel).

    scripts/bench_team.py [--bin target/release] [--sizes 10000,100000] [--queries 30] [--seed 7]
    .cache/venv/bin/python scripts/bench_team.py --load copy --sizes 100000,1000000

Vectors at scale: embedding 1e5 chunks with the real model takes hours on this machine (about
12 chunks/s), so the store is built from the sample transcript's 50 real chunks and their real
all-MiniLM-L6-v2 vectors (ingested and exported with `memctl export --vectors`), replicated N
times: each copy gets its own session/turn, a few extra words drawn from the sample's
vocabulary (so the lexical side is not 50 distinct texts), and its vector plus Gaussian noise
(noise of norm 0.35 on the unit vector, renormalised: a copy sits at cos ~0.94 from its
base, two copies of one base at ~0.89, so the graph holds 1e5 distinct points in 50 clusters). The copies go into a local store
with `memctl import` (real redb), and then through the real client path:

  sync       `memctl team share` + `memctl sync --json --no-embed`: reads the local store,
             batched multi-row inserts (500 per transaction) into the table with its HNSW and
             GIN indexes live; chunks/s = inserted / wall time of the process
  copy       (--load copy, for 1e6: sync would take most of an hour) only the first
             --copy-prefix rows go through import + share + sync as above; the rest are
             written by binary COPY with the same columns, and the HNSW and GIN indexes built
             after the load (scripts/team_copy_load.py: load time, build times, sizes)
  search     `memctl search --team "<words>" --json` as a member (RLS on), Q queries of 3-6
             words from the vocabulary: p50/p95 of the one SQL statement (`sql_ms`) and of the
             whole process (`ms`: model load + query embedding + connect + statement)
  recall@10  for Q query vectors (a stored base vector plus fresh noise): the top 10 by
             `embedding <=> q` through the HNSW index at each --ef-search value (the client
             sets 200) against the exact top 10 (index scans off: a sequential scan), averaged

Prints one JSON object. Nothing here is a pass/fail test (cli/tests/testsuite/team.rs is).
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import random
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import time

from benchlib import require_model, stop_dir_processes

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SAMPLE = os.path.join(REPO, "tests/fixtures/sample/db5b5fab-8f4d-4e27-9da1-494c73cf256d.jsonl")
DIMS = 384


def run(cmd, env, check=True):
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if check and p.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({p.returncode}): {p.stderr[-2000:]}")
    return p


def unit(v):
    n = sum(x * x for x in v) ** 0.5 or 1.0
    return [x / n for x in v]


def noisy(rng, v, sigma):
    """A unit vector at about `sigma` (noise norm) from unit vector v: cos ~ 1/sqrt(1+sigma^2)."""
    return unit([x + rng.gauss(0.0, sigma / DIMS**0.5) for x in v])


def f32le(v):
    return base64.b64encode(struct.pack(f"<{len(v)}f", *v)).decode()


def vec_of(rec):
    b = base64.b64decode(rec["vectors"][0]["f32le"])
    return list(struct.unpack(f"<{len(b) // 4}f", b))


def pct(xs, p):
    xs = sorted(xs)
    return round(xs[min(len(xs) - 1, int(p * len(xs)))], 2)


def psql(bindir, url, sql):
    p = subprocess.run([os.path.join(bindir, "psql"), url, "-At", "-v", "ON_ERROR_STOP=1"],
                       input=sql, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        sys.exit(f"psql failed: {p.stderr[-2000:]}")
    return p.stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(REPO, "target/release"))
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--queries", type=int, default=30)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--ef-search", default="100,200,400",
                    help="hnsw.ef_search values the recall is measured at")
    ap.add_argument("--load", choices=("sync", "copy"), default="sync",
                    help="copy: the first --copy-prefix rows by memctl sync, the rest by COPY "
                         "(scripts/team_copy_load.py; needs numpy: the project venv's python)")
    ap.add_argument("--copy-prefix", type=int, default=1000)
    ap.add_argument("--copy-indexes", choices=("after", "live"), default="after",
                    help="build the HNSW/GIN indexes after the COPY, or COPY into them live")
    ap.add_argument("--maintenance-work-mem", default="4GB",
                    help="for the index builds after a COPY load (the HNSW graph in memory)")
    ap.add_argument("--keep-server", action="store_true",
                    help="leave the server and its rows up for EXPLAIN: prints its run dir; "
                         "`bash scripts/pg.sh stop RUNDIR` after")
    a = ap.parse_args()
    print(f"bench_team: seed {a.seed}", file=sys.stderr)
    memctl = os.path.join(a.bin, "memctl")
    if not os.path.exists(memctl):
        sys.exit(f"{memctl} not found: cargo build --release -p memctl-hooks -p memctl-cli")
    tmp = tempfile.mkdtemp(prefix="memctl-bench-team.")
    base_env = {k: v for k, v in os.environ.items() if not k.startswith("MEMCTL_")}
    base_env["XDG_CONFIG_HOME"] = os.path.join(tmp, "no-config")
    for k in ("ORT_DYLIB_PATH", "MEMCTL_MODEL_DIR"):
        if k in os.environ:
            base_env[k] = os.environ[k]
    require_model(memctl, base_env, "bench_team")
    run_dir = run(["bash", os.path.join(REPO, "scripts/pg.sh"), "start"], base_env).stdout.strip()
    try:
        bench(a, memctl, tmp, base_env, run_dir)
    finally:
        if a.keep_server:
            print(f"bench_team: server left up, run dir {run_dir}, member alice:alice-pw",
                  file=sys.stderr)
        else:
            run(["bash", os.path.join(REPO, "scripts/pg.sh"), "stop", run_dir], base_env,
                check=False)
        stop_dir_processes(tmp)
        shutil.rmtree(tmp, ignore_errors=True)


def bench(a, memctl, tmp, base_env, run_dir):
    rng = random.Random(a.seed)
    admin = open(os.path.join(run_dir, "url")).read().strip()
    bindir = open(os.path.join(run_dir, "bin")).read().strip()
    hostport = admin.rsplit("@", 1)[1].split("/")[0]
    env = dict(base_env, MEMCTL_HOME=os.path.join(tmp, "admin"), MEMCTL_TEAM_URL=admin)
    run([memctl, "team", "init"], env)
    pw = os.path.join(tmp, "pw")
    with open(pw, "w") as f:
        f.write("alice-pw\n")
    run([memctl, "team", "add-member", "alice", "--password-file", pw], env)
    alice = f"postgresql://alice:alice-pw@{hostport}/postgres"

    # The real base: the sample's 50 chunks with their model vectors.
    src = dict(base_env, MEMCTL_HOME=os.path.join(tmp, "src"))
    run([memctl, "ingest", SAMPLE], src)
    exp = os.path.join(tmp, "base.jsonl")
    run([memctl, "export", "--all-projects", "--vectors", "--out", exp], src)
    recs = [json.loads(l) for l in open(exp)]
    header = recs[0]
    base = [r for r in recs if r["kind"] == "chunk" and r.get("vectors")]
    vocab = sorted({w.strip(".,:;()[]{}`'\"").lower() for r in base for w in r["text"].split()
                    if w.isalpha() and 4 <= len(w) <= 12})
    out = {"seed": a.seed, "load": a.load, "base_chunks": len(base), "vocab": len(vocab),
           "sizes": {}}
    ctx = {"a": a, "memctl": memctl, "tmp": tmp, "base_env": base_env, "rng": rng,
           "admin": admin, "bindir": bindir, "alice": alice, "header": header, "base": base,
           "vocab": vocab}
    for n in [int(s) for s in a.sizes.split(",")]:
        # Each size on its own: the previous size's rows (and index entries) go.
        psql(bindir, admin, "TRUNCATE memctl.chunks, memctl.sessions;")
        res, aenv = load_size(ctx, n)
        res.update(measure(ctx, aenv))
        rows = psql(bindir, admin, "SELECT count(*) FROM memctl.chunks;").strip()
        out["sizes"][str(n)] = dict(server_rows_total=int(rows), **res)
        print(json.dumps({str(n): out["sizes"][str(n)]}), file=sys.stderr)
    print(json.dumps(out, indent=2))


def write_jsonl(ctx, n, k, project, path):
    """The first k of the size's n rows as a `memctl import` file; their (session, turn, part,
    text) for the COPY mode's key check."""
    rng, base, vocab = ctx["rng"], ctx["base"], ctx["vocab"]
    sessions, rows = {}, []
    with open(path, "w") as f:
        f.write(json.dumps(ctx["header"]) + "\n")
        f.write(json.dumps({"kind": "project", "path": project}) + "\n")
        for i in range(k):
            b = base[i % len(base)]
            sid = f"bench-{n}-{i // 200:05d}"
            sessions[sid] = sessions.get(sid, 0) + 1
            extra = " ".join(rng.choice(vocab) for _ in range(6))
            rec = dict(b, session=sid, project=project, turn=i % 200, part=0, parts=1,
                       turn_uuid=f"u-{n}-{i}", line_uuids=[f"u-{n}-{i}"],
                       text=f"{b['text']}\nnote {i}: {extra}")
            rec["vectors"] = [{"embedder": b["vectors"][0]["embedder"],
                               "f32le": f32le(noisy(rng, vec_of(b), 0.35))}]
            rows.append((sid, i % 200, 0, rec["text"]))
            f.write(json.dumps(rec) + "\n")
        for sid, turns in sessions.items():
            f.write(json.dumps({"kind": "session", "id": sid, "project": project,
                                "turns": turns, "updated_at": 0}) + "\n")
        f.write(json.dumps({"kind": "trailer", "counts": {
            "projects": 1, "tombstones": 0, "chunks": k, "turn_links": 0,
            "sessions": len(sessions), "swap_outputs": 0, "memory_files": 0,
            "vectors": k}}) + "\n")
    return rows


def load_size(ctx, n):
    """Fill the team store with n rows of one project of `alice`: all through `memctl import`
    + `memctl team share` + `memctl sync` (--load sync), or the first --copy-prefix that way
    and the rest by COPY (--load copy). Returns the figures and alice's environment."""
    a, memctl, tmp = ctx["a"], ctx["memctl"], ctx["tmp"]
    project = f"/bench/team-{n}"
    path = os.path.join(tmp, f"gen-{n}.jsonl")
    k = n if a.load == "sync" else min(n, a.copy_prefix)
    synced = write_jsonl(ctx, n, k, project, path)
    home = os.path.join(tmp, f"alice-{n}")
    aenv = dict(ctx["base_env"], MEMCTL_HOME=home, MEMCTL_TEAM_URL=ctx["alice"])
    t0 = time.monotonic()
    run([memctl, "import", path], aenv)
    import_s = time.monotonic() - t0
    os.remove(path)
    run([memctl, "team", "share", project], aenv)
    t0 = time.monotonic()
    rep = json.loads(run([memctl, "sync", "--json", "--no-embed"], aenv).stdout)
    sync_s = time.monotonic() - t0
    res = {"import_s": round(import_s, 1), "sync_inserted": rep["inserted"],
           "sync_s": round(sync_s, 2), "sync_chunks_per_s": round(rep["inserted"] / sync_s, 1)}
    if a.load == "copy" and n > k:
        import team_copy_load as tcl  # numpy: only this mode needs it
        admin, bindir = ctx["admin"], ctx["bindir"]
        tcl.verify_keys(bindir, admin, [tcl.row_key("alice", *r) for r in synced])
        pid = int(psql(bindir, admin, "SELECT id FROM memctl.projects WHERE owner = 'alice' "
                       f"AND name = '{project}';").strip())
        rng, vocab, base = ctx["rng"], ctx["vocab"], ctx["base"]
        res["copy"] = tcl.load(bindir, admin, {
            "n": n, "start": k, "project_id": pid, "author": "alice", "base": base,
            "base_vecs": tcl.np.array([vec_of(b) for b in base], dtype="float64"),
            "texts": lambda i: " ".join(rng.choice(vocab) for _ in range(6)),
            "session": lambda i: f"bench-{n}-{i // 200:05d}", "sigma": 0.35,
            "seed": a.seed, "maintenance_work_mem": a.maintenance_work_mem,
            "indexes": a.copy_indexes,
            "synced_key": lambda i: tcl.row_key("alice", *synced[i])})
    return res, aenv


def measure(ctx, aenv):
    """Search latency as the member through the CLI, and the HNSW recall@10."""
    a, rng, vocab, base = ctx["a"], ctx["rng"], ctx["vocab"], ctx["base"]
    sql_ms, proc_ms = [], []
    for _ in range(a.queries):
        q = " ".join(rng.choice(vocab) for _ in range(rng.randint(3, 6)))
        t0 = time.monotonic()
        r = json.loads(run([ctx["memctl"], "search", "--team", q, "--json", "-k", "10"],
                           aenv).stdout)
        proc_ms.append((time.monotonic() - t0) * 1000)
        sql_ms.append(r["sql_ms"])
    # Recall@10 of the HNSW index against the exact order (as the superuser: the index
    # itself, no RLS), on query vectors near stored ones. The exact order once per query
    # (index scans off: a sequential scan), then the index's at each ef_search.
    qvecs = [noisy(rng, vec_of(base[rng.randrange(len(base))]), 0.35)
             for _ in range(a.queries)]
    qs = []
    for v in qvecs:
        lit = "'[" + ",".join(f"{x:.6f}" for x in v) + "]'"
        qs.append(f"SELECT string_agg(id::text, ',') FROM (SELECT id FROM memctl.chunks "
                  f"ORDER BY embedding <=> {lit} LIMIT 10) t;")

    def top10s(script):
        lines = psql(ctx["bindir"], ctx["admin"], "\n".join(script)).split("\n")
        return [set(l.split(",")) for l in lines if l and l[0].isdigit()]

    t0 = time.monotonic()
    exact = top10s(["SET enable_indexscan = off;"] + qs)
    exact_s = time.monotonic() - t0
    recall_by_ef = {}
    for ef in [int(x) for x in a.ef_search.split(",")]:
        ann = top10s([f"SET hnsw.ef_search = {ef};"] + qs)
        recalls = [len(x & e) / max(1, len(e)) for x, e in zip(ann, exact)]
        recall_by_ef[ef] = round(statistics.mean(recalls), 4) if recalls else None
    return {"search_sql_ms_p50": pct(sql_ms, 0.5), "search_sql_ms_p95": pct(sql_ms, 0.95),
            "search_process_ms_p50": pct(proc_ms, 0.5), "recall_at_10_by_ef_search": recall_by_ef,
            "recall_queries": len(qvecs), "exact_scans_s": round(exact_s, 1)}


if __name__ == "__main__":
    main()
