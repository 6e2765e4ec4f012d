#!/bin/sh
# render suite: the text widths boxes are sized with against the font files, SVG / DOT /
# layout JSON of every corpus model (no text sticking out, in DejaVu Sans), repeated blocks
# and ranges in the overview, hostile model strings, the layout worker process, and the
# drawings of quantized models (quant.py: box counts of a QDQ and a dynamic resnet18
# against the float one, badges; PNGs in $BUILD/quant-png), LLMs with a KV cache
# (llm.py: families of cache inputs/outputs, their rows in full detail; PNGs in
# $BUILD/llm-png), and issue 24's box targets for the full detail of the torch exports
# (targets.py: swin_t, vit_b_16, encoder48), and hide=<op types> (hide.py: boxes gone,
# edges bridged, the count in the drawing, the list checked).
# Needs $BUILD/onnxviz and the test tools (`make tools`);
# runs the hostile models through build-san/onnxviz too when that exists.
# Environment: BUILD (default build), ONNXVIZ_CORPUS.
# The last line counts the scripts: "render: N passed, N failed, N skipped" (a script's
# skipped cases are its lines "SKIP what: why").
set -u
cd "$(dirname "$0")/../.."
. tests/suite.sh
suite_start render
: "${BUILD:=build}"
export BUILD
PY=/usr/bin/python3 # Debian's: has onnx and jsonschema
failed=""
log=$(mktemp)
trap 'rm -f "$log"' EXIT
step() { # script under tests/render/
  echo "== tests/render/$1"
  clock_start
  tally_run "$log" "$PY" "tests/render/$1"; rc=$?
  tally_script $rc "$log"
  [ $rc = 0 ] || failed="$failed $1"
  echo "   ($(clock_took))"
}

step widths.py
step corpus.py
step repeats.py
step hostile.py
step worker.py
step quant.py
step hide.py
step llm.py
step targets.py

[ -z "$failed" ] || echo "render: FAILED:$failed"
tally_print render
[ -z "$failed" ]
