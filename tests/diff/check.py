#!/usr/bin/python3
"""check.py — `onnxviz check` against onnx.checker (full check, strict shape inference).

Two parts:
  1. crafted models, one or more per problem code (docs/check.md): `onnxviz check --json`
     must report that code, with its severity, on the expected node (or on the model);
  2. agreement: for every crafted model, every model under $ONNXVIZ_CORPUS/models, the
     parser's constructed models (tests/data/models) and the benchmark models when they are
     on this machine, whether onnx.checker rejects the model must match whether onnxviz
     reports an error, and the exit status must say the same (0 no errors, 1 errors).
     Models beyond python3-onnx 1.12's range (IR version > 8, or an imported opset it does
     not know) are not compared: its checker rejects them for its own age.  Each model
     that differs is listed; any difference fails the suite.
Prints the counts.  Run with Debian's /usr/bin/python3 (python3-onnx).
"""
import glob
import json
import os
import subprocess
import sys
import tempfile

import onnx
from onnx import TensorProto as T
from onnx import checker
from onnx import helper as h

sys.dont_write_bytecode = True

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("BUILD", "build")
BIN = os.path.join(ROOT, BUILD, "onnxviz")
CORPUS = os.environ.get("ONNXVIZ_CORPUS", os.path.join(os.path.dirname(ROOT), "shared", "corpus"))
# the benchmark models (tests/bench/render_models.py, fetch-large-models.sh), when present;
# by name: other files in those caches are not ours to judge
BENCH = [os.path.expanduser("~/.cache/onnxviz-bench/%s.onnx" % n)
         for n in ("resnet50", "fasterrcnn_mobilenet", "swin_t", "encoder48", "scoped20k",
                   "scoped100k")] + [os.path.expanduser("~/.cache/onnx-corpus/isnet_fp16.onnx")]

# what python3-onnx 1.12 knows: beyond it, its checker fails for its own age
ORACLE_IR = 8
ORACLE_OPSETS = {"": 17, "ai.onnx": 17, "ai.onnx.ml": 3, "ai.onnx.preview.training": 1}

X = h.make_tensor_value_info("x", T.FLOAT, [2])
Y = h.make_tensor_value_info("y", T.FLOAT, [2])
XI = h.make_tensor_value_info("x", T.INT64, [2])
YI = h.make_tensor_value_info("y", T.INT64, [2])


def model(nodes, inputs=(X,), outputs=(Y,), opset=13, ir=8, inits=(), opsets=(), functions=()):
    g = h.make_graph(list(nodes), "g", list(inputs), list(outputs), initializer=list(inits))
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)] +
                     [h.make_opsetid(d, v) for d, v in opsets], functions=list(functions))
    m.ir_version = ir
    return m


def relu(i="x", o="y", **kw):
    return h.make_node("Relu", [i], [o], **kw)


