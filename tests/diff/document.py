#!/usr/bin/python3
"""document.py — the JSON document of every corpus model, against its schema and onnx.

For each model under $ONNXVIZ_CORPUS/models (every *.onnx, recursively), the parser's
constructed models (tests/data/models) and a few built here (synthetic_models):
  1. `$BUILD/onnxviz inspect --json MODEL` must exit 0 and print strict UTF-8 JSON that
     validates against docs/document.schema.json (draft 2020-12, python3-jsonschema);
  2. the document must agree with python3-onnx (the oracle): model fields and opsets; for
     every graph scope (main graph, subgraphs by their id path, functions, training
     graphs) the node count, each node's op type / name / domain / inputs / outputs /
     attribute names, types and values in order, the graph inputs and outputs, the
     initializers (name, dtype, dims, ggml_ne, count, bytes) by their ref;
  3. every reference inside the document must resolve and agree: node ids unique, scope
     ids, value indices, producers and consumers, edges (one per non-empty node input,
     consistent with both ends), tensor refs, warnings, summary counts.
Before the corpus, a self-check proves the schema is not vacuous: mutated documents must
fail validation.  Prints what it checked; exits 1 on any disagreement.
Run with Debian's /usr/bin/python3 (python3-onnx, python3-jsonschema).
"""
import copy
import glob
import json
import math
import os
import re
import struct
import subprocess
import sys
import tempfile
import time

import jsonschema
import onnx

sys.dont_write_bytecode = True  # no __pycache__ in the tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "render"))
from checks import is_utf8, json_text  # noqa: E402  (the bytes -> JSON string rule)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("BUILD", "build")
BIN = os.path.join(ROOT, BUILD, "onnxviz")
CORPUS = os.environ.get("ONNXVIZ_CORPUS", os.path.join(os.path.dirname(ROOT), "shared", "corpus"))
SCHEMA = os.path.join(ROOT, "docs", "document.schema.json")

PLAIN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
DTYPE_BITS = {1: 32, 2: 8, 3: 8, 4: 16, 5: 16, 6: 32, 7: 64, 8: 0, 9: 8, 10: 16, 11: 64,
              12: 32, 13: 64, 14: 64, 15: 128, 16: 16, 17: 8, 18: 8, 19: 8, 20: 8,
              21: 4, 22: 4, 23: 4, 24: 8, 25: 2, 26: 2}
DTYPE_NAMES = ["UNDEFINED", "FLOAT", "UINT8", "INT8", "UINT16", "INT16", "INT32", "INT64",
               "STRING", "BOOL", "FLOAT16", "DOUBLE", "UINT32", "UINT64", "COMPLEX64",
               "COMPLEX128", "BFLOAT16", "FLOAT8E4M3FN", "FLOAT8E4M3FNUZ", "FLOAT8E5M2",
               "FLOAT8E5M2FNUZ", "UINT4", "INT4", "FLOAT4E2M1", "FLOAT8E8M0", "UINT2", "INT2"]


def dtype_name(n):
    return DTYPE_NAMES[n] if 0 <= n < len(DTYPE_NAMES) else "UNDEFINED"


def ggml_ne(dims):
    ne = [1, 1, 1, 1]
    for i in range(min(len(dims), 3)):
        ne[i] = dims[len(dims) - 1 - i]
    if len(dims) >= 4:
        ne[3] = math.prod(dims[: len(dims) - 3])
    return ne


def f32(x):
    return struct.pack("<f", float(x))


def as_bytes(v):
    """A string field as python3-onnx gives it: str, or bytes when not valid UTF-8."""
    return v if isinstance(v, bytes) else v.encode("utf-8")


def text(v):
    """The JSON string the document must hold for a string field."""
    return json_text(as_bytes(v))


def texts(values):
    return [text(v) for v in values]


def real_eq(doc_value, proto_value):
    """A float as the document writes it (NaN/Infinity as strings) against a float32."""
    if isinstance(doc_value, str):
        return {"NaN": math.isnan(proto_value), "Infinity": proto_value == math.inf,
                "-Infinity": proto_value == -math.inf}.get(doc_value, False)
    return f32(doc_value) == f32(proto_value)


