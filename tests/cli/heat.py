"""heat.py — heat overlays (issue 26, docs/overlays.md) through the command line.

Records real ONNX Runtime profiles of the corpus models with tests/ort/run.mjs (graph
optimizations on, with the optimized model saved; and off), then checks `onnxviz overlay
--json` against the profile itself: coverage >= 95% of kernel time on every model and 100%
with the optimized model given; the per-node totals plus the unmatched add up to the
profile's kernel time exactly (whole microseconds); without optimizations every node's
total, mean, p50 and p90 equal the profile's figures for the kernel of its name.  Builds
Model Explorer node data, a Netron attachment and CSV in their documented forms and checks
what they attribute; hostile files (huge numbers, NaN, deep nesting, 100 MB, markup in
names) give clear errors or escaped drawings.  Prints "ok ..." / "FAIL ..." lines and ends
with "heat: N passed, N failed".

usage: heat.py BIN MODELS_DIR TMP
"""
import glob
import json
import math
import os
import random
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

BIN, M, TMP = sys.argv[1:4]
HERE = os.path.dirname(os.path.abspath(__file__))
ORT = os.path.join(os.path.dirname(HERE), "ort")
passed = failed = 0


def check(cond, what, detail=""):
    global passed, failed
    if cond:
        passed += 1
        print("ok", what)
    else:
        failed += 1
        print("FAIL:", what, detail)


def run(*args, rc=0):
    p = subprocess.run([BIN, *args], capture_output=True, text=True)
    if p.returncode != rc:
        check(False, "exit %d (want %d): %s" % (p.returncode, rc, " ".join(args)), p.stderr[:300])
    return p


def table(model, *files, extra=()):
    p = run("overlay", model, *files, "--json", *extra)
    try:
        return json.loads(p.stdout)
    except ValueError:
        check(False, "overlay --json is JSON: %s" % model, p.stderr[:300])
        return None


def profile_figures(paths):
    """Per kernel name: total us, and per run (runs: model_run events per file)."""
    totals, per_run, runs = {}, {}, 0
    for path in paths:
        ev = json.load(open(path))
        spans = sorted((e["ts"], e["ts"] + e["dur"]) for e in ev
                       if e.get("cat") == "Session" and e.get("name") == "model_run")
        n = max(1, len(spans))
        for e in ev:
            if e.get("cat") != "Node" or not e["name"].endswith("_kernel_time"):
                continue
            k = e["name"][:-len("_kernel_time")]
            r = 0
            for i, (s, _) in enumerate(spans):
                if s <= e["ts"]:
                    r = i
            totals[k] = totals.get(k, 0) + e["dur"]
            per_run.setdefault(k, {})
            per_run[k][runs + r] = per_run[k].get(runs + r, 0) + e["dur"]
        runs += n
    return totals, per_run, runs


def record(model, name, opt, runs, extra=()):
    prefix = os.path.join(TMP, "%s_%s" % (name, opt))
    for f in glob.glob(prefix + "_*.json"):
        os.unlink(f)
    args = ["node", os.path.join(ORT, "run.mjs"), model, "--runs", str(runs), "--opt", opt,
            "--profile", prefix, "--out", os.devnull, *extra]
    p = subprocess.run(args, capture_output=True, text=True)
    m = re.search(r"^profile: (.*)$", p.stderr, re.M)
    check(p.returncode == 0 and m, "ORT ran %s (opt %s)" % (name, opt), p.stderr[-400:])
    return m.group(1) if m else None


def svg_ok(path, what):
    text = open(path, encoding="utf-8").read()
    try:
        root = ET.fromstring(text)
    except ET.ParseError as e:
        check(False, what + ": SVG is XML", str(e))
        return None
    ns = "{http://www.w3.org/2000/svg}"
    bad_el = [el.tag for el in root.iter() if el.tag in (ns + "script", ns + "foreignObject", ns + "a")]
    bad_at = [a for el in root.iter() for a in el.attrib if a.lower().startswith("on")]
    check(not bad_el and not bad_at and "<script" not in text.lower(), what + ": no script in the SVG",
          str(bad_el + bad_at)[:200])
    return root, text


def stacks_check(lay, t, metric, label):
    """Each x N stack box (and range box, "layers.0-9") of layout JSON `lay`: its value is
    the sum of its repetitions (members) and "hottest" the largest, each one's figure summed
    here from the table `t` by the node names' scope ("/encoder/layers.3/..."); the box's
    rows say both."""
    seen = 0
    for b in lay["nodes"]:
        if not b.get("members") or "heat" not in b:
            continue
        seen += 1
        m = re.match(r"^(.*?)(\d+)\u2013(\d+)$", b["title"])
        if not m:
            check(False, label + ": a stack's title names its members", b["title"])
            continue
        prefix, lo, hi = m.group(1), int(m.group(2)), int(m.group(3))
        reps = {k: 0.0 for k in range(lo, hi + 1)}
        for n in t["nodes"]:
            v = n["values"].get(metric)
            mm = re.match(re.escape(prefix) + r"(\d+)/", n["name"])
            if v is not None and mm and int(mm.group(1)) in reps:
                reps[int(mm.group(1))] += v
        want_total = sum(reps.values())
        best = max(reps.values())
        hot = b["heat"].get("hottest")
        rows = [r["text"] for r in b["rows"]]
        ok = (hot is not None and b["heat"]["repetitions"] == len(reps) and
              abs(b["heat"]["value"] - want_total) <= 1e-6 * max(want_total, 1) and
              abs(hot["value"] - best) <= 1e-6 * max(best, 1) and
              hot["name"] == prefix.rsplit("/", 1)[-1] + str(lo + hot["repetition"]) and
              abs(reps[lo + hot["repetition"]] - best) <= 1e-6 * max(best, 1) and
              any(r.startswith("total ") for r in rows) and
              any(r.startswith("hottest %s: " % hot["name"]) for r in rows))
        check(ok, "%s: stack %s: total and hottest repetition = the table's (%s: %.6g of %.6g)"
              % (label, b["title"], hot and hot["name"], best, want_total),
              (b["heat"], rows[-3:], sorted(reps.items(), key=lambda kv: -kv[1])[:3]))
    return seen


# ------------------------------------------------------------------------------------------
# Real profiles
p = subprocess.run(["sh", os.path.join(ORT, "setup.sh")], capture_output=True, text=True)
check(p.returncode == 0, "tests/ort/setup.sh", p.stdout[-300:] + p.stderr[-300:])

