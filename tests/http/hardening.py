"""http suite, hostile clients at the HTTP level (issue 35; docs/decisions.md 86).

Steps of tests/http/http_test.py (each takes that module as H):
  private caching  with --read-token or --auth-reads, reads are Cache-Control: private
                   (max-age, immutable) with Vary: Authorization; public servers keep
                   public, immutable and no Vary
  token files      --token-file / --read-token-file: the token works, never shows in the
                   process list; a --token flag's value is overwritten in argv (ps shows
                   x...); refused: both ways at once, a file others may write, an empty
                   file, two lines
  host check       DNS rebinding: bound to loopback, a Host other than localhost, a
                   loopback address or an --allowed-hosts name is 403 bad_host; bound to
                   all addresses any Host unless --allowed-hosts is given
  inflate ratio    a gzip bomb is 413 inflate_ratio_exceeded after about the burst
                   (--inflate-ratio-burst), having written a few MB, not the whole
                   decoding; /healthz on a one-thread server stays quick meanwhile
  slow bodies      a body that trickles (never idle for --timeout) is cut after a
                   --timeout window below --min-body-rate, counted and logged; a body at a
                   good rate is not
  body quota       an upload holds --conn-memory and its state against its client's
                   --body-per-client: past it 503 body_quota with Retry-After naming the
                   flag; another client (address, or token) is not refused
"""
import gzip
import os
import socket
import subprocess
import threading
import time
import zlib


def t_private_cache(H):
    check = H.check
    for args, token, private in ((("--token", "w", "--read-token", "r"), "r", True),
                                 (("--token", "w", "--auth-reads"), "w", True),
                                 (("--token", "w"), None, False)):
        s = H.Server(*args)
        try:
            r = H.upload(s, H.SQUEEZENET, token="w")
            mid = (r.json() or {}).get("id", "")
            auth = ["Authorization: Bearer %s" % token] if token else []
            what = "%s: " % " ".join(args)
            for path in ("/graph.svg", "/model.onnx", "/document.json", ""):
                r = H.curl(s.url("/models/%s%s" % (mid, path)), headers=auth)
                cc = r.h("cache-control") or ""
                vary = ",".join(r.headers.get("vary", []))
                if private:
                    check(r.status == 200 and cc == "private, max-age=31536000, immutable" and
                          "Authorization" in vary,
                          what + "%s: private, immutable, Vary: Authorization: %r %r" % (path, cc, vary))
                else:
                    check(r.status == 200 and cc == "public, max-age=31536000, immutable" and
                          "Authorization" not in vary,
                          what + "%s: public, immutable, no Vary: %r %r" % (path, cc, vary))
                etag = r.h("etag")
                if path == "/graph.svg" and etag:
                    r = H.curl(s.url("/models/%s%s" % (mid, path)), headers=auth + ["If-None-Match: " + etag])
                    check(r.status == 304 and (r.h("cache-control") or "").startswith(
                        "private" if private else "public"), what + "a 304 says the same: %r" % r.headers)
        finally:
            check(s.stop() == 0, "server exit (%s)" % " ".join(args))


def cmdline(pid):
    with open("/proc/%d/cmdline" % pid, "rb") as f:
        return f.read()


