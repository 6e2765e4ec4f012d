#!/usr/bin/python3
"""targets.py — issue 24's box targets for full detail, counted on the real exports.

The torch exports of the rendering benchmark (tests/bench/render_models.py prepares them in
~/.cache/onnxviz-bench, or $XDG_CACHE_HOME/onnxviz-bench; a cold cache costs a few minutes
of export) are drawn in full detail (`render --group=none`, named patterns folded, the
default) and must stay within their targets, with no text outside its box (DejaVu Sans,
textfit.py); the same drawing with patterns=nodes shows how many boxes the named patterns
saved.  docs/bench.md keeps the figures.

Exit status 1 when a target is missed, a text overflows, or a render fails.
"""
import os
import re
import subprocess
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import textfit  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.path.join(ROOT, os.environ.get("BUILD", "build"), "onnxviz")
# model -> most boxes in full detail (issue 24: swin_t 863 -> 550, vit_b_16 642 -> 420,
# the 48-layer transformer encoder 2,210 -> 1,500)
TARGETS = {"swin_t": 550, "vit_b_16": 420, "encoder48": 1500}


def boxes(model, out, *opts):
    r = subprocess.run([BIN, "render", "--group=none", model, "-o", out] + list(opts),
                       capture_output=True, timeout=300)
    if r.returncode != 0:
        raise RuntimeError("render %s %s: %s" % (model, opts, r.stderr.decode()[:300]))
    with open(out, "rb") as f:
        data = f.read()
    return int(re.search(rb'data-boxes="(\d+)"', data).group(1)), data


def main():
    cache = os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"),
                         "onnxviz-bench")
    os.makedirs(cache, exist_ok=True)
    p = subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "tests", "bench", "render_models.py"),
                        cache] + list(TARGETS), capture_output=True)
    if p.returncode != 0:
        print("targets: preparing the exports failed:\n" + p.stderr.decode(errors="replace")[-1500:])
        return 1
    paths = dict(line.split("\t") for line in p.stdout.decode().splitlines() if "\t" in line)
    width = textfit.measurer("dejavu")
    bad = 0
    tmp = os.path.join(os.environ.get("TMPDIR", "/tmp"), "onnxviz-targets-%d.svg" % os.getpid())
    try:
        for name, most in TARGETS.items():
            n, data = boxes(paths[name], tmp)
            plain, _ = boxes(paths[name], tmp, "--patterns=nodes")
            over = textfit.svg_overflows(data, width) if width else ["no DejaVu Sans"]
            ok = n <= most and not over
            bad += not ok
            print("%s %s full detail: %d boxes (target <= %d; %d with patterns=nodes), %d texts "
                  "outside their boxes%s" % ("ok  " if ok else "FAIL", name, n, most, plain,
                                             len(over), (": %s" % over[:3]) if over else ""))
    except (RuntimeError, AttributeError) as e:
        print("FAIL %s" % e)
        return 1
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