random.seed(1)
silero_feeds = os.path.join(TMP, "silero_feeds.json")
json.dump({"input": {"type": "float32", "dims": [1, 512], "data": [random.uniform(-1, 1) for _ in range(512)]},
           "state": {"type": "float32", "dims": [2, 1, 128], "data": [0.0] * 256},
           "sr": {"type": "int64", "dims": [], "data": [16000]}}, open(silero_feeds, "w"))
MODELS = [
    ("squeezenet1_1", M + "/real/squeezenet1_1.onnx", ["--random", "1"]),
    ("silero_vad_v5", M + "/real/silero_vad_v5.onnx", ["--feeds", silero_feeds]),
    ("transformer_12x12", M + "/real/transformer_12x12.onnx",
     ["--random", "1", "--dim", "src_len=8", "--dim", "tgt_len=8"]),
    ("light_resnet50", M + "/onnx-testdata/light/light_resnet50.onnx", ["--random", "1"]),
]

PROFS = {}
for name, model, feeds in MODELS:
    opt_model = os.path.join(TMP, name + ".opt.onnx")
    prof_all = record(model, name, "all", 3, feeds + ["--optimized", opt_model])
    prof_off = record(model, name, "disabled", 2, feeds)
    if not prof_all or not prof_off:
        continue
    PROFS[name] = (model, prof_all, opt_model)
    for prof, with_opt in ((prof_all, False), (prof_all, True), (prof_off, False)):
        label = "%s %s%s" % (name, "opt" if prof == prof_all else "no-opt", " + optimized model" if with_opt else "")
        t = table(model, prof, extra=("--optimized", opt_model) if with_opt else ())
        if t is None:
            continue
        totals, per_run, runs = profile_figures([prof])
        total = sum(totals.values())
        check(t["source"] == "ort-profile" and t["runs"] == runs, label + ": runs", (t["runs"], runs))
        check(t["total"] == total, label + ": total = the profile's kernel time", (t["total"], total))
        cov = t["coverage"]
        check(cov >= 0.95, label + ": coverage >= 95%% (%.2f%%)" % (100 * cov))
        if with_opt:
            check(t["attributed"] == total and not t["unmatched"], label + ": coverage 100%",
                  [u["name"] for u in t["unmatched"]][:5])
        node_sum = sum(n["values"]["dur.total"] for n in t["nodes"])
        un_sum = sum(u["value"] for u in t["unmatched"])
        check(node_sum + un_sum == total and node_sum == t["attributed"],
              label + ": nodes + unmatched = the profile, exactly", (node_sum, un_sum, total))
        check(abs(sum(pv["total"] for pv in t["providers"]) - total) < 0.5 and
              t["providers"][0]["name"] == "CPUExecutionProvider", label + ": per provider")
        # one provider: its own metrics are the node's time
        diff = [n["name"] for n in t["nodes"] if n["values"].get("dur.total@CPUExecutionProvider") != n["values"]["dur.total"]
                or abs(n["values"].get("dur.mean@CPUExecutionProvider", -1) - n["values"]["dur.mean"]) > 1e-9]
        check(not diff and "dur.total@CPUExecutionProvider" in [m["name"] for m in t["metrics"]],
              label + ": dur.total@CPUExecutionProvider = dur.total on every node", diff[:3])
        if prof == prof_off:
            # no fusion: each node's figures are those of the kernel of its name
            wrong = []
            for n in t["nodes"]:
                k = n["name"]
                if k not in totals:
                    continue
                runs_v = sorted(per_run[k].get(r, 0) for r in range(runs))
                want = {"dur.total": totals[k], "dur.mean": totals[k] / runs,
                        "dur.p50": runs_v[math.ceil(0.5 * runs) - 1],
                        "dur.p90": runs_v[math.ceil(0.9 * runs) - 1]}
                if any(abs(n["values"][m] - v) > 1e-9 for m, v in want.items()):
                    wrong.append((k, n["values"], want))
            matched = sum(1 for n in t["nodes"] if n["name"] in totals)
            check(not wrong and matched > 0, label + ": %d nodes' total, mean, p50, p90 = the profile's" % matched,
                  str(wrong[:2])[:300])
    # drawings: SVG (overview and full detail), layout JSON (values), DOT (colours)
    svg = os.path.join(TMP, name + ".svg")
    run("render", model, "--overlay", prof_all, "--optimized", opt_model, "--scale", "log", "-o", svg)
    r = svg_ok(svg, name + " heat SVG")
    if r:
        fills = set(re.findall(r'<rect [^>]*fill="(#[0-9a-f]{6})"', r[1]))
        check('class="legend heat-legend"' in r[1] and "dur.mean (us)" in r[1] and len(fills) > 5,
              name + ": the SVG has a legend and heat fills")
    for group in ("auto", "none"):
        lj = os.path.join(TMP, name + "_" + group + ".json")
        run("render", model, "--overlay", prof_all, "--optimized", opt_model, "--group=" + group, "-o", lj)
        try:
            lay = json.load(open(lj))
        except ValueError:
            check(False, name + ": layout JSON")
            continue
        t = table(model, prof_all, extra=("--optimized", opt_model))
        s = sum(b["heat"]["value"] for b in lay["nodes"] if "heat" in b)
        want = sum(n["values"]["dur.mean"] for n in t["nodes"])
        check(lay["heat"]["metric"] == "dur.mean" and abs(s - want) <= 1e-6 * max(want, 1),
              name + ": group=%s boxes add up to the nodes' figures" % group, (s, want))
        if name == "transformer_12x12" and group == "auto":
            check(stacks_check(lay, t, "dur.mean", name + " profile") == 2,
                  name + ": the profile draws on both x N stacks")
    dot = os.path.join(TMP, name + ".dot")
    run("render", model, "--overlay", prof_all, "-o", dot)
    check(len(set(re.findall(r'fillcolor="(#[0-9a-f]{6})"', open(dot).read()))) > 3, name + ": DOT colours")