def t_token_files(H):
    check = H.check
    secret = "flag-secret-5d1e"
    s = H.Server("--token", secret)
    try:
        check(secret.encode() not in cmdline(s.proc.pid) and b"--token\0" + b"x" * len(secret) in cmdline(s.proc.pid),
              "--token's value is overwritten in the process list: %r" % cmdline(s.proc.pid))
        check(H.upload(s, H.SQUEEZENET, token=secret).status == 201, "the flag's token works all the same")
    finally:
        check(s.stop() == 0, "server exit (--token)")
    s = H.Server("--token", "w", "--read-token=read-secret-77")
    try:
        check(b"read-secret-77" not in cmdline(s.proc.pid), "--read-token=VALUE is overwritten too")
    finally:
        check(s.stop() == 0, "server exit (--read-token=)")
    tf = H.write_tmp(b"file-secret-9c2a\r\n", ".token")
    rf = H.write_tmp(b"file-read-31\n", ".token")
    os.chmod(tf, 0o600)
    os.chmod(rf, 0o644)  # readable by others: taken (Docker and Kubernetes secrets are 0444)
    s = H.Server("--token-file", tf, "--read-token-file", rf, "--auth-reads")
    try:
        check(b"file-secret" not in cmdline(s.proc.pid), "a token file's token is not in the process list")
        check(H.upload(s, H.SQUEEZENET, token="wrong").status == 401, "token file: a wrong token is 401")
        r = H.upload(s, H.SQUEEZENET, token="file-secret-9c2a")
        check(r.status == 201, "token file: its line (CRLF dropped) is the token: %r" % r)
        mid = (r.json() or {}).get("id", "")
        r = H.curl(s.url("/models/" + mid), headers=["Authorization: Bearer file-read-31"])
        check(r.status == 200, "read token file: its token reads: %r" % r)
    finally:
        check(s.stop() == 0, "server exit (token files)")

    def refused(args, why):
        store = os.path.join(H.TMP, "refused-store")
        p = subprocess.run([H.BIN, "serve", "--port", "0", "--store", store] + list(args),
                           stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=30, env={k: v for k, v in os.environ.items() if not k.startswith("ONNXVIZ_")})
        err = p.stderr.decode(errors="replace")
        check(p.returncode == 2 and why in err, "refused %r: exit 2, %r: %r %r" % (args, why, p.returncode, err))

    refused(["--token-file", tf, "--token", "x"], "give one of them")
    refused(["--token", "w", "--read-token-file", rf, "--read-token", "r"], "give one of them")
    ww = H.write_tmp(b"secret\n", ".token")
    os.chmod(ww, 0o666)
    refused(["--token-file", ww], "others may write it")
    refused(["--token-file", H.write_tmp(b"", ".token")], "empty")
    refused(["--token-file", H.write_tmp(b"one\ntwo\n", ".token")], "more than one line")
    refused(["--token-file", os.path.join(H.TMP, "no-such-token")], "No such file")
    p = subprocess.run([H.BIN, "serve", "--help"], stdout=subprocess.PIPE, timeout=30)
    check(b"--token-file" in p.stdout and b"process list" in p.stdout, "--help offers --token-file")


def t_host(H):
    check = H.check

    def get(s, host, want, what):
        r = H.curl(s.url("/models"), headers=["Host: " + host] if host is not None else [])
        ok = r.status == want and (want == 200 or r.error_code() == "bad_host")
        check(ok, "%s, Host %r: %d: %r" % (what, host, want, r))

    s = H.Server()  # bound to 127.0.0.1, no token: the DNS rebinding target
    try:
        p = s.port
        for host in ("evil.example", "evil.example:%d" % p, "127.0.0.1.evil.example", "localhost.evil.example",
                     "10.1.2.3", "[::1", "a:b:c", "evil.example:x"):
            get(s, host, 403, "bound to loopback")
        for host in ("127.0.0.1:%d" % p, "localhost:%d" % p, "LOCALHOST", "localhost.", "app.localhost:%d" % p,
                     "[::1]:%d" % p, "127.1.2.3"):
            get(s, host, 200, "bound to loopback")
        out = H.raw_exchange(s, b"GET /healthz HTTP/1.0\r\n\r\n")
        check(out.startswith(b"HTTP/1.0 200") or out.startswith(b"HTTP/1.1 200"),
              "HTTP/1.0 without Host: answered: %r" % out[:80])
        out = H.raw_exchange(s, b"GET /models HTTP/1.1\r\nHost: localhost\r\nHost: evil.example\r\nConnection: close\r\n\r\n")
        check(b" 403 " in out.split(b"\r\n")[0] and b"bad_host" in out, "two Host headers: 403: %r" % out[:120])
        r = H.curl(s.url("/models"), headers=["Host: evil.example"], data=H.make_model())
        check(r.status == 403 and r.error_code() == "bad_host", "an upload naming another host: 403: %r" % r)
    finally:
        check(s.stop() == 0, "server exit (host)")
    # (server flags, [(Host, status, what)])
    for args, cases in (
            (("--allowed-hosts", "models.example, .corp.example"),
             [("models.example:8080", 200, "listed, with a port"), ("MODELS.example", 200, "listed, other case"),
              ("a.b.corp.example", 200, "under a listed .domain"),
              ("corp.example", 403, "the .domain itself is not under it"),
              ("evil.example", 403, "not listed"), ("localhost", 200, "localhost stays allowed")]),
            (("--bind", "0.0.0.0"), [("evil.example", 200, "bound to all addresses, no list: any name")]),
            (("--bind", "0.0.0.0", "--allowed-hosts", "models.example"),
             [("evil.example", 403, "bound to all addresses with a list"),
              ("models.example", 200, "bound to all addresses with a list"),
              ("10.1.2.3:8080", 200, "bound to all addresses: an IP address cannot be rebound")]),
            (("--allowed-hosts", "*"), [("evil.example", 200, "--allowed-hosts '*'")])):
        s = H.Server(*args)
        try:
            for host, want, what in cases:
                get(s, host, want, what)
        finally:
            check(s.stop() == 0, "server exit (%s)" % " ".join(args))


