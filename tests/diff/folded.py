#!/usr/bin/python3
"""folded.py — the values folded rows show, against onnx.shape_inference's data propagation.

A drawing folds bookkeeping (Shape -> Gather -> Unsqueeze -> Concat chains, ...) into rows
of the boxes that consume it; where parser/shape.c's data propagation knows a value the row
shows it: `shape = [N, 3136, 96] · 14 ops` (docs/render.md).  For every corpus model
(../shared/corpus/models/**/*.onnx, or $ONNXVIZ_CORPUS/models) and the torch exports of the
rendering benchmark (tests/bench/render_models.py prepares them in the bench cache:
swin_t, encoder48, resnet50, fasterrcnn_mobilenet):

  shown     each folded row of the full-detail layout JSON (`render --group=none`) that
            shows values must show exactly what the parser knows for that value
            (shapedump's "data": integers, symbols, `?` for unknown, true/false for bools,
            the first 8 of longer lists);
  oracle    every main-graph value whose values the parser knows (at least one element) is
            compared with onnx.shape_inference.infer_shapes(data_prop=True, strict_mode=
            False), which does not expose propagated values directly: each value V gets a
            probe ConstantOfShape(Cast(V, INT64)) (an Unsqueeze for a scalar) as an
            extra graph output, whose inferred shape is V as onnx knows it (the Cast only
            for other types than INT64: Cast propagates data from opset 13 on).  An element
            onnx leaves unknown (or calls unk__N) is undecided; two different integers, an
            integer against a symbol or two different symbols are a conflict.

  bookkeeping  the document's "bookkeeping" flag of every main-graph node against the
            definition computed here from the onnx model alone: a node of the default
            domain, not random, holding no subgraph and calling no local function, whose
            inputs (all but Shape/Size/EyeLike's input 0 and CastLike's input 1, which are
            read for their shape or type only) are initializers or outputs of bookkeeping
            nodes (a least fixed point: nodes on a cycle are not bookkeeping).

Exit status 1 on any conflict, any row that shows something else than the parser knows,
or any node whose flag differs.
Prints, per model and in total: rows shown, values and elements compared, agreeing,
undecided, and elements onnx knows that we do not ("weaker").

Under the sanitize suite (ONNXVIZ_SANITIZED=1) the oracle is skipped (one SKIP line): it
is onnx's shape inference, which the plain run has compared on the same models; onnxviz's
part (shapedump, inspect, render) and the shown and bookkeeping checks still run.

Usage: folded.py [--only SUBSTRING] [--no-bench]  (run from the repository root)
"""
import glob
import json
import os
import re
import subprocess
import sys
import tempfile
import time

import onnx
from onnx import TensorProto, helper, shape_inference

sys.dont_write_bytecode = True  # no __pycache__ in the tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from shapes import first_pairs  # noqa: E402  (duplicate value names: the first wins)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("BUILD", "build")
BENCH_MODELS = ["swin_t", "encoder48", "resnet50", "fasterrcnn_mobilenet"]
SHOWN = 8  # elements a row shows before "…(n)" (render/fold.c)


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, timeout=300, **kw)


def parse_row(text):
    """The elements a folded row shows ('label = [a, b]' / 'label = a'), or None."""
    head = text.rsplit(" \u00b7 ", 1)[0]
    if " = " not in head:
        return None
    vals = head.split(" = ", 1)[1]
    if vals.startswith("["):
        if not vals.endswith("]"):
            return None
        inner = vals[1:-1]
        return [x for x in inner.split(", ")] if inner else []
    return [vals]


def expected_row(data, elem_type):
    """What render/fold.c shows for known data (shapedump's list)."""
    out = []
    for i, e in enumerate(data):
        if i == SHOWN and len(data) > SHOWN + 1:
            out.append("\u2026(%d)" % len(data))
            break
        if e is None:
            out.append("?")
        elif isinstance(e, str):
            out.append(e if len(e) <= 12 else e[:12] + "\u2026")
        elif elem_type == TensorProto.BOOL:
            out.append("true" if e else "false")
        else:
            out.append(str(e))
    return out


RANDOM = {"RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike",
          "Bernoulli", "Multinomial", "Dropout"}
SHAPE_ONLY = {("Shape", 0), ("Size", 0), ("EyeLike", 0), ("CastLike", 1)}


def bookkeeping(model):
    """{node index: bool} for the main graph, from the definition."""
    g = model.graph
    consts = {t.name for t in g.initializer} | \
        {t.values.name for t in g.sparse_initializer}
    funcs = {(f.domain, f.name) for f in model.functions}
    producer = {}
    for i, n in enumerate(g.node):
        for o in n.output:
            if o and o not in producer and o not in consts:
                producer[o] = i
    flag = [False] * len(g.node)
    changed = True
    while changed:  # least fixed point: a node turns true once all it reads is
        changed = False
        for i, n in enumerate(g.node):
            if flag[i] or n.domain not in ("", "ai.onnx") or n.op_type in RANDOM or \
                    (n.domain, n.op_type) in funcs or \
                    any(a.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS)
                        for a in n.attribute):
                continue
            ok = True
            for k, name in enumerate(n.input):
                if not name or (n.op_type, k) in SHAPE_ONLY or name in consts:
                    continue
                if name not in producer or not flag[producer[name]]:
                    ok = False
                    break
            if ok:
                flag[i] = changed = True
    return flag


