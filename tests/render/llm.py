#!/usr/bin/python3
"""llm.py — LLMs with a KV cache drawn readably (issue 24; render/family.c, docs/render.md).

The models are built by tests/data/llm_models.py: a 32-layer decoder laid out as
onnxruntime-genai exports it (GroupQueryAttention, MatMulNBits, SkipSimplifiedLayerNorm,
past_key_values.N.key/value in, present.N.key/value out), and Optimum's plain and
MultiHeadAttention exports.  Checked:
  - the genai overview has at most 20 boxes and is at most 2,500 px wide; the cache is one
    terminal per family, "past_key_values.0–31.{key,value} ×64" with data-values naming
    the 64 inputs (by their names in the JSON document), wired once to each box it feeds;
  - opening layers.5 splits the families: "past_key_values.0–4,6–31.{key,value} ×62" and
    layer 5's inputs become rows of its GroupQueryAttention;
  - full detail (group=none): no rank (boxes at one height) wider than 3,000 px, no cache
    terminal left: every GroupQueryAttention box has the rows "past_key =
    past_key_values.N.key" ... "present_value → present.N.value" with their data-value;
  - io=nodes draws the 128 cache terminals as in the file;
  - the Optimum models' overviews stay at most 20 boxes, their full detail folds the cache;
  - no text sticks out of its box in DejaVu Sans (textfit.py), in every drawing.
PNGs of the drawings go to $BUILD/llm-png for a look.  Exits 1 on any failure.
"""
import collections
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

sys.dont_write_bytecode = True
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "data"))
sys.path.insert(0, os.path.join(ROOT, "tests", "render"))
import llm_models  # noqa: E402
import onnx  # noqa: E402
import textfit  # noqa: E402

WIDTH = textfit.measurer("dejavu")
BUILD = os.environ.get("BUILD", "build")
BIN = os.path.join(ROOT, BUILD, "onnxviz")
PNG = os.path.join(ROOT, BUILD, "llm-png")
NS = "{http://www.w3.org/2000/svg}"
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL", what)


def render(path, out, *opts):
    r = subprocess.run([BIN, "render", path, "-o", out] + list(opts), capture_output=True,
                       timeout=300)
    if r.returncode != 0:
        raise RuntimeError("render %s %s: %s" % (path, opts, r.stderr.decode(errors="replace")))
    with open(out, "rb") as f:
        return f.read()


def draw(tmp, path, name, *opts):
    """(SVG root, layout JSON) of one view; the SVG is checked for overflowing text."""
    svg = render(path, os.path.join(tmp, name + ".svg"), *opts)
    lay = json.loads(render(path, os.path.join(tmp, name + ".json"), *opts))
    over = textfit.svg_overflows(svg, WIDTH) if WIDTH else ["no DejaVu Sans to measure with"]
    check(not over, "%s: text sticks out: %s" % (name, over[:3]))
    if shutil.which("rsvg-convert"):
        os.makedirs(PNG, exist_ok=True)
        subprocess.run(["rsvg-convert", "-o", os.path.join(PNG, name + ".png"),
                        os.path.join(tmp, name + ".svg")], capture_output=True, timeout=300)
    return ET.fromstring(svg), lay


def value_names(path):
    doc = json.loads(subprocess.run([BIN, "inspect", "--json", path], check=True,
                                    capture_output=True, timeout=300).stdout)
    return {i: v["name"] for i, v in enumerate(doc["values"])}  # data-value: the index


def terminals(lay):
    return [b for b in lay["nodes"] if b["kind"] in ("input", "output")]


def widest_rank(lay):
    rows = collections.defaultdict(list)
    for b in lay["nodes"]:
        rows[round(b["y"])].append(b)
    return max(max(b["x"] + b["w"] / 2 for b in r) - min(b["x"] - b["w"] / 2 for b in r)
               for r in rows.values())


def text(b):
    return [r["text"] for r in b["rows"]]


