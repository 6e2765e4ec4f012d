#!/usr/bin/python3
"""hide.py — hide=<op types> (render/hide.c, docs/render.md "Hiding op types").

Checked on a small model made here (x -> Relu A -> Identity I1 -> Identity I2 -> Sigmoid B
and Tanh C; x -> Cast K -> Add D with B; C -> Identity E, a graph output) and on the
corpus's transformer_12x12 in full detail:
  - the hidden op types' boxes are gone, the others stay; the count the drawing gives
    (layout JSON "hidden", SVG data-hidden and its note, DOT's comment) is the number of
    nodes taken away;
  - edges are bridged: A -> B and A -> C through I1 and I2, x -> D through K; a node
    producing a graph output (E) stays; the drawing stays one connected piece (as many
    weakly connected parts as without hide=);
  - the list is kept sorted without repeats (one drawing for any order), and junk is
    refused: other characters, empty names, more than 32 names.
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import time

from onnx import TensorProto, helper, save

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import checks  # noqa: E402  (what every rendering must satisfy)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("BUILD", "build")
BIN = os.path.join(ROOT, BUILD, "onnxviz")
CORPUS = os.environ.get("ONNXVIZ_CORPUS") or os.path.join(os.path.dirname(ROOT), "shared", "corpus")
TRANSFORMER = os.path.join(CORPUS, "models", "real", "transformer_12x12.onnx")

failures = []
passed = 0


def check(cond, what):
    global passed
    if cond:
        passed += 1
    else:
        failures.append(what)
        print("FAIL:", what, flush=True)
    return cond


def run(model, out, *opts):
    return subprocess.run([BIN, "render", model, "-o", out] + list(opts), capture_output=True,
                          timeout=300)


def render(model, out, *opts):
    r = run(model, out, *opts)
    if not check(r.returncode == 0, "render %s %s: %s" % (os.path.basename(model), opts,
                                                          r.stderr.decode()[:300])):
        return None
    with open(out, encoding="utf-8") as f:
        return json.load(f) if out.endswith(".json") else f.read()


def small_model(path):
    N = helper.make_node
    fl = TensorProto.FLOAT
    nodes = [N("Relu", ["x"], ["a"], name="A"), N("Identity", ["a"], ["i1"], name="I1"),
             N("Identity", ["i1"], ["i2"], name="I2"), N("Sigmoid", ["i2"], ["b"], name="B"),
             N("Tanh", ["i2"], ["c"], name="C"), N("Cast", ["x"], ["k"], name="K", to=1),
             N("Add", ["b", "k"], ["d"], name="D"), N("Identity", ["c"], ["e"], name="E")]
    g = helper.make_graph(nodes, "hide", [helper.make_tensor_value_info("x", fl, [1, 8])],
                          [helper.make_tensor_value_info("d", fl, [1, 8]),
                           helper.make_tensor_value_info("e", fl, [1, 8])])
    save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), path)


def parts(lay):
    """Weakly connected parts of a layout (boxes joined by any edge)."""
    up = {n["id"]: n["id"] for n in lay["nodes"]}

    def find(a):
        while up[a] != a:
            up[a] = up[up[a]]
            a = up[a]
        return a
    for e in lay["edges"]:
        if e["from"] in up and e["to"] in up:
            up[find(e["from"])] = find(e["to"])
    return len({find(a) for a in up})


def edges_by_title(lay):
    title = {n["id"]: n.get("title") for n in lay["nodes"]}
    return {(title[e["from"]], title[e["to"]]) for e in lay["edges"]}


def main():
    t0 = time.time()
    tmp = tempfile.mkdtemp(prefix="onnxviz-hide-")
    small = os.path.join(tmp, "small.onnx")
    small_model(small)
    out = os.path.join(tmp, "out")
    plain = render(small, out + ".json", "--group=none")
    hid = render(small, out + ".json", "--group=none", "--hide=Identity,Cast")
    if plain is not None and hid is not None:
        before = {n.get("title") for n in plain["nodes"] if n["kind"] == "op"}
        after = {n.get("title") for n in hid["nodes"] if n["kind"] == "op"}
        check(before == {"A", "I1", "I2", "B", "C", "K", "D", "E"}, "all drawn without hide=: %r" % before)
        check(after == {"A", "B", "C", "D", "E"}, "Identity and Cast hidden, E (a graph output) kept: %r" % after)
        hidden = dict(hid.get("hidden") or {})
        hidden.pop("note_at", None)  # checked against the SVG below
        check(hidden == {"ops": "Cast,Identity", "nodes": 3} and "hidden" not in plain,
              "the layout says how many were hidden: %r" % hid.get("hidden"))
        e = edges_by_title(hid)
        check({("A", "B"), ("A", "C"), ("x", "D"), ("B", "D"), ("C", "E")} <= e,
              "edges bridged through the hidden nodes: %r" % sorted(e))
        check(not any(t in ("I1", "I2", "K") for p in e for t in p), "no edge to a hidden node: %r" % e)
        check(parts(plain) == parts(hid) == 1, "one connected drawing: %d, %d" % (parts(plain), parts(hid)))
    svg = render(small, out + ".svg", "--group=none", "--hide=Identity,Cast")
    if svg is not None:
        # the layout JSON has the SVG's room for its note, and where the note is (a canvas
        # drawing of the layout draws it there: web/canvas.js)
        size = re.search(r'<svg [^>]*width="([0-9.]+)" height="([0-9.]+)"', svg)
        at = re.search(r'<text id="hidden-note"[^>]* x="([0-9.]+)" y="([0-9.]+)"', svg)
        note_at = ((hid or {}).get("hidden") or {}).get("note_at")
        check(hid is not None and size and at and
              (hid["width"], hid["height"]) == (float(size.group(1)), float(size.group(2))) and
              note_at == [float(at.group(1)), float(at.group(2))],
              "the layout JSON's size and note_at are the SVG's: %r %r, %r %r" %
              (hid and (hid["width"], hid["height"]), size and size.groups(), note_at, at and at.groups()))
        check('data-hidden="3"' in svg and
              re.search(r'<text id="hidden-note"[^>]*>3 nodes hidden \(hide=Cast,Identity\)</text>', svg),
              "the SVG says how many were hidden")
        probs = checks.check_svg(svg.encode("utf-8"))[0]
        check(not probs, "the SVG with hide= passes the rendering checks: %r" % (probs[:3],))
    dot = render(small, out + ".dot", "--group=none", "--hide=Identity,Cast")
    if dot is not None:
        check("// 3 nodes hidden (hide=Cast,Identity)" in dot and '"I1"' not in dot,
              "the DOT says how many were hidden: %r" % dot[-80:])
    # one list whatever its order and repeats: the same drawing (and cache key)
    same = render(small, out + ".json", "--group=none", "--hide=Cast,Identity,Cast")
    check(same == hid, "hide=Cast,Identity,Cast draws as hide=Identity,Cast")
    for bad in ("Identity,,Cast", ",", "Iden-tity", "a" * 65, ",".join("Op%d" % i for i in range(33)),
                "Identity;Cast", "Identity Cast"):
        r = run(small, out + ".json", "--group=none", "--hide=" + bad)
        check(r.returncode != 0 and b"hide" in r.stderr, "hide=%s refused: %r" % (bad[:40], r.stderr[:200]))
    check(run(small, out + ".json", "--hide=" + ",".join("Op%d" % i for i in range(32))).returncode == 0,
          "32 names are accepted")
    # a real model in full detail: the hidden op types' boxes go, the count says how many
    if os.path.exists(TRANSFORMER):
        ops = ("Transpose", "Reshape", "Softmax")
        full = render(TRANSFORMER, out + ".json", "--group=none")
        cut = render(TRANSFORMER, out + ".json", "--group=none", "--hide=" + ",".join(ops))
        if full is not None and cut is not None:
            def op_of(n):
                hs = [r["text"] for r in n.get("rows", []) if r.get("style") == "header"]
                return hs[0] if hs else None
            gone = sum(1 for n in full["nodes"] if n["kind"] == "op" and op_of(n) in ops)
            left = sum(1 for n in cut["nodes"] if n["kind"] == "op" and op_of(n) in ops)
            check(gone > 100 and left == 0 and cut["hidden"]["nodes"] == gone,
                  "transformer: %d boxes of %s before, %d after, %r hidden" % (gone, ops, left, cut["hidden"]))
            check(parts(cut) == parts(full), "transformer: %d parts, %d with hide=" % (parts(full), parts(cut)))
            print("  transformer_12x12 full detail: %d boxes, %d edges; hide=%s: %d boxes, %d edges (%d hidden)"
                  % (len(full["nodes"]), len(full["edges"]), ",".join(ops), len(cut["nodes"]),
                     len(cut["edges"]), cut["hidden"]["nodes"]))
    else:
        print("SKIP transformer: %s missing" % TRANSFORMER)
    print("hide: %d checks, %d failed, %.1f s" % (passed + len(failures), len(failures), time.time() - t0))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
