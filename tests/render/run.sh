#!/bin/sh
# render suite: the text widths boxes are sized with against the font files, SVG / DOT /
# layout JSON of every corpus model (no text sticking out, in DejaVu Sans), repeated blocks
# and ranges in the overview, hostile model strings, and the layout worker process.
# Needs $BUILD/onnxviz and the test tools (`make tools`);
# runs the hostile models through build-san/onnxviz too when that exists.
# Environment: BUILD (default build), ONNXVIZ_CORPUS.
set -u
cd "$(dirname "$0")/../.."
: "${BUILD:=build}"
export BUILD
PY=/usr/bin/python3 # Debian's: has onnx and jsonschema
failed=""
step() { # script under tests/render/
  echo "== tests/render/$1"
  start=$(date +%s)
  "$PY" "tests/render/$1" || failed="$failed $1"
  echo "   ($(( $(date +%s) - start )) s)"
}

step widths.py
step corpus.py
step repeats.py
step hostile.py
step worker.py

if [ -n "$failed" ]; then
  echo "render: FAILED:$failed"
  exit 1
fi
echo "render: all passed"
