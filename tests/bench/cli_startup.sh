#!/bin/sh
# cli start-up bench: `onnxviz --version` and `onnxviz inspect` of isnet_fp16.onnx against
# python3 -c 'import onnx; onnx.load(...)', whole process (tests/bench/cli_startup.py).
# Targets: <= 3 ms, <= 6 ms, >= 30x (issue 27; figures in docs/bench.md).
set -u
cd "$(dirname "$0")/../.."
: "${BUILD:=build}"
: "${ONNXVIZ_CORPUS:=$(cd .. && pwd)/shared/corpus}"
export BUILD ONNXVIZ_CORPUS
exec /usr/bin/python3 tests/bench/cli_startup.py "$@"
