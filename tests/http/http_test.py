#!/usr/bin/python3
"""http suite: the onnxviz HTTP service, end to end.

Starts the real server (BUILD/onnxviz serve --port 0 --store <tmp>) as often as a test
needs its own configuration, drives it with the curl binary (raw sockets for smuggling,
slow clients and connection limits), and checks statuses, bodies and headers.  Every
response seen is kept and audited at the end for the security headers and JSON errors.
Prints one line per failed check and a summary; exits 1 on any failure.

Every server started is stopped when the suite ends, however it ends (a failed check, an
exception, SIGTERM/SIGINT; SIGKILL of the suite kills them too: PR_SET_PDEATHSIG).

With ONNXVIZ_TEST_S3 set (a JSON object: endpoint, access, secret, bucket; the s3 suite
sets it) every server keeps its store in that bucket instead, under a prefix of its own
(--store s3://BUCKET/<name> --cache-dir <its folder>): the same tests, against the S3
store.
"""
import atexit
import ctypes
import concurrent.futures
import glob
import gzip
import hashlib
import json
import math
import os
import re
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

BUILD = os.environ.get("BUILD", "build")
BIN = os.path.abspath(os.path.join(BUILD, "onnxviz"))
CORPUS = os.environ["ONNXVIZ_CORPUS"]
MODELS = os.path.join(CORPUS, "models")
SQUEEZENET = os.path.join(MODELS, "real", "squeezenet1_1.onnx")
TRANSFORMER = os.path.join(MODELS, "real", "transformer_12x12.onnx")
SILERO = os.path.join(MODELS, "real", "silero_vad_v5.onnx")
SANITIZED = os.environ.get("ONNXVIZ_SANITIZED") == "1"
SLOW = 3 if SANITIZED else 1  # time factor under ASan
TMP = tempfile.mkdtemp(prefix="oxs-http-")
S3 = json.loads(os.environ["ONNXVIZ_TEST_S3"]) if os.environ.get("ONNXVIZ_TEST_S3") else None
S3C = None
if S3:
    sys.dont_write_bytecode = True  # no __pycache__ in the tree
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "s3"))
    import s3lib  # noqa: E402
    S3C = s3lib.S3(S3["endpoint"], S3["access"], S3["secret"], S3.get("region", "default"))

passed = 0
failures = []
RESPONSES = []
_lock = threading.Lock()


def check(cond, what):
    global passed
    with _lock:
        if cond:
            passed += 1
        else:
            failures.append(what)
            print("FAIL:", what, flush=True)
    return cond


skipped = []


def skip(what, why):
    """A check that does not run here, for a reason: counted, and printed as "SKIP what: why"."""
    with _lock:
        skipped.append(what)
    print("  SKIP %s: %s" % (what, why), flush=True)


def summary(suite, t0):
    """The suite's last line: NAME: N passed, N failed, N skipped (the time on the line before)."""
    print("  %s: %.0f s" % (suite, time.time() - t0))
    print("%s: %d passed, %d failed, %d skipped" % (suite, passed, len(failures), len(skipped)), flush=True)


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def write_tmp(data, suffix=".bin"):
    fd, path = tempfile.mkstemp(dir=TMP, suffix=suffix)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    return path


# ---------------------------------------------------------------------------------------
# curl
class Response:
    def __init__(self, method, url, status, headers, body):
        self.method, self.url, self.status = method, url, status
        self.headers, self.body = headers, body

    def h(self, name):
        v = self.headers.get(name.lower())
        return v[0] if v else None

    def json(self):
        try:
            return json.loads(self.body)
        except ValueError:
            return None

    def error_code(self):
        j = self.json()
        return j.get("error", {}).get("code") if isinstance(j, dict) else None

    def __repr__(self):
        return "%s %s -> %s %r" % (self.method, self.url, self.status, self.body[:200])


def parse_headers(text):
    blocks = [b for b in re.split(r"\r?\n\r?\n", text) if b.startswith("HTTP/")]
    headers = {}
    if not blocks:
        return headers
    for line in blocks[-1].splitlines()[1:]:
        if ":" in line:
            k, v = line.split(":", 1)
            headers.setdefault(k.strip().lower(), []).append(v.strip())
    return headers


def curl(url, method=None, headers=(), data=None, data_file=None, form=None, head=False,
         chunked=False, timeout=60, extra=(), record=True):
    fd_b, body_path = tempfile.mkstemp(dir=TMP)
    fd_h, hdr_path = tempfile.mkstemp(dir=TMP)
    os.close(fd_b)
    os.close(fd_h)
    cmd = ["curl", "-sS", "--max-time", str(timeout * SLOW), "-o", body_path, "-D", hdr_path,
           "-w", "%{http_code}"]
    if head:
        cmd.append("-I")
    if method:
        cmd += ["-X", method]
    for h in headers:
        cmd += ["-H", h]
    tmp_data = None
    if data is not None:
        tmp_data = write_tmp(data)
        data_file = tmp_data
    if data_file is not None:
        cmd += ["--data-binary", "@" + data_file]
        if not any(h.lower().startswith("content-type:") for h in headers):
            cmd += ["-H", "Content-Type: application/octet-stream"]
    if form is not None:
        for k, v in form:
            cmd += ["-F", "%s=%s" % (k, v)]
    if chunked:
        cmd += ["-H", "Transfer-Encoding: chunked"]
    cmd += list(extra)
    cmd.append(url)
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    status = int(p.stdout.decode() or "0") if p.stdout.decode().isdigit() else 0
    with open(body_path, "rb") as f:
        body = f.read()
    with open(hdr_path, "r", errors="replace") as f:
        hdrs = parse_headers(f.read())
    if head:
        body = b""  # curl -I writes the headers where the body would go; no body is read
    for path in (body_path, hdr_path, tmp_data):
        if path:
            os.unlink(path)
    r = Response("HEAD" if head else (method or ("POST" if data_file or form else "GET")), url,
                 status, hdrs, body)
    if record:
        with _lock:
            RESPONSES.append(r)
    return r


# ---------------------------------------------------------------------------------------
# The server
SERVERS = []  # every server started, stopped at exit whatever happened
_libc = ctypes.CDLL(None, use_errno=True)


_stopping = threading.Event()


def stop_all_servers():
    if _stopping.is_set():
        return
    _stopping.set()
    for srv in SERVERS:
        if srv.proc.poll() is None:
            srv.proc.kill()
            srv.proc.wait()
    shutil.rmtree(TMP, ignore_errors=True)  # stores, spooled bodies: nothing stays after a failed run


def _on_signal(sig, frame):
    # Stop them here and leave at once: sys.exit would first wait for the test's threads.
    stop_all_servers()
    os._exit(128 + sig)


atexit.register(stop_all_servers)
for _sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
    signal.signal(_sig, _on_signal)


class Server:
    def __init__(self, *args, store=None, preexec=None, env=None):
        self.store = store or tempfile.mkdtemp(dir=TMP, prefix="store-")
        e = {k: v for k, v in os.environ.items() if not k.startswith("ONNXVIZ_")}
        if S3:
            e.update({"AWS_ACCESS_KEY_ID": S3["access"], "AWS_SECRET_ACCESS_KEY": S3["secret"],
                      "AWS_REGION": S3.get("region", "default"), "AWS_ENDPOINT_URL": S3["endpoint"]})
            self.prefix = os.path.basename(self.store.rstrip("/"))
            where = ["--store", "s3://%s/%s" % (S3["bucket"], self.prefix), "--cache-dir", self.store]
        else:
            where = ["--store", self.store]
        e.update(env or {})
        cmd = [BIN, "serve", "--port", "0"] + where + list(args)

        def pre():
            _libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG: dies with the suite
            if preexec:
                preexec()

        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE, env=e, preexec_fn=pre)
        SERVERS.append(self)
        self.log = []
        self.port = None
        ready = threading.Event()

        def drain():
            for raw in self.proc.stderr:
                line = raw.decode("utf-8", "replace").rstrip("\n")
                self.log.append(line)
                m = re.match(r"listening on http://([^ ]+):(\d+)$", line)
                if m:
                    self.port = int(m.group(2))
                    ready.set()
            ready.set()

        self.thread = threading.Thread(target=drain, daemon=True)
        self.thread.start()
        ready.wait(30 * SLOW)
        if self.port is None:
            raise RuntimeError("server did not start: %s" % "\n".join(self.log[-20:]))
        self.base = "http://127.0.0.1:%d" % self.port

    def url(self, path):
        return self.base + path

    def stop(self, sig=signal.SIGTERM, timeout=60):
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            rc = self.proc.wait(timeout * SLOW)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            rc = self.proc.wait()
        self.thread.join(5)
        sanitizer = [i for i, l in enumerate(self.log) if "Sanitizer" in l or "runtime error:" in l]
        if not check(not sanitizer, "sanitizer report from the server"):
            print("\n".join(self.log[sanitizer[0]:sanitizer[0] + 40]), flush=True)
        return rc

    def metrics(self):
        r = curl(self.url("/metrics"), record=False)
        out = {}
        for line in r.body.decode().splitlines():
            if line and not line.startswith("#"):
                k, v = line.rsplit(" ", 1)
                out[k] = float(v)
        return out

    def tmp_entries(self):
        return os.listdir(os.path.join(self.store, "tmp"))

    def model_files(self):
        if S3:
            return [k for k, _ in S3C.list(S3["bucket"], self.prefix + "/models/")]
        return glob.glob(os.path.join(self.store, "models", "*", "*.onnx"))

    def rendering_files(self):
        local = [os.path.join(d, f) for d, _, fs in os.walk(os.path.join(self.store, "renderings"))
                 for f in fs]
        if S3:
            local += [k for k, _ in S3C.list(S3["bucket"], self.prefix + "/renderings/")]
        return local


def upload(s, path, multipart=False, token=None, route="/models", query=""):
    headers = ["Authorization: Bearer %s" % token] if token else []
    if multipart:
        return curl(s.url(route + query), headers=headers, form=[("model", "@" + path)])
    return curl(s.url(route + query), headers=headers, data_file=path)


def wait_until(cond, seconds):
    end = time.time() + seconds * SLOW
    while time.time() < end:
        if cond():
            return True
        time.sleep(0.05)
    return cond()


def corpus_models():
    return sorted(glob.glob(os.path.join(MODELS, "**", "*.onnx"), recursive=True))


def make_chain(n):
    """A deep synthetic graph whose layout takes seconds (test input only)."""
    import random
    from onnx import TensorProto, helper
    rnd = random.Random(1)
    nodes, prev = [], ["x"]
    for i in range(n):
        b = prev[rnd.randrange(max(0, len(prev) - 50), len(prev))]
        nodes.append(helper.make_node("Add", [prev[-1], b], ["v%d" % i], name="add%d" % i))
        prev.append("v%d" % i)
    g = helper.make_graph(nodes, "chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
                          [helper.make_tensor_value_info(prev[-1], TensorProto.FLOAT, [1])])
    return helper.make_model(g).SerializeToString()


