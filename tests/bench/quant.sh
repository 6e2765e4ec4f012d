#!/bin/sh
# quant.sh — quantized models (docs/quant.md): full-detail boxes and render times of a QDQ
# and a dynamic resnet18 against the float one (target: at most 10% more boxes), and the
# dequantized statistics of a 16.8M-value 4-bit MatMulNBits weight over HTTP (shown).
# Needs python3-torch and python3-torchvision for the float export (`make bench-deps`).
# Environment: BUILD (default build), RUNS (default 3), ONNXVIZ_QUANT_CACHE, ONNXVIZ_CORPUS.
set -u
cd "$(dirname "$0")/../.."
: "${BUILD:=build}"
: "${ONNXVIZ_CORPUS:=$(cd .. && pwd)/shared/corpus}" # the http helpers read it
export BUILD ONNXVIZ_CORPUS
[ -x "$BUILD/onnxviz" ] || make -j2 BUILD="$BUILD" all >&2 || exit 1
echo "quant bench: $(git describe --always --dirty 2>/dev/null || echo '?'); $(uptime | sed 's/.*load/load/')"
exec nice /usr/bin/python3 tests/bench/quant.py
