#!/bin/sh
# modeldiff suite: `onnxviz diff` and the diff routes (tests/modeldiff/check.py) on model
# pairs built by tests/modeldiff/make_pairs.py (torch 1.13 exports, onnx 1.12 edits):
# a weight element, an added / removed node, an attribute, renames, a re-ordered file, no
# names, a QDQ-quantized copy, two opsets.  The pairs are cached under $XDG_CACHE_HOME
# (keyed by the script's hash) since the exports take a few seconds.
set -u
cd "$(dirname "$0")/../.."
. tests/suite.sh
suite_start modeldiff
: "${BUILD:=build}"
export BUILD
PY=/usr/bin/python3
[ -x "$BUILD/onnxviz" ] || { echo "modeldiff: $BUILD/onnxviz is missing (make first)"; exit 1; }
key=$(sha256sum tests/modeldiff/make_pairs.py | cut -c1-16)
dir=${XDG_CACHE_HOME:-$HOME/.cache}/onnxviz-modeldiff/$key
if [ ! -f "$dir/pairs.json" ]; then
  mkdir -p "$dir"
  $PY tests/modeldiff/make_pairs.py "$dir" >"$dir.log" 2>&1 || { cat "$dir.log"; rm -rf "$dir"; exit 1; }
fi
exec $PY tests/modeldiff/check.py "$dir"
