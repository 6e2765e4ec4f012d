#!/usr/bin/python3
"""quant.py — the quantization summary (summary.quantization of `inspect --json`) against
a count made here with python3-onnx, following the rules of docs/quant.md ("The summary"):

  quantized ops   QOperator/contrib quantized ops, and every other node (not Q/DQ/
                  DynamicQuantizeLinear, not Constant) with an input made by a
                  DequantizeLinear or an output read by a QuantizeLinear;
  plumbing        QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear, and the Cast ->
                  Mul (-> Add for Conv) after ConvInteger/MatMulInteger with the Mul of the
                  scales feeding it;
  float ops       all other nodes but Constant;
  weights         per weight precision: the ops whose largest quantized constant has it, the
                  distinct quantized constants (weights, integer biases) and their elements;
  activations     per activation precision: the ops (first quantized input, else output);
  parameters      quantized elements, elements of constant scales and zero points, elements
                  of the other constants (initializers, Constant nodes) that are floating
                  and of those that are not (`other`).

Models: tests/data/quant/*.onnx (committed, small), the torchvision resnet18 float / QDQ /
dynamic built by tests/data/quant_models.py, and every dequantization case.
"""
import glob
import json
import os
import subprocess
import sys
import tempfile
from collections import Counter, OrderedDict

import numpy as np
import onnx
from onnx import TensorProto

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "data"))
import quant_models as QM  # noqa: E402

BIN = os.path.join(ROOT, os.environ.get("BUILD", "build"), "onnxviz")
STD = ("", "ai.onnx")
MS = "com.microsoft"

# op -> (domains, format, slots [(slot, data, scale, zp)]) — ContribOperators.md / Operators.md
QOPS = {
    "QLinearConv": ((STD, MS), "qoperator", [("in", 0, 1, 2), ("w", 3, 4, 5), ("out", -1, 6, 7), ("b", 8, None, None)]),
    "QLinearMatMul": ((STD, MS), "qoperator", [("in", 0, 1, 2), ("w", 3, 4, 5), ("out", -1, 6, 7)]),
    "ConvInteger": ((STD,), "qoperator", [("in", 0, None, 2), ("w", 1, None, 3)]),
    "MatMulInteger": ((STD,), "qoperator", [("in", 0, None, 2), ("w", 1, None, 3)]),
    "QLinearAdd": ((MS,), "qoperator", [("in", 0, 1, 2), ("in", 3, 4, 5), ("out", -1, 6, 7)]),
    "QLinearMul": ((MS,), "qoperator", [("in", 0, 1, 2), ("in", 3, 4, 5), ("out", -1, 6, 7)]),
    "QLinearGlobalAveragePool": ((MS,), "qoperator", [("in", 0, 1, 2), ("out", -1, 3, 4)]),
    "QLinearAveragePool": ((MS,), "qoperator", [("in", 0, 1, 2), ("out", -1, 3, 4)]),
    "QLinearSigmoid": ((MS,), "qoperator", [("in", 0, 1, 2), ("out", -1, 3, 4)]),
    "MatMulNBits": ((MS,), "weight_only", [("w", 1, 2, 3)]),
    "GatherBlockQuantized": ((MS,), "weight_only", [("w", 0, 2, 3)]),
    "DynamicQuantizeMatMul": ((MS,), "dynamic", [("w", 1, 2, 3)]),
}
FLOATS = {TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.DOUBLE, TensorProto.BFLOAT16, 17, 18, 19, 20, 23, 24}
NAMES = {v: k for k, v in TensorProto.DataType.items()}
NAMES.update({21: "UINT4", 22: "INT4", 23: "FLOAT4E2M1", 24: "FLOAT8E8M0", 25: "UINT2", 26: "INT2"})


def count(dims):
    return int(np.prod(dims)) if len(dims) else 1


