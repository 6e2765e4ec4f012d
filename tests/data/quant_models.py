#!/usr/bin/python3
"""Quantized test models, built by hand with python3-onnx 1.12 (docs/quant.md).

onnxruntime.quantization is not available here, so the transforms are written below:

  qdq(float_model)       static QDQ as onnxruntime lays it out: a QuantizeLinear ->
                         DequantizeLinear pair on every float activation (uint8, shared DQ),
                         int8 per-channel weights and int32 biases behind DequantizeLinear;
  dynamic(float_model)   dynamic quantization of every Conv as onnxruntime writes it:
                         DynamicQuantizeLinear -> ConvInteger -> Cast -> Mul(Mul(x_scale,
                         w_scale)) -> Add(bias), one DynamicQuantizeLinear per input tensor;
  qoperator()            a small QOperator model (QLinearConv, QLinearAdd,
                         QLinearGlobalAveragePool, QLinearMatMul);
  dequant_cases()        one small model per dequantization layout, each with its numpy
                         reference: DequantizeLinear per-tensor / per-axis / blocked (opset
                         21) on int8, uint8, int4, uint4; MatMulNBits (2, 4, 8 bits, with and
                         without zero points, packed and float zero points, K not a multiple
                         of the block); GatherBlockQuantized (int4, packed uint8).

INT4/UINT4 tensors (data_type 22/21, which onnx 1.12 does not know) are written with the
bytes packed by hand: two values per byte, the first in the low nibble.

As a program: quant_models.py OUTDIR writes every model there and prints a JSON index;
quant_models.py --small DIR writes the small ones committed under tests/data/quant;
quant_models.py --hostile DIR the hostile pairings under tests/data/quant/hostile
(hostile_dequant_cases: attributes and dims that broke the dequantization arithmetic).
"""
import json
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

INT4, UINT4 = 22, 21
INT2, UINT2 = 26, 25
MS = "com.microsoft"


# ------------------------------------------------------------------------------ packing
def pack_nibbles(vals):
    """Values in 0..15 (or -8..7, two's complement) two per byte, low nibble first."""
    u = (np.asarray(vals, np.int64).ravel() & 0xF).astype(np.uint8)
    if u.size % 2:
        u = np.concatenate([u, np.zeros(1, np.uint8)])
    return (u[0::2] | (u[1::2] << 4)).astype(np.uint8)


def pack_bits(vals, bits):
    """Values of `bits` bits packed low bits first into bytes (bits in 2, 4, 8)."""
    u = np.asarray(vals, np.int64).ravel() & ((1 << bits) - 1)
    per = 8 // bits
    pad = (-u.size) % per
    u = np.concatenate([u, np.zeros(pad, np.int64)]).reshape(-1, per)
    out = np.zeros(u.shape[0], np.int64)
    for k in range(per):
        out |= u[:, k] << (k * bits)
    return out.astype(np.uint8)


def int4_tensor(name, vals, signed=True):
    t = TensorProto(name=name, data_type=INT4 if signed else UINT4, dims=list(np.shape(vals)))
    t.raw_data = pack_nibbles(vals).tobytes()
    return t


def int2_tensor(name, vals, signed=True):
    t = TensorProto(name=name, data_type=INT2 if signed else UINT2, dims=list(np.shape(vals)))
    t.raw_data = pack_bits(vals, 2).tobytes()
    return t


def f32(a):
    return np.asarray(a, np.float32)


# ------------------------------------------------------------------------------ references
def ref_dequant(q, scale, zp, axis=None, block=0):
    """numpy's (q - zp) * scale in float32, per tensor, per axis or per block."""
    q = np.asarray(q, np.int64)
    scale = f32(scale)
    zp = np.zeros_like(scale, np.int64) if zp is None else np.asarray(zp, np.int64)
    if scale.size == 1:
        s, z = scale.reshape(()), zp.reshape(())
    elif block:
        s = np.repeat(scale, block, axis=axis)
        z = np.repeat(zp, block, axis=axis)
        sl = [slice(None)] * q.ndim
        sl[axis] = slice(0, q.shape[axis])
        s, z = s[tuple(sl)], z[tuple(sl)]
    else:
        shape = [1] * q.ndim
        shape[axis] = -1
        s, z = scale.reshape(shape), zp.reshape(shape)
    return (q - z).astype(np.float32) * s


def model(nodes, inits, inputs, outputs, opset=17, ms=False, ir=8):
    g = helper.make_graph(nodes, "g", inputs, outputs, inits)
    ops = [helper.make_opsetid("", opset)]
    if ms:
        ops.append(helper.make_opsetid(MS, 1))
    m = helper.make_model(g, opset_imports=ops)
    m.ir_version = ir
    return m


def vi(name, dt=TensorProto.FLOAT, shape=None):
    return helper.make_tensor_value_info(name, dt, shape)


