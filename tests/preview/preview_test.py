#!/usr/bin/python3
"""preview suite: tensor previews, tensor uploads, external data and its confinement,
dequantized previews and negative zeros (quant.py).

Uses the http suite's helpers (Server, curl, check).  Models are made here with onnx and
numpy; every decoded value is compared with numpy (numpy_helper.to_array).
"""
import io
import json
import math
import os
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "http"))
import http_test as H  # noqa: E402

import numpy as np  # noqa: E402
import onnx  # noqa: E402
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

check = H.check
TMP = H.TMP
SECRET = b"TOP-SECRET-7f3a9c"


def jnum(v):
    """A JSON value of the preview as a Python float (NaN/Infinity strings)."""
    if isinstance(v, str):
        return {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}[v]
    return float(v)


def same_float(a, b):
    return (math.isnan(a) and math.isnan(b)) or a == b


def to_bf16(x):
    """Round float32 values to bfloat16 (nearest even), as float32."""
    u = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    r = ((u + 0x7fff + ((u >> 16) & 1)) >> 16) << 16
    return np.where(np.isnan(np.asarray(x, np.float32)), np.float32(np.nan), r.astype(np.uint32).view(np.float32))


def in_dtype(vals, name, ref):
    """JSON floats (the shortest text that reads back in the tensor's type) as that type."""
    a = np.array([jnum(v) for v in vals], np.float64)
    if name == "bf16":
        return to_bf16(a.astype(np.float32))
    return a.astype(ref.dtype)


def save_model(path, inits, nodes=(), outputs=None):
    outs = outputs or [helper.make_tensor_value_info(inits[0].name, inits[0].data_type, None)]
    g = helper.make_graph(list(nodes), "g", [], outs, inits)
    onnx.save(helper.make_model(g), path)


def bf16_tensor(name, a32):
    bits = (a32.view(np.uint32) >> 16).astype(np.uint16)
    t = TensorProto(name=name, data_type=TensorProto.BFLOAT16, dims=list(a32.shape))
    t.raw_data = bits.tobytes()
    return t, (bits.astype(np.uint32) << 16).view(np.float32)


def upload(s, path, parts=()):
    if parts:
        form = [("model", "@" + path)] + [(loc, "@" + p) for loc, p in parts]
        return H.curl(s.url("/models"), form=form)
    return H.curl(s.url("/models"), data_file=path)


