#!/usr/bin/python3
"""s3 suite: the S3 store against a real object store, and replicas behind a real load
balancer.

Starts a single-node Ceph cluster with its S3 gateway (tests/s3/ceph.py: RGW on
loopback, memstore OSD), then:

  rgw       what the store's design relies on, probed on the installed RGW: conditional
            PUT (If-None-Match: *) refuses an existing key with 412, of concurrent
            conditional PUTs of a new key exactly one wins, a body whose SHA-256 differs
            from x-amz-content-sha256 is refused; and what it does not honour
            (If-None-Match on CompleteMultipartUpload and CopyObject), printed
  http      the whole http suite (tests/http/http_test.py) with every server's store in
            the bucket (ONNXVIZ_TEST_S3)
  replicas  three `onnxviz serve` on one bucket behind haproxy: an upload through one is
            served by all (summary, renderings, previews, bytes); the same rendering asked
            of all three is computed at most once per replica; multipart uploads; listing
            with meta; by-reference registration; x-www-form-urlencoded bodies; metrics;
            no credential in any log
  kill      kill -9 of a replica during 200 uploads through the load balancer: every
            acknowledged upload is readable, byte for byte, through every other replica
  resumable a resumable upload (tus, parts of 5 MiB, each an UploadPart of a multipart
            upload) through haproxy, consecutive PATCHes landing on different replicas,
            the replica receiving a part killed with SIGKILL mid-part: the transfer
            completes with at most one part sent again, the model id is the SHA-256 and
            every live replica reads it byte for byte; a wrong final hash answers 422 and
            leaves no model, no state and no multipart upload; an abandoned transfer is
            aborted after --upload-expiry (ListMultipartUploads, the metrics); a file that
            does not parse leaves nothing; the 17th part arriving at once on a replica is
            503 parts_busy (parts staged are bounded); a bundle
            (model file, a 14 MB data file, manifest) through haproxy round-robin, the
            replica receiving a part of the data file killed mid-part: the data file kept
            by its SHA-256 in the bucket ("already there" from every replica), the
            bundle's keys those of a multipart POST /models of the same files (same id),
            its weights read bit for bit through every live replica
  unnamed   models begun without their id (decision 97): the parts under the transfer's
            own key (uploads/<uid>/file), none under a model's; the last part naming it
            stores it (a server-side copy), read back through every replica, nothing left;
            a wrong claim 422 with nothing left; the half-way state (named, completed, not
            copied) finished by the last part again, refused under another name; the last
            part at once to two replicas with different bytes: one 201, no model holding
            other bytes than its id's; a data file begun unnamed kept as its blob;
            DELETE aborts it; the copy's price as a figure
  outage    the object store stopped, then started, mid-run (and paused: requests time
            out): 503 with Retry-After while it is away, never a 500 or a wrong 404; no
            corrupt or half-published object after
  figures   upload throughput to S3, cached and uncached GET latencies through haproxy

Every process it starts (Ceph's daemons, haproxy, the replicas) is stopped when it ends,
however it ends (atexit, signal handlers, and PR_SET_PDEATHSIG for SIGKILL).
S3_ONLY=name,name runs some parts only (rgw, http, replicas, kill, resumable, unnamed,
outage, figures);
S3_KEEP_LOGS=folder keeps the replicas' and haproxy's logs there.
"""
import atexit
import concurrent.futures
import hashlib
import http.client
import json
import os
import random
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True  # no __pycache__ in the tree
sys.path.insert(0, HERE)
import ceph as C  # noqa: E402
import s3lib  # noqa: E402

BUILD = os.environ.get("BUILD", "build")
COPY_MAX = 8 << 20  # ONNXVIZ_TEST_S3_COPY_MAX of every replica
BIN = os.path.abspath(os.path.join(BUILD, "onnxviz"))
CORPUS = os.environ["ONNXVIZ_CORPUS"]
SQUEEZENET = os.path.join(CORPUS, "models", "real", "squeezenet1_1.onnx")
SANITIZED = os.environ.get("ONNXVIZ_SANITIZED") == "1"
SLOW = 3 if SANITIZED else 1
ONLY = set(filter(None, os.environ.get("S3_ONLY", "").split(",")))
TMP = tempfile.mkdtemp(prefix="oxs-s3-")
BUCKET = "onnxviz"
SOURCES = "model-sources"

passed = 0
failures = []
skipped = []
FIGURES = []
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


def figure(text):
    FIGURES.append(text)
    print("  " + text, flush=True)


# ---------------------------------------------------------------------------------------
# Processes: all of them end with the suite
PROCS = []
CLUSTER = []


_stopping = threading.Event()


def stop_everything():
    if _stopping.is_set():
        return
    _stopping.set()
    for p in PROCS:
        if p.poll() is None:
            try:
                p.send_signal(signal.SIGCONT)
                p.kill()
                p.wait(10)
            except (OSError, subprocess.TimeoutExpired):
                pass
    keep = os.environ.get("S3_KEEP_LOGS")
    if keep:  # the replicas' and haproxy's logs, for a look after a failure
        os.makedirs(keep, exist_ok=True)
        for f in os.listdir(TMP):
            if f.startswith("log-"):
                shutil.copy(os.path.join(TMP, f), keep)
    for c in CLUSTER:
        c.stop()
    shutil.rmtree(TMP, ignore_errors=True)


def _on_signal(sig, frame):
    # Stop here and leave at once: sys.exit would first wait for the test's threads (an
    # executor's queued uploads, the outage's readers), which may take minutes.
    stop_everything()
    os._exit(128 + sig)


atexit.register(stop_everything)
for _s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
    signal.signal(_s, _on_signal)


def spawn(cmd, env=None, log=None):
    out = open(log, "ab") if log else subprocess.DEVNULL
    p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT if log else
                         subprocess.DEVNULL, env=env, preexec_fn=C.die_with_parent)
    if log:
        out.close()
    PROCS.append(p)
    return p


def request(port, method, path, body=None, headers=None, timeout=60):
    """(status, headers (lowercase), body); status 0 when the connection failed."""
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout * SLOW)
    try:
        c.request(method, path, body=body, headers=headers or {})
        r = c.getresponse()
        data = r.read()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, data
    except (OSError, http.client.HTTPException):
        return 0, {}, b""
    finally:
        c.close()


def as_json(body):
    try:
        return json.loads(body)
    except ValueError:
        return None


class Replica:
    def __init__(self, name, ceph, prefix="shared", extra=()):
        self.name, self.ceph, self.prefix = name, ceph, prefix
        self.cache = os.path.join(TMP, "cache-" + name)
        self.log = os.path.join(TMP, "log-" + name)
        self.extra = list(extra)
        self.proc = None

    def start(self):
        port_file = os.path.join(TMP, "port-" + self.name)
        if os.path.exists(port_file):
            os.unlink(port_file)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("ONNXVIZ_", "AWS_"))}
        env.update(self.ceph.env())
        # server-side copies above 8 MiB in UploadPartCopy ranges (above 5 GiB otherwise):
        # the bundle's 14 MB data file then goes the way a 13 GB one does
        env["ONNXVIZ_TEST_S3_COPY_MAX"] = str(COPY_MAX)
        # a restart takes its port again: haproxy's server line names it
        again = getattr(self, "port", None)
        for port in ([again] if again else []) + [0]:
            cmd = [BIN, "serve", "--port", str(port), "--port-file", port_file, "--store",
                   "s3://%s/%s" % (BUCKET, self.prefix), "--cache-dir", self.cache,
                   "--source-buckets", SOURCES] + self.extra
            t0 = time.time()
            self.proc = spawn(cmd, env=env, log=self.log)
            end = time.time() + 30 * SLOW
            while not os.path.exists(port_file) and self.proc.poll() is None and time.time() < end:
                time.sleep(0.01)
            if os.path.exists(port_file):
                break
            if self.proc.poll() is None:  # neither listening nor gone: not this port
                self.proc.kill()
                self.proc.wait()
        if not os.path.exists(port_file):
            raise RuntimeError("replica %s did not start: %s" % (self.name, self.log_text()[-1500:]))
        self.started_s = time.time() - t0
        self.port = int(open(port_file).read())
        return self

    def kill9(self):
        self.proc.kill()
        self.proc.wait()

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                return self.proc.wait(60 * SLOW)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                return self.proc.wait()
        return self.proc.returncode

    def log_text(self):
        try:
            with open(self.log, "rb") as f:
                return f.read().decode("utf-8", "replace")
        except OSError:
            return ""

    def get(self, path, **kw):
        return request(self.port, "GET", path, **kw)

    def metrics(self):
        st, _, body = self.get("/metrics")
        out = {}
        for line in body.decode().splitlines():
            if line and not line.startswith("#"):
                k, v = line.rsplit(" ", 1)
                out[k] = float(v)
        return out


class Haproxy:
    """haproxy in front of the replicas, set up as docker/haproxy.cfg (the same checks, the
    same error page when no replica is ready), on loopback ports."""
    def __init__(self, replicas):
        self.port = C.free_port()
        self.cfg = os.path.join(TMP, "haproxy.cfg")
        err = os.path.abspath(os.path.join(HERE, "..", "..", "docker", "haproxy-503.http"))
        servers = "\n".join("    server %s 127.0.0.1:%d check inter 500 fall 2 rise 2" % (r.name, r.port)
                            for r in replicas)
        with open(self.cfg, "w") as f:
            f.write("""global
    maxconn 4000
defaults
    mode http
    timeout connect 2s
    timeout client 120s
    timeout server 120s
    retries 3
    option redispatch
    option forwardfor
    errorfile 503 %s
frontend fe
    bind 127.0.0.1:%d
    default_backend replicas
backend replicas
    balance roundrobin
    option httpchk GET /readyz
    http-check expect status 200
%s
""" % (err, self.port, servers))
        self.log = os.path.join(TMP, "log-haproxy")
        self.proc = spawn(["haproxy", "-db", "-f", self.cfg], log=self.log)
        end = time.time() + 10
        while time.time() < end:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("haproxy did not start")

    def up(self, n, seconds=15):
        """Wait until the backend answers n times in a row with replicas that are up."""
        end = time.time() + seconds * SLOW
        ok = 0
        while time.time() < end and ok < n:
            st, _, _ = request(self.port, "GET", "/readyz", timeout=5)
            ok = ok + 1 if st == 200 else 0
            time.sleep(0.05)
        return ok >= n

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)


