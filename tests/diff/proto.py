#!/usr/bin/python3
"""proto.py — differential test of the parser against python3-onnx.

For every model of the corpus ($ONNXVIZ_CORPUS/models/**/*.onnx), every constructed model
(tests/data/models/*.onnx; tests/data/rejected/*.onnx, which both must reject) and every serialized TensorProto of the corpus's test data sets
(*.pb, parsed as lone tensors), it compares what onnxviz decodes (printed as canonical JSON
by $BUILD/tools/protodump, format described in tests/tools/protodump.c) with what the onnx
package decodes (onnx.load(..., load_external_data=False), re-read with the schema extended
to the newest onnx.proto by onnx_ext.py), field by field, and prints every difference with
its path and a count.  Exit status 1 when there is any difference, or when either side
rejects a file the other accepts.

    proto.py [FILE...]      (default: the corpus, the constructed models, the tensors)

Test oracle only: never part of the product.
"""
import glob
import hashlib
import json
import math
import os
import subprocess
import sys

import onnx

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
import onnx_ext as X  # noqa: E402

MAX_PRINTED = 200  # differences printed in full; all are counted


# ---------------------------------------------------------------------------------------
# The canonical JSON of a message, built from the protobuf objects (mirrors protodump.c)
def S(v):
    b = v.encode("utf-8", "surrogatepass") if isinstance(v, str) else bytes(v)
    try:
        return b.decode("utf-8")
    except UnicodeDecodeError:
        return {"hex": b.hex()}


def F(v):
    if v != v:
        return "nan"
    if v in (float("inf"), float("-inf")):
        return "inf" if v > 0 else "-inf"
    if v == 0 and math.copysign(1.0, v) < 0:
        return "-0"
    return json.loads("%.9g" % v)


def entries(a):
    return [{"key": S(e.key), "value": S(e.value)} for e in a]


def opsets(a):
    return [{"domain": S(o.domain), "version": o.version} for o in a]


def varint_len(v):
    v &= (1 << 64) - 1
    n = 1
    while v >= 0x80:
        v >>= 7
        n += 1
    return n


TYPED = [("float_data", lambda a: 4 * len(a)),
         ("int32_data", lambda a: sum(varint_len(x) for x in a)),
         ("int64_data", lambda a: sum(varint_len(x) for x in a)),
         ("double_data", lambda a: 8 * len(a)),
         ("uint64_data", lambda a: sum(varint_len(x) for x in a))]


def tensor(t):
    if t is None:
        return None
    typed = [name for name, _ in TYPED if len(getattr(t, name)) > 0]
    if t.data_location == 1:
        storage = "external"
    elif t.HasField("raw_data"):
        storage = "raw"
    elif len(t.string_data) > 0:
        storage = "string_data"
    elif typed:
        storage = typed[0]
    else:
        storage = "none"
    return {
        "dims": list(t.dims),
        "data_type": t.data_type,
        "segment": {"begin": t.segment.begin, "end": t.segment.end}
        if t.HasField("segment") else None,
        "name": S(t.name),
        "doc_string": S(t.doc_string),
        "raw_data": {"len": len(t.raw_data), "sha256": hashlib.sha256(t.raw_data).hexdigest()}
        if t.HasField("raw_data") else None,
        "string_data": [S(s) for s in t.string_data],
        "external_data": entries(t.external_data),
        "data_location": t.data_location,
        "typed_fields": typed,
        "typed_bytes": sum(size(getattr(t, name)) for name, size in TYPED),
        "storage": storage,
        "metadata_props": entries(t.metadata_props),
    }


def opt(msg, field, fn):
    return fn(getattr(msg, field)) if msg.HasField(field) else None


def sparse(s):
    return {"values": opt(s, "values", tensor), "indices": opt(s, "indices", tensor),
            "dims": list(s.dims)}


def dim_choice(d, oneof):
    which = d.WhichOneof(oneof)
    if which == "dim_value":
        return {"kind": "value", "dim_value": d.dim_value}
    if which == "dim_param":
        return {"kind": "param", "dim_param": S(d.dim_param)}
    return {"kind": None}


