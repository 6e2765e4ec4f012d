#!/usr/bin/python3
"""render_models.py — prepares the models of the rendering benchmark (tests/bench/render.sh).

    /usr/bin/python3 tests/bench/render_models.py CACHE_DIR [NAME ...]

Writes CACHE_DIR/<name>.onnx for each model below that is missing (or whose recipe changed:
CACHE_DIR/<name>.recipe holds the recipe text it was made from), then prints one line per
model: "<name>\t<path>".  Models are written to <name>.onnx.part and renamed, so an
interrupted run leaves nothing half-written behind.

Exports use Debian's python3-torch 1.13 and python3-torchvision 0.14 (random weights,
weights=None: nothing is downloaded); generated graphs use python3-onnx's helper.
"""
import os
import sys
import time

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


# ---------------------------------------------------------------------------------------
# torchvision / torch exports
def _torch():
    import torch  # imported lazily: 2-3 s, and only needed on a cold cache
    torch.manual_seed(0)
    return torch


def export_classifier(ctor, opset):
    """An exporter for a torchvision classifier (random weights) on one 224x224 image."""
    def export(path):
        torch = _torch()
        import torchvision
        m = getattr(torchvision.models, ctor)(weights=None).eval()
        torch.onnx.export(m, torch.randn(1, 3, 224, 224), path, opset_version=opset,
                          input_names=["input"], output_names=["logits"])
    return export


def export_fasterrcnn(path):
    # As torchvision documents it (models/detection/faster_rcnn.py): a list of images,
    # opset 11, no dynamic axes.  weights_backbone=None too, or it downloads ImageNet weights.
    torch = _torch()
    import torchvision
    m = torchvision.models.detection.fasterrcnn_mobilenet_v3_large_fpn(
        weights=None, weights_backbone=None).eval()
    x = [torch.rand(3, 300, 400), torch.rand(3, 500, 400)]
    torch.onnx.export(m, (x,), path, opset_version=11)


def export_encoder48(path):
    # 48 x nn.TransformerEncoderLayer(d_model=64), sequence and batch dynamic: the shape
    # arithmetic of dynamic axes (Shape/Gather/Unsqueeze/Concat) is most of the graph.
    torch = _torch()
    layer = torch.nn.TransformerEncoderLayer(d_model=64, nhead=4, dim_feedforward=256)
    m = torch.nn.TransformerEncoder(layer, num_layers=48).eval()
    torch.onnx.export(m, torch.randn(10, 1, 64), path, opset_version=14,
                      input_names=["src"], output_names=["out"],
                      dynamic_axes={"src": {0: "seq", 1: "batch"}, "out": {0: "seq", 1: "batch"}})


# ---------------------------------------------------------------------------------------
# Generated scoped graphs
D = 8          # feature width of the generated graphs (small: the files stay small)
SEQ = 16
OPS_PER_LAYER = 20


def node_maker(nodes):
    """op(scope, op_type, inputs, **attrs): appends a node named <scope>/<op_type>_<n> (n
    counts every node made) to nodes and returns the name of its output."""
    counter = [0]

    def op(scope, op_type, inputs, **attrs):
        counter[0] += 1
        out = "%s/%s_%d_out" % (scope, op_type, counter[0])
        nodes.append(helper.make_node(op_type, inputs, [out],
                                      name="%s/%s_%d" % (scope, op_type, counter[0]), **attrs))
        return out
    return op


