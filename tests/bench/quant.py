#!/usr/bin/python3
"""quant.py — figures for quantized models (docs/quant.md, docs/bench.md), run by
tests/bench/quant.sh.

  * a torchvision resnet18 (random weights, exported once and cached) against the QDQ and
    dynamic models tests/data/quant_models.py makes of it: full-detail boxes (the issue's
    bar: at most 10% more than the float model) and the CLI's full-detail SVG time (median
    of RUNS), with quant=fold (the default) and quant=nodes;
  * dequantized statistics over HTTP of a 4096 x 4096 4-bit MatMulNBits weight (16.8M
    values, block 32, packed zero points): the first request (both passes over the data)
    and the next one (kept in the store), against the raw statistics of the same packed
    bytes (UINT8, 8.4M values) in the same run.
Only the box bar is a target (printed MISSED when missed); times are shown.  Environment:
BUILD, RUNS (default 3), ONNXVIZ_QUANT_CACHE (default ~/.cache/onnxviz-quant).
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "data"))
sys.path.insert(0, os.path.join(ROOT, "tests", "http"))
import numpy as np  # noqa: E402
import http_test as H  # noqa: E402
import quant_models as QM  # noqa: E402

RUNS = int(os.environ.get("RUNS", "3"))
missed = 0


def render(path, out, *opts):
    t0 = time.perf_counter()
    subprocess.run([H.BIN, "render", path, "-o", out] + list(opts), check=True,
                   stdout=subprocess.DEVNULL)
    return time.perf_counter() - t0


def drawings(tmp):
    global missed
    cache = os.environ.get("ONNXVIZ_QUANT_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "onnxviz-quant")
    os.makedirs(cache, exist_ok=True)
    fm = QM.torchvision_float("resnet18", os.path.join(cache, "resnet18_op13.onnx"))
    models = {"float": fm, "qdq": QM.qdq(fm), "dynamic": QM.dynamic(fm)}
    boxes = {}
    print("resnet18, full detail (group=none), SVG time median of %d" % RUNS)
    print("  %-8s %6s  %-22s %-22s" % ("model", "nodes", "quant=fold", "quant=nodes"))
    for k, m in models.items():
        p = os.path.join(tmp, k + ".onnx")
        QM.onnx.save(m, p)
        cells = []
        for q in ("fold", "nodes"):
            lay = os.path.join(tmp, k + ".json")
            render(p, lay, "--group=none", "--quant=" + q)
            n = len(json.load(open(lay))["nodes"])
            t = statistics.median(render(p, os.path.join(tmp, k + ".svg"), "--group=none",
                                         "--quant=" + q) for _ in range(RUNS))
            boxes[k, q] = n
            cells.append("%4d boxes %6.3f s" % (n, t))
        print("  %-8s %6d  %-22s %-22s" % (k, len(m.graph.node), *cells))
    f = boxes["float", "fold"]
    for k in ("qdq", "dynamic"):
        r = boxes[k, "fold"] / f
        ok = r <= 1.10
        missed += not ok
        print("  %s/float boxes: %d/%d = %.2f (target <= 1.10) %s" % (k, boxes[k, "fold"], f, r,
                                                                    "ok" if ok else "MISSED"))


def timed(s, url):
    t0 = time.perf_counter()
    r = H.curl(s.url(url), timeout=600)
    t = time.perf_counter() - t0
    if r.status != 200:
        raise RuntimeError("%s: %d %r" % (url, r.status, r.body[:200]))
    return t, json.loads(r.body)


def dequantized(tmp):
    N = K = 4096
    m, _, _, _, B = QM.big_nbits(np.random.default_rng(5), N, K, 32, 4)
    p = os.path.join(tmp, "nbits.onnx")
    QM.onnx.save(m, p)
    s = H.Server()
    try:
        r = H.curl(s.url("/models"), data_file=p, timeout=600)
        if r.status not in (200, 201):
            raise RuntimeError("upload: %d %r" % (r.status, r.body[:200]))
        mid = json.loads(r.body)["id"]
        base = "/models/%s/tensors/B?values=16" % mid
        raw, _ = timed(s, base)
        first, j = timed(s, base + "&dequantize=1")
        again, _ = timed(s, base + "&dequantize=1")
    finally:
        s.stop()
    n = N * K
    print("MatMulNBits 4096 x 4096, 4 bits, block 32, packed zero points (%.1fM values), over HTTP"
          % (n / 1e6))
    print("  raw statistics of the packed bytes (%.1fM UINT8): %.3f s" % (B.size / 1e6, raw))
    print("  dequantized statistics, first request: %.3f s (%.0fM values/s); kept: %.3f s"
          % (first, n / first / 1e6, again))
    qs = j["stats"]["quant"]
    print("  levels %d of %d, saturated %d low / %d high" % (qs["levels"], qs["levels_possible"],
                                                           qs["saturated_low"], qs["saturated_high"]))


def main():
    tmp = tempfile.mkdtemp(prefix="onnxviz-quant-bench-")
    try:
        drawings(tmp)
        dequantized(tmp)
    finally:
        subprocess.run(["rm", "-rf", tmp])
    print("quant bench: %d target(s) missed" % missed)


if __name__ == "__main__":
    main()
