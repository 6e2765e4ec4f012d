#!/bin/sh
# fuzz.sh SECONDS NAME... — runs each libFuzzer target build-fuzz/fuzz_NAME for SECONDS
# (called by `make fuzz`, which builds them).  Inputs: the committed corpus
# tests/fuzz/corpus/NAME/ and the saved crashers tests/fuzz/regressions/NAME/ (read only);
# new inputs go to the work folder build-fuzz/work/NAME/ (outside git), crashers to
# build-fuzz/crashes/NAME/.  A dictionary tests/fuzz/NAME.dict is used when present;
# tests/fuzz/NAME.seeds lists more seed folders (one a line, e.g. another target's corpus)
# and tests/fuzz/NAME.options more libFuzzer flags (e.g. -max_len, a shorter -timeout).
# Leaks inside Graphviz are suppressed as in the sanitizer suite (tests/sanitize/lsan.supp).
# Prints, per target, the executions, runs/s, coverage (cov = edges, ft = features), the
# peak RSS and the outcome; exits non-zero when a target found a crash.
#
# FUZZ_FORK=1 runs libFuzzer's fork mode (-fork=1 with -ignore_crashes, _timeouts, _ooms):
# the fuzzing goes on in a fresh child after a crash, which is saved like any other, so a
# known crash that is not fixed yet (or a crashing seed) does not end the run; the summary
# then counts the crashes from libFuzzer's last status line.
set -u
cd "$(dirname "$0")/../.."
secs=$1; shift
status=0
for name in "$@"; do
  # the run uses a copy: rebuilding the target meanwhile (make fuzz FUZZ_SECONDS=1 of
  # another target rebuilds the library) must not change the binary that fork mode starts
  mkdir -p build-fuzz/run
  bin=build-fuzz/run/fuzz_$name.$$
  cp build-fuzz/fuzz_$name "$bin" || exit 1
  work=build-fuzz/work/$name
  crashes=build-fuzz/crashes/$name
  log=build-fuzz/fuzz_$name.log
  mkdir -p "$work" "$crashes" "tests/fuzz/corpus/$name" "tests/fuzz/regressions/$name"
  dict=
  [ -f "tests/fuzz/$name.dict" ] && dict="-dict=tests/fuzz/$name.dict"
  seeds=$(sh tests/fuzz/seeds.sh "$name")
  opts=
  [ -f "tests/fuzz/$name.options" ] && opts=$(grep -v '^#' "tests/fuzz/$name.options")
  fork=
  [ "${FUZZ_FORK:-0}" = 1 ] && fork="-fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1"
  echo "fuzz: $name for $secs s (log: $log)${fork:+ (fork mode)}"
  t0=$(date +%s)
  ncrash0=$(find "$crashes" -type f | wc -l)
  # -timeout / -rss_limit_mb: OSS-Fuzz's per-input limits (25 s, 2560 MB); options given
  # later win, so NAME.options may lower them.  /usr/bin/time's peak RSS covers the fork
  # mode's children too (the largest one).
  # shellcheck disable=SC2086
  LSAN_OPTIONS="suppressions=$(pwd)/tests/sanitize/lsan.supp:print_suppressions=0" \
  /usr/bin/time -f 'fuzz.sh: peak_rss_kb %M' -a -o "$log.rss" \
  "$bin" "$work" $seeds $dict \
      -max_total_time="$secs" -timeout=25 -rss_limit_mb=2560 -print_final_stats=1 \
      -artifact_prefix="$crashes/" $fork $opts >"$log" 2>&1
  rc=$?
  took=$(( $(date +%s) - t0 ))
  last=$(grep -E '^#[0-9]+' "$log" | tail -n 1)
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
  rss=$(sed -n 's/^fuzz.sh: peak_rss_kb //p' "$log.rss" | tail -n 1)
  rss=${rss:+$((rss / 1024)) MB}
  cov=$(echo "$last" | sed -n 's/.*cov: \([0-9]*\).*/\1/p')
  ft=$(echo "$last" | sed -n 's/.*ft: \([0-9]*\).*/\1/p')
  corp=$(echo "$last" | sed -n 's/.*corp: \([0-9]*\(\/[0-9A-Za-z]*\)\{0,1\}\).*/\1/p')
  if [ -n "$fork" ]; then
    # fork mode prints no final stats: "#N: cov: .. ft: .. corp: .. exec/s R oom/timeout/crash: a/b/c"
    # its exec/s is the last job's: the average is the runs over the time
    execs=$(echo "$last" | sed -n 's/^#\([0-9]*\).*/\1/p')
    rate=$(( ${execs:-0} / (took > 0 ? took : 1) ))
  fi
  ncrash=$(( $(find "$crashes" -type f | wc -l) - ncrash0 ))
  if [ $rc -eq 0 ] && [ "$ncrash" -eq 0 ]; then outcome="no crash"
  else outcome="CRASH (exit $rc, $ncrash new in $crashes/): see $log"; status=1; fi
  rm -f "$bin"
  echo "fuzz: $name: ${execs:-?} runs in $took s, ${rate:-?} runs/s, cov ${cov:-?}, ft ${ft:-?}, corpus ${corp:-?}, peak RSS ${rss:-?}: $outcome"
done
exit $status
