#!/usr/bin/python3
"""repeats.py — repeated blocks, ranges and group summaries in the overview (render/hier.c,
render/repeat.c), on models built here with python3-onnx and drawn by `onnxviz render`.

  - identical layers are one box "layers.0–11 ×12" (data-members, data-open-all), however
    their weights and node names differ; the overview of 12 or more stays <= 12 boxes;
  - layers differing in one attribute, a weight's shape or their wiring are not merged; a
    differing layer in the middle splits the run in two;
  - siblings that are alike but not next to each other in the graph (norm1 ... norm2) are
    not merged (one box would make a cycle);
  - opening a run's first member leaves the rest a run; "open all" (/p/layers.0..11/*)
    opens every member;
  - a family with many different members is drawn as ranges "layers.0–9" that open like
    groups (expand=/model/layers.0..9) and open by themselves when a member is named (also
    below a group opened only because something inside it is named);
  - the 1,000-layer model of tests/bench/render_models.py, smaller: the overview has
    between 5 and 160 boxes, alike or not;
  - a group of one node is drawn as that node; a group's summary gives its nodes, its
    parameters (as python3-onnx counts them) and the named compute ops first.
Exits 1 on any failure.
"""
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.dont_write_bytecode = True
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "bench"))
import render_models  # noqa: E402

BIN = os.path.join(ROOT, os.environ.get("BUILD", "build"), "onnxviz")
NS = "{http://www.w3.org/2000/svg}"
D = 8
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL", what)


# ---------------------------------------------------------------------------------------
# Models
def chain_model(layers, tweak=None, scope="/model/layers", seed=0, extra_top=False):
    """layers x (attn: MatMul, Transpose, MatMul, Softmax, MatMul, MatMul; Add residual;
    mlp: MatMul, LeakyRelu, MatMul, Add bias), 12 nodes a layer, random weights of their own,
    node names numbered across the model.  tweak(i, spec) may change layer i: spec is a
    dict with alpha (LeakyRelu), bias_shape (the mlp bias) and skip (a layer index whose
    input the residual Add takes instead of its own)."""
    rng = np.random.default_rng(seed)
    nodes, inits = [], []
    op = render_models.node_maker(nodes)

    def w(name, shape):
        inits.append(numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32),
                                             name))
        return name

    x = "x"
    inputs = []
    for i in range(layers):
        spec = {"alpha": 0.1, "bias_shape": (D,), "skip": None}
        if tweak:
            tweak(i, spec)
        inputs.append(x)
        s = "%s.%d" % (scope, i)
        q = op(s + "/attn", "MatMul", [x, w("q%d" % i, (D, D))])
        k = op(s + "/attn", "Transpose", [op(s + "/attn", "MatMul", [x, w("k%d" % i, (D, D))])],
               perm=[1, 0])
        p = op(s + "/attn", "Softmax", [op(s + "/attn", "MatMul", [q, k])], axis=-1)
        a = op(s + "/attn", "MatMul", [p, x])
        a = op(s + "/attn", "MatMul", [a, w("o%d" % i, (D, D))])
        skip = inputs[spec["skip"]] if spec["skip"] is not None else x
        x = op(s, "Add", [skip, a])
        h = op(s + "/mlp", "LeakyRelu", [op(s + "/mlp", "MatMul", [x, w("u%d" % i, (D, D))])],
               alpha=spec["alpha"])
        h = op(s + "/mlp", "MatMul", [h, w("d%d" % i, (D, D))])
        x = op(s + "/mlp", "Add", [h, w("b%d" % i, spec["bias_shape"])])
    if extra_top:
        x = op("/head", "Relu", [x])
    g = helper.make_graph(nodes, "chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                         [D, D])],
                          [helper.make_tensor_value_info(x, TensorProto.FLOAT, [D, D])], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def norms_model():
    """/model/layers.0/{norm1, ff, norm2}: norm1 and norm2 alike, ff between them."""
    nodes, inits = [], []
    op = render_models.node_maker(nodes)
    inits.append(numpy_helper.from_array(np.ones((D, D), np.float32), "W"))

    def norm(s, x):
        m = op(s, "ReduceMean", [x], axes=[-1])
        return op(s, "Div", [op(s, "Sub", [x, m]), op(s, "Sqrt", [m])])
    x = norm("/model/layers.0/norm1", "x")
    x = op("/model/layers.0/ff", "Relu", [op("/model/layers.0/ff", "MatMul", [x, "W"])])
    x = norm("/model/layers.0/norm2", x)
    g = helper.make_graph(nodes, "norms", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                         [D, D])],
                          [helper.make_tensor_value_info(x, TensorProto.FLOAT, [D, D])], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


