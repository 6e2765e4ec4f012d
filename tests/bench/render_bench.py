#!/usr/bin/python3
"""render_bench.py — the rendering benchmark's driver (called by tests/bench/render.sh).

    /usr/bin/python3 tests/bench/render_bench.py --onnxviz build/onnxviz --cache DIR \
        --models models.tsv --corpus DIR [--large DIR] [options]

models.tsv: "name<TAB>path" per prepared model (render_models.py's output).  Runs, in order:
  1. sweep    every *.onnx under CORPUS/models (and LARGE) rendered with the overview and
              with --group=none: exit status, well-formed SVG;
  2. timings  `onnxviz render MODEL -o OUT.svg [--group=none]` as a process (and with
              --subgraphs=expand for the models with If nodes): wall clock
              (median of 3 when the first run takes under 3 s, else that one run), peak
              RSS (wait4), boxes (the SVG's data-boxes), against the issue's targets;
  3. quality  the same views as layout JSON, checked by render_check.py;
  4. baseline onnx's net_drawer + dot (render_netdrawer.py, then dot -Tsvg), the ratio to
              onnxviz's full-detail time;
  5. pictures PNGs of a few views (rsvg-convert), big drawings cropped through the viewBox;
  6. summary  every target as OK or MISSED.
Targets missed are printed, not failures: the exit status is 1 only when the benchmark
could not run (a model could not be read, a tool is missing).  Figures also go to
CACHE/results.json.
"""
import argparse
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import render_check  # noqa: E402

# The targets, seconds (end to end, as a process, 2 cores)
T_TRANSFORMER_FULL = 1.5   # transformer_12x12 --group=none
T_REAL_FULL = 2.0          # any real model up to 10k ops, --group=none
T_20K_FULL = 5.0           # the generated 20k-op graph, --group=none
T_OVERVIEW = 1.0           # any model up to 100k nodes, default view, and the 1,000-layer
                           # model (100,009 nodes: layers1000)
T_NETDRAWER_RATIO = 50.0   # net_drawer + dot at least this many times slower
T_TRANSFORMER_BOXES = 2000 # transformer_12x12 --group=none, bookkeeping folded (was 3,356)
FAST_RUN = 3.0             # first run under this: median of 3 runs

BASELINE_MODELS = ["resnet50", "fasterrcnn_mobilenet", "swin_t"]
# views: name -> options.  "none" is the full-detail view, "auto" the overview, "expand"
# the full detail with subgraphs drawn (only for the models that have If/Loop nodes)
VIEWS = {"none": ["--group=none"], "auto": [],
         "expand": ["--group=none", "--subgraphs=expand"]}
EXPANDED = {"silero_vad_v5", "fasterrcnn_mobilenet"}
GENERATED = {"scoped20k", "scoped100k", "layers1000"}

# pictures: (model, view, crop) — crop None draws it whole, a number f
# crops a 1400x1000 pt window at f of the height (0 top, 1 bottom), centred on the boxes
PICTURES = [
    ("squeezenet1_1", "none", None),
    ("silero_vad_v5", "auto", None),
    ("silero_vad_v5", "expand", 0.0),
    ("resnet50", "none", 0.0),
    ("fasterrcnn_mobilenet", "auto", None),
    ("fasterrcnn_mobilenet", "none", 0.5),
    ("transformer_12x12", "auto", None),
    ("transformer_12x12", "none", 0.3),
    ("encoder48", "none", 0.5),
    ("swin_t", "auto", None),
    ("swin_t", "none", 0.5),
    ("isnet_fp16", "none", 0.0),
    ("light_inception_v1", "none", 0.0),
    ("scoped20k", "none", 0.0),
    ("scoped20k", "none", 0.75),
    ("scoped100k", "auto", None),
    ("layers1000", "auto", None),
]
CROP_W, CROP_H = 1400.0, 1000.0
WHOLE_MAX = 16000.0  # a "whole" picture taller or wider than this is cropped at the top


def say(*a):
    print(*a, flush=True)