# ------------------------------------------------------------------------------------------
# Matching without the optimized model by op type, shapes and order (issue 38): a small
# vision transformer exported the way PyTorch does (vit_model.py) whose GELUs, LayerNorms
# and 3-D MatMul + Add ORT fuses into nodes it names itself.  Without the optimized model
# >= 95% of kernel time is attributed (55% by names alone), and every kernel matched
# without its name went to nodes the optimized model's own mapping gives it (that kernel
# alone, with --optimized); the same on the corpus models' profiles.
def oracle_check(label, model, prof, opt_model):
    t = table(model, prof)
    if t is None:
        return None
    events = json.load(open(prof))
    wrong, seen = [], 0
    for inf in t.get("inferred", []):
        mine = [e for e in events if e.get("cat") == "Node" and e.get("name") == inf["name"] + "_kernel_time"]
        one = os.path.join(TMP, "one_kernel.json")
        json.dump(mine, open(one, "w"))
        o = table(model, one, extra=("--optimized", opt_model))
        oracle = {n["id"] for n in o["nodes"]} if o else set()
        seen += 1
        if not (set(inf["node_ids"]) <= oracle and inf["node"] in oracle and inf["how"] in ("op-shapes-order", "neighbour")):
            wrong.append((inf["name"], inf["how"], inf["node_ids"], sorted(oracle)))
    check(not wrong and seen == t.get("inferred_count", 0),
          "%s: %d kernels matched by op type, shapes and order or as neighbours, each as the optimized model maps it"
          % (label, seen), str(wrong[:3])[:400])
    matched_by = {h for n in t["nodes"] for h in n.get("matched_by", [])}
    check(all(n.get("matched_by") for n in t["nodes"]), label + ": every node says how it was matched", matched_by)
    return t


vit = os.path.join(TMP, "vit.onnx")
p = subprocess.run([sys.executable, os.path.join(HERE, "vit_model.py"), vit, "6"], capture_output=True, text=True)
check(p.returncode == 0, "vit_model.py wrote a model", p.stderr[-300:])
vit_opt = os.path.join(TMP, "vit.opt.onnx")
vit_prof = record(vit, "vit", "all", 3, ["--random", "1", "--optimized", vit_opt]) if p.returncode == 0 else None
if vit_prof:
    ops = {e["args"].get("op_name") for e in json.load(open(vit_prof)) if e.get("cat") == "Node"}
    check({"Gelu", "Gemm", "LayerNormalization"} <= ops, "ORT fused the vit's Gelu, LayerNorm and MatMul + Add", ops)
    t = oracle_check("vit (no optimized model)", vit, vit_prof, vit_opt)
    if t:
        check(t["coverage"] >= 0.95, "vit without the optimized model: coverage >= 95%% (%.2f%%)" % (100 * t["coverage"]))
        hows = {i["how"] for i in t.get("inferred", [])}
        gelus = [i for i in t.get("inferred", []) if i["op"] == "Gelu"]
        check(hows == {"op-shapes-order", "neighbour"} and len(gelus) == 6 and all(len(g["node_ids"]) == 5 for g in gelus),
              "vit: its 6 Gelus matched by op type, shapes and order (5 nodes each), the reshapes as neighbours",
              (hows, [(g["name"], g["node_ids"]) for g in gelus]))
        node_sum = sum(n["values"]["dur.total"] for n in t["nodes"])
        un_sum = sum(u["value"] for u in t["unmatched"])
        check(node_sum + un_sum == t["total"] and node_sum == t["attributed"],
              "vit: nodes + unmatched = the profile, exactly", (node_sum, un_sum, t["total"]))
    # never a guess: without the kernels between two blocks' GELUs each sees two of them in
    # its window, and both stay unmatched
    events = json.load(open(vit_prof))
    drop = ("/blocks.1/norm1/", "/blocks.1/attn/", "/blocks.1/Add_kernel", "/blocks.1/norm2/",
            "/blocks.1/mlp/fc1/", "/blocks.0/mlp/fc2/", "/blocks.0/Add_1_kernel")
    cut = [e for e in events if not (e.get("cat") == "Node" and any(d in e["name"] for d in drop))]
    cutp = os.path.join(TMP, "vit_cut.json")
    json.dump(cut, open(cutp, "w"))
    t = table(vit, cutp)
    if t:
        un = {u["name"] for u in t["unmatched"]}
        inf = {i["name"] for i in t.get("inferred", [])}
        gelus = []
        for e in events:  # in execution order: the first two are blocks 0 and 1
            k = e.get("name", "")[:-len("_kernel_time")]
            if e.get("cat") == "Node" and e["args"].get("op_name") == "Gelu" and k not in gelus:
                gelus.append(k)
        two = set(gelus[:2])
        check(len(two) == 2 and two <= un and not two & inf and set(gelus[2:]) <= inf,
              "two GELUs in one window: neither matched, both listed; the other four matched",
              (gelus, sorted(un)[:8]))
for name, (model, prof, opt_model) in PROFS.items():
    oracle_check(name, model, prof, opt_model)

# several profiles are several runs
sq = M + "/real/squeezenet1_1.onnx"
profs = sorted(glob.glob(os.path.join(TMP, "squeezenet1_1_*_*.json")))
if len(profs) == 2:
    t = table(sq, *profs)
    totals, _, runs = profile_figures(profs)
    check(t is not None and t["runs"] == runs == 5 and t["total"] == sum(totals.values()),
          "two profiles: runs and totals add up", (t and t["runs"], runs))

# Ranges: 40 different layers (1 to 5 Relus each, no repeats) drawn at depth 2 as four
# ranges "layers.0-9" ...: each its total and its hottest member, from the table
from onnx import TensorProto, helper, save as onnx_save  # noqa: E402
rnodes, x = [], "x"
for i in range(40):
    for j in range(i % 5 + 1):
        y = "/model/layers.%d/relu%d/Relu_output_0" % (i, j)
        rnodes.append(helper.make_node("Relu", [x], [y], name="/model/layers.%d/relu%d/Relu" % (i, j)))
        x = y
rm = helper.make_model(helper.make_graph(rnodes, "ranges", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8])],
                                         [helper.make_tensor_value_info(x, TensorProto.FLOAT, [1, 8])]),
                       opset_imports=[helper.make_opsetid("", 13)])
rm.ir_version = 8
rpath, rcsv = os.path.join(TMP, "ranges.onnx"), os.path.join(TMP, "ranges.csv")
onnx_save(rm, rpath)
random.seed(40)
with open(rcsv, "w") as f:
    f.write("node,latency_us\n" + "".join("%s,%d\n" % (n.name, random.randint(1, 1000)) for n in rnodes))
