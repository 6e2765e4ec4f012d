#!/bin/sh
# run-all.sh — every test suite, in dependency order (called by `make test`).
# Each suite is a script tests/<suite>/run.sh that exits non-zero on failure.
# Environment: BUILD (build folder, default build), ONNXVIZ_SKIP_BROWSER=1 skips the
# browser suite (the skip is printed).  The last suite, sanitize, runs the others again
# under AddressSanitizer + UndefinedBehaviorSanitizer + LeakSanitizer.
set -u
cd "$(dirname "$0")/.."
: "${BUILD:=build}"
export BUILD
: "${ONNXVIZ_CORPUS:=$(cd .. && pwd)/shared/corpus}"
export ONNXVIZ_CORPUS
failed=""
pass=0
run() { # name command...
  name=$1; shift
  echo
  echo "################ $name"
  start=$(date +%s)
  if "$@"; then
    pass=$((pass + 1)); echo "################ $name: ok ($(( $(date +%s) - start )) s)"
  else
    failed="$failed $name"; echo "################ $name: FAILED ($(( $(date +%s) - start )) s)"
  fi
}
suite() { # name — runs tests/<name>/run.sh when it exists
  if [ -f "tests/$1/run.sh" ]; then run "$1" sh "tests/$1/run.sh"; fi
}

run unit sh tests/run-unit.sh $(ls "$BUILD"/tests/test_* 2>/dev/null | grep -v '\.d$')
suite diff
suite fuzz
suite cli
suite clang
suite http
suite preview
suite hostile
suite render
suite modeldiff
suite docker
if [ "${ONNXVIZ_SKIP_BROWSER:-0}" = 1 ]; then
  echo; echo "################ e2e: SKIPPED (ONNXVIZ_SKIP_BROWSER=1)"
else
  suite e2e
fi
suite sanitize

echo
if [ -n "$failed" ]; then
  echo "TOTAL: $pass suites passed; FAILED:$failed"
  exit 1
fi
echo "TOTAL: all $pass suites passed"
