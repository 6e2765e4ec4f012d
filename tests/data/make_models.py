#!/usr/bin/python3
"""make_models.py — regenerates the constructed test models in tests/data/models/.

Run by hand (/usr/bin/python3 tests/data/make_models.py); the .onnx files are committed so
the unit tests need no python.  Each model exercises fields the real corpus lacks; together
they reach every message and field of the newest onnx.proto.  Messages are built with
python3-onnx's classes extended to the newest schema (tests/diff/onnx_ext.py) and, where the
protobuf library cannot produce an encoding (packed next to unpacked, repeated singular
messages, unknown fields of every wire type), with a few bytes encoded by hand.  Every file
is checked to load with onnx.load() and must stay under 20 KB.

The C unit tests (tests/unit/test_decode.c) check named fields of these files; the
differential test (tests/diff/proto.py) compares every field with the oracle.
"""
import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "diff"))

import numpy as np  # noqa: E402
import onnx  # noqa: E402
from onnx import helper  # noqa: E402

import onnx_ext as X  # noqa: E402

OUT = os.path.join(HERE, "models")
MAX_SIZE = 20 * 1024


# ---------------------------------------------------------------------------------------
# Hand encoding (only where the protobuf library cannot produce the bytes)
def varint(v):
    v &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def tag(num, wt):
    return varint(num << 3 | wt)


def f_varint(num, v):
    return tag(num, 0) + varint(v)


def f_bytes(num, b):
    if isinstance(b, str):
        b = b.encode()
    return tag(num, 2) + varint(len(b)) + b


def f_fixed32(num, b4):
    return tag(num, 5) + b4


def f_fixed64(num, b8):
    return tag(num, 1) + b8


def packed_varints(num, values):
    return f_bytes(num, b"".join(varint(v) for v in values))


# ---------------------------------------------------------------------------------------
def ext(msg, cls):
    """An onnx (1.12) message as the extended class."""
    return X.upgrade(msg, cls)


def entry(k, v):
    e = X.StringStringEntryProto()
    e.key, e.value = k, v
    return e


def props(msg, *pairs):
    for k, v in pairs:
        msg.metadata_props.add().CopyFrom(entry(k, v))


def vi(name, elem, shape):
    return ext(helper.make_tensor_value_info(name, elem, shape), X.ValueInfoProto)


def base_model(graph, ir=8, opsets=(("", 17),)):
    m = X.ModelProto()
    m.ir_version = ir
    for dom, ver in opsets:
        o = m.opset_import.add()
        o.domain, o.version = dom, ver
    m.producer_name, m.producer_version = "make_models.py", "1"
    if graph is not None:
        m.graph.CopyFrom(graph)
    return m


def simple_graph(name="g", op="Identity"):
    g = X.GraphProto()
    g.name = name
    g.node.add().CopyFrom(ext(helper.make_node(op, ["x"], ["y"], name="n0"), X.NodeProto))
    g.input.add().CopyFrom(vi("x", onnx.TensorProto.FLOAT, [1]))
    g.output.add().CopyFrom(vi("y", onnx.TensorProto.FLOAT, [1]))
    return g


# ---------------------------------------------------------------------------------------
# The models
def m_metadata():
    """metadata_props on every message that has them, doc_strings, model header fields."""
    g = simple_graph("meta_graph")
    g.doc_string = "graph doc"
    props(g, ("graph_key", "graph value"), ("g2", ""))
    props(g.node[0], ("node_key", "node value"))
    g.node[0].doc_string = "node doc"
    props(g.input[0], ("vi_key", "vi value"))
    g.input[0].doc_string = "input doc"
    t = ext(helper.make_tensor("w", onnx.TensorProto.FLOAT, [2], [1.5, -2.0]), X.TensorProto)
    t.doc_string = "tensor doc"
    props(t, ("tensor_key", "tensor value"))
    g.initializer.add().CopyFrom(t)
    m = base_model(g, ir=10, opsets=(("", 21), ("com.example", 3)))
    m.domain = "com.example.models"
    m.model_version = 42
    m.doc_string = "model doc \u00e9\u4e2d"
    props(m, ("author", "onnxviz tests"), ("license", "CC0"))
    f = m.functions.add()
    f.name, f.domain = "Fn", "com.example"
    f.input.append("a")
    f.output.append("b")
    f.node.add().CopyFrom(ext(helper.make_node("Identity", ["a"], ["b"]), X.NodeProto))
    f.opset_import.add().CopyFrom(ext(helper.make_opsetid("", 21), X.OperatorSetIdProto))
    props(f, ("function_key", "function value"))
    return m


