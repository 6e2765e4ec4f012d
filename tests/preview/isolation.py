"""Previews in a process of their own (docs/decisions.md): a fault in a preview computation
costs that request, not the server.

Runs the fault-injection build ($BUILD/onnxviz-fault: service/preview.c compiled with
OXS_FAULT_INJECTION, so that a preview of a tensor named __fault_fpe divides by zero,
__fault_segv writes through NULL and __fault_hang spins, and the JSON document of a model
whose graph is named __fault_doc_segv writes through NULL).  Checked:
  - each fault answers a JSON 5xx (500 preview_crashed naming the signal, 503
    preview_timeout past --isolation-timeout) and is counted in /metrics
    (onnxviz_previews_isolated_total{result="crashed"|"killed"});
  - the server answers other requests meanwhile and afterwards (healthz, a good tensor of
    the same model with a fresh query, an upload), also while a preview hangs;
  - with --isolation=off the same build answers good previews in process (the
    switch works both ways; no fault is triggered there);
  - a preview's process keeps none of the server's descriptors (issue 35 item 10): while
    one hangs, its /proc/<pid>/fd holds stdio and its own pipe only (no listening or
    client socket, no other request's pipe), and previews asked beside hanging ones are
    answered at once, not when the hanging processes end.
"""
import os
import re
import threading
import time

import numpy as np
import onnx
from onnx import helper, numpy_helper


def model(path):
    rng = np.random.default_rng(3)
    inits = [numpy_helper.from_array(rng.standard_normal(1000).astype(np.float32), "good")]
    for name in ("__fault_fpe", "__fault_segv", "__fault_hang"):
        inits.append(numpy_helper.from_array(np.ones(8, np.float32), name))
    outs = [helper.make_tensor_value_info(t.name, t.data_type, None) for t in inits]
    onnx.save(helper.make_model(helper.make_graph([], "g", [], outs, inits)), path)
    return numpy_helper.to_array(inits[0])


def doc_fault_model(path):
    x = helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1, 4])
    y = helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [1, 4])
    g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="relu")],
                          "__fault_doc_segv", [x], [y])
    onnx.save(helper.make_model(g), path)


def expected_reports(H, s):
    """A sanitizer build reports the injected faults (UBSan: the division, the store through
    NULL) before the child exits: drop exactly those reports (at the two injection sites,
    followed by the crash they cause) from the log, so that any other report still fails."""
    site = re.compile(r"service/(preview|artifacts)\.c:\d+:\d+: runtime error: "
                      r"(division by zero|store to null pointer)")
    log, keep, i = s.log, [], 0
    while i < len(log):
        if site.search(log[i]) and any("computation crashed" in l for l in log[i + 1:i + 40]):
            i += 1
            while i < len(log) and (log[i].lstrip().startswith("#") or not log[i].strip()):
                i += 1
            continue
        keep.append(log[i])
        i += 1
    s.log[:] = keep


def run(H, tmp):
    check = H.check
    fault_bin = os.path.join(os.environ.get("BUILD", "build"), "onnxviz-fault")
    if not check(os.access(fault_bin, os.X_OK), "%s is missing (make %s)" % (fault_bin, fault_bin)):
        return
    path = os.path.join(tmp, "faults.onnx")
    good = model(path)
    saved_bin = H.BIN
    H.BIN = fault_bin
    try:
        s = H.Server("--isolation=on", "--isolation-timeout", "3", "--workers", "6")
    finally:
        H.BIN = saved_bin
    try:
        faults(H, s, path, good)
        doc_faults(H, s, tmp)
    finally:
        expected_reports(H, s)
        check(s.stop() == 0, "fault-injection server exit")
    H.BIN = fault_bin
    try:
        s = H.Server("--isolation=off")
    finally:
        H.BIN = saved_bin
    try:
        r = H.curl(s.url("/models"), data_file=path)
        mid = r.json()["id"] if r.status == 201 else ""
        r = H.curl(s.url("/models/%s/tensors/good?values=5" % mid))
        j = r.json() or {}
        check(r.status == 200 and j.get("values", {}).get("count") == 5,
              "in-process preview (--isolation=off): %r" % r)
        m = s.metrics()
        check(sum(v for k, v in m.items() if k.startswith("onnxviz_isolated_total")) == 0,
              "in-process previews and documents are not counted as isolated")
    finally:
        check(s.stop() == 0, "in-process server exit")


