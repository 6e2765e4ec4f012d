#!/bin/sh
# http suite: the real server (build/onnxviz serve --port 0 --store <tmp>) driven with
# curl (and raw sockets for what curl will not send) by tests/http/http_test.py: every
# route, every error status, uploads of every corpus model, caching, restart, the
# OpenAPI document against the live server, security headers, graceful SIGTERM.
set -u
cd "$(dirname "$0")/../.."
. tests/suite.sh
suite_start http
: "${BUILD:=build}"
: "${ONNXVIZ_CORPUS:=$(cd .. && pwd)/shared/corpus}"
export BUILD ONNXVIZ_CORPUS
[ -x "$BUILD/onnxviz" ] || { echo "http: $BUILD/onnxviz is missing (make first)"; exit 1; }
exec /usr/bin/python3 tests/http/http_test.py "$@"