# ------------------------------------------------------------------------------ dequant cases
def dequant_cases(seed=11):
    """[(name, ModelProto, {tensor name: reference float32 array, ...}, {tensor: info})]"""
    rng = np.random.default_rng(seed)
    cases = []

    def dq_case(name, dtype, shape, axis=None, block=0, zp=True):
        lo, hi = {"int8": (-128, 127), "uint8": (0, 255), "int4": (-8, 7), "uint4": (0, 15),
                  "int2": (-2, 1), "uint2": (0, 3)}[dtype]
        q = rng.integers(lo, hi + 1, size=shape)
        q.flat[0], q.flat[1] = lo, hi  # saturated ends
        if axis is None:
            sshape = []
        elif block:
            sshape = list(shape)
            sshape[axis] = -(-shape[axis] // block)
        else:
            sshape = [shape[axis]]
        scale = f32(rng.uniform(0.001, 0.1, size=sshape))
        if scale.size > 1:
            scale.flat[1] = -scale.flat[1]  # a negative scale: q == zp gives -0
        else:
            scale = f32(-scale) if dtype == "int8" else scale
        z = rng.integers(lo, hi + 1, size=sshape) if zp else None
        if z is not None:
            # make q hit its zero point somewhere in the block/channel of scale element 1
            if scale.size > 1:
                idx = np.unravel_index(1, scale.shape)
                sel = [slice(None)] * q.ndim
                if block:
                    sel[axis] = slice(idx[axis] * block, idx[axis] * block + 1)
                    for d in range(q.ndim):
                        if d != axis:
                            sel[d] = slice(idx[d], idx[d] + 1)
                else:
                    sel[axis] = slice(idx[0], idx[0] + 1)
                q[tuple(sel)] = np.asarray(z).flat[1]
            else:
                q.flat[2] = int(np.asarray(z))
        else:
            q.flat[2] = 0
        inits = []
        if dtype in ("int4", "uint4"):
            inits.append(int4_tensor("q", q, dtype == "int4"))
            if z is not None:
                inits.append(int4_tensor("zp", np.asarray(z), dtype == "int4"))
        elif dtype in ("int2", "uint2"):
            inits.append(int2_tensor("q", q, dtype == "int2"))
            if z is not None:
                inits.append(int2_tensor("zp", np.asarray(z), dtype == "int2"))
        else:
            npt = np.int8 if dtype == "int8" else np.uint8
            inits.append(numpy_helper.from_array(q.astype(npt), "q"))
            if z is not None:
                inits.append(numpy_helper.from_array(np.asarray(z).astype(npt), "zp"))
        inits.append(numpy_helper.from_array(scale, "scale"))
        attrs = {}
        if axis is not None:
            attrs["axis"] = axis
        if block:
            attrs["block_size"] = block
        ins = ["q", "scale"] + (["zp"] if z is not None else [])
        nodes = [helper.make_node("DequantizeLinear", ins, ["w"], **attrs),
                 helper.make_node("MatMul", ["x", "w"], ["y"]) if len(shape) == 2 else
                 helper.make_node("Add", ["x", "w"], ["y"])]
        opset = 25 if dtype in ("int2", "uint2") else 21 if (block or dtype in ("int4", "uint4")) else 17
        m = model(nodes, inits, [vi("x", shape=[1, shape[0]] if len(shape) == 2 else list(shape))],
                  [vi("y")], opset=opset, ir=11 if opset == 25 else 10 if opset == 21 else 8)
        ref = ref_dequant(q, scale, z, axis if axis is not None else 0, block)
        cases.append((name, m, {"q": ref}, {"q": {"qmin": lo, "qmax": hi, "raw": q,
                                                  "op": "DequantizeLinear"}}))

    dq_case("dq_tensor_int8", "int8", [6, 10])
    dq_case("dq_tensor_uint8", "uint8", [6, 10])
    dq_case("dq_tensor_int4", "int4", [5, 7])
    dq_case("dq_tensor_uint4_nozp", "uint4", [5, 7], zp=False)
    dq_case("dq_axis0_int8", "int8", [8, 6], axis=0)
    dq_case("dq_axis1_uint8", "uint8", [8, 6], axis=1)
    dq_case("dq_axis1_int4", "int4", [4, 9], axis=1)
    dq_case("dq_axis0_uint4", "uint4", [3, 5, 4], axis=0)
    dq_case("dq_block_int8", "int8", [4, 40], axis=1, block=16)
    dq_case("dq_block_uint8", "uint8", [36, 3], axis=0, block=8)
    dq_case("dq_block_int4", "int4", [6, 33], axis=1, block=16)
    dq_case("dq_block_uint4", "uint4", [3, 20, 5], axis=1, block=8)
    dq_case("dq_block_uint4_nozp", "uint4", [20, 6], axis=0, block=16, zp=False)
    dq_case("dq_axis1_int2", "int2", [5, 7], axis=1)
    dq_case("dq_block_uint2", "uint2", [3, 18], axis=1, block=8)

    def nbits_case(name, N, K, bs, bits, zp="packed", dt=np.float32):
        kb = -(-K // bs)
        q = rng.integers(0, 1 << bits, size=(N, kb * bs))
        q[0, 0], q[0, 1] = 0, (1 << bits) - 1
        blob = bs * bits // 8
        B = np.stack([np.stack([pack_bits(q[n, b * bs:(b + 1) * bs], bits) for b in range(kb)])
                      for n in range(N)]).reshape(N, kb, blob)
        scales = f32(rng.uniform(0.001, 0.05, size=(N, kb)))
        scales[0, 1 % kb] = -scales[0, 1 % kb]
        inits = [numpy_helper.from_array(B.astype(np.uint8), "B"),
                 numpy_helper.from_array(scales.reshape(-1).astype(dt) if dt == np.float16 else scales, "scales")]
        ins = ["A", "B", "scales"]
        if zp == "packed":
            z = rng.integers(0, 1 << bits, size=(N, kb))
            zb = np.stack([pack_bits(z[n], bits) for n in range(N)])
            inits.append(numpy_helper.from_array(zb.astype(np.uint8), "zero_points"))
            ins.append("zero_points")
            q[0, (1 % kb) * bs] = z[0, 1 % kb]
        elif zp == "float":
            z = f32(rng.uniform(0, (1 << bits) - 1, size=(N, kb)))
            inits.append(numpy_helper.from_array(z, "zero_points"))
            ins.append("zero_points")
        else:
            z = np.full((N, kb), 1 << (bits - 1), np.int64)
            q[0, (1 % kb) * bs] = 1 << (bits - 1)
        # q changed after packing for the -0 case: pack again
        B = np.stack([np.stack([pack_bits(q[n, b * bs:(b + 1) * bs], bits) for b in range(kb)])
                      for n in range(N)]).reshape(N, kb, blob)
        inits[0] = numpy_helper.from_array(B.astype(np.uint8), "B")
        sc = scales.astype(dt).astype(np.float32)
        s_full = np.repeat(sc, bs, axis=1)[:, :K]
        if zp == "float":
            ref = (q[:, :K].astype(np.float32) - np.repeat(z, bs, axis=1)[:, :K]) * s_full
        else:
            ref = (q[:, :K] - np.repeat(z, bs, axis=1)[:, :K]).astype(np.float32) * s_full
        nodes = [helper.make_node("MatMulNBits", ins, ["y"], domain=MS, K=K, N=N, bits=bits,
                                  block_size=bs)]
        m = model(nodes, inits, [vi("A", shape=[1, K])], [vi("y")], ms=True)
        cases.append((name, m, {"B": ref}, {"B": {"qmin": 0, "qmax": (1 << bits) - 1,
                                                  "raw": q[:, :K], "op": "MatMulNBits"}}))

    nbits_case("nbits4_zp", 6, 64, 32, 4)
    nbits_case("nbits4_nozp", 5, 40, 16, 4, zp=None)
    nbits_case("nbits4_zp_pad", 3, 40, 16, 4)
    nbits_case("nbits8_zp", 4, 48, 16, 8)
    nbits_case("nbits2_nozp", 4, 64, 16, 2, zp=None)
    nbits_case("nbits4_floatzp", 4, 32, 16, 4, zp="float")

    def gbq_case(name, packed):
        V, D, bs = 10, 32, 16
        if packed:
            q = rng.integers(0, 16, size=(V, D))
            data = numpy_helper.from_array(pack_bits(q.ravel(), 4).reshape(V, D // 2), "data")
            z = rng.integers(0, 16, size=(V, D // bs))
            zt = numpy_helper.from_array(pack_bits(z.ravel(), 4).reshape(V, D // bs // 2), "zp")
            lo, hi = 0, 15
        else:
            q = rng.integers(-8, 8, size=(V, D))
            data = int4_tensor("data", q, True)
            z = rng.integers(-8, 8, size=(V, D // bs))
            zt = int4_tensor("zp", z, True)
            lo, hi = -8, 7
        scales = f32(rng.uniform(0.01, 0.1, size=(V, D // bs)))
        nodes = [helper.make_node("GatherBlockQuantized", ["data", "idx", "scales", "zp"], ["y"],
                                  domain=MS, gather_axis=0, quantize_axis=1, block_size=bs,
                                  bits=4)]
        m = model(nodes, [data, numpy_helper.from_array(scales, "scales"), zt],
                  [vi("idx", TensorProto.INT64, [3])], [vi("y")], ms=True, opset=21, ir=10)
        ref = ref_dequant(q, scales, z, 1, bs)
        cases.append((name, m, {"data": ref}, {"data": {"qmin": lo, "qmax": hi, "raw": q,
                                                        "op": "GatherBlockQuantized"}}))

    gbq_case("gbq_int4", False)
    gbq_case("gbq_uint8_packed", True)
    return cases


def big_nbits(rng, N, K, bs=32, bits=4):
    """A large MatMulNBits weight with random bits-wide values and packed zero points (K a
    multiple of bs), built with whole-array packing: (model, q [N, K], z [N, K/bs],
    scales [N, K/bs] float32, B the packed bytes)."""
    kb = K // bs
    q = rng.integers(0, 1 << bits, size=(N, K))
    B = pack_bits(q.ravel(), bits).reshape(N, kb, bs * bits // 8)
    scales = rng.uniform(0.001, 0.02, size=(N, kb)).astype(np.float32)
    z = rng.integers(0, 1 << bits, size=(N, kb))
    zb = np.stack([pack_bits(z[n], bits) for n in range(N)])
    m = model([helper.make_node("MatMulNBits", ["A", "B", "scales", "zp"], ["y"], domain=MS,
                                K=K, N=N, bits=bits, block_size=bs)],
              [numpy_helper.from_array(B, "B"), numpy_helper.from_array(scales, "scales"),
               numpy_helper.from_array(zb, "zp")],
              [vi("A", shape=[1, K])], [vi("y")], ms=True)
    return m, q, z, scales, B


# ------------------------------------------------------------------------------ torchvision
def torchvision_float(name, path, opset=13):
    """Export torchvision `name` (random weights) to path, once (cached)."""
    if os.path.exists(path):
        return onnx.load(path)
    import torch
    import torchvision
    torch.manual_seed(0)
    net = getattr(torchvision.models, name)(weights=None).eval()
    tmp = "%s.%d.tmp" % (path, os.getpid())  # suites running side by side may export it at once
    torch.onnx.export(net, torch.randn(1, 3, 224, 224), tmp, opset_version=opset,
                      input_names=["input"], output_names=["output"])
    os.replace(tmp, path)
    return onnx.load(path)


def _inits(m):
    return {t.name: t for t in m.graph.initializer}


def inline_identities(m):
    """A copy of m where Identity nodes of initializers (PyTorch shares equal weights that
    way) are replaced by initializers of their own."""
    out = onnx.ModelProto()
    out.CopyFrom(m)
    inits = _inits(out)
    keep = []
    for n in out.graph.node:
        if n.op_type == "Identity" and n.input[0] in inits:
            t = TensorProto()
            t.CopyFrom(inits[n.input[0]])
            t.name = n.output[0]
            out.graph.initializer.append(t)
            inits[t.name] = t
        else:
            keep.append(n)
    del out.graph.node[:]
    out.graph.node.extend(keep)
    return out


def _quant_sym_per_channel(w):
    """int8 symmetric per output channel (axis 0)."""
    w = f32(w)
    amax = np.abs(w.reshape(w.shape[0], -1)).max(axis=1)
    scale = f32(np.where(amax > 0, amax / 127.0, 1.0))
    q = np.clip(np.round(w / scale.reshape([-1] + [1] * (w.ndim - 1))), -127, 127).astype(np.int8)
    return q, scale


ACT_SCALE, ACT_ZP = np.float32(0.05), np.uint8(128)


def qdq(m):
    """Static QDQ quantization (onnxruntime's QDQ layout) of a float model, by hand."""
    m = inline_identities(m)
    g = m.graph
    inits = _inits(m)
    new_inits = [t for t in g.initializer]
    new_nodes = []
    consumers = {}
    for n in g.node:
        for i in n.input:
            consumers.setdefault(i, []).append(n)
    # activations: every float value made by a node or given as input and used by a node
    acts = [i.name for i in g.input if i.name not in inits]
    for n in g.node:
        if n.op_type in ("Constant",):
            continue
        acts.extend(o for o in n.output if o in consumers or o in [x.name for x in g.output])
    new_inits.append(numpy_helper.from_array(np.array(ACT_SCALE, np.float32), "act_scale"))
    new_inits.append(numpy_helper.from_array(np.array(ACT_ZP, np.uint8), "act_zp"))
    rename = {}
    outs = {o.name for o in g.output}
    for a in acts:
        rename[a] = a + "_dq"
    def q_pair(a):
        # a graph output keeps its name on the last DequantizeLinear, as onnxruntime does
        src = a + "_prequant" if a in outs else a
        return [helper.make_node("QuantizeLinear", [src, "act_scale", "act_zp"], [a + "_q"],
                                 name=a + "_QuantizeLinear"),
                helper.make_node("DequantizeLinear", [a + "_q", "act_scale", "act_zp"],
                                 [a if a in outs else rename[a]], name=a + "_DequantizeLinear")]
    for i in g.input:
        if i.name in rename:
            new_nodes += q_pair(i.name)
    wscale = {}
    for n in g.node:
        nn = onnx.NodeProto()
        nn.CopyFrom(n)
        del nn.input[:]
        for k, i in enumerate(n.input):
            if n.op_type in ("Conv", "Gemm") and k == 1 and i in inits:
                w = numpy_helper.to_array(inits[i])
                if n.op_type == "Gemm":
                    tb = [a.i for a in n.attribute if a.name == "transB"]
                    w_ = w if tb and tb[0] else w.T
                    q, s = _quant_sym_per_channel(w_)
                    q = q if tb and tb[0] else q.T
                    axis = 0 if tb and tb[0] else 1
                else:
                    q, s = _quant_sym_per_channel(w)
                    axis = 0
                new_inits.append(numpy_helper.from_array(q, i + "_quantized"))
                new_inits.append(numpy_helper.from_array(s, i + "_scale"))
                new_inits.append(numpy_helper.from_array(np.zeros(s.shape, np.int8), i + "_zero_point"))
                new_nodes.append(helper.make_node("DequantizeLinear", [i + "_quantized", i + "_scale", i + "_zero_point"],
                                                  [i + "_DequantizeLinear_Output"], axis=axis,
                                                  name=i + "_DequantizeLinear"))
                wscale[n.name] = s
                nn.input.append(i + "_DequantizeLinear_Output")
            elif n.op_type in ("Conv", "Gemm") and k == 2 and i in inits:
                b = numpy_helper.to_array(inits[i])
                s = f32(ACT_SCALE * wscale[n.name])
                q = np.round(b / s).astype(np.int32)
                new_inits.append(numpy_helper.from_array(q, i + "_quantized"))
                new_inits.append(numpy_helper.from_array(s, i + "_scale"))
                new_nodes.append(helper.make_node("DequantizeLinear", [i + "_quantized", i + "_scale"],
                                                  [i + "_DequantizeLinear_Output"], axis=0,
                                                  name=i + "_DequantizeLinear"))
                nn.input.append(i + "_DequantizeLinear_Output")
            else:
                nn.input.append(rename.get(i, i))
        for k, o in enumerate(n.output):
            if o in outs:
                nn.output[k] = o + "_prequant"
        new_nodes.append(nn)
        for o in n.output:
            if o in rename:
                new_nodes += q_pair(o)
    used = {i for n in new_nodes for i in n.input}
    new_inits = [t for t in new_inits if t.name in used]
    out = onnx.ModelProto()
    out.CopyFrom(m)
    del out.graph.node[:]
    out.graph.node.extend(new_nodes)
    del out.graph.initializer[:]
    out.graph.initializer.extend(new_inits)
    del out.graph.value_info[:]
    return out


def dynamic(m):
    """Dynamic quantization (onnxruntime's ConvInteger / MatMulInteger layout) of every Conv
    and every MatMul by a constant, by hand."""
    m = inline_identities(m)
    g = m.graph
    inits = _inits(m)
    new_inits = [t for t in g.initializer]
    new_nodes = []
    dql = {}
    for n in g.node:
        if n.op_type not in ("Conv", "MatMul") or len(n.input) < 2 or n.input[1] not in inits:
            new_nodes.append(n)
            continue
        x, w = n.input[0], n.input[1]
        if x not in dql:
            dql[x] = (x + "_quantized", x + "_scale", x + "_zero_point")
            new_nodes.append(helper.make_node("DynamicQuantizeLinear", [x], list(dql[x]),
                                              name=x + "_QuantizeLinear"))
        xq, xs, xz = dql[x]
        wf = numpy_helper.to_array(inits[w])
        amax = float(np.abs(wf).max()) or 1.0
        ws = np.float32(amax / 127.0)
        wq = np.clip(np.round(wf / ws), -127, 127).astype(np.int8)
        new_inits += [numpy_helper.from_array(wq, w + "_quantized"),
                      numpy_helper.from_array(np.array(ws, np.float32), w + "_scale"),
                      numpy_helper.from_array(np.array(0, np.int8), w + "_zero_point")]
        base = n.name or n.output[0]
        attrs = [a for a in n.attribute]
        ci = helper.make_node(n.op_type + "Integer", [xq, w + "_quantized", xz, w + "_zero_point"],
                              [base + "_output_quantized"], name=base + "_quant")
        ci.attribute.extend(attrs)
        new_nodes += [ci,
                      helper.make_node("Cast", [base + "_output_quantized"], [base + "_output_quantized_cast_output"],
                                       to=TensorProto.FLOAT, name=base + "_output_quantized_cast"),
                      helper.make_node("Mul", [xs, w + "_scale"], [base + "_scales_mul"],
                                       name=base + "_scales_mul"),
                      ]
        if len(n.input) > 2 and n.input[2]:
            new_nodes.append(helper.make_node("Mul", [base + "_output_quantized_cast_output", base + "_scales_mul"],
                                              [base + "_output_scaled"], name=base + "_output_scale_mul"))
            b = numpy_helper.to_array(inits[n.input[2]]).reshape(1, -1, 1, 1)
            new_inits.append(numpy_helper.from_array(b, n.input[2] + "_reshaped"))
            new_nodes.append(helper.make_node("Add", [base + "_output_scaled", n.input[2] + "_reshaped"],
                                              [n.output[0]], name=base + "_bias_add"))
        else:
            new_nodes.append(helper.make_node("Mul", [base + "_output_quantized_cast_output", base + "_scales_mul"],
                                              [n.output[0]], name=base + "_output_scale_mul"))
    used = {i for n in new_nodes for i in n.input}
    out = onnx.ModelProto()
    out.CopyFrom(m)
    del out.graph.node[:]
    out.graph.node.extend(new_nodes)
    del out.graph.initializer[:]
    out.graph.initializer.extend([t for t in new_inits if t.name in used])
    del out.graph.value_info[:]
    return out


def qoperator():
    """A small QOperator model: Q -> QLinearConv -> QLinearAdd -> QLinearGlobalAveragePool
    -> QLinearMatMul -> DQ."""
    rng = np.random.default_rng(5)
    u8 = lambda v, n: numpy_helper.from_array(np.array(v, np.uint8), n)  # noqa: E731
    fs = lambda v, n: numpy_helper.from_array(np.array(v, np.float32), n)  # noqa: E731
    w = rng.integers(-127, 128, size=(8, 3, 3, 3)).astype(np.int8)
    w2 = rng.integers(-127, 128, size=(8, 4)).astype(np.int8)
    inits = [fs(0.02, "xs"), u8(128, "xz"), numpy_helper.from_array(w, "w"),
             fs(rng.uniform(0.001, 0.01, 8).astype(np.float32), "ws"),
             numpy_helper.from_array(np.zeros(8, np.int8), "wz"), fs(0.05, "ys"), u8(120, "yz"),
             numpy_helper.from_array(rng.integers(-1000, 1000, 8).astype(np.int32), "b"),
             numpy_helper.from_array(w2, "w2"), fs(0.01, "w2s"), numpy_helper.from_array(np.array(0, np.int8), "w2z"),
             fs(0.1, "zs"), u8(128, "zz")]
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"], name="x_q"),
        helper.make_node("QLinearConv", ["xq", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b"], ["c"],
                         name="conv", pads=[1, 1, 1, 1]),
        helper.make_node("QLinearAdd", ["c", "ys", "yz", "c", "ys", "yz", "ys", "yz"], ["a"],
                         domain=MS, name="add"),
        helper.make_node("QLinearGlobalAveragePool", ["a", "ys", "yz", "ys", "yz"], ["p"], domain=MS,
                         name="gap", channels_last=0),
        helper.make_node("Reshape", ["p", "shape"], ["r"], name="flatten"),
        helper.make_node("QLinearMatMul", ["r", "ys", "yz", "w2", "w2s", "w2z", "zs", "zz"], ["mm"],
                         name="fc"),
        helper.make_node("DequantizeLinear", ["mm", "zs", "zz"], ["y"], name="y_dq"),
    ]
    inits.append(numpy_helper.from_array(np.array([1, 8], np.int64), "shape"))
    return model(nodes, inits, [vi("x", shape=[1, 3, 8, 8])], [vi("y")], ms=True)


def small_mlp():
    """A float MLP head (MatMul + Add + Relu twice, Softmax) for the MatMulInteger path."""
    rng = np.random.default_rng(2)
    inits = [numpy_helper.from_array(f32(rng.standard_normal((16, 32)) * 0.1), "fc1.weight"),
             numpy_helper.from_array(f32(rng.standard_normal(32) * 0.1), "fc1.bias"),
             numpy_helper.from_array(f32(rng.standard_normal((32, 8)) * 0.1), "fc2.weight"),
             numpy_helper.from_array(f32(rng.standard_normal(8) * 0.1), "fc2.bias")]
    nodes = [helper.make_node("MatMul", ["input", "fc1.weight"], ["h0"], name="/fc1/MatMul"),
             helper.make_node("Add", ["h0", "fc1.bias"], ["h1"], name="/fc1/Add"),
             helper.make_node("Relu", ["h1"], ["h2"], name="/act/Relu"),
             helper.make_node("MatMul", ["h2", "fc2.weight"], ["h3"], name="/fc2/MatMul"),
             helper.make_node("Add", ["h3", "fc2.bias"], ["h4"], name="/fc2/Add"),
             helper.make_node("Softmax", ["h4"], ["output"], name="/head/Softmax", axis=-1)]
    return model(nodes, inits, [vi("input", shape=[4, 16])], [vi("output", shape=[4, 8])], opset=13)


def small_float():
    """A small float convnet (Conv, Relu, Add, MaxPool, GlobalAveragePool, Flatten, Gemm)
    named by module path like an export, for the QDQ and dynamic transforms."""
    rng = np.random.default_rng(1)
    w = lambda *s: numpy_helper.from_array(f32(rng.standard_normal(s) * 0.1), "w%d" % len(inits))  # noqa: E731
    inits, nodes = [], []

    def conv(x, cin, cout, name, k=3):
        inits.append(w(cout, cin, k, k))
        wn = inits[-1].name
        inits.append(numpy_helper.from_array(f32(rng.standard_normal(cout) * 0.1), wn + "_b"))
        nodes.append(helper.make_node("Conv", [x, wn, wn + "_b"], [name + "_out"], name=name + "/Conv",
                                      pads=[k // 2] * 4, kernel_shape=[k, k]))
        return name + "_out"

    def relu(x, name):
        nodes.append(helper.make_node("Relu", [x], [name + "_out"], name=name + "/Relu"))
        return name + "_out"

    x = relu(conv("input", 3, 8, "/stem/conv"), "/stem/relu")
    nodes.append(helper.make_node("MaxPool", [x], ["pool_out"], name="/stem/MaxPool", kernel_shape=[2, 2],
                                  strides=[2, 2]))
    x = "pool_out"
    for b in range(2):
        y = relu(conv(x, 8, 8, "/block%d/conv1" % b), "/block%d/relu1" % b)
        y = conv(y, 8, 8, "/block%d/conv2" % b)
        nodes.append(helper.make_node("Add", [y, x], ["/block%d/add_out" % b], name="/block%d/Add" % b))
        x = relu("/block%d/add_out" % b, "/block%d/relu2" % b)
    nodes.append(helper.make_node("GlobalAveragePool", [x], ["gap_out"], name="/head/GlobalAveragePool"))
    nodes.append(helper.make_node("Flatten", ["gap_out"], ["flat_out"], name="/head/Flatten"))
    inits.append(numpy_helper.from_array(f32(rng.standard_normal((10, 8)) * 0.1), "fc.weight"))
    inits.append(numpy_helper.from_array(f32(rng.standard_normal(10) * 0.1), "fc.bias"))
    nodes.append(helper.make_node("Gemm", ["flat_out", "fc.weight", "fc.bias"], ["output"], name="/head/fc/Gemm",
                                  transB=1))
    return model(nodes, inits, [vi("input", shape=[1, 3, 16, 16])], [vi("output", shape=[1, 10])], opset=13)


SMALL = ("qoperator", "small_float", "small_qdq", "small_dynamic", "small_mlp_dynamic", "dq_block_int4",
         "nbits4_zp", "nbits4_nozp", "gbq_uint8_packed", "dq_axis0_int8")


def write_small(outdir):
    """The small quantized models committed under tests/data/quant (render corpus, fuzz
    seeds): regenerated by `quant_models.py --small tests/data/quant`."""
    os.makedirs(outdir, exist_ok=True)
    sf = small_float()
    ms = {"qoperator": qoperator(), "small_float": sf, "small_qdq": qdq(sf), "small_dynamic": dynamic(sf),
          "small_mlp_dynamic": dynamic(small_mlp())}
    for name, m, _, _ in dequant_cases():
        ms[name] = m
    for name in SMALL:
        ms[name].producer_name = "quant_models.py"
        onnx.save(ms[name], os.path.join(outdir, name + ".onnx"))


# ------------------------------------------------------------------------------ hostile cases
def hostile_dequant_cases():
    """Pairings whose attributes or dims would break the dequantization arithmetic (issue
    22): [(name, ModelProto, tensor, error, says, ref)].  error is the oxp code name the
    pairing must fail with (oxp_code_name: 'out_of_range', 'bad_storage'), says a word its
    message must hold (the attribute or dim at fault); or error is None, the model is
    valid, and ref is the float32 reference of the tensor's dequantized values.
    gbq_block0 is the issue's 2 KB model whose preview killed the server (SIGFPE)."""
    rng = np.random.default_rng(22)
    cases = []
    R, S = "out_of_range", "bad_storage"

    def gbq(name, error, says, data_dims=(4, 8), block_size=0, bits=4, quantize_axis=1,
            scale_dims=(4, 1), zp_dims=(4, 1), data_type=TensorProto.UINT8):
        data = rng.integers(0, 256, size=data_dims).astype(np.uint8)
        if data_type == TensorProto.UINT8:
            dt = numpy_helper.from_array(data, "W")
        else:
            dt = int4_tensor("W", data.astype(np.int64) % 16 - 8, data_type == INT4)
        scales = f32(rng.uniform(0.01, 0.1, size=scale_dims))
        zp = rng.integers(0, 256, size=zp_dims).astype(np.uint8)
        node = helper.make_node("GatherBlockQuantized", ["W", "idx", "scales", "zp"], ["y"],
                                domain=MS, gather_axis=0, quantize_axis=quantize_axis,
                                block_size=block_size, bits=bits)
        m = model([node], [dt, numpy_helper.from_array(scales, "scales"),
                           numpy_helper.from_array(zp, "zp")],
                  [vi("idx", TensorProto.INT64, [2])], [vi("y")], ms=True, opset=21, ir=10)
        ref = None
        if error is None:  # 4 bits packed low nibble first along the last axis
            q = np.stack([data & 0xF, data >> 4], axis=-1).reshape(data.shape[0], -1)
            ref = ref_dequant(q, scales, zp & 0xF, quantize_axis, min(block_size, q.shape[1]))
        cases.append((name, m, "W", error, says, ref))

    gbq("gbq_block0", R, "block_size")  # the model
    gbq("gbq_block_negative", R, "block_size", block_size=-16)
    gbq("gbq_block_int64_min", R, "block_size", block_size=-2**63)
    gbq("gbq_zero_axis", R, "length 0", data_dims=(0, 8), block_size=16, quantize_axis=0,
        scale_dims=(0, 16), zp_dims=(0, 8))  # count / dim with dim 0
    gbq("gbq_zero_last_axis", R, "length 0", data_dims=(4, 0), block_size=16, scale_dims=(4, 0),
        zp_dims=(4, 0))
    gbq("gbq_bits_huge", R, "bits", block_size=16, bits=2**62)
    gbq("gbq_bits_3", R, "bits", block_size=16, bits=3)
    gbq("gbq_bits_negative", R, "bits", block_size=16, bits=-4)
    gbq("gbq_int4_bits_2", R, "bits", block_size=16, bits=2, data_type=INT4)
    gbq("gbq_axis_out_of_range", R, "axis", block_size=16, quantize_axis=2)
    gbq("gbq_axis_int64_min", R, "axis", block_size=16, quantize_axis=-2**63)
    gbq("gbq_block_over_dim_bad_scales", S, "scale", block_size=32, scale_dims=(4, 2))
    gbq("gbq_block_over_dim", None, None, block_size=2**62)  # one partial block: valid

    def dq(name, error, says, q_dims, scale_dims, axis=1, block_size=0):
        q = rng.integers(-128, 128, size=q_dims).astype(np.int8)
        scale = f32(rng.uniform(0.01, 0.1, size=scale_dims))
        attrs = {"axis": axis}
        if block_size:
            attrs["block_size"] = block_size
        nodes = [helper.make_node("DequantizeLinear", ["W", "scale"], ["w"], **attrs),
                 helper.make_node("Add", ["x", "w"], ["y"])]
        m = model(nodes, [numpy_helper.from_array(q, "W"), numpy_helper.from_array(scale, "scale")],
                  [vi("x", shape=list(q_dims))], [vi("y")], opset=21, ir=10)
        cases.append((name, m, "W", error, says, None))

    dq("dq_block_negative", R, "block_size", (4, 8), (4, 2), block_size=-4)
    dq("dq_zero_axis", S, "scale", (4, 0), (4, 0), block_size=4)
    dq("dq_zero_axis_per_axis", S, "scale", (0, 4), (0,), axis=0)
    dq("dq_zero_inner", R, "length 0", (4, 8, 0), (8,), axis=1)  # i / inner with inner 0
    dq("dq_axis_huge", R, "axis", (4, 8), (8,), axis=2**62)

    def nbits(name, says, K=32, N=4, bits=4, block_size=16, error=R):
        B = rng.integers(0, 256, size=(min(N, 4), 2, 8)).astype(np.uint8)
        scales = f32(rng.uniform(0.01, 0.1, size=(8,)))
        node = helper.make_node("MatMulNBits", ["A", "B", "scales"], ["y"], domain=MS, K=K, N=N,
                                bits=bits, block_size=block_size)
        m = model([node], [numpy_helper.from_array(B, "B"), numpy_helper.from_array(scales, "scales")],
                  [vi("A", shape=[1, max(K, 1)])], [vi("y")], ms=True)
        cases.append((name, m, "B", error, says, None))

    nbits("nbits_block0", "block_size", block_size=0)
    nbits("nbits_block_negative", "block_size", block_size=-16)
    nbits("nbits_bits_huge", "bits", bits=2**62)
    nbits("nbits_K0", "K=0", K=0)
    nbits("nbits_N_huge", "B holds", N=2**40, error=S)
    return cases


def write_hostile(outdir):
    """The hostile pairings, committed under tests/data/quant/hostile for the unit tests
    (tests/unit/test_quant.c), with index.txt: what each must answer."""
    os.makedirs(outdir, exist_ok=True)
    with open(os.path.join(outdir, "index.txt"), "w") as f:
        f.write("# model tensor error says (- when valid): quant_models.py --hostile DIR\n")
        for name, m, tensor, error, says, _ in hostile_dequant_cases():
            m.producer_name = "quant_models.py"
            onnx.save(m, os.path.join(outdir, name + ".onnx"))
            f.write("%s %s %s %s\n" % (name, tensor, error or "-", (says or "-").replace(" ", "+")))


def write_all(outdir, torchvision=True):
    os.makedirs(outdir, exist_ok=True)
    index = {"dequant": [], "drawings": {}}
    for name, m, refs, info in dequant_cases():
        path = os.path.join(outdir, name + ".onnx")
        onnx.save(m, path)
        entry = {"name": name, "path": path, "tensors": {}}
        for t, ref in refs.items():
            np.save(os.path.join(outdir, "%s.%s.npy" % (name, t)), ref)
            np.save(os.path.join(outdir, "%s.%s.raw.npy" % (name, t)), np.asarray(info[t]["raw"]))
            entry["tensors"][t] = {"ref": os.path.join(outdir, "%s.%s.npy" % (name, t)),
                                   "raw": os.path.join(outdir, "%s.%s.raw.npy" % (name, t)),
                                   "qmin": info[t]["qmin"], "qmax": info[t]["qmax"],
                                   "op": info[t]["op"]}
        index["dequant"].append(entry)
    p = os.path.join(outdir, "qoperator.onnx")
    onnx.save(qoperator(), p)
    index["drawings"]["qoperator"] = p
    if torchvision:
        cache = os.environ.get("ONNXVIZ_QUANT_CACHE") or os.path.join(
            os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "onnxviz-quant")
        os.makedirs(cache, exist_ok=True)
        fm = torchvision_float("resnet18", os.path.join(cache, "resnet18_op13.onnx"))
        for kind, fn in (("float", None), ("qdq", qdq), ("dynamic", dynamic)):
            p = os.path.join(outdir, "resnet18_%s.onnx" % kind)
            onnx.save(fm if fn is None else fn(fm), p)
            index["drawings"]["resnet18_" + kind] = p
    return index


if __name__ == "__main__":
    if sys.argv[1] == "--small":
        write_small(sys.argv[2])
    elif sys.argv[1] == "--hostile":
        write_hostile(sys.argv[2])
    else:
        print(json.dumps(write_all(sys.argv[1], torchvision="--no-torch" not in sys.argv)))
