#!/bin/sh
# run-all.sh — every test suite, in dependency order (called by `make test`).
# Each suite is a script tests/<suite>/run.sh (unit: tests/run-unit.sh) that exits non-zero
# on failure and ends with its counts, "NAME: N passed, N failed, N skipped"
# (tests/suite.sh).  A suite that is expected but missing, that ends without that line, or
# a tests/<suite>/run.sh that this list does not run, fails the run.  The last line is the
# sum: "TOTAL: N passed, N failed, N skipped", then the time budget: "TIME: N s wall (suites'
# CPU N s); slowest: SUITE N s, ..." (each suite's own line also shows its wall and CPU
# seconds; docs/bench.md has the figures); exits 1 when any suite failed.
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
times=$(mktemp)
all_wall=$(date +%s) all_cpu=$(clock_cpu)
# the build before the suites (make test passes its seconds), counted in the budget
build_s=${ONNXVIZ_BUILD_SECONDS:-0}
[ "$build_s" = 0 ] || echo "build $build_s" >>"$times"

# The clang and sanitize suites' builds (make clang-check, make sanitize-build) start now,
# niced, in the background, in a session of their own (stopped with the run): the suites
# before clang (deps, unit, diff, fuzz, cli) mostly keep one core busy and measure no
# latency, so the builds take the rest.  Before the clang suite the run waits for them:
# no suite that times the server shares the machine with a build.  The two suites still
# run their make, which then has nothing left to do, or makes again what failed here and
# reports it (this output is dropped).  Not a child of this shell (its CPU would land in
# whichever suite's figure was running when it ended): it writes its pid, then "done".
pre=$(mktemp -d)
( setsid sh -c 'echo $$ >"$0/pid"
    nice -n 10 make -s JOBS="$1" clang-check; nice -n 10 make -s -j"$1" sanitize-build
    echo $? >"$0/done"' "$pre" "$(nproc 2>/dev/null || echo 2)" >/dev/null 2>&1 </dev/null & )
pre_t0=$(date +%s)
# tests/render/hostile.py: not build-san/onnxviz as well, the sanitize suite runs it so
export ONNXVIZ_SANITIZE_LATER=1
pre_stop() {
  [ -s "$pre/pid" ] && [ ! -e "$pre/done" ] && kill -- -"$(cat "$pre/pid")" 2>/dev/null
  rm -rf "$pre"
}
pre_wait() { # until the builds end (or their session is gone)
  i=0
  while [ ! -e "$pre/done" ] && { [ ! -s "$pre/pid" ] && [ $i -lt 30 ] ||
                                  kill -0 "$(cat "$pre/pid" 2>/dev/null)" 2>/dev/null; }; do
    sleep 1; i=$((i + 1))
  done
}
trap 'pre_stop; rm -f "$log" "$times"' EXIT
trap 'exit 130' INT TERM
run() { # name command...
  name=$1; shift
  echo
  echo "################ $name"
  clock_start
  if tally_suite "$log" "$@"; then
    result=ok
  else
    failed="$failed $name"; result=FAILED
  fi
  took=$(clock_took)
  echo "################ $name: $result ($took)"
  echo "$name ${took%% s,*}" >>"$times"
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
  if [ "$s" = clang ]; then
    t=$(date +%s)
    pre_wait
    t=$(( $(date +%s) - t ))
    echo; echo "################ (the clang and sanitizer builds, in the background since the start:" \
      "$(( $(date +%s) - pre_t0 )) s, waited $t s)"
    echo "(builds-wait) $t" >>"$times"
  fi
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
echo "TIME: $(( $(date +%s) - all_wall + build_s )) s wall (suites' CPU $(( $(clock_cpu) - all_cpu )) s); slowest:" \
  "$(sort -k2,2nr "$times" | head -n 5 | sed 's/$/ s/' | paste -sd, - | sed 's/,/, /g')"
[ -z "$failed" ]
