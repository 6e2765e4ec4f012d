"""onnxpb.py — a minimal protobuf writer for ONNX ModelProto, for test models.

python3-onnx cannot build models whose strings are not valid UTF-8 (or hold NUL bytes
in every field); hostile-name tests need exactly those, so this module writes the wire
format itself.  Every string argument may be str (encoded as UTF-8) or bytes (written
as is).  Field numbers are onnx.proto's.
"""
import struct

# TensorProto.DataType and AttributeProto.AttributeType values used by the tests
FLOAT, INT64, STRING, DOUBLE = 1, 7, 8, 11
A_FLOAT, A_INT, A_STRING, A_TENSOR, A_GRAPH = 1, 2, 3, 4, 5
A_FLOATS, A_INTS, A_STRINGS = 6, 7, 8


def _b(s):
    return s.encode("utf-8") if isinstance(s, str) else bytes(s)


def varint(n):
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        low = n & 0x7F
        n >>= 7
        if n:
            out.append(low | 0x80)
        else:
            out.append(low)
            return bytes(out)


def f_int(field, n):
    return varint(field << 3) + varint(n)


def f_bytes(field, data):
    data = _b(data)
    return varint(field << 3 | 2) + varint(len(data)) + data


def f_float(field, x):
    return varint(field << 3 | 5) + struct.pack("<f", x)


def entry(k, v):
    return f_bytes(1, k) + f_bytes(2, v)


def dim(d):
    """A TensorShapeProto.Dimension: int -> dim_value, str/bytes -> dim_param, None."""
    if d is None:
        return b""
    if isinstance(d, int):
        return f_int(1, d)
    return f_bytes(2, d)


def tensor_type(elem, dims):
    t = f_int(1, elem)
    if dims is not None:
        t += f_bytes(2, b"".join(f_bytes(1, dim(d)) for d in dims))
    return f_bytes(1, t)  # TypeProto.tensor_type


def value_info(name, elem=FLOAT, dims=None, doc=None):
    m = f_bytes(1, name) + f_bytes(2, tensor_type(elem, dims))
    if doc is not None:
        m += f_bytes(3, doc)
    return m


def tensor(name, dtype, dims, raw=None, doc=None, floats=None):
    m = b"".join(f_int(1, d) for d in dims) + f_int(2, dtype) + f_bytes(8, name)
    if raw is not None:
        m += f_bytes(9, raw)
    if floats is not None:
        m += b"".join(f_float(4, x) for x in floats)
    if doc is not None:
        m += f_bytes(12, doc)
    return m


def attr(name, value, kind=None, doc=None):
    """An AttributeProto; kind is inferred from the Python value when not given."""
    m = f_bytes(1, name)
    if kind is None:
        if isinstance(value, float):
            kind = A_FLOAT
        elif isinstance(value, int):
            kind = A_INT
        elif isinstance(value, (str, bytes)):
            kind = A_STRING
        elif isinstance(value, list) and value and isinstance(value[0], (str, bytes)):
            kind = A_STRINGS
        elif isinstance(value, list) and value and isinstance(value[0], float):
            kind = A_FLOATS
        else:
            kind = A_INTS
    if kind == A_FLOAT:
        m += f_float(2, value)
    elif kind == A_INT:
        m += f_int(3, value)
    elif kind == A_STRING:
        m += f_bytes(4, value)
    elif kind == A_TENSOR:
        m += f_bytes(5, value)
    elif kind == A_GRAPH:
        m += f_bytes(6, value)
    elif kind == A_FLOATS:
        m += b"".join(f_float(7, x) for x in value)
    elif kind == A_INTS:
        m += b"".join(f_int(8, x) for x in value)
    elif kind == A_STRINGS:
        m += b"".join(f_bytes(9, x) for x in value)
    if doc is not None:
        m += f_bytes(13, doc)
    return m + f_int(20, kind)


def node(op, inputs, outputs, name=None, domain=None, attrs=(), doc=None):
    m = b"".join(f_bytes(1, x) for x in inputs) + b"".join(f_bytes(2, x) for x in outputs)
    if name is not None:
        m += f_bytes(3, name)
    m += f_bytes(4, op)
    m += b"".join(f_bytes(5, a) for a in attrs)
    if doc is not None:
        m += f_bytes(6, doc)
    if domain is not None:
        m += f_bytes(7, domain)
    return m


def graph(nodes, name, inputs=(), outputs=(), initializers=(), doc=None, value_infos=(),
          metadata=()):
    m = b"".join(f_bytes(1, n) for n in nodes) + f_bytes(2, name)
    m += b"".join(f_bytes(5, t) for t in initializers)
    if doc is not None:
        m += f_bytes(10, doc)
    m += b"".join(f_bytes(11, v) for v in inputs)
    m += b"".join(f_bytes(12, v) for v in outputs)
    m += b"".join(f_bytes(13, v) for v in value_infos)
    m += b"".join(f_bytes(16, entry(k, v)) for k, v in metadata)
    return m


def model(g, opsets=(("", 17),), producer="onnxviz-tests", producer_version="1",
          doc=None, domain=None, metadata=(), ir_version=8):
    m = f_int(1, ir_version)
    m += b"".join(f_bytes(8, f_bytes(1, d) + f_int(2, v)) for d, v in opsets)
    m += f_bytes(2, producer) + f_bytes(3, producer_version)
    if domain is not None:
        m += f_bytes(4, domain)
    if doc is not None:
        m += f_bytes(6, doc)
    m += f_bytes(7, g)
    m += b"".join(f_bytes(14, entry(k, v)) for k, v in metadata)
    return m
