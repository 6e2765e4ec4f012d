#!/bin/sh
# run-unit.sh BIN... — runs each cmocka test program; prints cmocka's summary lines and a
# total; exits non-zero when any program fails.  Tests find the corpus via ONNXVIZ_CORPUS.
set -u
: "${ONNXVIZ_CORPUS:=$(cd "$(dirname "$0")/../.." && pwd)/shared/corpus}"
export ONNXVIZ_CORPUS
failed=""
for t in "$@"; do
  echo "== $t"
  if ! "$t"; then failed="$failed $(basename "$t")"; fi
done
if [ -n "$failed" ]; then
  echo "unit: FAILED:$failed"
  exit 1
fi
echo "unit: all $# programs passed"
