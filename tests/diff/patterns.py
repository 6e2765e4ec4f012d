#!/usr/bin/python3
"""patterns.py — named patterns (parser/fusion.c) against a real ONNX Runtime (issue 24).

onnxviz recognises groups of plain ops as the op they compute (LayerNormalization written
as 9 ops, RMSNormalization, Gelu, Swish, HardSwish, an attention core, a 2-D MatMul+Add as
Gemm) and lists each match in the document ("patterns": op_type, nodes, inputs, output,
attributes; docs/document.md).  Here:

  built    models made with onnx.helper: each recognisable form (and variants exporters
           write) must be recognised exactly as expected, and each deliberate near miss
           (wrong axis, epsilon outside the square root, a mean over another input, a
           wrong constant, a widening bias, an inner value used elsewhere, Softmax over
           another axis, ...) must not be: 0 false matches;
  numeric  every match, in the built models, the corpus models ($ONNXVIZ_CORPUS/models,
           those under 40 MB) and the torch exports of the rendering benchmark when
           present (~/.cache/onnxviz-bench: vit_b_16, swin_t, encoder48; there the first
           2 matches of each op and size, their layers being alike), is cut out as
           its own ONNX model (its nodes, the bookkeeping and constants feeding them, the
           other values as inputs with their inferred shapes, symbolic dims set to 2) and
           run on random inputs with onnxruntime-node (tests/ort); the op it is named
           after runs on the same inputs: opset 17 LayerNormalization, opset 20 Gelu,
           opset 14 HardSwish, opset 13 Gemm, opset 23 RMSNormalization and Attention
           where this onnxruntime has them, else (and for Swish) a numpy reference.
           Every match must agree within float32 tolerance (|a-b| <= 1e-4 * (1 + |b|)).

Environment: BUILD (default build) holds onnxviz; PATTERNS_NO_BENCH=1 leaves the bench
models out.  Under the sanitize suite (ONNXVIZ_SANITIZED=1) the numeric part is skipped
(one SKIP line): it checks the patterns' arithmetic in ONNX Runtime, which the plain run
has done on the same documents; onnxviz still reads every model and the built models'
matches are still checked.  Exit status 1 on any disagreement or unexpected (non-)match.  Prints per
model the matches checked and the largest difference.
"""
import glob
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.dont_write_bytecode = True
BUILD = os.environ.get("BUILD", "build")
ONNXVIZ = os.path.join(BUILD, "onnxviz")
RUN = "tests/ort/run.mjs"
TOL = 1e-4
F = TensorProto.FLOAT
rng = np.random.default_rng(24)
tmp = tempfile.mkdtemp(prefix="onnxviz-patterns-")


def document(path):
    out = subprocess.run([ONNXVIZ, "inspect", "--json", path], check=True,
                         capture_output=True).stdout
    return json.loads(out)


def ort(model, feeds, tag):
    """Runs model (a ModelProto) on feeds {name: array}; {name: array} or raises."""
    mp = os.path.join(tmp, tag + ".onnx")
    fp = os.path.join(tmp, tag + ".feeds.json")
    op = os.path.join(tmp, tag + ".out.json")
    onnx.save(model, mp)
    with open(fp, "w") as f:
        json.dump({k: {"type": {np.dtype("float32"): "float32", np.dtype("int64"): "int64",
                                np.dtype("bool"): "bool"}[v.dtype],
                       "dims": list(v.shape), "data": v.ravel().tolist()}
                   for k, v in feeds.items()}, f)
    r = subprocess.run(["node", RUN, mp, "--feeds", fp, "--out", op],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(r.stderr.strip()[-400:])
    with open(op) as f:
        got = json.load(f)
    return {k: np.array(v["data"], dtype=np.float64).reshape(v["dims"]) for k, v in got.items()}


def model_of(nodes, inputs, outputs, inits=(), opset=17, ir=8):
    g = helper.make_graph(nodes, "g", inputs, outputs, list(inits))
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], ir_version=ir)


def tinfo(name, shape=None, elem=F):
    return helper.make_tensor_value_info(name, elem, shape)


def const(name, arr):
    return numpy_helper.from_array(np.asarray(arr, dtype=np.float32), name)


