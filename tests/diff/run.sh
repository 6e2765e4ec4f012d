#!/bin/sh
# run.sh — the `diff` suite: differential tests against python3-onnx.  One line per
# script below; each compares what onnxviz decodes with what the onnx package decodes and
# exits non-zero on any difference.  Scripts run under /usr/bin/python3 (Debian's, which
# has onnx; the python3 first on PATH may not), need $BUILD/tools/ (make tools) and
# $ONNXVIZ_CORPUS.  libprotobuf's warnings about invalid UTF-8 in string fields (which the
# constructed models contain on purpose) are dropped from stderr; all else is shown.
# The last line counts the scripts: "diff: N passed, N failed, N skipped".
set -u
cd "$(dirname "$0")/../.."
. tests/suite.sh
suite_start diff
: "${BUILD:=build}"
export BUILD
failed=""
err=$(mktemp)
log=$(mktemp)
trap 'rm -f "$err" "$log"' EXIT
run() { # script
  clock_start
  tally_run "$log" /usr/bin/python3 "$1" 2>"$err"; rc=$?
  tally_script $rc "$log"
  [ $rc = 0 ] || failed="$failed $1"
  grep -v -e '^\[libprotobuf ERROR .*invalid UTF-8' \
       -e '^Warning: Checker does not support models with experimental ops' "$err" >&2
  echo "   ($(clock_took))"
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
echo "== tests/diff/patterns.py"; run tests/diff/patterns.py

[ -z "$failed" ] || echo "diff: FAILED:$failed"
tally_print diff
[ -z "$failed" ]