def type_(t):
    out = {"denotation": S(t.denotation)}
    kind = t.WhichOneof("value")
    out["kind"] = kind
    if kind in ("tensor_type", "sparse_tensor_type"):
        m = getattr(t, kind)
        out["elem_type"] = m.elem_type
        out["shape"] = [dict(dim_choice(d, "value"), denotation=S(d.denotation))
                        for d in m.shape.dim] if m.HasField("shape") else None
    elif kind in ("sequence_type", "optional_type"):
        out["elem_type"] = opt(getattr(t, kind), "elem_type", type_)
    elif kind == "map_type":
        out["key_type"] = t.map_type.key_type
        out["value_type"] = opt(t.map_type, "value_type", type_)
    elif kind == "opaque_type":
        out["domain"] = S(t.opaque_type.domain)
        out["name"] = S(t.opaque_type.name)
    return out


def value_infos(a):
    return [{"name": S(v.name), "type": opt(v, "type", type_), "doc_string": S(v.doc_string),
             "metadata_props": entries(v.metadata_props)} for v in a]


# IR version 1 attributes have no type: the parser infers it from the value present, in
# this order (AttributeProto field name, AttributeType).
INFER = [("f", 1), ("i", 2), ("s", 3), ("t", 4), ("g", 5), ("sparse_tensor", 11),
         ("tp", 13), ("floats", 6), ("ints", 7), ("strings", 8), ("tensors", 9),
         ("graphs", 10), ("sparse_tensors", 12), ("type_protos", 14)]


def attr(a):
    atype, inferred = a.type, False
    if not (a.HasField("type") and a.type != 0):
        for field, t in INFER:
            present = (len(getattr(a, field)) > 0 if field.endswith("s")
                       else a.HasField(field))
            if present:
                atype, inferred = t, True
                break
    return {
        "name": S(a.name), "ref_attr_name": S(a.ref_attr_name), "doc_string": S(a.doc_string),
        "type": atype, "type_inferred": inferred, "f": F(a.f), "i": a.i, "s": S(a.s),
        "t": opt(a, "t", tensor), "g": opt(a, "g", graph),
        "sparse_tensor": opt(a, "sparse_tensor", sparse), "tp": opt(a, "tp", type_),
        "floats": [F(x) for x in a.floats], "ints": list(a.ints),
        "strings": [S(s) for s in a.strings], "tensors": [tensor(x) for x in a.tensors],
        "graphs": [graph(x) for x in a.graphs],
        "sparse_tensors": [sparse(x) for x in a.sparse_tensors],
        "type_protos": [type_(x) for x in a.type_protos],
    }


def sharding_spec(s):
    return {
        "tensor_name": S(s.tensor_name), "device": list(s.device),
        "index_to_device_group_map": [{"key": e.key, "value": list(e.value)}
                                      for e in s.index_to_device_group_map],
        "sharded_dim": [{"axis": d.axis, "simple_sharding": [
            dict(dim_choice(x, "dim"), num_shards=x.num_shards) for x in d.simple_sharding]}
            for d in s.sharded_dim],
    }


def nodes(a):
    return [{
        "input": [S(s) for s in n.input], "output": [S(s) for s in n.output],
        "name": S(n.name), "op_type": S(n.op_type), "domain": S(n.domain),
        "overload": S(n.overload), "attribute": [attr(x) for x in n.attribute],
        "doc_string": S(n.doc_string), "metadata_props": entries(n.metadata_props),
        "device_configurations": [{
            "configuration_id": S(c.configuration_id),
            "sharding_spec": [sharding_spec(s) for s in c.sharding_spec],
            "pipeline_stage": c.pipeline_stage} for c in n.device_configurations],
    } for n in a]


def graph(g):
    return {
        "node": nodes(g.node), "name": S(g.name),
        "initializer": [tensor(t) for t in g.initializer],
        "sparse_initializer": [sparse(s) for s in g.sparse_initializer],
        "doc_string": S(g.doc_string), "input": value_infos(g.input),
        "output": value_infos(g.output), "value_info": value_infos(g.value_info),
        "quantization_annotation": [{
            "tensor_name": S(q.tensor_name),
            "quant_parameter_tensor_names": entries(q.quant_parameter_tensor_names)}
            for q in g.quantization_annotation],
        "metadata_props": entries(g.metadata_props),
    }