def m_training():
    """training_info: initialization and algorithm graphs, both bindings."""
    m = base_model(simple_graph(), ir=7, opsets=(("", 13), ("ai.onnx.preview.training", 1)))
    ti = m.training_info.add()
    init = X.GraphProto()
    init.name = "init"
    init.node.add().CopyFrom(ext(helper.make_node(
        "RandomNormal", [], ["w0"], shape=[2, 2]), X.NodeProto))
    init.output.add().CopyFrom(vi("w0", onnx.TensorProto.FLOAT, [2, 2]))
    ti.initialization.CopyFrom(init)
    algo = X.GraphProto()
    algo.name = "algo"
    algo.node.add().CopyFrom(ext(helper.make_node(
        "Gradient", ["x", "y"], ["dy_dx"], domain="ai.onnx.preview.training", xs=["x"],
        y="y"), X.NodeProto))
    algo.output.add().CopyFrom(vi("dy_dx", onnx.TensorProto.FLOAT, [1]))
    ti.algorithm.CopyFrom(algo)
    ti.initialization_binding.add().CopyFrom(entry("w", "w0"))
    ti.update_binding.add().CopyFrom(entry("w", "dy_dx"))
    ti.update_binding.add().CopyFrom(entry("b", "b_new"))
    m.training_info.add()  # an empty one
    return m


def m_functions():
    """Model-local functions: attribute names, attribute_proto defaults, ref_attr_name,
    value_info, overload, opsets, doc_string; a node calling one with an overload."""
    g = X.GraphProto()
    g.name = "main"
    n = ext(helper.make_node("Scale", ["x"], ["y"], domain="local", name="call",
                             factor=2.0), X.NodeProto)
    n.overload = "v2"
    g.node.add().CopyFrom(n)
    g.input.add().CopyFrom(vi("x", onnx.TensorProto.FLOAT, ["N"]))
    g.output.add().CopyFrom(vi("y", onnx.TensorProto.FLOAT, ["N"]))
    m = base_model(g, ir=10, opsets=(("", 21), ("local", 1)))
    f = m.functions.add()
    f.name, f.domain, f.overload = "Scale", "local", "v2"
    f.doc_string = "multiplies by factor"
    f.input.append("X")
    f.output.append("Y")
    f.attribute.append("factor")
    f.attribute.append("unused")
    d = ext(helper.make_attribute("bias", 0.5), X.AttributeProto)
    d.doc_string = "default bias"
    f.attribute_proto.add().CopyFrom(d)
    f.attribute_proto.add().CopyFrom(ext(helper.make_attribute("axes", [0, 1]), X.AttributeProto))
    c = ext(helper.make_node("Constant", [], ["F"]), X.NodeProto)
    a = c.attribute.add()
    a.name, a.ref_attr_name, a.type = "value_float", "factor", onnx.AttributeProto.FLOAT
    f.node.add().CopyFrom(c)
    f.node.add().CopyFrom(ext(helper.make_node("Mul", ["X", "F"], ["Y"]), X.NodeProto))
    f.opset_import.add().CopyFrom(ext(helper.make_opsetid("", 21), X.OperatorSetIdProto))
    f.value_info.add().CopyFrom(vi("F", onnx.TensorProto.FLOAT, []))
    f2 = m.functions.add()  # an overload-less second function calling the first
    f2.name, f2.domain = "Twice", "local"
    f2.input.append("A")
    f2.output.append("B")
    call = ext(helper.make_node("Scale", ["A"], ["B"], domain="local"), X.NodeProto)
    call.overload = "v2"
    f2.node.add().CopyFrom(call)
    return m


def m_functions_only():
    """No graph at all: a function library (still a model: it has functions)."""
    m = base_model(None, ir=0, opsets=(("", 18),))
    m.ClearField("ir_version")
    f = m.functions.add()
    f.name, f.domain = "Lib", "lib"
    f.input.append("a")
    f.output.append("b")
    f.node.add().CopyFrom(ext(helper.make_node("Neg", ["a"], ["b"]), X.NodeProto))
    return m


def m_sparse():
    """sparse_initializer (2-D indices and linear indices), sparse_tensor and sparse_tensors
    attributes, a sparse_tensor value type."""
    g = simple_graph("sparse")
    vals = helper.make_tensor("sp_values", onnx.TensorProto.FLOAT, [3], [1.0, 2.0, 3.0])
    idx = helper.make_tensor("sp_indices", onnx.TensorProto.INT64, [3, 2],
                             [0, 0, 1, 2, 3, 1])
    sp = helper.make_sparse_tensor(vals, idx, [4, 3])
    g.sparse_initializer.add().CopyFrom(ext(sp, X.SparseTensorProto))
    idx1 = helper.make_tensor("sp1_indices", onnx.TensorProto.INT64, [2], [1, 7])
    vals1 = helper.make_tensor("sp1", onnx.TensorProto.INT32, [2], [5, 6])
    sp1 = helper.make_sparse_tensor(vals1, idx1, [2, 4])
    g.sparse_initializer.add().CopyFrom(ext(sp1, X.SparseTensorProto))
    c = ext(helper.make_node("Constant", [], ["c"], sparse_value=sp), X.NodeProto)
    g.node.add().CopyFrom(c)
    n = ext(helper.make_node("Custom", ["c"], ["d"], domain="x"), X.NodeProto)
    n.attribute.add().CopyFrom(ext(helper.make_attribute("sps", [sp, sp1]), X.AttributeProto))
    g.node.add().CopyFrom(n)
    g.value_info.add().CopyFrom(ext(helper.make_sparse_tensor_value_info(
        "c", onnx.TensorProto.FLOAT, [4, 3]), X.ValueInfoProto))
    return base_model(g, ir=8, opsets=(("", 17), ("x", 1)))


