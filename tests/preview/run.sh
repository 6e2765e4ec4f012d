#!/bin/sh
# preview suite: tensor previews over HTTP (GET /models/{id}/tensors/{name}, the .npy form,
# statistics), lone TensorProto uploads, models uploaded with their external data files,
# --models-dir reads (/files/...), the confinement of external data (traversal, symlinks,
# hard links: a planted secret must never appear), isnet_fp16 (when fetched) and a
# 100M-element FLOAT16 tensor's statistics (values/s and the server's RSS).  Oracle:
# /usr/bin/python3 with onnx and numpy.  PREVIEW_BIG=0 skips the 100M-element run.
set -u
cd "$(dirname "$0")/../.."
. tests/suite.sh
suite_start preview
: "${BUILD:=build}"
: "${ONNXVIZ_CORPUS:=$(cd .. && pwd)/shared/corpus}"
export BUILD ONNXVIZ_CORPUS
[ -x "$BUILD/onnxviz" ] || { echo "preview: $BUILD/onnxviz is missing (make first)"; exit 1; }
exec /usr/bin/python3 tests/preview/preview_test.py "$@"
