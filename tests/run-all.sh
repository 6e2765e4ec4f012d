#!/bin/sh
# run-all.sh — every test suite, in dependency order (called by `make test`).
# Each suite is a script tests/<suite>/run.sh (unit: tests/run-unit.sh) that exits non-zero
# on failure and ends with its counts, "NAME: N passed, N failed, N skipped"
# (tests/suite.sh).  A suite that is expected but missing, that ends without that line, or
# a tests/<suite>/run.sh that this list does not run, fails the run.  The last line is the
# sum: "TOTAL: N passed, N failed, N skipped"; exits 1 when any suite failed.
# Environment: BUILD (build folder, default build), ONNXVIZ_SKIP_BROWSER=1 skips the
# browser suite (printed, and counted as one skipped).  The first suite, deps, checks that
# DEPS_TEST has every suite's prerequisites (tests/prereqs.tsv); the last, sanitize, runs
# the others again under AddressSanitizer + UndefinedBehaviorSanitizer + LeakSanitizer.
set -u
cd "$(dirname "$0")/.."
. tests/suite.sh
: "${BUILD:=build}"
export BUILD
: "${ONNXVIZ_CORPUS:=$(cd .. && pwd)/shared/corpus}"
export ONNXVIZ_CORPUS
SUITES="deps unit diff fuzz cli clang http preview s3 hostile render modeldiff docker e2e sanitize"
failed=""
log=$(mktemp)
trap 'rm -f "$log"' EXIT
run() { # name command...
  name=$1; shift
  echo
  echo "################ $name"
  start=$(date +%s)
  if tally_suite "$log" "$@"; then
    echo "################ $name: ok ($(( $(date +%s) - start )) s)"
  else
    failed="$failed $name"; echo "################ $name: FAILED ($(( $(date +%s) - start )) s)"
  fi
}

# a suite folder this list does not know would never run
for f in tests/*/run.sh; do
  s=$(basename "$(dirname "$f")")
  case " $SUITES bench " in
    *" $s "*) ;;
    *) echo "run-all: tests/$s/run.sh is no suite of tests/run-all.sh (add it to SUITES)"
       failed="$failed $s"; T_FAIL=$((T_FAIL + 1)) ;;
  esac
done
for s in $SUITES; do
  case $s in
    unit)
      run unit sh tests/run-unit.sh $(ls tests/unit/test_*.c | sed "s#tests/unit/\(.*\)\.c#$BUILD/tests/\1#") ;;
    e2e)
      if [ "${ONNXVIZ_SKIP_BROWSER:-0}" = 1 ]; then
        echo; echo "################ e2e: SKIP e2e: ONNXVIZ_SKIP_BROWSER=1"; T_SKIP=$((T_SKIP + 1))
      else
        run e2e sh tests/e2e/run.sh
      fi ;;
    *)
      # a missing run.sh fails: sh prints why, and there is no summary line
      run "$s" sh "tests/$s/run.sh" ;;
  esac
done

echo
[ -z "$failed" ] && echo "all suites passed" || echo "FAILED:$failed"
tally_print TOTAL
[ -z "$failed" ]