def busy_warning():
    """Says so when other work competes for the CPUs: wall-clock figures are then inflated
    (the cpu column is not)."""
    load, ncpu = os.getloadavg()[0], os.cpu_count() or 1
    if load > ncpu:
        say("   WARNING: the machine is busy (load %.1f on %d CPUs): wall-clock times are "
            "inflated; compare the cpu column" % (load, ncpu))
        return True
    return False


_section = [None, 0.0]


def section(title):
    """Prints a section's heading, and how long the previous one took."""
    if _section[0] is not None:
        say("   (%s: %.0f s)" % (_section[0], time.monotonic() - _section[1]))
    _section[:] = [title.split(" ")[0] if title else None, time.monotonic()]
    if title:
        say("\n== " + title)


# ---------------------------------------------------------------------------------------
# Processes
def run(cmd, timeout, stdout=subprocess.DEVNULL):
    """Runs cmd in its own process group; kills the group after timeout seconds.  Returns
    dict(rc, wall, cpu, rss_mb, timed_out, err) — rc None when killed; cpu is user + sys
    seconds; rss_mb is the peak RSS of the process itself, not of its children, measured
    by GNU time: a child forked from
    this python process would report python's own RSS as its peak (Linux carries the
    pre-exec high-water mark over), GNU time is small.  wall is measured here (GNU time
    rounds to 10 ms); starting time adds about a millisecond."""
    with tempfile.TemporaryFile() as err, tempfile.NamedTemporaryFile("r") as rss:
        done = threading.Event()
        killed = []
        t0 = time.monotonic()
        p = subprocess.Popen(["/usr/bin/time", "-q", "-f", "%M %U %S", "-o", rss.name] + cmd,
                             stdout=stdout, stderr=err, start_new_session=True)

        def kill():
            if not done.is_set():
                killed.append(True)
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        timer = threading.Timer(timeout, kill)
        timer.start()
        _, status = os.waitpid(p.pid, 0)
        wall = time.monotonic() - t0
        done.set()
        timer.cancel()
        p.returncode = os.waitstatus_to_exitcode(status)
        if killed:  # children (dot under pydot) may be left: the group is killed above
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        err.seek(0)
        text = err.read().decode("utf-8", "replace").strip()
        words = (rss.read().strip().splitlines() or [""])[-1].split()
        try:
            rss_kb, cpu = int(words[0]), float(words[1]) + float(words[2])
        except (IndexError, ValueError):  # killed: GNU time went with it
            rss_kb, cpu = 0, 0.0
    return {"rc": None if killed else p.returncode, "wall": wall, "cpu": cpu,
            "rss_mb": rss_kb / 1024.0, "timed_out": bool(killed),
            "err": text[-600:]}


def svg_boxes(path):
    try:
        with open(path, "rb") as f:
            head = f.read(2048).decode("utf-8", "replace")
    except OSError:
        return None
    m = re.search(r'data-boxes="(\d+)"', head)
    return int(m.group(1)) if m else None


def warm(path):
    """Reads a file once so that every timed run starts with it in the page cache."""
    with open(path, "rb") as f:
        while f.read(1 << 24):
            pass


# ---------------------------------------------------------------------------------------
# Models
def count_ops(path, cache):
    """Nodes of the model, subgraphs included (python3-onnx), cached by size and mtime."""
    st = os.stat(path)
    key = "%s|%d|%d" % (os.path.abspath(path), st.st_size, int(st.st_mtime))
    if key in cache:
        return cache[key]
    import onnx

    def nodes(g):
        n = 0
        for node in g.node:
            n += 1
            for a in node.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    n += nodes(a.g)
                elif a.type == onnx.AttributeProto.GRAPHS:
                    n += sum(nodes(x) for x in a.graphs)
        return n
    m = onnx.load(path, load_external_data=False)
    cache[key] = nodes(m.graph)
    return cache[key]