def scoped_graph(blocks, layers, name):
    """A deep transformer-like graph: `blocks` blocks of `layers` layers of 20 ops each,
    named /block_i/layer_j/<part>/<Op>_k, so exactly blocks*layers*20 nodes.  Every
    layer's input skips over its attention to the residual Add; in the second half, the
    first layer's residual comes instead from the mirror block's output (U-Net style long
    skips: block b takes the output of block blocks-1-b, the first one spanning the whole
    graph)."""
    rng = np.random.default_rng(0)
    nodes, inits = [], []
    op = node_maker(nodes)

    def weight(scope, wname, shape):
        n = "%s.%s" % (scope.strip("/").replace("/", "."), wname)
        inits.append(numpy_helper.from_array(
            rng.standard_normal(shape).astype(np.float32), n))
        return n

    eps = numpy_helper.from_array(np.array(1e-5, dtype=np.float32), "eps")
    inits.append(eps)
    x = "input"
    block_out = []
    for b in range(blocks):
        bs = "/block_%d" % b
        mirror = blocks - 1 - b
        for layer in range(layers):
            s = "%s/layer_%d" % (bs, layer)
            # norm: 7 ops
            mu = op(s + "/norm", "ReduceMean", [x], axes=[-1])
            xc = op(s + "/norm", "Sub", [x, mu])
            sq = op(s + "/norm", "Mul", [xc, xc])
            var = op(s + "/norm", "ReduceMean", [sq], axes=[-1])
            ve = op(s + "/norm", "Add", [var, "eps"])
            sd = op(s + "/norm", "Sqrt", [ve])
            xn = op(s + "/norm", "Div", [xc, sd])
            # attention: 9 ops
            q = op(s + "/attn", "MatMul", [xn, weight(s, "wq", (D, D))])
            k = op(s + "/attn", "MatMul", [xn, weight(s, "wk", (D, D))])
            v = op(s + "/attn", "MatMul", [xn, weight(s, "wv", (D, D))])
            kt = op(s + "/attn", "Transpose", [k], perm=[0, 2, 1])
            sc = op(s + "/attn", "MatMul", [q, kt])
            p = op(s + "/attn", "Softmax", [sc], axis=-1)
            a = op(s + "/attn", "MatMul", [p, v])
            o = op(s + "/attn", "MatMul", [a, weight(s, "wo", (D, D))])
            skip = block_out[mirror] if layer == 0 and mirror < b else x
            x = op(s, "Add", [skip, o])
            # mlp: 4 ops
            h = op(s + "/mlp", "MatMul", [x, weight(s, "w1", (D, D))])
            h = op(s + "/mlp", "Relu", [h])
            h = op(s + "/mlp", "MatMul", [h, weight(s, "w2", (D, D))])
            x = op(s + "/mlp", "Add", [x, h])
        block_out.append(x)
    fl = TensorProto.FLOAT
    g = helper.make_graph(nodes, name, [helper.make_tensor_value_info("input", fl, [1, SEQ, D])],
                          [helper.make_tensor_value_info(x, fl, [1, SEQ, D])], inits)
    return helper.make_model(g, producer_name="onnxviz-bench",
                             opset_imports=[helper.make_opsetid("", 13)])


def gen_scoped20k(path):
    onnx.save(scoped_graph(50, 20, "scoped20k"), path)  # 20,000 nodes


def gen_scoped100k(path):
    onnx.save(scoped_graph(100, 50, "scoped100k"), path)  # 100,000 nodes


