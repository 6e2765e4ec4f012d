#!/bin/sh
# compress.sh — issue 37's compressed answers (tests/bench/compress_bench.py): bytes on the
# wire plain vs gzip for the full-detail SVG, document.json, layout JSON and DOT of the
# corpus's biggest models, and the time to first byte of a cached gzip'd answer against
# the same cached answer plain, in the same run.  Environment: BUILD (default build),
# REPEAT (default 30), ONNXVIZ_CORPUS, and BIG: extra models (paths, space-separated) such
# as tests/bench/render_models.py's scoped20k.
set -u
cd "$(dirname "$0")/../.."
: "${BUILD:=build}"
: "${REPEAT:=30}"
: "${ONNXVIZ_CORPUS:=$(cd .. && pwd)/shared/corpus}"
: "${BIG:=}"
make -s "$BUILD/onnxviz" BUILD="$BUILD" || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "compressed answers, median of $REPEAT; $(uptime | sed 's/.*load/load/')"
# shellcheck disable=SC2086
exec python3 tests/bench/compress_bench.py "$BUILD/onnxviz" "$tmp" "$REPEAT" \
	"$ONNXVIZ_CORPUS/models/real/transformer_12x12.onnx" \
	"$ONNXVIZ_CORPUS/models/real/squeezenet1_1.onnx" \
	"$ONNXVIZ_CORPUS/models/real/silero_vad_v5.onnx" $BIG
