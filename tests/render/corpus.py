#!/usr/bin/python3
"""corpus.py — every corpus model rendered in every format, and checked (checks.py).

For each model under $ONNXVIZ_CORPUS/models and each of the repository's constructed
models (tests/data/models, tests/data/shape, tests/data/quant):
  - `inspect --json` gives the node ids of the document;
  - SVG, DOT and layout JSON with default options: the SVG is safe, well-formed XML whose
    op boxes are document nodes, `dot -Tcanon` reads the DOT and it has one node per SVG
    box, the layout JSON has the SVG's boxes; no "javascript:" anywhere;
  - the three formats agree: the same boxes, as many DOT edges as layout JSON edges, the
    same dotted "reads" edges, and the same folded rows (text, value, unfold target) in the
    SVG and the layout JSON;
  - SVG (and layout JSON where marked) with option variants: group=none,
    subgraphs=expand, initializers=nodes, rankdir=LR, and the combinations that draw
    every node (group=none + initializers=nodes + arith=nodes + quant=nodes: exactly the
    main graph's nodes are boxes; + subgraphs=expand: the subgraphs' nodes too);
  - full detail with bookkeeping folded (group=none, the default arith=fold; quant=nodes:
    quantized ops are tests/render/quant.py's; patterns=nodes): every main graph node that
    is not bookkeeping (the document's "bookkeeping") is a box, and a bookkeeping node is a
    box only when one of its outputs is a graph output or nothing consumes it;
  - the same with named patterns folded (the default patterns=fold): each match of the
    document's "patterns" is the one box of its last node, marked data-pattern with its
    op, its other nodes are no boxes, and every other node is as above;
  - in every SVG, no text sticks out of its box (rows), its cluster (labels) or the
    drawing (edge labels), measured with DejaVu Sans (textfit.py): what rsvg and browsers
    without Helvetica/Arial draw in.
A model without a main graph must be refused with bad_model.
Two renders run at a time.  Prints counts and time; exits 1 on any problem.
"""
import concurrent.futures
import glob
import json
import os
import re
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no __pycache__ in the tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import checks  # noqa: E402
import textfit  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.path.join(ROOT, os.environ.get("BUILD", "build"), "onnxviz")
CORPUS = os.environ.get("ONNXVIZ_CORPUS", os.path.join(os.path.dirname(ROOT), "shared", "corpus"))
TIMEOUT = 60
# text is measured in DejaVu Sans: what rsvg and browsers without Helvetica/Arial draw in,
# and wider than both
WIDTH = textfit.measurer("dejavu")

# (name, options, formats, what the drawn op boxes must be: None, "main" or "drawable")
VARIANTS = [
    ("default", [], ("svg", "json", "dot"), None),
    ("group=none", ["--group=none", "--quant=nodes", "--patterns=nodes"], ("svg", "json", "dot"),
     "data"),
    ("patterns", ["--group=none", "--quant=nodes"], ("svg", "json"), "patterns"),
    ("subgraphs=expand", ["--subgraphs=expand"], ("svg", "json"), None),
    ("initializers=nodes", ["--initializers=nodes"], ("svg",), None),
    ("rankdir=LR", ["--rankdir=LR"], ("svg", "json"), None),
    ("all main nodes", ["--group=none", "--initializers=nodes", "--arith=nodes", "--quant=nodes",
                        "--patterns=nodes"], ("svg",), "main"),
    ("all nodes", ["--group=none", "--initializers=nodes", "--subgraphs=expand",
                   "--arith=nodes", "--quant=nodes", "--patterns=nodes"], ("svg",), "drawable"),
]


# Under the sanitize suite (ONNXVIZ_SANITIZED=1, an ASan build ~5x slower) the variants
# that only move boxes around are left out: the default formats and the one drawing every
# node cover the code paths.
# Nor, there, LeakSanitizer's scan at each run's exit (half of a run's time on this kind of
# machine): the sweep is for memory errors; every path's leaks are checked by the cli suite
# and this suite's other scripts (hostile.py draws every format) (decision 72).
if os.environ.get("ONNXVIZ_SANITIZED") == "1":
    VARIANTS = [v for v in VARIANTS if v[0] in ("default", "all nodes")]
    os.environ["ASAN_OPTIONS"] = os.environ.get("ASAN_OPTIONS", "") + ":detect_leaks=0"


