#!/bin/sh
# diff suite: scripts comparing onnxviz with an oracle on the corpus, one per line in the
# list below (keep it one per line: several branches add to it).  Each exits non-zero on
# failure and prints what it measured.  Run from anywhere; BUILD and ONNXVIZ_CORPUS as
# set by tests/run-all.sh.
set -u
cd "$(dirname "$0")/../.."
: "${BUILD:=build}"
export BUILD
: "${ONNXVIZ_CORPUS:=$(cd .. && pwd)/shared/corpus}"
export ONNXVIZ_CORPUS
SCRIPTS="
tests/diff/shapes.py
"
failed=""
n=0
for s in $SCRIPTS; do
  n=$((n + 1))
  echo "== $s"
  case "$s" in
    *.py) /usr/bin/python3 "$s" || failed="$failed $s" ;;
    *) sh "$s" || failed="$failed $s" ;;
  esac
done
if [ -n "$failed" ]; then
  echo "diff: FAILED:$failed"
  exit 1
fi
echo "diff: all $n scripts passed"
