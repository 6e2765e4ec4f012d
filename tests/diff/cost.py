#!/usr/bin/python3
"""cost.py — onnxviz's MACs against PyTorch's own counter (issue 25, docs/cost.md).

For torchvision models built here with random weights (nothing downloaded) and exported
to ONNX at 1x3x224x224, the sum of onnxviz's MACs over the nodes of the families torch's
profiler counts (conv, matmul, einsum, attention: `onnxviz inspect --json`, "cost") must
equal torch.profiler.profile(with_flops=True)'s FLOPs / 2 within 0.5%.  The profiler
counts aten::conv2d, mm, addmm, bmm and baddbmm at 2 FLOPs per MAC (its aten::mul and
aten::add elementwise figures are left out: onnxviz counts those as other ops).  Prints
the figures (docs/bench.md keeps them).

Environment: BUILD (default build) holds the onnxviz binary; COST_MODELS (comma-separated)
overrides the list.  Exit status 1 on any model off by more than 0.5% or failing.

The exports and the profiler's figure depend on torch alone, not on the build: they are
kept in a cache folder (XDG_CACHE_HOME or ~/.cache, onnxviz-test/cost-<torch version>), so
the sanitize suite's second run checks its build against the same oracle without
exporting and profiling again.  COST_NO_CACHE=1 does both afresh.
"""
import json
import os
import subprocess
import sys
import tempfile
import time
import warnings

import torch
import torchvision

warnings.filterwarnings("ignore")
torch.manual_seed(0)

BUILD = os.environ.get("BUILD", "build")
ONNXVIZ = os.path.join(BUILD, "onnxviz")
# the default keeps the suite near 2 minutes on a loaded 2-core machine; resnet18,
# convnext_tiny and vit_b_16 (docs/bench.md) run with COST_MODELS
MODELS = os.environ.get("COST_MODELS", "resnet50,mobilenet_v3_small,efficientnet_b0,swin_t").split(",")
FAMILIES = {"conv", "matmul", "einsum", "attention"}
COUNTED = {"aten::conv2d", "aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm"}
TOLERANCE = 0.005


# Grad stays enabled (weights requiring grad) in both the export and the profile:
# otherwise nn.MultiheadAttention takes its fused fast path (aten::_native_multi_head_attention),
# which torch 1.13 can neither export nor count.
def torch_macs(model, x):
    with torch.profiler.profile(with_flops=True) as prof:
        model(x)
    flops = 0
    for e in prof.key_averages():
        if e.key in COUNTED and e.flops:
            flops += e.flops
    return flops / 2


def onnxviz_macs(path):
    out = subprocess.run([ONNXVIZ, "inspect", "--json", path], check=True,
                         capture_output=True).stdout
    cost = json.loads(out)["cost"]
    total = 0
    for n in cost["nodes"]:
        if n.get("family") not in FAMILIES:
            continue
        macs = n.get("macs")
        if not isinstance(macs, int):
            raise ValueError(f"{n['id']} ({n['op']}): MACs are not a number: {macs}")
        total += macs
    return total, cost


def cache_dir(tmp):
    if os.environ.get("COST_NO_CACHE") == "1":
        return tmp
    base = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
    d = os.path.join(base, "onnxviz-test", "cost-%s-%s" % (torch.__version__, torchvision.__version__))
    os.makedirs(d, exist_ok=True)
    return d


def oracle(name, d):
    """The exported model's path and torch's MACs for it, from the cache when kept."""
    path = os.path.join(d, name + ".onnx")
    fig = os.path.join(d, name + ".macs")
    if os.path.exists(path) and os.path.exists(fig):
        return path, float(open(fig).read())
    model = getattr(torchvision.models, name)(weights=None).eval()
    x = torch.randn(1, 3, 224, 224)
    torch.onnx.export(model, x, path + ".tmp", opset_version=17,
                      input_names=["x"], output_names=["y"])
    want = torch_macs(model, x)
    os.replace(path + ".tmp", path)
    with open(fig + ".tmp", "w") as f:
        f.write(repr(want))
    os.replace(fig + ".tmp", fig)
    return path, want


def main():
    failed = []
    with tempfile.TemporaryDirectory() as tmp:
        d = cache_dir(tmp)
        for name in MODELS:
            t0 = time.time()
            try:
                path, want = oracle(name, d)
                got, cost = onnxviz_macs(path)
            except Exception as e:  # report and go on with the next model
                print(f"{name}: FAILED: {e}")
                failed.append(name)
                continue
            rel = abs(got - want) / want if want else float("inf")
            ok = rel <= TOLERANCE
            total = cost["total"]["macs"]
            print(f"{name}: onnxviz {got / 1e9:.4f} G MACs (conv/matmul/attention; all ops "
                  f"{total / 1e9 if isinstance(total, int) else float('nan'):.4f} G), "
                  f"torch profiler {want / 1e9:.4f} G, off {rel * 100:.3f}% "
                  f"[{'ok' if ok else 'FAIL'}] ({time.time() - t0:.1f} s)")
            if not ok:
                failed.append(name)
    if failed:
        print("cost.py: FAILED: " + ", ".join(failed))
        return 1
    print(f"cost.py: {len(MODELS)} models within {TOLERANCE * 100:.1f}% of torch's profiler")
    return 0


if __name__ == "__main__":
    sys.exit(main())
