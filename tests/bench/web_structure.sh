#!/bin/sh
# web_structure.sh — structure first (issue 23) in headless Chromium with CDP network
# emulation: time from file chosen to graph drawn for a 346 MB-class single-file model
# at 100 and 20 Mbit/s (20 ms latency), structure first and, as the anchor in the same
# run, the whole file as before; the structure walk's speed (GB/s of file), the SHA-256's,
# and the page's JS heap.  Figures, no pass/fail.  ONNXVIZ_STRUCTURE_MB sets the size
# (default 346); ONNXVIZ_BENCH_LINKS the links in Mbit/s (default "100 20");
# ONNXVIZ_BENCH_ANCHOR=0 leaves the whole-file anchor out (2.5 minutes at 20 Mbit/s);
# ONNXVIZ_BENCH_SETTLE=0 chooses the file at once instead of once the fresh browser is quiet.
# The weights are timed to the end at 50 Mbit/s and more (ONNXVIZ_BENCH_WEIGHTS=all: at
# every link, on a model of ONNXVIZ_BENCH_SMALL_MB (default 60) under 50 Mbit/s; none:
# never).  ONNXVIZ_BENCH_LLM_MB (default 2700, 0: none): an LLM-like model.onnx with that
# many MB of random bytes in model.onnx.data, made here, time to graph at each link.
# ONNXVIZ_STRUCTURE_MB=0 leaves the 346 MB model out.  vit_b_16 (issue 37): from file
# chosen to the whole model's id at 100 Mbit/s, as a share of the link, the median of
# ONNXVIZ_BENCH_VIT_RUNS (default 3) runs; ONNXVIZ_BENCH_VIT names the file (default the
# render bench's export, made by tests/bench/render_models.py ~/.cache/onnxviz-bench
# vit_b_16 with python3-torch; empty or missing: left out).
set -u
cd "$(dirname "$0")/../.."
: "${BUILD:=build}"
: "${ONNXVIZ_CHROMIUM:=/usr/bin/chromium}"
export BUILD ONNXVIZ_CHROMIUM
[ -x "$BUILD/onnxviz" ] || { echo "web_structure bench: $BUILD/onnxviz is missing (make first)"; exit 1; }
[ -x "$ONNXVIZ_CHROMIUM" ] || { echo "web_structure bench: no browser at $ONNXVIZ_CHROMIUM (make deps)"; exit 1; }
if [ ! -f tests/e2e/node_modules/playwright-core/package.json ]; then
  (cd tests/e2e && npm ci --no-audit --no-fund --loglevel=error) || exit 1
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/onnxviz-structbench.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT INT TERM
m=tests/e2e/make_structure_models.py
/usr/bin/python3 $m "$work/models" "${ONNXVIZ_STRUCTURE_MB:-346}" > "$work/big.json" || exit 1
big=null small=null llm=null vit=null
if [ "${ONNXVIZ_STRUCTURE_MB:-346}" != 0 ]; then
  big=$(sed 's/.*"big": //; s/}$//' "$work/big.json")
fi
v=${ONNXVIZ_BENCH_VIT-$HOME/.cache/onnxviz-bench/vit_b_16.onnx}
if [ -n "$v" ] && [ -f "$v" ]; then
  vit="{\"file\": \"$v\", \"size\": $(stat -c %s "$v")}"
fi
if [ "${ONNXVIZ_BENCH_WEIGHTS:-}" = all ]; then
  small=$(/usr/bin/python3 $m "$work/small" "${ONNXVIZ_BENCH_SMALL_MB:-60}" | sed 's/.*"big": //; s/}$//') || exit 1
fi
if [ "${ONNXVIZ_BENCH_LLM_MB:-2700}" != 0 ]; then
  llm=$(/usr/bin/python3 $m llm "$work/llm" "${ONNXVIZ_BENCH_LLM_MB:-2700}") || exit 1
fi
sync  # the models just written: their write-back would run during the first case
printf '{"big": %s, "small": %s, "llm": %s, "vit": %s}\n' "$big" "$small" "$llm" "$vit" > "$work/models.json"
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
ONNXVIZ_E2E_WORK="$work" node tests/bench/web_structure.mjs