# ---------------------------------------------------------------------------------------
# Built models: (name, model, {op_type: count expected})
def layernorm(x="x", axes=(-1,), axes2=None, eps_inside=True, mean_of=None, pw=2.0,
              affine=True, square="pow", keepdims=1, scale_shape=(8,), extra_out=None,
              axes_input=False):
    n = []
    def rm(inp, out, ax):
        if axes_input:
            return helper.make_node("ReduceMean", [inp, out + "_axes"], [out], keepdims=keepdims)
        return helper.make_node("ReduceMean", [inp], [out], axes=list(ax), keepdims=keepdims)
    inits = [const("eps", 1e-5), const("two", pw), const("g", rng.standard_normal(scale_shape)),
             const("b", rng.standard_normal(scale_shape))]
    if axes_input:
        inits += [numpy_helper.from_array(np.array(axes, np.int64), "m_axes"),
                  numpy_helper.from_array(np.array(axes2 or axes, np.int64), "v_axes")]
    n.append(rm(mean_of or x, "m", axes))
    n.append(helper.make_node("Sub", [x, "m"], ["d"]))
    if square == "pow":
        n.append(helper.make_node("Pow", ["d", "two"], ["p"]))
    else:
        n.append(helper.make_node("Mul", ["d", "d"], ["p"]))
    n.append(rm("p", "v", axes2 or axes))
    if eps_inside:
        n.append(helper.make_node("Add", ["v", "eps"], ["e"]))
        n.append(helper.make_node("Sqrt", ["e"], ["s"]))
    else:
        n.append(helper.make_node("Sqrt", ["v"], ["e"]))
        n.append(helper.make_node("Add", ["e", "eps"], ["s"]))
    n.append(helper.make_node("Div", ["d", "s"], ["nrm"]))
    last = "nrm"
    if affine:
        n.append(helper.make_node("Mul", ["nrm", "g"], ["sc"]))
        n.append(helper.make_node("Add", ["sc", "b"], ["y"]))
        last = "y"
    outs = [tinfo(last)] + ([tinfo(extra_out)] if extra_out else [])
    ins = [tinfo("x", [2, 3, 5, 8])] + ([tinfo("x2", [2, 3, 5, 8])] if mean_of else [])
    return model_of(n, ins, outs, inits, opset=18 if axes_input else 17)


def rmsnorm(form="div", eps_inside=True, other=False):
    inits = [const("eps", 1e-6), const("two", 2.0), const("w", rng.standard_normal(8)),
             const("one", 1.0)]
    n = [helper.make_node("Pow", ["x", "two"], ["p"]),
         helper.make_node("ReduceMean", ["p"], ["v"], axes=[-1])]
    if eps_inside:
        n += [helper.make_node("Add", ["v", "eps"], ["e"]), helper.make_node("Sqrt", ["e"], ["s"])]
    else:
        n += [helper.make_node("Sqrt", ["v"], ["e"]), helper.make_node("Add", ["e", "eps"], ["s"])]
    xin = "x2" if other else "x"
    if form == "div":
        n.append(helper.make_node("Div", [xin, "s"], ["nrm"]))
    elif form == "recip":
        n += [helper.make_node("Reciprocal", ["s"], ["r"]), helper.make_node("Mul", [xin, "r"], ["nrm"])]
    else:
        n += [helper.make_node("Div", ["one", "s"], ["r"]), helper.make_node("Mul", ["r", xin], ["nrm"])]
    n.append(helper.make_node("Mul", ["w", "nrm"], ["y"]))
    ins = [tinfo("x", [2, 4, 8])] + ([tinfo("x2", [2, 4, 8])] if other else [])
    return model_of(n, ins, [tinfo("y")], inits)


def gelu(form="div", k=None, assoc=0, other=False):
    inits = [const("k", k if k is not None else (2 ** 0.5 if form == "div" else 2 ** -0.5)),
             const("one", 1.0), const("half", 0.5)]
    n = [helper.make_node("Div" if form == "div" else "Mul", ["x", "k"], ["a"]),
         helper.make_node("Erf", ["a"], ["e"]), helper.make_node("Add", ["e", "one"], ["s"])]
    xo = "x2" if other else "x"
    if assoc == 0:
        n += [helper.make_node("Mul", [xo, "s"], ["t"]), helper.make_node("Mul", ["t", "half"], ["y"])]
    elif assoc == 1:
        n += [helper.make_node("Mul", [xo, "half"], ["t"]), helper.make_node("Mul", ["t", "s"], ["y"])]
    else:
        n += [helper.make_node("Mul", ["s", "half"], ["t"]), helper.make_node("Mul", [xo, "t"], ["y"])]
    ins = [tinfo("x", [2, 16])] + ([tinfo("x2", [2, 16])] if other else [])
    return model_of(n, ins, [tinfo("y")], inits)


