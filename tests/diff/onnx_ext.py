"""onnx_ext — python3-onnx's own message classes, brought up to the newest onnx.proto.

Debian's python3-onnx is 1.12 (IR version 8): its schema lacks the fields added since
(metadata_props on graphs, nodes, tensors, value infos and functions; NodeProto.overload and
device_configurations; FunctionProto.attribute_proto, overload and value_info;
ModelProto.configuration and the device/sharding messages; data types 17..26).  Parsed with
the 1.12 classes those fields become unknown fields and vanish from the oracle's view.

This module takes onnx's compiled descriptor (onnx.onnx_ml_pb2), adds exactly those fields
and messages (numbers, labels and types as in the newest onnx/onnx.in.proto), and builds the
message classes in a private descriptor pool.  Decoding stays Google protobuf's (the C++
implementation behind python3-protobuf); only the schema is extended.  `python3
onnx_ext.py check PATH/onnx.in.proto` compares the extended schema with an onnx.in.proto
field by field (run by hand against the upstream file; it prints every mismatch).

Test oracle only: never part of the product.
"""
import re
import sys

import onnx
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

FD = descriptor_pb2.FieldDescriptorProto
OPT, REP = FD.LABEL_OPTIONAL, FD.LABEL_REPEATED
T_STR, T_I64, T_I32, T_MSG = FD.TYPE_STRING, FD.TYPE_INT64, FD.TYPE_INT32, FD.TYPE_MESSAGE

# (message, field name, number, label, type, message type name or None)
NEW_FIELDS = [
    ("ValueInfoProto", "metadata_props", 4, REP, T_MSG, "StringStringEntryProto"),
    ("NodeProto", "overload", 8, OPT, T_STR, None),
    ("NodeProto", "metadata_props", 9, REP, T_MSG, "StringStringEntryProto"),
    ("NodeProto", "device_configurations", 10, REP, T_MSG, "NodeDeviceConfigurationProto"),
    ("ModelProto", "configuration", 26, REP, T_MSG, "DeviceConfigurationProto"),
    ("GraphProto", "metadata_props", 16, REP, T_MSG, "StringStringEntryProto"),
    ("TensorProto", "metadata_props", 16, REP, T_MSG, "StringStringEntryProto"),
    ("FunctionProto", "attribute_proto", 11, REP, T_MSG, "AttributeProto"),
    ("FunctionProto", "overload", 13, OPT, T_STR, None),
    ("FunctionProto", "value_info", 12, REP, T_MSG, "ValueInfoProto"),
    ("FunctionProto", "metadata_props", 14, REP, T_MSG, "StringStringEntryProto"),
]

# new messages: name -> [(field, number, label, type, message type, oneof index)]
NEW_MESSAGES = {
    "IntIntListEntryProto": [("key", 1, OPT, T_I64, None, None),
                             ("value", 2, REP, T_I64, None, None)],
    "NodeDeviceConfigurationProto": [
        ("configuration_id", 1, OPT, T_STR, None, None),
        ("sharding_spec", 2, REP, T_MSG, "ShardingSpecProto", None),
        ("pipeline_stage", 3, OPT, T_I32, None, None)],
    "ShardingSpecProto": [
        ("tensor_name", 1, OPT, T_STR, None, None),
        ("device", 2, REP, T_I64, None, None),
        ("index_to_device_group_map", 3, REP, T_MSG, "IntIntListEntryProto", None),
        ("sharded_dim", 4, REP, T_MSG, "ShardedDimProto", None)],
    "ShardedDimProto": [("axis", 1, OPT, T_I64, None, None),
                        ("simple_sharding", 2, REP, T_MSG, "SimpleShardedDimProto", None)],
    "SimpleShardedDimProto": [("dim_value", 1, OPT, T_I64, None, 0),
                              ("dim_param", 2, OPT, T_STR, None, 0),
                              ("num_shards", 3, OPT, T_I64, None, None)],
    "DeviceConfigurationProto": [("name", 1, OPT, T_STR, None, None),
                                 ("num_devices", 2, OPT, T_I32, None, None),
                                 ("device", 3, REP, T_STR, None, None)],
}
NEW_ONEOFS = {"SimpleShardedDimProto": ["dim"]}

