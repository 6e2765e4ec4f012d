#!/bin/sh
# run-all.sh — every test suite (called by `make test`), in two lanes side by side.
# Each suite is a script tests/<suite>/run.sh (unit: tests/run-unit.sh) that exits non-zero
# on failure and ends with its counts, "NAME: N passed, N failed, N skipped"
# (tests/suite.sh).  A suite that is expected but missing, that ends without that line, or
# a tests/<suite>/run.sh that this list does not run, fails the run.  The last line is the
# sum: "TOTAL: N passed, N failed, N skipped", then the time budget: "TIME: N s wall (suites'
# CPU N s); slowest: SUITE N s, ..." (each suite's own line also shows its wall and CPU
# seconds; docs/bench.md has the figures); exits 1 when any suite failed.
#
# The lanes (decision 68): the machine has 2 cores and no suite keeps both busy.
#   servers  (this shell, nice 0): the suites that start a server and time it — http,
#            preview, s3, hostile, docker, e2e — then the sanitize suite's hostile and s3
#            (their bounds are the tightest), one after the other;
#   compute  (a background run of this script, nice 10): unit, diff, fuzz, cli, clang,
#            render, modeldiff, none of which measures latency, then the sanitize suite's
#            unit, diff, fuzz, cli, http, preview, render and modeldiff (the sanitized http
#            and preview time only against bounds three times the plain ones).
# Being niced, the compute lane takes what the servers leave, so a latency a server suite
# measures is not the compute lane's.  Its output is kept and printed, whole, after the
# server lane (its suites' lines as they would be alone); the summary counts both.
# deps runs first, alone.
# Environment: BUILD (build folder, default build), ONNXVIZ_SKIP_BROWSER=1 skips the
# browser suite (printed, and counted as one skipped), RUN_ALL_SERIAL=1 runs the compute
# lane after the server lane instead of beside it.  The first suite, deps, checks that
# DEPS_TEST has every suite's prerequisites (tests/prereqs.tsv); sanitize runs the others
# again under AddressSanitizer + UndefinedBehaviorSanitizer + LeakSanitizer.
set -u
cd "$(dirname "$0")/.."
. tests/suite.sh
: "${BUILD:=build}"
export BUILD
: "${ONNXVIZ_CORPUS:=$(cd .. && pwd)/shared/corpus}"
export ONNXVIZ_CORPUS
SUITES="deps unit diff fuzz cli clang http preview s3 hostile render modeldiff docker e2e sanitize"
LANE_SERVERS="http preview s3 hostile docker e2e sanitize:servers"
LANE_COMPUTE="unit diff fuzz cli clang render modeldiff sanitize:compute"
# the sanitize suite's two parts (tests/sanitize/run.sh: SANITIZE_SUITES)
SAN_SERVERS="hostile s3"
SAN_COMPUTE="unit diff fuzz cli http preview render modeldiff"
failed=""
log=$(mktemp)
times=$(mktemp)
all_wall=$(date +%s) all_cpu=$(clock_cpu)

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

bg_wait() { # DONEFILE PIDFILE: until a background session (not a child: started with
  # setsid, it writes its pid to PIDFILE, then DONEFILE) ends, or is gone; 30 s for the pid
  i=0
  while [ ! -e "$1" ] && { [ ! -s "$2" ] && [ $i -lt 30 ] ||
                           kill -0 "$(cat "$2" 2>/dev/null)" 2>/dev/null; }; do
    sleep 1; i=$((i + 1))
  done
}
pre_wait() { bg_wait "$pre/done" "$pre/pid"; } # the background builds

run_suite() { # suite (of SUITES, or sanitize:PART)
  case $1 in
    clang)
      t=$(date +%s)
      pre_wait
      echo; echo "################ (the clang and sanitizer builds, in the background since the start:" \
        "$(( $(date +%s) - $(cat "$pre/t0") )) s, waited $(( $(date +%s) - t )) s)"
      run clang sh tests/clang/run.sh ;;
    unit)
      run unit sh tests/run-unit.sh $(ls tests/unit/test_*.c | sed "s#tests/unit/\(.*\)\.c#$BUILD/tests/\1#") ;;
    e2e)
      if [ "${ONNXVIZ_SKIP_BROWSER:-0}" = 1 ]; then
        echo; echo "################ e2e: SKIP e2e: ONNXVIZ_SKIP_BROWSER=1"; T_SKIP=$((T_SKIP + 1))
      else
        run e2e sh tests/e2e/run.sh
      fi ;;
    sanitize:*)
      part=${1#sanitize:}
      pre_wait
      if [ "$part" = servers ]; then list=$SAN_SERVERS; else list=$SAN_COMPUTE; fi
      # the two parts may start at once: one make at a time in build-san/ (flock)
      run "sanitize:$part" env SANITIZE_SUITES="$list" SANITIZE_MAKE_LOCK="$pre/make.lock" \
        sh tests/sanitize/run.sh ;;
    *)
      # a missing run.sh fails: sh prints why, and there is no summary line
      run "$1" sh "tests/$1/run.sh" ;;
  esac
}