def model_list(args):
    """[(name, path, kind)]: corpus models first, then exports, then generated graphs."""
    out = []
    real = os.path.join(args.corpus, "models", "real")
    for n in ("squeezenet1_1", "silero_vad_v5", "transformer_12x12"):
        out.append((n, os.path.join(real, n + ".onnx"), "real"))
    light = os.path.join(args.corpus, "models", "onnx-testdata", "light")
    for f in sorted(os.listdir(light)):
        if f.endswith(".onnx"):
            out.append((f[:-5], os.path.join(light, f), "real"))
    if args.large:
        p = os.path.join(args.large, "isnet_fp16.onnx")
        if os.path.exists(p):
            out.append(("isnet_fp16", p, "real"))
    with open(args.models) as f:
        for line in f:
            if "\t" in line:
                n, p = line.rstrip("\n").split("\t", 1)
                out.append((n, p, "generated" if n in GENERATED else "real"))
    for n, p, _ in out:
        if not os.path.exists(p):
            raise SystemExit("render_bench: model %s not found at %s" % (n, p))
    return out


def views_of(name):
    return ["none", "auto"] + (["expand"] if name in EXPANDED else [])


def full_target(name, kind, ops):
    """(seconds, what) for --group=none, or (None, why not)."""
    if name == "transformer_12x12":
        return T_TRANSFORMER_FULL, "transformer_12x12"
    if name == "scoped20k":
        return T_20K_FULL, "20k-op graph"
    if kind == "real" and ops <= 10000:
        return T_REAL_FULL, "real model <=10k ops"
    return None, "no target"


# ---------------------------------------------------------------------------------------
# 1. sweep
def sweep(args, onnxviz, tmp):
    files = []
    for root, _, names in os.walk(os.path.join(args.corpus, "models")):
        files += [os.path.join(root, n) for n in names if n.endswith(".onnx")]
    if args.large and os.path.exists(os.path.join(args.large, "isnet_fp16.onnx")):
        files.append(os.path.join(args.large, "isnet_fp16.onnx"))
    files.sort()
    out = os.path.join(tmp, "sweep.svg")
    fails, slowest = [], (0.0, "")
    t0 = time.monotonic()
    for f in files:
        for opts in ([], ["--group=none"]):
            if os.path.exists(out):
                os.unlink(out)
            r = run([onnxviz, "render", f, "-o", out] + opts, args.sweep_timeout)
            what = "%s %s" % (os.path.relpath(f, args.corpus), " ".join(opts) or "(default)")
            if r["wall"] > slowest[0]:
                slowest = (r["wall"], what)
            if r["rc"] != 0:
                fails.append("%s: %s" % (what, "timeout" if r["timed_out"] else
                                         "exit %s: %s" % (r["rc"], r["err"][-200:])))
                continue
            try:
                ET.parse(out)
            except (ET.ParseError, OSError) as e:
                fails.append("%s: SVG not well-formed: %s" % (what, e))
    n = 2 * len(files)
    say("%d models x 2 views = %d renders in %.1f s: %d ok, %d failed; slowest %.2f s (%s)" %
        (len(files), n, time.monotonic() - t0, n - len(fails), len(fails), slowest[0],
         slowest[1]))
    for f in fails:
        say("  FAILED " + f)
    return {"models": len(files), "renders": n, "failed": fails}


# ---------------------------------------------------------------------------------------
# 2. timings
def time_render(args, onnxviz, path, out, opts):
    warm(path)
    runs = []
    r = run([onnxviz, "render", path, "-o", out] + opts, args.timeout)
    runs.append(r)
    if r["rc"] == 0 and r["wall"] < FAST_RUN:
        for _ in range(args.runs - 1):
            runs.append(run([onnxviz, "render", path, "-o", out] + opts, args.timeout))
    ok = [x for x in runs if x["rc"] == 0]
    res = {"runs": len(runs), "walls": [round(x["wall"], 4) for x in runs]}
    if len(ok) != len(runs):
        bad = next(x for x in runs if x["rc"] != 0)
        res.update(ok=False, wall=bad["wall"], rss_mb=bad["rss_mb"],
                   error="timeout after %d s" % args.timeout if bad["timed_out"]
                   else "exit %s: %s" % (bad["rc"], bad["err"]))
        return res
    res.update(ok=True, wall=statistics.median(x["wall"] for x in ok),
               cpu=statistics.median(x["cpu"] for x in ok),
               rss_mb=max(x["rss_mb"] for x in ok), boxes=svg_boxes(out),
               svg_mb=os.path.getsize(out) / 1e6)
    return res


