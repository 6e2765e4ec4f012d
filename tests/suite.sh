# suite.sh — sourced by the suite scripts (run-all.sh, run-unit.sh, tests/*/run.sh) for
# the one summary format of `make test`.  Every suite's last line is
#     NAME: N passed, N failed, N skipped
# (checks when the suite counts them, else its scripts or programs), and a skip is a line
# "SKIP what: why" (indented or not) that names its reason.
#   suite_start NAME             checks the suite's prerequisites (tests/prereqs.sh);
#                                when one is missing, prints the summary line of a failed
#                                suite and exits 1
#   tally_reset                  zeroes T_PASS, T_FAIL, T_SKIP
#   tally_line FILE              adds the counts of FILE's last line when it is a summary
#                                line; returns 1 (adding nothing) when it is not
#   tally_script RC FILE         adds one script that wrote FILE and exited RC: 1 passed
#                                or 1 failed, plus its SKIP lines as skipped
#   tally_print NAME             prints the summary line of the counts
#   tally_suite FILE COMMAND...  runs a suite (its output shown, kept in FILE) and adds the
#                                counts of its summary line; a suite without one, or that
#                                failed with no failure counted, adds one failed; returns
#                                the suite's exit status (1 without a summary line)
#   tally_run FILE COMMAND...    runs COMMAND (a program, not a shell function), its
#                                standard output shown and kept in FILE; returns its exit
#                                status
#   clock_start                  starts the clock of clock_took
#   clock_took                   prints "N s, CPU N s" since clock_start: wall seconds, and
#                                the user+sys seconds of the processes this shell started
#                                and waited for (with their waited-for children) in that
#                                time; CPU is what a busy shared machine changes least
# tests/ (sourced by tests/NAME/run.sh or by a script in tests/ itself)
TESTS_DIR=$(cd "$(dirname "$0")" && pwd)
[ -f "$TESTS_DIR/prereqs.sh" ] || TESTS_DIR=$(dirname "$TESTS_DIR")
SUMMARY_RE='^([A-Za-z0-9_.-]+: )?[0-9]+ passed, [0-9]+ failed(, [0-9]+ skipped)?$'

suite_start() { # NAME
  sh "$TESTS_DIR/prereqs.sh" "$1" && return 0
  echo "$1: 0 passed, 1 failed, 0 skipped"
  exit 1
}

tally_reset() {
  T_PASS=0 T_FAIL=0 T_SKIP=0
}
tally_reset

tally_line() { # FILE
  _l=$(tail -n 1 "$1" 2>/dev/null)
  printf '%s\n' "$_l" | grep -Eq "$SUMMARY_RE" || return 1
  # shellcheck disable=SC2046
  set -- $(printf '%s\n' "$_l" | sed -E 's/^([A-Za-z0-9_.-]+: )?([0-9]+) passed, ([0-9]+) failed(, ([0-9]+) skipped)?$/\2 \3 \5/')
  T_PASS=$((T_PASS + $1)) T_FAIL=$((T_FAIL + $2)) T_SKIP=$((T_SKIP + ${3:-0}))
}

tally_script() { # RC FILE
  _s=$(grep -Ec '^[[:space:]]*SKIP ' "$2")
  T_SKIP=$((T_SKIP + _s))
  if [ "$1" = 0 ]; then T_PASS=$((T_PASS + 1)); else T_FAIL=$((T_FAIL + 1)); fi
}

tally_print() { # NAME
  echo "$1: $T_PASS passed, $T_FAIL failed, $T_SKIP skipped"
}

tally_run() { # FILE COMMAND...
  _f=$1; shift
  : >"$_f"
  rm -f "$_f.pid"
  # Shown by a tail that ends with the command (tail --pid): a pipe to tee would also wait
  # for any process the command left behind holding its output.  The command stays in
  # the foreground, where Ctrl-C reaches it (a background one would ignore SIGINT).
  ( i=0
    while [ ! -s "$_f.pid" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
    [ -s "$_f.pid" ] || exec cat "$_f"
    exec tail -n +1 -s 0.2 -f --pid="$(cat "$_f.pid")" "$_f" ) &
  _tail=$!
  sh -c 'echo $$ >"$0.pid"; exec "$@"' "$_f" "$@" >"$_f"
  _rc=$?
  wait $_tail
  rm -f "$_f.pid"
  return $_rc
}

tally_suite() { # FILE COMMAND...
  _sf=$1; shift
  tally_run "$_sf" "$@"; _src=$?
  _before=$T_FAIL
  if ! tally_line "$_sf"; then
    echo "(its last line is no 'N passed, N failed, N skipped' line: counted as 1 failed)"
    T_FAIL=$((T_FAIL + 1)); [ $_src != 0 ] || _src=1
  elif [ $_src != 0 ] && [ "$T_FAIL" = "$_before" ]; then
    T_FAIL=$((T_FAIL + 1))
  fi
  return $_src
}

clock_cpu() { # user+sys seconds of this shell's waited-for children (/proc: fields 16, 17)
  awk -v hz="$(getconf CLK_TCK)" '{ sub(/^.*\) /, ""); printf "%d\n", ($14 + $15) / hz }' "/proc/$$/stat"
}

clock_start() {
  _clock_wall=$(date +%s) _clock_cpu=$(clock_cpu)
}

clock_took() {
  echo "$(( $(date +%s) - _clock_wall )) s, CPU $(( $(clock_cpu) - _clock_cpu )) s"
}
