#!/bin/sh
# run.sh — the bench suite (make bench): benchmark scripts, one per line below.  Each
# prints what it measured and the ratio to its target, and exits non-zero when the target
# is missed.
set -u
cd "$(dirname "$0")/../.."
: "${BUILD:=build}"
export BUILD
failed=""
run() { # script and its interpreter
  echo "== $*"
  "$@" || failed="$failed $2"
}

run sh tests/bench/tensor.sh
run sh tests/bench/shapes.sh

if [ -n "$failed" ]; then
  echo "bench: FAILED:$failed"
  exit 1
fi
echo "bench: all scripts passed"