def crafted():
    """(name, model, code, severity, node id or None)"""
    cases = []

    def add(name, m, code, sev, node):
        cases.append((name, m, code, sev, node))

    m = model([relu()])
    m.ir_version = 0
    add("no_ir_version", m, "ir_version_missing", "error", None)
    add("ir_newer", model([relu()], ir=14), "ir_version_newer", "warning", None)
    m = model([relu()])
    del m.opset_import[:]
    add("no_opset_import", m, "opset_import_missing", "error", None)
    add("opset_with_ir2", model([relu()], ir=2), "opset_import_old_ir", "error", None)
    add("opset_30", model([relu()], opset=30), "opset_version_unknown", "warning", None)
    add("opset17_ir7", model([relu()], opset=17, ir=7), "ir_opset_mismatch", "warning", None)
    add("output_without_shape",
        model([relu()], outputs=[h.make_tensor_value_info("y", T.FLOAT, None)]),
        "graph_io", "error", None)
    add("output_without_type", model([relu()], outputs=[h.make_empty_tensor_value_info("y")]),
        "graph_io", "error", None)
    add("input_twice", model([relu()], inputs=[X, X]), "duplicate_input", "error", None)
    add("initializer_twice",
        model([h.make_node("Add", ["x", "w"], ["y"])],
              inits=[h.make_tensor("w", T.FLOAT, [2], [1, 2]),
                     h.make_tensor("w", T.FLOAT, [2], [1, 2])]),
        "duplicate_input", "error", None)
    bad = h.make_tensor("w", T.FLOAT, [2], [1.0, 2.0])
    bad.raw_data = b"\0" * 12
    del bad.float_data[:]
    add("raw_data_too_long", model([h.make_node("Add", ["x", "w"], ["y"])], inits=[bad]),
        "tensor_size", "warning", None)
    bad = h.make_tensor("w", T.FLOAT, [2], [1.0, 2.0])
    del bad.float_data[:]
    bad.int64_data.extend([1, 2])
    add("floats_in_int64_data", model([h.make_node("Add", ["x", "w"], ["y"])], inits=[bad]),
        "tensor_storage", "error", None)
    add("output_not_produced",
        model([relu()], outputs=[Y, h.make_tensor_value_info("z", T.FLOAT, [2])]),
        "output_not_produced", "warning", None)
    add("unused_initializer", model([relu()], inits=[h.make_tensor("w", T.FLOAT, [1], [1])]),
        "unused_initializer", "info", None)
    add("custom_domain", model([h.make_node("Foo", ["x"], ["y"], domain="x.y")],
                               opsets=[("x.y", 1)]),
        "unchecked_domain", "info", "n0")
    add("domain_not_imported", model([h.make_node("Foo", ["x"], ["y"], domain="x.y")]),
        "domain_not_imported", "error", "n0")
    add("unknown_op", model([h.make_node("Frobnicate", ["x"], ["y"])]), "unknown_op", "error",
        "n0")
    add("experimental_op", model([h.make_node("ATen", ["x"], ["y"])]), "experimental_op",
        "warning", "n0")
    add("layernorm_at_opset11",
        model([h.make_node("LayerNormalization", ["x", "s"], ["y"])],
              inputs=[X, h.make_tensor_value_info("s", T.FLOAT, [2])], opset=11),
        "op_too_new", "error", "n0")
    add("upsample_at_opset10",
        model([h.make_node("Upsample", ["x", "s"], ["y"])],
              inputs=[X, h.make_tensor_value_info("s", T.FLOAT, [1])], opset=10),
        "deprecated_op", "error", "n0")
    add("node_without_io", model([relu(), h.make_node("Relu", [], [])]), "node_without_io",
        "error", "n1")
    add("add_one_input", model([h.make_node("Add", ["x"], ["y"])]), "too_few_inputs", "error",
        "n0")
    add("relu_two_inputs", model([h.make_node("Relu", ["x", "x"], ["y"])]), "too_many_inputs",
        "error", "n0")
    add("relu_no_output", model([relu(), h.make_node("Relu", ["x"], [])]), "too_few_outputs",
        "error", "n1")
    add("relu_two_outputs", model([h.make_node("Relu", ["x"], ["y", "z"])]),
        "too_many_outputs", "error", "n0")
    add("add_empty_input", model([h.make_node("Add", ["x", ""], ["y"])]),
        "required_input_empty", "error", "n0")
    add("relu_empty_output", model([relu(), h.make_node("Relu", ["x"], [""])]),
        "required_output_empty", "error", "n1")
    add("cast_without_to", model([h.make_node("Cast", ["x"], ["y"])]), "missing_attribute",
        "error", "n0")
    add("relu_with_foo", model([relu(foo=1)]), "unknown_attribute", "error", "n0")
    n = h.make_node("LeakyRelu", ["x"], ["y"], alpha=0.1)
    n.attribute.extend([h.make_attribute("alpha", 0.2)])
    add("alpha_twice", model([n]), "duplicate_attribute", "error", "n0")
    add("alpha_as_int", model([h.make_node("LeakyRelu", ["x"], ["y"], alpha=1)]),
        "attribute_type", "error", "n0")
    add("empty_perm", model([h.make_node("Transpose", ["x"], ["y"], perm=[])]),
        "empty_attribute", "error", "n0")
    add("relu_of_int64", model([relu()], inputs=[XI], outputs=[YI]), "type_constraint",
        "error", "n0")
    add("add_float_int64",
        model([h.make_node("Add", ["x", "w"], ["y"])],
              inputs=[X, h.make_tensor_value_info("w", T.INT64, [2])]),
        "type_binding", "error", "n0")
    add("undefined_input", model([relu("nope")]), "undefined_value", "error", "n0")
    add("out_of_order", model([relu("t", "y"), relu("x", "t")]), "used_before_produced",
        "error", "n0")
    add("output_twice", model([relu("x", "y"), relu("x", "y")]), "duplicate_output", "error",
        "n1")
    ext = h.make_tensor("w", T.FLOAT, [2], [1.0, 2.0])
    del ext.float_data[:]
    ext.data_location = onnx.TensorProto.EXTERNAL
    ext.external_data.add(key="location", value="missing.bin")
    add("external_file_missing", model([h.make_node("Add", ["x", "w"], ["y"])], inits=[ext]),
        "external_data", "error", None)
    # the contrib domain: warnings (onnx.checker does not know it)
    add("attention_without_num_heads",
        model([h.make_node("Attention", ["x", "w"], ["y"], domain="com.microsoft")],
              inputs=[X, h.make_tensor_value_info("w", T.FLOAT, [2])],
              opsets=[("com.microsoft", 1)]),
        "missing_attribute", "warning", "n0")
    # resolution inside a subgraph and a model-local function
    then_g = h.make_graph([h.make_node("Cast", ["x"], ["t"])], "then", [],
                          [h.make_tensor_value_info("t", T.FLOAT, [2])])
    else_g = h.make_graph([h.make_node("Identity", ["x"], ["e"])], "else", [],
                          [h.make_tensor_value_info("e", T.FLOAT, [2])])
    add("cast_without_to_in_then_branch",
        model([h.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g)],
              inputs=[X, h.make_tensor_value_info("c", T.BOOL, [])]),
        "missing_attribute", "error", "n0.then_branch.n0")
    fn = h.make_function("local", "Act", ["a"], ["b"],
                         [h.make_node("Cast", ["a"], ["b"])], [h.make_opsetid("", 13)])
    add("cast_without_to_in_function",
        model([h.make_node("Act", ["x"], ["y"], domain="local")], opsets=[("local", 1)],
              functions=[fn]),
        "missing_attribute", "error", "f0.n0")
    # opset resolution: the version in effect decides (Clip-11 has no min/max attributes)
    add("clip_attributes_at_opset11",
        model([h.make_node("Clip", ["x"], ["y"], min=0.0)], opset=11),
        "unknown_attribute", "error", "n0")
    # and a clean model of each kind, to keep the errors honest
    add("clean", model([relu()]), None, None, None)
    add("clean_clip_at_opset6", model([h.make_node("Clip", ["x"], ["y"], min=0.0)], opset=6),
        None, None, None)
    return cases