def m_external():
    """Initializers stored externally: data_location EXTERNAL, external_data entries
    (location, offset, length, checksum, an unknown key); nothing is read."""
    g = simple_graph("external")
    for i, (loc, off, ln) in enumerate([("weights.bin", 0, 16), ("weights.bin", 64, 4096),
                                        ("sub dir/w \u00e9.bin", None, None)]):
        t = X.TensorProto()
        t.name = "ext%d" % i
        t.data_type = onnx.TensorProto.FLOAT
        t.dims.extend([4] if i == 0 else [32, 32])
        t.data_location = onnx.TensorProto.EXTERNAL
        t.external_data.add().CopyFrom(entry("location", loc))
        if off is not None:
            t.external_data.add().CopyFrom(entry("offset", str(off)))
            t.external_data.add().CopyFrom(entry("length", str(ln)))
        if i == 1:
            t.external_data.add().CopyFrom(entry("checksum", "0" * 40))
            t.external_data.add().CopyFrom(entry("__unknown_key", "x"))
        g.initializer.add().CopyFrom(t)
    t = X.TensorProto()  # entries without data_location: stays DEFAULT
    t.name, t.data_type = "not_external", onnx.TensorProto.INT8
    t.dims.append(1)
    t.raw_data = b"\x05"
    t.external_data.add().CopyFrom(entry("location", "ignored.bin"))
    g.initializer.add().CopyFrom(t)
    return base_model(g)


def m_dtypes():
    """One initializer of every data type 1..26 (raw_data), typed-field storage for each
    typed field, a segment, an empty tensor, scalars, and value infos of every elem type."""
    g = simple_graph("dtypes")
    bits = {1: 32, 2: 8, 3: 8, 4: 16, 5: 16, 6: 32, 7: 64, 9: 8, 10: 16, 11: 64, 12: 32,
            13: 64, 14: 64, 15: 128, 16: 16, 17: 8, 18: 8, 19: 8, 20: 8, 21: 4, 22: 4,
            23: 4, 24: 8, 25: 2, 26: 2}
    for dt in range(1, 27):
        t = X.TensorProto()
        t.name = "raw_%d" % dt
        t.data_type = dt
        t.dims.extend([2, 3])
        if dt == onnx.TensorProto.STRING:
            t.string_data.extend([b"a", b"bc", b"", b"\xff\xfe", b"e", "\u00e9".encode()])
        else:
            nbytes = (6 * bits[dt] + 7) // 8
            t.raw_data = bytes((i * 37 + dt) & 0xFF for i in range(nbytes))
        g.initializer.add().CopyFrom(t)
        g.value_info.add().CopyFrom(vi("vi_%d" % dt, dt, [2, "n"]))
    typed = [
        helper.make_tensor("f32_typed", onnx.TensorProto.FLOAT, [3], [1.0, -0.0, 3.25]),
        helper.make_tensor("f16_typed", onnx.TensorProto.FLOAT16, [2],
                           np.array([1.0, 2.0], dtype=np.float16)),
        helper.make_tensor("i32_typed", onnx.TensorProto.INT32, [4], [0, -1, 2**31 - 1,
                                                                      -2**31]),
        helper.make_tensor("i64_typed", onnx.TensorProto.INT64, [3], [0, -1, 2**63 - 1]),
        helper.make_tensor("f64_typed", onnx.TensorProto.DOUBLE, [2], [1e300, -2.5]),
        helper.make_tensor("u64_typed", onnx.TensorProto.UINT64, [2], [0, 2**64 - 1]),
        helper.make_tensor("u32_typed", onnx.TensorProto.UINT32, [2], [7, 2**32 - 1]),
        helper.make_tensor("c64_typed", onnx.TensorProto.COMPLEX64, [1], [1 + 2j]),
        helper.make_tensor("bool_typed", onnx.TensorProto.BOOL, [3], [True, False, True]),
        helper.make_tensor("scalar", onnx.TensorProto.FLOAT, [], [7.0]),
        helper.make_tensor("empty", onnx.TensorProto.FLOAT, [0, 5], []),
    ]
    for t in typed:
        g.initializer.add().CopyFrom(ext(t, X.TensorProto))
    seg = X.TensorProto()
    seg.name, seg.data_type = "segmented", onnx.TensorProto.FLOAT
    seg.dims.append(10)
    seg.segment.begin, seg.segment.end = 2, 5
    seg.float_data.extend([1.0, 2.0, 3.0])
    g.initializer.add().CopyFrom(seg)
    seg0 = X.TensorProto()
    seg0.name = "segment_zero"
    seg0.segment.SetInParent()  # present, both ends default
    g.initializer.add().CopyFrom(seg0)
    unknown = X.TensorProto()
    unknown.name, unknown.data_type = "dtype_99", 99
    unknown.dims.append(1)
    unknown.raw_data = b"\x00"
    g.initializer.add().CopyFrom(unknown)
    return base_model(g, ir=11, opsets=(("", 23),))