class Model:
    """One model: the document, the onnx proto, and the failures found."""

    def __init__(self, path, doc, proto, stats):
        self.path, self.doc, self.proto, self.stats = path, doc, proto, stats
        self.fail = []

    def check(self, cond, what):
        self.stats["checks"] += 1
        if not cond:
            self.fail.append(what)
        return cond

    # -- the oracle's scopes -----------------------------------------------------------
    def oracle_scopes(self):
        """{scope id: (kind, graph-or-function)} the way the linker names them."""
        out = {}
        queue = []
        m = self.proto
        if m.HasField("graph"):
            queue.append(("", "main", m.graph))
        for k, f in enumerate(m.functions):
            queue.append(("f%d" % k, "function", f))
        for k, t in enumerate(m.training_info):
            if t.HasField("initialization"):
                queue.append(("t%d.initialization" % k, "training", t.initialization))
            if t.HasField("algorithm"):
                queue.append(("t%d.algorithm" % k, "training", t.algorithm))
        while queue:
            sid, kind, g = queue.pop(0)
            if sid in out:
                self.check(False, "oracle: two scopes named %r" % sid)
            out[sid] = (kind, g)
            for i, n in enumerate(g.node):
                nid = "n%d" % i if sid == "" else "%s.n%d" % (sid, i)
                for a_index, a in enumerate(n.attribute):
                    aname = a.name if PLAIN.match(a.name) else "a%d" % a_index
                    if a.HasField("g"):
                        queue.append(("%s.%s" % (nid, aname), "subgraph", a.g))
                    for k, sub in enumerate(a.graphs):
                        queue.append(("%s.%s.%d" % (nid, aname, k), "subgraph", sub))
        return out

    # -- checks --------------------------------------------------------------------------
    def same(self, obj, key, value, what):
        """obj[key] is the model string value (absent counts as ""), with key_hex exactly
        when its bytes are not UTF-8."""
        raw = as_bytes(value)
        return self.check(obj.get(key, "") == json_text(raw) and obj.get(key + "_hex") ==
                          (None if is_utf8(raw) else raw.hex()),
                          "%s %s: %r" % (what, key, str(obj.get(key))[:60]))

    def check_model_fields(self):
        d, m = self.doc["model"], self.proto
        self.check(d["ir_version"] == m.ir_version, "ir_version")
        for key in ("producer_name", "producer_version", "domain", "doc_string"):
            self.same(d, key, getattr(m, key), "model")
        self.check(d["model_version"] == m.model_version, "model_version")
        self.check([(o["domain"], o["version"]) for o in d["opset_import"]] ==
                   [(text(o.domain), o.version) for o in m.opset_import], "opset_import")
        self.check([(e["key"], e["value"]) for e in d["metadata_props"]] ==
                   [(text(e.key), text(e.value)) for e in m.metadata_props], "metadata_props")
        self.check(d["size"] == os.path.getsize(self.path), "model size")
        self.check(d["graph_name"] == (text(m.graph.name) if m.HasField("graph") else None),
                   "graph_name")
        self.check(len(d["training_info"]) == len(m.training_info), "training_info count")
        self.check(len(self.doc["functions"]) == len(m.functions), "functions count")
        for k, f in enumerate(m.functions):
            df = self.doc["functions"][k]
            self.check(df["id"] == "f%d" % k, "function %d id" % k)
            self.same(df, "name", f.name, "function %d" % k)
            self.same(df, "domain", f.domain, "function %d" % k)
            self.check(df["inputs"] == texts(f.input) and df["outputs"] == texts(f.output),
                       "function %d inputs/outputs" % k)

    def check_attribute(self, nid, k, da, pa):
        where = "%s attribute %d" % (nid, k)
        self.stats["attributes"] += 1
        tname = onnx.AttributeProto.AttributeType.Name(pa.type)
        self.same(da, "name", pa.name, where)
        t = pa.type
        if da.get("type_inferred"):  # IR version 1: no type field; the value tells
            self.check(pa.type == 0, where + " type_inferred but the type field is set")
            t = onnx.AttributeProto.AttributeType.Value(da["type"])
        else:
            self.check(da["type"] == tname, where + " type %s != %s" % (da["type"], tname))
        if pa.ref_attr_name:
            self.same(da, "ref_attr_name", pa.ref_attr_name, where)
            self.check("value" not in da, where + " value next to ref_attr_name")
            return
        v = da.get("value")
        if t == onnx.AttributeProto.FLOAT:
            self.check(real_eq(v, pa.f), where + " FLOAT value")
        elif t == onnx.AttributeProto.INT:
            self.check(v == pa.i, where + " INT value")
        elif t == onnx.AttributeProto.STRING:
            self.same(da, "value", pa.s, where + " STRING")
        elif t == onnx.AttributeProto.INTS:
            self.check(v == list(pa.ints), where + " INTS value")
        elif t == onnx.AttributeProto.FLOATS:
            self.check(len(v) == len(pa.floats) and
                       all(real_eq(a, b) for a, b in zip(v, pa.floats)), where + " FLOATS")
        elif t == onnx.AttributeProto.STRINGS:
            valid = all(is_utf8(x) for x in pa.strings)
            self.check(v == texts(pa.strings) and da.get("value_hex") ==
                       (None if valid else [x.hex() for x in pa.strings]),
                       where + " STRINGS value / value_hex")
        elif t == onnx.AttributeProto.TENSOR:
            self.check_tensor(v, pa.t, "%s@a%d" % (nid, k), where)
        elif t == onnx.AttributeProto.TENSORS:
            self.check(len(v) == len(pa.tensors), where + " TENSORS count")
            for j, (dt, pt) in enumerate(zip(v, pa.tensors)):
                self.check_tensor(dt, pt, "%s@a%d.%d" % (nid, k, j), where)
        elif t == onnx.AttributeProto.GRAPH:
            aname = pa.name if PLAIN.match(pa.name) else "a%d" % k
            self.check(v == {"scope": "%s.%s" % (nid, aname), "nodes": len(pa.g.node)},
                       where + " GRAPH reference")

    def check_tensor(self, dt, pt, ref, where):
        self.stats["tensors"] += 1
        dims = list(pt.dims)
        count = math.prod(dims)
        bits = DTYPE_BITS.get(pt.data_type, 0)
        self.same(dt, "name", pt.name, where + " tensor")
        ok = (dt["ref"] == ref and dt["data_type"] == pt.data_type
              and dt["dtype"] == dtype_name(pt.data_type) and dt["dims"] == dims
              and dt["ggml_ne"] == ggml_ne(dims) and dt["count"] == count)
        self.check(ok, "%s tensor %s summary" % (where, ref))
        if pt.data_type == onnx.TensorProto.STRING:
            self.check(dt["bytes"] == sum(len(s) for s in pt.string_data), where + " bytes")
        else:
            self.check(dt["bytes"] == (count * bits + 7) // 8, where + " tensor bytes")
        if pt.HasField("raw_data"):
            self.check(dt["storage"] == "raw" and dt["stored_bytes"] == len(pt.raw_data),
                       where + " raw storage")

    def check_scopes(self):
        doc = self.doc
        oracle = self.oracle_scopes()
        ids = [s["id"] for s in doc["scopes"]]
        self.check(sorted(ids) == sorted(oracle), "scope ids %s != oracle %s" %
                   (sorted(ids)[:8], sorted(oracle)[:8]))
        by_scope = {}
        for n in doc["nodes"]:
            by_scope.setdefault(n["scope"], []).append(n)
        for s in doc["scopes"]:
            if s["id"] not in oracle:
                continue
            kind, g = oracle[s["id"]]
            self.stats["scopes"] += 1
            self.check(s["kind"] == kind, "scope %r kind" % s["id"])
            self.same(s, "name", g.name, "scope %r" % s["id"])
            nodes = sorted(by_scope.get(s["id"], []), key=lambda n: n["index"])
            self.check(s["node_count"] == len(g.node) == len(nodes),
                       "scope %r: %d nodes, onnx %d" % (s["id"], len(nodes), len(g.node)))
            self.check([n["index"] for n in nodes] == list(range(len(nodes))),
                       "scope %r node indices" % s["id"])
            for n, p in zip(nodes, g.node):
                self.stats["nodes"] += 1
                where = "node " + n["id"]
                for key in ("op_type", "name", "domain"):
                    self.same(n, key, getattr(p, key), where)
                self.check([x and x["name"] for x in n["inputs"]] ==
                           [text(x) if x else None for x in p.input], where + " input names")
                self.check([x and x["name"] for x in n["outputs"]] ==
                           [text(x) if x else None for x in p.output], where + " output names")
                self.check(len(n["attributes"]) == len(p.attribute), where + " attribute count")
                for k, (da, pa) in enumerate(zip(n["attributes"], p.attribute)):
                    self.check_attribute(n["id"], k, da, pa)
            if kind == "function":
                in_names, out_names = texts(g.input), texts(g.output)
            else:
                in_names = texts(v.name for v in g.input)
                out_names = texts(v.name for v in g.output)
                self.check_graph_inputs(s, g)
                self.check_initializers(s, g)
            self.check([x and x["name"] for x in s["inputs"]] == in_names,
                       "scope %r inputs" % s["id"])
            self.check([x and x["name"] for x in s["outputs"]] == out_names,
                       "scope %r outputs" % s["id"])

    def check_graph_inputs(self, s, g):
        values = self.doc["values"]
        for ref, vi in zip(s["inputs"], g.input):
            if ref is None or ref["value"] is None:
                continue
            val = values[ref["value"]]
            if val["kind"] != "input" or not vi.type.HasField("tensor_type"):
                continue
            tt = vi.type.tensor_type
            shape = None
            if tt.HasField("shape"):
                shape = [d.dim_value if d.HasField("dim_value") and d.dim_value >= 0
                         else text(d.dim_param) if d.HasField("dim_param") else None
                         for d in tt.shape.dim]
            t = val["type"]
            self.check(t is not None and t["source"] == "declared" and
                       t["elem_type"] == (dtype_name(tt.elem_type) if tt.elem_type else None)
                       and t["shape"] == shape, "scope %r input %r type" % (s["id"], vi.name))

    def check_initializers(self, s, g):
        mine = [t for t in self.doc["initializers"]
                if t["scope"] == s["id"] and not t.get("sparse")]
        prefix = s["id"] + "@i"
        seen = set()
        for t in mine:
            self.stats["initializers"] += 1
            ref = t["ref"]
            if not self.check(ref.startswith(prefix) and ref[len(prefix):].isdigit(),
                              "initializer ref %r in scope %r" % (ref, s["id"])):
                continue
            k = int(ref[len(prefix):])
            seen.add(k)
            if not self.check(k < len(g.initializer), "initializer ref %r out of range" % ref):
                continue
            self.check_tensor(t, g.initializer[k], ref, "initializer")
        names = [t.name for t in g.initializer]
        if len(set(names)) == len(names):  # a duplicate name links only once
            self.check(seen == set(range(len(names))),
                       "scope %r: initializers %d of %d in the document" %
                       (s["id"], len(seen), len(names)))

    def check_references(self):
        doc = self.doc
        nodes, values, edges = doc["nodes"], doc["values"], doc["edges"]
        node_by_id = {}
        for n in nodes:
            self.check(n["id"] not in node_by_id, "node id %r twice" % n["id"])
            node_by_id[n["id"]] = n
        scope_by_id = {}
        for s in doc["scopes"]:
            self.check(s["id"] not in scope_by_id, "scope id %r twice" % s["id"])
            scope_by_id[s["id"]] = s
        nv = len(values)

        def value_ok(i, where):
            self.stats["refs"] += 1
            return self.check(isinstance(i, int) and 0 <= i < nv, where + ": value %r" % (i,))

        def node_ok(nid, where):
            self.stats["refs"] += 1
            return self.check(nid in node_by_id, where + ": node %r" % (nid,))

        def scope_ok(sid, where):
            self.stats["refs"] += 1
            return self.check(sid in scope_by_id, where + ": scope %r" % (sid,))

        for n in nodes:
            scope_ok(n["scope"], n["id"])
            expect = "n%d" % n["index"] if n["scope"] == "" else "%s.n%d" % (n["scope"], n["index"])
            self.check(n["id"] == expect, "node id %r != %r" % (n["id"], expect))
            for port in ("inputs", "outputs"):
                for x in n[port]:
                    if x is not None and value_ok(x["value"], n["id"] + " " + port):
                        self.check(values[x["value"]]["name"] == x["name"],
                                   "%s %s name/value mismatch" % (n["id"], port))
            for sid in n.get("subgraphs", []):
                if scope_ok(sid, n["id"] + " subgraphs"):
                    self.check(scope_by_id[sid]["owner"] == n["id"], "owner of " + sid)
            if "function" in n:
                self.check(any(f["id"] == n["function"] for f in doc["functions"]),
                           n["id"] + " function")
        for s in doc["scopes"]:
            if s["parent"] is not None:
                scope_ok(s["parent"], "scope %r parent" % s["id"])
            if s["owner"] is not None and node_ok(s["owner"], "scope %r owner" % s["id"]):
                self.check(s["id"] in node_by_id[s["owner"]].get("subgraphs", []),
                           "scope %r not in its owner's subgraphs" % s["id"])
            if "first_node" in s and node_ok(s["first_node"], "scope %r first_node" % s["id"]):
                fn = node_by_id[s["first_node"]]
                self.check(fn["scope"] == s["id"] and fn["index"] == 0, "first_node of %r" % s["id"])
            for port in ("inputs", "outputs"):
                for x in s[port]:
                    if x is not None and x["value"] is not None and \
                            value_ok(x["value"], "scope %r %s" % (s["id"], port)):
                        self.check(values[x["value"]]["name"] == x["name"],
                                   "scope %r %s name mismatch" % (s["id"], port))
        # values: producers, consumers
        for i, v in enumerate(values):
            scope_ok(v["scope"], "value %d" % i)
            if "producer" in v and node_ok(v["producer"]["node"], "value %d producer" % i):
                outs = node_by_id[v["producer"]["node"]]["outputs"]
                k = v["producer"]["output"]
                self.check(k < len(outs) and outs[k] is not None and outs[k]["value"] == i,
                           "value %d producer output" % i)
            for c in v["consumers"]:
                if node_ok(c["node"], "value %d consumer" % i):
                    ins = node_by_id[c["node"]]["inputs"]
                    self.check(c["input"] < len(ins) and ins[c["input"]] is not None and
                               ins[c["input"]]["value"] == i, "value %d consumer input" % i)
        # edges: exactly one per non-empty node input, both ends agreeing
        want = set()
        for n in nodes:
            for k, x in enumerate(n["inputs"]):
                if x is not None:
                    want.add((x["value"], n["id"], k))
        got = []
        for e in edges:
            self.stats["edges"] += 1
            got.append((e["value"], e["to"], e["to_input"]))
            if not (value_ok(e["value"], "edge") and node_ok(e["to"], "edge to")):
                continue
            v = values[e["value"]]
            if e["from"] is None:
                self.check("producer" not in v, "edge from null but value %d has a producer"
                           % e["value"])
            elif node_ok(e["from"], "edge from"):
                self.check(v.get("producer") == {"node": e["from"], "output": e["from_output"]},
                           "edge from %s:%d disagrees with value %d's producer" %
                           (e["from"], e["from_output"], e["value"]))
            to = node_by_id[e["to"]]
            self.check(bool(e.get("outer")) == (v["scope"] != to["scope"]),
                       "edge outer flag (value %d -> %s)" % (e["value"], e["to"]))
        self.check(len(got) == len(set(got)) and set(got) == want,
                   "edges (%d) do not match node inputs (%d)" % (len(got), len(want)))
        ends = {}
        for e in edges:
            ends.setdefault(e["value"], []).append((e["to"], e["to_input"]))
        for i, v in enumerate(values):
            self.check(sorted((c["node"], c["input"]) for c in v["consumers"]) ==
                       sorted(ends.get(i, [])), "value %d consumers != its edges" % i)
        # tensor refs
        init_by_ref = {}
        for t in doc["initializers"]:
            if value_ok(t["value"], "initializer"):
                v = values[t["value"]]
                self.check(v["kind"] in ("initializer", "sparse_initializer") and
                           v["scope"] == t["scope"], "initializer value %d kind/scope" % t["value"])
                if "ref" in t:
                    self.check(v.get("tensor") == t["ref"], "value %d tensor ref" % t["value"])
            if "ref" in t:
                self.check(t["ref"] not in init_by_ref, "tensor ref %r twice" % t["ref"])
                init_by_ref[t["ref"]] = t
        for i, v in enumerate(values):
            if "tensor" in v:
                self.stats["refs"] += 1
                self.check(v["tensor"] in init_by_ref, "value %d tensor %r resolves" % (i, v["tensor"]))
        for n in nodes:
            for k, a in enumerate(n["attributes"]):
                if a["type"] == "TENSOR" and a.get("value"):
                    self.stats["refs"] += 1
                    self.check(a["value"]["ref"] == "%s@a%d" % (n["id"], k), "attr tensor ref")
                if a["type"] == "GRAPH" and a.get("value"):
                    scope_ok(a["value"]["scope"], n["id"] + " GRAPH attribute")
        # warnings
        for w in doc["warnings"]:
            if w["scope"] is not None:
                scope_ok(w["scope"], "warning")
            for nid in w["nodes"]:
                node_ok(nid, "warning")
            if "value" in w:
                value_ok(w["value"]["value"], "warning")
        # summary
        sm = doc["summary"]
        self.check(sm["nodes"] == len(nodes) and sm["edges"] == len(edges) and
                   sm["values"] == nv and sm["scopes"] == len(doc["scopes"]) and
                   sm["warnings"] == len(doc["warnings"]) and
                   sm["functions"] == len(doc["functions"]) and
                   sm["initializers"] == len(doc["initializers"]), "summary counts")
        self.check(sm["main_graph_nodes"] == sum(1 for n in nodes if n["scope"] == ""),
                   "summary main_graph_nodes")
        self.check(sm["subgraphs"] == sum(1 for s in doc["scopes"] if s["kind"] == "subgraph"),
                   "summary subgraphs")
        self.check(sum(o["count"] for o in sm["op_types"]) == len(nodes), "op_types histogram")


def synthetic_models(tmp):
    """Models for what the corpus lacks, built with python3-onnx: model-local functions
    (called twice, with a subgraph inside), training graphs, a sparse initializer, every
    attribute type, sequence / map / optional / sparse types, external data, metadata and
    doc strings everywhere, quantization annotations, and each kind of linker warning."""
    from onnx import helper, TensorProto as T
    out = []

    def save(name, model):
        path = os.path.join(tmp, name + ".onnx")
        onnx.save(model, path)
        out.append(path)

    def vi(name, dims=None, elem=T.FLOAT):
        return helper.make_tensor_value_info(name, elem, dims)

    # functions: f0 (Add, then an If whose branches use the function's input), called twice
    then_g = helper.make_graph([helper.make_node("Identity", ["s"], ["t"])], "then", [], [vi("t")])
    else_g = helper.make_graph([helper.make_node("Neg", ["s"], ["u"])], "else", [], [vi("u")])
    fn = helper.make_function("custom", "MyFn", ["a", "b"], ["y"], [
        helper.make_node("Add", ["a", "b"], ["s"]),
        helper.make_node("Greater", ["s", "b"], ["c"]),
        helper.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g)],
        [helper.make_opsetid("", 17)], attributes=["alpha"])
    fn.doc_string = "a function"
    g = helper.make_graph([helper.make_node("MyFn", ["x", "x"], ["h"], domain="custom", name="call0"),
                           helper.make_node("MyFn", ["h", "x"], ["z"], domain="custom", name="call1")],
                          "uses_functions", [vi("x", [1])], [vi("z", [1])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17),
                                            helper.make_opsetid("custom", 1)], functions=[fn])
    save("functions", m)

    # training graphs, a sparse initializer, quantization annotations, metadata everywhere
    w = helper.make_tensor("W", T.FLOAT, [2, 2], [1, 2, 3, 4])
    sp = helper.make_sparse_tensor(helper.make_tensor("S", T.FLOAT, [2], [5, 6]),
                                   helper.make_tensor("S_idx", T.INT64, [2], [0, 3]), [2, 2])
    g = helper.make_graph([helper.make_node("MatMul", ["x", "W"], ["y"], name="mm", doc_string="d"),
                           helper.make_node("Add", ["y", "S"], ["z"])],
                          "trainable", [vi("x", [2, "batch"])], [vi("z", [2, 2])], [w],
                          sparse_initializer=[sp], doc_string="the graph")
    g.metadata_props.add(key="k", value="v") if hasattr(g, "metadata_props") else None
    qa = g.quantization_annotation.add(tensor_name="y")
    qa.quant_parameter_tensor_names.add(key="SCALE_TENSOR", value="W")
    g.node[0].metadata_props.add(key="nk", value="nv") if hasattr(g.node[0], "metadata_props") else None
    init_g = helper.make_graph([helper.make_node("Constant", [], ["W_init"], value=w)], "init",
                               [], [vi("W_init", [2, 2])])
    algo_g = helper.make_graph([helper.make_node("Sub", ["W", "x"], ["W_new"])], "algo",
                               [vi("x", [2, 2])], [vi("W_new", [2, 2])],
                               [helper.make_tensor("lr", T.FLOAT, [], [0.1])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)],
                          producer_name="synth", doc_string="model doc")
    m.training_info.append(helper.make_training_info(algo_g, [("W", "W_new")], init_g,
                                                     [("W", "W_init")]))
    helper.set_model_props(m, {"author": "tests", "license": "none"})
    save("training_sparse", m)

    # every attribute type, odd value types, external data
    ext = onnx.TensorProto(name="E", data_type=T.FLOAT, dims=[4], data_location=T.EXTERNAL)
    for k, v in (("location", "weights.bin"), ("offset", "0"), ("length", "16")):
        ext.external_data.add(key=k, value=v)
    n = helper.make_node("Everything", ["x", "E"], ["y", ""], domain="custom", name="all",
                         f=1.5, i=-3, s=b"str", t=helper.make_tensor("t", T.INT64, [2], [7, 8]),
                         floats=[0.5, float("nan"), float("inf"), float("-inf")], ints=[1, -2],
                         strings=[b"a", b"b"],
                         tensors=[helper.make_tensor("t0", T.FLOAT, [1], [1]),
                                  helper.make_tensor("t1", T.FLOAT, [5, 4, 3, 2, 1], [0] * 120)],
                         g=helper.make_graph([], "empty", [], []),
                         graphs=[helper.make_graph([helper.make_node("Relu", ["x"], ["r"])],
                                                   "gs0", [], [vi("r")]),
                                 helper.make_graph([], "gs1", [], [])])
    a = n.attribute.add(name="sp", type=onnx.AttributeProto.SPARSE_TENSOR)
    a.sparse_tensor.CopyFrom(sp)
    a = n.attribute.add(name="tp", type=onnx.AttributeProto.TYPE_PROTO)
    a.tp.CopyFrom(helper.make_sequence_type_proto(helper.make_tensor_type_proto(T.FLOAT, [1])))
    a = n.attribute.add(name="tps", type=onnx.AttributeProto.TYPE_PROTOS)
    a.type_protos.add().CopyFrom(helper.make_optional_type_proto(helper.make_tensor_type_proto(T.INT8, None)))
    a = n.attribute.add(name="a b", type=onnx.AttributeProto.GRAPH)  # not a plain name
    a.g.CopyFrom(helper.make_graph([helper.make_node("Abs", ["x"], ["ab"])], "odd", [], [vi("ab")]))
    seq = helper.make_tensor_sequence_value_info("seq", T.FLOAT, [2])
    mp = helper.make_value_info("map", onnx.TypeProto(map_type=onnx.TypeProto.Map(
        key_type=T.STRING, value_type=helper.make_tensor_type_proto(T.FLOAT, [3]))))
    opt = helper.make_value_info("opt", helper.make_optional_type_proto(
        helper.make_tensor_type_proto(T.FLOAT, [])))
    spv = helper.make_sparse_tensor_value_info("spv", T.FLOAT, [4, 4])
    den = vi("den", [1, 3])
    den.type.tensor_type.shape.dim[1].denotation = "DATA_CHANNEL"
    den.type.denotation = "IMAGE"
    den.doc_string = "a denoted input"
    g = helper.make_graph([n, helper.make_node("Identity", ["seq"], ["seq_out"]),
                           helper.make_node("Identity", ["map"], ["map_out"]),
                           helper.make_node("Identity", ["opt"], ["opt_out"]),
                           helper.make_node("Identity", ["spv"], ["spv_out"]),
                           helper.make_node("Identity", ["den"], ["den_out"])],
                          "everything", [vi("x", [4]), seq, mp, opt, spv, den],
                          [vi("y"), vi("seq_out"), vi("map_out"), vi("opt_out"), vi("spv_out"),
                           vi("den_out")], [ext])
    save("attributes_types", helper.make_model(g, opset_imports=[
        helper.make_opsetid("", 17), helper.make_opsetid("custom", 1)]))

    # one of each linker warning
    g = helper.make_graph([
        helper.make_node("Relu", ["later"], ["a"], name="uses_later"),   # not sorted
        helper.make_node("Relu", ["x"], ["later"], name="produces_later"),
        helper.make_node("Relu", ["nowhere"], ["b"], name="dangling"),    # dangling
        helper.make_node("Relu", ["x"], ["b"], name="duplicate"),         # duplicate
        helper.make_node("Add", ["c1", "x"], ["c2"], name="cyc1"),        # cycle
        helper.make_node("Add", ["c2", "x"], ["c1"], name="cyc2")],
        "warnings", [vi("x", [1])], [vi("a"), vi("b"), vi("never")],
        [helper.make_tensor("unused", T.FLOAT, [1], [0])])
    save("warnings", helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]))
    return out


