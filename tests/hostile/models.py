"""models.py — hostile test models, made at test time (and for the fuzz seeds).

Each function returns the bytes of one input.  Small well-formed models are built with
python3-onnx (1.12); what an exporter never writes (a node with 10^6 inputs, nesting
10^5 deep, lengths of 2^63, 11-byte varints, dtypes newer than onnx 1.12) is encoded by
hand with the wire helpers of tests/data/make_models.py.  Used by tests/hostile/
hostile_test.py and tests/fuzz/make_seeds.py; never part of the product.
"""
import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "data"))

import onnx  # noqa: E402
from onnx import TensorProto, helper  # noqa: E402

from make_models import f_bytes, f_fixed32, f_varint, tag, varint  # noqa: E402

# ---------------------------------------------------------------------------------------
# Hostile names: each must come out of every rendering as literal text.
HOSTILE_NAMES = [
    "</text><script>alert(1)</script>",
    '"><svg onload=alert(1)>',
    "javascript:alert(1)",
    "]]><x>",
    "nul\x00byte",
    '" image="/etc/passwd',
    '" URL="javascript:alert(1)',
    "<foreignObject><body onload=alert(1)>",
    "back\\slash\\N\\G\\l",
    "x' onmouseover='alert(1)",
    "&amp;&lt;&#x3c;",
]
INVALID_UTF8 = [b"bad\xff\xfeutf8", b"\xc0\xafoverlong", b"\xed\xa0\x80surrogate", b"cut\xe2\x82"]


def _raw_str(s):
    return s if isinstance(s, bytes) else s.encode("utf-8")


def names_model(names, raw_names=()):
    """A chain of Relu nodes whose node names, op types, value names, graph name, doc
    strings and attribute strings are the hostile strings (raw_names: bytes that are not
    UTF-8, encoded by hand since protobuf refuses them in string fields)."""
    strs = [_raw_str(n) for n in names] + list(raw_names)
    nodes = b""
    prev = b"x"
    for i, s in enumerate(strs):
        out = s + b"#%d" % i
        attr = f_bytes(1, b"note") + f_varint(20, 3) + f_bytes(4, s)  # STRING attribute
        nodes += f_bytes(1, f_bytes(1, prev) + f_bytes(2, out) + f_bytes(3, s) +
                         f_bytes(4, b"Relu") + f_bytes(5, attr) + f_bytes(6, s))
        prev = out
    tensor_type = f_bytes(1, f_varint(1, 1) + f_bytes(2, f_bytes(1, f_varint(1, 1))))
    vinfo = lambda n: f_bytes(1, n) + f_bytes(2, tensor_type)  # noqa: E731
    graph = (nodes + f_bytes(2, strs[0]) + f_bytes(11, vinfo(b"x")) +
             f_bytes(12, vinfo(prev)) + f_bytes(10, strs[-1]))
    return (f_varint(1, 8) + f_bytes(2, strs[1 % len(strs)]) + f_bytes(7, graph) +
            f_bytes(8, f_bytes(1, b"") + f_varint(2, 17)) + f_bytes(6, strs[0]))


def chain(n, name_len=0):
    """n Add nodes in a chain with random skips (a layout of seconds at n = 10^4)."""
    import random
    rnd = random.Random(1)
    nodes, prev = [], ["x"]
    for i in range(n):
        b = prev[rnd.randrange(max(0, len(prev) - 50), len(prev))]
        nodes.append(helper.make_node("Add", [prev[-1], b], ["v%d" % i],
                                      name=("add%d" % i).ljust(name_len, "_")))
        prev.append("v%d" % i)
    g = helper.make_graph(nodes, "chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
                          [helper.make_tensor_value_info(prev[-1], TensorProto.FLOAT, [1])])
    return helper.make_model(g).SerializeToString()


def small(n=3, producer="hostile"):
    """A valid model of n Relu nodes (distinct bytes per producer string)."""
    nodes = [helper.make_node("Relu", ["v%d" % i], ["v%d" % (i + 1)], name="r%d" % i) for i in range(n)]
    g = helper.make_graph(nodes, "small", [helper.make_tensor_value_info("v0", TensorProto.FLOAT, [1, 4])],
                          [helper.make_tensor_value_info("v%d" % n, TensorProto.FLOAT, [1, 4])])
    return helper.make_model(g, producer_name=producer).SerializeToString()


