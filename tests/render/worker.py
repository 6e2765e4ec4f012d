#!/usr/bin/python3
"""worker.py — oxr_render_isolated(): the layout worker process and its limits.

Drives $BUILD/tools/render_isolated (one call of oxr_render_isolated per thread) against
  - the real worker ($BUILD/onnxviz __render): output byte-identical to the in-process
    `onnxviz render` in every format and with every option passed through the canonical
    options key; several threads at once; wall-clock, memory and output caps; a missing
    model, a file that is not a model, a missing executable; the worker's own answer to
    a bad options key;
  - $BUILD/tools/worker_stub, a worker that misbehaves on request: sleeps, spins, crashes,
    aborts, floods stdout or stderr, speaks the error protocol, closes its pipes and
    hangs; and reports the limits and descriptors it was given.
Each case states the code expected and a bound on the time the call may take.  Cases of
known, reported bugs are tagged "[known bug Bn]" and still fail the suite.
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.path.join(ROOT, os.environ.get("BUILD", "build"))
BIN = os.path.join(BUILD, "onnxviz")
TOOL = os.path.join(BUILD, "tools", "render_isolated")
STUB = os.path.join(BUILD, "tools", "worker_stub")
CORPUS = os.environ.get("ONNXVIZ_CORPUS", os.path.join(os.path.dirname(ROOT), "shared", "corpus"))
REAL = os.path.join(CORPUS, "models", "real")

# An ASan build reserves terabytes of address space: it cannot start under RLIMIT_AS, so
# under the sanitize suite the real worker runs without a memory limit (--mem=0) and the
# memory-limit cases are left out.
SANITIZED = os.environ.get("ONNXVIZ_SANITIZED") == "1"
NOMEM = ["--mem=0"] if SANITIZED else []

failures = []
cases = 0


def call(exe, model, fmt="svg", *args, out=None):
    """[(code, output bytes, ms, message)] and the 'identical' flag, from the tool."""
    cmd = [TOOL, exe, model, fmt] + NOMEM + list(args) + (["-o", out] if out else [])
    r = subprocess.run(cmd, capture_output=True, timeout=120)
    if r.returncode != 0:
        raise RuntimeError("render_isolated exited %d: %s" % (r.returncode, r.stderr[:300]))
    rows, identical = [], None
    for line in r.stdout.decode("utf-8", "replace").splitlines():
        f = line.split("\t", 3)
        if f[0] == "identical":
            identical = f[1] == "yes"
        else:
            rows.append((f[0], int(f[1]), int(f[2]), f[3] if len(f) > 3 else ""))
    return rows, identical


def expect(cond, what, bug=None):
    global cases
    cases += 1
    if not cond:
        failures.append(what + (" [known bug %s]" % bug if bug else ""))
    return cond


def alive(marker):
    """Is any process running whose command line contains marker?"""
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                if marker.encode() in f.read():
                    return True
        except OSError:
            pass
    return False


def content(data, fmt):
    """What a rendering says regardless of the order clusters were laid out in: the DOT's
    sorted lines, the SVG's element ids, the layout's node ids and rows."""
    if fmt == "dot":
        return sorted(data.split(b"\n"))
    if fmt == "svg":
        return sorted(re.findall(rb' id="([^"]*)"', data))
    lay = json.loads(data)
    return sorted((n["id"], json.dumps(n["rows"])) for n in lay["nodes"])


def real_worker(tmp):
    models = [os.path.join(REAL, "squeezenet1_1.onnx"), os.path.join(REAL, "silero_vad_v5.onnx")]
    # (options, drawn with clusters): with clusters the layout depends on the process's heap
    # (bug B14, pinned by test_render), so those are compared by what they contain
    option_sets = [([], False),
                   (["--rankdir=LR", "--group=none", "--initializers=nodes", "--attrs=all",
                     "--shapes=off"], False),
                   (["--subgraphs=expand", "--initializers=hide"], True),
                   (["--group=2", "--expand=/features,x", "--depth=3", "--attrs=none"], True)]
    for model in models:
        for opts, clusters in option_sets:
            for fmt in ("svg", "dot", "json"):
                iso, cli = os.path.join(tmp, "iso." + fmt), os.path.join(tmp, "cli." + fmt)
                rows, _ = call(BIN, model, fmt, *opts, out=iso)
                subprocess.run([BIN, "render", model, "-o", cli] + opts, check=True,
                               capture_output=True, timeout=120)
                what = "%s %s %s" % (os.path.basename(model), fmt, " ".join(opts))
                if not expect(rows[0][0] == "ok", "isolated render failed: %s: %s" %
                              (what, rows[0])):
                    continue
                with open(iso, "rb") as a, open(cli, "rb") as b:
                    mine, theirs = a.read(), b.read()
                if clusters:
                    mine, theirs = content(mine, fmt), content(theirs, fmt)
                expect(mine == theirs, "isolated output differs from `onnxviz render`: " + what)
    rows, identical = call(BIN, models[1], "svg", "--threads=4", "--subgraphs=expand")
    expect(len(rows) == 4 and all(r[0] == "ok" for r in rows) and identical,
           "4 threads at once: %s identical=%s" % ([r[0] for r in rows], identical))
    big = os.path.join(REAL, "transformer_12x12.onnx")
    rows, _ = call(BIN, big, "svg", "--group=none", "--wall=50")
    expect(rows[0][0] == "layout_timeout" and rows[0][2] < 1500,
           "wall limit 50 ms on a 0.5 s layout: %s" % (rows[0],))
    rows, _ = call(BIN, big, "svg", "--group=none", "--max-output=100000")
    expect(rows[0][0] == "too_big", "output cap 100 KB on a 3.6 MB SVG: %s" % (rows[0],))
    if SANITIZED:
        print("SKIP worker memory-limit cases: ASan cannot run under RLIMIT_AS (sanitizer build)")
        mems = ()
    else:
        # from too little to start the program to enough to start and parse: any failure
        # but never the model's fault
        mems = range(8000000, 40000001, 4000000)
    wrong = []
    for mem in mems:
        rows, _ = call(BIN, big, "svg", "--group=none", "--mem=%d" % mem)
        if rows[0][0] not in ("layout_worker_failed", "out_of_memory", "ok"):
            wrong.append("%d MB: %s (%s)" % (mem // 1000000, rows[0][0], rows[0][3]))
    expect(not wrong, "memory limits reported as the model's fault (it is fine): %s" %
           "; ".join(wrong), "B11")
    rows, _ = call(BIN, os.path.join(tmp, "missing.onnx"))
    expect(rows[0][0] == "io_error", "missing model: %s" % (rows[0],))
    text = os.path.join(tmp, "text.onnx")
    with open(text, "w") as f:
        f.write("this is not a model\n")
    rows, _ = call(BIN, text)
    expect(rows[0][0] == "bad_model", "a file that is not a model: %s" % (rows[0],))
    rows, _ = call(os.path.join(tmp, "no-such-onnxviz"), models[0])
    expect(rows[0][0] == "layout_worker_failed" and "could not be started" in rows[0][3],
           "missing executable: %s" % (rows[0],))
    rows, _ = call(BIN, models[0], "svg", "--rankdir=XX")
    expect(rows[0][0] == "bad_option", "bad option value: %s" % (rows[0],))
    for key, word in (("foo=bar", "unknown option 'foo'"), ("rankdir=XX", "rankdir"),
                      ("rankdir", "bad option text")):
        r = subprocess.run([BIN, "__render", models[0], "svg", key], capture_output=True,
                           timeout=60)
        expect(r.returncode == 3 and r.stdout == b"" and
               r.stderr.startswith(b"bad_option\t") and word.encode() in r.stderr,
               "worker given options %r: exit %d, stderr %r" % (key, r.returncode, r.stderr[:120]))


def stub_worker(tmp):
    def stub(what, *args):
        rows, _ = call(STUB, os.path.join(tmp, what), "svg", *args)
        return rows[0]

    out = os.path.join(tmp, "stub.out")
    rows, _ = call(STUB, os.path.join(tmp, "ok"), "dot", "--rankdir=LR", "--expand=a,b",
                   out=out)
    with open(out) as f:
        text = f.read()
    expect(rows[0][0] == "ok" and text == "stub dot rankdir=LR&initializers=fold&"
           "subgraphs=collapse&group=auto&expand=a,b&depth=0&shapes=on&attrs=key&arith=fold"
           "&unfold=&quant=fold&dims=",
           "worker arguments: %s %r" % (rows[0], text))
    mem = 0 if SANITIZED else 300000000
    call(STUB, os.path.join(tmp, "env"), "svg", "--cpu=7", "--mem=%d" % mem, "--extra-fds=5",
         "--odd-signals", out=out)
    with open(out) as f:
        text = f.read().strip()
    expect(text == "cpu=7 as=%d core=0 stdin=null fds=0,1,2 ign=%s blk=%s" % (mem, "0" * 16,
                                                                               "0" * 16),
           "worker limits, stdin, descriptors, signals (caller ignores SIGPIPE, SIGXCPU, "
           "SIGTERM and blocks SIGINT, SIGUSR1): %r" % text)
    r = stub("sleep", "--wall=700")
    expect(r[0] == "layout_timeout" and 650 <= r[2] < 2500, "sleeping worker, wall 700 ms: %s"
           % (r,))
    expect(not alive(os.path.join(tmp, "sleep")), "the sleeping worker still runs")
    r = stub("spin", "--cpu=1", "--wall=20000")
    expect(r[0] == "layout_timeout" and "CPU" in r[3] and r[2] < 15000,
           "spinning worker, 1 s of CPU: %s" % (r,))
    for what, sig in (("segv", 11), ("abort", 6)):
        r = stub(what)
        expect(r[0] == "layout_worker_failed" and "signal %d" % sig in r[3],
               "%s worker: %s" % (what, r))
    r = stub("exit5")
    expect(r[0] == "layout_worker_failed" and "exit 5" in r[3] and "it broke" in r[3],
           "worker exit 5: %s" % (r,))
    r = stub("protocol")
    expect(r[0] == "layout_failed" and r[3] == "Graphviz said no", "error protocol: %s" % (r,))
    r = stub("noisy")
    expect(r[0] == "layout_worker_failed" and len(r[3]) < 600, "100 KB of stderr: %s"
           % ((r[0], r[1], r[2], len(r[3])),))
    r = stub("flood", "--max-output=100000", "--wall=10000")
    expect(r[0] == "too_big" and r[2] < 5000, "endless output, cap 100 KB: %s" % (r,))
    expect(not alive(os.path.join(tmp, "flood")), "the flooding worker still runs")
    r = stub("unknown-behaviour")
    expect(r[0] == "layout_worker_failed" and "exit 9" in r[3], "worker exit 9: %s" % (r,))
    r = stub("detach", "--wall=700")
    expect(r[0] == "layout_timeout" and r[2] < 2500,
           "worker that closes its pipes and hangs, wall 700 ms: %s after %d ms" %
           (r[0], r[2]), "B10")


def main():
    start = time.time()
    for path in (TOOL, STUB):
        if not os.access(path, os.X_OK):
            print("worker: %s missing (make tools)" % path)
            return 1
    with tempfile.TemporaryDirectory(prefix="onnxviz-worker-") as tmp:
        real_worker(tmp)
        stub_worker(tmp)
    for f in failures:
        print("FAIL", f)
    nknown = sum("[known bug" in f for f in failures)
    print("worker: %d cases, %d failed (%d of known bugs), %.1f s" %
          (cases, len(failures), nknown, time.time() - start))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