NEW_DTYPES = [("FLOAT8E4M3FN", 17), ("FLOAT8E4M3FNUZ", 18), ("FLOAT8E5M2", 19),
              ("FLOAT8E5M2FNUZ", 20), ("UINT4", 21), ("INT4", 22), ("FLOAT4E2M1", 23),
              ("FLOAT8E8M0", 24), ("UINT2", 25), ("INT2", 26)]


def _add_field(msg, name, number, label, ftype, type_name, oneof=None):
    f = msg.field.add()
    f.name, f.number, f.label, f.type = name, number, label, ftype
    if type_name:
        f.type_name = "." + PACKAGE + "." + type_name
    if oneof is not None:
        f.oneof_index = oneof


def _file_proto():
    fp = descriptor_pb2.FileDescriptorProto()
    onnx.onnx_ml_pb2.DESCRIPTOR.CopyToProto(fp)
    by_name = {m.name: m for m in fp.message_type}
    for msg, name, number, label, ftype, type_name in NEW_FIELDS:
        if any(f.number == number for f in by_name[msg].field):
            continue  # a newer onnx already has it
        _add_field(by_name[msg], name, number, label, ftype, type_name)
    for name, fields in NEW_MESSAGES.items():
        if name in by_name:
            continue
        m = fp.message_type.add()
        m.name = name
        for oneof in NEW_ONEOFS.get(name, []):
            m.oneof_decl.add().name = oneof
        for fname, number, label, ftype, type_name, oneof in fields:
            _add_field(m, fname, number, label, ftype, type_name, oneof)
    dt = [e for e in by_name["TensorProto"].enum_type if e.name == "DataType"][0]
    have = {v.number for v in dt.value}
    for vname, number in NEW_DTYPES:
        if number not in have:
            v = dt.value.add()
            v.name, v.number = vname, number
    return fp


PACKAGE = onnx.onnx_ml_pb2.DESCRIPTOR.package
_pool = descriptor_pool.DescriptorPool()
_fdesc = _pool.Add(_file_proto())
_factory = message_factory.MessageFactory(_pool)


def _cls(name):
    return _factory.GetPrototype(_pool.FindMessageTypeByName(PACKAGE + "." + name))


ModelProto = _cls("ModelProto")
GraphProto = _cls("GraphProto")
NodeProto = _cls("NodeProto")
AttributeProto = _cls("AttributeProto")
TensorProto = _cls("TensorProto")
SparseTensorProto = _cls("SparseTensorProto")
TypeProto = _cls("TypeProto")
ValueInfoProto = _cls("ValueInfoProto")
FunctionProto = _cls("FunctionProto")
TrainingInfoProto = _cls("TrainingInfoProto")
StringStringEntryProto = _cls("StringStringEntryProto")
TensorShapeProto = _cls("TensorShapeProto")
TensorAnnotation = _cls("TensorAnnotation")
OperatorSetIdProto = _cls("OperatorSetIdProto")
DeviceConfigurationProto = _cls("DeviceConfigurationProto")
NodeDeviceConfigurationProto = _cls("NodeDeviceConfigurationProto")


def upgrade(msg, cls):
    """The same bytes re-read with the extended class (unknown fields become known)."""
    out = cls()
    out.ParseFromString(msg.SerializeToString())
    return out


# ---------------------------------------------------------------------------------------
# Schema check against an onnx.in.proto (by hand: python3 onnx_ext.py check FILE)
_LABELS = {"optional": OPT, "repeated": REP, "required": FD.LABEL_REQUIRED}
_SCALARS = {"string": T_STR, "bytes": FD.TYPE_BYTES, "int64": T_I64, "int32": T_I32,
            "float": FD.TYPE_FLOAT, "double": FD.TYPE_DOUBLE, "uint64": FD.TYPE_UINT64}