def make_model(bad_dims=False):
    """A small model made with onnx (test input only)."""
    import onnx
    from onnx import TensorProto, helper
    w = helper.make_tensor("w", TensorProto.FLOAT, [2], [1.0, 2.0])
    if bad_dims:
        del w.dims[:]
        w.dims.extend([-3])
    node = helper.make_node("Add", ["x", "w"], ["y"], name="add0")
    g = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])], [w])
    m = helper.make_model(g, producer_name="http-test")
    return m.SerializeToString()


# ---------------------------------------------------------------------------------------
# Tests
def t_basics(s):
    r = curl(s.url("/healthz"))
    check(r.status == 200 and r.json() == {"status": "ok"}, "healthz: %r" % r)
    r = curl(s.url("/readyz"))
    check(r.status == 200 and r.json() == {"status": "ready"}, "readyz: %r" % r)
    r = curl(s.url("/metrics"))
    check(r.status == 200 and b"onnxviz_http_requests_total" in r.body and
          (r.h("content-type") or "").startswith("text/plain"), "metrics: %r" % r)
    for name in (b"onnxviz_http_request_duration_seconds_bucket", b"onnxviz_uploads_total",
                 b"onnxviz_upload_bytes_total", b"onnxviz_cache_hits_total",
                 b"onnxviz_cache_misses_total", b"onnxviz_layouts_running",
                 b"onnxviz_layouts_total", b"onnxviz_store_bytes"):
        check(name in r.body, "metrics has %s" % name.decode())
    r = curl(s.url("/openapi.json"))
    check(r.status == 200 and isinstance(r.json(), dict) and "paths" in r.json(), "openapi: %r" % r)
    r2 = curl(s.url("/openapi.json"), headers=["If-None-Match: %s" % r.h("etag")])
    check(r2.status == 304 and r2.body == b"", "openapi 304: %r" % r2)
    for path in ("/", "/index.html"):
        r = curl(s.url(path))
        check(r.status == 200 and (r.h("content-type") or "").startswith("text/html") and
              b"<html" in r.body.lower(), "web page %s: %r" % (path, r))
        check("default-src 'self'" in (r.h("content-security-policy") or ""), "web CSP %s" % path)
    for path in ("/no/such/thing", "/nope.js", "/models/", "/models/abc", "//"):
        r = curl(s.url(path))
        check(r.status == 404 and r.error_code() == "not_found", "404 %s: %r" % (path, r))
    for method, path, allow in (("PUT", "/healthz", "GET, HEAD"), ("DELETE", "/models", "GET, HEAD, POST"),
                                ("GET", "/graph.svg", "POST"), ("POST", "/healthz", "GET, HEAD"),
                                ("OPTIONS", "/models", "GET, HEAD, POST"), ("PATCH", "/metrics", "GET, HEAD")):
        r = curl(s.url(path), method=method)
        check(r.status == 405 and r.h("allow") == allow and r.error_code() == "method_not_allowed",
              "405 %s %s: %r allow=%r" % (method, path, r, r.h("allow")))
    r = curl(s.url("/healthz"), head=True)
    check(r.status == 200 and r.h("content-length") == "16", "HEAD healthz: %r" % r)
    out = raw_exchange(s, b"HEAD /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
    check(out.startswith(b"HTTP/1.1 200") and out.endswith(b"\r\n\r\n") and b"Content-Length: 16" in out,
          "HEAD sends no body: %r" % out[-40:])
    # a body where none is taken is not read
    r = curl(s.url("/healthz"), method="GET", data=b"x" * 100000)
    check(r.status == 413 and r.error_code() == "body_not_allowed", "GET with a body: %r" % r)


def t_corpus_uploads():
    """Every corpus model, raw and multipart: 201 with its SHA-256 once, 200 after."""
    files = corpus_models()
    check(len(files) >= 150, "corpus has %d models" % len(files))
    sums = {f: sha256_file(f) for f in files}
    for multipart in (False, True):
        s = Server("--workers", "3")
        first = {}

        def one(f):
            r = upload(s, f, multipart=multipart)
            return f, r

        with concurrent.futures.ThreadPoolExecutor(4) as ex:
            results = list(ex.map(one, files))
        created = {}
        for f, r in results:
            j = r.json() or {}
            ok = r.status in (200, 201) and j.get("id") == sums[f]
            if not check(ok, "upload %s (%s): %r" % (os.path.relpath(f, MODELS),
                                                      "multipart" if multipart else "raw", r)):
                continue
            if r.status == 201:
                created[sums[f]] = created.get(sums[f], 0) + 1
                check(r.h("location") == "/models/" + sums[f], "Location of %s" % f)
            check(isinstance(j.get("summary"), dict) and j.get("size") == os.path.getsize(f) and
                  j.get("links", {}).get("self") == "/models/" + sums[f], "upload body of %s" % f)
        distinct = set(sums.values())
        check(all(created.get(h) == 1 for h in distinct),
              "each distinct model created exactly once (%d distinct, %d created)" %
              (len(distinct), len(created)))
        again = 0
        for f in files:
            r = upload(s, f, multipart=multipart)
            again += r.status == 200 and (r.json() or {}).get("id") == sums[f]
        check(again == len(files), "re-uploads answered 200 with the id: %d of %d" % (again, len(files)))
        r = curl(s.url("/models?limit=1000"))
        check(r.status == 200 and (r.json() or {}).get("total") == len(distinct),
              "listing counts the distinct models: %r" % (r.json() or {}).get("total"))
        check(len(s.model_files()) == len(distinct) and not s.tmp_entries(), "store files")
        m = s.metrics()
        check(m.get('onnxviz_uploads_total{result="created"}') == len(distinct), "metrics: created")
        print("  corpus %s: %d files, %d distinct, all 201 then 200" %
              ("multipart" if multipart else "raw", len(files), len(distinct)), flush=True)
        check(s.stop() == 0, "server exit after corpus")


def t_parse_errors(s):
    before = len(s.model_files())
    with open(SQUEEZENET, "rb") as f:
        head = f.read(1000)
    r = curl(s.url("/models"), data=head)
    j = (r.json() or {}).get("error", {})
    check(r.status == 400 and j.get("code") in ("truncated", "bad_length") and
          isinstance(j.get("offset"), int) and j.get("path", "").startswith("graph"),
          "truncated model: %r" % r)
    # the failure in a person's words (issue 39, parser/headline.c): the file's size and
    # the least the model needs, no word of the encoding
    check(j.get("headline") == "the file ends early: 1,000 of at least %s bytes — was the "
          "download or copy cut short?" % format(os.path.getsize(SQUEEZENET) - 4, ","),
          "truncated model's headline: %r" % j.get("headline"))
    r = curl(s.url("/models"), data=b"These are my notes.\nNot a model.\n")
    check(r.status == 400 and
          (r.json() or {}).get("error", {}).get("headline") == "this is not an ONNX model: it looks like text",
          "text renamed .onnx: %r" % r)
    r = curl(s.url("/models"), data=b"\x08" + b"\xff" * 10 + b"\x01")
    check(r.status == 400 and r.error_code() == "bad_varint", "11-byte varint: %r" % r)
    r = curl(s.url("/models"), data=b"")
    check(r.status == 422 and r.error_code() == "not_a_model", "empty body: %r" % r)
    r = curl(s.url("/models"), data=b"\x89PNG\r\n\x1a\n" + b"\x00" * 64)
    check(r.status in (400, 422) and r.error_code() not in (None, "internal") and
          (r.json() or {}).get("error", {}).get("headline") == "this is not an ONNX model: it is a PNG image",
          "a PNG: %r" % r)
    r = curl(s.url("/models"), data=make_model(bad_dims=True))
    j = (r.json() or {}).get("error", {})
    check(r.status == 422 and j.get("code") == "bad_dims" and "initializer" in j.get("path", "") and
          j.get("offset", 0) > 0, "negative dims: %r" % r)
    r = curl(s.url("/models"), form=[("model", "@%s;type=application/octet-stream" % write_tmp(head))])
    check(r.status == 400 and r.error_code() in ("truncated", "bad_length") and
          "ends early: 1,000 of" in (r.json() or {}).get("error", {}).get("headline", ""),
          "truncated multipart: %r" % r)
    check(len(s.model_files()) == before, "nothing kept of rejected uploads")
    check(wait_until(lambda: not s.tmp_entries(), 2), "no temporaries left: %r" % s.tmp_entries())


def t_limits():
    s = Server("--max-upload", "1M")
    big = write_tmp(os.urandom(2 << 20))
    t0 = time.time()
    r = curl(s.url("/models"), data_file=big)
    check(r.status == 413 and r.error_code() == "payload_too_large", "413 from Content-Length: %r" % r)
    r = curl(s.url("/models"), data_file=big, chunked=True)
    check(r.status == 413 and r.error_code() == "payload_too_large", "413 while streaming chunked: %r" % r)
    r = curl(s.url("/models"), form=[("model", "@" + big)])
    check(r.status == 413, "413 multipart: %r" % r)
    r = curl(s.url("/graph.svg"), data_file=big)
    check(r.status == 413, "413 one-shot: %r" % r)
    check(time.time() - t0 < 20 * SLOW, "413s are quick")
    r = curl(s.url("/models"), data=b"abc", headers=["Content-Type: text/plain"])
    check(r.status == 415 and r.error_code() == "unsupported_media_type", "415 text/plain: %r" % r)
    # what `curl --data-binary @m.onnx` sends: the body is the raw model
    r = curl(s.url("/models"), data=b"a=b", headers=["Content-Type: application/x-www-form-urlencoded"])
    check(r.status == 400 and r.error_code() not in (None, "unsupported_media_type"),
          "urlencoded a=b is read as a model (and does not parse): %r" % r)
    small = make_model()
    r = curl(s.url("/models"), data=small, headers=["Content-Type: application/x-www-form-urlencoded"])
    check(r.status in (200, 201) and (r.json() or {}).get("id") == hashlib.sha256(small).hexdigest(),
          "a model sent urlencoded is stored: %r" % r)
    r = curl(s.url("/graph.svg"), data=small, headers=["Content-Type: application/x-www-form-urlencoded"])
    check(r.status == 200 and b"<svg" in r.body[:400], "one-shot urlencoded: %r" % r)
    r = curl(s.url("/models"), data=b"--x\r\n", headers=["Content-Type: multipart/form-data"])
    check(r.status == 400 and r.error_code() == "bad_multipart", "multipart without boundary: %r" % r)
    r = curl(s.url("/models"), data=b"--x\r\n", headers=["Content-Type: multipart/form-data; boundary=" + "b" * 4096])
    check(r.status == 400 and r.error_code() == "bad_multipart", "4096-byte boundary: %r" % r)
    r = curl(s.url("/models"), form=[("other", "@" + write_tmp(b"hello"))])
    check(r.status == 400 and r.error_code() == "bad_multipart", "no model part: %r" % r)
    parts = [("f%d" % i, "x") for i in range(40)]
    r = curl(s.url("/models"), form=parts)
    check(r.status == 400 and r.error_code() == "bad_multipart", "too many parts: %r" % r)
    r = curl(s.url("/models/" + "0" * 64 + "/graph.svg?x=" + "a" * 5000))
    check(r.status == 414, "414 long query: %r" % r)
    check(wait_until(lambda: not s.tmp_entries(), 2), "no temporaries after rejections")
    check(s.stop() == 0, "server exit (limits)")


def t_gzip():
    """Content-Encoding: gzip (service/gunzip.c): the model is the decoded body, with the
    id and bytes of a plain upload; two members are one body; cut short, corrupt, followed
    by garbage or empty: 400 bad_encoding, nothing kept; a small body that decodes past
    --max-upload: 413; other codings and gzip'd multipart: 415."""
    import gzip
    # the ratio far up: these are the decoding's own checks (hardening.py: the ratio's)
    s = Server("--max-upload", "8M", "--inflate-ratio-limit", "1000000")
    raw = open(SQUEEZENET, "rb").read()
    mid = hashlib.sha256(raw).hexdigest()
    gz = ["Content-Type: application/octet-stream", "Content-Encoding: gzip"]
    body = gzip.compress(raw)
    r = curl(s.url("/models?name=sq.onnx"), data=body, headers=gz)
    check(r.status == 201 and (r.json() or {}).get("id") == mid and (r.json() or {}).get("size") == len(raw),
          "gzip body: the plain file's id and size: %r" % r)
    r = curl(s.url("/models/" + mid + "/model.onnx"))
    check(r.status == 200 and hashlib.sha256(r.body).hexdigest() == mid, "the stored bytes are the decoded model")
    r = curl(s.url("/models"), data=raw)
    check(r.status == 200 and (r.json() or {}).get("id") == mid, "the same file plain: 200, the same model: %r" % r)
    half = len(raw) // 2
    r = curl(s.url("/models"), data=gzip.compress(raw[:half]) + gzip.compress(raw[half:]), headers=gz,
             chunked=True)
    check(r.status == 200 and (r.json() or {}).get("id") == mid, "two members, chunked: the same model: %r" % r)
    # 4 MiB of zero weights in 4 KB: far more out than in, to the last byte
    from onnx import TensorProto, helper
    w = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[1 << 20])
    w.raw_data = bytes(4 << 20)
    zeros = helper.make_model(helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"])], "zeros", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])], [w])).SerializeToString()
    r = curl(s.url("/models"), data=gzip.compress(zeros), headers=gz)
    check(r.status == 201 and (r.json() or {}).get("id") == hashlib.sha256(zeros).hexdigest(),
          "%d bytes that decode to a %d-byte model: 201, its id: %r" % (len(gzip.compress(zeros)), len(zeros), r))
    r = curl(s.url("/graph.svg"), data=gzip.compress(make_model()), headers=gz)
    check(r.status == 200 and b"<svg" in r.body[:400], "one-shot drawing of a gzip body: %r" % r)
    before = len((curl(s.url("/models")).json() or {}).get("models", []))
    other = make_model()
    zo = gzip.compress(other)
    for what, b, where in (("cut short", zo[:-9], "ends inside a gzip member"),
                           ("not gzip", other, "not valid gzip at byte"),
                           ("garbage after it", zo + b"junk", "not valid gzip at byte"),
                           ("corrupt", zo[:30] + bytes([zo[30] ^ 0xff]) + zo[31:], "not valid gzip"),
                           ("empty", b"", "empty")):
        r = curl(s.url("/models"), data=b, headers=gz)
        e = (r.json() or {}).get("error", {})
        check(r.status == 400 and e.get("code") == "bad_encoding" and where in e.get("message", ""),
              "%s: 400 bad_encoding (%s): %r" % (what, where, r))
    check(len((curl(s.url("/models")).json() or {}).get("models", [])) == before, "nothing kept of the refused bodies")
    bomb = gzip.compress(bytes(64 << 20))  # 64 MiB of zeros in ~64 KB
    r = curl(s.url("/models"), data=bomb, headers=gz)
    check(r.status == 413 and r.error_code() == "payload_too_large" and b"decodes to" in r.body,
          "%d bytes that decode to 64 MiB, over --max-upload 8M: 413: %r" % (len(bomb), r))
    r = curl(s.url("/models"), data=raw, headers=["Content-Type: application/octet-stream", "Content-Encoding: br"])
    check(r.status == 415 and r.error_code() == "unsupported_encoding", "br: 415: %r" % r)
    r = curl(s.url("/models"), form=[("model", "@" + SQUEEZENET)], headers=["Content-Encoding: gzip"])
    check(r.status == 415 and r.error_code() == "unsupported_encoding", "gzip'd multipart: 415: %r" % r)
    r = curl(s.url("/models"), data=raw, headers=["Content-Type: application/octet-stream", "Content-Encoding: identity"])
    check(r.status == 200 and (r.json() or {}).get("id") == mid, "identity is the body as it is: %r" % r)
    # only uploads decode: a resumable part (stored and hashed as sent) or an overlay with a
    # coding is refused rather than misread
    r = curl(s.url("/uploads/" + "0" * 32), method="PATCH", data=gzip.compress(b"x" * 100),
             headers=["Content-Type: application/offset+octet-stream", "Upload-Offset: 0", "Content-Encoding: gzip"])
    check(r.status == 415 and r.error_code() == "unsupported_encoding", "a gzip'd part: 415: %r" % r)
    r = curl(s.url("/models/" + mid + "/overlays"), data=gzip.compress(b"{}"),
             headers=["Content-Type: application/json", "Content-Encoding: gzip"])
    check(r.status == 415 and r.error_code() == "unsupported_encoding", "a gzip'd overlay: 415: %r" % r)
    check(wait_until(lambda: not s.tmp_entries(), 2), "no temporaries after the gzip bodies")
    check(s.stop() == 0, "server exit (gzip)")


def t_auth():
    s = Server("--token", "s3cret")
    r = upload(s, SQUEEZENET)
    check(r.status == 401 and r.error_code() == "unauthorized" and
          (r.h("www-authenticate") or "").startswith("Bearer"), "401 without token: %r" % r)
    r = upload(s, SQUEEZENET, token="wrong")
    check(r.status == 401, "401 wrong token: %r" % r)
    r = upload(s, SQUEEZENET, token="s3cret" + "x")
    check(r.status == 401, "401 longer token: %r" % r)
    r = upload(s, SQUEEZENET, token="s3cret")
    check(r.status == 201, "201 with token: %r" % r)
    mid = sha256_file(SQUEEZENET)
    r = curl(s.url("/models/" + mid))
    check(r.status == 200, "reads stay open with only a write token: %r" % r)
    r = curl(s.url("/graph.svg"), data_file=SQUEEZENET)
    check(r.status == 401, "one-shot needs the token: %r" % r)
    r = curl(s.url("/models/" + mid), method="DELETE")
    check(r.status == 401, "DELETE without token: %r" % r)
    r = curl(s.url("/models/" + mid), method="DELETE", headers=["Authorization: Bearer nope"])
    check(r.status == 401, "DELETE wrong token: %r" % r)
    r = curl(s.url("/models/" + mid + "/graph.svg"))
    check(r.status == 200, "render before delete: %r" % r)
    r = curl(s.url("/models/" + mid), method="DELETE", headers=["Authorization: Bearer s3cret"])
    check(r.status == 204 and r.body == b"", "DELETE with token: %r" % r)
    for path in ("", "/graph.svg", "/model.onnx", "/document.json"):
        r = curl(s.url("/models/" + mid + path))
        check(r.status == 404, "after delete %s: %r" % (path, r))
    r = curl(s.url("/models/" + mid), method="DELETE", headers=["Authorization: Bearer s3cret"])
    check(r.status == 404, "DELETE twice: %r" % r)
    check(not s.model_files() and not s.rendering_files(),
          "delete removed the model and its renderings")
    check(s.stop() == 0, "server exit (token)")

    s = Server("--token", "w", "--read-token", "r")
    r = curl(s.url("/models"))
    check(r.status == 401, "read token: GET /models without: %r" % r)
    for tok in ("r", "w"):
        r = curl(s.url("/models"), headers=["Authorization: Bearer " + tok])
        check(r.status == 200, "read with token %s: %r" % (tok, r))
    r = upload(s, SQUEEZENET, token="r")
    check(r.status == 401, "the read token cannot upload: %r" % r)
    for path in ("/healthz", "/readyz", "/metrics", "/openapi.json", "/"):
        check(curl(s.url(path)).status == 200, "%s stays open" % path)
    check(s.stop() == 0, "server exit (read token)")

    s = Server("--token", "w", "--auth-reads")
    check(curl(s.url("/models")).status == 401, "--auth-reads: 401 without")
    check(curl(s.url("/models"), headers=["Authorization: Bearer w"]).status == 200, "--auth-reads: 200 with")
    check(s.stop() == 0, "server exit (auth-reads)")

    s = Server()
    upload(s, SQUEEZENET)
    r = curl(s.url("/models/" + mid), method="DELETE", headers=["Authorization: Bearer anything"])
    check(r.status == 403 and r.error_code() == "forbidden", "DELETE without a configured token: %r" % r)
    check(s.stop() == 0, "server exit (no token)")


def t_rate_limit():
    s = Server("--upload-rate", "2")
    small = write_tmp(make_model())
    codes = [upload(s, small).status for _ in range(3)]
    r = upload(s, small)
    check(codes[:2] in ([201, 200], [200, 200]) and codes[2] == 429, "rate limit statuses: %r" % codes)
    check(r.status == 429 and r.error_code() == "rate_limited" and
          (r.h("retry-after") or "").isdigit() and int(r.h("retry-after")) >= 1, "429 + Retry-After: %r" % r)
    check(curl(s.url("/models")).status == 200, "reads are not rate limited")
    check(s.stop() == 0, "server exit (rate)")


def t_queue_full():
    s = Server("--layout-workers", "1", "--layout-queue", "1")
    mid = upload(s, TRANSFORMER).json()["id"]
    variants = ["group=none&rankdir=%s&attrs=%s&shapes=%s" % (rd, at, sh)
                for rd in ("TB", "LR") for at in ("none", "all") for sh in ("on", "off")]
    with concurrent.futures.ThreadPoolExecutor(len(variants)) as ex:
        rs = list(ex.map(lambda q: curl(s.url("/models/%s/graph.svg?%s" % (mid, q))), variants))
    codes = sorted(r.status for r in rs)
    full = [r for r in rs if r.status == 503]
    check(set(codes) <= {200, 503} and full, "a full layout queue answers 503: %r" % codes)
    check(all(r.error_code() == "layout_queue_full" and (r.h("retry-after") or "").isdigit() for r in full),
          "503 carries layout_queue_full and Retry-After")
    for q, r in zip(variants, rs):
        if r.status == 503:
            r2 = curl(s.url("/models/%s/graph.svg?%s" % (mid, q)))
            check(r2.status == 200, "retry after 503: %r" % r2)
    print("  layout queue: %d of %d requests got 503" % (len(full), len(variants)), flush=True)
    check(s.stop() == 0, "server exit (queue)")


def t_layout_killed():
    """A layout over its time limit: the worker is killed, 422, remembered, server fine."""
    s = Server("--layout-timeout", "1")
    mid = curl(s.url("/models"), data=make_chain(10000)).json()["id"]
    t0 = time.time()
    r = curl(s.url("/models/%s/graph.svg?group=none" % mid))
    took = time.time() - t0
    check(r.status == 422 and r.error_code() == "layout_timeout" and took < 10 * SLOW,
          "layout over its limit: 422 timeout in %.1f s: %r" % (took, r))
    killed = 'onnxviz_layouts_total{result="killed"}'
    check(s.metrics().get(killed) == 1, "layouts killed counted")
    t0 = time.time()
    r = curl(s.url("/models/%s/graph.svg?group=none" % mid))
    check(r.status == 422 and time.time() - t0 < 1 * SLOW and s.metrics().get(killed) == 1,
          "the failure is remembered, no second layout: %r" % r)
    check(curl(s.url("/healthz")).status == 200, "server alive after a killed layout")
    sq = upload(s, SQUEEZENET).json()["id"]
    check(curl(s.url("/models/%s/graph.svg" % sq)).status == 200, "other layouts still work")
    check(s.stop() == 0, "server exit (killed layout)")


def t_file_backed():
    """Renderings too big for the memory cache are answered from their file."""
    s = Server("--memory-cache", "64K")
    mid = upload(s, SQUEEZENET).json()["id"]
    url = s.url("/models/%s/graph.svg" % mid)
    r1 = curl(url)
    r2 = curl(url)
    check(r1.status == 200 and r2.status == 200 and r1.body == r2.body and len(r1.body) > 8192,
          "big rendering answered again from its file")
    check(r1.h("etag") == r2.h("etag"), "the same ETag from memory and from the file: %r %r" %
          (r1.h("etag"), r2.h("etag")))
    check(curl(url, headers=["If-None-Match: " + (r1.h("etag") or "")]).status == 304, "304 from the file entry")
    check(s.metrics().get('onnxviz_cache_hits_total{tier="store"}', 0) >= 1, "store hits counted")
    r = curl(s.url("/graph.svg"), data_file=SQUEEZENET)
    check(r.status == 200 and r.body == r1.body and r.h("x-model-id") == mid, "one-shot from the file entry: %r" % r)
    check(s.stop() == 0, "server exit (file-backed)")


def t_storage():
    s = Server("--store-budget", "64K")
    r = upload(s, SQUEEZENET)
    check(r.status == 507 and r.error_code() == "insufficient_storage", "507 over the budget: %r" % r)
    r = curl(s.url("/models"), data=make_model())
    check(r.status == 201, "a small model still fits: %r" % r)
    check(wait_until(lambda: not s.tmp_entries(), 2), "no temporaries after 507")
    check(s.stop() == 0, "server exit (budget)")

    def small_files():
        resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, 1 << 20))

    s = Server(preexec=small_files)  # writes beyond 1 MiB fail with EFBIG, like a full disk
    r = upload(s, SQUEEZENET)
    check(r.status == 507 and r.error_code() == "insufficient_storage", "507 while streaming (EFBIG): %r" % r)
    r = upload(s, SQUEEZENET, multipart=True)
    check(r.status == 507, "507 while streaming multipart: %r" % r)
    check(wait_until(lambda: not s.tmp_entries(), 2) and not s.model_files(), "nothing kept after 507")
    check(curl(s.url("/models"), data=make_model()).status == 201, "small uploads still work")
    check(s.stop() == 0, "server exit (fsize)")


