#!/bin/sh
# sanitize suite: the whole test suite once more, built with AddressSanitizer +
# UndefinedBehaviorSanitizer (LeakSanitizer included) into build-san/.  Any report fails.
# Not rerun, each a counted skip: the browser (e2e), docker (the image ships the plain
# build); s3 runs in part.  The last line sums the suites' own:
# "sanitize: N passed, N failed, N skipped".
# Environment: SANITIZE_SUITES, the suites to rerun (default all: unit diff fuzz cli http
# preview hostile render modeldiff s3; tests/run-all.sh runs the server ones in one lane
# and the rest in the other), SANITIZE_MAKE_LOCK, a file to flock around the build (two
# parts may start at once).
set -u
cd "$(dirname "$0")/../.."
. tests/suite.sh
suite_start sanitize
SAN=build-san
# one parallel make for everything the suites below run (JOBS: the Makefile's, the cores);
# under run-all.sh it was made in the background already (nothing or little left to do)
clock_start
: "${SANITIZE_SUITES:=unit diff fuzz cli http preview hostile render modeldiff s3}"
if [ -n "${SANITIZE_MAKE_LOCK:-}" ]; then
  flock "$SANITIZE_MAKE_LOCK" make -s -j"${JOBS:-$(nproc)}" sanitize-build >/dev/null || exit 1
else
  make -s -j"${JOBS:-$(nproc)}" sanitize-build >/dev/null || exit 1
fi
echo "== sanitized build: $(clock_took)"
supp=$(pwd)/tests/sanitize/lsan.supp
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:halt_on_error=1:exitcode=86:strict_string_checks=1:detect_stack_use_after_return=1"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:exitcode=87"
export LSAN_OPTIONS="suppressions=$supp:print_suppressions=0"
export ONNXVIZ_SANITIZED=1
export BUILD=$SAN
failed=""
log=$(mktemp)
trap 'rm -f "$log"' EXIT
run() { # name command...
  echo "== sanitized: $1"
  n=$1; shift
  clock_start
  tally_suite "$log" "$@" || failed="$failed $n"
  echo "== sanitized: $n ($(clock_took))"
}
for s in $SANITIZE_SUITES; do
  case $s in
    unit) run unit sh tests/run-unit.sh $(ls tests/unit/test_*.c | sed "s#tests/unit/\(.*\)\.c#$SAN/tests/\1#") ;;
    # the S3 store's own paths (replicas, retries, the object store away); the http suite
    # on S3 and the kill/throughput parts add time, not code, under the sanitizers
    s3) run s3 env S3_ONLY=rgw,replicas,outage sh tests/s3/run.sh ;;
    # the diff suite's sweeps (a few thousand short runs of inspect, render, check and
    # shapedump over the corpus) look for memory errors and undefined behaviour; LeakSanitizer's
    # exit scan was half of each run's time here, and those paths' leaks are the cli and
    # render suites' (decision 72)
    diff) run diff env ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0" sh tests/diff/run.sh ;;
    # an expected suite that is missing fails (tally_suite: no summary line)
    *) run "$s" sh "tests/$s/run.sh" ;;
  esac
done
case " $SANITIZE_SUITES " in *" http "*)
  echo "SKIP e2e under the sanitizers: the browser drives the page; its server paths are the http suite's"
  echo "SKIP docker under the sanitizers: the image ships the plain build"
  T_SKIP=$((T_SKIP + 2)) ;;
esac
[ -z "$failed" ] || echo "sanitize: FAILED:$failed"
tally_print sanitize
[ -z "$failed" ]