def test_genai(tmp):
    path = os.path.join(tmp, "genai.onnx")
    onnx.save(llm_models.genai(32), path)
    names = value_names(path)
    svg, lay = draw(tmp, path, "genai-overview")
    n = len(lay["nodes"])
    print("genai overview: %d boxes, %.0f x %.0f px" % (n, lay["width"], lay["height"]))
    check(n <= 20, "genai overview: %d boxes (at most 20)" % n)
    check(lay["width"] <= 2500, "genai overview: %.0f px wide (at most 2,500)" % lay["width"])
    fams = {text(b)[0]: b for b in terminals(lay) if b.get("values")}
    want_in = "past_key_values.0\u201331.{key,value} \u00d764"
    want_out = "present.0\u201331.{key,value} \u00d764"
    check(set(fams) == {want_in, want_out}, "genai overview: the families %s" % sorted(fams))
    for label, prefix in ((want_in, "past_key_values"), (want_out, "present")):
        b = fams.get(label)
        if b is None:
            continue
        got = sorted(names.get(v, "?") for v in b["values"])
        want = sorted("%s.%d.%s" % (prefix, i, kv) for i in range(32) for kv in ("key", "value"))
        check(got == want, "%s: data-values are its 64 members: %s" % (label, got[:4]))
        ends = [(e["from"], e["to"]) for e in lay["edges"] if b["id"] in (e["from"], e["to"])]
        check(len(ends) == len(set(ends)) and 1 <= len(ends) <= 3,
              "%s: wired once to each box: %s" % (label, ends))
    g = svg.find(".//%sg[@data-values]" % NS)
    check(g is not None and len(g.get("data-values").split()) == 64,
          "genai overview: the SVG's data-values")
    # the run of layers is there, and is what the page lands on after the inputs
    runs = [b for b in lay["nodes"] if b.get("open_all")]
    check(any(text(b)[0].startswith("layers.1\u201331 \u00d731") for b in runs),
          "genai overview: the stack layers.1–31 ×31: %s" % [text(b)[0] for b in runs])
    # opening one layer splits the families the same way
    _, lay5 = draw(tmp, path, "genai-layers5", "--expand=/model/layers.5")
    labels = sorted(text(b)[0] for b in terminals(lay5) if b.get("values"))
    check(labels == ["past_key_values.0\u20134,6\u201331.{key,value} \u00d762",
                     "present.0\u20134,6\u201331.{key,value} \u00d762"],
          "layers.5 open: families split: %s" % labels)
    gqa5 = [b for b in lay5["nodes"] if b["kind"] == "op" and "layers.5/" in "".join(text(b))
            and "GroupQueryAttention" in text(b)[0]]
    check(len(gqa5) == 1 and "past_key = past_key_values.5.key" in text(gqa5[0]),
          "layers.5 open: its cache inputs are rows: %s" % [text(b) for b in gqa5])
    # full detail: narrow ranks, the cache folded into the attention boxes
    _, full = draw(tmp, path, "genai-full", "--group=none")
    w = widest_rank(full)
    print("genai full detail: %d boxes, %.0f x %.0f px, widest rank %.0f px" %
          (len(full["nodes"]), full["width"], full["height"], w))
    check(w <= 3000, "genai full detail: a rank %.0f px wide (at most 3,000)" % w)
    cache = [b for b in terminals(full) if re.match(r"(past_key_values|present)\.", text(b)[0])]
    check(not cache, "genai full detail: cache terminals left: %s" % [text(b)[0] for b in cache[:4]])
    gqa = [b for b in full["nodes"] if b["kind"] == "op" and "GroupQueryAttention" in text(b)[0]]
    check(len(gqa) == 32, "genai full detail: 32 attention boxes (%d)" % len(gqa))
    for i, b in enumerate(sorted(gqa, key=lambda b: b["y"])):
        rows = {r["text"]: r.get("value") for r in b["rows"]}
        want = {"past_key = past_key_values.%d.key" % i: "past_key_values.%d.key" % i,
                "past_value = past_key_values.%d.value" % i: "past_key_values.%d.value" % i,
                "present_key \u2192 present.%d.key" % i: "present.%d.key" % i,
                "present_value \u2192 present.%d.value" % i: "present.%d.value" % i}
        got = {t: names.get(rows[t]) for t in want if t in rows}
        check(got == want, "layer %d: cache rows with their values: %s" % (i, text(b)))
    # io=nodes: as in the file
    _, nodes = draw(tmp, path, "genai-io-nodes", "--io=nodes")
    check(len(terminals(nodes)) == 2 + 64 + 1 + 64,
          "io=nodes: every input and output a terminal (%d)" % len(terminals(nodes)))


def test_optimum(tmp):
    for kind in ("optimum", "optimum-mha"):
        path = os.path.join(tmp, kind + ".onnx")
        onnx.save(llm_models.KINDS[kind](32), path)
        _, lay = draw(tmp, path, kind + "-overview")
        print("%s overview: %d boxes, %.0f x %.0f px" % (kind, len(lay["nodes"]), lay["width"],
                                                         lay["height"]))
        check(len(lay["nodes"]) <= 20, "%s overview: %d boxes" % (kind, len(lay["nodes"])))
        _, full = draw(tmp, path, kind + "-full", "--group=none")
        cache = [b for b in terminals(full) if re.match(r"(past_key_values|present)\.",
                                                        text(b)[0])]
        check(not cache, "%s full detail: cache terminals left: %s" %
              (kind, [text(b)[0] for b in cache[:4]]))
        w = widest_rank(full)
        print("%s full detail: %d boxes, widest rank %.0f px" % (kind, len(full["nodes"]), w))
        check(w <= 3000, "%s full detail: a rank %.0f px wide" % (kind, w))


def main():
    with tempfile.TemporaryDirectory(prefix="onnxviz-llm-") as tmp:
        for t in (test_genai, test_optimum):
            before = len(failures)
            t(tmp)
            print("%-18s %s" % (t.__name__, "ok" if len(failures) == before else "FAILED"))
    print("llm: %d failure(s)" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