def t_dtypes(s):
    rng = np.random.default_rng(7)
    f16 = np.concatenate([rng.standard_normal(60).astype(np.float16),
                          np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 6.1e-5, 65504], np.float16)])
    bf, bf_ref = bf16_tensor("bf16", np.concatenate([rng.standard_normal(50), [np.nan, np.inf, 0]]).astype(np.float32))
    arrays = {
        "f32": np.array([1.5, -0.1, np.nan, np.inf, 3.4e38], np.float32),
        "f64": np.array([np.pi, -1e-300, np.nan], np.float64),
        "f16": f16,
        "i8": np.array([-128, 127, 0], np.int8), "u8": np.array([0, 255], np.uint8),
        "i16": np.array([-32768, 32767], np.int16), "u16": np.array([65535, 1], np.uint16),
        "i32": np.array([-2**31, 2**31 - 1], np.int32), "u32": np.array([2**32 - 1, 0], np.uint32),
        "i64": np.array([-2**63, 2**63 - 1, 2**53 + 1], np.int64),
        "u64": np.array([2**64 - 1, 2**63, 2**53 + 1], np.uint64),
        "b": np.array([True, False, True]),
        "c64": np.array([1 + 2j, -0.5 - 1j], np.complex64), "c128": np.array([np.pi + 1e-300j], np.complex128),
        "s": np.array([b"abc", "é\u00ff".encode(), b"\xff\xfe bad utf8", b""], dtype=object),
    }
    inits = [numpy_helper.from_array(a, n) for n, a in arrays.items()] + [bf]
    path = os.path.join(TMP, "dtypes.onnx")
    save_model(path, inits)
    r = upload(s, path)
    check(r.status == 201 and r.json()["kind"] == "model", "dtypes upload: %r" % r)
    mid = r.json()["id"]
    arrays["bf16"] = bf_ref
    for name, ref in arrays.items():
        r = H.curl(s.url("/models/%s/tensors/%s?values=1000&bins=16" % (mid, name)))
        j = r.json()
        if not check(r.status == 200 and j is not None, "preview %s: %r" % (name, r)):
            continue
        data = j["values"]["data"]
        check(j["dims"] == list(ref.shape) and j["count"] == ref.size and len(data) == ref.size,
              "%s dims/count: %r" % (name, j["dims"]))
        if name == "s":
            want = [b.decode("utf-8", "replace") for b in ref]
            check(data == want, "%s strings: %r vs %r" % (name, data, want))
            check(j["stats"] is None, "%s stats null" % name)
            continue
        if ref.dtype.kind in "iu":
            check(data == [int(v) for v in ref], "%s exact ints: %r" % (name, data))
            st = j["stats"]
            check(st["min"] == int(ref.min()) and st["max"] == int(ref.max()), "%s exact min/max %r" % (name, st))
        elif ref.dtype.kind == "b":
            check(data == [bool(v) for v in ref], "%s bools: %r" % (name, data))
        elif ref.dtype.kind == "c":
            ok = all(same_float(jnum(d[0]), float(v.real)) and same_float(jnum(d[1]), float(v.imag)) for d, v in zip(data, ref))
            check(ok, "%s complex: %r" % (name, data))
        else:
            ok = np.array_equal(in_dtype(data, name, ref), ref, equal_nan=True)
            check(ok, "%s floats: %r vs %r" % (name, data[:8], ref[:8]))
            check(all(not isinstance(d, str) or d in ("NaN", "Infinity", "-Infinity") for d in data),
                  "%s: only NaN/Infinity as strings" % name)
            st = j["stats"]
            fin = ref.astype(np.float64)[np.isfinite(ref.astype(np.float64))]
            check(st["finite"] == fin.size and st["nan"] == int(np.isnan(ref.astype(np.float64)).sum()),
                  "%s counts %r" % (name, st))
            if fin.size:
                mm = in_dtype([st["min"], st["max"]], name, ref)
                check(mm[0] == ref[np.isfinite(ref)].min() and mm[1] == ref[np.isfinite(ref)].max(), "%s min/max %r" % (name, st))
                check(abs(st["mean"] - fin.mean()) <= 1e-9 * max(1, abs(fin.mean())), "%s mean %r vs %r" % (name, st["mean"], fin.mean()))
                check(abs(st["std"] - fin.std()) <= 1e-9 * max(1, fin.std()), "%s std %r vs %r" % (name, st["std"], fin.std()))
                check(sum(st["histogram"]["counts"]) == st["finite"], "%s histogram sums to finite" % name)
        # .npy of the whole tensor
        if name == "s":
            continue
        r = H.curl(s.url("/models/%s/tensors/%s?format=npy" % (mid, name)))
        if check(r.status == 200, "npy %s: %r" % (name, r)):
            a = np.load(io.BytesIO(r.body))
            want = ref
            if name in ("f16", "bf16"):
                check(a.dtype == np.float32 and r.h("x-widened-from") in ("FLOAT16", "BFLOAT16"),
                      "npy %s widened to float32, stated: %s %s" % (name, a.dtype, r.h("x-widened-from")))
                want = ref.astype(np.float32)
            check(a.shape == ref.shape and np.array_equal(a, want, equal_nan=(ref.dtype.kind in "fc")),
                  "npy %s values: %r vs %r" % (name, a[:5], want[:5]))
            check(r.h("x-npy-dtype") == a.dtype.str or r.h("x-npy-dtype") == "|b1",
                  "npy %s dtype header %s vs %s" % (name, r.h("x-npy-dtype"), a.dtype.str))
    # a page, and its cache
    r = H.curl(s.url("/models/%s/tensors/f16?values=5&offset=60&stats=0" % mid))
    j = r.json()
    check(r.status == 200 and j["values"]["offset"] == 60 and len(j["values"]["data"]) == 5 and "stats" not in j,
          "page: %r" % r)
    r2 = H.curl(s.url("/models/%s/tensors/f16?values=5&offset=60&stats=0" % mid), headers=["If-None-Match: %s" % r.h("etag")])
    check(r2.status == 304 and "immutable" in (r.h("cache-control") or ""), "page 304 + immutable: %r" % r2)
    for q, code in (("values=100001", "bad_query"), ("bins=99999", "bad_query"), ("nope=1", "bad_query"),
                    ("offset=999", "bad_query"), ("format=npy&bins=3", "bad_query")):
        r = H.curl(s.url("/models/%s/tensors/f16?%s" % (mid, q)))
        check(r.status == 400 and r.error_code() == code, "bad query %s: %r" % (q, r))
    r = H.curl(s.url("/models/%s/tensors/missing" % mid))
    check(r.status == 404 and r.error_code() == "tensor_not_found", "missing tensor: %r" % r)
    r = H.curl(s.url("/models/%s/tensors/@i2" % mid))
    check(r.status == 200 and r.json()["name"] == "f16", "by ref @i2: %r" % r)