def layered_graph(layers, name, vary=0, cycle=0):
    """A decoder-only transformer as exporters write it (LLaMA-like, opset 17): scopes
    /model/embed_tokens, /model/layers.<i>/{attn,mlp}, /model/norm, /lm_head.  Each layer is
    100 nodes with the op mix of a real export: RMS norms written out (Pow, ReduceMean, Add,
    Sqrt, Reciprocal, Mul), q/k/v/o MatMuls with one key/value head
    repeated for the query heads (Unsqueeze, Expand, Reshape), the Shape -> Gather ->
    Unsqueeze -> Concat -> Reshape chains of dynamic shapes, rotary embedding (Range,
    Gather, Slice, Neg, Concat), a causal mask built from the sequence length (Greater,
    Where, Expand), Softmax, and a SwiGLU MLP.  Every layer has the same structure; with
    vary=k every k-th layer's MLP uses QuickGELU instead of SiLU (101 nodes; a model whose
    layers are not all alike); with cycle=k layer i's MLP has i % k Identity nodes more
    (k different layers in turn: no two alike within k of each other).  layers=1000 makes the issue's 1,000-layer model (100,009
    nodes)."""
    rng = np.random.default_rng(0)
    nodes, inits = [], []
    op = node_maker(nodes)
    H, HD, FF = 2, D // 2, 2 * D

    def weight(wname, shape):
        inits.append(numpy_helper.from_array(
            (rng.standard_normal(shape) * 0.1).astype(np.float32), wname))
        return wname

    def const(cname, value, dtype=np.int64):
        inits.append(numpy_helper.from_array(np.array(value, dtype=dtype), cname))
        return cname

    c = {k: const("c." + k, v) for k, v in {
        "i0": 0, "i1": 1, "ax0": [0], "ax1": [1], "ax2": [2], "heads": [H], "kvh": [1],
        "hd": [HD], "d": [D], "half": [HD // 2], "end": [HD], "last": [-1], "zero1": [0],
        "one1": [1]}.items()}
    c.update({k: const("c." + k, v, np.float32) for k, v in {
        "two": 2.0, "eps": 1e-6, "neg": -1e9, "zero_f": 0.0, "quick": 1.702}.items()})
    cos = weight("rotary.cos", (64, HD))
    sin = weight("rotary.sin", (64, HD))

    def rms_norm(s, x, wname):
        m = op(s, "ReduceMean", [op(s, "Pow", [x, c["two"]])], axes=[-1])
        r = op(s, "Reciprocal", [op(s, "Sqrt", [op(s, "Add", [m, c["eps"]])])])
        return op(s, "Mul", [op(s, "Mul", [x, r]), weight(wname, (D,))])             # 7

    def sizes(s, t):  # batch and sequence length of t: scalars and 1-D
        shp = op(s, "Shape", [t])
        bs = op(s, "Gather", [shp, c["i0"]], axis=0)
        ns = op(s, "Gather", [shp, c["i1"]], axis=0)
        return ns, op(s, "Unsqueeze", [bs, c["ax0"]]), op(s, "Unsqueeze", [ns, c["ax0"]])  # 5

    def heads(s, t, b, n, nh):  # [b, n, nh*HD] -> [b, nh, n, HD]
        shp = op(s, "Concat", [b, n, nh, c["hd"]], axis=0)
        return op(s, "Transpose", [op(s, "Reshape", [t, shp])], perm=[0, 2, 1, 3])   # 3

    def repeat_kv(s, t, b, n):  # [b, 1, n, HD] -> [b, H, n, HD]
        u = op(s, "Unsqueeze", [t, c["ax2"]])
        e = op(s, "Expand", [u, op(s, "Concat", [b, c["kvh"], c["heads"], n, c["hd"]], axis=0)])
        return op(s, "Reshape", [e, op(s, "Concat", [b, c["heads"], n, c["hd"]], axis=0)])  # 5

    def rotary(s, t, pcos, psin):
        x1 = op(s, "Slice", [t, c["zero1"], c["half"], c["last"]])
        x2 = op(s, "Slice", [t, c["half"], c["end"], c["last"]])
        rot = op(s, "Concat", [op(s, "Neg", [x2]), x1], axis=-1)
        return op(s, "Add", [op(s, "Mul", [t, pcos]), op(s, "Mul", [rot, psin])])   # 7

    x = op("/model/embed_tokens", "Gather", [weight("embed_tokens.weight", (256, D)),
                                             "input_ids"], axis=0)
    for i in range(layers):
        s = "/model/layers.%d/attn" % i
        h = rms_norm(s, x, "layers.%d.input_layernorm.weight" % i)                # 7
        ns, b, n = sizes(s, h)                                                     # 5
        q = heads(s, op(s, "MatMul", [h, weight("layers.%d.q.weight" % i, (D, D))]), b, n,
                  c["heads"])                                                      # 4
        _, bk, nk = sizes(s, h)                                                    # 5
        k = heads(s, op(s, "MatMul", [h, weight("layers.%d.k.weight" % i, (D, HD))]), bk, nk,
                  c["kvh"])                                                        # 4
        _, bv, nv = sizes(s, h)                                                    # 5
        v = heads(s, op(s, "MatMul", [h, weight("layers.%d.v.weight" % i, (D, HD))]), bv, nv,
                  c["kvh"])                                                        # 4
        pos = op(s, "Range", [c["i0"], ns, c["i1"]])
        pcos = op(s, "Unsqueeze", [op(s, "Gather", [cos, pos], axis=0), c["ax0"]])
        psin = op(s, "Unsqueeze", [op(s, "Gather", [sin, pos], axis=0), c["ax0"]])   # 5
        q = rotary(s, q, pcos, psin)                                               # 7
        k = repeat_kv(s, rotary(s, k, pcos, psin), bk, nk)                         # 12
        v = repeat_kv(s, v, bv, nv)                                                # 5
        above = op(s, "Greater", [op(s, "Unsqueeze", [pos, c["ax0"]]),
                                  op(s, "Unsqueeze", [pos, c["ax1"]])])
        mask = op(s, "Where", [above, c["neg"], c["zero_f"]])
        mask = op(s, "Expand", [mask, op(s, "Concat", [b, c["one1"], n, n], axis=0)])  # 6
        hd = op(s, "Gather", [op(s, "Shape", [q]), c["last"]], axis=0)
        scale = op(s, "Reciprocal", [op(s, "Sqrt", [op(s, "Cast", [hd], to=1)])])    # 5
        kt = op(s, "Transpose", [k], perm=[0, 1, 3, 2])
        sc = op(s, "Add", [op(s, "Mul", [op(s, "MatMul", [q, kt]), scale]), mask])
        p = op(s, "Softmax", [op(s, "Cast", [sc], to=TensorProto.FLOAT)], axis=-1)
        a = op(s, "MatMul", [p, v])                                                # 7
        merged = op(s, "Reshape", [op(s, "Transpose", [a], perm=[0, 2, 1, 3]),
                                   op(s, "Concat", [b, n, c["d"]], axis=0)])        # 3
        o = op(s, "MatMul", [merged, weight("layers.%d.o.weight" % i, (D, D))])
        x = op(s, "Add", [x, o])                                                   # 2
        s = "/model/layers.%d/mlp" % i
        h = rms_norm(s, x, "layers.%d.post_attention_layernorm.weight" % i)       # 7
        g = op(s, "MatMul", [h, weight("layers.%d.gate.weight" % i, (D, FF))])
        u = op(s, "MatMul", [h, weight("layers.%d.up.weight" % i, (D, FF))])
        if vary and i % vary == vary - 1:  # QuickGELU
            act = op(s, "Mul", [g, op(s, "Sigmoid", [op(s, "Mul", [g, c["quick"]])])])
        else:  # SiLU
            act = op(s, "Mul", [g, op(s, "Sigmoid", [g])])
        for _ in range(i % cycle if cycle else 0):
            act = op(s, "Identity", [act])
        d = op(s, "MatMul", [op(s, "Mul", [act, u]),
                             weight("layers.%d.down.weight" % i, (FF, D))])
        x = op(s, "Add", [x, d])                                                   # 7 (8)
    x = rms_norm("/model/norm", x, "norm.weight")
    logits = op("/lm_head", "MatMul", [x, weight("lm_head.weight", (D, 256))])
    g = helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "seq"])],
        [helper.make_tensor_value_info(logits, TensorProto.FLOAT, ["batch", "seq", 256])],
        inits)
    return helper.make_model(g, producer_name="onnxviz-bench",
                             opset_imports=[helper.make_opsetid("", 17)])


