#!/usr/bin/env python3
"""Build an fp32 ONNX graph of all-MiniLM-L6-v2 from model.safetensors, without torch.

    export_onnx.py --safetensors model.safetensors --out model.onnx
    export_onnx.py --verify --model model.onnx --tokenizer tokenizer.json \
        --safetensors model.safetensors [--int8 int8/model.onnx]

Graph: inputs input_ids / attention_mask / token_type_ids (int64 [batch, seq]),
output last_hidden_state (float32 [batch, seq, 384]). Pooling (mean over the
attention mask, then L2 normalisation) is left to the caller.

The export is byte-deterministic (same safetensors + same onnx version -> same
bytes); scripts/setup.sh pins the resulting sha256 in models/manifest.toml.

--verify runs an independent float64 numpy forward pass (no ORT) on a padded
batch of sentences and compares it with onnxruntime's output of the exported
model (max abs diff < 1e-4), and compares pooled embeddings with the int8
model (mean cosine >= 0.999, every sentence >= 0.995). Exits non-zero on failure.
"""
from __future__ import annotations

import argparse
import math
import sys

import numpy as np

# BERT config of all-MiniLM-L6-v2 (config.json of the source package).
LAYERS = 6
HIDDEN = 384
HEADS = 12
HEAD_DIM = HIDDEN // HEADS
INTERMEDIATE = 1536
LN_EPS = 1e-12
VOCAB = 30522
MAX_POS = 512
OPSET = 17
MAX_TOKENS = 256  # sentence-transformers max_seq_length

MASK_NEG = float(np.finfo(np.float32).min)  # additive mask value (as in HF BERT)


def load_weights(path: str) -> dict[str, np.ndarray]:
    from safetensors.numpy import load_file

    raw = load_file(path)
    # Some exports carry a "bert." prefix; normalise to the bare names.
    w = {(k[5:] if k.startswith("bert.") else k): v for k, v in raw.items()}
    assert w["embeddings.word_embeddings.weight"].shape == (VOCAB, HIDDEN)
    assert w["embeddings.position_embeddings.weight"].shape == (MAX_POS, HIDDEN)
    assert w[f"encoder.layer.{LAYERS - 1}.output.dense.weight"].shape == (HIDDEN, INTERMEDIATE)
    assert f"encoder.layer.{LAYERS}.output.dense.weight" not in w
    for k, v in w.items():
        if k != "embeddings.position_ids":
            assert v.dtype == np.float32, (k, v.dtype)
    return w


# --------------------------------------------------------------------------- export


