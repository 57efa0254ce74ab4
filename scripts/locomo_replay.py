#!/usr/bin/env python3
"""Offline replay of memctl's hybrid fusion on LoCoMo, for trying second stages cheaply.

  locomo_replay.py OUT_DIR            (OUT_DIR: a scripts/locomo.sh work dir, e.g. .cache/locomo)

Needs OUT_DIR/hyb200.jsonl, the candidate pool with both raw scores for every candidate:
  MEMCTL_HOME=OUT_DIR/home memctl search --queries OUT_DIR/queries.jsonl --mode hybrid \\
      --k 200 --json > OUT_DIR/hyb200.jsonl
(k = 200 asks 800 candidates per retriever: every chunk of a LoCoMo conversation, ~300, so each
result carries its cosine and, when it matches a query term, its BM25.) `fuse` below is a port
of engine/src/search.rs `fuse_completed`; with `complete=False, n=50` it reproduces the
engine's hybrid at k = 10 before the completion. Line vectors (for the passage-level stage)
are embedded here with the repo's fp32 MiniLM ($MEMCTL_MODEL_DIR) and cached in OUT_DIR.
Python: the project venv (numpy, onnxruntime, tokenizers).
"""
import collections
import importlib.util
import json
import math
import os
import sys

import numpy as np

REF = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "bench",
                   "locomo", "reference_eval.py")
DEFAULT = (0.9, 0.15, 0.2, 0.15, 0.05, 0.25, 0.5)  # FusionParams::default()


def embed(texts, model_dir):
    import onnxruntime as ort
    from tokenizers import Tokenizer
    tok = Tokenizer.from_file(os.path.join(model_dir, "tokenizer.json"))
    tok.enable_truncation(256)
    tok.no_padding()
    sess = ort.InferenceSession(os.path.join(model_dir, "model.onnx"))
    names = [i.name for i in sess.get_inputs()]
    out = [None] * len(texts)
    order = np.argsort([len(t) for t in texts])
    for i in range(0, len(texts), 32):
        idx = order[i:i + 32]
        encs = tok.encode_batch([texts[j] for j in idx])
        width = max(len(e.ids) for e in encs)
        ids = np.zeros((len(encs), width), np.int64)
        mask = np.zeros_like(ids)
        for r, e in enumerate(encs):
            ids[r, :len(e.ids)] = e.ids
            mask[r, :len(e.ids)] = 1
        feed = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in names:
            feed["token_type_ids"] = np.zeros_like(ids)
        h = sess.run(None, feed)[0]
        v = (h * mask[:, :, None]).sum(1) / mask.sum(1, keepdims=True)
        v /= np.linalg.norm(v, axis=1, keepdims=True)
        for r, j in enumerate(idx):
            out[j] = v[r]
    return np.stack(out).astype(np.float32)


def cached(path, make):
    if not os.path.exists(path):
        np.save(path, make())
    return np.load(path)


def ramp(x, lo, hi):
    if hi > lo:
        return min(1.0, max(0.0, (x - lo) / (hi - lo)))
    return float(x >= hi)


def fuse(cands, p=DEFAULT, n=50, complete=True, key="cosine"):
    """Ranking and fused scores of one query's pool (the engine's fuse_completed)."""
    lmax, lmin, dfloor, cfloor, mlo, mhi, trust = p
    dense = sorted(cands, key=lambda c: -c[key])[:n]
    lex = sorted([c for c in cands if c.get("lexical") is not None],
                 key=lambda c: -c["lexical"])[:n]
    ids = {c["id"] for c in dense}
    extra = [c for c in lex if c["id"] not in ids] if complete else []
    top = [c[key] for c in dense[:10]]
    margin = max(0.0, top[0] - sum(top) / len(top)) if len(top) >= 2 else 0.0
    cov = lex[0]["coverage"] if lex else 0.0
    w = (lmin + (lmax - lmin) * math.sqrt(ramp(min(max(cov, 0.0), 1.0), cfloor, 1.0)))
    w = min(max(w * (1 - trust * ramp(margin, mlo, mhi)), 0.0), 1.0) if lex else 0.0
    floor = min([dfloor] + [c[key] for c in dense])
    dmax = max([floor] + [c[key] for c in dense])
    lx = max([0.0] + [c["lexical"] for c in lex])
    sc = collections.defaultdict(float)
    for c in dense + extra:
        sc[c["id"]] += (1 - w) * min(1.0, max(0.0, (c[key] - floor) / max(dmax - floor, 1e-6)))
    for c in lex:
        sc[c["id"]] += w * (c["lexical"] / lx if lx > 0 else 0.0)
    by = {c["id"]: c for c in cands}
    order = sorted(sc, key=lambda i: (-sc[i], -by[i][key], -(by[i].get("lexical") or -1e9), i))
    return [by[i] for i in order], sc