def faults(H, s, path, good):
    check = H.check
    r = H.curl(s.url("/models"), data_file=path)
    if not check(r.status == 201, "upload of the fault model: %r" % r):
        return
    mid = r.json()["id"]

    def preview(name, query="values=10"):
        return H.curl(s.url("/models/%s/tensors/%s?%s" % (mid, name, query)), timeout=30)

    fresh = [0]

    def alive(what):
        """healthz, and a good preview with a query not asked before (computed, not cached)"""
        fresh[0] += 1
        k = fresh[0]
        r = H.curl(s.url("/healthz"))
        check(r.status == 200, "healthz after %s: %r" % (what, r))
        r = preview("good", "values=%d" % (k + 1))
        j = r.json() or {}
        data = j.get("values", {}).get("data", [])
        check(r.status == 200 and len(data) == k + 1 and
              all(np.float32(float(a)) == b for a, b in zip(data, good[:k + 1])),
              "a good preview after %s: %r" % (what, r))

    alive("start")
    for name, sig in (("__fault_fpe", "Floating point exception"),
                                     ("__fault_segv", "Segmentation fault")):
        for query in ("values=10", "format=npy", "values=3&dequantize=1"):
            r = preview(name, query)
            j = r.json() or {}
            err = j.get("error", {})
            # a sanitizer build reports the fault and exits instead of dying of the signal
            named = sig in err.get("message", "") or "exit" in err.get("message", "")
            check(r.status == 500 and err.get("code") == "preview_crashed" and named,
                  "%s (%s): 500 preview_crashed naming the signal: %r" % (name, query, r))
            alive("%s %s" % (name, query))
    # a hanging computation: killed at --isolation-timeout; the server serves others meanwhile
    result = {}

    def hang():
        t = time.time()
        result["r"] = preview("__fault_hang")
        result["t"] = time.time() - t

    th = threading.Thread(target=hang)
    th.start()
    time.sleep(0.5)
    own_fds_only(H, s)
    t = time.time()
    alive("a preview that hangs (while it runs)")
    check(time.time() - t < 2.5 * H.SLOW, "other requests answered while a preview hangs (%.1f s)"
          % (time.time() - t))
    th.join(60)
    r = result.get("r")
    j = (r.json() if r else None) or {}
    check(r is not None and r.status == 503 and j.get("error", {}).get("code") == "preview_timeout",
          "a hanging preview: 503 preview_timeout: %r" % r)
    check(result.get("t", 99) < 15 * H.SLOW, "the hanging preview was stopped after %.1f s"
          % result.get("t", 99))
    alive("a preview that hung")
    beside_hangs(H, s, mid, fresh)
    m = s.metrics()
    crashed = m.get('onnxviz_isolated_total{what="preview",result="crashed"}', -1)
    killed = m.get('onnxviz_isolated_total{what="preview",result="killed"}', -1)
    ok = m.get('onnxviz_isolated_total{what="preview",result="ok"}', -1)
    check(crashed == 6, "metrics: 6 crashed previews counted: %r" % crashed)
    check(killed == 4, "metrics: 4 killed previews counted: %r" % killed)
    check(ok == fresh[0], "metrics: the %d good previews counted as ok: %r" % (fresh[0], ok))
    r = H.curl(s.url("/models"), data_file=path)
    check(r.status in (200, 201), "an upload after the faults: %r" % r)
    print("  isolation: %d crashes and 4 hangs answered 5xx, counted; the server went on" % crashed,
          flush=True)


def children(pid):
    out = []
    for task in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/children" % (pid, task)) as f:
                out += [int(x) for x in f.read().split()]
        except OSError:
            pass
    return out


