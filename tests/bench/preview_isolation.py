#!/usr/bin/python3
"""preview isolation bench: what computing previews in a process of their own costs.

Two servers from the same binary, side by side in one run: --isolation=on (the
default: each computed preview is a forked copy of the server) and off (in process).
Each holds the same models: a 1M-element float32 tensor beside a 64M-element float16 one
(128 MB, so the server maps a model of realistic size; fork copies page tables), and a
4-bit MatMulNBits weight of 4M values (dequantized).  Measured per request, client side
(curl), median of N:
  - uncached: a page at an offset not asked before (computed; statistics read back from
    the store after the first request, as in use);
  - cached: the same URL again (answered from the memory cache; no process);
  - dequantized: a fresh page of the MatMulNBits weight with dequantize=1.
Prints both medians and the difference; the anchor is the in-process server.  No target
is given by the issue beyond "measure"; docs/decisions.md states the figures.
"""
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

BUILD = os.environ.get("BUILD", "build")
BIN = os.path.abspath(os.path.join(BUILD, "onnxviz"))
N = int(os.environ.get("N", "41"))
TMP = tempfile.mkdtemp(prefix="oxs-previso-")


def make_models():
    rng = np.random.default_rng(1)
    a = numpy_helper.from_array(rng.standard_normal(1 << 20).astype(np.float32), "w")
    b = numpy_helper.from_array(rng.standard_normal(1 << 26).astype(np.float16), "big")
    outs = [helper.make_tensor_value_info(t.name, t.data_type, None) for t in (a, b)]
    p1 = os.path.join(TMP, "plain.onnx")
    onnx.save(helper.make_model(helper.make_graph([], "g", [], outs, [a, b])), p1)
    K, Nn, bs = 2048, 2048, 32
    B = numpy_helper.from_array(rng.integers(0, 256, (Nn, K // bs, bs // 2), dtype=np.uint8), "B")
    S = numpy_helper.from_array(rng.random(Nn * K // bs).astype(np.float32), "S")
    node = helper.make_node("MatMulNBits", ["x", "B", "S"], ["y"], domain="com.microsoft",
                            K=K, N=Nn, bits=4, block_size=bs)
    g = helper.make_graph([node], "q", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, K])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], [B, S])
    p2 = os.path.join(TMP, "nbits.onnx")
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17),
                                                 helper.make_opsetid("com.microsoft", 1)]), p2)
    return p1, p2


class Server:
    def __init__(self, *args):
        store = tempfile.mkdtemp(dir=TMP)
        self.proc = subprocess.Popen([BIN, "serve", "--port", "0", "--store", store,
                                      "--log-requests=off"] + list(args),
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE)
        self.port = None
        ready = threading.Event()

        def drain():
            for raw in self.proc.stderr:
                m = re.search(rb"listening on http://[^ ]+:(\d+)", raw)
                if m:
                    self.port = int(m.group(1))
                    ready.set()
            ready.set()

        threading.Thread(target=drain, daemon=True).start()
        ready.wait(30)
        if self.port is None:
            raise RuntimeError("server did not start")

    def url(self, path):
        return "http://127.0.0.1:%d%s" % (self.port, path)

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def get(url):
    """seconds for one request (curl's total time), and its status"""
    p = subprocess.run(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code} %{time_total}", url],
                       stdout=subprocess.PIPE, check=True)
    code, t = p.stdout.decode().split()
    if code != "200":
        raise RuntimeError("%s -> %s" % (url, code))
    return float(t)


def upload(s, path):
    p = subprocess.run(["curl", "-s", "--data-binary", "@" + path, s.url("/models")],
                       stdout=subprocess.PIPE, check=True)
    return json.loads(p.stdout)["id"]


def measure(s, ids):
    plain, nbits = ids
    out = {}
    get(s.url("/models/%s/tensors/w?values=10" % plain))  # statistics into the store
    get(s.url("/models/%s/tensors/B?values=10&dequantize=1" % nbits))
    out["uncached"] = [get(s.url("/models/%s/tensors/w?values=100&offset=%d" % (plain, 1000 + i)))
                       for i in range(N)]
    out["cached"] = [get(s.url("/models/%s/tensors/w?values=100&offset=1000" % plain))
                     for _ in range(N)]
    out["dequantized"] = [get(s.url("/models/%s/tensors/B?values=100&offset=%d&dequantize=1"
                                    % (nbits, 5000 + i))) for i in range(N)]
    return out


def main():
    paths = make_models()
    res = {}
    for mode in ("off", "on"):
        s = Server("--isolation=" + mode)
        try:
            ids = [upload(s, p) for p in paths]
            res[mode] = measure(s, ids)
        finally:
            s.stop()
    print("preview latency, median of %d requests (client side), isolation off -> on:" % N)
    for k in ("uncached", "cached", "dequantized"):
        a = statistics.median(res["off"][k]) * 1000
        b = statistics.median(res["on"][k]) * 1000
        print("  %-12s %7.2f ms -> %7.2f ms  (+%.2f ms, x%.2f)" % (k, a, b, b - a, b / a))
    subprocess.run(["rm", "-rf", TMP])


if __name__ == "__main__":
    sys.exit(main())
