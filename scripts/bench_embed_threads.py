#!/usr/bin/env python3
"""Bulk embedding throughput on real chunks: chunks/s and tokens/s on 1 and 2 threads, and the
padding fraction of the batches.

usage: bench_embed_threads.py <transcript.jsonl> <workdir> <rounds> <label>=<bin dir> ...
       [--threads 1,2] [--limit N]

Per label: an empty MEMCTL_HOME, one `memctl-hook UserPromptSubmit` first archive of the whole
transcript with the background embedder off, so every chunk waits for the model; that store is
kept as a template. Then, `rounds` times, for each thread count and each label (alternating, so
that a drifting machine bills every case alike): a fresh copy of the template and one whole
`memctl embed-pending --limit N` process with MEMCTL_EMBED_THREADS and MEMCTL_ORT_THREADS set to
the thread count (a build from before MEMCTL_EMBED_THREADS reads only the second), timed by
perf_counter around fork/exec+wait4. The time includes the model load (≈ 0.1–0.3 s of the run).

Padding: a build that prints `embed-pending --json` reports its own texts, real tokens and padded
cells. For the batching memctl used before (each round of 64 pending chunks sorted by bytes and
cut into fixed batches of 32), the script recomputes the padding from the chunk texts (from
`memctl export`) with a stdlib WordPiece tokenizer over the model's `tokenizer.json` (BERT
uncased: lower case, accents stripped, split on whitespace and punctuation, greedy longest
match, truncation at 256 with [CLS]/[SEP]); it also prints its estimate for the token-budget
plan, to check it against the binary's own count.

Prints one JSON line per (label, threads): chunks, tokens, wall seconds (median of the rounds),
chunks/s, tokens/s, padding fraction; then one line `"label": "padding"` with the two plans.
Stdlib only. MEMCTL_MODEL_DIR / ORT_DYLIB_PATH as for the binaries (source .cache/env.sh).
"""
import json, os, shutil, statistics, subprocess, sys, time, unicodedata
from benchlib import first_archive_env, remove_tree, require_model, write_ups_input

args = [a for a in sys.argv[1:]]
threads, limit = [1, 2], 100_000
if "--threads" in args:
    i = args.index("--threads")
    threads = [int(t) for t in args[i + 1].split(",")]
    del args[i:i + 2]
if "--limit" in args:
    i = args.index("--limit")
    limit = int(args[i + 1])
    del args[i:i + 2]
if len(args) < 4:
    sys.exit(__doc__)
transcript, workdir, rounds = os.path.abspath(args[0]), os.path.abspath(args[1]), int(args[2])
builds = [(l, os.path.abspath(d)) for l, d in (a.split("=", 1) for a in args[3:])]

session, inp = write_ups_input(workdir, transcript)


def env_for(home, t=None):
    e = first_archive_env(home, MEMCTL_RESIDENT="0")
    if t is not None:
        e["MEMCTL_EMBED_THREADS"] = str(t)
        e["MEMCTL_ORT_THREADS"] = str(t)
    return e


def run(argv, env, stdin=None):
    r = subprocess.run(argv, env=env, cwd=workdir, stdin=stdin, capture_output=True)
    if r.returncode != 0:
        sys.exit(f"{argv} failed: {r.stderr.decode(errors='replace')[-800:]}")
    return r.stdout.decode()


templates = {}
for label, bindir in builds:
    require_model(os.path.join(bindir, "memctl"), os.environ, "bench_embed_threads")
for label, bindir in builds:
    home = os.path.join(workdir, "template-" + label)
    remove_tree(home)
    with open(inp, "rb") as fin:
        run([os.path.join(bindir, "memctl-hook"), "UserPromptSubmit"], env_for(home), stdin=fin)
    templates[label] = home

res = {}
for _ in range(rounds):
    for t in threads:
        for label, bindir in builds:
            home = os.path.join(workdir, "run-" + label)
            remove_tree(home)
            shutil.copytree(templates[label], home)
            argv = [os.path.join(bindir, "memctl"), "embed-pending", "--limit", str(limit)]
            help_text = run([os.path.join(bindir, "memctl"), "embed-pending", "--help"], env_for(home))
            if "--json" in help_text:
                argv.append("--json")
            t0 = time.perf_counter()
            out = run(argv, env_for(home, t))
            wall = time.perf_counter() - t0
            doc = {}
            try:
                doc = json.loads(out)
            except ValueError:
                words = out.split()
                doc = {"chunks": int(words[1])} if len(words) > 1 and words[1].isdigit() else {}
            res.setdefault((label, t), []).append((wall, doc))

