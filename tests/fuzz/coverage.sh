#!/bin/sh
# coverage.sh [NAME [FILE...]] — source coverage that a fuzz target's inputs reach (by
# hand, for docs/fuzzing.md): builds tests/fuzz/replay.c + tests/fuzz/fuzz_NAME.c with
# clang's source-based coverage into build-cov/, replays the target's seeds (as the fuzz
# suite does), the regressions and the fuzzer's work folder (build-fuzz/work/NAME, when
# present), and prints llvm-cov's report for FILE... (default: the files the target is
# about: parse parser/wire.c parser/decode.c ...; graph parser/graph.c render/doc.c ...).
set -eu
cd "$(dirname "$0")/../.."
name=${1:-parse}
[ $# -gt 0 ] && shift
if [ $# -eq 0 ]; then
  case $name in
    parse) set -- parser/wire.c parser/decode.c parser/arena.c parser/model.c ;;
    graph) set -- parser/graph.c parser/shape.c parser/shape_ops.c parser/shape_nn.c \
                  render/doc.c render/jsonx.c ;;
    tensor) set -- parser/tensor.c parser/dtype.c parser/external.c ;;
    render) set -- render/view.c render/hier.c render/style.c render/layout.c render/svg.c \
                   render/options.c ;;
    quant) set -- parser/quant.c service/preview.c ;;
    derived) set -- render/view.c render/fold.c render/quant.c render/hier.c render/repeat.c \
                    render/style.c render/textfit.c render/svg.c ;;
    http) set -- service/http.c service/routes.c service/upload.c service/artifacts.c \
                 service/deadline.c service/query.c service/router.c service/cache.c \
                 service/models.c ;;
    *) set -- parser/*.c ;;
  esac
fi
make -s CC=clang BUILD=build-cov CFLAGS="-fprofile-instr-generate -fcoverage-mapping" \
    LDFLAGS="-fprofile-instr-generate" "build-cov/fuzz/replay_$name" >/dev/null
rm -f build-cov/*.profraw
dirs=$(sh tests/fuzz/seeds.sh "$name")
[ -d "build-fuzz/work/$name" ] && dirs="$dirs build-fuzz/work/$name"
# shellcheck disable=SC2086
LLVM_PROFILE_FILE=build-cov/replay.profraw "build-cov/fuzz/replay_$name" $dirs >/dev/null
llvm-profdata merge -sparse -o build-cov/replay.profdata build-cov/replay.profraw
llvm-cov report "build-cov/fuzz/replay_$name" -instr-profile=build-cov/replay.profdata "$@"