# ---------------------------------------------------------------------------------------
# Models made here (test input only): distinct small models with one initializer "w"
def make_model(i, floats=16000):
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper
    rnd = np.random.default_rng(i)
    w = numpy_helper.from_array(rnd.standard_normal(floats).astype(np.float32), "w")
    node = helper.make_node("Add", ["x", "w"], ["y"], name="add0")
    g = helper.make_graph([node], "graph-%d" % i,
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [floats])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [floats])], [w])
    return helper.make_model(g, producer_name="s3-suite").SerializeToString()


def sha(data):
    return hashlib.sha256(data).hexdigest()


def upload(port, data, name=None, timeout=120):
    path = "/models" + ("?name=" + name if name else "")
    return request(port, "POST", path, body=data,
                   headers={"Content-Type": "application/octet-stream"}, timeout=timeout)


def bundle_id(model, files):
    """The id of a model with data files (docs/api.md): SHA-256 of the manifest of the
    model's and each file's SHA-256, size and location, files in byte order."""
    if not files:
        return sha(model)
    lines = "onnxviz-bundle/1\nmodel %s %d\n" % (sha(model), len(model))
    for loc in sorted(files, key=lambda x: x.encode()):
        lines += "file %s %d %s\n" % (sha(files[loc]), len(files[loc]), loc)
    return sha(lines.encode())


def bucket_consistent(ceph, prefix, what):
    """Every model object (with its data files) hashes to its id and has its meta (written
    before it): no corrupt or half-published model in the bucket."""
    keys = ceph.s3.list(BUCKET, prefix + "/models/")
    metas = {k for k, _ in ceph.s3.list(BUCKET, prefix + "/meta/")}
    data = {}
    for k, _ in ceph.s3.list(BUCKET, prefix + "/data/"):
        mid, loc = k[len(prefix) + 6:].split("/", 1)
        data.setdefault(mid, {})[loc] = ceph.s3.get(BUCKET, k)
    bad, nometa = [], []
    for k, _ in keys:
        mid = k.rsplit("/", 1)[1][:-5]
        if bundle_id(ceph.s3.get(BUCKET, k) or b"", data.get(mid, {})) != mid:
            bad.append(k)
        if "%s/meta/%s.json" % (prefix, mid) not in metas:
            nometa.append(k)
    check(not bad, "%s: every model object hashes to its id (%d bad of %d; %d with data files)" %
          (what, len(bad), len(keys), len(data)))
    check(not nometa, "%s: every model object has its meta (%d without)" % (what, len(nometa)))
    return len(keys)


# ---------------------------------------------------------------------------------------
# rgw: what the design relies on
def t_rgw(ceph):
    s = ceph.s3
    s.make_bucket("probe")
    check(s.put("probe", "k", b"one")[0] == 200, "rgw: PUT")
    st = s.put("probe", "k", b"two", {"If-None-Match": "*"})[0]
    check(st == 412 and s.get("probe", "k") == b"one", "rgw: conditional PUT onto a key: 412, unchanged (%d)" % st)
    data = os.urandom(8 << 20)
    h = sha(data)
    for trial in range(2):
        def one(_):
            return s.request("PUT", "probe", "race%d" % trial, headers={"If-None-Match": "*"}, body=data,
                             payload_hash=h)[0]
        with concurrent.futures.ThreadPoolExecutor(5) as ex:
            codes = sorted(ex.map(one, range(5)))
        check(codes == [200, 412, 412, 412, 412], "rgw: 5 concurrent conditional PUTs, one wins: %r" % codes)
    st = s.request("PUT", "probe", "bad", body=b"abc", payload_hash=sha(b"abd"))
    check(st[0] == 400 and b"XAmzContentSHA256Mismatch" in st[2], "rgw: a body not matching its SHA-256 is refused: %r" % (st[:1],))
    check(s.get("probe", "bad") is None, "rgw: ... and not stored")
    part = os.urandom(5 << 20)
    s.multipart("probe", "mp", [part, b"a"])
    st, _ = s.multipart("probe", "mp", [part, b"b"], {"If-None-Match": "*"})
    mp = "ignored (overwrites)" if st == 200 and s.get("probe", "mp")[-1:] == b"b" else "honoured (%d)" % st
    st = s.request("PUT", "probe", "k", headers={"x-amz-copy-source": "/probe/mp", "If-None-Match": "*"})[0]
    cp = "ignored (overwrites)" if st == 200 else "honoured (%d)" % st
    figure("RGW %s: If-None-Match on PUT honoured; on CompleteMultipartUpload %s; on CopyObject %s"
           % (ceph.version, mp, cp))


# ---------------------------------------------------------------------------------------
# http: the http suite with the S3 store
def t_http(ceph):
    env = dict(os.environ)
    env["ONNXVIZ_TEST_S3"] = json.dumps({"endpoint": ceph.endpoint, "access": ceph.access,
                                         "secret": ceph.secret, "bucket": BUCKET})
    t0 = time.time()
    p = subprocess.run(["/usr/bin/python3", os.path.join(HERE, "..", "http", "http_test.py")], env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, preexec_fn=C.die_with_parent)
    out = p.stdout.decode("utf-8", "replace")
    last = [l for l in out.splitlines() if l.startswith("http:")]
    if p.returncode != 0:
        print(out[-6000:], flush=True)
    check(p.returncode == 0, "the http suite passes against the S3 store")
    figure("http suite on the S3 store: %s (%.0f s)" % (last[-1] if last else "no summary", time.time() - t0))


