"""The bulk half of `scripts/bench_team.py --load copy`: rows of the team table written by
PostgreSQL `COPY … FROM STDIN (FORMAT binary)` through psql, for sizes `memctl sync` would
take most of an hour to push (~420 chunks/s).

The caller has already run the real client for the first rows of the project (`memctl team
share` + `memctl sync`): the project, its share and session rows, the schema, roles and
policies are the product's own. Here the remaining rows get exactly the columns `memctl sync`
writes (key = sha256 of author, session, turn, part and the text's sha256; `author` the
member; the server's project id; `started_at`, `text`, `summary` and the vector), as the
superuser (whom RLS does not apply to: `COPY FROM` refuses a table under RLS otherwise).
`verify_keys` checks that the key computed here is the key the client wrote for the rows it
pushed, so the two halves cannot drift apart unnoticed.

The three secondary indexes the schema creates (HNSW, GIN, project) are dropped before the
load and built again after it from their own `pg_get_indexdef` text: one build is much faster
than a million live inserts into an HNSW graph. Needs numpy (the project venv): 384 noise
values per row in pure Python would take longer than the load.
"""

from __future__ import annotations

import hashlib
import os
import struct
import subprocess
import sys
import time

import numpy as np

DIMS = 384
COPY_COLS = "key, project_id, session_id, author, turn, part, started_at, text, summary, embedding"
# The indexes the schema builds on memctl.chunks besides its constraints' (primary key, key).
REBUILT = ("chunks_embedding", "chunks_tsv", "chunks_project")


def row_key(author, session, turn, part, text):
    """The key `memctl sync` gives a row (cli/src/team/sync.rs: row_key of turn_ref)."""
    text_sha = hashlib.sha256(text.encode()).hexdigest()
    return hashlib.sha256(f"{author}\0{session}\0{turn}\0{part}\0{text_sha}".encode()).hexdigest()


def psql_cmd(bindir, url):
    return [os.path.join(bindir, "psql"), url, "-At", "-v", "ON_ERROR_STOP=1"]