def t_cache_etag(s, mid):
    base = s.url("/models/" + mid)
    r1 = curl(base + "/graph.svg")
    etag = r1.h("etag")
    check(r1.status == 200 and r1.body.lstrip().startswith(b"<?xml") and b"<svg" in r1.body,
          "graph.svg: %r" % r1)
    check(r1.h("cache-control") == "public, max-age=31536000, immutable", "immutable caching")
    check(etag and re.match(r'^"[0-9a-f]{32}"$', etag), "strong ETag: %r" % etag)
    r2 = curl(base + "/graph.svg", headers=["If-None-Match: " + etag])
    check(r2.status == 304 and r2.body == b"" and r2.h("etag") == etag, "304: %r" % r2)
    r3 = curl(base + "/graph.svg", headers=['If-None-Match: "other", W/' + etag])
    check(r3.status == 304, "304 from a list with a weak tag: %r" % r3)
    r4 = curl(base + "/graph.svg", headers=['If-None-Match: "other"'])
    check(r4.status == 200 and r4.body == r1.body, "200 for another tag")
    r5 = curl(base + "/graph.svg", head=True)
    check(r5.status == 200 and r5.h("content-length") == str(len(r1.body)), "HEAD graph.svg: %r" % r5)
    r = curl(base + "/graph.dot")
    check(r.status == 200 and b"digraph" in r.body[:200] and r.h("content-type").startswith("text/vnd.graphviz"),
          "graph.dot: %r" % r)
    r = curl(base + "/graph.json")
    check(r.status == 200 and isinstance(r.json(), dict), "graph.json: %r" % r)
    r = curl(base + "/graph.svg?rankdir=LR&shapes=off")
    check(r.status == 200 and r.body != r1.body, "options change the rendering")
    # hide= is part of the cache key: another drawing, one per set of op types (any order)
    h1 = curl(base + "/graph.json?group=none&hide=Relu,Concat")
    h2 = curl(base + "/graph.json?group=none&hide=Concat,Relu,Relu")
    h0 = curl(base + "/graph.json?group=none")
    check(h1.status == 200 and (h1.json() or {}).get("hidden", {}).get("nodes", 0) > 0 and
          h1.h("etag") == h2.h("etag") and h1.h("etag") != h0.h("etag") and "hidden" not in (h0.json() or {}),
          "hide= in the cache key: %r %r %r" % (h1, h2.h("etag"), h0.h("etag")))
    for q in ("hide=a-b", "hide=Relu,,Add", "hide=" + ",".join("Op%d" % i for i in range(33))):
        r = curl(base + "/graph.svg?" + q)
        check(r.status == 400 and "hide" in ((r.json() or {}).get("error") or {}).get("message", ""),
              "bad option %s: %r" % (q[:30], r))
    for q, needle in (("rankdir=XY", "rankdir"), ("colour=red", "colour"), ("depth=1&depth=2", "twice"),
                      ("group=%zz", "malformed"), ("dims=batch", "dims"), ("dims=a:1,a:2", "dims")):
        r = curl(base + "/graph.svg?" + q)
        msg = ((r.json() or {}).get("error") or {}).get("message", "")
        check(r.status == 400 and needle in msg, "bad option %s: %r" % (q, r))
    r = curl(base + "/document.json")
    check(r.status == 200 and (r.json() or {}).get("format") == "onnxviz.document/1", "document.json: %r" % r)
    check(curl(base + "/document.json", headers=["If-None-Match: " + r.h("etag")]).status == 304, "document 304")
    # cost.json (docs/cost.md): the total is the sum of its nodes; cached (304); dims checked
    r = curl(base + "/cost.json")
    c = r.json() or {}
    check(r.status == 200 and c.get("format") == "onnxviz.cost/1" and c["total"]["macs"] > 0
          and c["total"]["macs"] == sum(n.get("macs", 0) for n in c["nodes"]), "cost.json: %r" % r)
    check(curl(base + "/cost.json", headers=["If-None-Match: " + r.h("etag")]).status == 304, "cost 304")
    r2 = curl(base + "/cost.json?dims=batch:1")
    check(r2.status == 200 and (r2.json() or {}).get("dims") == {"batch": 1}
          and r2.json()["total"]["macs"] == c["total"]["macs"], "cost.json?dims: %r" % r2)
    for q in ("dims=batch", "dims=a:1,a:2", "dim=a:1"):
        r2 = curl(base + "/cost.json?" + q)
        check(r2.status == 400 and r2.error_code() == "bad_query", "cost.json?%s: %r" % (q, r2))
    # heat overlays (docs/overlays.md): the built-in cost as box fills; layout JSON adds up
    # to cost.json's total; bad overlay, metric and scale values are 400s
    r = curl(base + "/graph.svg?overlay=cost&metric=macs&scale=log")
    check(r.status == 200 and b'class="legend heat-legend"' in r.body and b"macs (MACs)" in r.body,
          "graph.svg?overlay=cost: %r" % r)
    r = curl(base + "/graph.json?overlay=cost&metric=macs&group=none")
    lay = r.json() or {}
    check(r.status == 200 and lay.get("heat", {}).get("metric") == "macs"
          and abs(sum(b["heat"]["value"] for b in lay["nodes"] if "heat" in b) - c["total"]["macs"]) < 1,
          "graph.json?overlay=cost: boxes add up to the MACs: %r" % r)
    r = curl(base + "/graph.dot?overlay=cost")
    check(r.status == 200 and b"fillcolor" in r.body, "graph.dot?overlay=cost: %r" % r)
    for q, needle in (("overlay=/etc/passwd", "overlay"), ("overlay=cost&metric=nosuch", "no metric"),
                      ("metric=macs", "go with overlay"), ("overlay=cost&scale=cubic", "scale"),
                      ("overlay=cost&overlay=cost", "once")):
        r = curl(base + "/graph.svg?" + q)
        msg = ((r.json() or {}).get("error") or {}).get("message", "")
        check(r.status == 400 and needle in msg, "heat query %s: %r" % (q, r))
    # stored overlays: a profile in ORT's form (built here from the model's node names),
    # its table (exact sums, the unmatched markup name as text), its drawing; bad files 422
    names = [n["name"] for n in (curl(base + "/document.json").json() or {}).get("nodes", []) if n["name"]][:5]
    prof = [{"cat": "Session", "name": "model_run", "ts": 0, "dur": 1000, "ph": "X"}]
    prof += [{"cat": "Node", "name": n + "_kernel_time", "ts": i + 1, "dur": 10 * (i + 1), "ph": "X",
              "args": {"op_name": "X", "provider": "CPUExecutionProvider"}} for i, n in enumerate(names)]
    prof.append({"cat": "Node", "name": "<script>x</script>_kernel_time", "ts": 99, "dur": 7, "ph": "X"})
    r = curl(base + "/overlays", method="POST", data=json.dumps(prof).encode(),
             headers=["Content-Type: application/json"])
    o = r.json() or {}
    check(r.status == 201 and o.get("source") == "ort-profile" and o.get("matched") == len(names) == 5
          and o.get("unmatched") == 1, "POST overlays: %r" % r)
    oid = o.get("id", "0" * 64)
    r = curl(base + "/overlays/" + oid)
    t = r.json() or {}
    check(r.status == 200 and t.get("total") == 157 and sum(n["values"]["dur.total"] for n in t.get("nodes", [])) == 150
          and t["unmatched"][0]["name"] == "<script>x</script>", "GET overlay table: %r" % r)
    r = curl(base + "/graph.svg?overlay=%s&metric=dur.total&scale=log" % oid)
    check(r.status == 200 and b"dur.total (us)" in r.body and b"<script" not in r.body, "graph.svg?overlay=ID: %r" % r)
    for body, status in ((b"node,t\nx,nan\n", 422), (b"", 400), (b"[" * 5000, 422)):
        r = curl(base + "/overlays", method="POST", data=body)
        check(r.status == status, "POST overlays %r: %r" % (body[:20], r))
    check(curl(base + "/overlays/" + "0" * 64).status == 404, "unknown overlay: 404")
    check(curl(base + "/graph.svg?overlay=" + "0" * 64).status == 404, "drawing an unknown overlay: 404")
    # two overlays compared (issue 38): B has the first four nodes at twice the time and not
    # the fifth: B - A per node, adding up to 200 - 150; the fifth marked as only in A
    prof_b = [prof[0]] + [dict(e, dur=2 * e["dur"]) for e in prof[1:5]]
    r = curl(base + "/overlays", method="POST", data=json.dumps(prof_b).encode())
    bid = (r.json() or {}).get("id", "0" * 64)
    r = curl(base + "/overlays/%s?compare=%s" % (oid, bid))
    t = r.json() or {}
    cmp_ = t.get("compare", {})
    sides = sorted(n.get("side") for n in t.get("nodes", []))
    check(r.status == 200 and t.get("source") == "compare" and cmp_.get("sum_a") == 150 and cmp_.get("sum_b") == 200
          and sum(n["values"]["diff"] for n in t["nodes"]) == 50 and cmp_.get("only_a") == 1
          and sides == ["a", "both", "both", "both", "both"] and t["nodes"][0]["values"]["ratio"] in (2, None),
          "GET overlay ?compare=: B - A per node, one node only in A: %r" % r)
    r = curl(base + "/graph.svg?overlay=%s&compare=%s" % (oid, bid))
    check(r.status == 200 and b"faster" in r.body and b"only in A" in r.body, "graph.svg?overlay=A&compare=B: %r" % r)
    for q, status in (("compare=" + bid, 400), ("overlay=cost&compare=" + bid, 400),
                      ("overlay=%s&compare=%s" % (oid, "0" * 64), 404), ("overlay=%s&compare=x" % oid, 400)):
        r = curl(base + "/graph.svg?" + q)
        check(r.status == status, "compare query %s: %r" % (q, r))
    t_overlay_compare_post(base, prof, prof_b, oid, bid, t)
    # blocks: each name scope down to depth 3 sums the MACs of the main graph's nodes under
    # it (a node's name without its last component), counted here from document.json
    doc = curl(base + "/document.json").json() or {}
    macs = {n["id"]: n.get("macs", 0) for n in c["nodes"]}
    want = {}
    for n in doc.get("nodes", []):
        if n.get("scope") != "":
            continue
        parts = [p for p in (n.get("name") or "").split("/")][:-1]
        parts = [p for p in parts if p]
        for d in range(1, min(len(parts), 3) + 1):
            k = "/" + "/".join(parts[:d])
            w = want.setdefault(k, [0, 0])
            w[0] += 1
            w[1] += macs.get(n["id"], 0)
    got = {b["path"]: [b["nodes"], b["macs"]] for b in c.get("blocks", [])}
    check(len(want) > 5 and got == want, "cost.json blocks: %d of %d agree" %
          (sum(1 for k in want if got.get(k) == want[k]), len(want)))
    # dims= on drawings binds the MAC rows' dims; a bad binding is a 400 naming it
    r2 = curl(base + "/graph.svg?dims=batch:1")
    check(r2.status == 200 and b"MACs" in r2.body, "graph.svg?dims: %r" % r2)
    r = curl(base)
    check(r.status == 200 and r.json().get("id") == mid and "summary" in r.json(), "summary: %r" % r)
    check(curl(base, headers=["If-None-Match: " + r.h("etag")]).status == 304, "summary 304")
    r = curl(base + "/model.onnx")
    with open(SQUEEZENET, "rb") as f:
        check(r.status == 200 and r.body == f.read(), "model.onnx bytes")
    check(r.h("etag") == '"%s"' % mid and (r.h("content-disposition") or "").startswith("attachment"),
          "model.onnx headers: %r" % r.headers)
    check(curl(base + "/model.onnx", headers=['If-None-Match: "%s"' % mid]).status == 304, "model.onnx 304")
    for path in ("/graph.svg", "/model.onnx", "", "/nodes/n0", "/search?q=x"):
        r = curl(s.url("/models/" + "f" * 64 + path))
        check(r.status == 404 and r.error_code() == "not_found", "unknown model %s: %r" % (path, r))
    m = s.metrics()
    check(m.get('onnxviz_cache_hits_total{tier="memory"}', 0) >= 3, "memory cache hits counted")


