#!/usr/bin/env python3
"""Build a synthetic memctl store of N chunks in one project, through `memctl import`.

    scripts/gen_scale_store.py --chunks 1000000 --out DIR [--seed 7] [--vectors none|model|mixed]
                               [--bin target/release] [--keep-jsonl]

Then search it with `MEMCTL_HOME=DIR MEMCTL_EMBEDDER=hash memctl search --project /bench/scale
--mode lexical "..."` (with `--vectors model`, drop `MEMCTL_EMBEDDER=hash`). The project path is
printed at the end (one JSON object: chunks, project, seconds spent generating and importing).

What the chunks look like. The base is the sample transcript's 50 real chunks
(tests/fixtures/sample), ingested and exported by the real binary (export format:
docs/export-format.md). Chunk i copies the record fields of base chunk i % 50 and gets its own
session (200 turns each) and a new text:
  - a window of 20-60 words of the base chunk's real text;
  - 30-150 words drawn from a Zipf-like distribution (weight 1/(rank+2)) over a vocabulary of
    the sample's own words (most frequent first) followed by seeded pseudo-words, so common
    words really are common (the top word lands in most chunks) and the tail is long;
  - 0-3 identifiers (snake_case, camelCase or `a::b` built from vocabulary words), 0-2 paths
    (`src/<w>/<w>.rs` and the like), and in one chunk of five an error line (rustc, Python or
    Node style) naming one of them.
Everything is drawn from one `random.Random(seed)`; the seed is printed on stderr.

Vectors. `none` (default): the file has no vectors; import with `MEMCTL_EMBEDDER=hash` (the
hash embedder: no model, nothing queued for the resident service), and search with it too.
`model`: the sample is ingested with the real all-MiniLM-L6-v2 (needs the model, see
scripts/setup.sh) and chunk i carries base i % 50's vector plus Gaussian noise of norm 0.35
(renormalised), as scripts/bench_team.py does; slow in Python (~384 draws per chunk). Every base
then has N/50 near-copies at nearly equal cosines from any query: the hardest case for a graph
index, unlike real archives.
`mixed`: the model embeds a pool of real, distinct texts (the LoCoMo conversations' turns,
../shared/bench/locomo or --pool FILE, plus the sample's chunks); chunk i carries a random mix of
3 pool vectors (weights -ln u) plus Gaussian noise of norm 0.1, renormalised: a continuous spread
over the model's space, closer to what a year of different sessions looks like (numpy, from the
venv scripts/setup.sh makes: .cache/venv/bin/python).

Import of 1e6 chunks takes a few minutes (batches of up to 8192 lines per write transaction);
the JSONL file (~1.7 GB at 1e6 without vectors, ~3.8 GB with) is deleted unless --keep-jsonl.
"""

from __future__ import annotations

import argparse
import base64
import itertools
import json
import os
import random
import shutil
import struct
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SAMPLE = os.path.join(REPO, "tests/fixtures/sample/db5b5fab-8f4d-4e27-9da1-494c73cf256d.jsonl")
PROJECT = "/bench/scale"
DIMS = 384
TURNS_PER_SESSION = 200
PSEUDO_WORDS = 40000


def run(cmd, env):
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({p.returncode}): {p.stderr[-2000:]}")
    return p


def base_records(memctl, env, tmp, vectors):
    """The sample's chunks as export records (with model vectors when asked)."""
    src = dict(env, MEMCTL_HOME=os.path.join(tmp, "src"))
    if vectors == "none":
        src["MEMCTL_EMBEDDER"] = "hash"
    run([memctl, "ingest", SAMPLE], src)
    exp = os.path.join(tmp, "base.jsonl")
    cmd = [memctl, "export", "--all-projects", "--out", exp]
    if vectors != "none":
        cmd.insert(3, "--vectors")
    run(cmd, src)
    recs = [json.loads(l) for l in open(exp)]
    base = [r for r in recs if r["kind"] == "chunk"]
    if vectors != "none":
        base = [r for r in base if r.get("vectors")]
        if not base:
            sys.exit("gen_scale_store: the sample was not embedded by the model")
    return recs[0], base