def function(f):
    return {
        "name": S(f.name), "input": [S(s) for s in f.input],
        "output": [S(s) for s in f.output], "attribute": [S(s) for s in f.attribute],
        "attribute_proto": [attr(a) for a in f.attribute_proto], "node": nodes(f.node),
        "doc_string": S(f.doc_string), "opset_import": opsets(f.opset_import),
        "domain": S(f.domain), "overload": S(f.overload),
        "value_info": value_infos(f.value_info), "metadata_props": entries(f.metadata_props),
    }


def model(m):
    return {
        "ir_version": m.ir_version, "opset_import": opsets(m.opset_import),
        "producer_name": S(m.producer_name), "producer_version": S(m.producer_version),
        "domain": S(m.domain), "model_version": m.model_version,
        "doc_string": S(m.doc_string), "graph": opt(m, "graph", graph),
        "metadata_props": entries(m.metadata_props),
        "training_info": [{
            "initialization": opt(t, "initialization", graph),
            "algorithm": opt(t, "algorithm", graph),
            "initialization_binding": entries(t.initialization_binding),
            "update_binding": entries(t.update_binding)} for t in m.training_info],
        "functions": [function(f) for f in m.functions],
        "configuration": [{"name": S(c.name), "num_devices": c.num_devices,
                           "device": [S(d) for d in c.device]} for c in m.configuration],
    }


# ---------------------------------------------------------------------------------------
def compare(ours, theirs, path, out):
    """Append (path, ours, theirs) for every difference."""
    if isinstance(ours, dict) and isinstance(theirs, dict):
        for k in list(theirs) + [k for k in ours if k not in theirs]:
            if k not in ours or k not in theirs:
                out.append(("%s.%s" % (path, k), ours.get(k, "<missing>"),
                            theirs.get(k, "<missing>")))
            else:
                compare(ours[k], theirs[k], "%s.%s" % (path, k), out)
    elif isinstance(ours, list) and isinstance(theirs, list):
        if len(ours) != len(theirs):
            out.append(("%s (length)" % path, len(ours), len(theirs)))
        for i, (a, b) in enumerate(zip(ours, theirs)):
            compare(a, b, "%s[%d]" % (path, i), out)
    elif ours != theirs or isinstance(ours, bool) != isinstance(theirs, bool):
        out.append((path, ours, theirs))


def places(v, at=()):
    """Paths (tuples of keys and indices) of every leaf and every non-empty list of v."""
    if isinstance(v, dict):
        return [p for k in v for p in places(v[k], at + (k,))]
    if isinstance(v, list):
        return [p for i, x in enumerate(v) for p in places(x, at + (i,))] + ([at] if v else [])
    return [at]


def mutated(doc, at):
    """A copy of doc changed at one place: a leaf replaced, or a list's last element
    dropped."""
    doc = json.loads(json.dumps(doc))
    parent = doc
    for k in at[:-1]:
        parent = parent[k]
    if not at:
        return "changed"
    v = parent[at[-1]]
    if isinstance(v, list):
        v.pop()
    elif isinstance(v, bool):
        parent[at[-1]] = not v
    elif isinstance(v, str):
        parent[at[-1]] = {"hex": v.encode().hex()}
    elif isinstance(v, dict):
        parent[at[-1]] = None
    else:
        parent[at[-1]] = "changed" if v is None or v + 1 == v else v + 1
    return doc


def self_test(doc):
    """The comparison must notice a change at any one place of doc.  Returns the number of
    places checked and the number of changes it missed."""
    missed = 0
    sites = places(doc)
    for at in sites:
        diffs = []
        compare(mutated(doc, at), doc, "m", diffs)
        missed += not diffs
    return len(sites), missed


def short(v):
    s = json.dumps(v, ensure_ascii=True)
    return s if len(s) <= 120 else s[:117] + "..."


def oracle(path, as_tensor):
    """The oracle's JSON for a file, or None with the exception when onnx rejects it."""
    try:
        if as_tensor:
            t = onnx.load_tensor(path)
            return tensor(X.upgrade(t, X.TensorProto)), None
        m = onnx.load(path, load_external_data=False)
        return model(X.upgrade(m, X.ModelProto)), None
    except Exception as e:  # noqa: BLE001 - any rejection is a verdict
        return None, e


