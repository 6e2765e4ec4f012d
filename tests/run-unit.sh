#!/bin/sh
# run-unit.sh BIN... — runs each cmocka test program and counts its tests from cmocka's
# summary ([  PASSED  ] / [  FAILED  ] / [  SKIPPED ] N test(s)); a program that is
# missing, or exits non-zero without a failed test counted, counts as one failed.  The
# last line is "unit: N passed, N failed, N skipped"; exits non-zero when any failed, and
# when no program was given (nothing tested is no pass).  Tests find the corpus via
# ONNXVIZ_CORPUS.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/suite.sh"
: "${ONNXVIZ_CORPUS:=$(cd "$here/../.." && pwd)/shared/corpus}"
export ONNXVIZ_CORPUS
suite_start unit
log=$(mktemp)
trap 'rm -f "$log"' EXIT
failed=""
count() { # cmocka's word -> its count in $log (0 without that line)
  sed -n "s/^\[  $1 *\] \([0-9]*\) test(s).*/\1/p" "$log" | tail -n 1 | grep . || echo 0
}
for t in "$@"; do
  echo "== $t"
  if [ ! -x "$t" ]; then
    echo "unit: $t missing (make unit builds it)"; failed="$failed $(basename "$t")"
    T_FAIL=$((T_FAIL + 1)); continue
  fi
  "$t" >"$log" 2>&1; rc=$?
  cat "$log"
  p=$(count PASSED) f=$(count FAILED) s=$(count SKIPPED)
  if [ "$rc" != 0 ] && [ "$f" = 0 ]; then f=1; fi
  [ "$f" = 0 ] || failed="$failed $(basename "$t")"
  T_PASS=$((T_PASS + p)) T_FAIL=$((T_FAIL + f)) T_SKIP=$((T_SKIP + s))
done
[ $# -gt 0 ] || { echo "unit: no test program given (make unit builds them)"; T_FAIL=$((T_FAIL + 1)); }
[ -z "$failed" ] || echo "unit: FAILED:$failed"
echo "unit: $# programs"
tally_print unit
[ "$T_FAIL" = 0 ]