# ---------------------------------------------------------------------------------------
# Drawing
class Drawing:
    def __init__(self, data):
        root = ET.fromstring(data)
        self.boxes_attr = int(root.get("data-boxes"))
        self.boxes, self.clusters, self.edges = [], [], []
        for g in root.iter(NS + "g"):
            cls = (g.get("class") or "").split()
            if "node" in cls:
                texts = ["".join(t.itertext()) for t in g.findall(NS + "text")]
                title = g.find(NS + "title")
                self.boxes.append({"id": g.get("id"), "kind": g.get("data-kind"),
                                   "group": g.get("data-group"),
                                   "members": g.get("data-members"),
                                   "open_all": g.get("data-open-all"),
                                   "node": g.get("data-node"), "texts": texts,
                                   "title": title.text if title is not None else ""})
            elif "cluster" in cls:
                label = g.find(NS + "text")
                self.clusters.append({"group": g.get("data-group"),
                                      "label": "".join(label.itertext()) if label is not None
                                      else ""})
            elif "edge" in cls:
                self.edges.append((g.get("data-from"), g.get("data-to")))

    def groups(self):
        return [b for b in self.boxes if b["kind"] == "group"]

    def group(self, path):
        return next((b for b in self.groups() if b["group"] == path), None)

    def runs(self):
        return [b for b in self.groups() if b["open_all"]]

    def cluster(self, path):
        return next((c for c in self.clusters if c["group"] == path), None)


def draw(tmp, model, *opts):
    path = os.path.join(tmp, "m.onnx")
    onnx.save(model, path)
    out = os.path.join(tmp, "m.svg")
    r = subprocess.run([BIN, "render", path, "-o", out] + list(opts), capture_output=True,
                       timeout=120)
    if r.returncode != 0:
        raise SystemExit("render %s failed: %s" % (" ".join(opts), r.stderr.decode()[:300]))
    with open(out, "rb") as f:
        return Drawing(f.read())


def fmt_params(n):
    """render/hier.c's fmt_params."""
    if n < 1000:
        return "%d" % n
    x, units = n / 1000.0, ["K", "M", "G", "T"]
    u = 0
    while x >= 999.95 and u < 3:
        x /= 1000.0
        u += 1
    return ("%.1f %s" if x < 99.95 else "%.0f %s") % (x, units[u])


# ---------------------------------------------------------------------------------------
def test_identical(tmp):
    d = draw(tmp, chain_model(12), "--group=2")
    runs = d.runs()
    check(len(runs) == 1, "identical: one run box, got %s" % [b["group"] for b in d.groups()])
    if runs:
        r = runs[0]
        check(r["members"] == "12" and r["group"] == "/model/layers.0" and
              r["open_all"] == "/model/layers.0..11/*",
              "identical: run attributes %r" % {k: r[k] for k in ("members", "group", "open_all")})
        check(r["texts"][0] == "layers.0\u201311 \u00d712", "identical: header %r" % r["texts"][0])
        check(any("nodes" in t and t.endswith(" each") for t in r["texts"]),
              "identical: the summary is per instance: %r" % r["texts"])
        # the run's edges: from the input, to the output; none to itself
        check(any(t == r["id"] for _, t in d.edges) and any(f == r["id"] for f, _ in d.edges) and
              not any(f == t for f, t in d.edges), "identical: edges into and out of the run")
    check(d.boxes_attr <= 12, "identical: %d boxes > 12" % d.boxes_attr)
    # the automatic overview (enough nodes to be grouped): at most 12 boxes, showing xN
    d = draw(tmp, chain_model(40))
    check(d.boxes_attr <= 12, "identical auto: %d boxes > 12" % d.boxes_attr)
    check(any("\u00d7" in b["texts"][0] for b in d.runs()), "identical auto: no xN shown")