def render(model, opts, out):
    r = subprocess.run([BIN, "render", model, "-o", out] + opts, capture_output=True,
                       timeout=TIMEOUT)
    if r.returncode != 0:
        return "render %s exited %d: %s" % (" ".join(opts), r.returncode,
                                           r.stderr.decode("utf-8", "replace")[:300])
    return None


def pattern_boxes(doc, data, svg_info, must_draw, may_draw):
    """Problems of a full-detail drawing with named patterns folded."""
    found = []
    marked = dict(re.findall(rb'data-node="([^"]+)"[^>]*data-pattern="([A-Za-z]+)"', data))
    marked = {k.decode(): v.decode() for k, v in marked.items()}
    drawn = set(svg_info["data_nodes"])
    inner, anchors = set(), {}
    for m in doc.get("patterns", {}).get("matches", []):
        if not m["nodes"][0].startswith("n") or "." in m["node"]:
            continue  # in a subgraph
        anchors[m["node"]] = m["op_type"]
        inner |= set(m["nodes"]) - {m["node"]}
    if marked != anchors:
        found.append("pattern boxes %s, expected %s" % (sorted(marked.items())[:3],
                                                        sorted(anchors.items())[:3]))
    if drawn & inner:
        found.append("%d nodes inside patterns are boxes: %s" % (len(drawn & inner),
                                                              sorted(drawn & inner)[:5]))
    missing = sorted(must_draw - inner - drawn)
    if missing:
        found.append("%d data-dependent nodes are not boxes: %s" % (len(missing), missing[:5]))
    extra = sorted(drawn - must_draw - may_draw)
    if extra:
        found.append("%d bookkeeping nodes are boxes though they fold: %s" % (len(extra), extra[:5]))
    return found