def t_stats_cache(s):
    a = np.random.default_rng(1).standard_normal(3_000_000).astype(np.float16)
    path = os.path.join(TMP, "stats.onnx")
    save_model(path, [numpy_helper.from_array(a, "w")])
    mid = upload(s, path).json()["id"]
    t0 = time.time()
    r1 = H.curl(s.url("/models/%s/tensors/w?values=1" % mid))
    t1 = time.time()
    r2 = H.curl(s.url("/models/%s/tensors/w?values=2" % mid))  # another page: stats from the store
    t2 = time.time()
    check(r1.json()["stats"] == r2.json()["stats"], "stats cached equal")
    print("  stats of 3M f16: first %.1f ms, another page %.1f ms" % ((t1 - t0) * 1e3, (t2 - t1) * 1e3))
    f = a.astype(np.float64)
    st = r1.json()["stats"]
    check(abs(st["mean"] - f.mean()) < 1e-9 and abs(st["std"] - f.std()) < 1e-9, "3M stats vs numpy")
    h, _ = np.histogram(f, bins=32, range=(f.min(), f.max()))
    diff = np.abs(np.array(st["histogram"]["counts"]) - h).sum()
    check(diff <= 2, "histogram vs numpy (boundary differences %d)" % diff)


def t_tensor_upload(s):
    for pb in sorted(__import__("glob").glob(os.path.join(H.CORPUS, "models", "onnx-testdata", "simple", "*", "test_data_set_0", "*.pb")))[:12]:
        t = onnx.load_tensor(pb)
        ref = numpy_helper.to_array(t)
        r = upload(s, pb)
        j = r.json()
        if not check(r.status in (200, 201) and j["kind"] == "tensor", "pb upload %s: %r" % (pb, r)):
            continue
        if ref.dtype == object:
            continue
        r = H.curl(s.url("/models/%s/tensors/anything?format=npy" % j["id"]))
        a = np.load(io.BytesIO(r.body)) if r.status == 200 else None
        check(a is not None and np.array_equal(a, ref.astype(a.dtype), equal_nan=ref.dtype.kind == "f") and a.shape == ref.shape,
              "pb %s npy equals numpy_helper.to_array" % pb)
        r = H.curl(s.url("/models/%s/graph.svg" % j["id"]))
        check(r.status == 422 and r.error_code() == "tensor_upload", "graph of a tensor: %r" % r)
        r = H.curl(s.url("/models/%s/nodes/n0" % j["id"]))
        check(r.status == 422 and r.error_code() == "tensor_upload", "node of a tensor: %r" % r)
    r = H.curl(s.url("/models"), data=b"")
    check(r.status == 422 and r.error_code() == "not_a_model", "empty body still not_a_model: %r" % r)