t = table(rpath, rcsv)
lj = os.path.join(TMP, "ranges.json")
run("render", rpath, "--overlay", rcsv, "--group=2", "-o", lj)
if t:
    lay = json.load(open(lj))
    check(stacks_check(lay, t, "latency_us", "ranges") == 4 and not any(b.get("open_all") for b in lay["nodes"]),
          "ranges: four range boxes, each with its total and hottest member")

# ------------------------------------------------------------------------------------------
# Per-provider metrics: a profile in ORT's trace form with kernels on two providers (and one
# whose name cannot be a metric name), two runs; each node's dur.total@P / dur.mean@P are its
# kernels' time on P, no value where none ran on P, and the providers add up to dur.total
sqdoc = json.loads(run("inspect", "--json", M + "/real/squeezenet1_1.onnx").stdout)
convs = [n["name"] for n in sqdoc["nodes"] if n["op_type"] == "Conv"]
random.seed(4)
ev, want = [], {}
provs = ["CPUExecutionProvider", "CUDAExecutionProvider", "Odd <provider>"]
for run_i in range(2):
    t0 = run_i * 100000
    ev.append({"cat": "Session", "name": "model_run", "ts": t0, "dur": 90000, "ph": "X"})
    for i, nm in enumerate(convs):
        pv = provs[i % 3]
        d = random.randint(1, 900)
        ev.append({"cat": "Node", "name": nm + "_kernel_time", "ts": t0 + 1 + i, "dur": d, "ph": "X",
                   "args": {"op_name": "Conv", "provider": pv}})
        want.setdefault(nm, {}).setdefault(pv, 0)
        want[nm][pv] += d
ppath = os.path.join(TMP, "two_providers.json")
json.dump(ev, open(ppath, "w"))
t = table(M + "/real/squeezenet1_1.onnx", ppath)
if t:
    names_m = [m["name"] for m in t["metrics"]]
    check(names_m == ["dur.mean", "dur.p50", "dur.p90", "dur.total",
                      "dur.mean@CPUExecutionProvider", "dur.total@CPUExecutionProvider",
                      "dur.mean@CUDAExecutionProvider", "dur.total@CUDAExecutionProvider"],
          "per-provider metrics: two named providers, none for a name that cannot be a metric", names_m)
    wrong = []
    for n in t["nodes"]:
        w = want.get(n["name"], {})
        for pv in provs[:2]:
            got_t, got_m = n["values"].get("dur.total@" + pv), n["values"].get("dur.mean@" + pv)
            if (got_t, got_m) != ((w[pv], w[pv] / 2) if pv in w else (None, None)):
                wrong.append((n["name"], pv, got_t, got_m, w))
        if sum(n["values"].get("dur.total@" + pv) or 0 for pv in provs[:2]) + w.get(provs[2], 0) != n["values"]["dur.total"]:
            wrong.append((n["name"], "sum", n["values"]))
    check(not wrong and len(t["nodes"]) == len(convs), "per-provider metrics: each node's time on each provider, exactly",
          wrong[:3])
    check({p["name"] for p in t["providers"]} == set(provs), "the providers table still lists all three")
    out = os.path.join(TMP, "cuda.json")
    run("render", M + "/real/squeezenet1_1.onnx", "--overlay", ppath, "--metric", "dur.total@CUDAExecutionProvider",
        "--group=none", "-o", out)
    lay = json.load(open(out))
    hot = [b for b in lay["nodes"] if "heat" in b]
    check(lay["heat"]["metric"] == "dur.total@CUDAExecutionProvider" and
          sum(b["heat"]["value"] for b in hot) == sum(w.get(provs[1], 0) for w in want.values()) and
          len(hot) == sum(1 for w in want.values() if provs[1] in w),
          "a provider's metric drawn: only its nodes coloured, adding up to its time", (len(hot),))

# ------------------------------------------------------------------------------------------
# Model Explorer node data, a Netron attachment, CSV, the built-in cost
doc = json.loads(run("inspect", "--json", sq).stdout)
names = [n["name"] for n in doc["nodes"]]
outs = [n["outputs"][0]["name"] for n in doc["nodes"]]
me = {"squeezenet": {"results": {names[0]: {"value": 5.0}, outs[1]: {"value": 7.5},
                                 "no/such/node": {"value": 2.5}, names[2]: {"value": "text"}},
                     "thresholds": [{"value": 6, "bgColor": "#ff0000"}, {"value": 1, "bgColor": "#00ff00"}]}}
mef = os.path.join(TMP, "me.json")
json.dump(me, open(mef, "w"))
t = table(sq, mef)
if t:
    vals = {n["name"]: n["values"]["value"] for n in t["nodes"]}
    check(t["source"] == "model-explorer" and vals == {names[0]: 5.0, names[1]: 7.5} and
          [u["name"] for u in t["unmatched"]] == ["no/such/node"] and abs(t["unmatched"][0]["share"] - 2.5 / 15) < 1e-9
          and t["thresholds"] == [1, 6], "Model Explorer node data: by node name and output tensor name", t)
run("render", sq, "--overlay", mef, "--scale", "thresholds", "-o", os.path.join(TMP, "me.svg"))
svg_ok(os.path.join(TMP, "me.svg"), "Model Explorer drawing")

ne = {"signature": "netron:attachment",
      "metrics": [{"kind": "node", "target": names[3], "name": "latency", "value": 1.5, "type": "float32"},
                  {"kind": "node", "target": names[3], "name": "error", "value": "0.25"},
                  {"kind": "value", "target": outs[4], "name": "latency", "value": 2},
                  {"kind": "model", "target": "", "name": "latency", "value": 9}]}
nef = os.path.join(TMP, "netron.json")
json.dump(ne, open(nef, "w"))
t = table(sq, nef)
if t:
    v = {n["name"]: n["values"] for n in t["nodes"]}
    agg = {m["name"]: m["aggregate"] for m in t["metrics"]}
    check(t["source"] == "netron" and v[names[3]] == {"latency": 1.5, "error": 0.25} and
          v[names[4]]["latency"] == 2 and agg == {"latency": "sum", "error": "max"} and not t["unmatched"],
          "Netron attachment: node and value metrics, sum for latency, max for error", t)

csvf = os.path.join(TMP, "a<b>&'\".csv")
with open(csvf, "w") as f:
    f.write("node,latency_ms,accuracy\n%s,1.25,0.5\n\"%s\",2.5,\n\"<script>alert(1)</script>,x\",3,0.9\n" % (names[5], outs[6]))
