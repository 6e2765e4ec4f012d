"""Dequantized previews and negative zeros (preview suite; docs/quant.md).

Every model comes from tests/data/quant_models.py (built by hand with python3-onnx; INT4 and
UINT4 bytes packed by hand).  The oracle is numpy: (q - zero_point) * scale in float32,
compared bit for bit (signed zeros included) in JSON and in .npy; statistics, saturation
and levels are recomputed from the reference arrays.
"""
import io
import json
import math
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data"))
import quant_models as QM  # noqa: E402

H = None  # the http suite's helpers, set by run()
check = None


def jload(body):
    """JSON with "-0" read as -0.0 (Python's json makes it the integer 0)."""
    return json.loads(body, parse_int=lambda t: -0.0 if t == "-0" else int(t))


def jfloat(v):
    if isinstance(v, str):
        return {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}[v]
    return float(v)


def f32_bits(a):
    return np.asarray(a, np.float32).view(np.uint32)


def hist_ref(ref, nbins):
    """The documented rule (docs/tensors.md): floor((v - lo) / (hi - lo) * nbins) over
    [min, max], the last bin closed; all equal: [v - 0.5, v + 0.5]."""
    f = ref.astype(np.float64).ravel()
    lo, hi = f.min(), f.max()
    if not hi > lo:
        lo, hi = lo - 0.5, hi + 0.5
    b = np.floor((f - lo) / (hi - lo) * nbins).astype(np.int64)
    b = np.clip(b, 0, nbins - 1)
    return np.bincount(b, minlength=nbins)


EXPECT_GRAN = {"tensor": "per-tensor", "axis": "per-axis", "block": "blocked", "nbits": "blocked",
               "gbq": "blocked"}


def upload(s, path, parts=()):
    if parts:
        form = [("model", "@" + path)] + [(loc, "@" + p) for loc, p in parts]
        return H.curl(s.url("/models"), form=form)
    return H.curl(s.url("/models"), data_file=path)


def check_case(s, mid, name, tensor, ref, raw, qmin, qmax, op, nbins=16):
    url = "/models/%s/tensors/%s" % (mid, tensor)
    r = H.curl(s.url(url + "?dequantize=1&values=100000&bins=%d" % nbins))
    if not check(r.status == 200, "%s dequantize: %r" % (name, r)):
        return
    j = jload(r.body)
    data = np.array([jfloat(v) for v in j["values"]["data"]], np.float32)
    check(j["dtype"] == "FLOAT" and j["dims"] == list(ref.shape) and j["count"] == ref.size,
          "%s: dtype/dims/count %s %s %s" % (name, j["dtype"], j["dims"], j["count"]))
    check(data.size == ref.size and np.array_equal(f32_bits(data), f32_bits(ref.ravel())),
          "%s: JSON values equal numpy's (q - zp) * scale bit for bit" % name)
    dq = j["dequantized"]
    kind = (name.split("_")[1] if name.startswith("dq_") else name.split("_")[0]).rstrip("0123456789")
    check(dq["op_type"] == op and dq["granularity"] == EXPECT_GRAN[kind] and dq["scale"] is not None,
          "%s: says what dequantized it: %r" % (name, dq))
    if "nozp" in name:
        check(dq["zero_point"] is None and "zero_point_default" in dq, "%s: default zero point %r" % (name, dq))
    else:
        check(dq["zero_point"] is not None, "%s: names its zero point" % name)
    st = j["stats"]
    f = ref.astype(np.float64).ravel()
    check(np.float32(st["min"]) == ref.min() and np.float32(st["max"]) == ref.max(),
          "%s: min/max %r %r vs %r %r" % (name, st["min"], st["max"], ref.min(), ref.max()))
    check(abs(st["mean"] - f.mean()) <= 1e-9 * max(1, abs(f.mean())) and
          abs(st["std"] - f.std()) <= 1e-9 * max(1, f.std()),
          "%s: mean/std %r %r vs %r %r" % (name, st["mean"], st["std"], f.mean(), f.std()))
    check(st["zeros"] == int((f == 0).sum()), "%s: zeros %r" % (name, st["zeros"]))
    check(st["histogram"]["counts"] == hist_ref(ref, nbins).tolist(),
          "%s: histogram %r vs %r" % (name, st["histogram"]["counts"], hist_ref(ref, nbins).tolist()))
    q = st["quant"]
    raw = np.asarray(raw)
    want = {"qmin": qmin, "qmax": qmax, "saturated_low": int((raw == qmin).sum()),
            "saturated_high": int((raw == qmax).sum()), "levels": int(np.unique(raw).size),
            "levels_possible": qmax - qmin + 1}
    check(q == want, "%s: saturation and levels %r vs %r" % (name, q, want))
    # .npy, whole and a slice
    r = H.curl(s.url(url + "?dequantize=1&format=npy"))
    a = np.load(io.BytesIO(r.body)) if r.status == 200 else None
    check(a is not None and a.dtype == np.float32 and a.shape == ref.shape and
          np.array_equal(f32_bits(a), f32_bits(ref)),
          "%s: .npy equals numpy bit for bit" % name)
    off = ref.size // 3
    r = H.curl(s.url(url + "?dequantize=1&format=npy&offset=%d&values=%d" % (off, ref.size - off)))
    a = np.load(io.BytesIO(r.body)) if r.status == 200 else None
    check(a is not None and np.array_equal(f32_bits(a), f32_bits(ref.ravel()[off:])),
          "%s: .npy slice from %d" % (name, off))
    # the raw answer stays integers and points at dequantize
    r = H.curl(s.url(url + "?values=4"))
    j = jload(r.body) if r.status == 200 else {}
    check(j.get("dtype") not in (None, "FLOAT") and j.get("quantized_by", {}).get("op_type") == op,
          "%s: raw answer keeps its integers and says quantized_by: %r" % (name, j.get("quantized_by")))
    return st


