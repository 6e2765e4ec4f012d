#!/usr/bin/python3
"""png_bench.py BIN REPEAT MODEL... — issue 36's PNG targets (tests/bench/png.sh).

For each model (the first is the issue's, swin_t; the others are printed for comparison),
every uncached figure is a fresh server on an empty store (the layout runs each time):
the overview's graph.svg against graph.png?w=1200, the full detail's graph.png at scale 1
(with its size in pixels, and the drawing's own when the budget scaled it down), each with
the CPU time the server and its layout worker spent on it (the wall clock of a machine
shared with other work measures the others too; the targets are wall clock); then, on
one server, the median of 300 rounds of sequential keep-alive GETs of a cached graph.svg,
a cached graph.png?w=1200, and two anchors that tell its bytes from its lookup: a cached
full-detail graph.svg (more bytes than the PNG) and a cached graph.png?w=100 (about the
SVG's bytes).  A PNG costing more than the SVG only by its bytes costs no more than the
larger SVG, and its small sibling about what the SVG costs.  Prints each figure, its anchor and the ratio to the target.
"""
import http.client
import os
import re
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import time

BIN, REPEAT, MODELS = sys.argv[1], int(sys.argv[2]), sys.argv[3:]


class Server:
    def __init__(self, model):
        self.store = tempfile.mkdtemp(prefix="png-bench-")
        self.proc = subprocess.Popen([BIN, "serve", "--port", "0", "--store", self.store,
                                      "--log-requests=off"], stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True)
        try:
            for line in self.proc.stdout:
                m = re.search(r"listening on http://([^:\s]+):(\d+)", line)
                if m:
                    self.port = int(m.group(2))
                    break
            self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
            with open(model, "rb") as f:
                body = self.req("POST", "/models", f.read())[1]
            self.id = re.search(rb'"id":"([0-9a-f]{64})"', body).group(1).decode()
        except BaseException:
            self.stop()
            raise

    def req(self, method, path, body=None):
        self.conn.request(method, path, body=body, headers={"Content-Type": "application/octet-stream"})
        r = self.conn.getresponse()
        data = r.read()
        return r.status, data

    def get(self, path):
        """(seconds, body) of a GET that must answer 200"""
        t = time.perf_counter()
        status, data = self.req("GET", "/models/%s/%s" % (self.id, path))
        dt = time.perf_counter() - t
        assert status == 200, (path, status, data[:200])
        return dt, data

    def stop(self):
        if getattr(self, "conn", None) is not None:
            self.conn.close()
        self.proc.terminate()
        self.proc.wait(60)
        self.proc.stdout.close()
        shutil.rmtree(self.store, ignore_errors=True)


    def cpu(self):
        """CPU seconds of the server and its reaped children (the layout workers)"""
        with open("/proc/%d/stat" % self.proc.pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return sum(int(x) for x in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def fresh(model, path):
    """(wall seconds, CPU seconds, body) of one GET on a fresh server"""
    s = Server(model)
    try:
        c = s.cpu()
        t, body = s.get(path)
        return t, s.cpu() - c, body
    finally:
        s.stop()


def med(model, path):
    """medians of REPEAT fresh GETs: wall seconds, CPU seconds; and the last body"""
    runs = [fresh(model, path) for _ in range(REPEAT)]
    return (statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs),
            runs[-1][2])


def verdict(ratio):
    return "ok" if ratio <= 1 else "MISSED"


def svg_size(svg):
    m = re.search(rb'<svg[^>]* width="([0-9.]+)" height="([0-9.]+)"', svg)
    return float(m.group(1)), float(m.group(2))


def png_size(png):
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and png[12:16] == b"IHDR", "not a PNG"
    return struct.unpack(">II", png[16:24])


for model in MODELS:
    name = os.path.splitext(os.path.basename(model))[0]
    svg, svg_cpu, _ = med(model, "graph.svg")
    png, png_cpu, _ = med(model, "graph.png?w=1200")
    full_svg, full_svg_cpu, full_svg_body = med(model, "graph.svg?group=none")
    full, full_cpu, full_png = med(model, "graph.png?group=none")
    (pw, ph), (dw, dh) = png_size(full_png), svg_size(full_svg_body)
    print("%s overview: graph.svg %.0f ms, graph.png?w=1200 %.0f ms: +%.0f ms (target <= +150 ms: "
          "ratio %.2f, %s); CPU %.2f s, %.2f s: +%.2f s" % (
              name, svg * 1e3, png * 1e3, (png - svg) * 1e3, (png - svg) / 0.150,
              verdict((png - svg) / 0.150), svg_cpu, png_cpu, png_cpu - svg_cpu))
    print("%s full detail: graph.png %.2f s (its graph.svg %.2f s; target <= 1 s: ratio %.2f, %s); "
          "CPU %.2f s (its graph.svg %.2f s); %u x %u = %.1f MP%s" % (
              name, full, full_svg, full / 1.0, verdict(full), full_cpu, full_svg_cpu, pw, ph,
              pw * ph / 1e6,
              ", scaled down from %.0f x %.0f = %.1f MP (--max-pixels, 32,767 a side)"
              % (dw, dh, dw * dh / 1e6) if pw * ph < dw * dh * 0.99 else ""))
    s = Server(model)
    try:
        paths = ["graph.svg", "graph.png?w=1200", "graph.svg?group=none", "graph.png?w=100"]
        for p in paths:
            s.get(p)
        rounds = [[s.get(p)[0] for p in paths] for _ in range(300)]
        ms, mp, mb, mt = (statistics.median(r[i] for r in rounds) for i in range(4))
        ls, lp, lb, lt = (len(s.get(p)[1]) for p in paths)
        print("%s cached GET: graph.svg %.3f ms (%d bytes), graph.png?w=1200 %.3f ms (%d bytes) "
              "(target: as fast; ratio %.2f); the bytes' share: full-detail graph.svg %.3f ms "
              "(%d bytes; the PNG's ratio to it %.2f), graph.png?w=100 %.3f ms (%d bytes; "
              "ratio %.2f to the SVG)" % (name, ms * 1e3, ls, mp * 1e3, lp, mp / ms, mb * 1e3, lb,
                                         mp / mb, mt * 1e3, lt, mt / ms))
    finally:
        s.stop()