t = table(sq, csvf)
if t:
    v = {n["name"]: n["values"] for n in t["nodes"]}
    check(t["source"] == "csv" and v[names[5]]["latency_ms"] == 1.25 and v[names[6]]["latency_ms"] == 2.5
          and v[names[6]]["accuracy"] is None and t["unmatched"][0]["name"] == "<script>alert(1)</script>,x",
          "CSV: quoted names, empty cells, unmatched markup kept as text", t)
for metric in ("latency_ms", "accuracy"):
    out = os.path.join(TMP, "csv_%s.svg" % metric)
    run("render", sq, "--overlay", csvf, "--metric", metric, "-o", out)
    r = svg_ok(out, "CSV drawing (%s)" % metric)
    if r:
        check("a&lt;b&gt;&amp;" in r[1], "CSV drawing: the file name in the caption is escaped")
lj = os.path.join(TMP, "csv.json")
run("render", sq, "--overlay", csvf, "--metric", "accuracy", "-o", lj)
check(json.load(open(lj))["heat"]["aggregate"] == "max", "layout JSON: accuracy groups take the max")
run("render", sq, "--overlay", csvf, "--metric", "nosuch", "-o", lj, rc=2)
# a metric named with quotes and a backslash (found by fuzz_overlay: the layout JSON wrote it raw)
qcsv = os.path.join(TMP, "quoted_metric.csv")
with open(qcsv, "w") as f:
    f.write('node,"lat ""x"" \\ ms"\n%s,1.5\n' % names[5])
run("render", sq, "--overlay", qcsv, "-o", lj)
try:
    check(json.load(open(lj))["heat"]["metric"] == 'lat "x" \\ ms', "layout JSON: a metric name with quotes is escaped")
except ValueError as e:
    check(False, "layout JSON: a metric name with quotes is escaped", str(e))

t = table(sq, "cost", extra=("--metric", "macs"))
if t:
    total = doc["cost"]["total"]["macs"] if "cost" in doc else None
    check(t["source"] == "cost" and total is not None and abs(sum(n["values"]["macs"] for n in t["nodes"]) - total) < 0.5,
          "the built-in cost overlay: MACs add up to the cost's total", (total,))
run("render", sq, "--overlay", "cost", "--metric", "params", "-o", os.path.join(TMP, "cost.svg"))
svg_ok(os.path.join(TMP, "cost.svg"), "cost drawing")

# x N stacks: the total and the hottest repetition, from node data of the model's own names
# (seeded figures), summed (latency_ms) and largest (score).  Only the scoped names: the
# unscoped Constant and Identity nodes are folded into their consumers' boxes, which
# summing by name would not see.
tf = M + "/real/transformer_12x12.onnx"
tdoc = json.loads(run("inspect", "--json", tf).stdout)
random.seed(26)
tcsv = os.path.join(TMP, "transformer.csv")
with open(tcsv, "w") as f:
    f.write("node,latency_ms,score\n")
    for n in tdoc["nodes"]:
        if n["scope"] == "" and n["name"].startswith("/"):
            f.write("%s,%d,%d\n" % (n["name"], random.randint(1, 5000), random.randint(1, 10**6)))
t = table(tf, tcsv)
lj = os.path.join(TMP, "transformer_csv.json")
run("render", tf, "--overlay", tcsv, "-o", lj)
if t:
    check(stacks_check(json.load(open(lj)), t, "latency_ms", "CSV") == 2, "CSV: both x N stacks drawn with heat")
run("render", tf, "--overlay", tcsv, "--metric", "score", "-o", lj)
lay = json.load(open(lj))
if t:
    for b in lay["nodes"]:
        if b.get("open_all"):
            prefix = b["title"].split("\u2013")[0].rstrip("0123456789")
            vals = [n["values"]["score"] for n in t["nodes"] if n["name"].startswith(prefix) and n["values"].get("score") is not None]
            hot = b["heat"].get("hottest", {})
            check(b["heat"]["value"] == max(vals) == hot.get("value") and not any(r["text"].startswith("total ") for r in b["rows"]),
                  "CSV: stack %s: the largest score, its repetition the hottest, no total" % b["title"], (b["heat"], max(vals)))
tsvg = os.path.join(TMP, "transformer_csv.svg")
run("render", tf, "--overlay", tcsv, "-o", tsvg)
r = svg_ok(tsvg, "CSV stacks drawing")
if r:
    check(len(re.findall(r">hottest layers\.\d+: ", r[1])) == 2, "the SVG's stacks say their hottest repetition")
    # no text outside its box, in DejaVu Sans (tests/render/textfit.py, as the render suite)
    sys.path.insert(0, os.path.join(os.path.dirname(HERE), "render"))
    import textfit
    w = textfit.measurer("dejavu")
    for f in (tsvg, os.path.join(TMP, "transformer_12x12.svg")):
        if w and os.path.exists(f):
            over = textfit.svg_overflows(open(f, encoding="utf-8").read(), w)
            check(not over, "heat drawing %s: no text outside its box" % os.path.basename(f), over[:3])

# ------------------------------------------------------------------------------------------
# Hostile files: clear errors naming the line or JSON path
def hostile(label, content, want, binary=False):
    path = os.path.join(TMP, "hostile.dat")
    with open(path, "wb" if binary else "w") as f:
        f.write(content)
    p = run("overlay", sq, path, rc=1)
    check(re.search(want, p.stderr) is not None and "bad_overlay" in p.stderr,
          "hostile: " + label, p.stderr[:300])


hostile("a CSV number beyond a double", "node,t\n%s,1e999\n" % names[0], r"line 2, column 2: 1e999 is not a finite number")
hostile("NaN in CSV", "node,t\n%s,nan\n" % names[0], r"line 2, column 2: nan is not a finite")
hostile("Inf in CSV", "node,t\nx,1\n%s,-inf\n" % names[0], r"line 3, column 2")
hostile("a CSV row of the wrong width", "node,t\n%s,1,2\n" % names[0], r"line 2: 3 fields, the header has 2")
hostile("an unterminated quote", 'node,t\n"abc,1\n', r"line 2: an unterminated quote")
hostile("a JSON number beyond a double", '{"results": {"%s": {"value": 1e400}}}' % names[0], r"line 1, column \d+: .*")
hostile("a huge JSON number (1e301)", '{"results": {"%s": {"value": 1e301}}}' % names[0],
        r"\$.results\[\"%s\"\].value: not a finite number" % re.escape(names[0]))
