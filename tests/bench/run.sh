#!/bin/sh
# bench suite (make bench): benchmark scripts, one per line in the list below (keep it one
# per line: several branches add to it).  Each prints what it measured and exits non-zero
# when its target is missed.
set -u
cd "$(dirname "$0")/../.."
: "${BUILD:=build}"
export BUILD
: "${ONNXVIZ_CORPUS:=$(cd .. && pwd)/shared/corpus}"
export ONNXVIZ_CORPUS
SCRIPTS="
tests/bench/shapes.sh
"
failed=""
n=0
for s in $SCRIPTS; do
  n=$((n + 1))
  echo "== $s"
  sh "$s" || failed="$failed $s"
done
if [ -n "$failed" ]; then
  echo "bench: FAILED:$failed"
  exit 1
fi
echo "bench: all $n scripts passed"