def _parse_proto(text):
    """{qualified message: {field: (number, label, type name)}}, enums {name: {value: n}}."""
    text = re.sub(r"//[^\n]*", "", text)
    msgs, enums, stack, kinds = {}, {}, [], []
    tok = re.finditer(r"(message|enum|oneof)\s+(\w+)\s*\{|\}|"
                      r"(?:(optional|repeated|required)\s+)?([\w.]+)\s+(\w+)\s*=\s*(\w+)[^;]*;",
                      text)
    for m in tok:
        if m.group(1):
            kinds.append(m.group(1))
            if m.group(1) != "oneof":
                stack.append(m.group(2))
                (msgs if m.group(1) == "message" else enums)[".".join(stack)] = {}
            else:
                stack.append(None)
        elif m.group(0) == "}":
            if kinds:
                kinds.pop()
                stack.pop()
        else:
            scope = ".".join(s for s in stack if s)
            in_oneof = bool(stack) and stack[-1] is None
            if kinds and kinds[-1] == "enum" and m.group(4) is not None and m.group(5) is None:
                continue
            label, ftype, name, number = m.group(3), m.group(4), m.group(5), m.group(6)
            if scope in enums:
                continue
            if scope in msgs:
                msgs[scope][name] = (int(number, 0), label or ("oneof" if in_oneof else
                                                              "optional"), ftype)
    for m in re.finditer(r"enum\s+(\w+)\s*\{([^}]*)\}", text):
        enums[m.group(1)] = {k: int(v, 0) for k, v in
                             re.findall(r"(\w+)\s*=\s*(0x[0-9A-Fa-f]+|\d+)", m.group(2))}
    return msgs, enums


def check(path):
    msgs, enums = _parse_proto(open(path).read())
    problems = []
    for qname, fields in sorted(msgs.items()):
        try:
            d = _pool.FindMessageTypeByName(PACKAGE + "." + qname)
        except KeyError:
            problems.append("missing message %s" % qname)
            continue
        for fname, (number, label, ftype) in sorted(fields.items()):
            f = d.fields_by_name.get(fname)
            if f is None:
                problems.append("missing field %s.%s = %d" % (qname, fname, number))
                continue
            if f.number != number:
                problems.append("%s.%s: number %d, upstream %d" % (qname, fname, f.number,
                                                                    number))
            want_label = REP if label == "repeated" else OPT
            if f.label != want_label:
                problems.append("%s.%s: label differs" % (qname, fname))
            if ftype in _SCALARS and f.type != _SCALARS[ftype]:
                problems.append("%s.%s: type %d, upstream %s" % (qname, fname, f.type, ftype))
            if ftype not in _SCALARS and f.message_type is None and f.enum_type is None:
                problems.append("%s.%s: upstream %s, here scalar" % (qname, fname, ftype))
            if label == "oneof" and f.containing_oneof is None:
                problems.append("%s.%s: not in a oneof" % (qname, fname))
        for f in d.fields:
            if f.name not in fields:
                problems.append("extra field %s.%s" % (qname, f.name))
    dt = _pool.FindEnumTypeByName(PACKAGE + ".TensorProto.DataType")
    for vname, number in enums.get("DataType", {}).items():
        v = dt.values_by_name.get(vname)
        if v is None or v.number != number:
            problems.append("DataType %s = %d missing or different" % (vname, number))
    for p in problems:
        print("schema:", p)
    print("schema: %d messages checked, %d problems" % (len(msgs), len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "check":
        sys.exit(check(sys.argv[2]))
    print("usage: onnx_ext.py check onnx.in.proto", file=sys.stderr)
    sys.exit(2)