HEAD = "%-22s %7s %-5s %6s %8s %6s %7s %7s %-26s %6s  %s" % (
    "model", "ops", "view", "boxes", "seconds", "cpu", "RSS MB", "SVG MB", "target", "t/tgt", "")


def row(name, ops, mode, r, target, what):
    if not r["ok"]:
        verdict = "MISSED" if target else "FAILED"
        return "%-22s %7d %-5s %6s %8.3f %6s %7.1f %7s %-26s %6s  %s (%s)" % (
            name, ops, mode, "-", r["wall"], "-", r["rss_mb"], "-",
            "%.1f s (%s)" % (target, what) if target else what, "-", verdict,
            r["error"][:160].replace("\n", " "))
    ratio = r["wall"] / target if target else None
    verdict = "" if target is None else ("OK" if ratio <= 1 else "MISSED")
    return "%-22s %7d %-5s %6s %8.3f %6.2f %7.1f %7.2f %-26s %6s  %s" % (
        name, ops, mode, r["boxes"], r["wall"], r["cpu"], r["rss_mb"], r["svg_mb"],
        "%.1f s (%s)" % (target, what) if target else what,
        "%.2f" % ratio if ratio is not None else "-", verdict)


# ---------------------------------------------------------------------------------------
# 4. baseline: net_drawer + dot
def baseline(args, name, path, cutoff, outdir, onnxviz_full):
    dot_out = os.path.join(outdir, name + ".netdrawer.dot")
    svg_out = os.path.join(outdir, name + ".netdrawer.svg")
    for p in (dot_out, dot_out + ".raw", svg_out):
        if os.path.exists(p):
            os.unlink(p)
    warm(path)
    helper = os.path.join(os.path.dirname(os.path.abspath(__file__)), "render_netdrawer.py")
    with tempfile.TemporaryFile() as so:
        r1 = run([sys.executable, helper, path, dot_out], cutoff, stdout=so)
        so.seek(0)
        phases = {}
        for line in so.read().decode().splitlines():
            k, _, v = line.partition(" ")
            phases[k] = float(v)
    res = {"model": name, "cutoff": cutoff, "phases": phases, "python_wall": r1["wall"],
           "python_rss_mb": r1["rss_mb"], "onnxviz_full": onnxviz_full,
           "timed_out": r1["timed_out"]}
    if r1["rc"] != 0:
        stage = "write_dot (dot -Tdot inside pydot)" if "raw" in phases else "python"
        res.update(finished=False, wall=r1["wall"],
                   note="not finished after %d s (in %s)" % (cutoff, stage)
                   if r1["timed_out"] else "failed: exit %s: %s" % (r1["rc"], r1["err"]))
    else:
        r2 = run(["dot", "-Tsvg", dot_out, "-o", svg_out], max(1.0, cutoff - r1["wall"]))
        res["dot_svg"] = r2["wall"]
        res["dot_rss_mb"] = r2["rss_mb"]
        res["timed_out"] = r2["timed_out"]
        if r2["rc"] != 0:
            res.update(finished=False, wall=r1["wall"] + r2["wall"],
                       note="not finished after %d s (in dot -Tsvg)" % cutoff
                       if r2["timed_out"] else "dot -Tsvg failed: exit %s: %s" %
                       (r2["rc"], r2["err"][-200:]))
        else:
            res.update(finished=True, wall=r1["wall"] + r2["wall"])
            # what one layout would cost: the python phases without write_dot, plus the
            # dot -Tsvg run (which lays the graph out again from scratch)
            res["one_layout"] = r1["wall"] - phases.get("write_dot", 0.0) + r2["wall"]
    if onnxviz_full:
        res["ratio"] = res["wall"] / onnxviz_full
        if res.get("one_layout"):
            res["ratio_one_layout"] = res["one_layout"] / onnxviz_full
    return res


