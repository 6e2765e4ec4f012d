#!/usr/bin/python3
"""schemas.py — the operator-schema table and its use, against python3-onnx's schema API.

  1. the table as parser/schema.c reads it back ($BUILD/tools/schemadump) must hold, for
     every schema python3-onnx knows (every version of the default domain to opset 17,
     ai.onnx.ml, ai.onnx.preview.training), the same facts: inputs and outputs (names,
     optional/variadic/heterogeneous, type parameter, allowed types), attributes (type,
     required, default), type constraints, input/output counts, deprecation; and the
     lookup by opset must pick the version the API picks (get_schema with
     max_inclusive_version) for every op and every opset from 1 to 17;
  2. in the JSON document of every corpus model and constructed test model, every node of
     an op with a schema names each of its inputs and outputs ("port") as the API's
     formal parameters do ("inputs[2]" for the third value of a variadic one), carries the
     version the model's opset import selects, marks its attributes that hold the default,
     and lists the defaults it leaves out — no node of an op with a schema is left without
     names.
Prints what it compared; exits 1 on any difference.
"""
import glob
import json
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import defs, helper

sys.dont_write_bytecode = True

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("BUILD", "build")
BIN = os.path.join(ROOT, BUILD, "onnxviz")
DUMP = os.path.join(ROOT, BUILD, "tools", "schemadump")
CORPUS = os.environ.get("ONNXVIZ_CORPUS", os.path.join(os.path.dirname(ROOT), "shared", "corpus"))
ATTR_TYPES = {1: "FLOAT", 2: "INT", 3: "STRING", 4: "TENSOR", 5: "GRAPH", 6: "FLOATS",
              7: "INTS", 8: "STRINGS", 9: "TENSORS", 10: "GRAPHS", 11: "SPARSE_TENSOR",
              12: "SPARSE_TENSORS", 13: "TYPE_PROTO", 14: "TYPE_PROTOS"}
UNBOUNDED = 2147483647


def types_set(text):
    """'tensor(float), seq(tensor(int64))' -> a set; 'other types' stands for the rest."""
    return {t.strip() for t in text.split(", ") if t.strip()} if text else set()


def api_types(strs):
    known, other = set(), False
    for t in strs:
        t = t.replace(" ", "")
        if t.startswith(("tensor(", "seq(tensor(", "optional(tensor(", "optional(seq(tensor(",
                         "sparse_tensor(")) and "map" not in t:
            known.add(t)
        else:
            other = True
    return known, other


def same_default(api_attr, ours):
    if not api_attr.default_value.name:
        return ours is None
    if ours is None:
        return api_attr.type.value in (4, 5, 9, 10, 11, 12, 13, 14)  # not carried
    want = helper.get_attribute_value(api_attr.default_value)
    got = json.loads(ours)
    if isinstance(want, bytes):
        want = want.decode()
    if isinstance(want, list):
        want = [w.decode() if isinstance(w, bytes) else w for w in want]
        return len(want) == len(got) and all(close(a, b) for a, b in zip(want, got))
    return close(want, got)


def close(a, b):
    """Equal as the model stores them: floats as float32 (the document prints 9 digits,
    enough to read a float32 back exactly)."""
    if isinstance(a, float) or isinstance(b, float):
        return np.float32(a) == np.float32(b)
    return a == b