def t_overlay_compare_post(base, prof, prof_b, oid, bid, want):
    """POST /models/{id}/overlays comparing two profiles in one request (issue 38): the parts
    a and b of a multipart body (each stored as a single POST stores it), or {"compare": [A,
    B]} naming two stored overlays; both answer the comparison GET .../overlays/A?compare=B
    answers (want), with the ids, the largest changes and the links; each malformed form 4xx."""
    pa, pb = write_tmp(json.dumps(prof).encode(), ".json"), write_tmp(json.dumps(prof_b).encode(), ".json")
    r = curl(base + "/overlays", form=[("a", "@" + pa), ("b", "@" + pb)])
    o = r.json() or {}
    tbl = o.get("table", {})
    check(r.status == 201 and o.get("a") == oid and o.get("b") == bid and tbl == want
          and o.get("posted", {}).get("a", {}).get("id") == oid and o["posted"]["b"].get("matched") == 4,
          "POST overlays a+b: the same comparison as GET ?compare=: %r" % r)
    nodes, sums = tbl.get("nodes", []), tbl.get("compare", {})
    check(sum(n["values"]["diff"] for n in nodes) == sums.get("sum_b", 0) - sums.get("sum_a", 0) == 50
          and [n.get("side") for n in nodes if n.get("side") != "both"] == ["a"]
          and [n for n in nodes if n.get("side") == "a"][0]["values"]["b"] in (0, None),
          "POST a+b: sums of differences are the difference of sums; the one-sided node marked: %r" % tbl)
    check(o.get("top") == nodes[:20] and o.get("compare") == tbl.get("compare")
          and o.get("links", {}).get("table") == "%s/overlays/%s?compare=%s" % (base[base.index("/models"):], oid, bid)
          and o["links"].get("graph.svg") == "%s/graph.svg?overlay=%s&compare=%s" % (base[base.index("/models"):], oid, bid),
          "POST a+b: top changes and links: %r" % o.get("links"))
    r = curl(base + "/overlays", method="POST", data=json.dumps({"compare": [oid, bid]}).encode(),
             headers=["Content-Type: application/json"])
    o2 = r.json() or {}
    check(r.status == 200 and o2.get("table") == want and o2.get("a") == oid and "posted" not in o2
          and o2.get("top") == o.get("top") and o2.get("links") == o.get("links"),
          "POST {compare: [A, B]}: the same comparison: %r" % r)
    # the other way round: B - A of B's metric, so every difference changes sign
    r = curl(base + "/overlays", method="POST", data=json.dumps({"compare": [bid, oid]}).encode())
    t2 = (r.json() or {}).get("table", {})
    check(r.status == 200 and t2.get("compare", {}).get("sum_diff") == -50, "POST {compare: [B, A]}: %r" % r)
    # hostile: a third part, b missing, b not a profile, a and b the same file, ids not
    # stored, the same id twice, not ids, ?optimized= with two profiles, both over the bound
    junk = write_tmp(b"node,t\nx,nan\n", ".csv")
    big = write_tmp(b"x" * (17 << 20), ".csv")
    for form, status, code in (([("a", "@" + pa), ("b", "@" + pb), ("c", "@" + pb)], 400, "bad_multipart"),
                               ([("a", "@" + pa)], 400, "bad_multipart"),
                               ([("b", "@" + pb)], 400, "bad_multipart"),
                               ([("a", "@" + pa), ("b", "@" + junk)], 422, None),
                               ([("a", "@" + pa), ("b", "@" + pa)], 400, "same_overlay"),
                               ([("a", "@" + pa), ("a", "@" + pb)], 400, "bad_multipart"),
                               ([("a", "@" + big), ("b", "@" + big)], 413, "payload_too_large")):
        r = curl(base + "/overlays", form=form)
        check(r.status == status and (code is None or r.error_code() == code),
              "POST overlays parts %s: %r" % ([k for k, _ in form], r))
    r = curl(base + "/overlays", form=[("a", "@" + pa), ("b", "@" + junk)])
    check("part 'b'" in ((r.json() or {}).get("error") or {}).get("message", ""), "the failed part named: %r" % r)
    for body, status, code in (({"compare": [oid, "0" * 64]}, 404, "not_found"),
                               ({"compare": [oid, oid]}, 400, "bad_compare"),
                               ({"compare": [oid]}, 400, "bad_compare"),
                               ({"compare": [oid, bid, bid]}, 400, "bad_compare"),
                               ({"compare": [oid, "../x"]}, 400, "bad_compare"),
                               ({"compare": [oid, bid], "x": 1}, 400, "bad_compare"),
                               ({"compare": "x"}, 400, "bad_compare")):
        r = curl(base + "/overlays", method="POST", data=json.dumps(body).encode())
        check(r.status == status and r.error_code() == code, "POST overlays %s: %r" % (json.dumps(body)[:60], r))
    r = curl(base + "/overlays?optimized=" + "0" * 64, form=[("a", "@" + pa), ("b", "@" + pb)])
    check(r.status == 400 and r.error_code() == "bad_query", "two profiles with ?optimized=: %r" % r)
    for path in (pa, pb, junk, big):
        os.unlink(path)