def baseline_line(b):
    ph = b["phases"]
    parts = ["python %.2f s (import %.2f, parse %.2f, GetPydotGraph %.2f, to_string %.2f, "
             "write_dot %s)" % (b["python_wall"], ph.get("import", 0), ph.get("parse", 0),
                                ph.get("graph", 0), ph.get("raw", 0),
                                "%.2f" % ph["write_dot"] if "write_dot" in ph else "-")]
    if "dot_svg" in b:
        parts.append("dot -Tsvg %.2f s" % b["dot_svg"])
    if not b["onnxviz_full"]:
        verdict = "MISSED"
        head = "%-22s %s; no ratio: onnxviz failed on the model" % (
            b["model"], "total %.2f s" % b["wall"] if b["finished"] else b["note"])
        tail = ""
    elif b["finished"]:
        verdict = "OK" if b["ratio"] >= T_NETDRAWER_RATIO else "MISSED"
        head = "%-22s total %8.2f s  onnxviz %.3f s  ratio %7.1fx  (target >= %.0fx) %s" % (
            b["model"], b["wall"], b["onnxviz_full"], b["ratio"], T_NETDRAWER_RATIO, verdict)
        tail = "one-layout estimate %.2f s = %.1fx" % (b["one_layout"], b["ratio_one_layout"])
    elif not b["timed_out"]:  # the baseline broke: nothing measured
        verdict = "FAILED"
        head = "%-22s net_drawer %s" % (b["model"], b["note"])
        tail = ""
    else:
        lb = b["wall"] / b["onnxviz_full"]
        verdict = "OK" if lb >= T_NETDRAWER_RATIO else "MISSED"
        head = "%-22s %s  onnxviz %.3f s  ratio > %.0fx (lower bound; target >= %.0fx) %s" % (
            b["model"], b["note"], b["onnxviz_full"], lb, T_NETDRAWER_RATIO, verdict)
        tail = ""
    b["verdict"] = verdict
    return "%s\n    %s%s" % (head, "; ".join(parts), ("\n    " + tail) if tail else "")


# ---------------------------------------------------------------------------------------
# 5. pictures
def crop_svg(src, dst, box, layout):
    """Writes dst: src with its root's width/height/viewBox replaced by box (x, y, w, h),
    and without the nodes, edges and clusters entirely outside it (rsvg-convert draws
    everything it is given: 47 s for the whole 20k-op drawing, however small the window).
    Relies on svg.c writing one element per line: <g id="ID" ...>...</g>."""
    x, y, w, h = box
    keep = set()

    def inside(x0, y0, x1, y1):
        return x1 >= x and x0 <= x + w and y1 >= y and y0 <= y + h
    for b in layout["nodes"]:
        if inside(b["x"] - b["w"] / 2, b["y"] - b["h"] / 2, b["x"] + b["w"] / 2,
                  b["y"] + b["h"] / 2):
            keep.add(b["id"])
    for e in layout["edges"]:
        pts = e["points"]
        if pts and inside(min(p[0] for p in pts), min(p[1] for p in pts),
                          max(p[0] for p in pts) + 60, max(p[1] for p in pts) + 10):
            keep.add(e["id"])  # (+60, +10: room for the label)
    for c in layout["clusters"]:
        if inside(c["x"], c["y"], c["x"] + c["w"], c["y"] + c["h"]):
            keep.add(c["id"])
    with open(src, encoding="utf-8") as f:
        text = f.read()
    end = text.index(">", text.index("<svg"))
    root = text[:end]
    root = re.sub(r'\swidth="[^"]*"', ' width="%.0f"' % w, root, count=1)
    root = re.sub(r'\sheight="[^"]*"', ' height="%.0f"' % h, root, count=1)
    root = re.sub(r'\sviewBox="[^"]*"', ' viewBox="%.1f %.1f %.1f %.1f"' % (x, y, w, h), root,
                  count=1)
    element = re.compile(r'<g id="([^"]*)".*</g>$')
    with open(dst, "w", encoding="utf-8") as f:
        f.write(root)
        for line in text[end:].split("\n"):
            m = element.match(line)
            if m is None or m.group(1) in keep:
                f.write(line + "\n")