def own_fds_only(H, s):
    """The hanging preview's process: stdio and the pipe it answers on, nothing else of the
    server's (before the fix it held the listening socket, the clients' sockets, the store's
    files and every other request's pipe open at its fork)."""
    H.wait_until(lambda: children(s.proc.pid), 5)
    kids = children(s.proc.pid)
    if not H.check(len(kids) == 1, "one preview process while a preview hangs: %r" % kids):
        return
    fds = {}
    for fd in os.listdir("/proc/%d/fd" % kids[0]):
        try:
            fds[int(fd)] = os.readlink("/proc/%d/fd/%s" % (kids[0], fd))
        except OSError:
            pass
    extra = {fd: what for fd, what in fds.items() if fd > 2}
    H.check(len(extra) == 1 and list(extra.values())[0].startswith("pipe:"),
            "a preview process holds its own pipe only beyond stdio: %r" % fds)


def beside_hangs(H, s, mid, fresh):
    """Three previews hang (until --isolation-timeout, 3 s) while good ones are asked at the
    same moments: each good one is answered as soon as it is computed, not when a hanging
    process that was forked while its pipe was open ends."""
    hung = []

    def hang(k):
        hung.append(H.curl(s.url("/models/%s/tensors/__fault_hang?values=%d" % (mid, k)), timeout=30))

    hangs = [threading.Thread(target=hang, args=(20 + i,)) for i in range(3)]
    times = []

    def good(k):
        t = time.time()
        r = H.curl(s.url("/models/%s/tensors/good?values=%d" % (mid, k)))
        times.append((time.time() - t, r.status))

    fresh[0] += 8
    goods = [threading.Thread(target=good, args=(100 + i,)) for i in range(8)]
    for i in range(8):
        if i < 3:
            hangs[i].start()
        goods[i].start()
    for t in goods + hangs:
        t.join(60)
    H.check(len(hung) == 3 and all(r.error_code() == "preview_timeout" for r in hung),
            "the 3 hanging previews: 503 preview_timeout: %r" % hung)
    slow = [t for t, st in times if st != 200 or t > 2.0 * H.SLOW]
    H.check(len(times) == 8 and not slow,
            "8 previews asked beside 3 hanging ones answered at once (slowest %.2f s): %r"
            % (max(t for t, _ in times) if times else -1, sorted(times)))


def doc_faults(H, s, tmp):
    check = H.check
    path = os.path.join(tmp, "docfault.onnx")
    doc_fault_model(path)
    before = s.metrics().get('onnxviz_isolated_total{what="document",result="crashed"}', -1)
    r = H.curl(s.url("/models"), data_file=path)
    err = (r.json() or {}).get("error", {})
    check(r.status == 500 and "document_crashed" in err.get("message", "") and
          "model stored" in err.get("message", ""),
          "an upload whose summary crashes: 500, the model stored: %r" % r)
    check(H.curl(s.url("/healthz")).status == 200, "healthz after a document crash")
    mid = H.sha256_file(path) if hasattr(H, "sha256_file") else None
    if mid is None:
        import hashlib
        mid = hashlib.sha256(open(path, "rb").read()).hexdigest()
    r = H.curl(s.url("/models/%s/document.json" % mid))
    check(r.status == 500 and (r.json() or {}).get("error", {}).get("code") == "document_crashed",
          "document.json of that model: 500 document_crashed: %r" % r)
    r = H.curl(s.url("/models/%s/graph.svg" % mid))
    check(r.status == 200 and b"<svg" in r.body[:400], "that model is drawn all the same: %r" % r)
    r = H.curl(s.url("/models"))
    ids = [m.get("id") for m in ((r.json() or {}).get("models") or [])]
    check(mid in ids, "that model is listed")
    after = s.metrics().get('onnxviz_isolated_total{what="document",result="crashed"}', -1)
    check(after - before == 2, "metrics: 2 document crashes counted: %r -> %r" % (before, after))