def gelu_tanh(cube="pow", c1=0.044715):
    inits = [const("c1", c1), const("c2", (2 / np.pi) ** 0.5), const("three", 3.0),
             const("one", 1.0), const("half", 0.5)]
    if cube == "pow":
        n = [helper.make_node("Pow", ["x", "three"], ["x3"])]
    else:
        n = [helper.make_node("Mul", ["x", "x"], ["xx"]), helper.make_node("Mul", ["xx", "x"], ["x3"])]
    n += [helper.make_node("Mul", ["c1", "x3"], ["a"]), helper.make_node("Add", ["x", "a"], ["b"]),
          helper.make_node("Mul", ["b", "c2"], ["c"]), helper.make_node("Tanh", ["c"], ["t"]),
          helper.make_node("Add", ["one", "t"], ["u"]), helper.make_node("Mul", ["x", "u"], ["v"]),
          helper.make_node("Mul", ["v", "half"], ["y"])]
    return model_of(n, [tinfo("x", [3, 16])], [tinfo("y")], inits)


def swish(other=False):
    n = [helper.make_node("Sigmoid", ["x"], ["s"]),
         helper.make_node("Mul", ["x2" if other else "x", "s"], ["y"])]
    ins = [tinfo("x", [4, 8])] + ([tinfo("x2", [4, 8])] if other else [])
    return model_of(n, ins, [tinfo("y")])


def hardswish(form="hs", three=3.0, hi=6.0):
    if form == "hs":
        n = [helper.make_node("HardSigmoid", ["x"], ["h"], alpha=1 / 6, beta=0.5),
             helper.make_node("Mul", ["x", "h"], ["y"])]
        return model_of(n, [tinfo("x", [4, 8])], [tinfo("y")])
    inits = [const("three", three), const("lo", 0.0), const("hi", hi), const("six", 6.0)]
    n = [helper.make_node("Add", ["x", "three"], ["a"]),
         helper.make_node("Clip", ["a", "lo", "hi"], ["c"]),
         helper.make_node("Mul", ["x", "c"], ["m"]), helper.make_node("Div", ["m", "six"], ["y"])]
    return model_of(n, [tinfo("x", [4, 8])], [tinfo("y")], inits)


def attention(where="after", mask=True, axis=-1, dropout=False):
    inits = [const("sc", 8.0 if where == "after" else 0.125),
             const("mask", rng.standard_normal((1, 1, 6, 6)) if mask else 0.0)]
    n = []
    q = "q"
    if where == "before":
        n.append(helper.make_node("Mul", ["q", "sc"], ["qs"]))
        q = "qs"
    n.append(helper.make_node("MatMul", [q, "kt"], ["s0"]))
    cur = "s0"
    if where == "after":
        n.append(helper.make_node("Div", ["s0", "sc"], ["s1"]))
        cur = "s1"
    if mask:
        n.append(helper.make_node("Add", [cur, "mask"], ["s2"]))
        cur = "s2"
    n.append(helper.make_node("Softmax", [cur], ["p"], axis=axis))
    p = "p"
    if dropout:
        inits += [const("ratio", 0.0), numpy_helper.from_array(np.array(True), "train")]
        n.append(helper.make_node("Dropout", ["p", "ratio", "train"], ["pd", "pmask"]))
        p = "pd"
    n.append(helper.make_node("MatMul", [p, "v"], ["y"]))
    ins = [tinfo("q", [2, 3, 6, 4]), tinfo("kt", [2, 3, 4, 6]), tinfo("v", [2, 3, 6, 4])]
    return model_of(n, ins, [tinfo("y")], inits)


def gemm(rank=2, cshape=(5,)):
    inits = [const("B", rng.standard_normal((4, 5))), const("C", rng.standard_normal(cshape))]
    n = [helper.make_node("MatMul", ["a", "B"], ["m"]), helper.make_node("Add", ["m", "C"], ["y"])]
    return model_of(n, [tinfo("a", [3, 4] if rank == 2 else [2, 3, 4])], [tinfo("y")], inits)


