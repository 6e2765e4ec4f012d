#!/bin/sh
# diff suite: onnxviz's output against an independent oracle (python3-onnx).
# A list of scripts, one `check` line each; every script prints what it measured and exits
# non-zero on a disagreement.  Environment: BUILD (default build), ONNXVIZ_CORPUS.
set -u
cd "$(dirname "$0")/../.."
: "${BUILD:=build}"
export BUILD
PY=/usr/bin/python3 # Debian's: has onnx, numpy, jsonschema (the pyenv python3 does not)
failed=""
check() { # script under tests/diff/
  echo "== tests/diff/$1"
  case "$1" in
  *.py) "$PY" "tests/diff/$1" ;;
  *) sh "tests/diff/$1" ;;
  esac || failed="$failed $1"
}

check document.py

if [ -n "$failed" ]; then
  echo "diff: FAILED:$failed"
  exit 1
fi
echo "diff: all passed"