def summarise(m):
    g = m.graph
    inits = {t.name: t for t in g.initializer}
    nodes = list(g.node)
    producer = {o: i for i, n in enumerate(nodes) for o in n.output if o}
    users = {}
    for i, n in enumerate(nodes):
        for v in n.input:
            if v:
                users.setdefault(v, []).append(i)
    outs = {o.name for o in g.output}

    def const(v):
        for _ in range(64):
            if v in inits:
                return inits[v]
            p = producer.get(v)
            if p is None:
                return None
            n = nodes[p]
            if n.domain in STD and n.op_type == "Constant":
                return n.attribute[0].t
            if not (n.domain in STD and n.op_type == "Identity"):
                return None
            v = n.input[0]
        return None

    def root(v):
        for _ in range(64):
            p = producer.get(v)
            if p is None or not (nodes[p].domain in STD and nodes[p].op_type == "Identity"):
                return v
            v = nodes[p].input[0]
        return v

    def kind(n):
        if n.domain in STD + (MS,) and n.op_type in ("QuantizeLinear", "DequantizeLinear"):
            return n.op_type
        if n.domain in STD and n.op_type in ("DynamicQuantizeLinear", "Constant"):
            return n.op_type
        d = QOPS.get(n.op_type)
        if d and any(n.domain in dom if isinstance(dom, tuple) else n.domain == dom for dom in d[0]):
            return "qop"
        return "other"

    kinds = [kind(n) for n in nodes]

    def sole(v):
        u = users.get(v, [])
        return u[0] if u and len(set(u)) == 1 and v not in outs else None

    def inp(n, k):
        return n.input[k] if 0 <= k < len(n.input) and n.input[k] else None

    def attr(n, name, default):
        for a in n.attribute:
            if a.name == name:
                return a.i
        return default

    def vtype(v):
        t = const(v)
        return t.data_type if t is not None else 0

    role = ["none"] * len(nodes)
    for i, k in enumerate(kinds):
        if k in ("QuantizeLinear", "DynamicQuantizeLinear", "DequantizeLinear"):
            role[i] = "plumbing"
        elif k == "qop":
            role[i] = "op"
    # dynamic chains
    wscale, chain_bias = {}, {}
    for i, n in enumerate(nodes):
        if kinds[i] != "qop" or n.op_type not in ("ConvInteger", "MatMulInteger"):
            continue
        c = sole(n.output[0])
        if c is None or role[c] != "none" or nodes[c].op_type != "Cast":
            continue
        mul = sole(nodes[c].output[0])
        if mul is None or role[mul] != "none" or nodes[mul].op_type != "Mul":
            continue
        role[c] = role[mul] = "plumbing"
        other = [x for x in nodes[mul].input if x != nodes[c].output[0]][0]
        if const(other) is not None:
            wscale[i] = other
        else:
            s = producer.get(other)
            if s is not None and role[s] == "none" and nodes[s].op_type == "Mul" and sole(other) == mul:
                role[s] = "plumbing"
                for x in nodes[s].input:
                    if const(x) is not None:
                        wscale[i] = x
        if n.op_type == "ConvInteger":
            a = sole(nodes[mul].output[0])
            if a is not None and role[a] == "none" and nodes[a].op_type == "Add":
                b = [x for x in nodes[a].input if x != nodes[mul].output[0]][0]
                if const(b) is not None:
                    role[a] = "plumbing"
                    chain_bias[i] = b
    for i, n in enumerate(nodes):
        if role[i] != "none" or kinds[i] == "Constant":
            continue
        near = any(producer.get(v) is not None and kinds[producer[v]] == "DequantizeLinear" for v in n.input if v)
        near |= any(kinds[u] == "QuantizeLinear" for o in n.output for u in users.get(o, []))
        if near:
            role[i] = "op"

    def dq_type(d):
        x = nodes[d].input[0]
        if const(x) is not None:
            return const(x).data_type
        if inp(nodes[d], 2) and const(inp(nodes[d], 2)) is not None:
            return const(inp(nodes[d], 2)).data_type
        p = producer.get(x)
        return q_type(p) if p is not None and kinds[p] == "QuantizeLinear" else 0

    def q_type(q):
        z = inp(nodes[q], 2)
        if z and const(z) is not None:
            return const(z).data_type
        return attr(nodes[q], "output_dtype", 0) or TensorProto.UINT8

    ops_w, ops_a, qconst, scales = Counter(), Counter(), OrderedDict(), set()
    formats, dynamic = set(), 0
    for i, n in enumerate(nodes):
        if role[i] != "op":
            continue
        qts = []  # (slot, data value, scale, zp, dtype, logical count)
        if kinds[i] == "qop":
            dom, fmt, slots = QOPS[n.op_type]
            for slot, d, s, z in slots:
                v = n.output[0] if d == -1 else inp(n, d)
                if v is None:
                    continue
                c = const(v)
                if slot == "in" and c is not None:
                    slot = "w"
                elif slot == "w" and c is None:
                    slot = "in"
                zp = inp(n, z) if z is not None else None
                dt = c.data_type if c is not None else (vtype(zp) if zp else 0)
                qts.append([slot, v, inp(n, s) if s is not None else None, zp, dt, count(c.dims) if c is not None else 0])
            for q in qts:
                p = producer.get(q[1])
                if q[0] == "in" and p is not None and kinds[p] == "DynamicQuantizeLinear":
                    q[2], q[3], q[4] = nodes[p].output[1], nodes[p].output[2], TensorProto.UINT8
                    q.append("dyn")
                    fmt = "dynamic"
            if i in wscale:
                for q in qts:
                    if q[0] == "w" and q[2] is None:
                        q[2] = wscale[i]
            if i in chain_bias:
                c = const(chain_bias[i])
                qts.append(["b", chain_bias[i], None, None, c.data_type, count(c.dims)])
            if n.op_type == "MatMulNBits":
                bits = attr(n, "bits", 4)
                qts[0][4] = {2: 25, 4: 21, 8: 2}[bits]
                qts[0][5] = attr(n, "K", 0) * attr(n, "N", 0)
            if n.op_type == "GatherBlockQuantized" and qts and qts[0][4] == TensorProto.UINT8 and attr(n, "bits", 4) == 4:
                qts[0][4] = 21
                qts[0][5] *= 2
        else:
            fmt = "weight_only"
            for v in n.input:
                p = producer.get(v) if v else None
                if p is None or kinds[p] != "DequantizeLinear":
                    continue
                d = nodes[p]
                c = const(d.input[0])
                dt = dq_type(p)
                slot = ("b" if dt == TensorProto.INT32 else "w") if c is not None else "in"
                qts.append([slot, d.input[0], inp(d, 1), inp(d, 2), dt, count(c.dims) if c is not None else 0])
            for o in n.output:
                qs = [u for u in users.get(o, []) if kinds[u] == "QuantizeLinear"]
                if qs:
                    q = nodes[qs[0]]
                    qts.append(["out", q.output[0], inp(q, 1), inp(q, 2), q_type(qs[0]), 0])
            if any(q[0] in ("in", "out") for q in qts):
                fmt = "qdq"
        formats.add(fmt)
        ws = [q for q in qts if q[0] == "w"]
        if ws:
            best = max(ws, key=lambda q: q[5])  # the first of the largest
            best = [q for q in ws if q[5] == best[5]][0]
            ops_w[NAMES.get(best[4], "UNKNOWN")] += 1
        act = [q for q in qts if q[0] == "in"] or [q for q in qts if q[0] == "out"]
        if act:
            ops_a[NAMES.get(act[0][4])] += 1
            dynamic += len(act[0]) > 6
        elif fmt == "dynamic":
            ops_a["UINT8"] += 1
            dynamic += 1
        for q in qts:
            c = const(q[1])
            if c is not None and (q[0] == "w" or (q[0] == "b" and q[4] not in FLOATS)):
                qconst.setdefault(root(q[1]), (NAMES.get(q[4], "UNKNOWN"), q[5]))
            for v in (q[2], q[3]):
                if v and const(v) is not None:
                    scales.add(root(v))
    tens, params = Counter(), Counter()
    for name, cnt in qconst.values():
        tens[name] += 1
        params[name] += cnt
    weights = sorted(({"dtype": k, "ops": ops_w.get(k, 0), "tensors": tens.get(k, 0),
                       "parameters": params.get(k, 0)} for k in set(ops_w) | set(tens)),
                     key=lambda e: (-e["parameters"], -e["ops"], e["dtype"]))
    acts = sorted(({"dtype": k, "ops": v} for k, v in ops_a.items()), key=lambda e: (-e["ops"], e["dtype"]))
    # every other constant (initializers, sparse initializers' values, Constant nodes'
    # tensors): float, or other (int64 shapes, indices); quantized + float + other is the
    # summary's parameters.count (parser/params.c)
    consts = [(t.name, t) for t in g.initializer] + [(s.values.name, s.values) for s in g.sparse_initializer]
    consts += [(n.output[0], a.t) for n in nodes if n.domain in STD and n.op_type == "Constant"
               for a in n.attribute[:1] if a.type == onnx.AttributeProto.TENSOR]
    rest = [t for name, t in consts if name not in qconst and name not in scales]
    floatp = sum(count(t.dims) for t in rest if t.data_type in FLOATS)
    otherp = sum(count(t.dims) for t in rest if t.data_type not in FLOATS)
    order = ["qdq", "qoperator", "dynamic", "weight_only"]
    return {
        "formats": [f for f in order if f in formats],
        "ops": {"quantized": role.count("op"), "dynamic": dynamic,
                "float": sum(1 for i in range(len(nodes)) if role[i] == "none" and kinds[i] != "Constant"),
                "plumbing": role.count("plumbing")},
        "weights": weights,
        "activations": acts,
        "parameters": {"quantized": sum(params.values()),
                       "scales": sum(count(const(v).dims) for v in scales),
                       "float": floatp, "other": otherp},
    }