def t_isnet(s):
    try:
        script = os.path.join(H.CORPUS, "fetch-large-models.sh")
        folder = subprocess.run(["sh", script], capture_output=True, timeout=600).stdout.decode().strip().splitlines()[-1]
        path = os.path.join(folder, "isnet_fp16.onnx")
        assert os.path.getsize(path) > 80 << 20
    except Exception as e:  # no network, no npm: skip with a note
        print("  isnet_fp16.onnx unavailable, skipped (%r)" % e)
        return
    m = onnx.load(path)
    init = max(m.graph.initializer, key=lambda t: len(t.raw_data))
    ref = numpy_helper.to_array(init)
    mid = upload(s, path).json()["id"]
    r = H.curl(s.url("/models/%s/tensors/%s?values=1000&offset=17" % (mid, init.name)))
    j = r.json()
    check(r.status == 200 and j["dtype"] == "FLOAT16", "isnet preview: %r" % r)
    ref = ref.astype(np.float16)
    check(np.array_equal(in_dtype(j["values"]["data"], "f16", ref), ref.reshape(-1)[17:1017]), "isnet values vs numpy")
    f = ref.astype(np.float64).reshape(-1)
    st = j["stats"]
    mm = in_dtype([st["min"], st["max"]], "f16", ref)
    check(st["count"] == f.size and mm[0] == ref.min() and mm[1] == ref.max() and
          abs(st["mean"] - f.mean()) < 1e-9 * max(1, abs(f.mean())) and abs(st["std"] - f.std()) < 1e-9 * f.std(),
          "isnet stats vs numpy: %r" % st)
    print("  isnet_fp16: %s (%d elements) checked against numpy" % (init.name, f.size))


def ext_model(path, location, arr, name="w", offset=None):
    t = numpy_helper.from_array(arr, name)
    t.ClearField("raw_data")
    t.data_location = TensorProto.EXTERNAL
    for k, v in (("location", location), ("offset", offset), ("length", str(arr.nbytes) if offset else None)):
        if v is not None:
            e = t.external_data.add()
            e.key, e.value = k, v
    save_model(path, [t])


def t_external(s, models_dir):
    arr = (np.arange(5000, dtype=np.float32) / 3).astype(np.float16)
    os.makedirs(os.path.join(models_dir, "m", "data"), exist_ok=True)
    mpath = os.path.join(models_dir, "m", "ext.onnx")
    with open(os.path.join(models_dir, "m", "data", "w.bin"), "wb") as f:
        f.write(b"\0" * 64 + arr.tobytes())
    ext_model(mpath, "data/w.bin", arr, offset="64")
    # uploaded with its data file (multipart, the field name is the location)
    r = upload(s, mpath, [("data/w.bin", os.path.join(models_dir, "m", "data", "w.bin"))])
    check(r.status == 201, "bundle upload: %r" % r)
    bid = r.json()["id"]
    check(bid != H.sha256_file(mpath), "bundle id covers the data (differs from the model's hash)")
    r = H.curl(s.url("/models/%s/tensors/w?values=5000&bins=8" % bid))
    j = r.json()
    check(r.status == 200 and j["storage"] == "external" and
          np.array_equal(in_dtype(j["values"]["data"], "f16", arr), arr), "bundle preview values: %r" % r)
    # other weights, another id
    with open(os.path.join(TMP, "w2.bin"), "wb") as f:
        f.write(b"\1" * 64 + (arr * 2).tobytes())
    r = upload(s, mpath, [("data/w.bin", os.path.join(TMP, "w2.bin"))])
    check(r.status == 201 and r.json()["id"] != bid, "other weights, other id: %r" % r)
    # the model alone: the graph renders, the preview says the data is missing
    r = upload(s, mpath)
    lone = r.json()["id"]
    check(r.status == 201 and lone == H.sha256_file(mpath), "model alone keeps the plain id")
    r = H.curl(s.url("/models/%s/graph.svg" % lone))
    check(r.status == 200, "graph without the data: %r" % r)
    r = H.curl(s.url("/models/%s/tensors/w" % lone))
    check(r.status == 404 and r.error_code() == "external_data_missing" and r.json()["error"]["rule"] == "not_found",
          "missing data: %r" % r)
    for loc, rule in (("../x", "dotdot"), ("/x", "absolute_path"), ("a\\b", "backslash"), ("a//b", "empty_component")):
        r = upload(s, mpath, [(loc, os.path.join(TMP, "w2.bin"))])
        check(r.status == 400 and r.error_code() == "bad_location" and rule in r.json()["error"]["message"],
              "part name %r refused: %r" % (loc, r))
    # --models-dir reads
    r = H.curl(s.url("/files/m/ext.onnx/tensors/w?values=3"))
    check(r.status == 200 and np.array_equal(in_dtype(r.json()["values"]["data"], "f16", arr), arr[:3]) and
          r.h("cache-control") == "no-cache", "files preview: %r" % r)
    r = H.curl(s.url("/files/m/ext.onnx/graph.svg"))
    check(r.status == 200 and r.body.startswith(b"<?xml"), "files graph.svg: %r" % r)
    r = H.curl(s.url("/files/m/ext.onnx"))
    check(r.status == 200 and r.json()["links"]["self"] == "/files/m/ext.onnx", "files summary: %r" % r)
    check(r.json()["links"].get("check") == "/files/m/ext.onnx/check", "files summary links check: %r" % r)
    r = H.curl(s.url("/files/m/ext.onnx/check"))
    j = r.json() or {}
    check(r.status == 200 and j.get("format") == "onnxviz.check/1" and "errors" in j and
          r.h("cache-control") == "no-cache", "files check: %r %r" % (r, j))
    r = H.curl(s.url("/files/m/nothere.onnx"))
    check(r.status == 404, "files missing: %r" % r)