def oracle(path, m):
    """True when onnx.checker rejects, False when it accepts, None out of its range.

    The checker is given the loaded ModelProto, never the path: with a path and
    full_check, onnx 1.12 runs infer_shapes_path, which writes the inferred model back
    over the file.  External data locations are relative to the current directory then,
    so the call runs in the model's folder."""
    if m.ir_version > ORACLE_IR:
        return None
    imports = list(m.opset_import) + [o for f in m.functions for o in f.opset_import]
    for o in imports:
        if o.domain in ORACLE_OPSETS and o.version > ORACLE_OPSETS[o.domain]:
            return None
    here = os.getcwd()
    os.chdir(os.path.dirname(os.path.abspath(path)))
    try:
        checker.check_model(m, full_check=True)
        return False
    except Exception:  # noqa: BLE001 — every rejection counts
        return True
    finally:
        os.chdir(here)


def ours(path):
    r = subprocess.run([BIN, "check", "--json", path], capture_output=True, timeout=300)
    if r.returncode not in (0, 1):
        raise SystemExit("%s: exit %d: %s" % (path, r.returncode, r.stderr.decode()[:300]))
    doc = json.loads(r.stdout)
    if doc["format"] != "onnxviz.check/1":
        raise SystemExit("%s: format %r" % (path, doc["format"]))
    has_error = doc["errors"] > 0
    if (r.returncode == 1) != has_error or doc["ok"] == has_error:
        raise SystemExit("%s: exit %d but %d errors (ok=%r)" % (path, r.returncode,
                                                               doc["errors"], doc["ok"]))
    counted = sum(doc["by_code"].values())
    if counted != doc["errors"] + doc["warnings"] + doc["infos"]:
        raise SystemExit("%s: by_code sums to %d" % (path, counted))
    return doc