def main():
    models = sorted(glob.glob(os.path.join(ROOT, "tests", "data", "quant", "*.onnx")))
    tmp = tempfile.mkdtemp(prefix="onnxviz-diff-quant-")
    for name, m, _, _ in QM.dequant_cases():
        p = os.path.join(tmp, name + ".onnx")
        onnx.save(m, p)
        models.append(p)
    cache = os.environ.get("ONNXVIZ_QUANT_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "onnxviz-quant")
    os.makedirs(cache, exist_ok=True)
    fm = QM.torchvision_float("resnet18", os.path.join(cache, "resnet18_op13.onnx"))
    for kind, fn in (("float", None), ("qdq", QM.qdq), ("dynamic", QM.dynamic)):
        p = os.path.join(tmp, "resnet18_%s.onnx" % kind)
        onnx.save(fm if fn is None else fn(fm), p)
        models.append(p)
    failed = 0
    for p in models:
        r = subprocess.run([BIN, "inspect", "--json", p], capture_output=True, timeout=120)
        got = json.loads(r.stdout)["summary"]["quantization"] if r.returncode == 0 else None
        want = summarise(onnx.load(p))
        if got != want:
            failed += 1
            print("FAIL %s:\n  onnxviz %s\n  python  %s" % (os.path.basename(p), json.dumps(got), json.dumps(want)))
    subprocess.run(["rm", "-rf", tmp])
    print("quant summary: %d models, %d differ" % (len(models), failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
