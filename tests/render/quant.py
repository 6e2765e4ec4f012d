#!/usr/bin/python3
"""quant.py — drawings of quantized models (docs/quant.md, docs/render.md).

A float torchvision resnet18 (random weights, exported once and cached) is quantized by
hand (tests/data/quant_models.py) into static QDQ and dynamic (ConvInteger) models; a small
QOperator model and a small convnet join them.  Checked, on full-detail drawings
(group=none, layout JSON and SVG):
  - the QDQ and the dynamic drawing have at most 10% more boxes than the float one;
    quant=nodes (with arith=nodes) draws every node again (the file as it is);
  - every quantized op is one box of its float op ("Conv" for QLinearConv and ConvInteger)
    with a precision badge (row style "badge", SVG data-quant) and scale/zero-point rows;
    as many badges as the summary has quantized ops;
  - edges between quantized ops carry the quantized element type (u8);
  - the overview (group=auto) and initializers=nodes draw too;
  - no text (badges, scale/zero-point rows) sticks out of its box in DejaVu Sans
    (textfit.py), in every drawing above.
The drawings are also written as PNG (rsvg-convert) under $BUILD/quant-png for a look.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "data"))
sys.path.insert(0, os.path.join(ROOT, "tests", "render"))
import quant_models as QM  # noqa: E402
import textfit  # noqa: E402

# the badges and scale/zero-point rows stay inside their boxes in DejaVu Sans (textfit.py)
WIDTH = textfit.measurer("dejavu")

BUILD = os.environ.get("BUILD", "build")
BIN = os.path.join(ROOT, BUILD, "onnxviz")
PNG = os.path.join(ROOT, BUILD, "quant-png")
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


def render(model, out, *opts):
    r = subprocess.run([BIN, "render", model, "-o", out] + list(opts), capture_output=True,
                       timeout=120)
    if not check(r.returncode == 0, "render %s %s: %s" % (os.path.basename(model), opts,
                                                          r.stderr.decode()[:300])):
        return None
    if out.endswith(".json"):
        with open(out) as f:
            return json.load(f)
    with open(out, "rb") as f:
        return f.read().decode("utf-8")


def summary(model):
    r = subprocess.run([BIN, "inspect", "--json", model], capture_output=True, timeout=120)
    return json.loads(r.stdout)["summary"]["quantization"]


def png(svg_path, name):
    if shutil.which("rsvg-convert") is None:
        return
    os.makedirs(PNG, exist_ok=True)
    subprocess.run(["rsvg-convert", "-z", "1", svg_path, "-o", os.path.join(PNG, name + ".png")],
                   capture_output=True, timeout=120)


def rows(box, style):
    return [r["text"] for r in box["rows"] if r["style"] == style]


def main():
    t0 = time.time()
    tmp = tempfile.mkdtemp(prefix="onnxviz-quant-")
    cache = os.environ.get("ONNXVIZ_QUANT_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "onnxviz-quant")
    os.makedirs(cache, exist_ok=True)
    fm = QM.torchvision_float("resnet18", os.path.join(cache, "resnet18_op13.onnx"))
    models = {"resnet18_float": fm, "resnet18_qdq": QM.qdq(fm), "resnet18_dynamic": QM.dynamic(fm),
              "qoperator": QM.qoperator(), "small_float": QM.small_float()}
    models["small_qdq"] = QM.qdq(models["small_float"])
    models["small_dynamic"] = QM.dynamic(models["small_float"])
    models["mlp_float"] = QM.small_mlp()
    models["mlp_qdq"] = QM.qdq(models["mlp_float"])
    models["mlp_dynamic"] = QM.dynamic(models["mlp_float"])
    paths = {}
    for k, m in models.items():
        paths[k] = os.path.join(tmp, k + ".onnx")
        QM.onnx.save(m, paths[k])

    boxes = {}
    for k, p in paths.items():
        # named patterns drawn as nodes: the float MLP's MatMul+Add would be one Gemm box,
        # which its quantized versions (a quantized MatMul, then the float Add) cannot be
        lay = render(p, os.path.join(tmp, k + ".json"), "--group=none", "--patterns=nodes")
        svg_path = os.path.join(tmp, k + ".svg")
        svg = render(p, svg_path, "--group=none", "--patterns=nodes")
        if lay is None or svg is None:
            continue
        png(svg_path, k)
        over = textfit.svg_overflows(svg.encode("utf-8"), WIDTH) if WIDTH else ["no DejaVu Sans"]
        check(not over, "%s: no text outside its box: %s" % (k, over[:3]))
        boxes[k] = len(lay["nodes"])
        nodes = len(models[k].graph.node)
        q = summary(p)
        badged = [b for b in lay["nodes"] if rows(b, "badge")]
        check(len(badged) == q["ops"]["quantized"],
              "%s: %d badges for %d quantized ops" % (k, len(badged), q["ops"]["quantized"]))
        check(svg.count("data-quant=") == len(badged), "%s: data-quant on every badged box" % k)
        if k.endswith("_float"):
            check(not badged and not q["formats"], "%s: a float model has no badge" % k)
            continue
        for b in badged:
            header = rows(b, "header")[0]
            check(not header.startswith(("QLinear", "Quantize", "Dequantize", "Dynamic", "ConvInteger",
                                        "MatMulInteger")),
                  "%s: box %s shows the float op, not %s" % (k, b["id"], header))
        # quant=nodes with arith=nodes: every node a box (with arith=fold, the default, the
        # weights' DequantizeLinear fold as bookkeeping rows)
        lay_nodes = render(p, os.path.join(tmp, k + "_nodes.json"), "--group=none", "--quant=nodes",
                           "--arith=nodes")
        if lay_nodes is not None:
            ops = [b for b in lay_nodes["nodes"] if b["kind"] == "op"]
            consts = sum(1 for n in models[k].graph.node if n.op_type == "Constant")
            check(len(ops) == nodes - consts and not any(rows(b, "badge") for b in lay_nodes["nodes"]),
                  "%s quant=nodes arith=nodes: every node a box (%d of %d), no badge" % (k, len(ops), nodes))
            boxes[k + " quant=nodes arith=nodes"] = len(lay_nodes["nodes"])
        lay_nodes = render(p, os.path.join(tmp, k + "_nodes.json"), "--group=none", "--quant=nodes")
        if lay_nodes is not None:
            boxes[k + " quant=nodes"] = len(lay_nodes["nodes"])
        for opts in (("--group=auto",), ("--group=none", "--initializers=nodes"),
                     ("--group=none", "--rankdir=LR", "--attrs=all")):
            v = render(p, os.path.join(tmp, k + "_v.svg"), *opts)
            over = textfit.svg_overflows(v.encode("utf-8"), WIDTH) if WIDTH and v else []
            check(not over, "%s %s: no text outside its box: %s" % (k, opts, over[:3]))

    for base in ("resnet18", "small", "mlp"):
        f = boxes.get(base + "_float")
        for kind in ("qdq", "dynamic"):
            b = boxes.get("%s_%s" % (base, kind))
            if f and b:
                check(b <= 1.10 * f, "%s %s: %d boxes, float %d (at most +10%%)" % (base, kind, b, f))
    print("  full-detail boxes: " + ", ".join("%s %d" % kv for kv in sorted(boxes.items())))

    # what the QDQ resnet's boxes say
    lay = json.load(open(os.path.join(tmp, "resnet18_qdq.json")))
    convs = [b for b in lay["nodes"] if b["kind"] == "op" and rows(b, "header") == ["Conv"]]
    check(len(convs) == 20, "resnet18 qdq: 20 Conv boxes (%d)" % len(convs))
    check(all(rows(b, "badge") == ["int8 w \u00b7 u8 act \u00b7 per-channel"] for b in convs),
          "resnet18 qdq: Conv badge 'int8 w · u8 act · per-channel': %r" % rows(convs[0], "badge"))
    want = re.compile(r"^W \u27e8\d+(\u00d7\d+)+\u27e9 i8 \u00b7 s\u27e8\d+\u27e9 \u00b7 zp\u27e8\d+\u27e9$")
    check(all(any(want.match(t) for t in rows(b, "tensor")) for b in convs),
          "resnet18 qdq: every Conv has its weight row with scale and zero point: %r" % rows(convs[0], "tensor"))
    # an edge's shape label is written once per value leaving a box
    labels = [e["label"] for e in lay["edges"] if e.get("label")]
    other = [t for t in labels if not t.startswith("u8 ")]
    check(len(labels) > 40 and len(other) <= 2,
          "resnet18 qdq: edges between quantized ops carry u8, only the graph's input and output "
          "float: %r of %d labels" % (other, len(labels)))
    lay = json.load(open(os.path.join(tmp, "resnet18_dynamic.json")))
    convs = [b for b in lay["nodes"] if b["kind"] == "op" and rows(b, "header") == ["Conv"]]
    check(len(convs) == 20 and all(rows(b, "badge") == ["int8 w \u00b7 dyn u8 act \u00b7 per-tensor"] for b in convs),
          "resnet18 dynamic: 20 Conv boxes with 'int8 w · dyn u8 act · per-tensor': %r" %
          (rows(convs[0], "badge") if convs else None))
    check(all(any(t.startswith("B \u27e8") for t in rows(b, "tensor")) for b in convs),
          "resnet18 dynamic: the bias of the chain's Add is a row of the Conv")
    lay = json.load(open(os.path.join(tmp, "mlp_dynamic.json")))
    mms = [b for b in lay["nodes"] if rows(b, "header") == ["MatMul"]]
    check(len(mms) == 2 and all(rows(b, "badge") == ["int8 w \u00b7 dyn u8 act \u00b7 per-tensor"] for b in mms),
          "mlp dynamic: MatMulInteger chains are MatMul boxes %r" % [rows(b, "badge") for b in mms])
    lay = json.load(open(os.path.join(tmp, "qoperator.json")))
    heads = sorted(rows(b, "header")[0] for b in lay["nodes"] if rows(b, "badge"))
    check(heads == ["Add", "Conv", "GlobalAveragePool", "MatMul"], "qoperator: float ops %r" % heads)

    shutil.rmtree(tmp)
    print("quant drawings: %d checks, %d failed, %.1f s (PNG in %s)" % (passed + len(failures),
                                                                        len(failures), time.time() - t0, PNG))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