# ---------------------------------------------------------------------------------------
# replicas
def t_replicas(ceph, reps, lb):
    data = open(SQUEEZENET, "rb").read()
    mid = sha(data)
    st, h, body = upload(lb.port, data, name="squeezenet.onnx")
    check(st in (200, 201) and (as_json(body) or {}).get("id") == mid, "upload through the load balancer: %d" % st)
    svgs, previews = [], []
    for r in reps:
        st, _, b = r.get("/models/" + mid)
        check(st == 200 and (as_json(b) or {}).get("id") == mid, "%s serves the summary: %d" % (r.name, st))
        st, _, b = r.get("/models/%s/model.onnx" % mid)
        check(st == 200 and b == data, "%s serves the model's bytes: %d" % (r.name, st))
        st, _, b = r.get("/models/%s/graph.svg" % mid)
        check(st == 200 and b"<svg" in b[:500], "%s serves graph.svg: %d" % (r.name, st))
        svgs.append(b)
        st, _, b = r.get("/models/%s/document.json" % mid)
        check(st == 200 and (as_json(b) or {}).get("format") == "onnxviz.document/1", "%s serves document.json" % r.name)
        st, _, b = r.get("/models/%s/search?q=conv" % mid)
        check(st == 200 and (as_json(b) or {}).get("total", 0) > 0, "%s serves search" % r.name)
    check(len(set(svgs)) == 1, "the replicas serve the same graph.svg bytes")

    # a model with a tensor: previews from every replica
    small = make_model(424242)
    sid = sha(small)
    st, _, _ = upload(reps[0].port, small, name="small.onnx")
    check(st in (200, 201), "upload to replica 1: %d" % st)
    for r in reps:
        st, _, b = r.get("/models/%s/tensors/w?values=5&bins=8" % sid)
        j = as_json(b) or {}
        check(st == 200 and len((j.get("values") or {}).get("data", [])) == 5,
              "%s serves a tensor preview: %d %r" % (r.name, st, b[:200]))
        previews.append(b)
    check(len(set(previews)) == 1, "the replicas serve the same preview")

    # the same rendering asked of all three at once: computed at most once per replica
    ok = 'onnxviz_layouts_total{result="ok"}'
    before = [r.metrics().get(ok, 0) for r in reps]
    q = "/models/%s/graph.svg?rankdir=LR&attrs=all" % mid
    with concurrent.futures.ThreadPoolExecutor(12) as ex:
        rs = list(ex.map(lambda k: reps[k % 3].get(q), range(12)))
    after = [r.metrics().get(ok, 0) for r in reps]
    deltas = [a - b for a, b in zip(after, before)]
    check(all(x[0] == 200 for x in rs) and len({x[2] for x in rs}) == 1, "12 concurrent asks, 4 per replica: same 200s")
    check(all(d <= 1 for d in deltas) and sum(deltas) >= 1, "computed at most once per replica: %r" % deltas)
    # one after the other: the first computes, the others read the bucket
    before = after
    q = "/models/%s/graph.svg?rankdir=LR&shapes=off&attrs=none" % mid
    bodies = [r.get(q) for r in reps]
    after = [r.metrics().get(ok, 0) for r in reps]
    deltas = [a - b for a, b in zip(after, before)]
    check(all(b[0] == 200 for b in bodies) and len({b[2] for b in bodies}) == 1, "asked in turn: same 200s")
    check(deltas == [1, 0, 0], "asked in turn: computed once in all, then read from the bucket: %r" % deltas)
    hits = [r.metrics().get('onnxviz_cache_hits_total{tier="store"}', 0) for r in reps]
    check(hits[1] >= 1 and hits[2] >= 1, "the others count store hits: %r" % hits)

    # a multipart upload (the replicas run with --s3-part-size 5M)
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper
    big = np.random.default_rng(7).standard_normal(3 << 20).astype(np.float32)  # 12 MiB
    g = helper.make_graph([helper.make_node("Add", ["x", "w"], ["y"])], "big",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [big.size])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [big.size])],
                          [numpy_helper.from_array(big, "w")])
    bigdata = helper.make_model(g).SerializeToString()
    bid = sha(bigdata)
    t0 = time.time()
    st, _, _ = upload(reps[1].port, bigdata, name="big.onnx")
    took = time.time() - t0
    check(st == 201, "a 12 MiB model goes up in parts: %d" % st)
    obj = ceph.s3.get(BUCKET, "shared/models/%s.onnx" % bid)
    check(obj == bigdata, "... and the object is its bytes")
    st, _, b = reps[2].get("/models/%s/model.onnx" % bid)
    check(st == 200 and b == bigdata, "another replica reads it back: %d" % st)
    m = reps[1].metrics()
    check(m.get('onnxviz_object_store_requests_total{op="multipart",result="ok"}', 0) >= 4,
          "multipart requests counted: %r" % m.get('onnxviz_object_store_requests_total{op="multipart",result="ok"}'))
    st, _, _ = upload(reps[2].port, bigdata)
    check(st == 200, "the same model again through another replica: 200 (%d)" % st)
    figure("12 MiB model, 3 parts of 5 MiB, through one replica: %.2f s" % took)

    # a model with external data (a location with a folder and a space): uploaded through
    # one replica, its data files go up too and another replica reads the values from them
    from onnx import TensorProto as TP
    arr = (np.arange(4000, dtype=np.float32) / 7).astype(np.float16)
    t = numpy_helper.from_array(arr, "w")
    t.ClearField("raw_data")
    t.data_location = TP.EXTERNAL
    for k, v in (("location", "weights dir/w b.bin"), ("offset", "16"), ("length", str(arr.nbytes))):
        e = t.external_data.add()
        e.key, e.value = k, v
    g = helper.make_graph([], "ext", [], [helper.make_tensor_value_info("w", TP.FLOAT16, None)], [t])
    mpath = os.path.join(TMP, "ext.onnx")
    dpath = os.path.join(TMP, "w b.bin")
    with open(mpath, "wb") as f:
        f.write(helper.make_model(g).SerializeToString())
    with open(dpath, "wb") as f:
        f.write(b"\7" * 16 + arr.tobytes())
    p = subprocess.run(["curl", "-sS", "-F", "model=@" + mpath, "-F", "weights dir/w b.bin=@" + dpath,
                        "http://127.0.0.1:%d/models" % reps[0].port], stdout=subprocess.PIPE)
    eid = (as_json(p.stdout) or {}).get("id")
    check(eid is not None and eid != sha(open(mpath, "rb").read()), "bundle upload: %r" % p.stdout[:200])
    keys = [k for k, _ in ceph.s3.list(BUCKET, "shared/data/%s/" % eid)]
    check(keys == ["shared/data/%s/weights dir/w b.bin" % eid], "the data file is in the bucket: %r" % keys)
    st, _, b = reps[2].get("/models/%s/tensors/w?values=4000&stats=0" % eid)
    vals = ((as_json(b) or {}).get("values") or {}).get("data", [])
    check(st == 200 and len(vals) == 4000 and np.array_equal(np.array(vals, np.float64).astype(np.float16), arr),
          "another replica reads the values from the data file: %d" % st)

    # a diff of two models uploaded through two replicas, asked of the third, which knows
    # neither: it reads both from the bucket (an unknown second model is a 404)
    da, db = make_model(31337), make_model(31338)
    st1, _, _ = upload(reps[0].port, da)
    st2, _, _ = upload(reps[1].port, db)
    st, _, b = reps[2].get("/models/%s/diff/%s.json" % (sha(da), sha(db)))
    j = as_json(b) or {}
    check(st1 == 201 and st2 == 201 and st == 200 and j.get("format") == "onnxviz.diff/1" and
          (j.get("summary") or {}).get("tensors", {}).get("changed") == 1,
          "a third replica diffs two models uploaded through the others: %d %r" % (st, b[:200]))
    st, _, b = reps[2].get("/models/%s/diff/%s.json" % (sha(da), "0" * 64))
    check(st == 404 and ((as_json(b) or {}).get("error") or {}).get("code") == "not_found",
          "a diff with a model no replica has: 404 (%d)" % st)

    # listing with what was kept at upload
    st, _, b = request(lb.port, "GET", "/models?limit=1000")
    j = as_json(b) or {}
    items = {m["id"]: m for m in j.get("models", [])}
    sq = items.get(mid, {})
    check(st == 200 and sq.get("name") == "squeezenet.onnx" and sq.get("graph") == "torch_jit" and
          sq.get("producer") == "pytorch" and sq.get("nodes") == 83 and sq.get("kind") == "model",
          "listing has name, graph, producer, kind and nodes: %r" % sq)
    check(items.get(bid, {}).get("name") == "big.onnx" and j.get("total") == len(items),
          "listing: %r total %r" % (items.get(bid), j.get("total")))

    # x-www-form-urlencoded, what `curl --data-binary @m.onnx` sends, is the raw model
    other = make_model(99)
    st, _, b = request(lb.port, "POST", "/models", body=other,
                       headers={"Content-Type": "application/x-www-form-urlencoded"})
    check(st == 201 and (as_json(b) or {}).get("id") == sha(other), "urlencoded body taken as the model: %d" % st)
    p = subprocess.run(["curl", "-sS", "--data-binary", "@" + SQUEEZENET, "-o", "/dev/null", "-w", "%{http_code}",
                        "http://127.0.0.1:%d/graph.svg" % lb.port], stdout=subprocess.PIPE)
    check(p.stdout == b"200", "curl --data-binary @m.onnx /graph.svg: %r" % p.stdout)

    # by reference: a model already in the object store
    ceph.s3.make_bucket(SOURCES)
    ceph.s3.make_bucket("not-allowed")
    ref = make_model(5150)
    ceph.s3.put(SOURCES, "team/models/ref.onnx", ref)
    ceph.s3.put("not-allowed", "ref.onnx", ref)
    hj = {"Content-Type": "application/json"}
    st, _, b = request(lb.port, "POST", "/models", body=json.dumps({"source": "s3://%s/team/models/ref.onnx" % SOURCES}),
                       headers=hj)
    j = as_json(b) or {}
    check(st == 201 and j.get("id") == sha(ref), "by reference: 201 with the SHA-256 of the object: %d %r" % (st, b[:200]))
    st, _, b = reps[2].get("/models/%s/model.onnx" % sha(ref))
    check(st == 200 and b == ref, "by reference: the bytes are stored")
    st, _, b = request(lb.port, "GET", "/models?limit=1000")
    names = {m["id"]: m.get("name") for m in (as_json(b) or {}).get("models", [])}
    check(names.get(sha(ref)) == "ref.onnx", "by reference: its name is the key's: %r" % names.get(sha(ref)))
    for body, want, code in ((json.dumps({"source": "s3://not-allowed/ref.onnx"}), 403, "source_not_allowed"),
                             (json.dumps({"source": "s3://%s/missing.onnx" % SOURCES}), 422, "source_not_found"),
                             (json.dumps({"source": "http://x/y"}), 400, "bad_source"),
                             (json.dumps({"src": "s3://%s/x" % SOURCES}), 400, "bad_source"),
                             ("{", 400, "bad_source")):
        st, h, b = request(lb.port, "POST", "/models", body=body, headers=hj)
        e = ((as_json(b) or {}).get("error") or {})
        check(st == want and e.get("code") == code, "by reference %s: %d %s (%d %r)" % (body[:40], want, code, st, e))

    # metrics: the object store's requests and latencies
    m = reps[0].metrics()
    check(m.get('onnxviz_object_store_requests_total{op="put",result="ok"}', 0) >= 1 and
          m.get('onnxviz_object_store_request_duration_seconds_count{op="get"}', 0) >= 1,
          "metrics count object store requests by op and outcome")


# ---------------------------------------------------------------------------------------
# kill -9 during 200 uploads
def t_kill(ceph, reps, lb):
    models = [make_model(1000 + i) for i in range(200)]
    acked = {}
    codes = []
    killed = threading.Event()
    lock = threading.Lock()
    victim = reps[1]

    def up(i):
        data = models[i]
        for attempt in range(8):
            st, _, b = upload(lb.port, data, timeout=60)
            with lock:
                codes.append(st)
            if st in (200, 201) and (as_json(b) or {}).get("id") == sha(data):
                with lock:
                    acked[sha(data)] = data
                    if len(acked) == 60 and not killed.is_set():
                        killed.set()
                        victim.kill9()
                return
            time.sleep(0.2 * (attempt + 1))

    t0 = time.time()
    with concurrent.futures.ThreadPoolExecutor(8) as ex:
        list(ex.map(up, range(200)))
    took = time.time() - t0
    check(killed.is_set(), "a replica was killed mid-run")
    bad = [c for c in codes if c not in (200, 201, 502, 503, 0)]
    check(not bad, "answers during the kill: only 200/201, and 502/503 or a cut connection for the dead one: %r" % sorted(set(codes)))
    figure("kill -9 of a replica during 200 uploads through haproxy: %d acknowledged, %d retried, %.1f s"
           % (len(acked), sum(1 for c in codes if c not in (200, 201)), took))
    check(len(acked) == 200, "every upload acknowledged in the end (with retries): %d" % len(acked))
    t1 = time.time()
    for r in (reps[0], reps[2]):
        wrong = 0
        for mid, data in acked.items():
            st, _, b = r.get("/models/%s/model.onnx" % mid)
            wrong += st != 200 or b != data
        check(wrong == 0, "%s reads every acknowledged upload back byte for byte (%d wrong)" % (r.name, wrong))
    print("  read back through two replicas: %.1f s" % (time.time() - t1), flush=True)
    t1 = time.time()
    n = bucket_consistent(ceph, "shared", "after kill -9")
    print("  bucket check: %.1f s" % (time.time() - t1), flush=True)
    t1 = time.time()
    # the killed replica comes back on its cache folder and serves them all too
    victim.start()
    wrong = sum(1 for mid, data in list(acked.items())[:50] if victim.get("/models/%s/model.onnx" % mid)[2] != data)
    check(wrong == 0, "the restarted replica serves them (%d wrong of 50)" % wrong)
    check(lb.up(6), "haproxy sees the replica again")
    print("  restart: %.1f s" % (time.time() - t1), flush=True)
    return n



