"""CLI start-up, whole process (exec to exit): `onnxviz --version`, `onnxviz inspect` of
isnet_fp16.onnx (88 MB, 734 nodes; tests/corpus fetch-large-models.sh), and the same model
through `python3 -c 'import onnx; onnx.load(...)'` (/usr/bin/python3, python3-onnx).

Each command runs RUNS times (after 3 warm-ups), spawned directly (posix_spawn, output to
/dev/null); the minimum and the median wall time are printed.  The minimum is the figure
for a quiet machine (every run does the same work; a loaded machine only adds); the
median says how loaded this one was.  Targets (issue 27): --version <= 3 ms, inspect <= 6
ms, onnx.load / inspect >= 30x.
"""
import os
import statistics
import subprocess
import sys
import time

BUILD = os.environ.get("BUILD", "build")
BIN = os.path.join(BUILD, "onnxviz")
RUNS = int(os.environ.get("RUNS", "50"))
PY = "/usr/bin/python3"


def spawn_times(argv, runs):
    devnull = os.open(os.devnull, os.O_WRONLY)
    acts = [(os.POSIX_SPAWN_DUP2, devnull, 1), (os.POSIX_SPAWN_DUP2, devnull, 2)]
    out = []
    for i in range(runs + 3):
        t0 = time.perf_counter_ns()
        pid = os.posix_spawn(argv[0], argv, os.environ, file_actions=acts)
        _, status = os.waitpid(pid, 0)
        t = (time.perf_counter_ns() - t0) / 1e6
        if os.waitstatus_to_exitcode(status) != 0:
            sys.exit("cli_startup: %s exited with %d" % (" ".join(argv), os.waitstatus_to_exitcode(status)))
        if i >= 3:
            out.append(t)
    os.close(devnull)
    return min(out), statistics.median(out)


def main():
    model = os.environ.get("ISNET")
    if not model:
        fetch = os.path.join(os.environ.get("ONNXVIZ_CORPUS", "../shared/corpus"), "fetch-large-models.sh")
        model = os.path.join(subprocess.check_output(["sh", fetch], text=True).strip(), "isnet_fp16.onnx")
    if not os.access(BIN, os.X_OK):
        sys.exit("cli_startup: %s is missing (make first)" % BIN)
    libs = subprocess.run(["ldd", BIN], capture_output=True, text=True).stdout.count("\n")
    print("cli start-up, whole process, %d runs each (min / median wall ms); %s loads %d shared "
          "objects at start; load average %.1f" % (RUNS, BIN, libs, os.getloadavg()[0]))
    rows = [
        ("onnxviz --version", [BIN, "--version"], RUNS, 3.0),
        ("onnxviz inspect isnet_fp16.onnx", [BIN, "inspect", model], RUNS, 6.0),
        ("python3 -c 'import onnx; onnx.load(isnet_fp16.onnx)'",
         [PY, "-c", "import onnx, sys; onnx.load(sys.argv[1])", model], max(5, RUNS // 5), None),
    ]
    got = {}
    for name, argv, runs, target in rows:
        mn, med = spawn_times(argv, runs)
        got[name] = mn
        verdict = "" if target is None else ("  <= %g ms: %s" % (target, "ok" if mn <= target else "MISSED"))
        print("  %-55s %8.2f / %8.2f%s" % (name, mn, med, verdict))
    ratio = got[rows[2][0]] / got[rows[1][0]]
    print("  onnx.load / onnxviz inspect (min): %.0fx  >= 30x: %s" % (ratio, "ok" if ratio >= 30 else "MISSED"))


main()
