#!/usr/bin/python3
"""LLM-shaped test models: decoder-only transformers with a KV cache, laid out as the
exporters people use write them, built by hand with python3-onnx 1.12 (issue 24).

  genai(layers)        onnxruntime-genai's builder (int4): inputs input_ids, attention_mask,
                       past_key_values.{i}.key/value; outputs logits, present.{i}.key/value;
                       /model/embed_tokens/Gather, the attention-mask subgraph
                       (/model/attn_mask_reformat/...: seqlens_k, total_sequence_length),
                       per layer SimplifiedLayerNormalization (layer 0) or
                       SkipSimplifiedLayerNormalization (the others, com.microsoft),
                       qkv_proj MatMulNBits, GroupQueryAttention (do_rotary, cos_cache /
                       sin_cache initializers), o_proj, post_attention_layernorm, the SiLU
                       MLP (gate_proj, up_proj, Sigmoid, Mul, Mul, down_proj as MatMulNBits);
                       /model/layers.{L}/final_norm_layernorm, /lm_head/MatMulNBits;
  optimum(layers)      Optimum's plain export: position_ids too, RMSNorm as Pow, ReduceMean,
                       Add, Sqrt, Div, Mul; separate q_proj/k_proj/v_proj MatMuls, rotary
                       embedding (Gather of cos/sin tables, Slice, Neg, Concat, Mul, Add),
                       Concat of the past and the new key/value (-> present.N.*), the
                       attention core MatMul, Div, Add mask, Softmax, MatMul;
  optimum_mha(layers)  the same with ORT's fused attention: MultiHeadAttention
                       (com.microsoft) taking past_key/past_value, giving present_key/value.

Node names are scoped like the real exports (/model/layers.0/attn/GroupQueryAttention),
weights are zeros (int4 weights packed), sizes small (hidden 128): the files stay small.

As a program: llm_models.py {genai,optimum,optimum-mha} OUT.onnx [--layers N] (default 32).
"""
import argparse
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

MS = "com.microsoft"
HIDDEN, HEADS, KV_HEADS, HEAD = 128, 4, 2, 32
INTER, VOCAB, MAX_LEN, BLOCK = 256, 512, 256, 32
FLOAT = TensorProto.FLOAT