def compare_table(table, fail):
    by_key = {(s["domain"], s["name"], s["since_version"]): s for s in table}
    compared = 0
    for api in defs.get_all_schemas_with_history():
        key = (api.domain, api.name, api.since_version)
        s = by_key.get(key)
        where = "%s %s-%d" % (api.domain or "ai.onnx", api.name, api.since_version)
        if s is None:
            fail("table lacks %s" % where)
            continue
        compared += 1
        if s["deprecated"] != bool(api.deprecated):
            fail("%s: deprecated %r" % (where, s["deprecated"]))
        for field, want in (("min_inputs", api.min_input), ("max_inputs", api.max_input),
                            ("min_outputs", api.min_output), ("max_outputs", api.max_output)):
            got = s[field]
            if (got is None and want < UNBOUNDED) or (got is not None and got != want):
                fail("%s: %s %r, API %r" % (where, field, got, want))
        tcs = {t.type_param_str: t.allowed_type_strs for t in api.type_constraints}
        for kind, params, ports in (("input", api.inputs, s["inputs"]),
                                    ("output", api.outputs, s["outputs"])):
            if [p.name for p in params] != [p["name"] for p in ports]:
                fail("%s: %s names %r, API %r" % (where, kind, [p["name"] for p in ports],
                                                  [p.name for p in params]))
                continue
            for p, q in zip(params, ports):
                opt = int(p.option.value)
                if (q["optional"], q["variadic"]) != (opt == 1, opt == 2):
                    fail("%s: %s %s flags" % (where, kind, p.name))
                if opt == 2 and q["heterogeneous"] != (not p.isHomogeneous):
                    fail("%s: %s %s heterogeneous" % (where, kind, p.name))
                if p.typeStr in tcs:
                    if q["param"] != p.typeStr:
                        fail("%s: %s %s param %r" % (where, kind, p.name, q["param"]))
                    allowed = tcs[p.typeStr]
                else:
                    if q["param"] is not None:
                        fail("%s: %s %s param %r" % (where, kind, p.name, q["param"]))
                    allowed = [p.typeStr]
                known, other = api_types(allowed)
                got = types_set(q["types"])
                if ("other types" in got) != other or got - {"other types"} != known:
                    fail("%s: %s %s types %r, API %r" % (where, kind, p.name, q["types"],
                                                         sorted(allowed)))
        api_attrs = sorted(api.attributes.values(), key=lambda a: a.name)
        if [a.name for a in api_attrs] != [a["name"] for a in s["attributes"]]:
            fail("%s: attributes %r" % (where, [a["name"] for a in s["attributes"]]))
        else:
            for a, b in zip(api_attrs, s["attributes"]):
                if ATTR_TYPES[a.type.value] != b["type"] or bool(a.required) != b["required"]:
                    fail("%s: attribute %s type/required" % (where, a.name))
                if not same_default(a, b["default"]):
                    fail("%s: attribute %s default %r" % (where, a.name, b["default"]))
        if [c["name"] for c in s["constraints"]] != list(tcs):
            fail("%s: constraints %r" % (where, [c["name"] for c in s["constraints"]]))
    return compared


def compare_lookup(fail):
    """For every op of the API and every opset 1..17, the table picks the API's version."""
    ops = {(s.domain, s.name) for s in defs.get_all_schemas_with_history()}
    newest = {"": 17, "ai.onnx.ml": 3, "ai.onnx.preview.training": 1}
    queries = []
    for dom, name in sorted(ops):
        for v in range(1, newest[dom] + 1):
            queries.append((dom, name, v))
    r = subprocess.run([DUMP, "-"], capture_output=True, check=True,
                       input="".join("%s\t%s\t%d\n" % q for q in queries).encode())
    answers = [json.loads(line) for line in r.stdout.splitlines()]
    if len(answers) != len(queries):
        fail("lookup: %d answers to %d queries" % (len(answers), len(queries)))
    looked = 0
    for (dom, name, v), got in zip(queries, answers):
        try:
            want = defs.get_schema(name, v, dom).since_version
        except defs.SchemaError:
            want = None
        looked += 1
        if want is None:
            if got["status"] != "too_new":
                fail("lookup %s %s at %d: %s, API has none" % (dom, name, v, got["status"]))
        elif got["status"] != "found" or got["since_version"] != want:
            fail("lookup %s %s at %d: %s %r, API %d" % (dom, name, v, got["status"],
                                                        got.get("since_version"), want))
    return looked


def api_schema(op, domain, opset):
    try:
        return defs.get_schema(op, opset, domain)
    except defs.SchemaError:
        return None


def port_names(params, n):
    names = []
    for k in range(n):
        if k < len(params) - 1 or (k == len(params) - 1 and int(params[-1].option.value) != 2):
            names.append(params[k].name)
        elif params and int(params[-1].option.value) == 2:
            names.append("%s[%d]" % (params[-1].name, k - (len(params) - 1)))
        else:
            names.append(None)
    return names


def check_codes(path):
    """node id -> the codes `onnxviz check --json` reports on it"""
    r = subprocess.run([BIN, "check", "--json", path], capture_output=True)
    codes = {}
    for p in json.loads(r.stdout)["problems"]:
        if p.get("node"):
            codes.setdefault(p["node"], set()).add(p["code"])
    return codes


