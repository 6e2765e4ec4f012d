#!/bin/sh
# run.sh — the `fuzz` suite of `make test`: replays, without libFuzzer, every fuzz
# target's committed corpus (tests/fuzz/corpus/NAME/, plus the folders tests/fuzz/NAME.seeds
# names) and saved crashers (tests/fuzz/regressions/NAME/) through $BUILD/fuzz/replay_NAME
# (tests/fuzz/replay.c linked with tests/fuzz/fuzz_NAME.c, built by `make test`).  A broken invariant or a sanitizer
# report fails the suite.
set -u
cd "$(dirname "$0")/../.."
. tests/suite.sh
suite_start fuzz
: "${BUILD:=build}"
failed=""
for src in tests/fuzz/fuzz_*.c; do
  name=$(basename "$src" .c); name=${name#fuzz_}
  bin=$BUILD/fuzz/replay_$name
  if [ ! -x "$bin" ]; then
    echo "fuzz: $bin missing (make BUILD=$BUILD fuzz-replay)"; failed="$failed $name"
    T_FAIL=$((T_FAIL + 1)); continue
  fi
  dirs=$(sh tests/fuzz/seeds.sh "$name")
  # shellcheck disable=SC2086
  if "$bin" $dirs; then T_PASS=$((T_PASS + 1)); else failed="$failed $name"; T_FAIL=$((T_FAIL + 1)); fi
done
[ -z "$failed" ] || echo "fuzz: replay FAILED:$failed"
echo "fuzz: targets replayed (one check each)"
tally_print fuzz
[ -z "$failed" ]