def t_confinement(s, models_dir):
    """Every trick to read outside the folder is refused by its rule; the secret never
    appears in any response."""
    outside = os.path.join(TMP, "outside")
    os.makedirs(outside, exist_ok=True)
    arr = np.zeros(len(SECRET) // 2, np.float16)
    secret = os.path.join(outside, "secret.bin")
    with open(secret, "wb") as f:
        f.write(SECRET[:arr.nbytes])
    d = os.path.join(models_dir, "trick")
    os.makedirs(d, exist_ok=True)
    os.symlink(secret, os.path.join(d, "last.bin"))
    os.symlink(outside, os.path.join(d, "parent"))
    os.link(secret, os.path.join(d, "hard.bin"))
    with open(os.path.join(d, "secret-model.onnx"), "wb") as f:
        f.write(SECRET)
    os.symlink(os.path.join(d, "secret-model.onnx"), os.path.join(d, "linked.onnx"))
    cases = [("../../outside/secret.bin", "external_dotdot", 422), ("a/../../secret.bin", "external_dotdot", 422),
             (secret, "external_absolute_path", 422), ("a\\..\\x", "external_backslash", 422),
             ("C:/x", "external_drive_path", 422), ("last.bin", "external_symlink", 422),
             ("parent/secret.bin", "external_symlink", 422), ("hard.bin", "external_hard_link", 422),
             ("nothere.bin", "external_data_missing", 404)]
    seen = []
    codes = set()
    for i, (loc, code, status) in enumerate(cases):
        ext_model(os.path.join(d, "t%d.onnx" % i), loc, arr)
        for url in ("/files/trick/t%d.onnx/tensors/w" % i, "/files/trick/t%d.onnx/tensors/w?format=npy" % i):
            r = H.curl(s.url(url))
            seen.append(r)
            check(r.status == status and r.error_code() == code, "%r: %s %d: %r" % (loc, code, status, r))
        codes.add(r.error_code())
        # the same model uploaded (store data folder) refuses the same way
        r = upload(s, os.path.join(d, "t%d.onnx" % i))
        seen.append(r)
        r = H.curl(s.url("/models/%s/tensors/w" % r.json()["id"]))
        seen.append(r)
        # uploaded alone the model has no data folder: file tricks find nothing to open
        ok = r.error_code() == code if status == 422 and "link" not in code else \
            (r.status == 404 and r.error_code() == "external_data_missing")
        check(ok, "uploaded %r refused: %r" % (loc, r))
    check(len(codes) >= 6, "distinct error codes: %r" % sorted(codes))
    for url, code in (("/files/trick/linked.onnx", "path_refused"), ("/files/trick/parent/x.onnx", "path_refused"),
                      ("/files/trick/../../outside/secret.onnx", "bad_path")):
        r = H.curl(s.url(url), extra=["--path-as-is"])
        seen.append(r)
        check(r.status in (400, 403, 404) and r.status != 200, "%s refused: %r" % (url, r))
    leaked = [r for r in seen + H.RESPONSES if SECRET in r.body or SECRET.decode() in json.dumps(r.headers)]
    check(not leaked, "the secret never appears (%d responses looked at)" % len(seen + H.RESPONSES))


def rss_kib(pid, field="VmRSS"):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def t_big(s, models_dir):
    n = 100_000_000
    st = os.statvfs(models_dir)
    if os.environ.get("PREVIEW_BIG") == "0" or st.f_bavail * st.f_frsize < 3 * 2 * n:
        print("  100M-element tensor skipped (PREVIEW_BIG=0 or under 600 MB free)")
        return
    d = os.path.join(models_dir, "big")
    os.makedirs(d, exist_ok=True)
    rng = np.random.default_rng(3)
    chunk = (rng.standard_normal(1 << 20) * 0.05).astype(np.float16)
    with open(os.path.join(d, "w.bin"), "wb") as f:
        left = n
        while left:
            k = min(left, chunk.size)
            f.write(chunk[:k].tobytes())
            left -= k
    t = TensorProto(name="w", data_type=TensorProto.FLOAT16, dims=[n])
    t.data_location = TensorProto.EXTERNAL
    e = t.external_data.add()
    e.key, e.value = "location", "w.bin"
    save_model(os.path.join(d, "big.onnx"), [t])
    pid = s.proc.pid
    base, base_anon = rss_kib(pid), rss_kib(pid, "RssAnon")
    peak = [base, base_anon]
    done = threading.Event()

    def sample():
        while not done.is_set():
            peak[0] = max(peak[0], rss_kib(pid))
            peak[1] = max(peak[1], rss_kib(pid, "RssAnon"))
            time.sleep(0.005)

    th = threading.Thread(target=sample)
    th.start()
    t0 = time.time()
    r = H.curl(s.url("/files/big/big.onnx/tensors/w?values=10&bins=64"), timeout=300)
    dt = time.time() - t0
    done.set()
    th.join()
    j = r.json()
    ok = check(r.status == 200 and j["stats"]["count"] == n and sum(j["stats"]["histogram"]["counts"]) == j["stats"]["finite"],
               "100M stats: %r" % r)
    reps = n // chunk.size
    f = chunk.astype(np.float64)
    mean_ref = (f.sum() * reps + f[:n - reps * chunk.size].sum()) / n
    if ok:
        check(abs(j["stats"]["mean"] - mean_ref) < 1e-9, "100M mean %r vs %r" % (j["stats"]["mean"], mean_ref))
    grew = (peak[0] - base) * 1024
    print("  100M f16 statistics over HTTP: %.2f s, %.2f G values/s; server RSS %d -> %d KiB (+%.1f MB; "
          "anon +%.1f MB; tensor %d MB)" % (dt, n / dt / 1e9, base, peak[0], grew / 1e6,
                                            (peak[1] - base_anon) * 1024 / 1e6, 2 * n // 1000000))
    check(grew < 2 * n / 4, "RSS grew by less than a quarter of the tensor (%.1f MB)" % (grew / 1e6))
    t0 = time.time()
    r = H.curl(s.url("/files/big/big.onnx/tensors/w?values=20&offset=99999000&bins=64"))
    print("  another page: %.1f ms (/files statistics are recomputed: only stored models keep them)" % ((time.time() - t0) * 1e3))
    os.unlink(os.path.join(d, "w.bin"))


def main():
    t0 = time.time()
    models_dir = os.path.join(TMP, "models")
    os.makedirs(models_dir)
    s = H.Server("--models-dir", models_dir)
    steps = []

    def step(name, fn, *a):
        t = time.time()
        try:
            fn(*a)
        except Exception as e:
            import traceback
            traceback.print_exc()
            check(False, "%s raised %r" % (name, e))
        steps.append("%s %.1fs" % (name, time.time() - t))

    step("dtypes", t_dtypes, s)
    step("stats cache", t_stats_cache, s)
    step("tensor uploads", t_tensor_upload, s)
    step("external data", t_external, s, models_dir)
    step("confinement", t_confinement, s, models_dir)
    step("isnet", t_isnet, s)
    step("100M f16", t_big, s, models_dir)
    import quant  # noqa: E402  (tests/preview/quant.py: dequantized previews, -0)
    step("quantized", quant.run, H, s, TMP)
    import isolation  # noqa: E402  (tests/preview/isolation.py: faults in preview processes)
    step("isolation", isolation.run, H, TMP)
    check(s.stop() == 0, "server exit")
    print("  steps: " + ", ".join(steps))
    print("preview: %d checks passed, %d failed (%.0f s)" % (H.passed, len(H.failures), time.time() - t0))
    subprocess.run(["rm", "-rf", TMP])
    return 1 if H.failures else 0


if __name__ == "__main__":
    sys.exit(main())