def pool_texts(path):
    """The turns of the LoCoMo conversations: real, distinct sentences."""
    data = json.load(open(path))
    out = []
    for conv in data:
        for key, turns in conv["conversation"].items():
            if key.startswith("session_") and isinstance(turns, list):
                out.extend(t["text"] for t in turns if len(t.get("text", "")) >= 20)
    return out


def pool_vectors(memctl, env, tmp, header, base, texts):
    """Real model vectors of `texts` (and of the sample's chunks): import them without vectors,
    embed them with `memctl embed-pending`, export them with their vectors."""
    home = os.path.join(tmp, "pool")
    src = dict(env, MEMCTL_HOME=home)
    path_in = os.path.join(tmp, "pool-in.jsonl")
    with open(path_in, "w") as f:
        f.write(json.dumps(header) + "\n")
        f.write(json.dumps({"kind": "project", "path": "/bench/pool"}) + "\n")
        for i, t in enumerate(texts):
            rec = dict(base[i % len(base)], session=f"pool-{i // 200:05d}", project="/bench/pool",
                       turn=i % 200, part=0, parts=1, turn_uuid=f"p-{i}", line_uuids=[f"p-{i}"],
                       text=t)
            rec.pop("vectors", None)
            f.write(json.dumps(rec) + "\n")
        for s in range(0, len(texts), 200):
            f.write(json.dumps({"kind": "session", "id": f"pool-{s // 200:05d}",
                                "project": "/bench/pool", "turns": min(200, len(texts) - s),
                                "updated_at": 0}) + "\n")
        f.write(json.dumps({"kind": "trailer", "counts": {
            "projects": 1, "tombstones": 0, "chunks": len(texts), "turn_links": 0,
            "sessions": (len(texts) + 199) // 200, "swap_outputs": 0, "memory_files": 0,
            "vectors": 0}}) + "\n")
    run([memctl, "import", "--quiet", path_in], src)
    run([memctl, "embed-pending"], src)
    out = os.path.join(tmp, "pool-out.jsonl")
    run([memctl, "export", "--vectors", "--all-projects", "--out", out], src)
    vecs = [decode(r) for r in map(json.loads, open(out))
            if r["kind"] == "chunk" and r.get("vectors")]
    return vecs + [decode(b) for b in base]


def decode(rec):
    b = base64.b64decode(rec["vectors"][0]["f32le"])
    return struct.unpack(f"<{len(b) // 4}f", b)


def vocabulary(rng, base):
    """Sample words by frequency (most frequent first), then seeded pseudo-words."""
    counts = {}
    for r in base:
        for w in r["text"].split():
            w = w.strip(".,:;()[]{}`'\"!?").lower()
            if w.isalpha() and 2 <= len(w) <= 14:
                counts[w] = counts.get(w, 0) + 1
    words = sorted(counts, key=lambda w: (-counts[w], w))
    seen = set(words)
    consonants, vowels = "bcdfghjklmnprstvwz", "aeiou"
    target = len(words) + PSEUDO_WORDS
    while len(words) < target:
        n = rng.randint(2, 4)
        w = "".join(rng.choice(consonants) + rng.choice(vowels) for _ in range(n))
        if rng.random() < 0.3:
            w += rng.choice("nrst")
        if w not in seen:
            seen.add(w)
            words.append(w)
    cum = list(itertools.accumulate(1.0 / (r + 2) for r in range(len(words))))
    return words, cum


def identifier(rng, pick):
    a, b = pick(2)
    style = rng.randrange(4)
    if style == 0:
        return f"{a}_{b}"
    if style == 1:
        return a + b[:1].upper() + b[1:]
    if style == 2:
        return f"{a[:1].upper()}{a[1:]}::{b}"
    return f"{a}_{b}_{rng.randrange(100)}"