def padded(size, producer="pad"):
    """A valid model of about `size` bytes: a small graph plus one FLOAT initializer."""
    n = max(1, (size - 400) // 4)
    w = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[n])
    w.raw_data = struct.pack("<f", 0.5) * n
    node = helper.make_node("Add", ["x", "w"], ["y"], name="add")
    g = helper.make_graph([node], "padded", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [n])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [n])], [w])
    return helper.make_model(g, producer_name=producer).SerializeToString()


# ---------------------------------------------------------------------------------------
# Wire-format attacks (hand encoded)
def _model(graph_body):
    return f_varint(1, 8) + f_bytes(7, graph_body) + f_bytes(8, f_bytes(1, b"") + f_varint(2, 17))


def length_prefix(n):
    """graph (field 7) claiming n bytes, followed by two."""
    return f_varint(1, 8) + tag(7, 2) + varint(n) + b"\x0a\x00"


def varint_11():
    return b"\x08" + b"\xff" * 10 + b"\x01"


def wrong_wire_types():
    """Inputs each with one known field sent with the wrong wire type (or a group)."""
    return {
        "ir_version_as_bytes": f_bytes(1, b"x"),
        "graph_as_varint": f_varint(1, 8) + f_varint(7, 1),
        "node_name_as_fixed32": _model(f_bytes(1, tag(3, 5) + b"abcd")),
        "graph_as_fixed64": f_varint(1, 8) + tag(7, 1) + b"\x00" * 8,
        "group": f_varint(1, 8) + tag(7, 3) + tag(7, 4),
        "unknown_group": f_varint(1, 8) + tag(99, 3) + tag(99, 4),
        "wire_type_6": f_varint(1, 8) + tag(9, 6),
        "field_zero": f_varint(1, 8) + b"\x02\x00",
    }


def nested(depth):
    """GraphProto > NodeProto > AttributeProto > GraphProto ... `depth` messages deep,
    built outside in (no quadratic copying): a protobuf stack bomb."""
    # level j (0 = outermost, inside the main graph) is graph.node (1), node.attribute (5)
    # or attribute.g (6), in turn; built from the innermost level outwards
    fields = [1, 5, 6]
    heads = []
    inner_len = 0
    for j in range(depth - 1, -1, -1):
        num = fields[j % 3]
        h = tag(num, 2) + varint(inner_len)
        heads.append(h)
        inner_len += len(h)
    body = b"".join(reversed(heads))
    return f_varint(1, 8) + tag(7, 2) + varint(len(body)) + body


def nested_types(depth):
    """graph.input[0].type: sequence_type { elem_type { sequence_type ... } } with `depth`
    TypeProtos (2 * depth messages), no subgraph: only the message depth limit applies."""
    heads = []
    inner_len = 0
    for j in range(2 * depth - 1, -1, -1):
        num = 4 if j % 2 == 0 else 1  # TypeProto.sequence_type (4), Sequence.elem_type (1)
        h = tag(num, 2) + varint(inner_len)
        heads.append(h)
        inner_len += len(h)
    t = b"".join(reversed(heads))
    vinfo = f_bytes(1, b"x") + tag(2, 2) + varint(len(t)) + t
    graph = tag(11, 2) + varint(len(vinfo)) + vinfo
    return f_varint(1, 8) + tag(7, 2) + varint(len(graph)) + graph


def wide_node(ninputs):
    """One node with ninputs inputs."""
    node = f_bytes(1, b"x") * ninputs + f_bytes(2, b"y") + f_bytes(4, b"Sum")
    return _model(f_bytes(1, node))


def many_nodes(nnodes):
    """nnodes Relu nodes (the same bytes each: a flat, cheap 10^6-node file)."""
    node = f_bytes(1, f_bytes(1, b"x") + f_bytes(2, b"y") + f_bytes(4, b"Relu"))
    return _model(node * nnodes)


def dims_model(dims):
    """An initializer with the given dims (negative and overflowing ones encoded raw)."""
    t = b"".join(f_varint(1, d & ((1 << 64) - 1)) for d in dims) + f_varint(2, 1) + f_bytes(8, b"w")
    node = f_bytes(1, b"w") + f_bytes(2, b"y") + f_bytes(4, b"Identity")
    return _model(f_bytes(1, node) + f_bytes(5, t))


def shape_dims_model(rank):
    """A graph input of the given rank (value_info dims are kept as they are)."""
    dims = b"".join(f_bytes(1, f_varint(1, 2)) for _ in range(rank))
    tt = f_bytes(1, f_varint(1, 1) + f_bytes(2, dims))
    node = f_bytes(1, b"x") + f_bytes(2, b"y") + f_bytes(4, b"Relu")
    return _model(f_bytes(1, node) + f_bytes(11, f_bytes(1, b"x") + f_bytes(2, tt)))


