#!/usr/bin/python3
"""startup bench: time from exec to listening with 10,000 models in the store, local or S3.

Target (issue 16): <= 1 s, not growing with the store.  Anchor: the same binary on an
empty store, in the same run.  The stores are real: 10,000 distinct ONNX models written
in the local store's layout (each with a stored summary and meta, as uploads leave them),
and the same 10,000 objects in a bucket of a single-node Ceph RGW (tests/s3/ceph.py) for
the S3 store, started once with an empty cache folder and once with all of them cached.
Also prints when the local store's background verification (hashing every model) ends.
"""
import concurrent.futures
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True  # no __pycache__ in the tree
sys.path.insert(0, os.path.join(HERE, "..", "s3"))
import ceph as C  # noqa: E402

BUILD = os.environ.get("BUILD", "build")
BIN = os.path.abspath(os.path.join(BUILD, "onnxviz"))
N = int(os.environ.get("STARTUP_MODELS", "10000"))
TARGET_MS = 1000
TMP = tempfile.mkdtemp(prefix="oxs-startup-")


def models(n):
    """n distinct small ONNX models (an Add with a 256-float initializer each)."""
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper
    base = np.arange(256, dtype=np.float32)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [256])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [256])
    node = helper.make_node("Add", ["x", "w"], ["y"], name="add0")
    out = []
    for i in range(n):
        w = numpy_helper.from_array(base + np.float32(i), "w")
        g = helper.make_graph([node], "g%d" % i, [x], [y], [w])
        out.append(helper.make_model(g, producer_name="startup-bench").SerializeToString())
    return out


def write_local(root, blobs):
    for sub in ("models", "renderings", "tmp", "quarantine", "data", "meta"):
        os.makedirs(os.path.join(root, sub), exist_ok=True)
    ids = []
    for i, b in enumerate(blobs):
        mid = hashlib.sha256(b).hexdigest()
        ids.append(mid)
        d = os.path.join(root, "models", mid[:2])
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, mid + ".onnx"), "wb") as f:
            f.write(b)
        rd = os.path.join(root, "renderings", mid)
        os.makedirs(rd, exist_ok=True)
        with open(os.path.join(rd, "summary-0123456789abcdef0123456789abcdef.json"), "w") as f:
            f.write('{"id":"%s","summary":{}}' % mid)
        with open(os.path.join(root, "meta", mid + ".json"), "w") as f:
            json.dump({"name": "m%d.onnx" % i, "graph": "g%d" % i, "producer": "startup-bench",
                       "kind": "model", "nodes": 1}, f)
    return ids


def start(args, env=None, wait_verified=False):
    """ms from exec to the port file, and (wait_verified) to the log's "store verified"."""
    port_file = os.path.join(TMP, "port")
    if os.path.exists(port_file):
        os.unlink(port_file)
    log = os.path.join(TMP, "log")
    e = {k: v for k, v in os.environ.items() if not k.startswith("ONNXVIZ_")}
    e.update(env or {})
    with open(log, "wb") as lf:
        t0 = time.perf_counter()
        p = subprocess.Popen([BIN, "serve", "--port", "0", "--port-file", port_file,
                              "--log-requests=off"] + args, stdout=subprocess.DEVNULL, stderr=lf,
                             env=e, preexec_fn=C.die_with_parent)
        while not os.path.exists(port_file):
            if p.poll() is not None or time.perf_counter() - t0 > 60:
                raise RuntimeError("did not start: " + open(log).read()[-800:])
            time.sleep(0.001)
        ms = (time.perf_counter() - t0) * 1000
        verified = None
        if wait_verified:
            while time.perf_counter() - t0 < 300:
                if b'"store verified"' in open(log, "rb").read():
                    verified = time.perf_counter() - t0
                    break
                time.sleep(0.02)
        p.terminate()
        p.wait(30)
    return ms, verified


def best(args, env=None, runs=3):
    return min(start(args, env)[0] for _ in range(runs))


def main():
    ceph = None
    status = 0
    try:
        t0 = time.time()
        blobs = models(N)
        local = os.path.join(TMP, "local")
        write_local(local, blobs)
        mb = sum(len(b) for b in blobs) / 1e6
        print("startup: %d models (%.1f MB) made and written in %.1f s" % (N, mb, time.time() - t0))
        empty = os.path.join(TMP, "empty")
        anchor = best(["--store", empty])
        t_local = best(["--store", local])
        _, verified = start(["--store", local], wait_verified=True)
        print("startup: local store, empty: %.0f ms (anchor)" % anchor)
        print("startup: local store, %d models: %.0f ms to listening (%.1fx the empty store); "
              "the background verification of all of them ended %.1f s after exec"
              % (N, t_local, t_local / anchor, verified or -1))
        results = [("local", t_local)]

        ceph = C.Ceph().start()
        ceph.s3.make_bucket("startup")
        t0 = time.time()
        with concurrent.futures.ThreadPoolExecutor(16) as ex:
            list(ex.map(lambda b: ceph.s3.put("startup", "bench/models/%s.onnx" % hashlib.sha256(b).hexdigest(), b),
                        blobs))
        print("startup: %d objects put into the bucket in %.1f s" % (N, time.time() - t0))
        env = ceph.env()
        cold = os.path.join(TMP, "cold-cache")
        t_cold = min(start(["--store", "s3://startup/bench", "--cache-dir", cold], env)[0] for _ in range(3))
        # the local store's folder has the cache layout: all 10,000 cached
        t_warm = best(["--store", "s3://startup/bench", "--cache-dir", local], env)
        print("startup: S3 store, %d models in the bucket, empty cache: %.0f ms" % (N, t_cold))
        print("startup: S3 store, %d models in the bucket and in the cache: %.0f ms" % (N, t_warm))
        results += [("S3, empty cache", t_cold), ("S3, full cache", t_warm)]
        for name, ms in results:
            ok = ms <= TARGET_MS
            status |= not ok
            print("startup: target %s <= %d ms: %.0f ms %s" % (name, TARGET_MS, ms, "ok" if ok else "MISSED"))
    finally:
        if ceph is not None:
            ceph.stop()
        shutil.rmtree(TMP, ignore_errors=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