def gen_layers1000(path):
    onnx.save(layered_graph(1000, "layers1000"), path)  # 100,000 nodes in the layers


# name -> (function, recipe): the recipe text is stored next to the model; a change in it
# makes the model be prepared again.
RECIPES = {
    "resnet50": (export_classifier("resnet50", 13),
                 "torchvision resnet50 weights=None opset13 1x3x224x224"),
    "fasterrcnn_mobilenet": (export_fasterrcnn,
                             "torchvision fasterrcnn_mobilenet_v3_large_fpn weights=None "
                             "weights_backbone=None opset11 [3x300x400,3x500x400]"),
    "swin_t": (export_classifier("swin_t", 14),
               "torchvision swin_t weights=None opset14 1x3x224x224"),
    "vit_b_16": (export_classifier("vit_b_16", 14),
                 "torchvision vit_b_16 weights=None opset14 1x3x224x224"),
    "encoder48": (export_encoder48, "nn.TransformerEncoder 48 layers d64 h4 ff256 opset14 "
                                    "dynamic seq,batch"),
    "scoped20k": (gen_scoped20k, "scoped_graph v2 50x20x20 d8"),
    "scoped100k": (gen_scoped100k, "scoped_graph v2 100x50x20 d8"),
    "layers1000": (gen_layers1000, "layered_graph v1 1000 layers d8"),
}


def prepare(cache, name):
    fn, recipe = RECIPES[name]
    path = os.path.join(cache, name + ".onnx")
    stamp = os.path.join(cache, name + ".recipe")
    try:
        with open(stamp) as f:
            fresh = f.read() == recipe and os.path.getsize(path) > 0
    except OSError:
        fresh = False
    if not fresh:
        t = time.monotonic()
        print("render_models: preparing %s ..." % name, file=sys.stderr, flush=True)
        part = "%s.%d.part" % (path, os.getpid())  # one writer each: the last rename wins
        fn(part)
        os.replace(part, path)
        with open(stamp, "w") as f:
            f.write(recipe)
        print("render_models: %s ready (%.1f s)" % (name, time.monotonic() - t),
              file=sys.stderr, flush=True)
    return path


def main(argv):
    if len(argv) < 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    cache = argv[1]
    os.makedirs(cache, exist_ok=True)
    names = argv[2:] or list(RECIPES)
    for n in names:
        if n not in RECIPES:
            print("render_models: unknown model %s" % n, file=sys.stderr)
            return 2
    for n in names:
        print("%s\t%s" % (n, prepare(cache, n)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