def default_opset(model):
    for o in model.opset_import:
        if o.domain in ("", "ai.onnx"):
            return o.version
    return 1 if not model.opset_import else 0


def oracle(model, values):
    """{value name: [dim as onnx infers it: int, symbol or None]} for each probed value."""
    opset = default_opset(model)
    if opset < 9:
        return {}
    g = model.graph
    extra_nodes, extra_out, extra_init = [], [], []
    probes = {}
    for k, (name, (rank, elem)) in enumerate(sorted(values.items())):
        src = name
        if elem != TensorProto.INT64:  # Cast propagates data from opset 13 only
            c = "__probe_cast_%d" % k
            extra_nodes.append(helper.make_node("Cast", [src], [c], to=TensorProto.INT64))
            src = c
        if rank == 0:
            u = "__probe_unsq_%d" % k
            if opset >= 13:
                extra_nodes.append(helper.make_node("Unsqueeze", [src, "__probe_axes"], [u]))
            else:
                extra_nodes.append(helper.make_node("Unsqueeze", [src], [u], axes=[0]))
            src = u
        p = "__probe_%d" % k
        extra_nodes.append(helper.make_node("ConstantOfShape", [src], [p]))
        extra_out.append(helper.make_tensor_value_info(p, TensorProto.FLOAT, None))
        probes[p] = name
    if opset >= 13:
        extra_init.append(helper.make_tensor("__probe_axes", TensorProto.INT64, [1], [0]))
    g.node.extend(extra_nodes)
    g.output.extend(extra_out)
    g.initializer.extend(extra_init)
    res = shape_inference.infer_shapes(model, strict_mode=False, data_prop=True)
    out = {}
    for o in res.graph.output:
        if o.name not in probes or not o.type.tensor_type.HasField("shape"):
            continue
        dims = []
        for d in o.type.tensor_type.shape.dim:
            if d.HasField("dim_value"):
                dims.append(d.dim_value)
            elif d.HasField("dim_param") and d.dim_param and not d.dim_param.startswith("unk__"):
                dims.append(d.dim_param)
            else:
                dims.append(None)
        out[probes[o.name]] = dims
    return out


def check_model(path, tmp):
    r = {"rows": 0, "row_values": 0, "values": 0, "elements": 0, "agree": 0, "undecided": 0,
         "weaker": 0, "conflicts": [], "row_errors": [], "flag_errors": [], "error": None,
         "nodes": 0, "bookkeeping": 0}
    p = run([os.path.join(BUILD, "tools", "shapedump"), path])
    if p.returncode != 0:
        r["error"] = "shapedump: " + p.stderr.decode(errors="replace")[:200]
        return r
    dump = json.loads(p.stdout.decode("utf-8", errors="surrogateescape"),
                      object_pairs_hook=first_pairs).get("", {})
    doc = run([os.path.join(BUILD, "onnxviz"), "inspect", "--json", path])
    if doc.returncode != 0:
        r["error"] = "inspect failed"
        return r
    document = json.loads(doc.stdout.decode("utf-8"))
    values = document["values"]
    model = onnx.load(path, load_external_data=False)
    want = bookkeeping(model)
    for n in document["nodes"]:
        if n["scope"] == "" and bool(n.get("bookkeeping")) != want[n["index"]]:
            r["flag_errors"].append("%s (%s %s): bookkeeping %s, expected %s" % (
                n["id"], n["op_type"], n["name"], bool(n.get("bookkeeping")), want[n["index"]]))
    r["bookkeeping"] = sum(want)
    r["nodes"] = len(want)
    lay_path = os.path.join(tmp, "layout.json")
    lay = run([os.path.join(BUILD, "onnxviz"), "render", path, "--group=none", "-o", lay_path])
    if lay.returncode != 0:
        r["error"] = "render: " + lay.stderr.decode(errors="replace")[:200]
        return r
    with open(lay_path, encoding="utf-8") as f:
        layout = json.load(f)
    # shown: rows of folded chains that show values
    row_names = []
    for n in layout["nodes"]:
        for row in n["rows"]:
            if "unfold" not in row:
                continue
            r["rows"] += 1
            shown = parse_row(row["text"])
            if shown is None:
                continue
            r["row_values"] += 1
            v = values[row["value"]]
            d = dump.get(v["name"]) if v["scope"] == "" else None
            if d is None or "data" not in d:
                r["row_errors"].append("%s: %r but the parser knows no values" %
                                       (v["name"], row["text"]))
                continue
            want = expected_row(d["data"], d["elem_type"])
            if shown != want:
                r["row_errors"].append("%s: row %r, parser %r" % (v["name"], row["text"], want))
            row_names.append(v["name"])
    if SANITIZED:
        return r
    # oracle: every main-graph value with known data
    probe = {name: (d["data_rank"], d["elem_type"]) for name, d in dump.items()
             if "data" in d and any(e is not None for e in d["data"])}
    try:
        theirs = oracle(model, probe)
    except Exception as ex:  # the oracle's own failure: reported, not ours
        r["error"] = "onnx: %s: %s" % (type(ex).__name__, str(ex).splitlines()[0][:160])
        return r
    for name, t in theirs.items():
        ours = dump[name]["data"]
        if len(t) != len(ours):
            r["conflicts"].append("%s: %d elements, onnx %d (%r vs %r)" %
                                  (name, len(ours), len(t), ours, t))
            continue
        r["values"] += 1
        for a, b in zip(ours, t):
            r["elements"] += 1
            if b is None:
                r["undecided"] += 1
            elif a is None:
                r["weaker"] += 1
            elif a == b:
                r["agree"] += 1
            else:
                r["conflicts"].append("%s: ours %r onnx %r" % (name, ours, t))
                break
    # rows whose value onnx decides at least in part
    r["shown_checked"] = sum(1 for n in row_names
                             if any(x is not None for x in theirs.get(n, [])))
    return r