def proc_wchar(pid):
    with open("/proc/%d/io" % pid) as f:
        for line in f:
            if line.startswith("wchar:"):
                return int(line.split()[1])
    return 0


def zeros_gzip(n):
    """gzip of n zero bytes, made a MiB at a time (test input only)."""
    c = zlib.compressobj(9, zlib.DEFLATED, 31)
    block = bytes(1 << 20)
    out = [c.compress(block) for _ in range(n >> 20)]
    return b"".join(out) + c.flush()


def t_inflate(H):
    check = H.check
    gz = ["Content-Type: application/octet-stream", "Content-Encoding: gzip"]
    s = H.Server("--threads", "1")
    try:
        bomb = zeros_gzip(64 << 20)
        before = proc_wchar(s.proc.pid)
        r = H.curl(s.url("/models"), data=bomb, headers=gz)
        wrote = proc_wchar(s.proc.pid) - before
        msg = (r.json() or {}).get("error", {}).get("message", "")
        check(r.status == 413 and r.error_code() == "inflate_ratio_exceeded" and "200 times" in msg and
              "--inflate-ratio-limit" in msg,
              "%d bytes that decode to 64 MiB: 413 naming the ratio and the flag: %r" % (len(bomb), r))
        check(wrote < (8 << 20), "the bomb wrote %.1f MB (the burst and a piece), not its 64 MiB" % (wrote / 1e6))
        print("  inflate: a %d KB gzip bomb of 64 MiB: 413 after %.1f MB written" % (len(bomb) >> 10, wrote / 1e6))
        raw = open(H.SQUEEZENET, "rb").read()
        r = H.curl(s.url("/models"), data=gzip.compress(raw), headers=gz)
        check(r.status == 201, "a model within the ratio: 201: %r" % r)
        check(H.wait_until(lambda: not s.tmp_entries(), 2), "no temporaries after the bomb")
    finally:
        check(s.stop() == 0, "server exit (inflate)")
    # a big decoding within a (raised) ratio on one HTTP thread: it goes in slices, and
    # /healthz on the same thread is answered between them
    s = H.Server("--threads", "1", "--inflate-ratio-limit", "1000000", "--max-upload", "4G")
    try:
        body = zeros_gzip(256 << 20)
        done = threading.Event()
        res = {}

        def post():
            res["r"] = H.curl(s.url("/models"), data=body, headers=gz, timeout=120)
            done.set()

        th = threading.Thread(target=post)
        th.start()
        lat = []
        while not done.is_set():
            t = time.time()
            r = H.curl(s.url("/healthz"), record=False)
            lat.append((time.time() - t, r.status))
            time.sleep(0.02)
        th.join()
        r = res.get("r")
        check(r is not None and r.status == 400, "256 MiB of zeros decoded, then refused as no model: %r" % r)
        worst = max(t for t, _ in lat) if lat else 0
        median = sorted(t for t, _ in lat)[len(lat) // 2] if lat else 99
        check(all(st == 200 for _, st in lat), "healthz answered during the decoding")
        # decoded in one go per read (before the slices), the median was 640 ms here
        check(median < 0.3 * H.SLOW, "healthz between the slices: median %.0f ms" % (median * 1e3))
        print("  inflate: 256 MiB decoded on one HTTP thread; /healthz meanwhile: %d answers, slowest %.0f ms, "
              "median %.0f ms" % (len(lat), worst * 1e3, median * 1e3))
    finally:
        check(s.stop() == 0, "server exit (inflate slices)")


def t_slow_body(H):
    check = H.check
    s = H.Server("--timeout", "2", "--min-body-rate", "1K")
    try:
        c = socket.create_connection(("127.0.0.1", s.port), timeout=10)
        c.sendall(b"POST /models HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/octet-stream\r\n"
                  b"Content-Length: 100000\r\n\r\n")
        t0 = time.time()
        cut = None
        # a byte every 0.5 s: never idle for --timeout (2 s), far below 1 KiB/s
        while time.time() - t0 < 10 * H.SLOW:
            try:
                c.sendall(b"x")
                c.settimeout(0.5)
                if c.recv(4096) == b"":
                    cut = time.time() - t0
                    break
            except socket.timeout:
                continue
            except OSError:
                cut = time.time() - t0
                break
        c.close()
        check(cut is not None and cut < 6 * H.SLOW,
              "a body a byte every 0.5 s (--timeout 2, --min-body-rate 1K): cut after %s s" % cut)
        check(s.metrics().get("onnxviz_slow_bodies_dropped_total") == 1, "counted in /metrics")
        check(any("slower than --min-body-rate" in line for line in s.log), "logged")
        # 4 KiB a second: above the least rate, so it goes on until it is whole
        import onnx
        from onnx import TensorProto, helper
        w = helper.make_tensor("w", TensorProto.FLOAT, [4096], [0.5] * 4096)
        g = helper.make_graph([helper.make_node("Relu", ["w"], ["y"])], "g", [],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4096])], [w])
        model = helper.make_model(g).SerializeToString()
        c = socket.create_connection(("127.0.0.1", s.port), timeout=10)
        c.sendall(b"POST /models HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/octet-stream\r\n"
                  b"Connection: close\r\nContent-Length: %d\r\n\r\n" % len(model))
        for i in range(0, len(model), 4096):
            c.sendall(model[i:i + 4096])
            time.sleep(1.0)
        out = H.read_to_close(c)
        check(out.startswith(b"HTTP/1.1 201"), "a body at 4 KiB/s over %d s: 201: %r" % (len(model) // 4096, out[:60]))
        check(s.metrics().get("onnxviz_slow_bodies_dropped_total") == 1, "that one was not cut")
    finally:
        check(s.stop() == 0, "server exit (slow bodies)")


def hold_upload(s, token=None, source="127.0.0.1"):
    """A raw upload begun and left waiting for the rest of its body."""
    c = socket.create_connection(("127.0.0.1", s.port), timeout=10, source_address=(source, 0))
    c.sendall(b"POST /models HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/octet-stream\r\n" +
              (b"Authorization: Bearer %s\r\n" % token.encode() if token else b"") +
              b"Content-Length: 1000\r\n\r\n0123456789")
    return c


def held(H, s):
    """Until the server has begun the held upload (in flight beside the /metrics asking)."""
    H.wait_until(lambda: s.metrics().get("onnxviz_requests_in_flight", 0) >= 2, 5)


def t_body_quota(H):
    check = H.check
    model = H.make_model()
    s = H.Server("--body-per-client", "200K")  # one upload holds 128K (--conn-memory) and its state
    try:
        c = hold_upload(s)
        held(H, s)
        r = H.curl(s.url("/models"), data=model)
        msg = (r.json() or {}).get("error", {}).get("message", "")
        check(r.status == 503 and r.error_code() == "body_quota" and "--body-per-client" in msg and
              r.h("retry-after"), "a second upload past --body-per-client: 503 with Retry-After: %r" % r)
        r = H.curl(s.url("/models"), data=model, extra=["--interface", "127.0.0.2"])
        check(r.status == 201, "another address is another client: 201: %r" % r)
        c.close()
        check(H.wait_until(lambda: H.curl(s.url("/models"), data=model, record=False).status == 200, 5),
              "once the held upload has ended, the client uploads again")
    finally:
        check(s.stop() == 0, "server exit (body quota)")
    s = H.Server("--token", "t", "--body-per-client", "200K")
    try:
        c = hold_upload(s, token="t", source="127.0.0.2")
        held(H, s)
        r = H.curl(s.url("/models"), data=model, headers=["Authorization: Bearer t"])
        check(r.status == 503 and r.error_code() == "body_quota",
              "with tokens a client is its token, whatever its address: 503: %r" % r)
        c.close()
    finally:
        check(s.stop() == 0, "server exit (body quota, token)")