for t in threads:
    for label, _ in builds:
        runs = res[(label, t)]
        wall = statistics.median(w for w, _ in runs)
        doc = runs[0][1]
        chunks = doc.get("chunks")
        tokens = doc.get("tokens")
        print(json.dumps({
            "label": label, "transcript": os.path.basename(transcript), "threads": t,
            "rounds": len(runs), "chunks": chunks, "tokens": tokens,
            "wall_s_median": round(wall, 2),
            "chunks_per_s": round(chunks / wall, 1) if chunks else None,
            "tokens_per_s": round(tokens / wall) if tokens else None,
            "padding_fraction": round(doc["padding_fraction"], 3) if "padding_fraction" in doc else None,
        }), flush=True)

# Padding of the earlier plan, recomputed from the texts (see the docstring).
model_dir = os.environ.get("MEMCTL_MODEL_DIR")
if not model_dir or not os.path.isfile(os.path.join(model_dir, "tokenizer.json")):
    sys.exit(0)
vocab = json.load(open(os.path.join(model_dir, "tokenizer.json"), encoding="utf-8"))["model"]["vocab"]


def is_punct(ch):
    cp = ord(ch)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(ch).startswith("P")


def count_tokens(text, max_len=256):
    text = unicodedata.normalize("NFD", text.lower())
    text = "".join(c for c in text if unicodedata.category(c) != "Mn")
    words, cur = [], ""
    for ch in text:
        cjk = 0x4E00 <= ord(ch) <= 0x9FFF
        if ch.isspace() or is_punct(ch) or cjk:
            if cur:
                words.append(cur)
            cur = ""
            if not ch.isspace():
                words.append(ch)
        elif unicodedata.category(ch) not in ("Cc", "Cf") or ch in "\t\n\r":
            cur += ch
    if cur:
        words.append(cur)
    n = 0
    for w in words:
        if len(w) > 100:
            n += 1
            continue
        start, pieces = 0, 0
        while start < len(w):
            end = len(w)
            while end > start:
                piece = w[start:end] if start == 0 else "##" + w[start:end]
                if piece in vocab:
                    break
                end -= 1
            if end == start:
                pieces = 1
                break
            pieces += 1
            start = end
        n += pieces
        if n >= max_len - 2:
            break
    return min(n, max_len - 2) + 2


label, bindir = builds[0]
export = os.path.join(workdir, "chunks.jsonl")
run([os.path.join(bindir, "memctl"), "export", "--all-projects", "-o", export], env_for(templates[label]))
texts = []
with open(export, encoding="utf-8") as fh:
    for line in fh:
        d = json.loads(line)
        if d.get("kind") == "chunk":
            texts.append(d.get("text", ""))
texts = texts[:limit]
lens = [count_tokens(t) for t in texts]


def cells_of(batches):
    return sum(len(b) * max(lens[i] for i in b) for b in batches)


# The engine's `TOKEN_BUDGET` (engine/src/embed/onnx.rs; 4,096 before 2026-11-26).
TOKEN_BUDGET = 512
before, after = [], []
for r0 in range(0, len(texts), 64):
    rnd = list(range(r0, min(r0 + 64, len(texts))))
    by_bytes = sorted(rnd, key=lambda i: len(texts[i].encode()))
    before += [by_bytes[i:i + 32] for i in range(0, len(by_bytes), 32)]
    cur = []
    for i in sorted(rnd, key=lambda i: lens[i]):
        if cur and (len(cur) >= 32 or (len(cur) + 1) * lens[i] > TOKEN_BUDGET):
            after.append(cur)
            cur = []
        cur.append(i)
    if cur:
        after.append(cur)
real = sum(lens)
print(json.dumps({
    "label": "padding", "transcript": os.path.basename(transcript), "chunks": len(texts),
    "tokens_estimated": real,
    "padding_fraction_bytes_sorted_fixed32": round(1 - real / cells_of(before), 3) if before else None,
    "padding_fraction_token_budget_estimated": round(1 - real / cells_of(after), 3) if after else None,
}), flush=True)