def check_model(model, tmp):
    """Problems of one model (list of strings), the number of renders done, and the text
    elements measured and sticking out of their boxes ([measured, out])."""
    r = subprocess.run([BIN, "inspect", "--json", model], capture_output=True, timeout=TIMEOUT)
    if r.returncode != 0:
        return ["inspect --json exited %d" % r.returncode], 0, [0, 0]
    doc = json.loads(r.stdout.decode("utf-8"))
    if not any(s["kind"] == "main" for s in doc["scopes"]):
        r = subprocess.run([BIN, "render", model, "-o", os.path.join(tmp, "none.svg")],
                           capture_output=True, timeout=TIMEOUT)
        ok = r.returncode == 1 and b"bad_model" in r.stderr
        return ([] if ok else ["no main graph: render exited %d: %s" %
                               (r.returncode, r.stderr[:200])]), 1, [0, 0]
    ids = {n["id"] for n in doc["nodes"]}
    scope_kind = {s["id"]: s["kind"] for s in doc["scopes"]}
    main_nodes = sorted(n["id"] for n in doc["nodes"] if n["scope"] == "")
    graph_outputs = {o["value"] for o in doc["scopes"][0]["outputs"] if o["value"] is not None}
    # main-graph nodes full detail must draw: all but bookkeeping that folds away
    must_draw, may_draw = set(), set()
    for n in doc["nodes"]:
        if n["scope"] != "":
            continue
        outs = [o["value"] for o in n["outputs"] if o is not None and o["value"] is not None]
        stays = any(v in graph_outputs for v in outs) or \
            not any(doc["values"][v]["consumers"] for v in outs)
        if not n.get("bookkeeping"):
            must_draw.add(n["id"])
        elif stays:
            may_draw.add(n["id"])
    drawable = sorted(n["id"] for n in doc["nodes"]
                      if scope_kind[n["scope"]] in ("main", "subgraph"))
    problems, renders, texts = [], 0, [0, 0]
    base = os.path.join(tmp, os.path.basename(os.path.dirname(model)) + "_" +
                        os.path.basename(model))
    for name, opts, formats, expect in VARIANTS:
        svg_info = lay = None
        for fmt in formats:
            out = "%s.%s.%s" % (base, name.replace(" ", "_"), fmt)
            err = render(model, opts, out)
            renders += 1
            if err:
                problems.append("%s: %s" % (name, err))
                continue
            with open(out, "rb") as f:
                data = f.read()
            if fmt == "svg":
                found, svg_info = checks.check_svg(data, ids)
                if b"javascript:" in data.lower():
                    found.append("javascript: in the SVG")
                if svg_info["boxes"]:  # parsed
                    over = textfit.svg_overflows(data, WIDTH)
                    texts[0] += len(svg_info["texts"])
                    texts[1] += len(over)
                    found += over
                if expect == "data":
                    drawn = set(svg_info["data_nodes"])
                    missing = sorted(must_draw - drawn)
                    extra = sorted(drawn - must_draw - may_draw)
                    if missing:
                        found.append("%d data-dependent nodes are not boxes: %s" %
                                     (len(missing), missing[:5]))
                    if extra:
                        found.append("%d bookkeeping nodes are boxes though they fold: %s" %
                                     (len(extra), extra[:5]))
                elif expect == "patterns":
                    found += pattern_boxes(doc, data, svg_info, must_draw, may_draw)
                elif expect is not None:
                    want = main_nodes if expect == "main" else drawable
                    if sorted(svg_info["data_nodes"]) != want:
                        found.append("op boxes %d, expected the %d %s nodes" %
                                     (len(svg_info["data_nodes"]), len(want), expect))
            elif fmt == "dot":
                found = checks.check_dot(out, len(svg_info["boxes"]) if svg_info else None,
                                         edges=len(lay["edges"]) if lay else None)
            else:
                found, lay = checks.check_layout(data, svg_info)
                if lay is not None and lay.get("rankdir") != ("LR" if "--rankdir=LR" in opts
                                                              else "TB"):
                    found.append("layout JSON rankdir %r" % lay.get("rankdir"))
            problems += ["%s %s: %s" % (name, fmt, p) for p in found]
            os.unlink(out)
    return problems, renders, texts


def main():
    start = time.time()
    models = sorted(glob.glob(os.path.join(CORPUS, "models", "**", "*.onnx"), recursive=True))
    if not models:
        print("render corpus: no models under %s/models" % CORPUS)
        return 1
    ncorpus = len(models)
    for sub in ("models", "shape", "quant"):
        models += sorted(glob.glob(os.path.join(ROOT, "tests", "data", sub, "*.onnx")))
    if WIDTH is None:
        print("render corpus: python3-pil or fonts-dejavu-core missing (make deps)")
        return 1
    failed, renders, texts, out = [], 0, 0, 0
    with tempfile.TemporaryDirectory(prefix="onnxviz-render-") as tmp, \
            concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        jobs = {pool.submit(check_model, m, tmp): m for m in models}
        for job in concurrent.futures.as_completed(jobs):
            rel = os.path.relpath(jobs[job], CORPUS if jobs[job].startswith(CORPUS) else ROOT)
            try:
                problems, n, nt = job.result()
            except subprocess.TimeoutExpired as e:
                problems, n, nt = ["timed out: %s" % e], 0, [0, 0]
            renders += n
            texts += nt[0]
            out += nt[1]
            if problems:
                failed.append((rel, problems))
    for rel, problems in sorted(failed):
        print("FAIL %s: %d problem(s)" % (rel, len(problems)))
        for p in problems[:8]:
            print("   ", p)
    print("render corpus: %d models (%d constructed), %d renders (%d variants), %d failed, "
          "%.1f s; text in DejaVu Sans: %d of %d lines stick out" %
          (len(models), len(models) - ncorpus, renders, len(VARIANTS), len(failed),
           time.time() - start, out, texts))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