def m_types():
    """Every TypeProto member: tensor (ranked, unranked, scalar, dim_value/dim_param/unknown
    dims, dim denotations), sequence, map, optional, sparse_tensor, opaque; denotations."""
    g = X.GraphProto()
    g.name = "types"
    g.node.add().CopyFrom(ext(helper.make_node("Identity", ["t"], ["t2"]), X.NodeProto))
    t = vi("t", onnx.TensorProto.FLOAT, [1, "batch", None, 0])
    t.type.denotation = "TENSOR"
    t.type.tensor_type.shape.dim[0].denotation = "DATA_BATCH"
    t.type.tensor_type.shape.dim[1].denotation = "DATA_CHANNEL"
    g.input.add().CopyFrom(t)
    g.input.add().CopyFrom(vi("scalar", onnx.TensorProto.INT64, []))
    unranked = X.ValueInfoProto()
    unranked.name = "unranked"
    unranked.type.tensor_type.elem_type = onnx.TensorProto.BFLOAT16
    g.input.add().CopyFrom(unranked)
    seq = helper.make_sequence_type_proto(
        helper.make_tensor_type_proto(onnx.TensorProto.FLOAT, ["n", 3]))
    g.input.add().CopyFrom(ext(helper.make_value_info("seq", seq), X.ValueInfoProto))
    mp = X.TypeProto()
    mp.map_type.key_type = onnx.TensorProto.STRING
    mp.map_type.value_type.CopyFrom(ext(seq, X.TypeProto))
    g.input.add().CopyFrom(X.ValueInfoProto(name="map", type=mp))
    opt = helper.make_optional_type_proto(
        helper.make_tensor_type_proto(onnx.TensorProto.INT32, [2]))
    g.input.add().CopyFrom(ext(helper.make_value_info("opt", opt), X.ValueInfoProto))
    optseq = helper.make_optional_type_proto(seq)
    g.input.add().CopyFrom(ext(helper.make_value_info("opt_seq", optseq), X.ValueInfoProto))
    g.input.add().CopyFrom(ext(helper.make_sparse_tensor_value_info(
        "sparse", onnx.TensorProto.FLOAT, [10, "m"]), X.ValueInfoProto))
    op = X.TypeProto()
    op.opaque_type.domain, op.opaque_type.name = "com.example", "Handle"
    op.denotation = "OPAQUE_THING"
    g.input.add().CopyFrom(X.ValueInfoProto(name="opaque", type=op))
    empty_opaque = X.TypeProto()
    empty_opaque.opaque_type.SetInParent()
    g.input.add().CopyFrom(X.ValueInfoProto(name="opaque_empty", type=empty_opaque))
    untyped = X.ValueInfoProto()
    untyped.name = "untyped"
    g.input.add().CopyFrom(untyped)
    no_kind = X.ValueInfoProto()
    no_kind.name = "type_without_value"
    no_kind.type.denotation = "IMAGE"
    g.input.add().CopyFrom(no_kind)
    g.output.add().CopyFrom(vi("t2", onnx.TensorProto.FLOAT, [1, "batch", None, 0]))
    deep = X.TypeProto()
    cur = deep
    for _ in range(6):  # sequence of sequence of ... of a map
        cur = cur.sequence_type.elem_type
    cur.map_type.key_type = onnx.TensorProto.INT64
    cur.map_type.value_type.tensor_type.elem_type = onnx.TensorProto.DOUBLE
    g.value_info.add().CopyFrom(X.ValueInfoProto(name="deep", type=deep))
    return base_model(g, ir=9, opsets=(("", 19),))


def m_attributes():
    """Every attribute type, including TYPE_PROTO(S), GRAPHS, TENSORS, SPARSE_TENSORS, with
    doc strings; a nested If with subgraphs; negative, huge and special float values."""
    g = simple_graph("attrs")
    t = helper.make_tensor("at", onnx.TensorProto.INT64, [2], [3, -4])
    sub = helper.make_graph([helper.make_node("Identity", ["x"], ["z"])], "sub", [],
                            [helper.make_tensor_value_info("z", onnx.TensorProto.FLOAT, [1])])
    sp = helper.make_sparse_tensor(
        helper.make_tensor("v", onnx.TensorProto.FLOAT, [1], [9.0]),
        helper.make_tensor("i", onnx.TensorProto.INT64, [1], [2]), [5])
    tp = helper.make_tensor_type_proto(onnx.TensorProto.FLOAT16, [2, "k"])
    values = {
        "f": 0.1, "f_neg_zero": -0.0, "f_inf": float("inf"), "f_ninf": float("-inf"),
        "f_tiny": 1e-45, "f_max": 3.4028234663852886e38, "i": -(2**63), "i_max": 2**63 - 1,
        "s": b"hello \"world\"\n\t\\", "s_bin": b"\x00\x01\xff\xc3\x28", "t": t, "g": sub,
        "sparse": sp, "tp": tp, "floats": [1.5, -2.25, 1e10], "ints": [1, -1, 2**40],
        "strings": [b"a", b"", "\u00fcml\u00e4ut".encode()], "tensors": [t, t],
        "graphs": [sub, sub], "sparses": [sp], "tps": [tp, helper.make_sequence_type_proto(tp)],
        "empty_ints": [],
    }
    node = X.NodeProto()
    node.op_type, node.domain, node.name = "AllAttrs", "test", "all"
    node.input.extend(["x", "", "x"])  # an omitted optional input in the middle
    node.output.extend(["o1", ""])
    for name, value in values.items():
        if name == "empty_ints":
            a = helper.make_attribute(name, [], attr_type=onnx.AttributeProto.INTS) \
                if "attr_type" in helper.make_attribute.__code__.co_varnames else None
            if a is None:
                a = onnx.AttributeProto(name=name, type=onnx.AttributeProto.INTS)
        elif name in ("tps",):
            a = onnx.AttributeProto(name=name, type=onnx.AttributeProto.TYPE_PROTOS)
            a.type_protos.extend(value)
        elif name == "tp":
            a = onnx.AttributeProto(name=name, type=onnx.AttributeProto.TYPE_PROTO)
            a.tp.CopyFrom(value)
        else:
            a = helper.make_attribute(name, value)
        a = ext(a, X.AttributeProto)
        if name == "i":
            a.doc_string = "the smallest int64"
        node.attribute.add().CopyFrom(a)
    g.node.add().CopyFrom(node)
    cond = helper.make_node("If", ["c"], ["r"], then_branch=sub, else_branch=helper.make_graph(
        [helper.make_node("If", ["c"], ["z"], then_branch=sub, else_branch=sub)], "else", [],
        [helper.make_tensor_value_info("z", onnx.TensorProto.FLOAT, [1])]))
    g.node.add().CopyFrom(ext(cond, X.NodeProto))
    return base_model(g, ir=8, opsets=(("", 17), ("test", 1)))