def build_model(w: dict[str, np.ndarray]):
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    inits: list = []
    nodes: list = []
    counter = [0]

    def init(name: str, arr: np.ndarray) -> str:
        inits.append(numpy_helper.from_array(np.ascontiguousarray(arr), name))
        return name

    def node(op: str, inputs: list[str], **attrs) -> str:
        counter[0] += 1
        out = f"{op.lower()}_{counter[0]}"
        nodes.append(helper.make_node(op, inputs, [out], name=f"{op}_{counter[0]}", **attrs))
        return out

    def linear(x: str, prefix: str) -> str:
        # torch Linear weight is [out, in]; MatMul wants [in, out].
        wt = init(prefix + ".weight", w[prefix + ".weight"].T)
        b = init(prefix + ".bias", w[prefix + ".bias"])
        return node("Add", [node("MatMul", [x, wt]), b])

    def layer_norm(x: str, prefix: str) -> str:
        g = init(prefix + ".weight", w[prefix + ".weight"])
        b = init(prefix + ".bias", w[prefix + ".bias"])
        return node("LayerNormalization", [x, g, b], axis=-1, epsilon=LN_EPS)

    # constants
    c_one_f = init("const_one_f", np.array(1.0, np.float32))
    c_half = init("const_half", np.array(0.5, np.float32))
    c_sqrt2 = init("const_sqrt2", np.array(math.sqrt(2.0), np.float32))
    c_scale = init("const_attn_scale", np.array(1.0 / math.sqrt(HEAD_DIM), np.float32))
    c_mask_neg = init("const_mask_neg", np.array(MASK_NEG, np.float32))
    c_zero_1d = init("const_zero_1d", np.array([0], np.int64))
    c_one_1d = init("const_one_1d", np.array([1], np.int64))
    c_two_1d = init("const_two_1d", np.array([2], np.int64))
    c_axes_12 = init("const_axes_1_2", np.array([1, 2], np.int64))
    c_heads_shape = init("const_heads_shape", np.array([0, 0, HEADS, HEAD_DIM], np.int64))
    c_hidden_shape = init("const_hidden_shape", np.array([0, 0, HIDDEN], np.int64))

    # embeddings: word + token_type + position (position table sliced to seq len;
    # no Gather over Range, which ORT's optimizer rewrites into a failing Slice)
    word = init("embeddings.word_embeddings.weight", w["embeddings.word_embeddings.weight"])
    ttype = init("embeddings.token_type_embeddings.weight", w["embeddings.token_type_embeddings.weight"])
    pos = init("embeddings.position_embeddings.weight", w["embeddings.position_embeddings.weight"])
    shape = node("Shape", ["input_ids"])
    seq_len = node("Slice", [shape, c_one_1d, c_two_1d, c_zero_1d])  # [seq]
    pos_emb = node("Slice", [pos, c_zero_1d, seq_len, c_zero_1d])  # [seq, H]
    x = node("Add", [node("Gather", [word, "input_ids"], axis=0), node("Gather", [ttype, "token_type_ids"], axis=0)])
    x = node("Add", [x, pos_emb])
    x = layer_norm(x, "embeddings.LayerNorm")

    # additive attention mask [batch, 1, 1, seq]: 0 where attended, float32 min where masked
    mask_f = node("Cast", ["attention_mask"], to=TensorProto.FLOAT)
    mask_bias = node("Mul", [node("Sub", [c_one_f, mask_f]), c_mask_neg])
    mask_bias = node("Unsqueeze", [mask_bias, c_axes_12])

    for i in range(LAYERS):
        p = f"encoder.layer.{i}"
        q = node("Transpose", [node("Reshape", [linear(x, p + ".attention.self.query"), c_heads_shape])], perm=[0, 2, 1, 3])
        k = node("Transpose", [node("Reshape", [linear(x, p + ".attention.self.key"), c_heads_shape])], perm=[0, 2, 3, 1])
        v = node("Transpose", [node("Reshape", [linear(x, p + ".attention.self.value"), c_heads_shape])], perm=[0, 2, 1, 3])
        scores = node("Add", [node("Mul", [node("MatMul", [q, k]), c_scale]), mask_bias])
        probs = node("Softmax", [scores], axis=-1)
        ctx = node("Transpose", [node("MatMul", [probs, v])], perm=[0, 2, 1, 3])
        ctx = node("Reshape", [ctx, c_hidden_shape])
        attn = linear(ctx, p + ".attention.output.dense")
        x = layer_norm(node("Add", [attn, x]), p + ".attention.output.LayerNorm")
        h = linear(x, p + ".intermediate.dense")
        # exact GELU: 0.5 * h * (1 + erf(h / sqrt(2)))
        h = node("Mul", [node("Mul", [h, c_half]), node("Add", [node("Erf", [node("Div", [h, c_sqrt2])]), c_one_f])])
        o = linear(h, p + ".output.dense")
        x = layer_norm(node("Add", [o, x]), p + ".output.LayerNorm")

    nodes.append(helper.make_node("Identity", [x], ["last_hidden_state"], name="output"))

    dyn = ["batch", "sequence"]
    inputs = [helper.make_tensor_value_info(n, TensorProto.INT64, dyn) for n in ("input_ids", "attention_mask", "token_type_ids")]
    outputs = [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, dyn + [HIDDEN])]
    graph = helper.make_graph(nodes, "all-MiniLM-L6-v2", inputs, outputs, initializer=inits)
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", OPSET)],
        producer_name="memctl/scripts/export_onnx.py",
        producer_version="1",
    )
    model.ir_version = 8  # ONNX 1.13+ / ORT >= 1.14 (keep it loadable by older runtimes)
    onnx.checker.check_model(model, full_check=True)
    return model


def export(safetensors: str, out: str) -> None:
    import os

    w = load_weights(safetensors)
    model = build_model(w)
    data = model.SerializeToString(deterministic=True)
    tmp = out + ".tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, out)
    print(f"export: wrote {out} ({len(data)} bytes, {len(model.graph.node)} nodes, opset {OPSET})")


# --------------------------------------------------------------------------- verify

# numpy has no erf; math.erf is exact to double precision (~1 s for the verify batch).
def _erf(x: np.ndarray) -> np.ndarray:
    flat = x.ravel()
    return np.fromiter((math.erf(v) for v in flat), dtype=np.float64, count=flat.size).reshape(x.shape)


def _ln(x: np.ndarray, g: np.ndarray, b: np.ndarray) -> np.ndarray:
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + LN_EPS) * g + b


