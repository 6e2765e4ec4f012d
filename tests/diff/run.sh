#!/bin/sh
# run.sh — the differential suite: our output against python3-onnx, one script per line
# below.  Needs the tools ($BUILD/tools, `make tools`) and Debian's /usr/bin/python3 (onnx,
# numpy).  Each script prints what it compared; exits non-zero when any script fails.
set -u
cd "$(dirname "$0")/../.."
: "${BUILD:=build}"
export BUILD
failed=""
run() { # script and its interpreter
  echo "== $*"
  "$@" || failed="$failed $2"
}

run /usr/bin/python3 tests/diff/tensors.py
run /usr/bin/python3 tests/diff/document.py

if [ -n "$failed" ]; then
  echo "diff: FAILED:$failed"
  exit 1
fi
echo "diff: all scripts passed"
