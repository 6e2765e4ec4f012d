#!/bin/sh
# coverage.sh [NAME] — source coverage that a fuzz target's inputs reach (by hand, for
# docs/fuzzing.md): builds tests/fuzz/replay.c + tests/fuzz/fuzz_NAME.c with clang's
# source-based coverage into build-cov/, replays the committed corpus, the regressions and
# the fuzzer's work folder (build-fuzz/work/NAME, when present), and prints llvm-cov's
# report for parser/*.c.  NAME defaults to parse.
set -eu
cd "$(dirname "$0")/../.."
name=${1:-parse}
make -s CC=clang BUILD=build-cov CFLAGS="-fprofile-instr-generate -fcoverage-mapping" \
    LDFLAGS="-fprofile-instr-generate" "build-cov/fuzz/replay_$name" >/dev/null
rm -f build-cov/*.profraw
dirs="tests/fuzz/corpus/$name tests/fuzz/regressions/$name"
[ -d "build-fuzz/work/$name" ] && dirs="$dirs build-fuzz/work/$name"
# shellcheck disable=SC2086
LLVM_PROFILE_FILE=build-cov/replay.profraw "build-cov/fuzz/replay_$name" $dirs
llvm-profdata merge -sparse -o build-cov/replay.profdata build-cov/replay.profraw
llvm-cov report "build-cov/fuzz/replay_$name" -instr-profile=build-cov/replay.profdata \
    parser/*.c