def recursive_functions():
    """Model-local functions f -> g -> f, called from the main graph."""
    f = helper.make_function("local", "f", ["a"], ["b"], [helper.make_node("g", ["a"], ["b"], domain="local")],
                             [helper.make_opsetid("", 17), helper.make_opsetid("local", 1)])
    g = helper.make_function("local", "g", ["a"], ["b"], [helper.make_node("f", ["a"], ["b"], domain="local")],
                             [helper.make_opsetid("", 17), helper.make_opsetid("local", 1)])
    graph = helper.make_graph([helper.make_node("f", ["x"], ["y"], domain="local")], "rec",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("local", 1)],
                          functions=[f, g])
    return m.SerializeToString()


def nested_if(levels):
    """If nodes nested `levels` deep (then_branch inside then_branch ...)."""
    out = onnx.ValueInfoProto(name="o")
    inner = helper.make_graph([helper.make_node("Identity", ["c"], ["o"])], "leaf", [], [out])
    for level in range(levels - 1, -1, -1):
        node = helper.make_node("If", ["c"], ["o"], then_branch=inner,
                                else_branch=helper.make_graph([], "e%d" % level, [], []))
        inputs = [helper.make_tensor_value_info("c", TensorProto.BOOL, [])] if level == 0 else []
        inner = helper.make_graph([node], "level%d" % level, inputs, [out])
    return helper.make_model(inner, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


def external_model(entries, dims=(4,), dtype=TensorProto.FLOAT):
    """An initializer with data_location EXTERNAL and the given (key, value) entries."""
    t = TensorProto(name="w", data_type=dtype, dims=list(dims))
    t.data_location = TensorProto.EXTERNAL
    for k, v in entries:
        e = t.external_data.add()
        e.key, e.value = k, v
    node = helper.make_node("Identity", ["w"], ["y"], name="id")
    g = helper.make_graph([node], "ext", [], [helper.make_tensor_value_info("y", dtype, list(dims))], [t])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


# ---------------------------------------------------------------------------------------
# Multipart bodies
def multipart(parts, boundary=b"xYzZy"):
    """A multipart/form-data body: parts are (name, bytes)."""
    out = b""
    for name, data in parts:
        out += (b"--" + boundary + b"\r\nContent-Disposition: form-data; name=\"" + name +
                b"\"; filename=\"m.onnx\"\r\nContent-Type: application/octet-stream\r\n\r\n" +
                data + b"\r\n")
    return out + b"--" + boundary + b"--\r\n"


# ---------------------------------------------------------------------------------------
# Tensors of every data type (for the tensor fuzz target's seeds)
def tensor_seeds():
    """Lone TensorProtos: each dtype in raw_data (special values for the float formats)
    and in its typed field, packed and unpacked; strings; external entries."""
    def t(dtype, dims, body):
        return b"".join(f_varint(1, d) for d in dims) + f_varint(2, dtype) + f_bytes(8, b"t") + body

    seeds = {}
    f32 = [0.0, -0.0, 1.0, float("inf"), float("-inf"), float("nan"), 1e-45, 3.4e38]
    seeds["f32_raw_specials"] = t(1, [8], f_bytes(9, struct.pack("<8f", *f32)))
    seeds["f32_float_data_packed"] = t(1, [8], f_bytes(4, struct.pack("<8f", *f32)))
    seeds["f32_float_data_unpacked"] = t(1, [3], b"".join(f_fixed32(4, struct.pack("<f", v)) for v in (1, 2, 3)))
    f16 = [0x0000, 0x8000, 0x3c00, 0x7c00, 0xfc00, 0x7e00, 0x7d01, 0x0001, 0x03ff, 0x7bff]
    seeds["f16_raw_specials"] = t(10, [10], f_bytes(9, struct.pack("<10H", *f16)))
    seeds["f16_int32_data"] = t(10, [10], f_bytes(5, b"".join(varint(v) for v in f16)))
    seeds["bf16_raw_specials"] = t(16, [6], f_bytes(9, struct.pack("<6H", 0, 0x8000, 0x3f80, 0x7f80, 0xff80, 0x7fc1)))
    f64 = [0.0, -0.0, 1.5, float("inf"), float("nan"), 5e-324, 1.7976931348623157e308, -1.7976931348623157e308]
    seeds["f64_raw"] = t(11, [8], f_bytes(9, struct.pack("<8d", *f64)))
    seeds["f64_double_data"] = t(11, [8], f_bytes(10, struct.pack("<8d", *f64)))
    for dt in range(17, 25):  # FLOAT8 types, FLOAT4E2M1 (packed), FLOAT8E8M0
        n = 16 if dt != 23 else 32
        seeds["fp%d_raw_all" % dt] = t(dt, [n], f_bytes(9, bytes(range(0, 256, 16)) if dt != 23 else bytes(range(16))))
    seeds["f8e4m3_int32_data"] = t(17, [4], f_bytes(5, b"".join(varint(v) for v in (0, 0x7f, 0xff, 0x38))))
    ints = {2: ("<4B", [0, 1, 127, 255]), 3: ("<4b", [0, -1, 127, -128]), 4: ("<3H", [0, 1, 65535]),
            5: ("<3h", [0, -1, -32768]), 6: ("<3i", [0, -1, 2**31 - 1]), 7: ("<3q", [0, -1, -2**63]),
            12: ("<2I", [0, 2**32 - 1]), 13: ("<2Q", [0, 2**64 - 1]), 9: ("<4B", [0, 1, 2, 255])}
    for dt, (fmt, vals) in ints.items():
        seeds["int%d_raw" % dt] = t(dt, [len(vals)], f_bytes(9, struct.pack(fmt, *vals)))
    seeds["int32_int32_data"] = t(6, [3], f_bytes(5, b"".join(varint(v) for v in (0, -1, 2**31 - 1))))
    seeds["int8_int32_data_bad"] = t(3, [2], f_bytes(5, varint(128) + varint(1)))
    seeds["int64_int64_data"] = t(7, [3], f_bytes(7, b"".join(varint(v) for v in (0, -1, 2**63 - 1))))
    seeds["uint64_uint64_data"] = t(13, [2], f_bytes(11, varint(2**64 - 1) + varint(7)))
    seeds["uint32_uint64_data_bad"] = t(12, [1], f_bytes(11, varint(2**32)))
    seeds["bool_int32_data"] = t(9, [3], f_bytes(5, varint(0) + varint(1) + varint(7)))
    for dt in (21, 22, 25, 26):  # UINT4, INT4, UINT2, INT2
        seeds["sub_byte_%d_raw" % dt] = t(dt, [7], f_bytes(9, b"\x21\x43\xf5\x8f"))
        seeds["sub_byte_%d_int32_data" % dt] = t(dt, [5], f_bytes(5, varint(0x21) + varint(0xf3) + varint(0x7)))
    seeds["c64_raw"] = t(14, [2], f_bytes(9, struct.pack("<4f", 1, -1, float("nan"), float("inf"))))
    seeds["c64_float_data"] = t(14, [2], f_bytes(4, struct.pack("<4f", 1, 2, 3, 4)))
    seeds["c128_double_data"] = t(15, [1], f_bytes(10, struct.pack("<2d", 1, -0.0)))
    seeds["string"] = t(8, [3], f_bytes(6, b"a") + f_bytes(6, b"\xff\x00") + f_bytes(6, b"</script>"))
    seeds["string_count_bad"] = t(8, [3], f_bytes(6, b"a"))
    seeds["dims_empty_scalar"] = t(1, [], f_bytes(9, struct.pack("<f", 2.0)))
    seeds["dims_zero"] = t(1, [0, 5], b"")
    seeds["dims_overflow"] = t(1, [2**62, 4], b"")
    seeds["raw_and_typed"] = t(1, [1], f_bytes(9, b"\x00" * 4) + f_bytes(4, b"\x00" * 4))
    seeds["raw_short"] = t(1, [4], f_bytes(9, b"\x00" * 15))
    seeds["unknown_dtype"] = t(99, [1], f_bytes(9, b"\x00"))
    ext = lambda k, v: f_bytes(13, f_bytes(1, k) + f_bytes(2, v))  # noqa: E731
    seeds["external_ok"] = t(1, [2], ext(b"location", b"w.bin") + ext(b"offset", b"0") +
                             ext(b"length", b"8") + f_varint(14, 1))
    seeds["external_traversal"] = t(1, [2], ext(b"location", b"a/../../etc/passwd") + f_varint(14, 1))
    seeds["external_negative"] = t(1, [2], ext(b"location", b"w") + ext(b"length", b"-1") + f_varint(14, 1))
    seeds["external_petabyte"] = t(1, [2], ext(b"location", b"w") + ext(b"length", b"1125899906842624") +
                                   f_varint(14, 1))
    seeds["external_unknown_key"] = t(1, [2], ext(b"location", b"w") + ext(b"__class__", b"x") + f_varint(14, 1))
    return seeds
