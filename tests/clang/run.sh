#!/bin/sh
# clang suite: the whole tree (program, unit tests, tools) also builds with clang, with the
# same warnings as errors (gcc builds everything else).  Into build-clang/; under
# tests/run-all.sh it was made in the background already, and what failed there fails here.
set -u
cd "$(dirname "$0")/../.."
. tests/suite.sh
suite_start clang
if make -s clang-check >/tmp/onnxviz-clang.$$ 2>&1; then
  echo "clang: program, $(ls build-clang/tests/test_* 2>/dev/null | grep -vc '\.d$') unit programs and tools build warning-free"
  rm -f /tmp/onnxviz-clang.$$
  echo "clang: 1 passed, 0 failed, 0 skipped"
  exit 0
fi
tail -n 30 /tmp/onnxviz-clang.$$
rm -f /tmp/onnxviz-clang.$$
echo "clang: build FAILED"
echo "clang: 0 passed, 1 failed, 0 skipped"
exit 1
