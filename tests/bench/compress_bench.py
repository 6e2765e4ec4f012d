"""compress_bench.py — compressed answers (issue 37 item 1; docs/bench.md "Compressed
answers").  For each model: its full-detail SVG (group=none), document.json, layout JSON
(graph.json?group=none) and DOT, plain and gzip'd: bytes on the wire and their ratio;
then the time to first byte (request sent to status line read) of the cached answer,
gzip'd against plain, median of REPEAT each, interleaved, on one kept-alive connection.
Targets (exit 1 when missed): every answer of 64 KB or more at least 4x smaller gzip'd
(smaller ones are listed, their headers weigh as much); a cached gzip'd
answer's first byte no later than 1.5x the plain one's plus 1 ms (it is sent from memory
as the plain one is, compressed once when cached).

usage: compress_bench.py BIN TMP REPEAT MODEL...
"""
import hashlib
import http.client
import os
import re
import statistics
import subprocess
import sys
import time

BIN, TMP, REPEAT = sys.argv[1], sys.argv[2], int(sys.argv[3])
MODELS = sys.argv[4:]
KINDS = [("SVG", "/graph.svg?group=none"), ("document.json", "/document.json"),
         ("layout JSON", "/graph.json?group=none"), ("DOT", "/graph.dot?group=none")]
MIN_RATIO = 4.0
status = 0


def start():
    p = subprocess.Popen([BIN, "serve", "--port", "0", "--store", os.path.join(TMP, "store"),
                          "--log-requests=off", "--layout-timeout", "300"],
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    for raw in p.stderr:
        m = re.search(rb"listening on http://[^ ]+:(\d+)$", raw.rstrip())
        if m:
            return p, int(m.group(1))
    raise SystemExit("the server did not start")


def get(conn, path, gz):
    """(status, headers, body, seconds to the status line)"""
    conn.putrequest("GET", path, skip_accept_encoding=True)
    if gz:
        conn.putheader("Accept-Encoding", "gzip")
    conn.endheaders()
    t0 = time.perf_counter()
    r = conn.getresponse()  # reads the status line and headers
    ttfb = time.perf_counter() - t0
    body = r.read()
    return r.status, dict(r.getheaders()), body, ttfb


def main():
    global status
    p, port = start()
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
        print("%-22s %-14s %12s %11s %7s   %s" % ("model", "answer", "plain B", "gzip B", "ratio",
                                              "first byte cached: gzip / plain (median)"))
        for path in MODELS:
            if not os.path.exists(path):
                print("SKIP %s: missing" % path)
                continue
            with open(path, "rb") as f:
                data = f.read()
            conn.request("POST", "/models", body=data, headers={"Content-Type": "application/octet-stream"})
            r = conn.getresponse()
            r.read()
            mid = hashlib.sha256(data).hexdigest()
            name = os.path.basename(path)[:-5]
            for kind, suffix in KINDS:
                url = "/models/%s%s" % (mid, suffix)
                s1, h1, plain, _ = get(conn, url, False)   # computed (or loaded) and cached
                s2, h2, z, _ = get(conn, url, True)
                if s1 != 200 or s2 != 200:
                    print("%-22s %-14s %d %d" % (name, kind, s1, s2))
                    status = 1
                    continue
                ratio = len(plain) / max(1, len(z))
                tp, tz = [], []
                for _ in range(REPEAT):
                    tp.append(get(conn, url, False)[3])
                    tz.append(get(conn, url, True)[3])
                mp, mz = statistics.median(tp), statistics.median(tz)
                ok = (ratio >= MIN_RATIO or len(plain) < 65536) and \
                    h2.get("Content-Encoding") == "gzip" and mz <= 1.5 * mp + 0.001
                if not ok:
                    status = 1
                print("%-22s %-14s %12d %11d %6.1fx   %.2f / %.2f ms = %.2f%s" % (
                    name, kind, len(plain), len(z), ratio, mz * 1e3, mp * 1e3, mz / mp,
                    "" if ok else "  MISSED"))
    finally:
        p.terminate()
        p.wait(30)
    print("targets: gzip'd >= %.0fx smaller from 64 KB; cached gzip'd first byte <= 1.5x plain + 1 ms: %s"
          % (MIN_RATIO, "met" if status == 0 else "MISSED"))
    return status


if __name__ == "__main__":
    sys.exit(main())