def t_overlay_optimized(s, mid):
    """A real ONNX Runtime profile of squeezenet (tests/ort/run.mjs, optimizations on) with
    ORT's optimized model: posted alone, a kernel only the optimized model explains stays
    unmatched; with ?optimized=<the optimized model's id> (uploaded with POST /models) the
    coverage is 100% and every microsecond of the profile is on a node."""
    ort = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "ort")
    p = subprocess.run(["sh", os.path.join(ort, "setup.sh")], capture_output=True, text=True)
    if not check(p.returncode == 0, "tests/ort/setup.sh: %s" % (p.stdout + p.stderr)[-300:]):
        return
    prefix = os.path.join(TMP, "sq_prof")
    opt_model = os.path.join(TMP, "sq.opt.onnx")
    p = subprocess.run(["node", os.path.join(ort, "run.mjs"), SQUEEZENET, "--random", "1", "--runs", "2",
                        "--opt", "all", "--profile", prefix, "--optimized", opt_model, "--out", os.devnull],
                       capture_output=True, text=True)
    m = re.search(r"^profile: (.*)$", p.stderr, re.M)
    if not check(p.returncode == 0 and m and os.path.exists(opt_model), "ORT profiled squeezenet: %s" % p.stderr[-300:]):
        return
    body = open(m.group(1), "rb").read()
    kernel = sum(e["dur"] for e in json.loads(body) if e.get("cat") == "Node" and e["name"].endswith("_kernel_time"))
    base = s.url("/models/" + mid)
    r = curl(base + "/overlays", method="POST", data=body)
    plain = r.json() or {}
    check(r.status == 201 and 0.95 <= plain.get("coverage", 0) and (plain.get("coverage") == 1) == (plain.get("unmatched") == 0)
          and "optimized" not in plain and plain.get("id") == hashlib.sha256(body).hexdigest(),
          "a real profile without the optimized model: coverage >= 95%%: %r" % r)
    # what no name matched went by op type, shapes and order, or as a neighbour (issue 38),
    # each kernel listed with how; every microsecond on a node or unmatched
    t = curl(base + "/overlays/" + plain.get("id", "0" * 64)).json() or {}
    check(all(i["how"] in ("op-shapes-order", "neighbour") for i in t.get("inferred", [])) and
          sum(n["values"]["dur.total"] for n in t.get("nodes", [])) + sum(u["value"] for u in t.get("unmatched", [])) == kernel,
          "without the optimized model: the kernels matched without a name say how (%d)" % len(t.get("inferred", [])))
    opt_id = sha256_file(opt_model)
    r = curl(base + "/overlays?optimized=" + opt_id, method="POST", data=body)
    check(r.status == 422 and r.error_code() == "no_optimized_model", "optimized model not uploaded yet: %r" % r)
    check(upload(s, opt_model).status in (200, 201), "upload the optimized model")
    r = curl(base + "/overlays?optimized=" + opt_id, method="POST", data=body)
    o = r.json() or {}
    tagged = ("onnxviz:optimized=%s\n" % opt_id).encode() + body
    check(r.status == 201 and o.get("coverage") == 1 and o.get("unmatched") == 0 and o.get("optimized") == opt_id
          and o.get("id") == hashlib.sha256(tagged).hexdigest() != plain.get("id"),
          "with ?optimized=: coverage 100%%, its own id: %r" % r)
    oid = o.get("id", "0" * 64)
    r = curl(base + "/overlays/" + oid)
    t = r.json() or {}
    check(r.status == 200 and t.get("total") == kernel == t.get("attributed") and not t.get("unmatched")
          and sum(n["values"]["dur.total"] for n in t.get("nodes", [])) == kernel,
          "GET the table: every microsecond of the profile on a node (%d us): %r" % (kernel, r))
    # drawn by the worker through the optimized model as well
    r = curl(base + "/graph.svg?overlay=%s&metric=dur.total" % oid)
    check(r.status == 200 and b"coverage 100.00% \xc2\xb7 0 unmatched" in r.body, "graph.svg with the optimized model: %r" % r)
    r = curl(base + "/graph.svg?overlay=%s&metric=dur.total" % plain.get("id", "0" * 64))
    cov = ("coverage %.2f%%" % (math.floor(10000 * plain.get("coverage", 0)) / 100)).encode()
    check(r.status == 200 and cov in r.body, "graph.svg without it: %s: %r" % (cov, r))
    r = curl(base + "/graph.json?group=none&overlay=%s&metric=dur.total" % oid)
    lay = r.json() or {}
    check(r.status == 200 and sum(b["heat"]["value"] for b in lay.get("nodes", []) if "heat" in b) == kernel,
          "graph.json with the optimized model: the boxes add up to the profile: %r" % r)
    # a provider's own metric, '@' as it is and percent-encoded
    for m in ("dur.total@CPUExecutionProvider", "dur.mean%40CPUExecutionProvider"):
        r = curl(base + "/graph.svg?overlay=%s&metric=%s" % (oid, m))
        check(r.status == 200 and m.replace("%40", "@").encode() + b" (us)" in r.body, "graph.svg?metric=%s: %r" % (m, r))
    for q in ("?optimized=xyz", "?optimized=%s&optimized=%s" % (opt_id, opt_id), "?other=1"):
        r = curl(base + "/overlays" + q, method="POST", data=body)
        check(r.status == 400 and r.error_code() == "bad_query", "POST overlays%s: %r" % (q[:30], r))
    r = curl(base + "/overlays", method="POST", data=tagged)
    check(r.status == 422 and r.error_code() == "bad_overlay", "a file starting like a stored overlay: %r" % r)