def m_device():
    """ModelProto.configuration and NodeProto.device_configurations with sharding specs."""
    g = simple_graph("device")
    n = g.node[0]
    dc = n.device_configurations.add()
    dc.configuration_id = "mesh"
    dc.pipeline_stage = 1
    ss = dc.sharding_spec.add()
    ss.tensor_name = "x"
    ss.device.extend([0, 1, 2, 3])
    e = ss.index_to_device_group_map.add()
    e.key = 0
    e.value.extend([0, 1])
    e = ss.index_to_device_group_map.add()
    e.key = 1
    e.value.extend([2, 3])
    sd = ss.sharded_dim.add()
    sd.axis = 0
    s1 = sd.simple_sharding.add()
    s1.dim_value, s1.num_shards = 8, 2
    s2 = sd.simple_sharding.add()
    s2.dim_param, s2.num_shards = "batch", 4
    sd.simple_sharding.add().num_shards = 1  # neither dim_value nor dim_param
    sd2 = ss.sharded_dim.add()
    sd2.axis = -1
    dc2 = n.device_configurations.add()
    dc2.configuration_id = "empty"
    m = base_model(g, ir=11, opsets=(("", 22),))
    c = m.configuration.add()
    c.name, c.num_devices = "mesh", 4
    c.device.extend(["cuda:0", "cuda:1", "cuda:2", "cuda:3"])
    m.configuration.add().name = "empty"
    return m


def m_quant():
    """GraphProto.quantization_annotation."""
    g = simple_graph("quant")
    qa = g.quantization_annotation.add()
    qa.tensor_name = "y"
    qa.quant_parameter_tensor_names.add().CopyFrom(entry("SCALE_TENSOR", "y_scale"))
    qa.quant_parameter_tensor_names.add().CopyFrom(entry("ZERO_POINT_TENSOR", "y_zp"))
    g.quantization_annotation.add().tensor_name = "x"
    return base_model(g)


def m_ir1_attrs():
    """IR version 1: attributes without the type field; the decoder infers the type from
    the value present.  Also an attribute with no value at all and one with type 0."""
    g = simple_graph("ir1")
    n = X.NodeProto()
    n.op_type = "Old"
    n.input.append("x")
    n.output.append("o")
    samples = {"f": 2.5, "i": 7, "s": b"str", "t": helper.make_tensor(
        "t", onnx.TensorProto.FLOAT, [1], [1.0]), "g": helper.make_graph([], "e", [], []),
        "floats": [1.0, 2.0], "ints": [1, 2], "strings": [b"a"],
        "tensors": [helper.make_tensor("t", onnx.TensorProto.FLOAT, [1], [1.0])],
        "graphs": [helper.make_graph([], "e", [], [])]}
    for name, value in samples.items():
        a = ext(helper.make_attribute(name, value), X.AttributeProto)
        a.ClearField("type")
        n.attribute.add().CopyFrom(a)
    sp = X.AttributeProto()
    sp.name = "sparse_tensor"
    sp.sparse_tensor.dims.append(3)
    n.attribute.add().CopyFrom(sp)
    sps = X.AttributeProto()
    sps.name = "sparse_tensors"
    sps.sparse_tensors.add().dims.append(2)
    n.attribute.add().CopyFrom(sps)
    tp = X.AttributeProto()
    tp.name = "tp"
    tp.tp.tensor_type.elem_type = 1
    n.attribute.add().CopyFrom(tp)
    tps = X.AttributeProto()
    tps.name = "type_protos"
    tps.type_protos.add().tensor_type.elem_type = 7
    n.attribute.add().CopyFrom(tps)
    n.attribute.add().name = "no_value"
    zero = X.AttributeProto()
    zero.name, zero.type, zero.i = "type_zero", 0, 5
    n.attribute.add().CopyFrom(zero)
    g.node.add().CopyFrom(n)
    return base_model(g, ir=1, opsets=(("", 1),))