hostile("deep nesting (node data)", '{"results": ' + "[" * 100000 + "]" * 100000 + "}",
        r"line 1, column \d+: maximum parsing depth")
hostile("deep nesting (a profile)", '[{"cat": "Node", "args": {"x": ' + "[" * 100000 + "]" * 100000 + "}}]",
        r"line 1, column \d+: nested deeper than 64 levels")
hostile("a profile cut short", '[{"cat": "Node", "name": "x_kernel_time", "dur": 5}, {"cat"', r"line 1, column \d+: ")
hostile("a profile with a bad escape", '[{"cat": "Node", "name": "x\\q_kernel_time", "dur": 5}]', r"a bad escape")
hostile("a profile event given a key twice", '[{"cat": "Node", "dur": 1, "dur": 2}]', r"\$\[0\]\.dur: given twice")
hostile("a profile duration below 0", json.dumps([{"cat": "Node", "name": "x_kernel_time", "dur": 5, "ts": 1},
                                                  {"cat": "Node", "name": "y_kernel_time", "dur": -1, "ts": 2}]),
        r"\$\[1\]\.dur: a whole number of microseconds")
hostile("a profile duration of 1e300", json.dumps([{"cat": "Node", "name": "x_kernel_time", "dur": 1e300, "ts": 1}]),
        r"\$\[0\]\.dur")
hostile("a profile event that is no object", "[1]", r"\$\[0\]: an event is an object")
hostile("duplicate JSON keys", '{"results": {"a": {"value": 1}, "a": {"value": 2}}}', r"duplicate object key")
hostile("neither format", '"just a string"', r"line 1")
hostile("a NUL byte in CSV", b"node,t\nab\0c,1\n", r"line 2: a NUL byte", binary=True)
# the message quotes the cell as UTF-8 text (found by fuzz_overlay: it went out raw)
hostile("a cell that is not UTF-8", b"node,t\nx,\xff\x9a\n", "line 2, column 2: \"\ufffd\ufffd\" is not a number",
        binary=True)
big = os.path.join(TMP, "big.csv")
with open(big, "wb") as f:
    f.write(b"node,t\n")
    f.truncate(100 << 20)
p = run("overlay", sq, big, rc=1)
check("more than the" in p.stderr, "hostile: a 100 MB file is refused by its size", p.stderr[:200])
os.unlink(big)
many = os.path.join(TMP, "many.csv")
with open(many, "w") as f:
    f.write("node,t\n")
    for i in range(200000):
        f.write("<img src=x onerror=alert(%d)>,%d\n" % (i, i))
p = run("overlay", sq, many)
check("unmatched (200000)" in p.stdout, "200,000 unmatched names are all listed", p.stdout[-200:])
out = os.path.join(TMP, "many.svg")
run("render", sq, "--overlay", many, "-o", out)
r = svg_ok(out, "200,000 unmatched markup names")
if r:
    check("onerror" not in r[1], "unmatched markup names stay out of the SVG")


# ------------------------------------------------------------------------------------------
# TensorRT and OpenVINO (issue 38): fixtures written by hand from the documented formats
# (trtexec --exportProfile / --exportLayerInfo; benchmark_app -report_type
# detailed_counters), told apart by content, attributed exactly.
FX = os.path.join(HERE, "overlays")
C0, R1, MP = "/features/features.0/Conv", "/features/features.1/Relu", "/features/features.2/MaxPool"
F3 = "/features/features.3/"
F4 = "/features/features.4/"


def by_name(t):
    return {n["name"]: n for n in t["nodes"]}


t = table(sq, os.path.join(FX, "squeezenet_trt_profile.json"))
if t:
    nodes = by_name(t)
    groups = [({C0, R1}, 32000, 32), ({MP}, 10000, 10),
              ({F3 + "squeeze/Conv", F3 + "squeeze_activation/Relu"}, 8000, 8),
              ({F3 + "expand1x1/Conv", F3 + "expand1x1_activation/Relu", F3 + "expand3x3/Conv",
                F3 + "expand3x3_activation/Relu"}, 20000, 20),
              ({F4 + "squeeze/Conv", F4 + "squeeze_activation/Relu", F4 + "expand1x1/Conv",
                F4 + "expand1x1_activation/Relu"}, 25000, 25)]
    wrong = []
    for names_, total_us, pct in groups:
        got = [nodes.get(n) for n in names_]
        if None in got:
            wrong.append(("missing", names_ - set(nodes)))
            continue
        tot = sum(n["values"]["dur.total"] for n in got)
        per = sum(n["values"]["percentage"] for n in got)
        mean = sum(n["values"]["dur.mean"] for n in got)
        size = {n.get("fused_size", 1) for n in got}
        how = {h for n in got for h in n["matched_by"]}
        # the table's numbers have 9 significant digits
        if abs(tot - total_us) > 1e-8 * total_us or abs(per - pct) > 1e-8 * pct or \
                abs(mean - total_us / 100) > 1e-8 * total_us or size != {len(names_) if len(names_) > 1 else 1} or \
                how != ({"name"} if len(names_) == 1 else {"fusion-name"}):
            wrong.append((sorted(names_)[0], tot, per, mean, size, how))
    check(t["source"] == "tensorrt-profile" and t["runs"] == 100 and len(t["nodes"]) == 13 and not wrong,
          "TensorRT profile: fused (+), merged (||), reformatter and Myelin layers spread over their nodes, sums exact",
          (t["source"], t["runs"], len(t["nodes"]), wrong))
    u = t["unmatched"]
    check(len(u) == 1 and u[0]["name"] == "Reformatting CopyNode for Output Tensor 0 to output" and
          abs(u[0]["value"] - 50) < 1e-9 and abs(t["coverage"] - 0.95) < 1e-9 and
          [m["unit"] for m in t["metrics"]] == ["us", "us", "us", "%"],
          "TensorRT profile: the layer of no node listed, coverage 95%", (u, t["coverage"], t["metrics"]))