def main():
    failures = []
    agree = {"rejected": 0, "accepted": 0}
    beyond = []
    compared = 0

    def compare(label, path, m):
        nonlocal compared
        verdict = oracle(path, m)
        doc = ours(path)
        if verdict is None:
            beyond.append(label)
            return doc
        compared += 1
        mine = doc["errors"] > 0
        if mine == verdict:
            agree["rejected" if verdict else "accepted"] += 1
        else:
            first = [p for p in doc["problems"] if p["severity"] == "error"][:3]
            failures.append("%s: onnx.checker %s, onnxviz check %s %s" % (
                label, "rejects" if verdict else "accepts",
                "reports errors" if mine else "reports no error",
                [p["code"] + ": " + p["message"][:120] for p in first]))
        return doc

    with tempfile.TemporaryDirectory() as tmp:
        cases = crafted()
        codes_seen = set()
        for name, m, code, sev, node in cases:
            path = os.path.join(tmp, name + ".onnx")
            onnx.save(m, path)
            doc = compare("crafted/" + name, path, m)
            if code is None:
                if doc["errors"] or doc["warnings"]:
                    failures.append("crafted/%s: expected clean, got %s" % (
                        name, [p["code"] for p in doc["problems"]]))
                continue
            codes_seen.add(code)
            hit = [p for p in doc["problems"] if p["code"] == code and p["severity"] == sev and
                   p["node"] == node]
            if not hit:
                failures.append("crafted/%s: expected %s %s on %s, got %s" % (
                    name, sev, code, node or "the model",
                    [(p["severity"], p["code"], p["node"]) for p in doc["problems"]]))
        # every code of docs/check.md has its crafted model
        with open(os.path.join(ROOT, "docs", "check.md"), encoding="utf-8") as f:
            documented = {line.split("`")[1] for line in f if line.startswith("| `")}
        missing = documented - codes_seen
        if missing:
            failures.append("codes without a crafted model: %s" % sorted(missing))
        undocumented = codes_seen - documented
        if undocumented:
            failures.append("codes missing from docs/check.md: %s" % sorted(undocumented))
        print("crafted: %d models, %d codes" % (len(cases), len(codes_seen)))

    models = sorted(glob.glob(os.path.join(CORPUS, "models", "**", "*.onnx"), recursive=True))
    models += sorted(glob.glob(os.path.join(ROOT, "tests", "data", "models", "*.onnx")))
    models += [p for p in BENCH if os.path.exists(p)]
    if not any(CORPUS in p for p in models):
        failures.append("no corpus models under %s (set ONNXVIZ_CORPUS)" % CORPUS)
    # the models are shared: nothing here may change them (see oracle())
    before = {p: (os.stat(p).st_size, os.stat(p).st_mtime_ns) for p in models}
    for path in models:
        try:
            m = onnx.load(path, load_external_data=False)
        except Exception as e:  # noqa: BLE001
            failures.append("%s: onnx.load failed: %s" % (path, e))
            continue
        compare(os.path.relpath(path, os.path.dirname(ROOT)), path, m)

    for p, st in before.items():
        if (os.stat(p).st_size, os.stat(p).st_mtime_ns) != st:
            failures.append("%s changed during the run" % p)
    print("compared with onnx.checker: %d models; agree on %d rejected and %d accepted; "
          "%d differ; %d beyond python3-onnx %s's range (not compared): %s" % (
              compared, agree["rejected"], agree["accepted"], compared - sum(agree.values()),
              len(beyond), onnx.__version__, ", ".join(os.path.basename(b) for b in beyond)))
    for f in failures:
        print("FAIL " + f)
    if failures:
        sys.exit(1)
    print("check: ok")


if __name__ == "__main__":
    main()