def m_ir14():
    """The newest IR version; node overload without functions; empty strings."""
    g = simple_graph("")
    g.node[0].overload = "o"
    return base_model(g, ir=14, opsets=(("", 25), ("", 24)))


def m_strings():
    """Names with bytes JSON must escape: quotes, backslashes, control bytes, NUL, UTF-8 of
    every length, and invalid UTF-8 (lone continuation, overlong, surrogate, truncated)."""
    names = ["quote\"back\\slash", "ctl\x01\x1f\x7f", "nul\x00inside", "tab\tnl\n",
             "\u00e9\u4e2d\U0001f600", "</script><svg onload=alert(1)>"]
    bad = [b"\x80lone", b"\xc0\xafoverlong", b"\xed\xa0\x80surrogate", b"cut\xe4\xb8",
           b"\xff\xfe", b"\xf4\x90\x80\x80too_big"]
    g = X.GraphProto()
    g.name = "strings"
    prev = "x"
    for i, nm in enumerate(names):
        n = g.node.add()
        n.op_type, n.name = "Identity", nm
        n.input.append(prev)
        prev = "v%d%s" % (i, nm)
        n.output.append(prev)
    g.input.add().CopyFrom(vi("x", onnx.TensorProto.FLOAT, [1]))
    g.output.add().CopyFrom(vi(prev, onnx.TensorProto.FLOAT, [1]))
    raw = bytearray(base_model(g).SerializeToString())
    # invalid UTF-8 cannot be set through the API: append nodes encoded by hand
    nodes = b""
    for i, b in enumerate(bad):
        node = (f_bytes(1, prev) + f_bytes(2, b"bad%d" % i) + f_bytes(3, b) +
                f_bytes(4, b"Identity") + f_bytes(6, b"doc " + b))
        nodes += f_bytes(1, node)
    return bytes(raw) + f_bytes(7, nodes)  # a second graph field: merged into the first


def m_packed():
    """Repeated scalars packed, unpacked, and both mixed in one message: tensor dims,
    int64_data, float_data, attribute ints/floats, sharding device lists."""
    t = (f_bytes(8, "mixed") + f_varint(2, onnx.TensorProto.INT64) +
         f_varint(1, 2) + packed_varints(1, [3]) +          # dims: unpacked then packed
         packed_varints(7, [1, 2]) + f_varint(7, 3) +         # int64_data: packed, unpacked,
         packed_varints(7, [2**63 - 1, (-5) & (2**64 - 1)]))  # packed again
    tf = (f_bytes(8, "floats") + f_varint(2, 1) + f_varint(1, 3) +
          f_fixed32(4, struct.pack("<f", 1.0)) + f_bytes(4, struct.pack("<2f", 2.0, 3.0)))
    td = (f_bytes(8, "doubles") + f_varint(2, 11) + packed_varints(1, [2]) +
          f_fixed64(10, struct.pack("<d", 0.5)) + f_bytes(10, struct.pack("<d", -1.0)))
    tu = (f_bytes(8, "u64") + f_varint(2, 13) + f_varint(1, 3) + f_varint(11, 2**64 - 1) +
          packed_varints(11, [0, 1]))
    ti = (f_bytes(8, "i32") + f_varint(2, 6) + f_varint(1, 2) + f_varint(5, (-1) & (2**64 - 1))
          + packed_varints(5, [2**31 - 1]))
    ints = (f_bytes(1, "ints") + f_varint(20, 7) + f_varint(8, 1) + packed_varints(8, [2, 3])
            + f_varint(8, (-4) & (2**64 - 1)) + packed_varints(8, []))
    floats = (f_bytes(1, "floats") + f_varint(20, 6) + f_bytes(7, struct.pack("<2f", 1, 2)) +
              f_fixed32(7, struct.pack("<f", 3)))
    node = (f_bytes(1, "x") + f_bytes(2, "y") + f_bytes(4, "Custom") + f_bytes(7, "p") +
            f_bytes(5, ints) + f_bytes(5, floats))
    ss = f_bytes(1, "x") + packed_varints(2, [0, 1]) + f_varint(2, 2)
    node += f_bytes(10, f_bytes(1, "cfg") + f_bytes(2, ss))
    graph = (f_bytes(1, node) + f_bytes(2, "packed") + f_bytes(5, t) + f_bytes(5, tf) +
             f_bytes(5, td) + f_bytes(5, tu) + f_bytes(5, ti))
    graph += f_bytes(11, vi("x", 1, [1]).SerializeToString())
    graph += f_bytes(12, vi("y", 1, [1]).SerializeToString())
    return (f_varint(1, 8) + f_bytes(8, f_bytes(1, "") + f_varint(2, 17)) +
            f_bytes(8, f_bytes(1, "p") + f_varint(2, 1)) + f_bytes(7, graph))