SANITIZED = os.environ.get("ONNXVIZ_SANITIZED") == "1"


def main():
    if SANITIZED:
        print("SKIP the onnx oracle under the sanitizers: onnx's shape inference, compared by "
              "the plain diff suite; onnxviz's documents, rows and flags are checked here")
    only = sys.argv[sys.argv.index("--only") + 1] if "--only" in sys.argv else None
    corpus = os.environ.get("ONNXVIZ_CORPUS") or os.path.join(os.path.dirname(ROOT), "shared",
                                                              "corpus")
    models = sorted(glob.glob(os.path.join(corpus, "models", "**", "*.onnx"), recursive=True))
    if not models:
        print("folded: no models under %s/models" % corpus)
        return 1
    if "--no-bench" not in sys.argv:
        cache = os.path.join(os.environ.get("XDG_CACHE_HOME") or
                             os.path.expanduser("~/.cache"), "onnxviz-bench")
        os.makedirs(cache, exist_ok=True)
        p = run(["/usr/bin/python3", os.path.join(ROOT, "tests", "bench", "render_models.py"),
                 cache] + BENCH_MODELS)
        if p.returncode != 0:
            print("folded: preparing the bench exports failed:\n" +
                  p.stderr.decode(errors="replace")[-1500:])
            return 1
        models += [line.split("\t")[1] for line in p.stdout.decode().splitlines() if "\t" in line]
    if only:
        models = [m for m in models if only in m]
    start = time.time()
    tot = {"rows": 0, "row_values": 0, "values": 0, "elements": 0, "agree": 0,
           "undecided": 0, "weaker": 0, "shown_checked": 0, "nodes": 0, "bookkeeping": 0,
           "flag_errors": 0}
    failed = 0
    with tempfile.TemporaryDirectory(prefix="onnxviz-folded-") as tmp:
        for path in models:
            r = check_model(path, tmp)
            rel = os.path.relpath(path, os.path.join(corpus, "models")) \
                if path.startswith(corpus) else os.path.basename(path)
            for k in tot:
                x = r.get(k, 0)
                tot[k] += len(x) if isinstance(x, list) else x
            if r["error"] and "onnx:" not in r["error"]:
                print("FAIL %s: %s" % (rel, r["error"]))
                failed += 1
                continue
            if r["conflicts"] or r["row_errors"] or r["flag_errors"]:
                failed += 1
                print("FAIL %s: %d conflicts, %d rows that disagree, %d bookkeeping flags" %
                      (rel, len(r["conflicts"]), len(r["row_errors"]), len(r["flag_errors"])))
                for line in (r["conflicts"] + r["row_errors"] + r["flag_errors"])[:8]:
                    print("    " + line)
            if r["error"]:
                print("  note %s: %s" % (rel, r["error"]))
            if r["rows"] >= 20 or r["values"] >= 50:
                print("  %-40s rows %5d (%d with values, %d decided); values %d: %d elements, "
                      "%d agree, %d undecided, %d weaker" %
                      (rel, r["rows"], r["row_values"], r.get("shown_checked", 0), r["values"],
                       r["elements"], r["agree"], r["undecided"], r["weaker"]))
    print("folded: %d main-graph nodes, %d bookkeeping by the definition, %d flags differ" %
          (tot["nodes"], tot["bookkeeping"], tot["flag_errors"]))
    print("folded: %d models, %d folded rows (%d show values, onnx decides %d of those); "
          "%d values, %d elements: %d agree, %d undecided by onnx, %d known to onnx only; "
          "%d failed, %.1f s" %
          (len(models), tot["rows"], tot["row_values"], tot["shown_checked"], tot["values"],
           tot["elements"], tot["agree"], tot["undecided"], tot["weaker"], failed,
           time.time() - start))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