def path(rng, pick):
    a, b, c = pick(3)
    ext = rng.choice(["rs", "py", "ts", "go", "md", "toml"])
    return rng.choice([f"src/{a}/{b}.{ext}", f"{a}/{b}_{c}.{ext}", f"tests/test_{a}.{ext}",
                       f"engine/src/{a}/{b}/{c}.{ext}"])


def error_line(rng, ident, where):
    line = rng.randint(1, 900)
    return rng.choice([
        f"error[E0{rng.randint(100, 799)}]: cannot find value `{ident}` in this scope\n"
        f"  --> {where}:{line}:{rng.randint(1, 80)}",
        f"Traceback (most recent call last):\n  File \"{where}\", line {line}, in {ident}\n"
        f"KeyError: '{ident}'",
        f"TypeError: Cannot read properties of undefined (reading '{ident}')\n"
        f"    at {where}:{line}",
        f"thread 'main' panicked at {where}:{line}: called `Option::unwrap()` on a `None` value",
    ])


def chunk_text(rng, base_text, pick, i):
    words = base_text.split()
    n = rng.randint(20, 60)
    start = rng.randrange(max(1, len(words) - n))
    parts = [" ".join(words[start:start + n]), " ".join(pick(rng.randint(30, 150)))]
    idents = [identifier(rng, pick) for _ in range(rng.randint(0, 3))]
    paths = [path(rng, pick) for _ in range(rng.randint(0, 2))]
    if idents or paths:
        parts.append("touching " + ", ".join(f"`{x}`" for x in idents + paths))
    if rng.random() < 0.2:
        ident = idents[0] if idents else identifier(rng, pick)
        parts.append(error_line(rng, ident, paths[0] if paths else path(rng, pick)))
    parts.append(f"(note {i})")
    return "\n".join(parts)


def unit(v):
    n = sum(x * x for x in v) ** 0.5 or 1.0
    return [x / n for x in v]


def noisy_vector(rng, rec, sigma=0.35):
    b = base64.b64decode(rec["vectors"][0]["f32le"])
    v = struct.unpack(f"<{len(b) // 4}f", b)
    w = unit([x + rng.gauss(0.0, sigma / DIMS**0.5) for x in v])
    return base64.b64encode(struct.pack(f"<{len(w)}f", *w)).decode()


def mixed_vectors(seed, pool, sigma=0.1, block=10000):
    """Endless base64 f32le vectors: each a mix of 3 pool vectors (weights -ln u) plus
    Gaussian noise of norm `sigma`, renormalised; numpy, seeded apart from the text's draws."""
    try:
        import numpy as np
    except ImportError:
        sys.exit("gen_scale_store: --vectors mixed needs numpy (run it with .cache/venv/bin/python)")
    rng = np.random.default_rng(seed)
    pool = np.asarray(pool, dtype=np.float64)
    while True:
        picks = rng.integers(0, len(pool), size=(block, 3))
        w = rng.exponential(size=(block, 3))
        v = np.einsum("bk,bkd->bd", w, pool[picks])
        v /= np.linalg.norm(v, axis=1, keepdims=True)
        v += rng.normal(0.0, sigma / DIMS**0.5, size=v.shape)
        v /= np.linalg.norm(v, axis=1, keepdims=True)
        for row in v.astype("<f4"):
            yield base64.b64encode(row.tobytes()).decode()