def numpy_forward(w: dict[str, np.ndarray], ids: np.ndarray, mask: np.ndarray, tt: np.ndarray) -> np.ndarray:
    """Independent float64 reference of BertModel's last_hidden_state."""
    W = {k: v.astype(np.float64) for k, v in w.items() if k != "embeddings.position_ids"}
    for k in list(W):
        if W[k].ndim == 2 and k.startswith("encoder."):
            W[k] = np.ascontiguousarray(W[k].T)  # [in, out]
    bsz, seq = ids.shape
    x = W["embeddings.word_embeddings.weight"][ids] + W["embeddings.token_type_embeddings.weight"][tt]
    x = x + W["embeddings.position_embeddings.weight"][np.arange(seq)][None]
    x = _ln(x, W["embeddings.LayerNorm.weight"], W["embeddings.LayerNorm.bias"])
    bias = np.where(mask[:, None, None, :] > 0, 0.0, MASK_NEG)

    def lin(t, p):  # 2-D matmuls so numpy uses BLAS
        return (t.reshape(bsz * seq, -1) @ W[p + ".weight"]).reshape(bsz, seq, -1) + W[p + ".bias"]

    def heads(t):
        return np.ascontiguousarray(t.reshape(bsz, seq, HEADS, HEAD_DIM).transpose(0, 2, 1, 3))

    for i in range(LAYERS):
        p = f"encoder.layer.{i}"
        q, k, v = (heads(lin(x, f"{p}.attention.self.{n}")) for n in ("query", "key", "value"))
        # per (batch, head) 2-D matmuls: numpy's stacked matmul does not use BLAS
        s = np.stack([np.stack([q[b, h] @ k[b, h].T for h in range(HEADS)]) for b in range(bsz)])
        s = s / math.sqrt(HEAD_DIM) + bias
        s = s - s.max(-1, keepdims=True)
        pr = np.exp(s)
        pr = pr / pr.sum(-1, keepdims=True)
        ctx = np.stack([np.stack([pr[b, h] @ v[b, h] for h in range(HEADS)]) for b in range(bsz)])
        ctx = ctx.transpose(0, 2, 1, 3).reshape(bsz, seq, HIDDEN)
        x = _ln(lin(ctx, p + ".attention.output.dense") + x, W[p + ".attention.output.LayerNorm.weight"], W[p + ".attention.output.LayerNorm.bias"])
        h = lin(x, p + ".intermediate.dense")
        h = 0.5 * h * (1.0 + _erf(h / math.sqrt(2.0)))
        x = _ln(lin(h, p + ".output.dense") + x, W[p + ".output.LayerNorm.weight"], W[p + ".output.LayerNorm.bias"])
    return x


def pool(hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
    m = mask[..., None].astype(hidden.dtype)
    e = (hidden * m).sum(1) / np.maximum(m.sum(1), 1e-9)
    return e / np.maximum(np.linalg.norm(e, axis=-1, keepdims=True), 1e-12)


VERIFY_SENTENCES = [
    "hello",
    "The quick brown fox jumps over the lazy dog.",
    "error[E0502]: cannot borrow `self.index` as mutable because it is also borrowed as immutable --> engine/src/store.rs:142:9",
    "Run `cargo test -p memctl-engine` after editing Cargo.toml; the hook reads $CLAUDE_PROJECT_DIR/.memctl/config.toml.",
    "Zürich café — naïve façade, 東京タワー, emoji 🚀 and math ∑ x² ≤ ∞",
    "Memory engines for coding agents keep short notes about decisions, failures and fixes so that later sessions "
    "can retrieve them by meaning rather than by exact keywords.",
    "def embed(texts: list[str]) -> np.ndarray:  # returns L2-normalised float32 vectors",
    " ".join(["Long input to exercise truncation at two hundred and fifty six tokens, repeated many times."] * 30),
    "a",
    "Why did the build fail? Because libonnxruntime.so.1.31.1 was not found in ORT_DYLIB_PATH.",
]


def load_tokenizer(path: str):
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(path)
    tok.enable_truncation(max_length=MAX_TOKENS)
    tok.no_padding()
    return tok


def encode_batch(tok, texts: list[str]):
    encs = tok.encode_batch(texts)
    seq = max(len(e.ids) for e in encs)
    ids = np.zeros((len(encs), seq), np.int64)
    mask = np.zeros_like(ids)
    tt = np.zeros_like(ids)
    for i, e in enumerate(encs):
        n = len(e.ids)
        ids[i, :n] = e.ids
        mask[i, :n] = e.attention_mask
        tt[i, :n] = e.type_ids
    return ids, mask, tt


def ort_session(path: str, opt_level=None):
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    if opt_level is not None:
        so.graph_optimization_level = opt_level
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])