def psql(bindir, url, sql):
    p = subprocess.run(psql_cmd(bindir, url), input=sql, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        sys.exit(f"psql failed: {p.stderr[-2000:]}")
    return p.stdout, p.stderr


def verify_keys(bindir, admin, keys):
    """Every key computed here for the rows the real client pushed is on the server."""
    lit = ",".join(f"'{k}'" for k in keys)
    out, _ = psql(bindir, admin, f"SELECT count(*) FROM memctl.chunks WHERE key IN ({lit});")
    if int(out.strip()) != len(keys):
        sys.exit(f"team_copy_load: {out.strip()} of {len(keys)} computed keys are on the server: "
                 "the COPY rows would not match what memctl sync writes")


def check_shape(bindir, admin, synced_key, copied_key):
    """A row the client pushed and a copied row of the same sample chunk agree on every column
    but the ones that differ by construction (id, key, text's note, vector noise, synced_at)."""
    cols = ("author, project_id, session_id LIKE 'bench-%', length(key), part, started_at, "
            "summary, vector_dims(embedding), round(vector_norm(embedding)::numeric, 3), "
            "length(tsv) > 0, synced_at IS NOT NULL")
    out, _ = psql(bindir, admin, f"SELECT {cols} FROM memctl.chunks WHERE key = '{synced_key}';"
                  f"SELECT {cols} FROM memctl.chunks WHERE key = '{copied_key}';")
    a, b = (l for l in out.split("\n") if l.strip())
    if a != b:
        sys.exit(f"team_copy_load: a copied row differs from a synced one:\n{a}\n{b}")


def _field(b):
    return struct.pack(">i", len(b)) + b


def _text(s):
    return struct.pack(">i", -1) if s is None else _field(s.encode())


def copy_tuples(rows, project_id, author, vectors):
    """Binary COPY tuples of `rows` ((session, turn, part, started_at, text, summary)) with
    their float32 vectors, in COPY_COLS order."""
    out = []
    pid = _field(struct.pack(">q", project_id))
    who = _text(author)
    head = struct.pack(">hh", DIMS, 0)
    for (sid, turn, part, started, text, summary), v in zip(rows, vectors):
        out.append(b"".join((
            struct.pack(">h", 10), _text(row_key(author, sid, turn, part, text)), pid,
            _text(sid), who, _field(struct.pack(">i", turn)), _field(struct.pack(">i", part)),
            _text(started), _text(text), _text(summary), _field(head + v.tobytes()))))
    return b"".join(out)


def drop_indexes(bindir, admin):
    """Drop the REBUILT indexes; returns their definitions, to build them again after."""
    names = ",".join(f"'{n}'" for n in REBUILT)
    out, _ = psql(bindir, admin, "SELECT indexdef FROM pg_indexes WHERE schemaname = 'memctl' "
                  f"AND tablename = 'chunks' AND indexname IN ({names}) ORDER BY indexname;")
    defs = [l for l in out.split("\n") if l.strip()]
    if len(defs) != len(REBUILT):
        sys.exit(f"team_copy_load: expected the indexes {REBUILT}, found {defs}")
    psql(bindir, admin, "".join(f"DROP INDEX memctl.{n};" for n in REBUILT))
    return defs


def build_indexes(bindir, admin, defs, maintenance_work_mem):
    """Build each index from its definition; seconds per index name, and psql's notices (a
    HNSW graph outgrowing maintenance_work_mem says so there)."""
    secs, notices = {}, []
    for d in defs:
        name = d.split(" INDEX ", 1)[1].split(" ", 1)[0]
        t0 = time.monotonic()
        _, err = psql(bindir, admin, f"SET maintenance_work_mem = '{maintenance_work_mem}';\n{d};")
        secs[name] = round(time.monotonic() - t0, 1)
        notices += [l for l in err.split("\n") if l.strip()]
    return secs, notices


def load(bindir, admin, spec):
    """COPY rows spec['start']..spec['n'] of the bench's data into spec['project_id'] as
    spec['author'], with the sessions they need; returns timings and counts.

    spec: n, start, project_id, author, base (the sample's chunk records), base_vecs (their
    vectors, float64 [50, DIMS]), texts (a function i -> the row's extra words), session (i ->
    session id), sigma (noise norm), seed, maintenance_work_mem, indexes ("after" or "live"),
    synced_key (i -> the key of the pushed row i, for check_shape)."""
    n, start, author = spec["n"], spec["start"], spec["author"]
    rng = np.random.default_rng(spec["seed"])
    base, bv = spec["base"], spec["base_vecs"]
    # indexes "live": COPY into the table with its indexes, as sync inserts (to compare).
    defs = drop_indexes(bindir, admin) if spec["indexes"] == "after" else []
    t0 = time.monotonic()
    sessions = sorted({spec["session"](i) for i in range(start, n)})
    have, _ = psql(bindir, admin, "SELECT id FROM memctl.sessions WHERE project_id = "
                   f"{spec['project_id']};")
    have = set(have.split())
    new = [s for s in sessions if s not in have]
    psql(bindir, admin, f"COPY memctl.sessions (project_id, id, author) FROM STDIN;\n"
         + "".join(f"{spec['project_id']}\t{s}\t{author}\n" for s in new) + "\\.\n")
    cmd = psql_cmd(bindir, admin) + ["-c", f"COPY memctl.chunks ({COPY_COLS}) FROM STDIN "
                                           "(FORMAT binary)"]
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    p.stdin.write(b"PGCOPY\n\xff\r\n\x00" + struct.pack(">ii", 0, 0))
    step = 10_000
    for lo in range(start, n, step):
        idx = np.arange(lo, min(n, lo + step))
        noise = rng.normal(0.0, spec["sigma"] / DIMS**0.5, (len(idx), DIMS))
        v = bv[idx % len(base)] + noise
        v = (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(">f4")
        rows = []
        for i in idx.tolist():
            b = base[i % len(base)]
            rows.append((spec["session"](i), i % 200, 0, b.get("started_at"),
                         f"{b['text']}\nnote {i}: {spec['texts'](i)}", b.get("summary", "")))
        if lo == start:
            first_key = row_key(author, *rows[0][:3], rows[0][4])
        p.stdin.write(copy_tuples(rows, spec["project_id"], author, v))
    p.stdin.write(struct.pack(">h", -1))
    out, err = p.communicate()
    if p.returncode != 0:
        sys.exit(f"COPY failed: {err.decode()[-2000:]}")
    copy_s = time.monotonic() - t0
    check_shape(bindir, admin, spec["synced_key"](start % len(base)), first_key)
    build_s, notices = build_indexes(bindir, admin, defs, spec["maintenance_work_mem"])
    # What autovacuum does on its own after this many inserts (insert threshold): visibility
    # map and statistics, so the plans are those of a table that has settled.
    t1 = time.monotonic()
    psql(bindir, admin, "VACUUM (ANALYZE) memctl.chunks; VACUUM (ANALYZE) memctl.sessions;")
    size, _ = psql(bindir, admin, "SELECT pg_total_relation_size('memctl.chunks'), "
                   "pg_relation_size('memctl.chunks_embedding'), "
                   "pg_relation_size('memctl.chunks_tsv');")
    total, hnsw, gin = (int(x) for x in size.strip().split("|"))
    return {"copied": n - start, "copy_s": round(copy_s, 1),
            "copy_rows_per_s": round((n - start) / copy_s, 1),
            "index_build_s": build_s, "vacuum_analyze_s": round(time.monotonic() - t1, 1),
            "index_build_notices": notices, "table_total_mb": total >> 20,
            "hnsw_mb": hnsw >> 20, "gin_mb": gin >> 20}
