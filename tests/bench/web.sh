#!/bin/sh
# web.sh — the web page on big graphs in the system's headless Chromium: time to show the
# transformer (4,868 nodes) and a generated 10,000-node model, overview and full detail,
# and frame times while zooming, against a 60 Hz frame and a 5 s goal.  Uses the e2e
# suite's playwright-core (installs it like tests/e2e/run.sh) and its test models.
set -u
cd "$(dirname "$0")/../.."
: "${BUILD:=build}"
: "${ONNXVIZ_CORPUS:=$(cd .. && pwd)/shared/corpus}"
: "${ONNXVIZ_CHROMIUM:=/usr/bin/chromium}"
export BUILD ONNXVIZ_CORPUS ONNXVIZ_CHROMIUM
[ -x "$BUILD/onnxviz" ] || { echo "web bench: $BUILD/onnxviz is missing (make first)"; exit 1; }
[ -x "$ONNXVIZ_CHROMIUM" ] || { echo "web bench: no browser at $ONNXVIZ_CHROMIUM (make deps)"; exit 1; }
if [ ! -f tests/e2e/node_modules/playwright-core/package.json ]; then
  (cd tests/e2e && npm ci --no-audit --no-fund --loglevel=error) || exit 1
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/onnxviz-webbench.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT INT TERM
/usr/bin/python3 tests/e2e/make_models.py "$work/models" > "$work/models.json" || exit 1
# the 20,000-node and 100,000-node models of issue 37 (1,000 and 5,000 of make_models.py's
# blocks: 19,002 and 95,002 ranks deep), added to the list
/usr/bin/python3 - "$work" <<'PY' || exit 1
import json, sys
sys.path.insert(0, 'tests/e2e')
import make_models
work = sys.argv[1]
m = json.load(open(f'{work}/models.json'))
m['big20k'] = make_models.big_model(f'{work}/models/big20k.onnx', 1000)
m['big100k'] = make_models.big_model(f'{work}/models/big100k.onnx', 5000)
json.dump(m, open(f'{work}/models.json', 'w'))
PY
ONNXVIZ_E2E_WORK="$work" node tests/bench/web.mjs
