#!/bin/sh
# fuzz.sh SECONDS NAME... — runs each libFuzzer target build-fuzz/fuzz_NAME for SECONDS
# (called by `make fuzz`, which builds them).  Inputs: the committed corpus
# tests/fuzz/corpus/NAME/ and the saved crashers tests/fuzz/regressions/NAME/ (read only);
# new inputs go to the work folder build-fuzz/work/NAME/ (outside git), crashers to
# build-fuzz/crashes/NAME/.  A dictionary tests/fuzz/NAME.dict is used when present;
# tests/fuzz/NAME.seeds lists more seed folders (one a line, e.g. another target's corpus)
# and tests/fuzz/NAME.options more libFuzzer flags (e.g. -max_len, a shorter -timeout).
# Leaks inside Graphviz are suppressed as in the sanitizer suite (tests/sanitize/lsan.supp).
# Prints, per target, the executions, runs/s, coverage (cov = edges, ft = features) and the
# outcome; exits non-zero when a target found a crash.
set -u
cd "$(dirname "$0")/../.."
secs=$1; shift
status=0
for name in "$@"; do
  bin=build-fuzz/fuzz_$name
  work=build-fuzz/work/$name
  crashes=build-fuzz/crashes/$name
  log=build-fuzz/fuzz_$name.log
  mkdir -p "$work" "$crashes" "tests/fuzz/corpus/$name" "tests/fuzz/regressions/$name"
  dict=
  [ -f "tests/fuzz/$name.dict" ] && dict="-dict=tests/fuzz/$name.dict"
  seeds=$(sh tests/fuzz/seeds.sh "$name")
  opts=
  [ -f "tests/fuzz/$name.options" ] && opts=$(grep -v '^#' "tests/fuzz/$name.options")
  echo "fuzz: $name for $secs s (log: $log)"
  t0=$(date +%s)
  # -timeout / -rss_limit_mb: OSS-Fuzz's per-input limits (25 s, 2560 MB); options given
  # later win, so NAME.options may lower them
  # shellcheck disable=SC2086
  LSAN_OPTIONS="suppressions=$(pwd)/tests/sanitize/lsan.supp:print_suppressions=0" \
  "$bin" "$work" $seeds $dict \
      -max_total_time="$secs" -timeout=25 -rss_limit_mb=2560 -print_final_stats=1 \
      -artifact_prefix="$crashes/" $opts >"$log" 2>&1
  rc=$?
  took=$(( $(date +%s) - t0 ))
  last=$(grep -E '^#[0-9]+' "$log" | tail -n 1)
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
  cov=$(echo "$last" | sed -n 's/.*cov: \([0-9]*\).*/\1/p')
  ft=$(echo "$last" | sed -n 's/.*ft: \([0-9]*\).*/\1/p')
  corp=$(echo "$last" | sed -n 's/.*corp: \([0-9]*\/[0-9A-Za-z]*\).*/\1/p')
  if [ $rc -eq 0 ]; then outcome="no crash"; else outcome="CRASH (exit $rc): see $log and $crashes/"; status=1; fi
  echo "fuzz: $name: ${execs:-?} runs in $took s, ${rate:-?} runs/s, cov ${cov:-?}, ft ${ft:-?}, corpus ${corp:-?}: $outcome"
done
exit $status