def crop_box(layout, frac):
    """A CROP_W x CROP_H window at frac of the drawing's height, centred on the boxes."""
    W, H = layout["width"], layout["height"]
    y0 = max(0.0, min(H - CROP_H, frac * (H - CROP_H)))
    xs = sorted(b["x"] for b in layout["nodes"] if y0 <= b["y"] <= y0 + CROP_H)
    cx = xs[len(xs) // 2] if xs else W / 2
    x0 = max(0.0, min(W - CROP_W, cx - CROP_W / 2))
    return (x0, y0, min(CROP_W, W), min(CROP_H, H))


# ---------------------------------------------------------------------------------------
def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--onnxviz", required=True)
    ap.add_argument("--cache", required=True)
    ap.add_argument("--models", required=True)
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--large")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=120, help="per onnxviz run, seconds")
    ap.add_argument("--sweep-timeout", type=float, default=60)
    ap.add_argument("--netdrawer-cutoff", type=float, default=60,
                    help="seconds for net_drawer + dot on resnet50 and fasterrcnn (the "
                    "latter takes over 20 min: the default gives a lower bound)")
    ap.add_argument("--swin-cutoff", type=float, default=480,
                    help="seconds for net_drawer + dot on swin_t; 0 skips it")
    ap.add_argument("--no-netdrawer", action="store_true")
    ap.add_argument("--no-sweep", action="store_true")
    ap.add_argument("--no-pictures", action="store_true")
    args = ap.parse_args(argv[1:])

    onnxviz = os.path.abspath(args.onnxviz)
    outdir = os.path.join(args.cache, "out")
    pngdir = os.path.join(args.cache, "png")
    # nothing from an earlier run may stand in for this one's (pictures: only when made)
    for d in (outdir,) + (() if args.no_pictures else (pngdir,)):
        os.makedirs(d, exist_ok=True)
        for f in os.listdir(d):
            os.unlink(os.path.join(d, f))
    results = {"machine": {"cpus": os.cpu_count(), "load": os.getloadavg()}}
    bench_t0 = time.monotonic()

    ops_cache_path = os.path.join(args.cache, "ops.json")
    try:
        with open(ops_cache_path) as f:
            ops_cache = json.load(f)
    except (OSError, ValueError):
        ops_cache = {}
    models = model_list(args)
    t = time.monotonic()
    ops = {n: count_ops(p, ops_cache) for n, p, _ in models}
    say("   %d models, ops counted in %.1f s (python3-onnx, subgraphs included)" %
        (len(models), time.monotonic() - t))
    with open(ops_cache_path, "w") as f:
        json.dump(ops_cache, f)
    say("load average at start: %.2f %.2f %.2f (%d CPUs)" % (os.getloadavg() +
                                                             (os.cpu_count(),)))
    busy_warning()

    with tempfile.TemporaryDirectory() as tmp:
        if not args.no_sweep:
            section("1. every corpus model renders (overview and --group=none)")
            results["sweep"] = sweep(args, onnxviz, tmp)

    section("2. onnxviz render as a process (median of %d when under %.0f s; timeout %.0f s)"
            % (args.runs, FAST_RUN, args.timeout))
    say("   seconds = wall clock, cpu = user+sys; t/tgt = seconds / target (<= 1.00 is OK); "
        "RSS = peak\n   resident set of the process; boxes = the SVG's data-boxes")
    say(HEAD)
    timings, targets = {}, []
    for name, path, kind in models:
        for mode in views_of(name):
            out = os.path.join(outdir, "%s.%s.svg" % (name, mode))
            opts = VIEWS[mode]
            r = time_render(args, onnxviz, path, out, opts)
            if mode != "auto":
                target, what = full_target(name, kind, ops[name])
            else:
                target, what = (T_OVERVIEW, "overview") if ops[name] <= 100000 or \
                    name == "layers1000" else (None, "no target")
            if name == "scoped100k" and mode == "none":
                what = "info: 60,002 ranks deep, laid out in 4 bands (dot fails past ~32,767)"
            r.update(model=name, ops=ops[name], mode=mode, target=target, what=what)
            timings[(name, mode)] = r
            say(row(name, ops[name], mode, r, target, what))
            if target is not None:
                targets.append(r)
    results["timings"] = list(timings.values())

    section("3. drawing checks (render_check.py on --format=json of the same views)")
    quality = {}
    measure = render_check._measurer()
    if measure is None:
        say("   (python3-pil or Liberation fonts missing: text overflow not checked)")
    say("   overlap: boxes overlapping; undrawn: edges without a curve; detached: curve not "
        "on its boxes;\n   through: curve crossing another box; overflow: text wider than "
        "its box;\n   upward: edge drawn bottom-up (a cut edge counts from its producer); "
        "lbl/box, lbl/lbl: edge\n   labels on a box, on another label; outside: box out of "
        "its cluster")
    say("%-22s %-5s %6s %6s %7s %7s %8s %7s %6s %8s %7s %7s %7s" % (
        "model", "view", "boxes", "edges", "overlap", "undrawn", "detached", "through",
        "upward", "overflow", "lbl/box", "lbl/lbl", "outside"))
    for name, path, kind in models:
        for mode in views_of(name):
            if not timings[(name, mode)]["ok"]:
                continue
            js = os.path.join(outdir, "%s.%s.json" % (name, mode))
            r = run([onnxviz, "render", path, "-o", js] + VIEWS[mode], args.timeout)
            if r["rc"] != 0:
                say("%-22s %-5s layout JSON failed: %s" % (name, mode, r["err"][:200]))
                continue
            with open(js, encoding="utf-8") as f:
                layout = json.load(f)
            q = render_check.check(layout, measure)
            q["layout"] = js
            quality[(name, mode)] = q
            say("%-22s %-5s %6d %6d %7d %7d %8d %7d %6d %8s %7d %7d %7d" % (
                name, mode, q["boxes"], q["edges"], q["overlaps"], q["undrawn"],
                q["detached"], q["through_box"], q["upward"], "-" if q["overflow"] is None else
                q["overflow"], q["label_on_box"], q["label_on_label"], q["outside_cluster"]))
            for k, v in q["examples"].items():
                say("    %s e.g. %s" % (k, "; ".join(str(x) for x in v[:3])))
    results["quality"] = [dict(model=k[0], mode=k[1], **v) for k, v in quality.items()]

    base = []
    if not args.no_netdrawer:
        section("4. onnx net_drawer + dot, end to end (python start included; write_dot "
                "runs dot -Tdot, then dot -Tsvg)")
        paths = {n: p for n, p, _ in models}
        for name in BASELINE_MODELS:
            cutoff = args.swin_cutoff if name == "swin_t" else args.netdrawer_cutoff
            if cutoff <= 0:
                say("%-22s skipped (cut-off 0)" % name)
                continue
            full = timings[(name, "none")]
            b = baseline(args, name, paths[name], cutoff, outdir,
                         full["wall"] if full["ok"] else None)
            say(baseline_line(b))
            base.append(b)
    results["netdrawer"] = base

    pics = []
    if not args.no_pictures:
        section("5. pictures (rsvg-convert), in %s" % pngdir)
        paths = {n: p for n, p, _ in models}
        for name, mode, frac in PICTURES:
            if name not in paths:
                continue
            tag = "%s.%s" % (name, mode)
            svg = os.path.join(outdir, tag + ".svg")
            js = os.path.join(outdir, tag + ".json")
            for f in (svg, js):  # sections 2 and 3 made them unless the render failed
                if not os.path.exists(f):
                    run([onnxviz, "render", paths[name], "-o", f] + VIEWS[mode], args.timeout)
            try:
                with open(js, encoding="utf-8") as f:
                    layout = json.load(f)
            except (OSError, ValueError):
                say("   %s: no layout" % tag)
                continue
            if frac is None and max(layout["width"], layout["height"]) > WHOLE_MAX:
                frac = 0.0
            src = svg
            if frac is not None:
                box = crop_box(layout, frac)
                src = os.path.join(outdir, tag + ".crop.svg")
                crop_svg(svg, src, box, layout)
                tag += ".crop%02d" % int(frac * 100)
            png = os.path.join(pngdir, tag + ".png")
            r = run(["rsvg-convert", "-o", png, src], 120)
            desc = "whole %.0fx%.0f pt" % (layout["width"], layout["height"]) if frac is None \
                else "%.0fx%.0f pt at (%.0f, %.0f) of %.0fx%.0f" % (
                    box[2], box[3], box[0], box[1], layout["width"], layout["height"])
            if r["rc"] == 0:
                say("   %s  (%s)" % (png, desc))
                pics.append(png)
            else:
                say("   %s FAILED: %s" % (png, r["err"][:200]))
    results["pictures"] = pics

    section("")
    say("load average at the end: %.2f %.2f %.2f" % os.getloadavg())
    section("6. summary")
    missed = []

    def verdict(ok, text, key):
        say("%-7s %s" % ("OK" if ok else "MISSED", text))
        if not ok:
            missed.append(key)
    if "sweep" in results:
        s = results["sweep"]
        verdict(not s["failed"], "every corpus model renders to SVG (%d renders, %d failed)" %
                (s["renders"], len(s["failed"])), "sweep")
    for r in targets:
        ok = r["ok"] and r["wall"] <= r["target"]
        note = ""
        if r["ok"] and not ok and r["cpu"] <= r["target"]:
            note = "; cpu %.2f s: missed because the machine was busy?" % r["cpu"]
        verdict(ok, "%-22s %-8s %s  (target %.1f s%s)" % (
            r["model"], {"none": "full", "auto": "overview", "expand": "expand"}[r["mode"]],
            "%7.3f s" % r["wall"] if r["ok"] else "FAILED: " + r["error"][:60].replace(
                "\n", " "), r["target"], note), "%s %s" % (r["model"], r["mode"]))
    for r in targets:
        if r["model"] == "transformer_12x12" and r["mode"] == "none":
            n = r.get("boxes") if r["ok"] else None
            verdict(n is not None and n <= T_TRANSFORMER_BOXES,
                    "transformer_12x12 full detail: %s boxes (target <= %d: bookkeeping folded)"
                    % (n, T_TRANSFORMER_BOXES), "transformer_12x12 boxes")
    for b in base:
        if not b["onnxviz_full"]:
            text = "no ratio: onnxviz failed on the model"
        elif b["verdict"] == "FAILED":
            text = "no ratio: net_drawer %s" % b["note"][:80]
        elif b["finished"]:
            text = "%.1fx" % b["ratio"]
        else:
            text = "> %.0fx (%s)" % (b["wall"] / b["onnxviz_full"], b["note"])
        verdict(b["verdict"] == "OK", "net_drawer+dot / onnxviz on %s: %s  (target >= %.0fx)"
                % (b["model"], text, T_NETDRAWER_RATIO), "netdrawer " + b["model"])
    say("%d target(s) missed%s" % (len(missed), (": " + ", ".join(missed)) if missed else ""))
    busy_warning()
    say("benchmark time %.0f s; figures in %s" % (time.monotonic() - bench_t0,
                                                   os.path.join(args.cache, "results.json")))
    results["missed"] = missed
    with open(os.path.join(args.cache, "results.json"), "w") as f:
        json.dump(results, f, indent=1, default=str)
    if any(b["verdict"] == "FAILED" for b in base):
        say("the baseline could not be measured (net_drawer or dot failed): exit status 1")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
