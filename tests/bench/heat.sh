#!/bin/sh
# heat.sh — issues 26's and 38's targets for heat overlays (tests/bench/heat_bench.py):
# attribution of a 1,000,000-event profile within 1 s and 2 GiB; a 10 MB profile on swin_t
# drawn within 300 ms of the plain drawing; the overlay table of 10 resnet50 runs within
# 20 ms of reading the model.  Needs tests/bench/render.sh's exported
# models (its cache) and tests/ort (setup.sh).  Environment: BUILD (default build), REPEAT.
set -u
cd "$(dirname "$0")/../.."
: "${BUILD:=build}"
: "${REPEAT:=5}"
CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/onnxviz-bench
make -s "$BUILD/onnxviz" BUILD="$BUILD" || exit 1
sh tests/ort/setup.sh || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "heat overlays, median of $REPEAT; $(uptime | sed 's/.*load/load/')"
python3 tests/bench/heat_bench.py "$BUILD/onnxviz" "$CACHE" "$tmp" "$REPEAT"