def t_single_flight(s, mid):
    q = "group=none&attrs=none&depth=2"
    m0 = s.metrics()
    with concurrent.futures.ThreadPoolExecutor(6) as ex:
        rs = list(ex.map(lambda _: curl(s.url("/models/%s/graph.svg?%s" % (mid, q))), range(6)))
    check(all(r.status == 200 for r in rs) and len({r.body for r in rs}) == 1, "6 concurrent: same 200s")
    m1 = s.metrics()
    ok = 'onnxviz_layouts_total{result="ok"}'
    check(m1.get(ok, 0) - m0.get(ok, 0) == 1, "the layout ran once for 6 concurrent requests (%r)" %
          (m1.get(ok, 0) - m0.get(ok, 0)))


def t_nodes_search_list(s, mid):
    base = s.url("/models/" + mid)
    r = curl(base + "/nodes/n0")
    check(r.status == 200 and isinstance(r.json(), dict) and r.h("etag"), "node n0: %r" % r)
    check(curl(base + "/nodes/n0", headers=["If-None-Match: " + (r.h("etag") or "x")]).status == 304, "node 304")
    for bad in ("n999999", "x.y.z", "bad%21id"):
        r = curl(base + "/nodes/" + bad)
        check(r.status == 404 and r.error_code() in ("not_found",), "node %s: %r" % (bad, r))
    r = curl(base + "/search?q=conv&limit=5")
    j = r.json() or {}
    check(r.status == 200 and j.get("total", 0) > 0 and 0 < len(j.get("hits", [])) <= 5, "search conv: %r" % r)
    for q in ("", "?q=", "?q=a&limit=0", "?q=a&limit=x", "?q=" + "a" * 300):
        r = curl(base + "/search" + q)
        check(r.status == 400 and r.error_code() == "bad_query", "search %r: %r" % (q, r))
    r = curl(s.url("/models?limit=1"))
    j = r.json() or {}
    check(r.status == 200 and len(j.get("models", [])) == 1 and j.get("total", 0) >= 1, "list limit=1: %r" % r)
    if j.get("total", 0) > 1:
        r2 = curl(s.url(j["next"]))
        j2 = r2.json() or {}
        check(r2.status == 200 and j2["models"][0]["id"] > j["models"][0]["id"], "list next page")
    for q in ("limit=0", "limit=1001", "after=zz"):
        check(curl(s.url("/models?" + q)).status == 400, "list %s: 400" % q)
    # what was kept at upload: the file's name, graph, producer, kind, node count
    r = curl(s.url("/models?limit=1000"))
    items = {m["id"]: m for m in (r.json() or {}).get("models", [])}
    sq = items.get(mid, {})
    check(sq.get("name") is None and "name" in sq and sq.get("graph") == "torch_jit" and
          sq.get("producer") == "pytorch" and sq.get("kind") == "model" and sq.get("nodes") == 83,
          "listing: graph, producer, kind, nodes of a raw upload without a name: %r" % sq)
    small = make_chain(3)
    r = curl(s.url("/models?name=some%2Fdir%2Fmy%20chain.onnx"), data=small)
    cid = (r.json() or {}).get("id")
    chain = write_tmp(make_chain(4), suffix=".onnx")
    r2 = curl(s.url("/models"), form=[("model", "@" + chain)])
    mid2 = (r2.json() or {}).get("id")
    items = {m["id"]: m for m in (curl(s.url("/models?limit=1000")).json() or {}).get("models", [])}
    check(r.status == 201 and items.get(cid, {}).get("name") == "my chain.onnx" and
          items.get(cid, {}).get("graph") == "chain" and items.get(cid, {}).get("nodes") == 3,
          "?name= keeps the file name (its last component): %r" % items.get(cid))
    check(r2.status == 201 and items.get(mid2, {}).get("name") == os.path.basename(chain) and
          items.get(mid2, {}).get("nodes") == 4, "multipart keeps the part's filename: %r" % items.get(mid2))
    # by reference needs --source-buckets
    for body, status, code in (('{"source": "s3://bucket/m.onnx"}', 403, "source_not_allowed"),
                               ('{"source": 1}', 400, "bad_source"), ('[', 400, "bad_source")):
        r = curl(s.url("/models"), data=body.encode(), headers=["Content-Type: application/json"])
        check(r.status == status and r.error_code() == code, "JSON body %s: %d %s (%r)" % (body, status, code, r))