def synthetic_expectations(name, doc):
    """What the linker must make of the synthetic models beyond the generic checks."""
    bad = []
    kinds = sorted(w["kind"] for w in doc["warnings"])
    if name == "functions":
        calls = [n.get("function") for n in doc["nodes"] if n["scope"] == ""]
        if calls != ["f0", "f0"] or doc["functions"][0]["callers"] != 2:
            bad.append("function calls: %s, callers %s" % (calls, doc["functions"][0]["callers"]))
    elif name == "warnings":
        want = ["cycle", "dangling_input", "duplicate_producer", "not_topologically_sorted",
                "unproduced_output", "unused_initializer"]
        if kinds != want:
            bad.append("warnings %s, expected %s" % (kinds, want))
    elif name == "training_sparse":
        # onnx.proto: the algorithm graph is combined with ModelProto.graph, so the main
        # graph's initializer W is visible in it; only "lr" is really unused
        if kinds != ["unused_initializer"]:
            bad.append("training graph warnings %s: the main graph's names must be visible in "
                       "the algorithm graph [known bug B13]" %
                       [w["message"] for w in doc["warnings"]])
    return bad


def self_check(validator, doc):
    """The schema must reject a document that drifted; returns the failures."""
    mutations = {
        "unknown key in a node": lambda d: d["nodes"][0].__setitem__("extra", 1),
        "unknown key in the model": lambda d: d["model"].__setitem__("extra", 1),
        "unknown key in a tensor summary":
            lambda d: d["initializers"][0].__setitem__("extra", 1),
        "ggml_ne of 3 entries": lambda d: d["initializers"][0].__setitem__("ggml_ne", [1, 1, 1]),
        "unknown dtype": lambda d: d["initializers"][0].__setitem__("dtype", "FLOAT32"),
        "unknown storage": lambda d: d["initializers"][0].__setitem__("storage", "inline"),
        "missing scope inputs": lambda d: d["scopes"][0].pop("inputs"),
        "bad node id": lambda d: d["nodes"][0].__setitem__("id", "node0"),
        "bad value kind": lambda d: d["values"][0].__setitem__("kind", "weight"),
        "name_hex not hex": lambda d: d["nodes"][0].__setitem__("name_hex", "zz"),
        "NaN as a bare string": lambda d: d["nodes"][0].__setitem__("attributes", [
            {"name": "a", "type": "FLOAT", "value": "nan"}]),
        "bad warning kind": lambda d: d["warnings"].append(
            {"kind": "oops", "message": "", "scope": "", "nodes": []}),
    }
    bad = []
    for what, mutate in mutations.items():
        d = copy.deepcopy(doc)
        mutate(d)
        if validator.is_valid(d):
            bad.append("schema accepts a document with " + what)
    return bad