def t_cases(s, outdir):
    cases = QM.dequant_cases()
    for name, m, refs, info in cases:
        path = os.path.join(outdir, name + ".onnx")
        onnx.save(m, path)
        r = upload(s, path)
        if not check(r.status in (200, 201), "%s upload: %r" % (name, r)):
            continue
        mid = r.json()["id"]
        for t, ref in refs.items():
            check_case(s, mid, name, t, ref, info[t]["raw"], info[t]["qmin"], info[t]["qmax"],
                       info[t]["op"])
    n_bits_exact = sum(len(c[2]) for c in cases)
    print("  %d quantized tensors dequantized (DequantizeLinear per-tensor/per-axis/blocked "
          "int8/uint8/int4/uint4/int2/uint2, MatMulNBits 2/4/8 bits, GatherBlockQuantized)" % n_bits_exact)


def t_big_external(s, outdir):
    """A 2M-value MatMulNBits weight whose data, scales and zero points are external: the
    statistics stream in pieces, the parameters come from the data file."""
    N, K, bs = 512, 4096, 32
    m, q, z, scales, _ = QM.big_nbits(np.random.default_rng(3), N, K, bs, 4)
    d = os.path.join(outdir, "big")
    os.makedirs(d, exist_ok=True)
    onnx.save(m, os.path.join(d, "nbits.onnx"), save_as_external_data=True, all_tensors_to_one_file=True,
              location="nbits.bin", size_threshold=0)
    r = upload(s, os.path.join(d, "nbits.onnx"), [("nbits.bin", os.path.join(d, "nbits.bin"))])
    if not check(r.status in (200, 201), "external nbits upload: %r" % r):
        return
    mid = r.json()["id"]
    ref = (q - np.repeat(z, bs, axis=1)).astype(np.float32) * np.repeat(scales, bs, axis=1)
    url = "/models/%s/tensors/B?dequantize=1" % mid
    r = H.curl(s.url(url + "&values=1000&offset=1000000&bins=64"))
    j = jload(r.body) if r.status == 200 else None
    if not check(j is not None, "external nbits preview: %r" % r):
        return
    got = np.array([jfloat(v) for v in j["values"]["data"]], np.float32)
    check(np.array_equal(f32_bits(got), f32_bits(ref.ravel()[1000000:1001000])),
          "external nbits: a page from the middle, bit for bit")
    st = j["stats"]
    f = ref.astype(np.float64)
    check(np.float32(st["min"]) == ref.min() and np.float32(st["max"]) == ref.max() and
          abs(st["mean"] - f.mean()) < 1e-12 and abs(st["std"] - f.std()) < 1e-9 * f.std(),
          "external nbits: statistics over 2M values in pieces %r" % {k: st[k] for k in ("min", "max", "mean", "std")})
    check(st["histogram"]["counts"] == hist_ref(ref, 64).tolist(), "external nbits: histogram")
    r = H.curl(s.url(url + "&format=npy"))
    a = np.load(io.BytesIO(r.body)) if r.status == 200 else None
    check(a is not None and a.shape == (N, K) and np.array_equal(f32_bits(a), f32_bits(ref)),
          "external nbits: .npy [N, K] bit for bit")