# ---------------------------------------------------------------------------------------
# resumable uploads across replicas (tus; docs/api.md "Resumable uploads")
TUS_PART = 5 << 20  # the replicas' --upload-part-size
TUS_EXPIRY = 15     # the replicas' --upload-expiry


def _b64(s):
    import base64
    return base64.b64encode(s.encode()).decode()


def tus_begin(port, data, claimed=None, name="big.onnx"):
    hs = {"Tus-Resumable": "1.0.0", "Upload-Length": str(len(data)),
          "Upload-Metadata": "sha256 %s,filename %s" % (_b64(claimed or sha(data)), _b64(name))}
    st, h, b = request(port, "POST", "/uploads", headers=hs)
    return st, h, as_json(b) or {}


def store_uid(secret):
    """The state's name of the upload whose URL carries secret (the URL is a secret only
    its creator knows; the bucket holds only its hash: issue 35)."""
    return hashlib.sha256(("onnxviz-upload/2 " + secret).encode()).hexdigest()[:32]


def tus_offset(port, uid):
    for _ in range(40):
        st, h, _ = request(port, "HEAD", "/uploads/" + uid, headers={"Tus-Resumable": "1.0.0"})
        if st == 200:
            return int(h["upload-offset"])
        if st == 404:
            return None
        time.sleep(0.25)  # the load balancer has not seen the dead replica yet
    return None


def tus_patch(port, uid, offset, chunk, during=None, claim=None):
    """One PATCH (claim: its Upload-Sha256); `during` runs when half the body is sent.
    (status, headers, body); status 0 when the connection was cut."""
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=120 * SLOW)
    try:
        c.putrequest("PATCH", "/uploads/" + uid)
        for k, v in (("Tus-Resumable", "1.0.0"), ("Content-Type", "application/offset+octet-stream"),
                     ("Upload-Offset", str(offset)), ("Content-Length", str(len(chunk)))) + \
                (() if claim is None else (("Upload-Sha256", claim),)):
            c.putheader(k, v)
        c.endheaders()
        half = len(chunk) // 2
        c.send(chunk[:half])
        if during is not None:
            during()
        c.send(chunk[half:])
        r = c.getresponse()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
    except (OSError, http.client.HTTPException):
        return 0, {}, b""
    finally:
        c.close()


def tus_patch_refused(port, uid, offset, length, claim):
    """A PATCH the server answers at its headers (Expect: 100-continue, no body sent: a
    body sent after a refusal may find the connection closed): (status, body)."""
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=20 * SLOW)
    hs = {"Tus-Resumable": "1.0.0", "Content-Type": "application/offset+octet-stream",
          "Upload-Offset": str(offset), "Content-Length": str(length), "Expect": "100-continue"}
    if claim is not None:
        hs["Upload-Sha256"] = claim
    try:
        c.request("PATCH", "/uploads/" + uid, headers=hs)
        r = c.getresponse()
        return r.status, r.read()
    except (OSError, http.client.HTTPException):
        return 0, b""
    finally:
        c.close()


def tus_begin_unnamed(port, size, name="big.onnx"):
    """POST /uploads without sha256 (decision 97): the last part names the file."""
    hs = {"Tus-Resumable": "1.0.0", "Upload-Length": str(size), "Upload-Metadata": "filename %s" % _b64(name)}
    st, h, b = request(port, "POST", "/uploads", headers=hs)
    return st, h, as_json(b) or {}


def multipart_uploads(ceph, prefix):
    """The keys of the bucket's multipart uploads in progress under prefix."""
    import xml.etree.ElementTree as ET
    st, _, body = ceph.s3.request("GET", BUCKET, query={"uploads": "", "prefix": prefix})
    if st != 200:
        return None
    return [u.findtext(s3lib.NS + "Key") for u in ET.fromstring(body).findall(s3lib.NS + "Upload")]