LN, RMS, GELU, ATT = "LayerNormalization", "RMSNormalization", "Gelu", "Attention"
BUILT = [
    ("layernorm", layernorm(), {LN: 1}),
    ("layernorm x*x", layernorm(square="mul"), {LN: 1}),
    ("layernorm without affine", layernorm(affine=False), {LN: 1}),
    ("layernorm 2 axes", layernorm(axes=(-2, -1), scale_shape=(5, 8)), {LN: 1}),
    ("layernorm positive axes", layernorm(axes=(3,)), {LN: 1}),
    ("layernorm opset 18 axes input", layernorm(axes_input=True), {LN: 1}),
    ("near: layernorm wrong axis", layernorm(axes=(-1,), axes2=(-2,)), {}),
    ("near: layernorm not the last axis", layernorm(axes=(-2,), scale_shape=(1,)), {}),
    ("near: layernorm epsilon outside sqrt", layernorm(eps_inside=False), {}),
    # x - mean(x2) is one value, d; d / sqrt(mean(d^2) + eps) is an RMSNorm of d, and no
    # LayerNorm of x: recognised as such (and checked numerically)
    ("near: layernorm mean of another input", layernorm(mean_of="x2"), {RMS: 1}),
    ("near: layernorm exponent 3", layernorm(pw=3.0), {}),
    ("near: layernorm keepdims 0", layernorm(keepdims=0), {}),
    ("near: layernorm sqrt used outside", layernorm(extra_out="s"), {}),
    ("near: layernorm scale widens", layernorm(scale_shape=(5, 8)), {LN: 1}),  # see below
    ("rmsnorm div", rmsnorm(), {RMS: 1}),
    ("rmsnorm reciprocal", rmsnorm("recip"), {RMS: 1}),
    ("rmsnorm 1/s", rmsnorm("one"), {RMS: 1}),
    ("near: rmsnorm epsilon outside sqrt", rmsnorm(eps_inside=False), {}),
    ("near: rmsnorm divides another input", rmsnorm(other=True), {}),
    ("gelu erf div", gelu(), {GELU: 1}),
    ("gelu erf mul", gelu("mul"), {GELU: 1}),
    ("gelu (x*0.5)*s", gelu(assoc=1), {GELU: 1}),
    ("gelu x*(s*0.5)", gelu(assoc=2), {GELU: 1}),
    ("near: gelu constant 1.41", gelu(k=1.41), {}),
    ("near: gelu other input", gelu(other=True), {}),
    ("gelu tanh pow", gelu_tanh(), {GELU: 1}),
    ("gelu tanh x*x*x", gelu_tanh("mul"), {GELU: 1}),
    ("near: gelu tanh constant 0.0447", gelu_tanh(c1=0.0447), {}),
    ("swish", swish(), {"Swish": 1}),
    ("near: swish other input", swish(True), {}),
    ("hardswish hardsigmoid", hardswish(), {"HardSwish": 1}),
    ("hardswish clip", hardswish("clip"), {"HardSwish": 1}),
    ("near: hardswish x+2", hardswish("clip", three=2.0), {}),
    ("near: hardswish clip to 5", hardswish("clip", hi=5.0), {}),
    ("attention scale after, mask", attention(), {ATT: 1}),
    ("attention scale on q, no mask", attention("before", mask=False), {ATT: 1}),
    ("attention with dropout 0", attention(dropout=True), {ATT: 1}),
    ("near: attention softmax axis 2", attention(axis=2), {}),
    ("near: attention without scale", attention("none"), {}),
    ("gemm", gemm(), {"Gemm": 1}),
    ("gemm C [3,5]", gemm(cshape=(3, 5)), {"Gemm": 1}),
    ("near: matmul+add on rank 3", gemm(rank=3), {}),
    ("near: gemm C widens", gemm(cshape=(2, 3, 5)), {}),
    # hostile: a Swish whose Mul feeds its own Sigmoid (a cycle through the match)
    ("near: swish of its own output", model_of(
        [helper.make_node("Sigmoid", ["y"], ["s"]), helper.make_node("Mul", ["y", "s"], ["y"])],
        [tinfo("x", [2, 8])], [tinfo("y")]), {}),
]
# a scale of dims [5, 8] on a norm over the last axis multiplies each row by another
# vector: not LayerNormalization's scale; the norm itself still is one (7 ops)
BUILT[13] = ("near: layernorm scale widens", BUILT[13][1], {LN: 1}, 7)