def t_models(s, outdir):
    """Weights of the QDQ, dynamic and QOperator models: per-channel int8, int32 biases,
    the dynamic ConvInteger weight whose scale is in the Mul after it."""
    models = {"qoperator": QM.qoperator()}
    try:
        fm = QM.torchvision_float("resnet18", os.path.join(QM_CACHE, "resnet18_op13.onnx"))
        models["qdq"] = QM.qdq(fm)
        models["dynamic"] = QM.dynamic(fm)
    except ImportError as e:  # torch is part of the test image; say so when it is not
        check(False, "torchvision export: %r" % e)
    for kind, m in models.items():
        path = os.path.join(outdir, "%s.onnx" % kind)
        onnx.save(m, path)
        r = upload(s, path)
        if not check(r.status in (200, 201), "%s upload: %r" % (kind, r)):
            continue
        mid = r.json()["id"]
        inits = {t.name: numpy_helper.to_array(t) for t in m.graph.initializer}
        if kind == "qdq":
            w, b = "/layer2/layer2.0/conv1/Conv", None
            names = [n for n in inits if n.endswith("_quantized")]
            picks = [names[0], [n for n in names if inits[n].dtype == np.int32][0]]
            for t in picks:
                base = t[: -len("_quantized")]
                q = inits[t]
                sc = inits[base + "_scale"]
                zp = inits.get(base + "_zero_point")
                ref = QM.ref_dequant(q, sc, zp, 0)
                r = H.curl(s.url("/models/%s/tensors/%s?dequantize=1&format=npy" % (mid, t)))
                a = np.load(io.BytesIO(r.body)) if r.status == 200 else None
                check(a is not None and np.array_equal(f32_bits(a), f32_bits(ref)),
                      "qdq %s (%s per-channel) bit for bit" % (t, q.dtype))
            del w, b
        elif kind == "dynamic":
            t = [n for n in inits if n.endswith("_quantized")][0]
            ref = QM.ref_dequant(inits[t], inits[t[: -len("_quantized")] + "_scale"],
                                 inits[t[: -len("_quantized")] + "_zero_point"])
            r = H.curl(s.url("/models/%s/tensors/%s?dequantize=1&format=npy" % (mid, t)))
            a = np.load(io.BytesIO(r.body)) if r.status == 200 else None
            check(a is not None and np.array_equal(f32_bits(a), f32_bits(ref)),
                  "dynamic %s: ConvInteger weight with the scale of its Mul chain" % t)
            r = H.curl(s.url("/models/%s/tensors/%s?dequantize=1&values=1" % (mid, t)))
            check(r.status == 200 and r.json()["dequantized"]["op_type"] == "ConvInteger",
                  "dynamic: paired by ConvInteger %r" % r)
        else:
            for t, sc, zp, axis in (("w", "ws", "wz", 0), ("w2", "w2s", "w2z", 1)):
                ref = QM.ref_dequant(inits[t], inits[sc], inits[zp], axis)
                r = H.curl(s.url("/models/%s/tensors/%s?dequantize=1&format=npy" % (mid, t)))
                a = np.load(io.BytesIO(r.body)) if r.status == 200 else None
                check(a is not None and np.array_equal(f32_bits(a), f32_bits(ref)),
                      "qoperator %s bit for bit" % t)