def t_resumable(ceph, reps, lb):
    data = make_model(5000, floats=7 * 1000 * 1000)  # 28 MB: 6 parts of 5 MiB
    mid = sha(data)
    nparts = (len(data) + TUS_PART - 1) // TUS_PART
    t0 = time.time()
    st, h, j = tus_begin(lb.port, data)
    check(st == 201 and h.get("upload-part-size") == str(TUS_PART),
          "POST /uploads through haproxy: 201 with Upload-Part-Size %d: %r %r" % (TUS_PART, st, j))
    uid = j.get("upload", "")
    check(ceph.s3.head(BUCKET, "shared/uploads/%s/state" % store_uid(uid)) == 200, "the upload's state is an object")
    check(multipart_uploads(ceph, "shared/models/%s.onnx" % mid) == ["shared/models/%s.onnx" % mid],
          "one multipart upload to the model's key")
    STORED = 'onnxviz_resumable_parts_total{outcome="stored"}'
    before = {r.name: r.metrics().get(STORED, 0) for r in reps if r.proc.poll() is None}
    killed, at_kill = [], {}

    def kill_receiver():
        # the replica receiving this part (its part staged now) dies mid-part
        end = time.time() + 5 * SLOW
        while not killed and time.time() < end:
            for r in reps:
                m = r.metrics() if r.proc.poll() is None else {}
                if m.get("onnxviz_resumable_parts_staged", 0) >= 1:
                    at_kill[r.name] = m.get(STORED, 0)  # the parts it stored before it died
                    r.kill9()
                    killed.append(r)
                    return
            time.sleep(0.02)

    offset, sent, answers, final = 0, 0, [], None
    while offset is not None and offset < len(data) and sent < 3 * nparts:
        chunk = data[offset:offset + TUS_PART]
        during = kill_receiver if (offset // TUS_PART == 3 and not killed) else None
        st, h, b = tus_patch(lb.port, uid, offset, chunk, during)
        sent += 1
        answers.append(st)
        if st == 204:
            offset = int(h["upload-offset"])
        elif st in (200, 201):
            final = (st, h, as_json(b) or {})
            offset = len(data)
        else:
            time.sleep(0.3)
            offset = tus_offset(lb.port, uid)
    took = time.time() - t0
    check(len(killed) == 1, "a replica was killed while it received a part")
    check(final is not None and final[0] == 201 and final[2].get("id") == mid,
          "the transfer completes: 201 with the model's SHA-256 as its id: %r" % (final and final[:1], ))
    check(sent <= nparts + 1, "at most one part sent again: %d PATCHes for %d parts (answers %r)" % (sent, nparts, answers))
    figure("resumable upload through haproxy, %d MB in %d parts of 5 MiB, a replica killed mid-part: %d PATCHes, %.1f s"
           % (len(data) >> 20, nparts, sent, took))
    live = [r for r in reps if r.proc.poll() is None]
    stored = {name: (at_kill[name] if name in at_kill else
                     next(r for r in reps if r.name == name).metrics().get(STORED, 0)) - n
              for name, n in before.items()}
    check(sum(1 for v in stored.values() if v > 0) >= 2, "parts landed on different replicas: %r" % stored)
    for r in live:
        st, _, b = r.get("/models/%s/model.onnx" % mid)
        check(st == 200 and b == data, "%s reads the model back byte for byte (%d)" % (r.name, st))
    check(ceph.s3.get(BUCKET, "shared/models/%s.onnx" % mid) == data, "the bucket's object is the file")
    check(ceph.s3.head(BUCKET, "shared/uploads/%s/state" % store_uid(uid)) == 404, "the state is gone")
    check(multipart_uploads(ceph, "shared/models/") == [], "no multipart upload left")
    st, _, b = request(lb.port, "GET", "/models/%s" % mid)
    check(st == 200, "the model's summary through haproxy: %d" % st)
    st, _, _ = request(lb.port, "HEAD", "/uploads/" + uid, headers={"Tus-Resumable": "1.0.0"})
    check(st == 404, "the finished upload is gone: %d" % st)
    # the same file again: held, nothing sent
    st, _, j = tus_begin(lb.port, data)
    check(st == 200 and j.get("id") == mid, "the same file again: 200 with the model, nothing sent: %r" % st)

    # a wrong final hash: 422, and nothing of it remains
    other = make_model(5001, floats=2 * 1000 * 1000)  # 8 MB: 2 parts
    claim = sha(b"not the bytes sent")
    st, _, j = tus_begin(lb.port, other, claimed=claim)
    uid2 = j.get("upload", "")
    check(st == 201, "a transfer claiming another hash begins: %d" % st)
    offset, last = 0, None
    while offset < len(other):
        st, h, b = tus_patch(lb.port, uid2, offset, other[offset:offset + TUS_PART])
        last = (st, as_json(b) or {})
        if st != 204:
            break
        offset = int(h["upload-offset"])
    check(last and last[0] == 422 and (last[1].get("error") or {}).get("code") == "checksum_mismatch",
          "the wrong final hash: 422 checksum_mismatch: %r" % (last,))
    check(ceph.s3.head(BUCKET, "shared/models/%s.onnx" % claim) == 404, "no model under the claimed id")
    check(ceph.s3.head(BUCKET, "shared/uploads/%s/state" % store_uid(uid2)) == 404, "no state left")
    check(multipart_uploads(ceph, "shared/models/") == [], "no multipart upload left (ListMultipartUploads)")
    check(request(lb.port, "HEAD", "/models/%s" % claim)[0] == 404, "the service has no such model")

    # one writer per part (issue 35 item 7): the same part of one upload sent at once to two
    # replicas, the right bytes to one and flipped bytes to the other: never both
    # acknowledged; the upload ends as the file, or (the flipped bytes won) 422 with
    # nothing kept — never a model under the id with other bytes
    rounds, both, outcomes = 6, 0, []
    a_rep, b_rep = live[0], live[1]
    for k in range(rounds):
        dual = make_model(5010 + k, floats=2 * 1000 * 1000)  # 8 MB: 2 parts
        st, _, j = tus_begin(a_rep.port, dual)
        u = j.get("upload", "")
        good = dual[:TUS_PART]
        bad = bytes(x ^ 0xff for x in good[:4096]) + good[4096:]
        gate = threading.Barrier(2)
        res = {}

        def send(name, port, chunk):
            gate.wait()
            res[name] = tus_patch(port, u, 0, chunk)[0]
        ts = [threading.Thread(target=send, args=("good", a_rep.port, good) if k % 2 == 0 else ("good", b_rep.port, good)),
              threading.Thread(target=send, args=("bad", b_rep.port, bad) if k % 2 == 0 else ("bad", a_rep.port, bad))]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        both += res.get("good") == 204 and res.get("bad") == 204
        off = tus_offset(lb.port, u)
        last = None
        while off is not None and off < len(dual):
            last, h, _ = tus_patch(lb.port, u, off, dual[off:off + TUS_PART])
            off = int(h["upload-offset"]) if last == 204 else len(dual)
        outcomes.append((res.get("good"), res.get("bad"), last))
        stored = ceph.s3.get(BUCKET, "shared/models/%s.onnx" % sha(dual))
        check(stored is None or stored == dual, "round %d: nothing, or the file, under its id" % k)
    print("  one part at once to two replicas, (right bytes, flipped bytes, the end): %r" % outcomes, flush=True)
    check(both == 0 and all(o[0] in (204, 409) and o[1] in (204, 409) and (o[0] == 204) != (o[1] == 204)
                            for o in outcomes),
          "a part sent at once to two replicas with different bytes: one 204, the other 409 (good, bad, end): %r" % outcomes)
    check(all(o[2] in (200, 201) if o[0] == 204 else o[2] == 422 for o in outcomes),
          "the right bytes acknowledged: the model; the flipped ones: 422 at the end: %r" % outcomes)
    check(multipart_uploads(ceph, "shared/models/") == [], "no multipart upload left of them")

    # a finished object whose hash fails (a part replaced in the bucket after it was
    # acknowledged: what a replica frozen past its lease could still do) is removed and
    # its id accepted again, not left "stored" and unservable
    spoilt = make_model(5020, floats=2 * 1000 * 1000)  # 8 MB: 2 parts
    st, _, j = tus_begin(lb.port, spoilt)
    su = j.get("upload", "")
    st, _, _ = tus_patch(lb.port, su, 0, spoilt[:TUS_PART])
    check(st == 204, "the first part: %d" % st)
    import xml.etree.ElementTree as ET
    key = "shared/models/%s.onnx" % sha(spoilt)
    st, _, body = ceph.s3.request("GET", BUCKET, query={"uploads": "", "prefix": key})
    ups = [u.findtext(s3lib.NS + "UploadId") for u in ET.fromstring(body).findall(s3lib.NS + "Upload")]
    check(len(ups) == 1, "its multipart upload: %r" % ups)
    flipped = bytes(x ^ 0xff for x in spoilt[:TUS_PART])
    st, _, _ = ceph.s3.request("PUT", BUCKET, key, query={"partNumber": "1", "uploadId": ups[0] if ups else "-"},
                               body=flipped)
    check(st == 200, "part 1 replaced behind the service's back: %d" % st)
    st, _, b = tus_patch(lb.port, su, TUS_PART, spoilt[TUS_PART:])
    err = (as_json(b) or {}).get("error") or {}
    check(st == 422 and err.get("code") == "checksum_mismatch" and err.get("rule") == "stored",
          "the last part: 422 checksum_mismatch (rule stored): %d %r" % (st, err))
    check(ceph.s3.head(BUCKET, key) == 404, "the object that does not hash to its id is removed")
    st, _, j = tus_begin(lb.port, spoilt)
    check(st == 201, "the id is accepted again: POST /uploads 201 (not 200 'stored'): %d %r" % (st, j))
    su, off, last = j.get("upload", ""), 0, None
    while st == 201 and off < len(spoilt):
        last, h, _ = tus_patch(lb.port, su, off, spoilt[off:off + TUS_PART])
        off = int(h["upload-offset"]) if last == 204 else len(spoilt)
    check(last == 201 and ceph.s3.get(BUCKET, key) == spoilt, "sent again, it is stored as the file: %r" % last)

    # an abandoned transfer: aborted after --upload-expiry
    third = make_model(5002, floats=2 * 1000 * 1000)
    st, _, j = tus_begin(lb.port, third)
    uid3 = j.get("upload", "")
    st, _, _ = tus_patch(lb.port, uid3, 0, third[:TUS_PART])
    check(st == 204, "the abandoned transfer's first part: %d" % st)
    check(multipart_uploads(ceph, "shared/models/%s.onnx" % sha(third)) is not None and
          len(multipart_uploads(ceph, "shared/models/%s.onnx" % sha(third))) == 1, "its multipart upload")
    expired0 = sum(r.metrics().get('onnxviz_resumable_uploads_total{event="expired"}', 0) for r in live)
    time.sleep(TUS_EXPIRY + 1)
    # each replica's sweep thread passes every half the shorter expiry (7.5 s here)
    end = time.time() + TUS_EXPIRY * SLOW
    while time.time() < end and multipart_uploads(ceph, "shared/models/%s.onnx" % sha(third)) != []:
        time.sleep(0.5)
    expired = sum(r.metrics().get('onnxviz_resumable_uploads_total{event="expired"}', 0) for r in live)
    check(expired - expired0 >= 1, "the metrics count the expired transfer: %d" % (expired - expired0))
    check(multipart_uploads(ceph, "shared/models/%s.onnx" % sha(third)) == [], "its multipart upload is aborted")
    check(ceph.s3.head(BUCKET, "shared/uploads/%s/state" % store_uid(uid3)) == 404, "its state is deleted")
    check(request(lb.port, "HEAD", "/uploads/" + uid3, headers={"Tus-Resumable": "1.0.0"})[0] == 404,
          "HEAD of the expired upload: 404")
    # a file that is not a model: its hash is right, the parser refuses it, nothing stays
    junk = os.urandom(6 << 20)
    st, _, j = tus_begin(lb.port, junk)
    uid4, off, last = j.get("upload", ""), 0, None
    while st == 201 and off < len(junk):
        pst, h, b = tus_patch(lb.port, uid4, off, junk[off:off + TUS_PART])
        last = pst
        if pst != 204:
            break
        off = int(h["upload-offset"])
    check(last is not None and 400 <= last < 500, "a file that does not parse: 4xx: %r" % last)
    check(ceph.s3.head(BUCKET, "shared/models/%s.onnx" % sha(junk)) == 404, "it is not kept in the bucket")
    check(multipart_uploads(ceph, "shared/models/") == [], "nor its multipart upload")

    # parts staged on their way to the object store are bounded: the 17th at once is 503
    one = live[0]
    fakes = [os.urandom(64) * (TUS_PART // 64 + 1) for _ in range(17)]
    conns, uids = [], []
    for f in fakes:
        st, _, j = tus_begin(one.port, f)
        uids.append(j.get("upload", ""))
    for i, uid in enumerate(uids):
        c = http.client.HTTPConnection("127.0.0.1", one.port, timeout=30 * SLOW)
        c.putrequest("PATCH", "/uploads/" + uid)
        for k, v in (("Tus-Resumable", "1.0.0"), ("Content-Type", "application/offset+octet-stream"),
                     ("Upload-Offset", "0"), ("Content-Length", str(TUS_PART)), ("Expect", "100-continue")):
            c.putheader(k, v)
        c.endheaders()
        conns.append(c)
        if i < 16:
            time.sleep(0.05)
    busy = None
    try:
        r = conns[-1].getresponse()
        busy = (r.status, r.getheader("Retry-After"), as_json(r.read()) or {})
    except (OSError, http.client.HTTPException) as e:
        busy = (0, None, {"exception": repr(e)})
    staged = one.metrics().get("onnxviz_resumable_parts_staged", -1)
    for c in conns:
        c.close()
    check(busy[0] == 503 and busy[1] is not None and (busy[2].get("error") or {}).get("code") == "parts_busy",
          "the 17th part at once: 503 parts_busy with Retry-After: %r" % (busy,))
    check(staged == 16, "16 parts staged meanwhile: %r" % staged)
    end = time.time() + 10 * SLOW
    while time.time() < end and one.metrics().get("onnxviz_resumable_parts_staged", -1) != 0:
        time.sleep(0.1)
    check(one.metrics().get("onnxviz_resumable_parts_staged", -1) == 0, "none staged once the clients went")
    check(one.metrics().get('onnxviz_resumable_parts_total{outcome="busy"}', 0) >= 1, "the metrics count it")
    for uid in uids:
        request(one.port, "DELETE", "/uploads/" + uid, headers={"Tus-Resumable": "1.0.0"})
    check(multipart_uploads(ceph, "shared/models/") == [], "DELETE of the uploads aborts their multipart uploads")

    # a bundle through the resumable path and haproxy round-robin: the data file's parts
    # land on different replicas (one killed mid-part), the manifest on any; the bundle is
    # then every replica's, its data file kept by its SHA-256 in the bucket ("already
    # there" from any replica), the same bundle as a multipart POST /models of the files
    for r in killed:
        r.start()
    check(lb.up(6), "haproxy sees the replica again")
    import struct
    from onnx import TensorProto, helper, numpy_helper
    import numpy as np
    n = 3500 * 1000
    w = numpy_helper.from_array(np.random.default_rng(7).standard_normal(n).astype(np.float32), "w")
    wbytes = w.raw_data  # 14 MB: three parts
    w.ClearField("raw_data")
    w.data_location = TensorProto.EXTERNAL
    for k, v in (("location", "w.bin"), ("offset", "0"), ("length", str(len(wbytes)))):
        e = w.external_data.add()
        e.key, e.value = k, v
    g = helper.make_graph([helper.make_node("Add", ["x", "w"], ["y"], name="add")], "bundle",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [n])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [n])], [w])
    model = helper.make_model(g, producer_name="s3-suite").SerializeToString()
    bid, wsha = bundle_id(model, {"w.bin": wbytes}), sha(wbytes)
    man = ("onnxviz-bundle/1\nmodel %s %d\nfile %s %d w.bin\n" % (sha(model), len(model), wsha,
                                                                   len(wbytes))).encode()

    def tus_hs(data, kind, name):
        return {"Tus-Resumable": "1.0.0", "Upload-Length": str(len(data)),
                "Upload-Metadata": "sha256 %s,filename %s,kind %s" % (_b64(sha(data)), _b64(name), _b64(kind))}

    def tus_lb(data, kind, name, kill_part=None):
        """The file through haproxy, part after part, going on from HEAD after a failure
        (kill_part: the replica receiving that part dies mid-part): (status, json, PATCHes)."""
        for _ in range(3):  # haproxy may find no replica ready for a moment (a loaded RGW)
            st, _, b = request(lb.port, "POST", "/uploads", headers=tus_hs(data, kind, name))
            if st != 503 or not lb.up(2, 30):
                break
        uid, off, sent, last = (as_json(b) or {}).get("upload", ""), 0, 0, (st, as_json(b) or {}, 0)
        if st != 201:
            return last
        while off is not None and off < len(data) and sent < 3 * (len(data) // TUS_PART + 1):
            during = kill_receiver if (kill_part is not None and off // TUS_PART == kill_part
                                       and not killed) else None
            st, h, b = tus_patch(lb.port, uid, off, data[off:off + TUS_PART], during)
            sent += 1
            last = (st, as_json(b) or {}, sent)
            if st == 204:
                off = int(h["upload-offset"])
            elif st in (200, 201):
                break
            else:
                time.sleep(0.3)
                lb.up(2, 30)  # the dead replica out of haproxy's rotation
                off = tus_offset(lb.port, uid)
        return last

    killed.clear()
    at_kill.clear()
    before = {r.name: r.metrics().get(STORED, 0) for r in reps}
    r1 = tus_lb(model, "model", "model.onnx")
    t0 = time.time()
    r2 = tus_lb(wbytes, "data", "w.bin", kill_part=1)
    took = time.time() - t0
    stored = {r.name: (at_kill[r.name] if r.name in at_kill else r.metrics().get(STORED, 0)) - before[r.name]
              for r in reps}
    r3 = tus_lb(man, "bundle", "model.onnx")
    check(r1[0] == 201 and r2[0] == 201 and r2[1].get("stored") is True and r3[0] == 201 and r3[1].get("id") == bid,
          "a bundle through haproxy's resumable path: model %d, data %d, manifest %d %r" % (r1[0], r2[0], r3[0], r3[1]))
    check(len(killed) == 1, "a replica was killed while it received a part of the data file")
    check(r2[2] <= 4, "the data file's 3 parts: at most one sent again: %d PATCHes" % r2[2])
    took_part = [name for name, v in stored.items() if v > 0 or name in at_kill]
    check(len(took_part) >= 2, "the data file's parts went to different replicas (stored, or killed while "
          "receiving one): %r, killed %r" % (stored, list(at_kill)))
    figure("a bundle's 14 MB data file through haproxy in 3 parts of 5 MiB, a replica killed mid-part: %d PATCHes, %.1f s"
           % (r2[2], took))
    live = [r for r in reps if r.proc.poll() is None]
    for r in live:  # "already there": the data file is the bucket's, not a replica's
        st, _, b = request(r.port, "POST", "/uploads", headers=tus_hs(wbytes, "data", "w.bin"))
        j = as_json(b) or {}
        check(st == 200 and j.get("sha256") == wsha and j.get("stored") is True,
              "%s: the same data file again is already there: %d %r" % (r.name, st, j))
    check(ceph.s3.get(BUCKET, "shared/blobs/%s" % wsha) == wbytes, "the data file is kept by its SHA-256 in the bucket")
    check(ceph.s3.get(BUCKET, "shared/data/%s/w.bin" % bid) == wbytes, "the data file is in the bucket under the bundle")
    etag = ceph.s3.request("HEAD", BUCKET, "shared/data/%s/w.bin" % bid)[1].get("etag", "")
    check(etag.strip('"').endswith("-2"), "it was copied in 2 ranges (UploadPartCopy, signed with "
          "x-amz-copy-source-range; above COPY_MAX as above 5 GiB): ETag %s" % etag)
    check(ceph.s3.get(BUCKET, "shared/models/%s.onnx" % bid) == model, "the model file is in the bucket under the bundle")
    check(ceph.s3.head(BUCKET, "shared/blobs/%s" % bid) == 404, "the manifest's blob is gone once read")
    check(multipart_uploads(ceph, "shared/") == [], "no multipart upload left")
    want = list(struct.unpack("<8f", wbytes[:32]))
    for r in live:
        st, _, b = r.get("/models/%s/tensors/w?values=8" % bid)
        got = ((as_json(b) or {}).get("values") or {}).get("data")
        exact = got is not None and len(got) == 8 and struct.pack("<8f", *got) == wbytes[:32]
        check(st == 200 and exact, "%s reads the bundle's weights bit for bit: %d %r / %r" % (r.name, st, got, want))
    mpath, dpath = os.path.join(TMP, "b-model.onnx"), os.path.join(TMP, "b-w.bin")
    with open(mpath, "wb") as f:
        f.write(model)
    with open(dpath, "wb") as f:
        f.write(wbytes)
    p = subprocess.run(["curl", "-sS", "-F", "model=@" + mpath, "-F", "w.bin=@" + dpath,
                        "http://127.0.0.1:%d/models" % live[-1].port], stdout=subprocess.PIPE)
    check((as_json(p.stdout) or {}).get("id") == bid,
          "a multipart POST /models of the same files names the same bundle: %r" % p.stdout[:120])
    keys = [k for k, _ in ceph.s3.list(BUCKET, "shared/data/%s/" % bid)]
    check(keys == ["shared/data/%s/w.bin" % bid], "its keys are the resumable bundle's: %r" % keys)
    # the killed replica comes back for the steps after
    for r in killed:
        r.start()
    check(lb.up(6), "haproxy sees the replica again")


def t_unnamed(ceph, reps, lb):
    """Models begun without their id on the S3 store (issue 37, decision 97): the parts go
    to a multipart upload of the transfer's own key (uploads/<uid>/file), the finish names
    the state by the claim the bytes met, completes it and copies it to the model's key."""
    import xml.etree.ElementTree as ET
    data = make_model(5100, floats=3 * 1000 * 1000)  # 12 MB: 3 parts of 5 MiB
    mid = sha(data)
    last = (len(data) - 1) // TUS_PART * TUS_PART

    def begin_send(port, blob, upto):
        """An unnamed upload of blob begun at port, its parts up to upto sent through
        haproxy: (POST's status, upload, last PATCH's status)."""
        st, h, j = tus_begin_unnamed(port, len(blob))
        u = j.get("upload", "")
        off = 0
        while st == 201 and off < upto:
            st2, h2, _ = tus_patch(lb.port, u, off, blob[off:off + TUS_PART])
            if st2 != 204:
                return st, u, st2
            off = int(h2["upload-offset"])
        return st, u, 204

    # through haproxy: the parts on whichever replica, the last one naming the file
    st, u, pst = begin_send(lb.port, data, last)
    check(st == 201 and pst == 204, "unnamed on S3: 201 and the parts before the last through haproxy: %d %d" % (st, pst))
    tmp = "shared/uploads/%s/file" % store_uid(u)
    check(multipart_uploads(ceph, tmp) == [tmp] and multipart_uploads(ceph, "shared/models/") == [],
          "its multipart upload goes to the transfer's own key, none to a model's")
    st, b = tus_patch_refused(lb.port, u, last, len(data) - last, None)
    check(st == 400 and ((as_json(b) or {}).get("error") or {}).get("code") == "sha256_required",
          "the last part without Upload-Sha256: 400 sha256_required: %d" % st)
    t0 = time.time()
    st, _, b = tus_patch(lb.port, u, last, data[last:], claim=mid)
    took = time.time() - t0
    j = as_json(b) or {}
    # the same size named, for the price of the copy: its last part completes in place
    named = make_model(5103, floats=3 * 1000 * 1000)
    nst, _, nj = tus_begin(lb.port, named)
    off = 0
    while nst == 201 and off < last:
        off = int(tus_patch(lb.port, nj.get("upload", ""), off, named[off:off + TUS_PART])[1].get("upload-offset", last))
    t0 = time.time()
    nst = tus_patch(lb.port, nj.get("upload", ""), last, named[last:])[0] if nst == 201 else nst
    figure("the last part of an %d MB model on S3 (UploadPart, completion, parse; unnamed: also the name and the "
           "server-side copy): unnamed %.2f s, named %.2f s (%d)" % (len(data) >> 20, took, time.time() - t0, nst))
    check(st == 201 and j.get("id") == mid, "the last part naming it: 201 with its id: %d %r" % (st, j))
    check(ceph.s3.get(BUCKET, "shared/models/%s.onnx" % mid) == data, "the bucket's model object is the file")
    check(ceph.s3.head(BUCKET, tmp) == 404 and ceph.s3.head(BUCKET, "shared/uploads/%s/state" % store_uid(u)) == 404,
          "the temporary object and the state are gone")
    check(multipart_uploads(ceph, "shared/") == [], "no multipart upload left")
    for r in reps:
        st, _, b = r.get("/models/%s/model.onnx" % mid)
        check(st == 200 and b == data, "%s reads it back byte for byte: %d" % (r.name, st))

    # a claim the bytes do not meet: 422, nothing kept (no model, temporary, upload, state)
    other = make_model(5101, floats=2 * 1000 * 1000)  # 8 MB: 2 parts
    st, h, j = tus_begin_unnamed(lb.port, len(other))
    u2 = j.get("upload", "")
    st, _, _ = tus_patch(lb.port, u2, 0, other[:TUS_PART])
    st, _, b = tus_patch(lb.port, u2, TUS_PART, other[TUS_PART:], claim=mid)
    check(st == 422 and ((as_json(b) or {}).get("error") or {}).get("code") == "checksum_mismatch",
          "unnamed, a claim of another (held) model: 422 checksum_mismatch: %d" % st)
    check(ceph.s3.get(BUCKET, "shared/models/%s.onnx" % mid) == data, "the held model unchanged")
    check(ceph.s3.head(BUCKET, "shared/models/%s.onnx" % sha(other)) == 404, "nothing under the bytes' id")
    check(ceph.s3.list(BUCKET, "shared/uploads/%s/" % store_uid(u2)) == [] and multipart_uploads(ceph, "shared/") == [],
          "nothing left of the refused upload")

    # a finish that failed half-way (the state named, the upload completed at its own key,
    # no model: what a replica killed between the completion and the copy leaves) is
    # finished by the last part sent again, and only under the name its bytes met
    third = make_model(5102, floats=2 * 1000 * 1000)
    tid = sha(third)
    st, u3, pst = begin_send(lb.port, third, TUS_PART)
    suid = store_uid(u3)
    skey = "shared/uploads/%s/state" % suid
    state = (ceph.s3.get(BUCKET, skey) or b"").decode()
    upid = re.search(r"^backend mpu (.*)$", state, re.M)
    check(st == 201 and pst == 204 and upid is not None and "\nstaged 1\n" in state,
          "a third unnamed upload, its first part in: its state marks it staged: %r" % state[-80:])
    tkey = "shared/uploads/%s/file" % suid
    if upid is not None:
        q = {"partNumber": "2", "uploadId": upid.group(1)}
        ceph.s3.request("PUT", BUCKET, tkey, query=q, body=third[TUS_PART:])
        _, _, body = ceph.s3.request("GET", BUCKET, tkey, query={"uploadId": upid.group(1)})
        parts = "".join("<Part><PartNumber>%s</PartNumber><ETag>%s</ETag></Part>"
                        % (p.findtext(s3lib.NS + "PartNumber"), p.findtext(s3lib.NS + "ETag"))
                        for p in ET.fromstring(body).findall(s3lib.NS + "Part"))
        st, _, _ = ceph.s3.request("POST", BUCKET, tkey, query={"uploadId": upid.group(1)},
                                   body=("<CompleteMultipartUpload>%s</CompleteMultipartUpload>" % parts).encode())
        check(st == 200 and ceph.s3.get(BUCKET, tkey) == third, "the half-way state: the upload completed at its own key")
        ceph.s3.put(BUCKET, skey, state.replace("sha256 " + "0" * 64, "sha256 " + tid).encode())
    st, b = tus_patch_refused(lb.port, u3, TUS_PART, len(third) - TUS_PART, sha(b"another name"))
    check(st == 400 and ((as_json(b) or {}).get("error") or {}).get("code") == "bad_upload",
          "the last part again with another name: 400 (the state names it): %d" % st)
    st, _, b = tus_patch(lb.port, u3, TUS_PART, third[TUS_PART:], claim=tid)
    check(st == 201 and (as_json(b) or {}).get("id") == tid, "the last part sent again finishes it: %d %s" % (st, b[:100]))
    check(ceph.s3.get(BUCKET, "shared/models/%s.onnx" % tid) == third and ceph.s3.head(BUCKET, tkey) == 404,
          "the model is the file, the temporary gone")

    # the last part at once to two replicas: the right bytes naming the file on one, other
    # bytes naming what they hash to on the other — never a model under either id holding
    # bytes other than its own, never both stored
    outcomes = []
    for k in range(4):
        f = make_model(5110 + k, floats=2 * 1000 * 1000)
        bad = f[:TUS_PART] + bytes(x ^ 0xff for x in f[TUS_PART:TUS_PART + 64]) + f[TUS_PART + 64:]
        st, uk, pst = begin_send(reps[0].port, f, TUS_PART)
        gate = threading.Barrier(2)
        res = {}

        def send(name, port, body):
            gate.wait()
            res[name] = tus_patch(port, uk, TUS_PART, body[TUS_PART:], claim=sha(body))[0]
        pair = (("good", reps[k % 2].port, f), ("bad", reps[1 - k % 2].port, bad))
        ts = [threading.Thread(target=send, args=a) for a in pair]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        outcomes.append((res.get("good"), res.get("bad")))
        for body in (f, bad):
            got = ceph.s3.get(BUCKET, "shared/models/%s.onnx" % sha(body))
            check(got is None or got == body, "round %d: nothing, or its own bytes, under each id" % k)
        request(lb.port, "DELETE", "/uploads/" + uk, headers={"Tus-Resumable": "1.0.0"})
    print("  the last part at once to two replicas (right bytes, other bytes): %r" % outcomes, flush=True)
    check(all(sorted(o) in ([201, 404], [201, 409]) for o in outcomes),
          "one stored it (201), the other 409 upload_busy or 404 (finished by the first): %r" % outcomes)

    # a bundle's data file begun unnamed: kept as the blob its bytes hash to (copied from
    # the transfer's own key), "already there" after from any replica
    blob = os.urandom(11 << 20)
    bsha = sha(blob)
    hs = {"Tus-Resumable": "1.0.0", "Upload-Length": str(len(blob)),
          "Upload-Metadata": "filename %s,kind %s" % (_b64("w.bin"), _b64("data"))}
    st, _, b = request(lb.port, "POST", "/uploads", headers=hs)
    ub = (as_json(b) or {}).get("upload", "")
    off, bl = 0, (len(blob) - 1) // TUS_PART * TUS_PART
    while st == 201 and off < bl:
        pst, ph, _ = tus_patch(lb.port, ub, off, blob[off:off + TUS_PART])
        off = int(ph["upload-offset"]) if pst == 204 else bl
    check(multipart_uploads(ceph, "shared/uploads/%s/file" % store_uid(ub)) == ["shared/uploads/%s/file" % store_uid(ub)],
          "an unnamed data file's multipart upload is the transfer's own too")
    st, _, b = tus_patch(lb.port, ub, bl, blob[bl:], claim=bsha)
    j = as_json(b) or {}
    check(st == 201 and j.get("sha256") == bsha and j.get("stored") is True,
          "an unnamed data file named by its last part: 201, kept: %d %r" % (st, j))
    check(ceph.s3.get(BUCKET, "shared/blobs/%s" % bsha) == blob, "the bucket's blob is the file")
    check(ceph.s3.list(BUCKET, "shared/uploads/%s/" % store_uid(ub)) == [] and multipart_uploads(ceph, "shared/") == [],
          "nothing left of its transfer")
    for r in reps:
        st, _, b = request(r.port, "POST", "/uploads", headers=dict(hs, **{
            "Upload-Metadata": "sha256 %s,filename %s,kind %s" % (_b64(bsha), _b64("w.bin"), _b64("data"))}))
        check(st == 200 and (as_json(b) or {}).get("stored") is True, "%s: the data file again is already there: %d" % (r.name, st))

    # stopped early: DELETE aborts the multipart upload of the transfer's own key
    st, u4, pst = begin_send(lb.port, data, TUS_PART)
    st, _, _ = request(lb.port, "DELETE", "/uploads/" + u4, headers={"Tus-Resumable": "1.0.0"})
    check(st == 204 and multipart_uploads(ceph, "shared/") == [] and
          ceph.s3.list(BUCKET, "shared/uploads/%s/" % store_uid(u4)) == [],
          "DELETE of an unnamed upload: 204, its multipart upload and state gone: %d" % st)


# ---------------------------------------------------------------------------------------
# the object store away mid-run
def t_outage(ceph, reps, lb):
    known = make_model(777)
    st, _, _ = upload(lb.port, known)
    check(st in (200, 201), "before: upload %d" % st)
    kid = sha(known)
    for r in reps:
        r.get("/models/" + kid)  # its summary in every replica's memory
    stop = threading.Event()
    log = []  # (phase at the start, phase at the end, kind, status, retry-after, error code)
    phase = ["before"]
    acked = {}
    lock = threading.Lock()
    counter = [0]

    def uploader():
        while not stop.is_set():
            with lock:
                counter[0] += 1
                i = counter[0]
            data = make_model(50000 + i)
            ph = phase[0]
            st, h, b = upload(lb.port, data, timeout=60)
            code = ((as_json(b) or {}).get("error") or {}).get("code")
            with lock:
                log.append((ph, phase[0], "upload", st, h.get("retry-after"), code, time.time()))
                if st in (200, 201):
                    acked[sha(data)] = data
            time.sleep(0.02)

    def reader(kind, diff=False):
        while not stop.is_set():
            r = random.choice(reps)
            # a model every replica has in memory, or one none has ever seen (alone, or as
            # the second model of a diff)
            path = "/models/" + (kid if kind == "known" else os.urandom(32).hex())
            if diff:
                path = "/models/%s/diff/%s.json" % (kid, os.urandom(32).hex())
            ph = phase[0]
            st, h, b = r.get(path, timeout=60)
            code = ((as_json(b) or {}).get("error") or {}).get("code")
            with lock:
                log.append((ph, phase[0], kind, st, h.get("retry-after"), code, time.time()))
            time.sleep(0.05)

    threads = ([threading.Thread(target=uploader) for _ in range(3)] +
               [threading.Thread(target=reader, args=k) for k in (("known",), ("unknown",), ("unknown", True))])
    for t in threads:
        t.start()
    time.sleep(2)
    # each phase begins once the object store is gone: a request that began before could
    # still get RGW's own answer (a true 404 for an unknown model), and it raced the
    # check below once (stop: the process has exited; pause: what RGW wrote before
    # SIGSTOP has had 0.3 s to arrive)
    phase[0] = "stopping"
    ceph.stop_rgw()
    phase[0] = "away"
    time.sleep(5)
    phase[0] = "back"
    t_back = time.time()
    ceph.start_rgw()
    ok = lb.up(4, seconds=60)
    back_s = time.time() - t_back
    time.sleep(2)
    phase[0] = "pausing"
    ceph.pause_rgw()  # accepts connections, answers nothing: timeouts
    time.sleep(0.3)
    phase[0] = "paused"
    time.sleep(10)
    ceph.resume_rgw()
    phase[0] = "resuming"
    ok = lb.up(4, seconds=60) and ok
    phase[0] = "resumed"  # ready again through the load balancer: all must work
    time.sleep(2)
    stop.set()
    for t in threads:
        t.join(120)
    check(ok, "the replicas are ready again after the object store came back")

    def where(ph, kind):
        """Requests that began and ended in phase ph."""
        return [e for e in log if e[0] == ph and e[1] == ph and e[2] == kind]

    for ph in ("away", "paused"):
        ups = where(ph, "upload")
        check(ups and all(e[3] == 503 and e[4] for e in ups),
              "%s: uploads answered 503 with Retry-After: %r" % (ph, sorted({(e[3], e[5]) for e in ups})))
        unk = where(ph, "unknown")
        check(unk and all(e[3] == 503 and e[4] for e in unk),
              "%s: a model not known here is 503, never a wrong 404: %r" % (ph, sorted({(e[3], e[5]) for e in unk})))
        kn = where(ph, "known")
        check(kn and all(e[3] == 200 for e in kn), "%s: a model in memory is still served: %r" %
              (ph, sorted({e[3] for e in kn})))
    check(not [e for e in log if e[3] in (0, 500)], "no 500 and no cut connection at any time: %r" %
          sorted({(e[0], e[3]) for e in log if e[3] in (0, 500)}))
    check(not [e for e in log if e[2] != "unknown" and e[3] == 404], "no 404 for a stored model at any time")
    check(not [e for e in log if e[3] not in (200, 201, 404, 503)], "only 200, 201, 404 (unknown) and 503: %r" %
          sorted({e[3] for e in log}))
    for ph in ("before", "resumed"):
        ups = where(ph, "upload")
        check(ups and all(e[3] in (200, 201) for e in ups), "%s: uploads succeed: %r" % (ph, sorted({e[3] for e in ups})))
        unk = where(ph, "unknown")
        check(unk and all(e[3] == 404 for e in unk), "%s: an unknown model is 404: %r" % (ph, sorted({e[3] for e in unk})))
    figure("object store stopped 5 s, then paused 10 s, under 3 uploaders and 3 readers: %d requests, %d answered 503 "
           "while away, ready again %.1f s after RGW restarted" %
           (len(log), len([e for e in log if e[3] == 503]), back_s))
    wrong = 0
    for mid, data in acked.items():
        st, _, b = reps[0].get("/models/%s/model.onnx" % mid)
        wrong += st != 200 or b != data
    check(wrong == 0, "every upload acknowledged around the outage reads back (%d of %d wrong)" % (wrong, len(acked)))
    bucket_consistent(ceph, "shared", "after the outage")


# ---------------------------------------------------------------------------------------
# figures: throughput and latencies through the load balancer
def t_figures(ceph, reps, lb):
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper
    sizes = []
    t_total = t_raw = 0.0
    for i in range(4):
        w = np.random.default_rng(900 + i).standard_normal(8 << 20).astype(np.float32)  # 32 MiB
        g = helper.make_graph([helper.make_node("Add", ["x", "w"], ["y"])], "tp%d" % i,
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [w.size])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [w.size])],
                              [numpy_helper.from_array(w, "w")])
        data = helper.make_model(g).SerializeToString()
        t0 = time.time()
        st, _, _ = upload(lb.port, data)
        t_total += time.time() - t0
        sizes.append(len(data))
        check(st == 201, "throughput upload %d: %d" % (i, st))
        # the anchor: the same bytes in one signed PUT straight to RGW (Python, same run)
        t0 = time.time()
        ceph.s3.request("PUT", BUCKET, "anchor/%d" % i, body=data, payload_hash=sha(data))
        t_raw += time.time() - t0
    mib = sum(sizes) / (1 << 20)
    figure("upload through haproxy to S3 (32 MiB models, parts of 5 MiB, signed SHA-256): %.0f MiB in %.2f s "
           "= %.0f MiB/s; the same bytes PUT straight to RGW: %.0f MiB/s (%.2fx)"
           % (mib, t_total, mib / t_total, mib / t_raw, t_raw / t_total))
    # latencies: a cached rendering, and summaries no replica holds in memory yet
    data = open(SQUEEZENET, "rb").read()
    mid = sha(data)
    lat = []
    for _ in range(200):
        t0 = time.perf_counter()
        st, _, _ = request(lb.port, "GET", "/models/%s/graph.svg" % mid)
        lat.append((time.perf_counter() - t0) * 1000)
    lat.sort()
    base = []
    for _ in range(200):
        t0 = time.perf_counter()
        request(lb.port, "GET", "/healthz")
        base.append((time.perf_counter() - t0) * 1000)
    base.sort()
    figure("GET graph.svg (70 KB) through haproxy, cached in memory: p50 %.2f ms, p99 %.2f ms; GET /healthz the "
           "same way: p50 %.2f ms (200 requests each, a connection per request)" %
           (lat[len(lat) // 2], lat[int(len(lat) * 0.99)], base[len(base) // 2]))
    ids = []
    for i in range(30):
        d = make_model(70000 + i, floats=4000)
        ceph.s3.put(SOURCES, "lat/%d.onnx" % i, d)
        st, _, b = request(reps[0].port, "POST", "/models",
                           body=json.dumps({"source": "s3://%s/lat/%d.onnx" % (SOURCES, i)}),
                           headers={"Content-Type": "application/json"})
        ids.append(sha(d))
    cold = []
    for mid in ids:  # through the balancer: mostly replicas that never saw the model
        t0 = time.perf_counter()
        st, _, _ = request(lb.port, "GET", "/models/%s/document.json" % mid)
        cold.append((time.perf_counter() - t0) * 1000)
        check(st == 200, "uncached document.json: %d" % st)
    cold.sort()
    figure("GET document.json through haproxy, not in memory (from the bucket or computed): p50 %.1f ms, max %.1f ms"
           " (30 models)" % (cold[len(cold) // 2], cold[-1]))


def main():
    t0 = time.time()
    steps = []

    def step(name, fn, *a):
        if ONLY and name not in ONLY:
            skipped.append(name)
            print("  SKIP %s: not in S3_ONLY" % name, flush=True)
            return None
        t = time.time()
        try:
            return fn(*a)
        except Exception as e:  # a crash of the test is a failure, not a stop
            import traceback
            traceback.print_exc()
            check(False, "%s raised %r" % (name, e))
        finally:
            steps.append("%s %.1fs" % (name, time.time() - t))

    ceph = C.Ceph()
    CLUSTER.append(ceph)
    try:
        ceph.start()
    except Exception as e:
        check(False, "ceph started: %s" % e)
        print(ceph.log_tail("rgw.out"), ceph.log_tail("mon.out"), flush=True)
        return 1
    ceph.version = subprocess.run(["radosgw", "--version"], stdout=subprocess.PIPE).stdout.decode().split()[2]
    figure("Ceph %s up (mon, memstore OSD, RGW) in %.1f s" % (ceph.version, ceph.started_s))
    ceph.s3.make_bucket(BUCKET)
    step("rgw", t_rgw, ceph)
    step("http", t_http, ceph)
    if not ONLY or ONLY & {"replicas", "kill", "resumable", "unnamed", "outage", "figures"}:
        ceph.s3.make_bucket(SOURCES)
        reps = [Replica("r%d" % i, ceph, extra=["--s3-part-size", "5M", "--s3-timeout", "2", "--grace", "5",
                                                  "--upload-part-size", "5M", "--upload-expiry", str(TUS_EXPIRY),
                                                  "--uploads-per-client", "100"]).start()
                for i in (1, 2, 3)]
        lb = Haproxy(reps)
        check(lb.up(6), "haproxy routes to the replicas")
        figure("replica start-up to listening: %s s" % ", ".join("%.2f" % r.started_s for r in reps))
        step("replicas", t_replicas, ceph, reps, lb)
        step("kill", t_kill, ceph, reps, lb)
        step("resumable", t_resumable, ceph, reps, lb)
        step("unnamed", t_unnamed, ceph, reps, lb)
        step("outage", t_outage, ceph, reps, lb)
        step("figures", t_figures, ceph, reps, lb)
        lb.stop()
        for r in reps:
            check(r.stop() == 0, "%s exits 0 on SIGTERM" % r.name)
        logs = "".join(r.log_text() for r in reps)
        san = [l for l in logs.splitlines() if "Sanitizer" in l or "runtime error:" in l]
        check(not san, "no sanitizer report from the replicas: %r" % san[:3])
        check(ceph.secret not in logs and ceph.access not in logs and "Signature=" not in logs and
              "AWS4-HMAC" not in logs, "no credential or signature in the replicas' logs (%d bytes)" % len(logs))
        if not ONLY or "outage" in ONLY:
            check("object store request retried" in logs, "the outage shows in the logs as retries")
    print("  steps: " + ", ".join(steps))
    for f in FIGURES:
        print("  figure: " + f)
    print("  s3: %.0f s" % (time.time() - t0))
    print("s3: %d passed, %d failed, %d skipped" % (passed, len(failures), len(skipped)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
