#!/bin/sh
# png.sh — issue 36's targets for PNG (tests/bench/png_bench.py), against anchors measured
# in the same run: a transformer overview at w=1200 within 150 ms of its SVG, both
# uncached; the full detail at scale=1 within 1 s; a cached graph.png GET as fast as a
# cached graph.svg.  `onnxviz --version` and `inspect` stay cli_startup.sh's.
# Environment: BUILD (default build), REPEAT (default 5), ONNXVIZ_CORPUS.
set -u
cd "$(dirname "$0")/../.."
: "${BUILD:=build}"
: "${REPEAT:=5}"
: "${ONNXVIZ_CORPUS:=$(cd .. && pwd)/shared/corpus}"
make -s "$BUILD/onnxviz" BUILD="$BUILD" || exit 1
echo "PNG, median of $REPEAT; $(uptime | sed 's/.*load/load/')"
/usr/bin/python3 tests/bench/png_bench.py "$BUILD/onnxviz" "$ONNXVIZ_CORPUS/models/real/transformer_12x12.onnx" "$REPEAT"