def test_differences(tmp):
    def alpha5(i, s):
        if i == 5:
            s["alpha"] = 0.2
    d = draw(tmp, chain_model(12, alpha5), "--group=2")
    got = sorted((b["group"], b["members"]) for b in d.groups())
    check(got == [("/model/layers.0", "5"), ("/model/layers.5", None), ("/model/layers.6", "6")],
          "one attribute in the middle splits the run: %s" % got)
    # two layers differing in one attribute only: never one box
    d = draw(tmp, chain_model(2, lambda i, s: s.update(alpha=0.1 + i)), "--group=2")
    check(len(d.runs()) == 0 and len(d.groups()) == 2, "attribute: %s" %
          [(b["group"], b["members"]) for b in d.groups()])
    d = draw(tmp, chain_model(2), "--group=2")
    check(len(d.runs()) == 1, "the same two layers are one run")

    def bias3(i, s):
        if i == 3:
            s["bias_shape"] = (1, D)
    d = draw(tmp, chain_model(8, bias3), "--group=2")
    got = sorted((b["group"], b["members"]) for b in d.groups())
    check(got == [("/model/layers.0", "3"), ("/model/layers.3", None), ("/model/layers.4", "4")],
          "a weight of another shape splits the run: %s" % got)

    def skip7(i, s):
        if i == 7:
            s["skip"] = 5
    d = draw(tmp, chain_model(10, skip7), "--group=2")
    got = sorted((b["group"], b["members"]) for b in d.groups())
    check(got == [("/model/layers.0", "7"), ("/model/layers.7", None), ("/model/layers.8", "2")],
          "other wiring splits the run: %s" % got)
    # alike, but with something else between them: one box would make a cycle
    d = draw(tmp, norms_model(), "--group=3")
    got = sorted(b["group"] for b in d.groups())
    check(got == ["/model/layers.0/ff", "/model/layers.0/norm1", "/model/layers.0/norm2"] and
          not d.runs(),
          "norm1 and norm2 around ff are not merged: %s" % got)


def test_open(tmp):
    m = chain_model(12)
    d = draw(tmp, m, "--group=2", "--expand=/model/layers.0")
    runs = d.runs()
    check(d.cluster("/model/layers.0") is not None, "open first: layers.0 is a cluster")
    check(len(runs) == 1 and runs[0]["group"] == "/model/layers.1" and runs[0]["members"] == "11"
          and runs[0]["texts"][0] == "layers.1\u201311 \u00d711",
          "open first: the rest stays a run: %s" % [(b["group"], b["members"]) for b in runs])
    d = draw(tmp, m, "--group=2", "--expand=/model/layers.4")
    got = sorted((b["group"], b["members"]) for b in d.groups())
    check(got == [("/model/layers.0", "4"), ("/model/layers.5", "7")],
          "open a middle one: two runs around it: %s" % got)
    d = draw(tmp, m, "--group=2", "--expand=/model/layers.0..11/*")
    check(not d.groups(), "open all: no group box left: %s" % [b["group"] for b in d.groups()])
    check(all(d.cluster("/model/layers.%d" % i) for i in range(12)), "open all: 12 clusters")
    ops = [b for b in d.boxes if b["kind"] == "op"]
    # each layer's 2-D MatMul + bias Add is one Gemm box (a named pattern)
    check(len(ops) == 12 * 11, "open all: every node drawn, the Gemms as one (%d)" % len(ops))
    d = draw(tmp, m, "--group=2", "--expand=/model/layers.2..4/*")
    got = sorted((b["group"], b["members"]) for b in d.groups())
    check(got == [("/model/layers.0", "2"), ("/model/layers.5", "7")] and
          all(d.cluster("/model/layers.%d" % i) for i in (2, 3, 4)),
          "open a span: %s" % got)