def t_refusals(s, outdir):
    rng = np.random.default_rng(9)
    q = rng.integers(-128, 128, size=(4, 6)).astype(np.int8)
    m = QM.model([helper.make_node("DequantizeLinear", ["q", "s"], ["w"], axis=0),
                  helper.make_node("MatMul", ["x", "w"], ["y"]),
                  helper.make_node("DequantizeLinear", ["q2", "s2"], ["w2"]),
                  helper.make_node("Add", ["y", "f"], ["z"])],
                 [numpy_helper.from_array(q, "q"), numpy_helper.from_array(np.ones(5, np.float32), "s"),
                  numpy_helper.from_array(q, "q2"),
                  numpy_helper.from_array(np.ones(4, np.float32), "f")],
                 [QM.vi("x", shape=[1, 4]), QM.vi("s2", shape=[])], [QM.vi("z")])
    path = os.path.join(outdir, "refusals.onnx")
    onnx.save(m, path)
    mid = upload(s, path).json()["id"]
    r = H.curl(s.url("/models/%s/tensors/q?dequantize=1" % mid))
    check(r.status == 422 and r.error_code() == "bad_quantization" and "scale has 5" in r.json()["error"]["message"],
          "a scale that does not fit the axis: 422 bad_quantization %r" % r)
    r = H.curl(s.url("/models/%s/tensors/q2?dequantize=1" % mid))
    check(r.status == 422 and r.error_code() == "bad_quantization", "a computed scale: 422 %r" % r)
    r = H.curl(s.url("/models/%s/tensors/f?dequantize=1" % mid))
    check(r.status == 422 and r.error_code() == "not_quantized", "a float tensor: 422 not_quantized %r" % r)
    r = H.curl(s.url("/models/%s/tensors/f?values=2" % mid))
    check(r.status == 200 and "quantized_by" not in r.json(), "a float tensor has no quantized_by")
    for bad in ("2", "yes", ""):
        r = H.curl(s.url("/models/%s/tensors/q?dequantize=%s" % (mid, bad)))
        check(r.status == 400 and r.error_code() == "bad_query", "dequantize=%s: 400 %r" % (bad, r))
    # a lone TensorProto has no graph to pair it with a scale
    t = numpy_helper.from_array(q, "q")
    p = os.path.join(outdir, "lone.pb")
    with open(p, "wb") as f:
        f.write(t.SerializeToString())
    tid = upload(s, p).json()["id"]
    r = H.curl(s.url("/models/%s/tensors/q?dequantize=1" % tid))
    check(r.status == 422 and r.error_code() == "not_quantized", "tensor upload: 422 %r" % r)