def neighbours(cands, lam, **kw):
    """Each turn also gets `lam` × the best fused score of the turns just before and after it in
    its session (the answer often sits in the reply chunk next to the one naming the topic)."""
    order, sc = fuse(cands, **kw)
    at = {(c["session_id"], c["turn_index"]): sc.get(c["id"], 0.0) for c in cands}
    new = {c["id"]: sc.get(c["id"], 0.0) + lam * max(
        at.get((c["session_id"], c["turn_index"] + d), 0.0) for d in (-1, 1)) for c in cands}
    return sorted(cands, key=lambda c: -new[c["id"]])


def main(argv):
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    out = argv[1]
    spec = importlib.util.spec_from_file_location("ref", os.environ.get("LOCOMO_REFERENCE", REF))
    ref = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ref)
    data = os.path.join(out, "data")
    mapping = [json.loads(x) for x in open(os.path.join(data, "mapping.jsonl"), encoding="utf-8")]
    queries = [json.loads(x) for x in open(os.path.join(data, "queries.jsonl"), encoding="utf-8")]
    session = {m["uuid"]: m["session_id"] for m in mapping}
    line_at = {m["uuid"]: i for i, m in enumerate(mapping)}
    q_at = {q["qid"]: i for i, q in enumerate(queries)}
    model = os.environ["MEMCTL_MODEL_DIR"]
    lv = cached(os.path.join(out, "replay_lines.npy"), lambda: embed([m["text"] for m in mapping], model))
    qv = cached(os.path.join(out, "replay_queries.npy"), lambda: embed([q["question"] for q in queries], model))
    pool = {}
    for x in open(os.path.join(out, "hyb200.jsonl"), encoding="utf-8"):
        r = json.loads(x)
        for c in r["results"]:
            sims = [float(lv[line_at[u]] @ qv[q_at[r["qid"]]]) for u in c["line_uuids"] if u in line_at]
            c["maxsim"] = max(sims) if sims else c["cosine"]
            c["mix"] = 0.5 * c["cosine"] + 0.5 * c["maxsim"]
        pool[r["qid"]] = r["results"]

    def row(label, rank):
        met = ref.score(queries, {q: [c["line_uuids"] for c in rank(cs)] for q, cs in pool.items()}, session)
        o, t = met["overall"], met["temporal"]
        print(f"| {label} | " + " | ".join(f"{o[f'turn_recall@{k}']:.3f}" for k in (1, 5, 10))
              + f" | {o['session_recall@5']:.3f} | {t['turn_recall@5']:.3f} |", flush=True)

    print("| variant | turn R@1 | turn R@5 | turn R@10 | sess R@5 | temporal R@5 |")
    print("|---|---|---|---|---|---|")
    row("lexical", lambda cs: sorted([c for c in cs if c.get("lexical") is not None], key=lambda c: -c["lexical"]))
    row("dense (chunk vector)", lambda cs: sorted(cs, key=lambda c: -c["cosine"]))
    row("dense, max over line vectors", lambda cs: sorted(cs, key=lambda c: -c["maxsim"]))
    row("dense, ½ chunk + ½ best line", lambda cs: sorted(cs, key=lambda c: -c["mix"]))
    row("hybrid before (no completion)", lambda cs: fuse(cs, complete=False)[0])
    row("hybrid, completed (shipped)", lambda cs: fuse(cs)[0])
    for floor in (0.1, 0.0):
        p = DEFAULT[:2] + (floor,) + DEFAULT[3:]
        row(f"hybrid, completed, dense_floor {floor}", lambda cs, p=p: fuse(cs, p=p)[0])
    row("hybrid, completed, dense = ½ chunk + ½ best line", lambda cs: fuse(cs, key="mix")[0])
    for lam in (0.15, 0.3):
        row(f"hybrid, completed, + {lam} × best neighbour turn", lambda cs, lam=lam: neighbours(cs, lam))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
