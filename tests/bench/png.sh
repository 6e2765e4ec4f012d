#!/bin/sh
# png.sh — issue 36's targets for PNG (tests/bench/png_bench.py), against anchors measured
# in the same run, on swin_t (the issue's model: torchvision's swin_t(weights=None) at
# opset 14, made by render_models.py into the rendering benchmark's cache, as render.sh
# makes it) and, for comparison, the corpus's transformer_12x12: the overview at w=1200
# within 150 ms of its SVG, both uncached; the full detail at scale=1 within 1 s; a cached
# graph.png GET as fast as a cached graph.svg.  `onnxviz --version` and `inspect` stay
# cli_startup.sh's.
# Environment: BUILD (default build), REPEAT (default 5), ONNXVIZ_CORPUS, XDG_CACHE_HOME
# (swin_t.onnx is ${XDG_CACHE_HOME:-~/.cache}/onnxviz-bench/swin_t.onnx; making it needs
# python3-torch and python3-torchvision: `make bench-deps`).
set -u
cd "$(dirname "$0")/../.."
: "${BUILD:=build}"
: "${REPEAT:=5}"
: "${ONNXVIZ_CORPUS:=$(cd .. && pwd)/shared/corpus}"
CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/onnxviz-bench
export PYTHONDONTWRITEBYTECODE=1 # no __pycache__ in the tree
make -s "$BUILD/onnxviz" BUILD="$BUILD" || exit 1
mkdir -p "$CACHE"
if ! /usr/bin/python3 tests/bench/render_models.py "$CACHE" swin_t >/dev/null 2>"$CACHE/png-prepare.log"; then
  echo "png.sh: swin_t.onnx cannot be made (see $CACHE/png-prepare.log; make bench-deps)" >&2
  exit 1
fi
echo "PNG, median of $REPEAT; $(uptime | sed 's/.*load/load/')"
/usr/bin/python3 tests/bench/png_bench.py "$BUILD/onnxviz" "$REPEAT" "$CACHE/swin_t.onnx" \
  "$ONNXVIZ_CORPUS/models/real/transformer_12x12.onnx"
status=$?
echo "after: $(uptime | sed 's/.*load/load/')"
exit $status