def write_file(a, rng, header, base, out_path, pool=None):
    words, cum = vocabulary(rng, base)

    def pick(k):
        return rng.choices(words, cum_weights=cum, k=k)

    sessions = {}
    written = 0
    mixed = mixed_vectors(a.seed, pool) if a.vectors == "mixed" else None
    with open(out_path, "w") as f:
        f.write(json.dumps(dict(header, scope=[f"gen_scale_store seed {a.seed}"])) + "\n")
        f.write(json.dumps({"kind": "project", "path": PROJECT}) + "\n")
        for i in range(a.chunks):
            b = base[i % len(base)]
            sid = f"scale-{i // TURNS_PER_SESSION:07d}"
            rec = dict(b, session=sid, project=PROJECT, turn=i % TURNS_PER_SESSION, part=0,
                       parts=1, turn_uuid=f"s-{i}", line_uuids=[f"s-{i}"],
                       text=chunk_text(rng, b["text"], pick, i))
            rec.pop("vectors", None)
            if a.vectors == "model":
                rec["vectors"] = [{"embedder": b["vectors"][0]["embedder"],
                                   "f32le": noisy_vector(rng, b)}]
            elif a.vectors == "mixed":
                rec["vectors"] = [{"embedder": b["vectors"][0]["embedder"],
                                   "f32le": next(mixed)}]
            if i < a.resume_from:
                continue  # drawn all the same: the later chunks stay what they were
            sessions[sid] = sessions.get(sid, 0) + 1
            written += 1
            f.write(json.dumps(rec) + "\n")
        for sid, turns in sessions.items():
            f.write(json.dumps({"kind": "session", "id": sid, "project": PROJECT,
                                "turns": turns, "updated_at": 0}) + "\n")
        f.write(json.dumps({"kind": "trailer", "counts": {
            "projects": 1, "tombstones": 0, "chunks": written, "turn_links": 0,
            "sessions": len(sessions), "swap_outputs": 0, "memory_files": 0,
            "vectors": written if a.vectors != "none" else 0}}) + "\n")
    return len(words)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--chunks", type=int, required=True)
    ap.add_argument("--out", required=True, help="data dir to create (must not exist)")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--vectors", choices=["none", "model", "mixed"], default="none")
    ap.add_argument("--pool", default=os.path.join(REPO, "../shared/bench/locomo/data/locomo10.json"),
                    help="LoCoMo-format JSON whose turns the model embeds (--vectors mixed)")
    ap.add_argument("--bin", default=os.path.join(REPO, "target/release"))
    ap.add_argument("--keep-jsonl", action="store_true")
    ap.add_argument("--resume-from", type=int, default=0, metavar="I",
                    help="finish an import that stopped (e.g. a full disk): write only chunks "
                         "I.. into the existing --out (same --seed and --chunks)")
    a = ap.parse_args()
    print(f"gen_scale_store: seed {a.seed}, {a.chunks} chunks, vectors {a.vectors}",
          file=sys.stderr)
    memctl = os.path.join(a.bin, "memctl")
    if not os.path.exists(memctl):
        sys.exit(f"{memctl} not found: cargo build --release -p memctl-cli")
    if os.path.exists(a.out) != (a.resume_from > 0):
        sys.exit(f"{a.out}: a new directory, or an existing one with --resume-from")
    rng = random.Random(a.seed)
    tmp = tempfile.mkdtemp(prefix="memctl-gen-scale.")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMCTL_")}
    env["XDG_CONFIG_HOME"] = os.path.join(tmp, "no-config")
    for k in ("MEMCTL_MODEL_DIR",):
        if k in os.environ:
            env[k] = os.environ[k]
    try:
        header, base = base_records(memctl, env, tmp, a.vectors)
        pool = None
        if a.vectors == "mixed":
            pool = pool_vectors(memctl, env, tmp, header, base, pool_texts(a.pool))
            print(f"gen_scale_store: a pool of {len(pool)} model vectors", file=sys.stderr)
        jsonl = a.out + ".jsonl" if a.keep_jsonl else os.path.join(tmp, "gen.jsonl")
        t0 = time.monotonic()
        vocab = write_file(a, rng, header, base, jsonl, pool)
        gen_s = time.monotonic() - t0
        ienv = dict(env, MEMCTL_HOME=a.out)
        if a.vectors == "none":
            ienv["MEMCTL_EMBEDDER"] = "hash"
        t0 = time.monotonic()
        run([memctl, "import", "--quiet", jsonl], ienv)
        import_s = time.monotonic() - t0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(json.dumps({"chunks": a.chunks, "project": PROJECT, "seed": a.seed, "vocab": vocab,
                      "vectors": a.vectors, "generate_s": round(gen_s, 1),
                      "import_s": round(import_s, 1)}))


if __name__ == "__main__":
    main()
