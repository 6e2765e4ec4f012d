#!/bin/sh
# hostile suite: bad input, resource bounds, faults and load against the real server
# (tests/hostile/hostile_test.py; docs/security-tests.md maps each case to its test).
set -u
cd "$(dirname "$0")/../.."
. tests/suite.sh
suite_start hostile
: "${BUILD:=build}"
: "${ONNXVIZ_CORPUS:=$(cd .. && pwd)/shared/corpus}"
export BUILD ONNXVIZ_CORPUS
[ -x "$BUILD/onnxviz" ] || { echo "hostile: $BUILD/onnxviz is missing (make first)"; exit 1; }
# the allocation-failure shim of the out-of-memory test (plain builds only)
mkdir -p "$BUILD/hostile"
if cc -shared -fPIC -O2 -o "$BUILD/hostile/failmalloc.so" tests/hostile/failmalloc.c; then
  case $BUILD in /*) FAILMALLOC_SO=$BUILD/hostile/failmalloc.so ;; *) FAILMALLOC_SO=$(pwd)/$BUILD/hostile/failmalloc.so ;; esac
  export FAILMALLOC_SO
fi
exec /usr/bin/python3 tests/hostile/hostile_test.py "$@"