# ---------------------------------------------------------------------------------------
# Cutting a match out, and the reference
ELEM = {"FLOAT": TensorProto.FLOAT, "INT64": TensorProto.INT64, "BOOL": TensorProto.BOOL,
        "FLOAT16": TensorProto.FLOAT16, "DOUBLE": TensorProto.DOUBLE, "INT32": TensorProto.INT32}


def dims_of(val):
    t = val.get("type") or {}
    shape = t.get("shape")
    if shape is None:
        return None
    return [d if isinstance(d, int) else 2 for d in shape]


def cut(model, d, ms, tag):
    """All matches ms cut out together: their nodes with the bookkeeping and constants
    feeding them, the other values as inputs with random values; outputs: each match's
    output and each of its inputs (through Identity).  One run in onnxruntime; returns
    per match (output, {port: input})."""
    g = model.graph
    nodes, values = d["nodes"], d["values"]
    keep = set()
    for m in ms:
        keep |= {int(x[1:]) for x in m["nodes"]}
    stack = list(keep)
    while stack:
        k = stack.pop()
        for inp in nodes[k]["inputs"]:
            v = values[inp["value"]] if inp.get("value") is not None else None
            p = v and v.get("producer")
            if not p:
                continue
            pi = int(p["node"][1:])
            if pi not in keep and (nodes[pi].get("bookkeeping") or nodes[pi]["op_type"] == "Constant"):
                keep.add(pi)
                stack.append(pi)
    kept = [g.node[i] for i in sorted(keep)]
    produced = {o for n in kept for o in n.output}
    inits = {i.name: i for i in g.initializer}
    by_name = {v["name"]: v for v in values if v["scope"] == ""}
    ins, feeds, used_inits, seen = [], {}, [], set()
    for n in kept:
        for name in n.input:
            if not name or name in produced or name in seen:
                continue
            seen.add(name)
            if name in inits:
                used_inits.append(inits[name])
                continue
            val = by_name[name]
            dims = dims_of(val)
            elem = (val.get("type") or {}).get("elem_type")
            if dims is None or elem not in ("FLOAT", "INT64", "BOOL"):
                raise RuntimeError("input %s: unknown shape or type %s" % (name, elem))
            ins.append(helper.make_tensor_value_info(name, ELEM[elem], dims))
            if elem == "FLOAT":
                feeds[name] = rng.uniform(-2, 2, dims).astype(np.float32)
            elif elem == "INT64":
                feeds[name] = np.zeros(dims, np.int64)
            else:
                feeds[name] = np.zeros(dims, bool)
    extra, outs = [], []
    for i, m in enumerate(ms):
        extra.append(helper.make_node("Identity", [values[m["output"]]["name"]], ["__m%d_y" % i]))
        outs.append(helper.make_tensor_value_info("__m%d_y" % i, F, None))
        for port, vi in m["inputs"].items():
            extra.append(helper.make_node("Identity", [values[vi]["name"]], ["__m%d_%s" % (i, port)]))
            outs.append(helper.make_tensor_value_info("__m%d_%s" % (i, port), F, None))
    gg = helper.make_graph(kept + extra, "cut", ins, outs, used_inits)
    cm = helper.make_model(gg, opset_imports=model.opset_import, ir_version=model.ir_version)
    got = ort(cm, feeds, tag + "-cut")
    return [(got["__m%d_y" % i], {p: got["__m%d_%s" % (i, p)] for p in m["inputs"]})
            for i, m in enumerate(ms)]


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def op_node(m, ins, i):
    """The op a match is named after, as one node on inputs named r<i>_<port>: (opset it
    needs, node, {input name: array}, reference name); None when numpy answers it."""
    op, at = m["op_type"], m["attributes"]
    x = ins.get("X")
    def named(args):
        return {"r%d_%s" % (i, k): np.asarray(v, np.float32) for k, v in args.items()}
    if op == "LayerNormalization":
        ax = at["axis"]
        args = {"X": x, "Scale": np.broadcast_to(ins.get("Scale", np.ones(x.shape[ax:])), x.shape[ax:])}
        if "B" in ins:
            args["B"] = np.broadcast_to(ins["B"], x.shape[ax:])
        attrs, ver = {"axis": ax, "epsilon": at["epsilon"]}, 17
    elif op == "RMSNormalization":
        ax = at["axis"]
        args = {"X": x, "scale": np.broadcast_to(ins.get("scale", np.ones(x.shape[ax:])), x.shape[ax:])}
        attrs, ver = {"axis": ax, "epsilon": at["epsilon"]}, 23
    elif op == "Gelu":
        args, attrs, ver = {"X": x}, {"approximate": at["approximate"]}, 20
    elif op == "HardSwish":
        args, attrs, ver = {"X": x}, {}, 14
    elif op == "Gemm":
        args, attrs, ver = {"A": ins["A"], "B": ins["B"], "C": ins["C"]}, {}, 13
    elif op == "Attention" and ins["Q"].ndim == 4:
        q, kt = ins["Q"], ins["K_transposed"]
        args = {"Q": q, "K": np.swapaxes(kt, -1, -2), "V": ins["V"]}
        if "attn_mask" in ins:
            args["attn_mask"] = np.broadcast_to(ins["attn_mask"], q.shape[:-1] + (kt.shape[-1],))
        attrs, ver = {"scale": at["scale"]}, 23
    else:
        return None
    args = named(args)
    node = helper.make_node(op, list(args), ["r%d_y" % i], **attrs)
    return ver, node, args, "onnxruntime %s-%d" % (op, ver)