def main():
    start = time.time()
    with open(SCHEMA, encoding="utf-8") as f:
        schema = json.load(f)
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    models = sorted(glob.glob(os.path.join(CORPUS, "models", "**", "*.onnx"), recursive=True))
    if not models:
        print("document: no models under %s/models" % CORPUS)
        return 1
    tmp = tempfile.TemporaryDirectory(prefix="onnxviz-document-")
    synthetic = synthetic_models(tmp.name)
    # the parser's constructed models (odd types, strings, device configurations, ...)
    constructed = sorted(glob.glob(os.path.join(ROOT, "tests", "data", "models", "*.onnx")))
    models += synthetic + constructed
    stats = {k: 0 for k in ("checks", "nodes", "scopes", "attributes", "tensors", "edges",
                            "refs", "initializers")}
    failed = []
    valid = 0
    self_checked = False
    for path in models:
        rel = "synthetic/" + os.path.basename(path) if path in synthetic else \
            os.path.relpath(path, ROOT) if path in constructed else os.path.relpath(path, CORPUS)
        r = subprocess.run([BIN, "inspect", "--json", path], capture_output=True, timeout=60)
        if r.returncode != 0:
            failed.append((rel, ["inspect --json exited %d: %s" %
                                 (r.returncode, r.stderr.decode("utf-8", "replace")[:300])]))
            continue
        try:
            doc = json.loads(r.stdout.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as e:
            failed.append((rel, ["not strict UTF-8 JSON: %s" % e]))
            continue
        errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.path))
        if errors:
            failed.append((rel, ["schema: %s: %s" % (e.json_path, e.message[:200])
                                 for e in errors[:5]]))
            continue
        valid += 1
        if not self_checked and doc["initializers"] and doc["nodes"]:
            problems = self_check(validator, doc)
            self_checked = True
            if problems:
                failed.append(("schema self-check", problems))
        proto = onnx.load(path, load_external_data=False)
        m = Model(path, doc, proto, stats)
        m.check_model_fields()
        m.check_scopes()
        m.check_references()
        if path in synthetic:
            m.fail += synthetic_expectations(os.path.basename(path)[:-5], doc)
        if m.fail:
            failed.append((rel, m.fail))
    if not self_checked:
        failed.append(("schema self-check", ["no corpus model to mutate"]))
    tmp.cleanup()
    print("document: %d models (%d synthetic, %d constructed), schema-valid %d, %d scopes, %d nodes, "
          "%d attributes, %d tensor summaries, %d initializers, %d edges, %d references "
          "resolved, %d checks, %.1f s" %
          (len(models), len(synthetic), len(constructed), valid, stats["scopes"], stats["nodes"],
           stats["attributes"], stats["tensors"], stats["initializers"], stats["edges"],
           stats["refs"], stats["checks"], time.time() - start))
    for rel, fails in failed:
        print("FAIL %s: %d problem(s)" % (rel, len(fails)))
        for f in fails[:10]:
            print("   ", f)
    if failed:
        known = sum(any("[known bug" in f for f in fails) for _, fails in failed)
        print("document: FAILED (%d of %d models; %d of them known bugs)" %
              (len(failed), len(models), known))
        return 1
    print("document: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