def test_ranges(tmp):
    # 120 layers, four kinds in turn (no period of 2 or 3): 120 boxes would be too many
    # for one level
    m = render_models.layered_graph(120, "ranges", cycle=4)
    d = draw(tmp, m)
    ranges = [b for b in d.groups() if b["group"] and ".." in b["group"] and not b["open_all"]]
    check(len(ranges) == 12, "ranges: 12 range boxes, got %s" % [b["group"] for b in d.groups()])
    check(5 <= d.boxes_attr <= 160, "ranges: %d boxes" % d.boxes_attr)
    r0 = d.group("/model/layers.0..9")
    check(r0 is not None and r0["members"] == "10" and r0["texts"][0] == "layers.0\u20139",
          "ranges: the first range %r" % r0)
    # a range opens like a group: its members are boxes in its cluster
    d = draw(tmp, m, "--expand=/model/layers.0..9")
    check(d.cluster("/model/layers.0..9") is not None, "range open: its cluster")
    members = [b for b in d.groups() if b["group"] and b["group"].startswith("/model/layers.")
               and ".." not in b["group"]]
    check(len(members) == 10 and len(d.groups()) == 10 + 11 + 1,
          "range open: 10 members and the 11 other ranges: %s" %
          sorted(b["group"] for b in d.groups()))
    # naming a member opens its range
    d = draw(tmp, m, "--expand=/model/layers.15")
    check(d.cluster("/model/layers.10..19") is not None and d.cluster("/model/layers.15"),
          "a member named opens its range")
    check(d.group("/model/layers.10..19") is None and d.group("/model/layers.0..9"),
          "the other ranges stay closed")
    # the same under a group opened only because something below it is named (group=1:
    # /model is collapsed by default)
    d = draw(tmp, m, "--group=1", "--expand=/model/layers.15/attn")
    check(d.cluster("/model/layers.10..19") is not None and d.cluster("/model/layers.15/attn"),
          "group=1: the named member's range opens")
    check(len([b for b in d.groups() if b["group"] and ".." in b["group"]]) == 11,
          "group=1: the other 11 ranges stay closed: %s" % sorted(b["group"] for b in d.groups()))


def test_periods(tmp):
    # layers alternating two kinds (every other MLP QuickGELU): one stack of the period
    m = render_models.layered_graph(12, "period", vary=2)
    d = draw(tmp, m, "--group=2")
    runs = d.runs()
    check(len(runs) == 1 and runs[0]["texts"][0] == "layers.0\u201311 \u00d76 (2 blocks)"
          and runs[0]["members"] == "12" and runs[0]["group"] == "/model/layers.0..1"
          and runs[0]["open_all"] == "/model/layers.0..11/*",
          "period 2: one run: %s" % [(b["texts"][:1], b["group"], b["members"]) for b in runs])
    check(runs and "per period" in runs[0]["texts"][2], "period 2: summary per period: %r" %
          (runs[0]["texts"] if runs else None))
    # opening it shows one period, block by block (each a group that opens), the rest a run
    d = draw(tmp, m, "--group=2", "--expand=/model/layers.0..1")
    got = sorted((b["group"], b["members"], b["texts"][0]) for b in d.groups()
                 if b["group"].startswith("/model/layers."))
    check(got == [("/model/layers.0", None, "layers.0"), ("/model/layers.1", None, "layers.1"),
                  ("/model/layers.2..3", "10", "layers.2\u201311 \u00d75 (2 blocks)")],
          "period open: A, B and the rest: %s" % got)
    # period 3 (every third layer different, starting A B B: no neighbours alike first)
    m = render_models.layered_graph(9, "period3", cycle=3)
    runs = draw(tmp, m, "--group=2").runs()
    check(len(runs) == 1 and runs[0]["texts"][0] == "layers.0\u20138 \u00d73 (3 blocks)",
          "period 3: one run: %s" % [b["texts"][:1] for b in runs])
    # exact match only: one layer of the period changed breaks it (A B A B' A B)
    def tweak(i, spec):
        if i % 2 == 1:
            spec["alpha"] = 0.2  # B: another LeakyRelu slope
        if i == 7:
            spec["bias_shape"] = (1, D)
    d = draw(tmp, chain_model(12, tweak), "--group=2")
    got = [b["texts"][0] for b in d.groups() if b["group"].startswith("/model/layers.")]
    check(sorted(got) == sorted(["layers.0\u20135 \u00d73 (2 blocks)", "layers.6", "layers.7",
                                 "layers.8\u201311 \u00d72 (2 blocks)"]),
          "period broken by one block: %s" % got)