class Builder:
    def __init__(self):
        self.nodes, self.inits, self.names = [], [], set()

    def init(self, name, arr):
        if name not in self.names:
            self.names.add(name)
            self.inits.append(numpy_helper.from_array(arr, name))
        return name

    def op(self, name, op_type, inputs, nout=1, domain=None, outs=None, **attrs):
        """A node called name (its scope path); outputs name/output_k unless given."""
        if outs is None:
            outs = ["%s/output_%d" % (name, k) for k in range(nout)]
        self.nodes.append(helper.make_node(op_type, inputs, outs, name=name, domain=domain,
                                           **attrs))
        return outs[0] if len(outs) == 1 else outs

    def nbits(self, scope, x, k, n):
        """MatMulNBits as the genai builder writes it: 4 bits, blocks of 32."""
        blocks = (k + BLOCK - 1) // BLOCK
        b = self.init(scope.replace("/", "_").strip("_") + ".qweight",
                      np.zeros((n, blocks, BLOCK // 2), np.uint8))
        s = self.init(scope.replace("/", "_").strip("_") + ".scales",
                      np.full((n * blocks,), 0.01, np.float32))
        return self.op(scope + "/MatMulNBits", "MatMulNBits", [x, b, s], domain=MS, K=k, N=n,
                       bits=4, block_size=BLOCK, accuracy_level=4)

    def matmul(self, scope, x, k, n):
        w = self.init(scope.replace("/", "_").strip("_") + ".weight",
                      np.zeros((k, n), np.float32))
        return self.op(scope + "/MatMul", "MatMul", [x, w])

    def const(self, name, arr):
        return self.init(name, np.asarray(arr))


def kv_shape(seq):
    return ["batch_size", KV_HEADS, seq, HEAD]


def cache_io(layers, heads, name_in="past_key_values", name_out="present"):
    ins, outs = [], []
    for i in range(layers):
        for kv in ("key", "value"):
            ins.append(helper.make_tensor_value_info("%s.%d.%s" % (name_in, i, kv), FLOAT,
                                                     ["batch_size", heads, "past_sequence_length",
                                                      HEAD]))
            outs.append(helper.make_tensor_value_info("%s.%d.%s" % (name_out, i, kv), FLOAT,
                                                      ["batch_size", heads,
                                                       "total_sequence_length", HEAD]))
    return ins, outs


def finish(b, name, inputs, outputs, opsets):
    g = helper.make_graph(b.nodes, name, inputs, outputs, b.inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid(d, v) for d, v in opsets],
                          producer_name="onnxviz-tests")
    m.ir_version = 8
    return m


def start(b, mask_len):
    """input_ids, attention_mask, logits, and the embedding Gather (its output)."""
    ids = helper.make_tensor_value_info("input_ids", TensorProto.INT64,
                                        ["batch_size", "sequence_length"])
    mask = helper.make_tensor_value_info("attention_mask", TensorProto.INT64,
                                         ["batch_size", mask_len])
    logits = helper.make_tensor_value_info("logits", FLOAT,
                                           ["batch_size", "sequence_length", VOCAB])
    emb = b.init("model.embed_tokens.weight", np.zeros((VOCAB, HIDDEN), np.float32))
    return ids, mask, logits, b.op("/model/embed_tokens/Gather", "Gather", [emb, "input_ids"])


def mlp(b, L, x, linear):
    """The SiLU MLP: down(silu(gate(x)) * up(x)), linear: Builder.nbits or .matmul."""
    gate = linear(L + "/mlp/gate_proj", x, HIDDEN, INTER)
    up = linear(L + "/mlp/up_proj", x, HIDDEN, INTER)
    sig = b.op(L + "/mlp/act_fn/Sigmoid", "Sigmoid", [gate])
    act = b.op(L + "/mlp/act_fn/Mul", "Mul", [gate, sig])
    prod = b.op(L + "/mlp/Mul", "Mul", [act, up])
    return linear(L + "/mlp/down_proj", prod, INTER, HIDDEN)


# ------------------------------------------------------------------------------ genai
def genai(layers=32):
    b = Builder()
    ids, mask, logits, x = start(b, "total_sequence_length")
    cin, cout = cache_io(layers, KV_HEADS)
    # the attention mask as GroupQueryAttention wants it
    s = "/model/attn_mask_reformat/attn_mask_subgraph"
    one = b.const("one_i64", np.array(1, np.int64))
    ax1 = b.const("axes_1", np.array([1], np.int64))
    rs = b.op(s + "/ReduceSum", "ReduceSum", ["attention_mask", ax1], keepdims=0)
    sub = b.op(s + "/Sub", "Sub", [rs, one])
    seqlens = b.op(s + "/Sub/Cast", "Cast", [sub], to=TensorProto.INT32)
    shp = b.op(s + "/Shape", "Shape", ["attention_mask"])
    tot = b.op(s + "/Gather", "Gather", [shp, b.const("idx_1", np.array(1, np.int64))], axis=0)
    total = b.op(s + "/Gather/Cast", "Cast", [tot], to=TensorProto.INT32)
    cos = b.init("cos_cache", np.zeros((MAX_LEN, HEAD // 2), np.float32))
    sin = b.init("sin_cache", np.zeros((MAX_LEN, HEAD // 2), np.float32))
    gamma = lambda n: b.init(n, np.ones((HIDDEN,), np.float32))  # noqa: E731
    residual, h = None, x
    for i in range(layers):
        L = "/model/layers.%d" % i
        if i == 0:
            normed = b.op(L + "/input_layernorm/LayerNorm", "SimplifiedLayerNormalization",
                          [h, gamma("model.layers.0.input_layernorm.weight")], axis=-1,
                          epsilon=1e-5, stash_type=1)
            residual = h
        else:
            normed, _, _, residual = b.op(
                L + "/input_layernorm/SkipLayerNorm", "SkipSimplifiedLayerNormalization",
                [h, residual, gamma("model.layers.%d.input_layernorm.weight" % i)], nout=4,
                domain=MS, epsilon=1e-5)
        qkv = b.nbits(L + "/attn/qkv_proj", normed, HIDDEN, HIDDEN + 2 * KV_HEADS * HEAD)
        attn, _, _ = b.op(L + "/attn/GroupQueryAttention", "GroupQueryAttention",
                          [qkv, "", "", "past_key_values.%d.key" % i,
                           "past_key_values.%d.value" % i, seqlens, total, cos, sin],
                          domain=MS, outs=[L + "/attn/GroupQueryAttention/output_0",
                                           "present.%d.key" % i, "present.%d.value" % i],
                          num_heads=HEADS, kv_num_heads=KV_HEADS, do_rotary=1,
                          rotary_interleaved=0, scale=float(HEAD) ** -0.5)
        o = b.nbits(L + "/attn/o_proj", attn, HIDDEN, HIDDEN)
        normed, _, _, residual = b.op(
            L + "/post_attention_layernorm/SkipLayerNorm", "SkipSimplifiedLayerNormalization",
            [o, residual, gamma("model.layers.%d.post_attention_layernorm.weight" % i)], nout=4,
            domain=MS, epsilon=1e-5)
        h = mlp(b, L, normed, b.nbits)
    final, _, _, _ = b.op("/model/layers.%d/final_norm_layernorm/SkipLayerNorm" % layers,
                          "SkipSimplifiedLayerNormalization",
                          [h, residual, gamma("model.norm.weight")], nout=4, domain=MS,
                          epsilon=1e-5)
    blocks = (HIDDEN + BLOCK - 1) // BLOCK
    b.op("/lm_head/MatMulNBits", "MatMulNBits",
         [final, b.init("lm_head.qweight", np.zeros((VOCAB, blocks, BLOCK // 2), np.uint8)),
          b.init("lm_head.scales", np.full((VOCAB * blocks,), 0.01, np.float32))],
         domain=MS, outs=["logits"], K=HIDDEN, N=VOCAB, bits=4, block_size=BLOCK,
         accuracy_level=4)
    return finish(b, "main_graph", [ids, mask] + cin, [logits] + cout,
                  [("", 14), (MS, 1)])


# ------------------------------------------------------------------------------ optimum
def rmsnorm(b, scope, x, weight):
    """LlamaRMSNorm as torch.onnx exports it (opset 14)."""
    two = b.const("const_two", np.array(2.0, np.float32))
    eps = b.const("const_eps", np.array(1e-6, np.float32))
    p = b.op(scope + "/Pow", "Pow", [x, two])
    m = b.op(scope + "/ReduceMean", "ReduceMean", [p], axes=[-1], keepdims=1)
    a = b.op(scope + "/Add", "Add", [m, eps])
    r = b.op(scope + "/Sqrt", "Sqrt", [a])
    d = b.op(scope + "/Div", "Div", [x, r])
    return b.op(scope + "/Mul", "Mul", [b.init(weight, np.ones((HIDDEN,), np.float32)), d])


def heads(b, scope, x, n):
    """[B, S, n*HEAD] -> [B, n, S, HEAD]"""
    shape = b.const("shape_heads_%d" % n, np.array([0, 0, n, HEAD], np.int64))
    r = b.op(scope + "/Reshape", "Reshape", [x, shape])
    return b.op(scope + "/Transpose", "Transpose", [r], perm=[0, 2, 1, 3])


def rotary(b, scope, x, cos, sin):
    half = HEAD // 2
    s0 = b.const("rot_start0", np.array([0], np.int64))
    s1 = b.const("rot_half", np.array([half], np.int64))
    s2 = b.const("rot_end", np.array([HEAD], np.int64))
    ax = b.const("rot_axis", np.array([-1], np.int64))
    x1 = b.op(scope + "/Slice", "Slice", [x, s0, s1, ax])
    x2 = b.op(scope + "/Slice_1", "Slice", [x, s1, s2, ax])
    neg = b.op(scope + "/Neg", "Neg", [x2])
    rot = b.op(scope + "/Concat", "Concat", [neg, x1], axis=-1)
    a = b.op(scope + "/Mul", "Mul", [x, cos])
    c = b.op(scope + "/Mul_1", "Mul", [rot, sin])
    return b.op(scope + "/Add", "Add", [a, c])


def optimum(layers=32, mha=False):
    b = Builder()
    ids, mask, logits, x = start(b, "past_sequence_length + 1")
    pos = helper.make_tensor_value_info("position_ids", TensorProto.INT64,
                                        ["batch_size", "sequence_length"])
    cin, cout = cache_io(layers, HEADS if mha else KV_HEADS)
    # additive mask [B, 1, 1, T] from attention_mask
    s = "/model"
    m = b.op(s + "/Unsqueeze", "Unsqueeze", ["attention_mask",
                                             b.const("axes_12", np.array([1, 2], np.int64))])
    mf = b.op(s + "/Cast", "Cast", [m], to=FLOAT)
    inv = b.op(s + "/Sub", "Sub", [b.const("one_f", np.array(1.0, np.float32)), mf])
    bias = b.op(s + "/Mul", "Mul", [inv, b.const("neg_big", np.array(-1e9, np.float32))])
    # rotary tables gathered by position
    rs = "/model/rotary_emb"
    cos_t = b.init("model.rotary_emb.cos_cached", np.zeros((MAX_LEN, HEAD), np.float32))
    sin_t = b.init("model.rotary_emb.sin_cached", np.zeros((MAX_LEN, HEAD), np.float32))
    cos = b.op(rs + "/Unsqueeze", "Unsqueeze",
               [b.op(rs + "/Gather", "Gather", [cos_t, "position_ids"]),
                b.const("axes_1u", np.array([1], np.int64))])
    sin = b.op(rs + "/Unsqueeze_1", "Unsqueeze",
               [b.op(rs + "/Gather_1", "Gather", [sin_t, "position_ids"]),
                b.const("axes_1u", np.array([1], np.int64))])
    h = x
    for i in range(layers):
        L = "/model/layers.%d" % i
        normed = rmsnorm(b, L + "/input_layernorm", h, "model.layers.%d.input_layernorm.weight" % i)
        q = b.matmul(L + "/self_attn/q_proj", normed, HIDDEN, HIDDEN)
        nkv = HEADS if mha else KV_HEADS
        k = b.matmul(L + "/self_attn/k_proj", normed, HIDDEN, nkv * HEAD)
        v = b.matmul(L + "/self_attn/v_proj", normed, HIDDEN, nkv * HEAD)
        pk, pv = "past_key_values.%d.key" % i, "past_key_values.%d.value" % i
        A = L + "/self_attn"
        if mha:
            attn, _, _ = b.op(A + "/MultiHeadAttention", "MultiHeadAttention",
                              [q, k, v, "", "", bias, pk, pv], domain=MS,
                              outs=[A + "/MultiHeadAttention/output_0", "present.%d.key" % i,
                                    "present.%d.value" % i], num_heads=HEADS)
        else:
            qh = rotary(b, A + "/rotary_q", heads(b, A + "/q", q, HEADS), cos, sin)
            kh = rotary(b, A + "/rotary_k", heads(b, A + "/k", k, KV_HEADS), cos, sin)
            vh = heads(b, A + "/v", v, KV_HEADS)
            kc = b.op(A + "/Concat", "Concat", [pk, kh], axis=2, outs=["present.%d.key" % i])
            vc = b.op(A + "/Concat_1", "Concat", [pv, vh], axis=2,
                      outs=["present.%d.value" % i])
            rep = b.const("kv_repeat", np.array([1, HEADS // KV_HEADS, 1, 1], np.int64))
            kr = b.op(A + "/Tile", "Tile", [kc, rep])
            vr = b.op(A + "/Tile_1", "Tile", [vc, rep])
            kt = b.op(A + "/Transpose", "Transpose", [kr], perm=[0, 1, 3, 2])
            sc = b.op(A + "/MatMul", "MatMul", [qh, kt])
            sc = b.op(A + "/Div", "Div", [sc, b.const("sqrt_head", np.array(HEAD ** 0.5,
                                                                          np.float32))])
            sc = b.op(A + "/Add", "Add", [sc, bias])
            p = b.op(A + "/Softmax", "Softmax", [sc], axis=-1)
            o = b.op(A + "/MatMul_1", "MatMul", [p, vr])
            o = b.op(A + "/Transpose_1", "Transpose", [o], perm=[0, 2, 1, 3])
            attn = b.op(A + "/Reshape", "Reshape",
                        [o, b.const("shape_merge", np.array([0, 0, HIDDEN], np.int64))])
        o = b.matmul(A + "/o_proj", attn, HIDDEN, HIDDEN)
        h = b.op(L + "/Add", "Add", [h, o])
        normed = rmsnorm(b, L + "/post_attention_layernorm", h,
                         "model.layers.%d.post_attention_layernorm.weight" % i)
        h = b.op(L + "/Add_1", "Add", [h, mlp(b, L, normed, b.matmul)])
    final = rmsnorm(b, "/model/norm", h, "model.norm.weight")
    w = b.init("lm_head.weight", np.zeros((HIDDEN, VOCAB), np.float32))
    b.op("/lm_head/MatMul", "MatMul", [final, w], outs=["logits"])
    opsets = [("", 14)] + ([(MS, 1)] if mha else [])
    return finish(b, "main_graph", [ids, mask, pos] + cin, [logits] + cout, opsets)


def optimum_mha(layers=32):
    return optimum(layers, mha=True)


KINDS = {"genai": genai, "optimum": optimum, "optimum-mha": optimum_mha}


def main(argv):
    ap = argparse.ArgumentParser(description="write an LLM-shaped test model")
    ap.add_argument("kind", choices=sorted(KINDS))
    ap.add_argument("out")
    ap.add_argument("--layers", type=int, default=32)
    a = ap.parse_args(argv)
    if a.layers < 1 or a.layers > 1024:
        ap.error("--layers: 1..1024")
    m = KINDS[a.kind](a.layers)
    tmp = a.out + ".tmp"
    onnx.save(m, tmp)
    os.replace(tmp, a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