def numpy_ref(m, ins):
    op, at = m["op_type"], m["attributes"]
    x = ins.get("X")
    if op == "Swish":
        return x / (1 + np.exp(-x)), "numpy Swish"
    if op == "RMSNormalization":
        ax = at["axis"]
        axes = tuple(range(x.ndim + ax, x.ndim))
        sc = ins.get("scale", 1.0)
        return x / np.sqrt((x * x).mean(axis=axes, keepdims=True) + at["epsilon"]) * sc, \
            "numpy RMSNormalization"
    if op == "Attention":
        s = np.matmul(ins["Q"], ins["K_transposed"]) * at["scale"]
        if "attn_mask" in ins:
            s = s + ins["attn_mask"]
        return np.matmul(softmax(s), ins["V"]), "numpy Attention"
    raise RuntimeError("no reference for " + op)


def references(ms, cuts, tag, used):
    """The named ops on the cut-out inputs: one onnxruntime model per opset they need
    (opset 23's falling back to numpy when this onnxruntime lacks them)."""
    refs = [None] * len(ms)
    groups = {}
    for i, (m, (_, ins)) in enumerate(zip(ms, cuts)):
        spec = op_node(m, ins, i)
        if spec is None:
            refs[i] = numpy_ref(m, ins)
        else:
            groups.setdefault(20 if spec[0] < 23 else 23, []).append((i, spec))
    for opset, items in sorted(groups.items()):
        feeds, nodes, ins, outs = {}, [], [], []
        for i, (ver, node, args, name) in items:
            nodes.append(node)
            feeds.update(args)
            ins += [helper.make_tensor_value_info(k, F, list(v.shape)) for k, v in args.items()]
            outs.append(tinfo("r%d_y" % i))
        gm = model_of(nodes, ins, outs, opset=opset, ir=11 if opset >= 23 else 9)
        try:
            got = ort(gm, feeds, "%s-ref%d" % (tag, opset))
        except RuntimeError:
            if opset < 23:
                raise
            for i, _ in items:
                refs[i] = numpy_ref(ms[i], cuts[i][1])
            continue
        for i, (ver, node, args, name) in items:
            refs[i] = (got["r%d_y" % i], name)
    for r in refs:
        used.add(r[1])
    return [r[0] for r in refs]


