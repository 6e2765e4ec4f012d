#!/bin/sh
# run.sh — the `fuzz` suite of `make test`: replays, without libFuzzer, every fuzz
# target's committed corpus (tests/fuzz/corpus/NAME/, plus the folders tests/fuzz/NAME.seeds
# names) and saved crashers (tests/fuzz/regressions/NAME/) through $BUILD/fuzz/replay_NAME
# (tests/fuzz/replay.c linked with tests/fuzz/fuzz_NAME.c, built by `make test`).  A broken invariant or a sanitizer
# report fails the suite.
set -u
cd "$(dirname "$0")/../.."
: "${BUILD:=build}"
failed=""
n=0
for src in tests/fuzz/fuzz_*.c; do
  name=$(basename "$src" .c); name=${name#fuzz_}
  bin=$BUILD/fuzz/replay_$name
  if [ ! -x "$bin" ]; then
    echo "fuzz: $bin missing (make BUILD=$BUILD fuzz-replay)"; failed="$failed $name"; continue
  fi
  dirs=$(sh tests/fuzz/seeds.sh "$name")
  # shellcheck disable=SC2086
  if "$bin" $dirs; then n=$((n + 1)); else failed="$failed $name"; fi
done
if [ -n "$failed" ]; then
  echo "fuzz: replay FAILED:$failed"
  exit 1
fi
echo "fuzz: $n targets replayed"