def t_check(s, mid):
    """GET /models/{id}/check, the summary's check, and the schema facts of a node."""
    from onnx import TensorProto, helper
    base = s.url("/models/" + mid)
    r = curl(base + "/check")
    j = r.json() or {}
    check(r.status == 200 and j.get("format") == "onnxviz.check/1" and j.get("ok") is True and
          j.get("errors") == 0 and r.h("etag"), "check of squeezenet: %r %r" % (r, j))
    check(curl(base + "/check", headers=["If-None-Match: " + (r.h("etag") or "x")]).status == 304,
          "check 304")
    summary = curl(base).json() or {}
    sc = summary.get("summary", {}).get("summary", {}).get("check", {})
    check(sc.get("format") == "onnxviz.check/1" and sc.get("errors") == j.get("errors") and
          sc.get("warnings") == j.get("warnings"), "summary check: %r" % sc)
    check(summary.get("links", {}).get("check", "").endswith("/models/%s/check" % mid),
          "summary links check: %r" % summary.get("links"))
    doc = curl(base + "/document.json").json() or {}
    conv = next((n["id"] for n in doc.get("nodes", []) if n["op_type"] == "Conv"), "n0")
    node = curl(base + "/nodes/" + conv).json() or {}
    check(node.get("op_type") == "Conv" and node.get("schema", {}).get("since_version") == 11 and
          node["schema"].get("version_link", "").endswith("onnx__Conv.html#l-onnx-op-conv-11") and
          [i.get("port") for i in node.get("inputs", [])] == ["X", "W", "B"] and
          [o.get("port") for o in node.get("outputs", [])] == ["Y"] and
          {d["name"] for d in node.get("defaults", [])} >= {"auto_pad"},
          "node %s schema facts: %r" % (conv, {k: node.get(k) for k in ("schema", "defaults")}))
    # a model with errors: the check says so, the summary too; a missing model is 404
    g = helper.make_graph([helper.make_node("Cast", ["x"], ["y"])], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    bad = curl(s.url("/models"), data=m.SerializeToString(),
               headers=["Content-Type: application/octet-stream"]).json() or {}
    r = curl(s.url("/models/%s/check" % bad.get("id")))
    j = r.json() or {}
    probs = j.get("problems", [])
    check(r.status == 200 and j.get("ok") is False and j.get("errors") == 1 and probs and
          probs[0]["code"] == "missing_attribute" and probs[0]["node"] == "n0",
          "check of a broken model: %r" % j)
    sc = (curl(s.url("/models/%s" % bad.get("id"))).json() or {}).get("summary", {}) \
        .get("summary", {}).get("check", {})
    check(sc.get("ok") is False and sc.get("by_code") == {"missing_attribute": 1},
          "summary check of a broken model: %r" % sc)
    r = curl(s.url("/models/" + "0" * 64 + "/check"))
    check(r.status == 404, "check of an unknown model: %r" % r)


def t_oneshot(s):
    sid = sha256_file(SILERO)
    r = curl(s.url("/graph.svg?rankdir=LR"), data_file=SILERO)
    check(r.status == 200 and b"<svg" in r.body[:400] and r.h("x-model-id") == sid and
          "/models/%s" % sid in (r.h("link") or ""), "one-shot svg: %r %r" % (r, r.headers))
    check((r.h("content-type") or "").startswith("image/svg+xml"), "one-shot content type")
    check(curl(s.url("/models/" + sid)).status == 200, "one-shot stored the model")
    r = curl(s.url("/graph.dot"), form=[("model", "@" + SILERO)])
    check(r.status == 200 and b"digraph" in r.body[:300] and r.h("x-model-id") == sid, "one-shot dot multipart: %r" % r)
    r = curl(s.url("/graph.json"), data_file=SQUEEZENET)
    check(r.status == 200 and isinstance(r.json(), dict), "one-shot json: %r" % r)
    r = curl(s.url("/graph.svg?rankdir=sideways"), data_file=SILERO)
    check(r.status == 400 and r.error_code() == "bad_option", "one-shot bad option: %r" % r)
    r = curl(s.url("/graph.svg"), data=b"\x0a\xff\xff")
    check(r.status == 400 and r.h("x-model-id") is None, "one-shot bad model: %r" % r)


def t_openapi_live(s, mid, token_server):
    """Every documented path and method answers something other than 404/405."""
    doc = curl(s.url("/openapi.json")).json()
    # a stored overlay of the model (docs/overlays.md) for /models/{id}/overlays/{oid}
    oid = (curl(s.url("/models/%s/overlays" % mid), data=b"node,t\nx,1\n").json() or {}).get("id", "0" * 64)
    n = 0
    for path, item in doc["paths"].items():
        if path.startswith("/files/"):
            continue  # needs --models-dir: probed by the preview suite
        if path.startswith("/uploads"):
            continue  # an upload's state: probed by tests/http/resumable.py
        for method in item:
            if method not in ("get", "post", "delete"):
                continue
            url = path.replace("{id}", mid).replace("{node_id}", "n0").replace("{file}", "index.html") \
                .replace("{name}", "@i0").replace("{other}", mid).replace("{oid}", oid)
            if path.endswith("/search"):
                url += "?q=a"
            if method == "get":
                r = curl(s.url(url))
            elif method == "post":
                r = curl(s.url(url), data=make_model())
            else:
                tid = upload(token_server, SQUEEZENET, token="t").json()["id"]
                r = curl(token_server.url(url.replace(mid, tid)), method="DELETE",
                         headers=["Authorization: Bearer t"])
            n += 1
            check(r.status not in (0, 404, 405), "documented %s %s answers %r" % (method.upper(), path, r))
        r = curl(s.url(path.replace("{id}", mid).replace("{node_id}", "n0").replace("{file}", "index.html")
                       .replace("{name}", "@i0").replace("{other}", mid)),
                 method="PUT")
        check(r.status == 405, "undocumented PUT %s: 405 (%r)" % (path, r))
    check(n >= 18, "documented operations probed: %d" % n)


def read_to_close(c):
    """Everything the server sends on c until it closes (or a timeout, a reset); c closed."""
    out = b""
    try:
        while True:
            b = c.recv(65536)
            if not b:
                break
            out += b
    except (socket.timeout, ConnectionResetError):
        pass
    c.close()
    return out


def raw_exchange(s, payload, wait=3.0):
    """Send bytes on one connection; return everything the server sends until it closes."""
    c = socket.create_connection(("127.0.0.1", s.port), timeout=wait * SLOW)
    c.sendall(payload)
    return read_to_close(c)


def t_smuggling(s):
    smuggle = (b"POST /models HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/octet-stream\r\n"
               b"Content-Length: 5\r\nContent-Length: 40\r\n\r\nhelloGET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n")
    out = raw_exchange(s, smuggle)
    check(out.startswith(b"HTTP/1.1 400") and b"ambiguous_length" in out and out.count(b"HTTP/1.1 ") == 1,
          "duplicate Content-Length: 400, connection closed, nothing smuggled: %r" % out[:300])
    te_cl = (b"POST /models HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n"
             b"0\r\n\r\nGET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n")
    out = raw_exchange(s, te_cl)
    check(out.startswith(b"HTTP/1.1 400") and out.count(b"HTTP/1.1 ") == 1,
          "Transfer-Encoding with Content-Length: 400: %r" % out[:300])
    out = raw_exchange(s, b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nContent-Length: 0\r\nContent-Length: 0\r\n\r\n")
    check(out.startswith(b"HTTP/1.1 400"), "two Content-Length on a GET: 400")
    out = raw_exchange(s, b"POST /models HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: gzip\r\n\r\n")
    check(out.startswith(b"HTTP/1.1 400") or out.startswith(b"HTTP/1.1 501"), "Transfer-Encoding gzip: %r" % out[:100])
    # keep-alive still works for good requests: two on one connection
    two = b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\nGET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
    out = raw_exchange(s, two)
    check(out.count(b"HTTP/1.1 200") == 2, "two requests on one keep-alive connection: %r" % out[:200])


def t_connections():
    s = Server("--timeout", "2", "--max-per-ip", "3")
    c = socket.create_connection(("127.0.0.1", s.port))
    c.sendall(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n")  # never finishes its headers
    t0 = time.time()
    c.settimeout(10 * SLOW)
    try:
        got = c.recv(100)
    except (ConnectionResetError, socket.timeout):
        got = b""
    took = time.time() - t0
    check(got == b"" and 1.0 < took < 6 * SLOW, "slow client dropped after the timeout (%.1f s)" % took)
    c.close()
    check(s.stop() == 0, "server exit (slow client)")
    # the per-address limit, on a server whose idle timeout cannot drop the held
    # connections while the 4th waits (a loaded or sanitized run may take seconds)
    s = Server("--timeout", "60", "--max-per-ip", "3")
    held = [socket.create_connection(("127.0.0.1", s.port)) for _ in range(3)]
    # each held connection answers one request (and stays open), so that all three are
    # accepted and counted before the 4th comes: the pool's threads accept in parallel,
    # and a 4th counted before a slower 3rd would be served while the 3rd is refused
    for i, h in enumerate(held):
        h.settimeout(10 * SLOW)
        h.sendall(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n")
        try:
            first = h.recv(100)
        except (ConnectionResetError, socket.timeout):
            first = b""
        check(first.startswith(b"HTTP/1.1 200"), "held connection %d served: %r" % (i + 1, first[:40]))
    extra = socket.create_connection(("127.0.0.1", s.port))
    extra.settimeout(3 * SLOW)
    try:
        extra.sendall(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n")
        got = extra.recv(100)
    except (ConnectionResetError, BrokenPipeError, socket.timeout):
        got = b""
    check(not got.startswith(b"HTTP/1.1 200"), "a 4th connection from one address is refused: %r" % got[:40])
    extra.close()
    for h in held:
        h.close()
    time.sleep(0.3)
    check(curl(s.url("/healthz")).status == 200, "serving again after the connections closed")
    check(s.stop() == 0, "server exit (connections)")


def vm_kib(pid, field):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def t_big_upload(s):
    """A body of 512 MiB streams to disk: the server's peak RSS grows by a bounded amount."""
    st = os.statvfs(s.store)
    mib = 512 if st.f_bavail * st.f_frsize > (2 << 30) else 64  # the spool needs the room
    big = os.path.join(TMP, "zeros.bin")
    with open(big, "wb") as f:
        f.truncate(mib << 20)  # sparse: costs no disk here, all of it on the wire
    before = vm_kib(s.proc.pid, "VmHWM")
    t0 = time.time()
    r = curl(s.url("/models"), method="POST", extra=["-T", big, "-H", "Content-Type: application/octet-stream"],
             timeout=300)
    took = time.time() - t0
    after = vm_kib(s.proc.pid, "VmHWM")
    os.unlink(big)
    check(r.status == 400 and r.error_code() == "bad_tag", "%d MiB of zeros: parsed and refused: %r" % (mib, r))
    grown = (after - before) / 1024.0
    check(grown < 48, "peak RSS grew %.1f MiB for a %d MiB upload" % (grown, mib))
    print("  %d MiB upload: %.1f s, server peak RSS +%.1f MiB (now %.1f MiB)" % (mib, took, grown, after / 1024.0),
          flush=True)
    check(wait_until(lambda: not s.tmp_entries(), 3), "the big spool file is removed")


def t_abort_upload(s):
    before = len(s.model_files())
    c = socket.create_connection(("127.0.0.1", s.port))
    c.sendall(b"POST /models HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/octet-stream\r\n"
              b"Content-Length: 10000000\r\n\r\n" + b"\x00" * 300000)
    time.sleep(0.3)
    c.close()
    check(wait_until(lambda: not s.tmp_entries(), 3), "aborted upload: temporary removed (%r)" % s.tmp_entries())
    check(len(s.model_files()) == before, "aborted upload: nothing stored")


def t_later_names():
    """A model first stored without a name takes the name of the next upload of its bytes
    that has one (raw ?name=, a multipart part, a comparison's part); a kept name is never
    replaced, and it survives a restart (issue 39, item 2)."""
    s = Server()

    def listed():
        return {m["id"]: m.get("name") for m in (curl(s.url("/models?limit=1000")).json() or {}).get("models", [])}

    one, two, three = (write_tmp(make_chain(n), suffix=".onnx") for n in (5, 6, 7))
    a = (curl(s.url("/models"), data_file=one).json() or {}).get("id")
    check(a is not None and listed().get(a) is None, "a raw upload without ?name= is listed unnamed")
    r = curl(s.url("/models?name=later.onnx"), data_file=one)
    check(r.status == 200 and listed().get(a) == "later.onnx",
          "the same bytes again under ?name=: the name is kept (%r, %r)" % (r, listed().get(a)))
    for again in (curl(s.url("/models?name=other.onnx"), data_file=one),
                  curl(s.url("/models"), form=[("model", "@%s;filename=renamed.onnx" % one)])):
        check(again.status == 200 and listed().get(a) == "later.onnx",
              "a kept name is not replaced by a later upload: %r %r" % (again, listed().get(a)))
    # a comparison: both parts keep their file names; a part stored before without one
    # takes its name
    b = (curl(s.url("/models"), data_file=two).json() or {}).get("id")
    r = curl(s.url("/diff.json"), form=[("a", "@%s;filename=old.onnx" % two), ("b", "@%s;filename=new.onnx" % three)])
    c = r.h("x-model-id-b")
    names = listed()
    check(r.status == 200 and r.h("x-model-id-a") == b and names.get(b) == "old.onnx" and names.get(c) == "new.onnx",
          "a comparison's parts are listed under their file names: %r %r" % (r, names))
    check(s.stop() == 0, "clean exit")
    s = Server(store=s.store)
    names = listed()
    check(names.get(a) == "later.onnx" and names.get(b) == "old.onnx", "the names after a restart: %r" % names)
    check(s.stop() == 0, "clean exit after restart")


def t_restart():
    s = Server()
    ids = [upload(s, f).json()["id"] for f in (SQUEEZENET, SILERO)]
    r1 = curl(s.url("/models/%s/graph.svg" % ids[0]))
    check(s.stop() == 0, "clean exit before restart")
    open(os.path.join(s.store, "tmp", "up-crashed-leftover"), "wb").write(b"partial")
    s2 = Server(store=s.store)
    check(not s2.tmp_entries(), "leftover temporary removed at start")
    r = curl(s2.url("/models"))
    check(r.status == 200 and sorted(m["id"] for m in r.json()["models"]) == sorted(ids), "models found again: %r" % r)
    r2 = curl(s2.url("/models/%s/graph.svg" % ids[0]))
    check(r2.status == 200 and r2.h("etag") == r1.h("etag") and r2.body == r1.body, "same rendering after restart")
    m = s2.metrics()
    check(m.get('onnxviz_cache_hits_total{tier="store"}', 0) >= 1, "served from the store's cache")
    check(m.get('onnxviz_layouts_total{result="ok"}', 0) == 0, "no layout after restart")
    check(curl(s2.url("/models/" + ids[1])).status == 200, "summary after restart")
    check(s2.stop() == 0, "server exit (restart)")


def t_budget():
    """Over the parse budget is the model's fault and permanent: 422 over_budget, for an
    upload and for a stored model loaded under a smaller budget; the refusal of a stored
    model is remembered (a retry does not parse it again).  Out of memory stays 503 (the
    hostile suite's failmalloc cases)."""
    s = Server("--model-memory", "64K")
    r = upload(s, TRANSFORMER)
    e = (r.json() or {}).get("error", {})
    check(r.status == 422 and e.get("code") == "over_budget" and "budget" in e.get("message", "")
          and "retry-after" not in r.headers, "an upload over the parse budget: 422 over_budget: %r" % r)
    check(s.stop() == 0, "server exit (budget)")
    s = Server()
    mid = upload(s, TRANSFORMER).json()["id"]
    check(s.stop() == 0, "server exit (budget, store)")
    s = Server("--model-memory", "64K", store=s.store)
    before = s.metrics()
    for what in ("/models/%s/document.json", "/models/%s/nodes/0", "/models/%s/document.json?x"):
        r = curl(s.url(what % mid))
        e = (r.json() or {}).get("error", {})
        check(r.status == 422 and "over_budget" in (e.get("code", "") + e.get("message", "")),
              "a stored model over a smaller budget: 422 over_budget: %r" % r)
    m = s.metrics()
    loads = {k: m.get('onnxviz_model_loads_total{result="%s"}' % k, 0) -
             before.get('onnxviz_model_loads_total{result="%s"}' % k, 0)
             for k in ("ok", "invalid", "failed", "remembered")}
    check(loads["invalid"] == 1 and loads["remembered"] >= 1 and loads["failed"] == 0,
          "parsed once, then refused from memory: %r" % loads)
    check(s.stop() == 0, "server exit (budget, restart)")


def t_sigterm():
    s = Server("--grace", "20")
    result = {}
    body = write_tmp(make_model() + b"")  # replaced below by a big valid model
    body = SQUEEZENET  # 4.9 MB at 1 MB/s: five seconds of upload

    def slow():
        result["r"] = curl(s.url("/models"), data_file=body, extra=["--limit-rate", "1M"], record=False)

    t = threading.Thread(target=slow)
    t.start()
    time.sleep(1.0)
    s.proc.send_signal(signal.SIGTERM)
    time.sleep(0.3)
    refused = False
    try:
        c = socket.create_connection(("127.0.0.1", s.port), timeout=2)
        c.sendall(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n")
        refused = c.recv(100) == b""
        c.close()
    except OSError:
        refused = True
    check(refused, "no new connections after SIGTERM")
    t.join(60 * SLOW)
    r = result.get("r")
    check(r is not None and r.status == 201, "the running upload finished: %r" % r)
    rc = s.stop(timeout=30)
    check(rc == 0, "exit 0 after SIGTERM (%r)" % rc)
    check(any('"msg":"stopping"' in l for l in s.log) and any('"msg":"stopped"' in l for l in s.log),
          "stopping/stopped logged")
    check(not s.tmp_entries() and len(s.model_files()) == 1, "temporaries removed, model kept")


def t_logs(s):
    lines = [json.loads(l) for l in s.log if l.startswith("{")]
    reqs = [l for l in lines if l.get("msg") == "request"]
    check(len(reqs) > 10, "request log lines: %d" % len(reqs))
    check(all({"method", "route", "status", "bytes", "ms"} <= set(l) for l in reqs), "log fields")
    check(any(l.get("id") and l["route"] == "/models/{id}/graph.svg" for l in reqs), "log has model ids")


def audit_headers():
    n = 0
    for r in RESPONSES:
        if r.status == 0:
            continue
        n += 1
        ct = r.h("content-type") or ""
        ok = r.h("x-content-type-options") == "nosniff" and r.h("content-security-policy")
        if not check(ok, "security headers on %r: %r" % (r, r.headers)):
            continue
        if r.status == 304:
            check(r.body == b"", "304 without a body: %r" % r)
            continue
        if ct.startswith("image/svg+xml"):
            csp = r.h("content-security-policy")
            check("script-src 'none'" in csp and "default-src 'none'" in csp, "SVG CSP: %r" % csp)
            cd = r.h("content-disposition") or ""
            check(r.url.endswith(".svg") is False or re.match(r'^inline; filename="[0-9a-f]{64}\.svg"$', cd),
                  "SVG Content-Disposition from the id: %r" % cd)
        if r.h("content-encoding") == "gzip" and r.method != "HEAD":
            r.body = gzip.decompress(r.body)  # tests/http/compressed.py checks the coding
        if ct.startswith("application/json") and r.method != "HEAD":
            check(r.json() is not None, "JSON body parses: %r" % r)
        if r.status >= 400 and r.method != "HEAD":
            j = r.json() or {}
            e = j.get("error", {}) if isinstance(j, dict) else {}
            check(ct.startswith("application/json") and e.get("status") == r.status and e.get("code") and
                  e.get("message"), "JSON error body: %r" % r)
    return n


def main():
    t0 = time.time()
    main_srv = Server()
    token_srv = Server("--token", "t")
    steps = []

    only = [x for x in os.environ.get("HTTP_ONLY", "").split(",") if x]

    def step(name, fn, *a):
        # HTTP_ONLY="name,name": only these steps (a developer's quick run; never in CI)
        if only and name not in only:
            return
        t = time.time()
        try:
            fn(*a)
        except Exception as e:  # a crash of the test is a failure, not a stop
            import traceback
            traceback.print_exc()
            check(False, "%s raised %r" % (name, e))
        steps.append("%s %.1fs" % (name, time.time() - t))

    step("basics", t_basics, main_srv)
    up = upload(main_srv, SQUEEZENET)
    check(up.status == 201, "upload squeezenet: %r" % up)
    mid = sha256_file(SQUEEZENET)
    step("parse errors", t_parse_errors, main_srv)
    step("cache and etag", t_cache_etag, main_srv, mid)
    step("overlay with the optimized model", t_overlay_optimized, main_srv, mid)
    step("single flight", t_single_flight, main_srv, mid)
    step("nodes search list", t_nodes_search_list, main_srv, mid)
    step("check", t_check, main_srv, mid)
    step("one-shot", t_oneshot, main_srv)
    step("openapi live", t_openapi_live, main_srv, mid, token_srv)
    step("smuggling", t_smuggling, main_srv)
    step("aborted upload", t_abort_upload, main_srv)
    step("big upload", t_big_upload, main_srv)
    step("logs", t_logs, main_srv)
    check(main_srv.stop() == 0, "main server exit")
    check(token_srv.stop() == 0, "token server exit")
    step("limits", t_limits)
    step("gzip bodies", t_gzip)
    step("auth", t_auth)
    step("rate limit", t_rate_limit)
    step("queue full", t_queue_full)
    step("layout killed", t_layout_killed)
    step("file-backed", t_file_backed)
    step("storage", t_storage)
    step("connections", t_connections)
    step("restart", t_restart)
    step("later names", t_later_names)
    step("budget", t_budget)
    step("sigterm", t_sigterm)
    step("corpus uploads", t_corpus_uploads)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    sys.dont_write_bytecode = True  # no __pycache__ in the tree
    import hardening  # noqa: E402  (tests/http/hardening.py: hostile clients, issue 35)
    me = sys.modules[__name__]
    step("private caching", hardening.t_private_cache, me)
    step("token files", hardening.t_token_files, me)
    step("host check", hardening.t_host, me)
    step("inflate ratio", hardening.t_inflate, me)
    step("slow bodies", hardening.t_slow_body, me)
    step("body quota", hardening.t_body_quota, me)
    import compressed  # noqa: E402  (tests/http/compressed.py: gzip'd answers, issue 37)
    step("compressed answers", compressed.t_compressed, me)
    import resumable  # noqa: E402  (tests/http/resumable.py: POST /uploads, PATCH ...)
    step("resumable uploads", resumable.t_resumable, sys.modules[__name__])
    import twoclient  # noqa: E402  (tests/http/twoclient.py: a victim and an attacker, issue 35)
    step("two clients", twoclient.t_twoclient, sys.modules[__name__])
    import signed  # noqa: E402  (tests/http/signed.py: signed links, POST /sign)
    step("signed links", signed.t_signed, sys.modules[__name__])
    import png  # noqa: E402  (tests/http/png.py: graph.png, card.png, the budget)
    step("png", png.t_png, sys.modules[__name__])
    step("png limits", png.t_png_limits, sys.modules[__name__])
    step("png cli", png.t_png_cli, sys.modules[__name__])
    import embed  # noqa: E402  (tests/http/embed.py: share page, oEmbed, frame-ancestors, theme)
    step("embed", embed.t_embed, sys.modules[__name__])
    n = audit_headers()
    print("  header audit: %d responses" % n)
    print("  steps: " + ", ".join(steps))
    subprocess.run(["rm", "-rf", TMP])
    summary("http", t0)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