def test_big_stack(tmp):
    # the 1,000-layer model of the benchmark, 200 layers: alike, and not all alike
    for vary in (0, 3):
        d = draw(tmp, render_models.layered_graph(200, "stack", vary=vary))
        check(5 <= d.boxes_attr <= 160, "layered_graph(200, vary=%d): %d boxes" %
              (vary, d.boxes_attr))
        if vary == 0:
            runs = d.runs()
            check(len(runs) == 1 and runs[0]["texts"][0] == "layers.1\u2013199 \u00d7199",
                  "stack: the run %s" % [b["texts"][:1] for b in runs])
            c = d.cluster("/model/layers.0")
            check(c is not None and "1 of 200" in c["label"],
                  "stack: the first layer open, saying it stands for 200: %r" % c)


def test_summaries(tmp):
    m = chain_model(3, extra_top=True)
    d = draw(tmp, m, "--group=1")
    # /head holds one node: drawn as that node
    check(d.group("/head") is None and any(b["kind"] == "op" and b["title"].startswith("/head/")
                                           for b in d.boxes), "a group of one node is that node")
    d = draw(tmp, m, "--group=2", "--expand=/model/layers.0")
    # layer 1's box stands for layers 1-2: its summary is layer 1's
    r = d.group("/model/layers.1")
    inits = {t.name: int(np.prod(t.dims)) for t in m.graph.initializer}
    want = sum(inits[n] for node in m.graph.node if node.name.startswith("/model/layers.1/")
               for n in node.input if n in inits)
    check(r is not None and "12 nodes \u00b7 %s params each" % fmt_params(want) in r["texts"],
          "summary: nodes and params %r (want %s)" % (r and r["texts"], fmt_params(want)))
    if r:
        key = r["texts"][3] if len(r["texts"]) > 3 else ""
        # MatMul, Softmax, LeakyRelu are named compute ops, and so is the Gemm its 2-D
        # MatMul + bias Add is (a named pattern counts once, as its op); Transpose and the
        # residual Add are the rest
        check(key == "MatMul \u00d76, Softmax \u00d71, Gemm \u00d71, LeakyRelu \u00d71",
              "summary: named compute ops first: %r" % key)
        check(r["texts"][4:5] == ["Transpose \u00d71, Add \u00d71"],
              "summary: then the rest: %r" % r["texts"])
        # then the cost of one repetition and of the run's 2 (docs/cost.md)
        check(len(r["texts"]) == 6 and r["texts"][5].startswith("\u2248 ")
              and " MACs each \u00b7 " in r["texts"][5] and r["texts"][5].endswith(" in all"),
              "summary: MACs per repetition and in all: %r" % r["texts"])


def main():
    with tempfile.TemporaryDirectory(prefix="onnxviz-repeats-") as tmp:
        for t in (test_identical, test_differences, test_open, test_ranges, test_periods,
                  test_big_stack, test_summaries):
            before = len(failures)
            t(tmp)
            print("%-18s %s" % (t.__name__, "ok" if len(failures) == before else "FAILED"))
    print("repeats: %d failure(s)" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