def compare_documents(table, fail):
    in_table = {(t["domain"], t["name"]) for t in table}
    models = sorted(glob.glob(os.path.join(CORPUS, "models", "**", "*.onnx"), recursive=True))
    models += sorted(glob.glob(os.path.join(ROOT, "tests", "data", "models", "*.onnx")))
    stats = {"models": 0, "nodes": 0, "named": 0, "api": 0, "defaults": 0, "marked": 0,
             "without_schema": 0}
    for path in models:
        r = subprocess.run([BIN, "inspect", "--json", path], capture_output=True)
        if r.returncode != 0:
            fail("%s: inspect exit %d" % (path, r.returncode))
            continue
        doc = json.loads(r.stdout)
        stats["models"] += 1
        opsets = {o["domain"]: o["version"] for o in doc["model"]["opset_import"]}
        for n in doc["nodes"]:
            stats["nodes"] += 1
            where = "%s: node %s (%s)" % (os.path.basename(path), n["id"], n["op_type"])
            s = n.get("schema")
            if s is None:
                stats["without_schema"] += 1
                # an op the table knows may go unnamed only where the check says why: its
                # domain is not imported by its scope, or the imported opset predates it
                dom = n["domain"] if n["domain"] != "ai.onnx" else ""
                if (dom, n["op_type"]) in in_table and "function" not in n:
                    codes = check_codes(path).get(n["id"], set())
                    if not codes & {"domain_not_imported", "op_too_new"}:
                        fail("%s: an op of the table without a schema (check: %s)" %
                             (where, sorted(codes)))
                continue
            for kind in ("inputs", "outputs"):
                for k, ref in enumerate(n[kind]):
                    if ref is not None and "port" not in ref:
                        fail("%s: %s[%d] has no name" % (where, kind, k))
            stats["named"] += 1
            # the API's view, where python3-onnx knows the domain and opset (main graph:
            # the model's imports; function bodies import their own)
            dom = n["domain"] if n["domain"] != "ai.onnx" else ""
            if not n["scope"].startswith("f") and dom in opsets and \
                    opsets[dom] <= {"": 17, "ai.onnx.ml": 3}.get(dom, 0):
                api = api_schema(n["op_type"], dom, opsets[dom])
                if api is None:
                    fail("%s: the API has no schema" % where)
                    continue
                stats["api"] += 1
                if s["since_version"] != api.since_version:
                    fail("%s: version %d, API %d" % (where, s["since_version"],
                                                     api.since_version))
                for kind, params in (("inputs", api.inputs), ("outputs", api.outputs)):
                    want = port_names(params, len(n[kind]))
                    got = [ref["port"] if ref else w for ref, w in zip(n[kind], want)]
                    if got != want:
                        fail("%s: %s named %r, API %r" % (where, kind, got, want))
                given = {a["name"] for a in n["attributes"]}
                want_defaults = sorted(a.name for a in api.attributes.values()
                                       if a.default_value.name and a.name not in given and
                                       a.type.value in (1, 2, 3, 6, 7, 8))
                got_defaults = sorted(d["name"] for d in n["defaults"])
                if got_defaults != want_defaults:
                    fail("%s: defaults %r, API %r" % (where, got_defaults, want_defaults))
                stats["defaults"] += len(got_defaults)
                for a in n["attributes"]:
                    spec = api.attributes.get(a["name"])
                    if spec is None or not spec.default_value.name or "value" not in a:
                        continue
                    want = helper.get_attribute_value(spec.default_value)
                    if isinstance(want, bytes):
                        want = want.decode("utf-8", "replace")
                    if isinstance(want, list):
                        want = [w.decode("utf-8", "replace") if isinstance(w, bytes) else w
                                for w in want]
                    value = a["value"]
                    is_default = (isinstance(want, list) and isinstance(value, list) and
                                  len(want) == len(value) and
                                  all(close(x, y) for x, y in zip(want, value))) or \
                                 (not isinstance(want, list) and not isinstance(value, list) and
                                  not isinstance(value, dict) and close(want, value))
                    if is_default != bool(a.get("default")):
                        fail("%s: attribute %s default mark %r, value %r, default %r" % (
                            where, a["name"], a.get("default"), value, want))
                    stats["marked"] += is_default
    return stats


def main():
    failures = []
    fail = failures.append
    r = subprocess.run([DUMP], capture_output=True, check=True)
    table = [json.loads(line) for line in r.stdout.splitlines()]
    compared = compare_table(table, fail)
    looked = compare_lookup(fail)
    stats = compare_documents(table, fail)
    print("schemas: table %d versions; %d compared with python3-onnx %s's API, %d opset "
          "look-ups" % (len(table), compared, onnx.__version__, looked))
    print("schemas: %(models)d models, %(nodes)d nodes: %(named)d named by a schema "
          "(%(api)d compared with the API), %(without_schema)d without (custom domains, "
          "local functions); %(defaults)d defaults listed, %(marked)d attributes marked as "
          "default" % stats)
    for f in failures[:200]:
        print("FAIL " + f)
    if failures:
        print("schemas: %d failures" % len(failures))
        sys.exit(1)
    print("schemas: ok")


if __name__ == "__main__":
    main()
