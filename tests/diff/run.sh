#!/bin/sh
# run.sh — the `diff` suite: differential tests against python3-onnx.  One line per
# script below; each compares what onnxviz decodes with what the onnx package decodes and
# exits non-zero on any difference.  Scripts run under /usr/bin/python3 (Debian's, which
# has onnx; the python3 first on PATH may not), need $BUILD/tools/ (make tools) and
# $ONNXVIZ_CORPUS.  libprotobuf's warnings about invalid UTF-8 in string fields (which the
# constructed models contain on purpose) are dropped from stderr; all else is shown.
set -u
cd "$(dirname "$0")/../.."
: "${BUILD:=build}"
export BUILD
failed=""
err=$(mktemp)
trap 'rm -f "$err"' EXIT
run() { # script
  if ! /usr/bin/python3 "$1" 2>"$err"; then failed="$failed $1"; fi
  grep -v -e '^\[libprotobuf ERROR .*invalid UTF-8' \
       -e '^Warning: Checker does not support models with experimental ops' "$err" >&2
}

echo "== tests/diff/proto.py"
run tests/diff/proto.py
echo "== tests/diff/tensors.py"
run tests/diff/tensors.py
echo "== tests/diff/shapes.py"
run tests/diff/shapes.py
echo "== tests/diff/document.py"
run tests/diff/document.py
echo "== tests/diff/folded.py"
run tests/diff/folded.py
echo "== tests/diff/quant.py"
run tests/diff/quant.py
echo "== tests/diff/schemas.py"
run tests/diff/schemas.py
echo "== tests/diff/check.py"
run tests/diff/check.py
echo "== tests/diff/cost.py"; run tests/diff/cost.py

if [ -n "$failed" ]; then
  echo "diff: FAILED:$failed"
  exit 1
fi
echo "diff: all scripts passed"