def protodump(files, as_tensor):
    tool = os.path.join(ROOT, os.environ.get("BUILD", "build"), "tools", "protodump")
    if not os.access(tool, os.X_OK):
        sys.exit("proto.py: %s missing (make tools)" % tool)
    out = {}
    for i in range(0, len(files), 200):
        chunk = files[i:i + 200]
        args = [tool] + (["--tensor"] if as_tensor else []) + chunk
        res = subprocess.run(args, stdout=subprocess.PIPE, check=False)
        if res.returncode not in (0, 1):
            sys.exit("proto.py: protodump failed (%d)" % res.returncode)
        for line in res.stdout.decode("utf-8").splitlines():
            d = json.loads(line)  # strict: the C side must print valid JSON
            out[d["path"]] = d
    return out


def default_files():
    corpus = os.environ.get("ONNXVIZ_CORPUS", os.path.join(ROOT, "..", "shared", "corpus"))
    models = sorted(glob.glob(os.path.join(corpus, "models", "**", "*.onnx"), recursive=True))
    built = sorted(glob.glob(os.path.join(ROOT, "tests", "data", "models", "*.onnx")) +
                   glob.glob(os.path.join(ROOT, "tests", "data", "rejected", "*.onnx")))
    tensors = sorted(glob.glob(os.path.join(corpus, "models", "**", "*.pb"), recursive=True))
    if not models:
        sys.exit("proto.py: no corpus models under %s" % corpus)
    return models, built, tensors


def run(files, as_tensor, counts):
    dumped = protodump(files, as_tensor)
    ndiff = 0
    for path in files:
        d = dumped.get(path)
        theirs, exc = oracle(path, as_tensor)
        rel = os.path.relpath(path, ROOT)
        if d is None:
            print("DIFF %s: no output from protodump" % rel)
            ndiff += 1
            continue
        if not d["ok"] or theirs is None:
            if not d["ok"] and theirs is None:
                counts["rejected"] += 1  # both reject it: same verdict
                continue
            print("DIFF %s: verdict: onnxviz %s, onnx %s" % (
                rel, "ok" if d["ok"] else "error " + short(d["error"]),
                "ok" if exc is None else "error %s" % type(exc).__name__))
            ndiff += 1
            continue
        diffs = []
        compare(d["tensor" if as_tensor else "model"], theirs, "tensor" if as_tensor
                else "model", diffs)
        for p, a, b in diffs:
            if counts["printed"] < MAX_PRINTED:
                print("DIFF %s: %s: onnxviz %s, onnx %s" % (rel, p, short(a), short(b)))
                counts["printed"] += 1
        ndiff += len(diffs)
        counts["fields"] += count_leaves(theirs)
    counts["files"] += len(files)
    return ndiff


def count_leaves(v):
    if isinstance(v, dict):
        return sum(count_leaves(x) for x in v.values())
    if isinstance(v, list):
        return sum(count_leaves(x) for x in v) if v else 1
    return 1


def main(argv):
    counts = {"files": 0, "fields": 0, "printed": 0, "rejected": 0}
    if argv:
        ndiff = run([os.path.abspath(p) for p in argv], False, counts)
        print("diff: %d files, %d fields compared, %d differences" % (
            counts["files"], counts["fields"], ndiff))
        return 1 if ndiff else 0
    models, built, tensors = default_files()
    ndiff = 0
    checked = missed = 0
    for path in built:  # first prove that the comparison can fail
        doc, _ = oracle(path, False)
        if doc is None:
            continue  # tests/data/rejected/
        n, m = self_test(doc)
        checked, missed = checked + n, missed + m
    print("diff: self-test: %d one-place changes to the constructed models' JSON, %d "
          "unnoticed" % (checked, missed))
    if missed or not checked:
        return 1
    for label, files, as_tensor in (("corpus models", models, False),
                                    ("constructed models", built, False),
                                    ("corpus tensors (.pb)", tensors, True)):
        before = counts["fields"]
        n = run(files, as_tensor, counts)
        print("diff: %-22s %4d files, %8d fields compared, %d differences" % (
            label, len(files), counts["fields"] - before, n))
        ndiff += n
    print("diff: total %d files (%d rejected by both), %d fields compared, %d differences" % (
        counts["files"], counts["rejected"], counts["fields"], ndiff))
    return 1 if ndiff else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