t = table(sq, os.path.join(FX, "squeezenet_ov_counters.csv"))
if t:
    nodes = by_name(t)
    c, mp = nodes.get(C0, {}), nodes.get(MP, {})
    cc = nodes.get(F3 + "Concat", {})
    ok = (t["source"] == "openvino-counters" and t["runs"] == 2 and R1 not in nodes and
          c.get("values") == {"dur.mean": 275.0, "dur.p50": 250.0, "dur.p90": 300.0, "dur.total": 550.0} and
          c.get("exec_type") == "jit_avx2_FP32" and c.get("precision") == "FP32" and
          mp.get("values", {}).get("dur.total") == 220.0 and mp.get("precision") == "I8" and
          cc.get("values", {}).get("dur.total") == 22.0 and cc.get("matched_by") == ["value"] and
          [x["name"] for x in t["unmatched"]] == ["Subgraph_123"] and t["unmatched"][0]["value"] == 10 and
          t["total"] == 802 and t["attributed"] == 792 and "providers" not in t)
    check(ok, "OpenVINO counters: two requests are two runs, exact in us; exec type and precision per node; "
          "OPTIMIZED_OUT layers have no time", json.dumps(t)[:600])
t = table(sq, os.path.join(FX, "squeezenet_trt_layers.json"))
if t:
    nodes = by_name(t)
    c = nodes.get(C0, {})
    check(t["source"] == "tensorrt-layers" and c.get("fused_size") == 2 and nodes.get(R1, {}).get("fused") == c.get("id") and
          c.get("exec_type") == "CaskConvolution_FP16" and c.get("precision") == "FP16" and
          nodes.get(F3 + "Concat", {}).get("values", {}).get("layers") == 1 and
          [x["name"] for x in t["unmatched"]] == ["Reformatting CopyNode for Output Tensor 0 to output"],
          "TensorRT layer info: the engine's layers on their nodes, type and precision", json.dumps(t)[:500])


def trt(*layers, count=10):
    return json.dumps([{"count": count}] + [dict(l) for l in layers])


hostile("a TensorRT profile cut short", open(os.path.join(FX, "squeezenet_trt_profile.json")).read()[:300],
        r"line \d+, column \d+: ")
hostile("a TensorRT time of 1e300 ms", trt({"name": MP, "timeMs": 1e300, "averageMs": 1}), r"\$\[1\]\.timeMs: a number, 0\.\.1e12")
hostile("a TensorRT percentage of 101", trt({"name": MP, "timeMs": 1, "percentage": 101}), r"\$\[1\]\.percentage: a percentage")
hostile("a TensorRT time that is text", trt({"name": MP, "timeMs": "1"}), r"\$\[1\]\.timeMs: a number")
hostile("a TensorRT layer without a time", trt({"name": MP}), r"\$\[1\]: neither timeMs nor averageMs")
hostile("a TensorRT count not first", json.dumps([{"count": 1}, {"count": 3}]), r"\$\[1\]\.count: the first element")
hostile("a TensorRT layer name given twice", '[{"count": 1}, {"name": "a", "name": "b", "timeMs": 1}]', r"\$\[1\]\.name: given twice")
hostile("TensorRT layers not a list of names", '{"Layers": [1], "Bindings": []}', r"\$\.Layers\[0\]: a name")
hostile("an OpenVINO row outside a block", "layerName;execStatus;layerType;execType;realTime (ms);cpuTime (ms)\nTotal;;;;1;1\nx;EXECUTED;A;b;1;1\n",
        r"line 3: a row outside a block")
hostile("an OpenVINO time of 1e300 ms", "layerName;execStatus;layerType;execType;realTime (ms);cpuTime (ms)\n%s;EXECUTED;A;b;1e300;1\n" % MP,
        r"line 2: realTime \"1e300\": a number of milliseconds")
hostile("an OpenVINO time that is text", "layerName;execStatus;layerType;execType;realTime (ms);cpuTime (ms)\n%s;EXECUTED;A;b;fast;1\n" % MP,
        r"line 2: realTime \"fast\"")
hostile("an OpenVINO row of 3 fields", "layerName;execStatus;layerType;execType;realTime (ms);cpuTime (ms)\na;b;c\n", r"line 2: 3 fields")
# 2,000,001 layers: the names' bound (as a profile's), not memory, answers
big = '[{"count":1}' + "".join(',{"name":"%x","timeMs":1}' % i for i in range(2000001)) + "]"
hostile("a TensorRT profile of 2,000,001 layers", big, r"more than 2000000 names")
big = "layerName;execStatus;layerType;execType;realTime (ms);cpuTime (ms)\n" + "".join("%x;EXECUTED;A;b;1;1\n" % i for i in range(2000001))
hostile("OpenVINO counters of 2,000,001 layers", big, r"line 2000002: .*more than 2000000 names")
del big
# names with markup: kept as text, escaped where drawn
mk = os.path.join(TMP, "trt_markup.json")
open(mk, "w").write(trt({"name": '<script>alert(1)</script> + ' + MP, "timeMs": 3},
                        {"name": '<img src=x onerror=alert(1)>', "timeMs": 1}))
t = table(sq, mk)
check(t and by_name(t).get(MP, {}).get("values", {}).get("dur.total") == 3000 and
      by_name(t)[MP]["values"]["dur.mean"] == 300 and
      t["unmatched"][0]["name"] == "<img src=x onerror=alert(1)>",
      "TensorRT names with markup: the node part matched, the rest listed as text", t and t["unmatched"])
out = os.path.join(TMP, "trt_markup.svg")
run("render", sq, "--overlay", mk, "-o", out)
r = svg_ok(out, "TensorRT markup names")
if r:
    check("onerror" not in r[1] and "<script" not in r[1], "TensorRT markup names stay out of the SVG")

# ------------------------------------------------------------------------------------------
# Two profiles compared (issue 38): per node B - A and B / A; the differences add up to the
# difference of the sums; a node in only one is marked and counts 0 on the other side;
# across runtimes (an ORT profile and a TensorRT one, both dur.mean in us); drawn on a
# diverging scale whose every fill keeps its text at contrast 4.5:1 or more.
def lum(hexc):
    c = [int(hexc[i:i + 2], 16) / 255 for i in (1, 3, 5)]
    c = [x / 12.92 if x <= 0.04045 else ((x + 0.055) / 1.055) ** 2.4 for x in c]
    return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2]


def contrast(a, b):
    la, lb = lum(a), lum(b)
    return (max(la, lb) + 0.05) / (min(la, lb) + 0.05)