def run(sess, ids, mask, tt) -> np.ndarray:
    return sess.run(["last_hidden_state"], {"input_ids": ids, "attention_mask": mask, "token_type_ids": tt})[0]


def verify(model: str, tokenizer: str, safetensors: str, int8: str | None, tol: float, min_cos: float,
           min_cos_any: float) -> bool:
    import onnxruntime as ort

    w = load_weights(safetensors)
    tok = load_tokenizer(tokenizer)
    ids, mask, tt = encode_batch(tok, VERIFY_SENTENCES)
    lens = mask.sum(1)
    print(f"verify: {len(VERIFY_SENTENCES)} sentences, padded batch {ids.shape}, token lengths {lens.tolist()}")
    ref = numpy_forward(w, ids, mask, tt)
    ok = True
    for label, lvl in (("ORT optimized (ENABLE_ALL)", ort.GraphOptimizationLevel.ORT_ENABLE_ALL),
                       ("ORT unoptimized (DISABLE_ALL)", ort.GraphOptimizationLevel.ORT_DISABLE_ALL)):
        out = run(ort_session(model, lvl), ids, mask, tt)
        assert out.shape == (len(VERIFY_SENTENCES), ids.shape[1], HIDDEN) and out.dtype == np.float32
        diff = np.abs(out.astype(np.float64) - ref)
        d_tok = float(diff[mask > 0].max())
        d_pad = float(diff[mask == 0].max()) if (mask == 0).any() else 0.0
        # Gate on real tokens. Padding positions are garbage that pooling ignores; their
        # states are larger and differ by up to ~8e-5 here, too close to tol to gate on.
        good = d_tok < tol
        ok &= good
        print(f"verify: numpy-vs-{label}: max abs diff last_hidden_state = {d_tok:.3e} on real tokens "
              f"{'OK' if good else 'FAIL'} (tol {tol:g}); on padding positions {d_pad:.3e} (not gated)")

    sess = ort_session(model)
    emb_batch = pool(run(sess, ids, mask, tt).astype(np.float64), mask)
    emb_ref = pool(ref, mask)
    # padded batch vs each sentence alone (no padding)
    single = []
    for s in VERIFY_SENTENCES:
        i1, m1, t1 = encode_batch(tok, [s])
        single.append(pool(run(sess, i1, m1, t1).astype(np.float64), m1)[0])
    single = np.stack(single)
    d_pad = float(np.abs(emb_batch - single).max())
    d_pool = float(np.abs(emb_batch - emb_ref).max())
    ok &= d_pad < tol and d_pool < tol
    print(f"verify: pooled embeddings: numpy-vs-ORT max abs diff {d_pool:.3e}; padded-batch-vs-single max abs diff {d_pad:.3e}")

    if int8:
        e8 = pool(run(ort_session(int8), ids, mask, tt).astype(np.float64), mask)
        cos = (e8 * emb_batch).sum(1)
        # int8 weight quantisation noise averages out over tokens: 1-3 token inputs
        # ("hello") land at ~0.998, real sentences at ~0.9994-0.9996.
        good = float(cos.mean()) >= min_cos and float(cos.min()) >= min_cos_any
        ok &= good
        print(f"verify: fp32-vs-int8 pooled cosine per sentence {[round(float(c), 5) for c in cos]}")
        print(f"verify: fp32-vs-int8 pooled cosine min {cos.min():.5f} mean {cos.mean():.5f} "
              f"{'OK' if good else 'FAIL'} (need mean >= {min_cos}, min >= {min_cos_any})")
    print("verify: " + ("PASSED" if ok else "FAILED"))
    return ok


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--safetensors", required=True)
    ap.add_argument("--out", help="write the exported model here")
    ap.add_argument("--verify", action="store_true")
    ap.add_argument("--model", help="exported model to verify (default: --out)")
    ap.add_argument("--tokenizer")
    ap.add_argument("--int8", help="int8 model.onnx to compare pooled embeddings with")
    ap.add_argument("--tol", type=float, default=1e-4)
    ap.add_argument("--min-cos", type=float, default=0.999, help="fp32-vs-int8 mean cosine floor")
    ap.add_argument("--min-cos-any", type=float, default=0.995, help="fp32-vs-int8 per-sentence cosine floor")
    a = ap.parse_args()
    if not a.out and not a.verify:
        ap.error("nothing to do: give --out and/or --verify")
    if a.out:
        export(a.safetensors, a.out)
    if a.verify:
        model = a.model or a.out
        if not model or not a.tokenizer:
            ap.error("--verify needs --model (or --out) and --tokenizer")
        if not verify(model, a.tokenizer, a.safetensors, a.int8, a.tol, a.min_cos, a.min_cos_any):
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