def t_hostile(s, outdir):
    """Pairings that do not fit: every one is a 422 naming the problem, the drawing still
    draws, and the server answers the next request."""
    u8 = lambda a, n: numpy_helper.from_array(np.asarray(a, np.uint8), n)  # noqa: E731
    f = lambda a, n: numpy_helper.from_array(np.asarray(a, np.float32), n)  # noqa: E731
    i8 = lambda a, n: numpy_helper.from_array(np.asarray(a, np.int8), n)  # noqa: E731

    def nbits(name, B, scales, zp=None, **attrs):
        ins = ["A", "B", "scales"] + (["zp"] if zp is not None else [])
        inits = [B, scales] + ([zp] if zp is not None else [])
        return name, "B", QM.model([helper.make_node("MatMulNBits", ins, ["y"], domain=QM.MS, **attrs)],
                                   inits, [QM.vi("A")], [QM.vi("y")], ms=True)

    def dq(name, x, scale, zp=None, **attrs):
        ins = ["x", "s"] + (["z"] if zp is not None else [])
        inits = [x, scale] + ([zp] if zp is not None else [])
        return name, "x", QM.model([helper.make_node("DequantizeLinear", ins, ["y"], **attrs)],
                                   inits, [], [QM.vi("y")], opset=21, ir=10)

    def gbq(name, data, scales, zp=None, **attrs):
        ins = ["data", "idx", "scales"] + (["zp"] if zp is not None else [])
        inits = [data, scales] + ([zp] if zp is not None else [])
        return name, "data", QM.model([helper.make_node("GatherBlockQuantized", ins, ["y"], domain=QM.MS, **attrs)],
                                      inits, [QM.vi("idx", TensorProto.INT64, [1])], [QM.vi("y")], ms=True)

    B = u8(np.zeros((2, 1, 8)), "B")
    cases = [
        nbits("nbits_huge_k", B, f(np.ones(2), "scales"), K=1 << 40, N=2, bits=4, block_size=16),
        nbits("nbits_huge_kn", B, f(np.ones(2), "scales"), K=1 << 39, N=1 << 39, bits=4, block_size=16),
        nbits("nbits_bits3", B, f(np.ones(2), "scales"), K=16, N=2, bits=3, block_size=16),
        nbits("nbits_block0", B, f(np.ones(2), "scales"), K=16, N=2, bits=4, block_size=0),
        nbits("nbits_block_neg", B, f(np.ones(2), "scales"), K=16, N=2, bits=4, block_size=-16),
        nbits("nbits_short_b", u8(np.zeros(5), "B"), f(np.ones(2), "scales"), K=16, N=2, bits=4, block_size=16),
        nbits("nbits_scales", B, f(np.ones(3), "scales"), K=16, N=2, bits=4, block_size=16),
        nbits("nbits_zp_short", B, f(np.ones(2), "scales"), u8(np.zeros(1), "zp"), K=16, N=2, bits=4, block_size=16),
        nbits("nbits_int_scales", B, i8(np.ones(2), "scales"), K=16, N=2, bits=4, block_size=16),
        dq("dq_axis_far", i8(np.zeros((2, 3)), "x"), f(np.ones(3), "s"), axis=7),
        dq("dq_axis_neg_far", i8(np.zeros((2, 3)), "x"), f(np.ones(3), "s"), axis=-3),
        dq("dq_block_shape", i8(np.zeros((2, 8)), "x"), f(np.ones((2, 3)), "s"), axis=1, block_size=4),
        dq("dq_block_neg", i8(np.zeros((2, 8)), "x"), f(np.ones((2, 2)), "s"), axis=1, block_size=-4),
        dq("dq_scale_int", i8(np.zeros(4), "x"), i8(1, "s")),
        dq("dq_data_int64", numpy_helper.from_array(np.zeros(4, np.int64), "x"), f(1, "s")),
        dq("dq_zp_count", i8(np.zeros((2, 3)), "x"), f(np.ones(3), "s"), i8(np.zeros(2), "z"), axis=1),
        dq("dq_scalar_axis", i8(5, "x"), f(np.ones(3), "s"), axis=0),
        dq("dq_empty_scale", i8(np.zeros(4), "x"), f(np.ones(0), "s")),
        gbq("gbq_axis_far", u8(np.zeros((4, 16)), "data"), f(np.ones((4, 2)), "scales"), quantize_axis=5,
            block_size=16, bits=4),
        gbq("gbq_zp_size", u8(np.zeros((4, 16)), "data"), f(np.ones((4, 2)), "scales"), u8(np.zeros(3), "zp"),
            quantize_axis=1, block_size=16, bits=4),
        gbq("gbq_block0", u8(np.zeros((4, 16)), "data"), f(np.ones((4, 2)), "scales"), quantize_axis=1,
            block_size=0, bits=4),
    ]
    # plumbing in a cycle (a model that is not a DAG): the drawing must still end
    cyc = QM.model([helper.make_node("QuantizeLinear", ["d2", "s", "z"], ["q1"]),
                    helper.make_node("DequantizeLinear", ["q1", "s", "z"], ["d1"]),
                    helper.make_node("QuantizeLinear", ["d1", "s", "z"], ["q2"]),
                    helper.make_node("DequantizeLinear", ["q2", "s", "z"], ["d2"])],
                   [f(0.1, "s"), u8(128, "z")], [], [QM.vi("d2")])
    dqdq = QM.model([helper.make_node("DequantizeLinear", ["x", "s"], ["d"]),
                     helper.make_node("DequantizeLinear", ["d", "s"], ["y"])],
                    [i8(np.ones(4), "x"), f(0.5, "s")], [], [QM.vi("y")])
    cases += [("cycle", "s", cyc), ("dq_of_dq", "x", dqdq)]
    refused = 0
    for name, tensor, m in cases:
        path = os.path.join(outdir, "hostile_%s.onnx" % name)
        onnx.save(m, path)
        r = upload(s, path)
        if not check(r.status in (200, 201), "hostile %s upload: %r" % (name, r)):
            continue
        mid = r.json()["id"]
        r = H.curl(s.url("/models/%s/tensors/%s?dequantize=1" % (mid, tensor)))
        if name in ("cycle",):
            ok = r.status == 422 and r.error_code() == "not_quantized"
        elif name == "dq_of_dq":
            ok = r.status == 200
        else:
            ok = r.status == 422 and r.error_code() == "bad_quantization" and bool(r.json()["error"]["message"])
            refused += ok
        check(ok, "hostile %s: dequantize answers %r" % (name, r))
        for q in ("", "?group=none&attrs=all", "?quant=nodes&initializers=nodes"):
            r = H.curl(s.url("/models/%s/graph.svg%s" % (mid, q)))
            check(r.status == 200, "hostile %s: drawn (%s): %r" % (name, q, r))
        r = H.curl(s.url("/models/%s" % mid))
        check(r.status == 200 and "quantization" in r.json()["summary"]["summary"],
              "hostile %s: summary %r" % (name, r))
    print("  %d pairings that do not fit refused with bad_quantization; plumbing cycles drawn" % refused)


