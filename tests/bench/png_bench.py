#!/usr/bin/python3
"""png_bench.py BIN MODEL REPEAT — issue 36's PNG targets (tests/bench/png.sh).

Every uncached figure is a fresh server on an empty store (the layout runs each time):
the overview's graph.svg against graph.png?w=1200, the full detail's graph.png at scale 1;
then, on one server, the median of 300 sequential keep-alive GETs of a cached graph.svg
and of a cached graph.png.  Prints each figure, its anchor and the ratio to the target.
"""
import http.client
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

BIN, MODEL, REPEAT = sys.argv[1], sys.argv[2], int(sys.argv[3])


class Server:
    def __init__(self):
        self.store = tempfile.mkdtemp(prefix="png-bench-")
        self.proc = subprocess.Popen([BIN, "serve", "--port", "0", "--store", self.store,
                                      "--log-requests=off"], stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True)
        for line in self.proc.stdout:
            m = re.search(r"listening on http://([^:\s]+):(\d+)", line)
            if m:
                self.port = int(m.group(2))
                break
        self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
        with open(MODEL, "rb") as f:
            self.id = self.req("POST", "/models", f.read())[1]
        self.id = re.search(rb'"id":"([0-9a-f]{64})"', self.id).group(1).decode()

    def req(self, method, path, body=None):
        self.conn.request(method, path, body=body, headers={"Content-Type": "application/octet-stream"})
        r = self.conn.getresponse()
        data = r.read()
        return r.status, data

    def get(self, path):
        t = time.perf_counter()
        status, data = self.req("GET", path)
        assert status == 200, (path, status, data[:200])
        return time.perf_counter() - t

    def stop(self):
        self.conn.close()
        self.proc.terminate()
        self.proc.wait(60)
        shutil.rmtree(self.store, ignore_errors=True)


def fresh(path):
    s = Server()
    try:
        return s.get("/models/%s/%s" % (s.id, path))
    finally:
        s.stop()


def med(path):
    return statistics.median(fresh(path) for _ in range(REPEAT))


def verdict(ratio):
    return "ok" if ratio <= 1 else "MISSED"


svg = med("graph.svg")
png = med("graph.png?w=1200")
full_svg = med("graph.svg?group=none")
full = med("graph.png?group=none")
print("overview: graph.svg %.0f ms, graph.png?w=1200 %.0f ms: +%.0f ms (target <= +150 ms: ratio %.2f, %s)"
      % (svg * 1e3, png * 1e3, (png - svg) * 1e3, (png - svg) / 0.150, verdict((png - svg) / 0.150)))
print("full detail: graph.png %.2f s (its graph.svg %.2f s; target <= 1 s: ratio %.2f, %s)"
      % (full, full_svg, full / 1.0, verdict(full)))
s = Server()
try:
    a, b = "/models/%s/graph.svg" % s.id, "/models/%s/graph.png?w=1200" % s.id
    s.get(a), s.get(b)
    ts = [s.get(a) for _ in range(300)]
    tp = [s.get(b) for _ in range(300)]
    ms, mp = statistics.median(ts), statistics.median(tp)
    ls, lp = len(s.req("GET", a)[1]), len(s.req("GET", b)[1])
    print("cached GET: graph.svg %.3f ms (%d bytes), graph.png %.3f ms (%d bytes) (target: as "
          "fast; ratio %.2f, %.2f per byte: the bytes, not the lookup)" % (ms * 1e3, ls, mp * 1e3, lp, mp / ms,
                                                          (mp / lp) / (ms / ls)))
finally:
    s.stop()