def compare_check(label, a, b, want_sources):
    p = run("overlay", sq, a, b, "--compare", "--json")
    try:
        t = json.loads(p.stdout)
    except ValueError:
        check(False, label + ": JSON", p.stderr[:300])
        return None
    ta, tb = table(sq, a), table(sq, b)
    c = t.get("compare", {})
    nodes = t["nodes"]
    sd = sum(n["values"]["diff"] for n in nodes)
    sa = sum(n["values"]["a"] for n in nodes if n["values"]["a"] is not None)
    sb = sum(n["values"]["b"] for n in nodes if n["values"]["b"] is not None)
    tol = 1e-7 * max(abs(c.get("sum_a", 0)), abs(c.get("sum_b", 0)), 1)
    check(t["source"] == "compare" and (c.get("a"), c.get("b")) == want_sources and
          abs(sd - (c["sum_b"] - c["sum_a"])) <= tol and abs(sa - c["sum_a"]) <= tol and abs(sb - c["sum_b"]) <= tol and
          abs(c["sum_a"] - sum(n["values"]["dur.mean"] for n in ta["nodes"])) <= tol and
          abs(c["sum_b"] - sum(n["values"]["dur.mean"] for n in tb["nodes"])) <= tol,
          label + ": the differences add up to the difference of the sums (%.6g - %.6g)" % (c.get("sum_b", 0), c.get("sum_a", 0)),
          (sd, c))
    ida = {n["id"] for n in ta["nodes"]}
    idb = {n["id"] for n in tb["nodes"]}
    wrong = [n["id"] for n in nodes if n["side"] != ("both" if n["id"] in ida and n["id"] in idb else "a" if n["id"] in ida else "b")
             or (n["side"] != "both" and (n["values"]["ratio"] is not None or
                 n["values"]["diff"] != (n["values"]["b"] or 0) - (n["values"]["a"] or 0)))]
    check(not wrong and c["only_a"] == len(ida - idb) and c["only_b"] == len(idb - ida),
          label + ": %d nodes only in A, %d only in B, marked, without a ratio" % (len(ida - idb), len(idb - ida)), wrong[:5])
    big = [abs(n["values"]["diff"]) for n in nodes]
    check(big == sorted(big, reverse=True), label + ": the largest changes first")
    return t


I = TMP
if "squeezenet1_1" in PROFS:
    prof_all = PROFS["squeezenet1_1"][1]
    prof_off = [f for f in glob.glob(os.path.join(TMP, "squeezenet1_1_disabled_*.json"))][0]
    compare_check("ORT without vs with optimizations", prof_off, prof_all, ("ort-profile", "ort-profile"))
    t = compare_check("ORT vs TensorRT", prof_all, os.path.join(FX, "squeezenet_trt_profile.json"),
                      ("ort-profile", "tensorrt-profile"))
    seen_fills = set()
    for order, (pa, pb) in enumerate(((prof_off, prof_all), (prof_all, prof_off))):
        out = os.path.join(TMP, "compare%d.svg" % order)
        run("render", sq, "--overlay", pa, "--overlay", pb, "--compare", "-o", out)
        r = svg_ok(out, "compared drawing")
        if not r:
            continue
        text = r[1]
        low = []
        boxes = re.findall(r'<g id="[^"]*" class="node[^"]*"[^>]*data-heat="[^"]*">(.*?)</g>', text, re.S)
        for body in boxes:
            fill = re.search(r'<rect [^>]*fill="(#[0-9a-f]{6})"', body).group(1)
            for tag in re.findall(r'<text [^>]*>', body):
                col = re.search(r'fill="(#[0-9a-f]{6})"', tag).group(1)
                if 'font-weight="bold"' in tag:
                    continue  # the title, on its op family's header strip
                if contrast(fill, col) < 4.5:
                    low.append((fill, col, round(contrast(fill, col), 2)))
        fills = {re.search(r'<rect [^>]*fill="(#[0-9a-f]{6})"', b).group(1) for b in boxes}
        seen_fills |= fills
        # the largest change has the darkest class of its side
        check(len(boxes) > 20 and not low and fills & {"#08519c", "#a63603"} and "faster" in text and "slower" in text,
              "compared drawing (A, B = %s): a diverging scale, text contrast >= 4.5:1 on every fill (%d boxes, %d fills)"
              % ("off, all" if order == 0 else "all, off", len(boxes), len(fills)), (low[:5], sorted(fills)))
    check({"#08519c", "#a63603"} <= seen_fills, "compared drawings: both ends of the scale seen", sorted(seen_fills))
p = run("overlay", sq, os.path.join(FX, "squeezenet_trt_profile.json"), os.path.join(FX, "squeezenet_trt_layers.json"),
        "--compare", rc=2)
check("no metric 'dur.mean'" in p.stderr, "compare: a metric one of them lacks is refused", p.stderr)
# node data compared: the metric's name (the input's own) kept in the comparison after
# both inputs are freed
ca, cb = os.path.join(TMP, "cmp_a.csv"), os.path.join(TMP, "cmp_b.csv")
open(ca, "w").write("node,lat_ms\n%s,2\n%s,1\n" % (C0, MP))
open(cb, "w").write("node,lat_ms\n%s,3\n%s,1\n%s,5\n" % (C0, MP, F3 + "Concat"))
p = run("overlay", sq, ca, cb, "--compare", "--json")
t = json.loads(p.stdout or "{}")
byn = {n["name"]: n for n in t.get("nodes", [])}
check(t.get("compare", {}).get("metric") == "lat_ms" and byn.get(C0, {}).get("values", {}).get("ratio") == 1.5 and
      byn.get(F3 + "Concat", {}).get("side") == "b" and t["compare"]["sum_diff"] == 6,
      "CSV compared: lat_ms, 1.5x, one node only in B", t)
out = os.path.join(TMP, "cmp_csv.svg")
run("render", sq, "--overlay", ca, "--overlay", cb, "--compare", "-o", out)
check("lat_ms: B − A" in open(out, encoding="utf-8").read() and "only in B" in open(out, encoding="utf-8").read(),
      "CSV compared drawing: the legend names the metric, the one-sided node says so")
p = run("overlay", sq, os.path.join(FX, "squeezenet_trt_profile.json"), "--compare", rc=2)
check("--compare takes two files" in p.stderr, "compare: one file is refused", p.stderr)

print("heat: %d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