def has_negative_zero(body):
    """Whether the JSON text holds a number -0 (and it reads back as -0.0)."""
    found = []

    def num(t):
        v = float(t)
        if v == 0 and math.copysign(1, v) < 0:
            found.append(t)
        return v

    json.loads(body, parse_int=num, parse_float=num)
    return bool(found)


def t_negative_zero(s, outdir):
    """-0 keeps its sign in every JSON preview: values and statistics of every floating
    type, typed fields, Constant values, tensor attributes, and dequantized values."""
    tens = []
    for dt, name, raw in [(TensorProto.FLOAT16, "f16", b"\x00\x80"), (TensorProto.BFLOAT16, "bf16", b"\x00\x80"),
                          (17, "e4m3", b"\x80"), (19, "e5m2", b"\x80"),
                          (TensorProto.FLOAT, "f32", np.array([-0.0, -0.0], np.float32).tobytes()),
                          (TensorProto.DOUBLE, "f64", np.array([-0.0], np.float64).tobytes())]:
        t = TensorProto(name=name, data_type=dt, dims=[len(raw) // {10: 2, 16: 2, 17: 1, 19: 1, 11: 8}.get(dt, 4)])
        t.raw_data = raw
        tens.append(t)
    t = TensorProto(name="typed", data_type=TensorProto.FLOAT, dims=[2])
    t.float_data.extend([-0.0, -0.0])
    tens.append(t)
    t = TensorProto(name="c64", data_type=TensorProto.COMPLEX64, dims=[1])
    t.float_data.extend([-0.0, -0.0])
    tens.append(t)
    q = np.array([3, 3], np.int8)
    tens += [numpy_helper.from_array(q, "q"), numpy_helper.from_array(np.array(-0.5, np.float32), "s"),
             numpy_helper.from_array(np.array(3, np.int8), "z")]
    nodes = [helper.make_node("Constant", [], ["c"], value=numpy_helper.from_array(np.array([-0.0], np.float32), "cv")),
             helper.make_node("DequantizeLinear", ["q", "s", "z"], ["w"]),
             helper.make_node("Add", ["c", "w"], ["y"]),
             helper.make_node("ConstantOfShape", ["shape"], ["o"],
                              value=numpy_helper.from_array(np.array([-0.0], np.float32), "fill"))]
    tens.append(numpy_helper.from_array(np.array([2], np.int64), "shape"))
    m = QM.model(nodes, tens, [], [QM.vi("y"), QM.vi("o")])
    path = os.path.join(outdir, "negzero.onnx")
    onnx.save(m, path)
    mid = upload(s, path).json()["id"]
    for name in ("f16", "bf16", "e4m3", "e5m2", "f32", "f64", "typed", "c64", "c", "n3@a0"):
        r = H.curl(s.url("/models/%s/tensors/%s?values=10&bins=4" % (mid, name)))
        ok = r.status == 200
        j = jload(r.body) if ok else {}
        vals = j.get("values", {}).get("data", [])
        flat = [x for v in vals for x in (v if isinstance(v, list) else [v])]
        check(ok and flat and all(math.copysign(1, x) < 0 for x in flat) and has_negative_zero(r.body),
              "-0 keeps its sign in the values of %s: %r" % (name, r.body[:300]))
        if name not in ("c64",):
            st = j.get("stats", {})
            check(ok and math.copysign(1, float(st.get("min", 1))) < 0 and math.copysign(1, float(st.get("max", 1))) < 0,
                  "-0 keeps its sign in the min/max of %s: %r" % (name, st))
    r = H.curl(s.url("/models/%s/tensors/q?dequantize=1" % mid))
    j = jload(r.body) if r.status == 200 else {}
    check(r.status == 200 and [math.copysign(1, v) for v in j["values"]["data"]] == [-1.0, -1.0] and
          has_negative_zero(r.body), "dequantized (3 - 3) * -0.5 is -0 in JSON: %r" % r.body[:200])


QM_CACHE = None


def run(h, s, tmp):
    global H, check, QM_CACHE
    H = h
    check = h.check
    QM_CACHE = os.environ.get("ONNXVIZ_QUANT_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "onnxviz-quant")
    os.makedirs(QM_CACHE, exist_ok=True)
    outdir = os.path.join(tmp, "quant")
    os.makedirs(outdir, exist_ok=True)
    t_cases(s, outdir)
    t_big_external(s, outdir)
    t_models(s, outdir)
    t_refusals(s, outdir)
    t_hostile(s, outdir)
    t_negative_zero(s, outdir)