# --- the compute lane: this script again, in the background (see the top) -------------
if [ -n "${RUN_ALL_LANE:-}" ]; then
  pre=$RUN_ALL_LANE
  trap 'rm -f "$log" "$times"' EXIT
  for s in $LANE_COMPUTE; do run_suite "$s"; done
  tally_print compute-lane
  echo "$failed" >"$pre/lane.failed"
  cp "$times" "$pre/lane.times"
  clock_cpu >"$pre/lane.cpu"
  [ -z "$failed" ]
  exit
fi

# a suite folder the lists do not know would never run
for f in tests/*/run.sh; do
  s=$(basename "$(dirname "$f")")
  case " $SUITES bench " in
    *" $s "*) ;;
    *) echo "run-all: tests/$s/run.sh is no suite of tests/run-all.sh (add it to SUITES)"
       failed="$failed $s"; T_FAIL=$((T_FAIL + 1)) ;;
  esac
done
for s in $SUITES; do
  case " deps $LANE_SERVERS $LANE_COMPUTE " in
    *" $s "*|*" $s:"*) ;;
    *) echo "run-all: suite $s is in no lane"; failed="$failed $s"; T_FAIL=$((T_FAIL + 1)) ;;
  esac
done

# the build before the suites (make test passes its seconds), counted in the budget
build_s=${ONNXVIZ_BUILD_SECONDS:-0}
[ "$build_s" = 0 ] || echo "build $build_s" >>"$times"

# The clang and sanitize suites' builds (make clang-check, make sanitize-build) start now,
# niced, in the background, in a session of their own (stopped with the run); the suites
# that need them wait for them (pre_wait).  Not a child of this shell (its CPU would land
# in whichever suite's figure was running when it ended): it writes its pid, then "done".
pre=$(mktemp -d)
date +%s >"$pre/t0"
( setsid sh -c 'echo $$ >"$0/pid"
    nice -n 10 make -s JOBS="$1" clang-check
    flock "$0/make.lock" nice -n 10 make -s -j"$1" sanitize-build
    echo $? >"$0/done"' "$pre" "$(nproc 2>/dev/null || echo 2)" >/dev/null 2>&1 </dev/null & )
# tests/render/hostile.py: not build-san/onnxviz as well, the sanitize suite runs it so
export ONNXVIZ_SANITIZE_LATER=1
lane_stop() {
  for f in "$pre/pid" "$pre/lane.pid"; do
    [ -s "$f" ] && kill -- -"$(cat "$f")" 2>/dev/null
  done
  rm -rf "$pre"
}
trap 'lane_stop; rm -f "$log" "$times"' EXIT
trap 'exit 130' INT TERM

lane_start() { # as the builds above: not a child of this shell; it writes its pid, then lane.rc
  echo; echo "################ compute lane: $LANE_COMPUTE (beside the servers, nice 10; its output follows theirs)"
  ( setsid sh -c 'echo $$ >"$0/lane.pid"
      RUN_ALL_LANE="$0" nice -n 10 sh tests/run-all.sh; echo $? >"$0/lane.rc"' \
      "$pre" >"$pre/lane.log" 2>&1 </dev/null & )
}

run_suite deps
[ "${RUN_ALL_SERIAL:-0}" = 1 ] || lane_start
for s in $LANE_SERVERS; do run_suite "$s"; done
if [ "${RUN_ALL_SERIAL:-0}" = 1 ]; then
  lane_start
fi
t=$(date +%s)
bg_wait "$pre/lane.rc" "$pre/lane.pid"
echo; echo "################ compute lane (waited $(( $(date +%s) - t )) s for it after the servers):"
cat "$pre/lane.log"
if [ -s "$pre/lane.times" ] && tally_line "$pre/lane.log"; then
  failed="$failed $(cat "$pre/lane.failed")"
  cat "$pre/lane.times" >>"$times"
  lane_cpu=$(cat "$pre/lane.cpu")
  [ "$(cat "$pre/lane.rc" 2>/dev/null)" = 0 ] || [ -n "$(cat "$pre/lane.failed")" ] ||
    { failed="$failed compute-lane"; T_FAIL=$((T_FAIL + 1)); }
else
  echo "(the compute lane ended without its summary: counted as 1 failed)"
  failed="$failed compute-lane"; T_FAIL=$((T_FAIL + 1)); lane_cpu=0
fi
failed=$(echo $failed)

echo
[ -z "$failed" ] && echo "all suites passed" || echo "FAILED: $failed"
tally_print TOTAL
echo "TIME: $(( $(date +%s) - all_wall + build_s )) s wall (suites' CPU $(( $(clock_cpu) - all_cpu + lane_cpu )) s," \
  "the compute lane's $lane_cpu s of it); slowest:" \
  "$(sort -k2,2nr "$times" | head -n 5 | sed 's/$/ s/' | paste -sd, - | sed 's/,/, /g')"
[ -z "$failed" ]