def check_model(path, label, used, per_op=None):
    d = document(path)
    all_ms = d.get("patterns", {}).get("matches", [])
    # the main graph's (a subgraph's or function's nodes are not cut out here)
    ms = [m for m in all_ms if all(x.startswith("n") and x[1:].isdigit() for x in m["nodes"])]
    if per_op is not None:  # the first per_op of each op and size (repeated layers alike)
        seen = {}
        keep = []
        for m in ms:
            k = (m["op_type"], len(m["nodes"]))
            seen[k] = seen.get(k, 0) + 1
            if seen[k] <= per_op:
                keep.append(m)
        ms = keep
    worst, fails = 0.0, []
    if not ms:
        return 0, worst, fails, all_ms
    if SANITIZED:  # onnxviz's part (the document) is done; the rest is ONNX Runtime's
        return 0, worst, fails, all_ms
    tag = os.path.basename(path)
    model = onnx.load(path)
    try:
        cuts = cut(model, d, ms, tag)
        refs = references(ms, cuts, tag, used)
    except (RuntimeError, KeyError) as e:
        return 0, worst, ["%s: %s" % (label, e)], all_ms
    for m, (got, _), ref in zip(ms, cuts, refs):
        ref = np.asarray(ref, dtype=np.float64)
        if got.shape != ref.shape:
            fails.append("%s %s at %s: shape %s vs %s" % (label, m["op_type"], m["node"],
                                                        got.shape, ref.shape))
            continue
        err = float(np.max(np.abs(got - ref) / (1 + np.abs(ref)))) if got.size else 0.0
        worst = max(worst, err)
        if not err <= TOL:
            fails.append("%s %s at %s: differs by %.3g" % (label, m["op_type"], m["node"], err))
    return len(ms), worst, fails, all_ms


SANITIZED = os.environ.get("ONNXVIZ_SANITIZED") == "1"


def main():
    if SANITIZED:
        print("SKIP numeric checks under the sanitizers: ONNX Runtime's arithmetic, checked by "
              "the plain diff suite; onnxviz's documents and matches are checked here")
    elif subprocess.run(["sh", "tests/ort/setup.sh"]).returncode != 0:
        print("patterns: tests/ort/setup.sh failed")
        return 1
    used = set()
    failures = []
    false_matches = 0
    checked = 0
    for entry in BUILT:
        label, model, want = entry[0], entry[1], entry[2]
        path = os.path.join(tmp, "built-%d.onnx" % BUILT.index(entry))
        onnx.save(model, path)
        n, worst, fails, ms = check_model(path, label, used)
        got = {}
        for m in ms:
            got[m["op_type"]] = got.get(m["op_type"], 0) + 1
        if got != want:
            failures.append("%s: recognised %s, expected %s" % (label, got, want))
            false_matches += sum(got.values()) if not want else 0
        if len(entry) > 3 and ms and len(ms[0]["nodes"]) != entry[3]:
            failures.append("%s: %d nodes, expected %d" % (label, len(ms[0]["nodes"]), entry[3]))
        failures += fails
        checked += n
        print("built %-40s %-40s checked %d, worst %.2g" % (label, got or "no match", n, worst))
    corpus = os.environ.get("ONNXVIZ_CORPUS", "../shared/corpus")
    paths = sorted(p for p in glob.glob(os.path.join(corpus, "models", "**", "*.onnx"), recursive=True)
                   if os.path.getsize(p) < 40 << 20)
    bench = bench_dir = os.path.join(os.environ.get("XDG_CACHE_HOME") or
                                     os.path.expanduser("~/.cache"), "onnxviz-bench")
    if os.environ.get("PATTERNS_NO_BENCH") != "1":
        paths += [os.path.join(bench, b + ".onnx") for b in ("vit_b_16", "swin_t", "encoder48")
                  if os.path.exists(os.path.join(bench, b + ".onnx"))]
    for p in paths:
        try:
            d = document(p)
        except subprocess.CalledProcessError:
            continue
        if not d.get("patterns", {}).get("matches"):
            continue
        # the bench exports are large (197x768 activations): their first 2 matches of each
        # op and size, the layers repeating the same structure
        n, worst, fails, ms = check_model(p, os.path.basename(p), used,
                                          per_op=2 if p.startswith(bench_dir) else None)
        failures += fails
        checked += n
        print("model %-40s %d matches, checked %d, worst %.2g" % (os.path.basename(p)[:40], len(ms), n, worst))
    print("references: %s" % ", ".join(sorted(used)))
    print("patterns: %d matches checked numerically, %d false matches, %d failures"
          % (checked, false_matches, len(failures)))
    for f in failures:
        print("FAIL " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