def m_unknown():
    """Unknown fields of every wire type (varint, 64-bit, length-delimited, 32-bit) in
    every kind of message, including the largest field number and 10-byte varints; protobuf
    skips them, so must we."""
    def junk(salt):
        return (f_varint(1000 + salt, 2**64 - 1) + f_fixed64(1001 + salt, b"\x01" * 8) +
                f_bytes(1002 + salt, b"\x08\x96\x01junk") + f_fixed32(1003 + salt, b"abcd") +
                f_varint((1 << 29) - 1, 1) + f_bytes(99, b""))
    dim = f_varint(1, 4) + junk(1)
    shape = f_bytes(1, dim) + junk(2)
    ttype = f_varint(1, 1) + f_bytes(2, shape) + junk(3)
    tproto = f_bytes(1, ttype) + junk(4)
    vinfo = f_bytes(1, "x") + f_bytes(2, tproto) + junk(5)
    attr = f_bytes(1, "alpha") + f_varint(20, 1) + f_fixed32(2, struct.pack("<f", 0.5)) + junk(6)
    tensor = (f_varint(1, 1) + f_varint(2, 1) + f_bytes(8, "w") +
              f_bytes(9, struct.pack("<f", 1.0)) + junk(7) +
              f_bytes(13, f_bytes(1, "k") + f_bytes(2, "v") + junk(8)))
    node = (f_bytes(1, "x") + f_bytes(2, "y") + f_bytes(4, "LeakyRelu") + f_bytes(5, attr) +
            junk(9))
    graph = (f_bytes(1, node) + f_bytes(2, "unknown") + f_bytes(5, tensor) +
             f_bytes(11, vinfo) + f_bytes(12, f_bytes(1, "y")) + junk(10))
    opset = f_bytes(1, "") + f_varint(2, 16) + junk(11)
    return (junk(12) + f_varint(1, 8) + f_bytes(8, opset) + f_bytes(7, graph) + junk(13) +
            f_bytes(14, f_bytes(1, "k") + junk(14)))


def m_merge():
    """protobuf's merge rule: a singular sub-message sent several times is merged
    (repeated fields appended, scalars replaced, sub-messages merged recursively); a
    singular scalar sent twice keeps the last value."""
    t1 = f_bytes(8, "first") + f_varint(2, 1) + f_varint(1, 2)
    t2 = f_bytes(8, "second") + f_varint(1, 3) + f_bytes(9, b"\x00" * 24)
    a = (f_bytes(1, "t") + f_varint(20, 4) + f_bytes(5, t1) + f_bytes(5, t2) +
         f_varint(3, 1) + f_varint(3, 2))  # i twice: last wins
    ti = (f_bytes(1, f_bytes(2, "init_a")) + f_bytes(2, f_bytes(2, "algo")) +
          f_bytes(1, f_bytes(1, f_bytes(4, "Constant") + f_bytes(2, "c"))))
    vtype1 = f_bytes(1, f_varint(1, 1))                      # tensor_type{elem_type}
    vtype2 = f_bytes(1, f_bytes(2, f_bytes(1, f_varint(1, 5))))  # tensor_type{shape{dim 5}}
    vinfo = f_bytes(1, "x") + f_bytes(2, vtype1) + f_bytes(2, vtype2) + f_bytes(1, "x2")
    node = f_bytes(1, "x2") + f_bytes(2, "y") + f_bytes(4, "Op") + f_bytes(5, a)
    g1 = f_bytes(1, node) + f_bytes(2, "half1") + f_bytes(11, vinfo)
    g2 = f_bytes(2, "merged") + f_bytes(12, f_bytes(1, "y"))
    return (f_varint(1, 3) + f_varint(1, 8) + f_bytes(7, g1) + f_bytes(2, "p1") +
            f_bytes(7, g2) + f_bytes(2, "p2") + f_bytes(20, ti) +
            f_bytes(8, f_bytes(1, "") + f_varint(2, 13)) + f_varint(5, 1) + f_varint(5, 2))


def m_deep_graphs():
    """Subgraphs nested 32 deep below the main graph (the limit, still accepted)."""
    # value infos without types: protobuf's own nesting limit (100 messages) would refuse
    # the types of the innermost graphs
    out = onnx.ValueInfoProto(name="o")
    inner = helper.make_graph([helper.make_node("Identity", ["c"], ["o"])], "level32", [],
                              [out])
    for level in range(31, -1, -1):
        node = helper.make_node("If", ["c"], ["o"], then_branch=inner, else_branch=inner
                                if level == 31 else helper.make_graph([], "e", [], []))
        inner = helper.make_graph([node], "level%d" % level,
                                  [helper.make_tensor_value_info("c", onnx.TensorProto.BOOL,
                                                                 [])] if level == 0 else [],
                                  [out])
    return base_model(ext(inner, X.GraphProto), ir=8, opsets=(("", 17),))


MODELS = {
    "metadata": m_metadata, "training": m_training, "functions": m_functions,
    "functions_only": m_functions_only, "sparse": m_sparse, "external": m_external,
    "dtypes": m_dtypes, "types": m_types, "attributes": m_attributes, "device": m_device,
    "quant": m_quant, "ir1_attrs": m_ir1_attrs, "ir14": m_ir14, "strings": m_strings,
    "packed": m_packed, "unknown_fields": m_unknown, "merge": m_merge,
    "deep_graphs": m_deep_graphs, "types_nested_48": lambda: nested_types(48),
}


