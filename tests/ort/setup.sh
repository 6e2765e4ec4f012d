#!/bin/sh
# setup.sh — installs onnxruntime-node into tests/ort/node_modules (npm ci from the lock
# file, --ignore-scripts: the package's install script would download CUDA pieces; the CPU
# library ships inside the package).  Idempotent: does nothing when the installed version
# matches the lock.  Prints where it is; exits non-zero when npm fails.
# Used by the suites that need a real ONNX Runtime (tests/prereqs.tsv lists nodejs for them).
# One install at a time: make test's two lanes (decision 68) may both get here at once
# (the lock is the folder's; flock comes with util-linux).
set -u
dir=$(cd "$(dirname "$0")" && pwd)
if [ -z "${ORT_SETUP_LOCKED:-}" ]; then
  ORT_SETUP_LOCKED=1 exec flock "$dir/.setup.lock" sh "$0" "$@"
fi
want=$(sed -n 's/.*"onnxruntime-node": "\([0-9.]*\)".*/\1/p' "$dir/package.json" | head -1)
have=$(sed -n 's/.*"version": "\([0-9.]*\)".*/\1/p' "$dir/node_modules/onnxruntime-node/package.json" 2>/dev/null | head -1)
if [ -n "$want" ] && [ "$want" = "$have" ]; then
  exit 0
fi
echo "ort: npm ci (onnxruntime-node $want)"
(cd "$dir" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error) || {
  echo "ort: npm ci failed (onnxruntime-node from the npm registry)"; exit 1; }