# ---------------------------------------------------------------------------------------
# Hand-made edge cases for the fuzzer's seed corpus (tests/fuzz/corpus/parse/edge_*):
# inputs a valid exporter never writes, each aimed at one check of the decoder.
def edge_seeds():
    nest = b""
    for _ in range(40):  # graph > node > attribute > g > ... deeper than both limits
        nest = f_bytes(1, f_bytes(5, f_bytes(1, "g") + f_varint(20, 5) + f_bytes(6, nest)))
    return {
        "empty": b"",
        "varint_11_bytes": b"\x08" + b"\xff" * 10 + b"\x01",
        "varint_10th_byte_2": b"\x08" + b"\xff" * 9 + b"\x02",
        "varint_max": b"\x08" + b"\xff" * 9 + b"\x01",
        "tag_field_zero": b"\x00\x01",
        "tag_6_bytes": b"\x88\x80\x80\x80\x80\x00\x01",
        "group_start": tag(9, 3) + tag(9, 4),
        "group_known_field": tag(7, 3),
        "wire_type_7": tag(9, 7),
        "length_2_63": tag(7, 2) + varint(2**63),
        "length_remaining_plus_1": tag(7, 2) + varint(3) + b"\x08\x01",
        "packed_cut": tag(8, 2) + f_bytes(8, tag(20, 0) + varint(7) + f_bytes(8, b"\x01\x81")),
        "packed_float_3_bytes": f_bytes(7, f_bytes(1, f_bytes(5, f_bytes(7, b"abc")))),
        "nested_40_graphs": f_varint(1, 8) + f_bytes(7, nest),
        "negative_dims": f_varint(1, 8) + f_bytes(7, f_bytes(5, f_varint(1, 2**64 - 1))),
        "dims_overflow": f_varint(1, 8) + f_bytes(7, f_bytes(5, f_varint(1, 2**62) +
                                                            f_varint(1, 4))),
        "string_wrong_wire_type": f_varint(1, 8) + f_varint(2, 5),
        "not_a_model": f_bytes(99, b"x"),
        "tensor_only": f_varint(1, 2) + f_varint(2, 1) + f_bytes(4, b"\x00" * 8),
    }


def nested_types(levels):
    """graph.input[0].type: sequence_type of sequence_type ... `levels` TypeProtos deep."""
    t = b""
    for _ in range(levels):
        t = f_bytes(4, f_bytes(1, t))
    return f_varint(1, 8) + f_bytes(7, f_bytes(11, f_bytes(1, "x") + f_bytes(2, t)))


# Models protobuf itself rejects, and so must onnxviz (tests/data/rejected/): the diff
# test checks both verdicts.  The depth pair pins the same boundary as protobuf's
# recursion limit of 100 messages: 48 nested TypeProtos load, 49 do not.
REJECTED = {
    "types_nested_49": lambda: nested_types(49),
    "varint_11_bytes": lambda: b"\x08" + b"\xff" * 10 + b"\x01",
    "length_past_end": lambda: f_varint(1, 8) + tag(7, 2) + varint(100) + b"\x0a\x00",
    "field_number_0": lambda: f_varint(1, 8) + b"\x02\x00",
    "wire_type_7": lambda: f_varint(1, 8) + tag(3, 7),
    "truncated_graph": lambda: m_metadata().SerializeToString()[:-3],
}


def main():
    os.makedirs(OUT, exist_ok=True)
    seeds = os.path.join(HERE, "..", "fuzz", "corpus", "parse")
    rejected = os.path.join(HERE, "rejected")
    os.makedirs(rejected, exist_ok=True)
    for name, make in REJECTED.items():
        data = make()
        try:
            onnx.load_from_string(data)
        except Exception:  # noqa: BLE001 - the point is that it fails
            pass
        else:
            raise AssertionError("%s: onnx accepts it" % name)
        with open(os.path.join(rejected, name + ".onnx"), "wb") as f:
            f.write(data)
        if os.path.isdir(seeds):
            with open(os.path.join(seeds, "rejected_" + name + ".onnx"), "wb") as f:
                f.write(data)
    seeds = os.path.join(HERE, "..", "fuzz", "corpus", "parse")
    if os.path.isdir(seeds):
        for name, data in edge_seeds().items():
            with open(os.path.join(seeds, "edge_" + name), "wb") as f:
                f.write(data)
    for name, make in MODELS.items():
        m = make()
        data = m if isinstance(m, bytes) else m.SerializeToString()
        assert len(data) < MAX_SIZE, "%s: %d bytes" % (name, len(data))
        path = os.path.join(OUT, name + ".onnx")
        with open(path, "wb") as f:
            f.write(data)
        onnx.load(path, load_external_data=False)  # the oracle accepts it
        X.ModelProto().ParseFromString(data)
        print("%-16s %6d bytes" % (name + ".onnx", len(data)))
        if os.path.isdir(seeds):
            with open(os.path.join(seeds, "constructed_" + name + ".onnx"), "wb") as f:
                f.write(data)


if __name__ == "__main__":
    main()
