#!/bin/sh
# parse.sh — parse speed and memory on isnet_fp16.onnx (88 MB, weights in raw_data), the
# reference model for weight-heavy files.  Fetched by the corpus's fetch-large-models.sh
# (cached; prints its folder).  Prints:
#   - onnxviz: oxp_model_open + free of the warm file inside its own process
#     ($BUILD/tools/parsebench: median of RUNS, start-up excluded), and python3-onnx's
#     onnx.load(load_external_data=False) in its own process (median of RUNS, import
#     excluded), with the ratio (target >= 100x); also oxp_model_open_ex(OXP_OPEN_LOW_RSS),
#     the way the CLI and the service open models (structure pages copied; docs/decisions);
#   - for honesty, the same from memory: oxp_model_parse of a preloaded buffer against
#     onnx.load_from_string of preloaded bytes;
#   - peak RSS of `$BUILD/onnxviz inspect` on the model (target < 16 MB; "n/a" while inspect
#     is not available) and of one parse by parsebench.  On kernels that map page-cache
#     folios whole (6.x with large folios), a warm mmap'd file can count more pages than
#     were touched: the figures are what getrusage reports.
# Environment: BUILD (default build), RUNS (default 15), ONNXVIZ_CORPUS.
set -eu
cd "$(dirname "$0")/../.."
: "${BUILD:=build}"
: "${RUNS:=15}"
: "${ONNXVIZ_CORPUS:=$(cd .. && pwd)/shared/corpus}"
PY=/usr/bin/python3

make -s BUILD="$BUILD" "$BUILD/tools/parsebench" >/dev/null
if ! dir=$(sh "$ONNXVIZ_CORPUS/fetch-large-models.sh"); then
  echo "bench parse: cannot fetch isnet_fp16.onnx (see fetch-large-models.sh)"; exit 1
fi
model=$dir/isnet_fp16.onnx
size=$(wc -c <"$model")
echo "bench parse: $model ($size bytes), median of $RUNS runs"
cat "$model" >/dev/null  # warm the page cache

field() { # KEY LINE
  echo "$2" | tr ' ' '\n' | sed -n "s/^$1=//p"
}
ours_file=$("$BUILD/tools/parsebench" -n "$RUNS" "$model")
ours_low=$("$BUILD/tools/parsebench" -n "$RUNS" --low-rss "$model")
ours_buf=$("$BUILD/tools/parsebench" -n "$RUNS" --buffer "$model")
theirs=$($PY - "$model" "$RUNS" <<'PY'
import statistics, sys, time
import onnx
path, runs = sys.argv[1], int(sys.argv[2])
def median_ms(fn):
    fn()  # warm-up
    ts = []
    for _ in range(runs):
        t0 = time.perf_counter()
        m = fn()
        ts.append(time.perf_counter() - t0)
        del m
    return statistics.median(ts) * 1e3
file_ms = median_ms(lambda: onnx.load(path, load_external_data=False))
data = open(path, "rb").read()
buf_ms = median_ms(lambda: onnx.load_from_string(data))
n = len(onnx.load(path, load_external_data=False).graph.node)
print("file_ms=%.3f buffer_ms=%.3f nodes=%d" % (file_ms, buf_ms, n))
PY
)
of=$(field median_ms "$ours_file"); ob=$(field median_ms "$ours_buf")
ol=$(field median_ms "$ours_low")
tf=$(field file_ms "$theirs"); tb=$(field buffer_ms "$theirs")
if [ "$(field nodes "$ours_file")" != "$(field nodes "$theirs")" ]; then
  echo "bench parse: node counts differ: onnxviz $(field nodes "$ours_file"), onnx $(field nodes "$theirs")"
  exit 1
fi
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.0f", a / b }'; }
printf 'parse file:    onnxviz %8.3f ms   onnx.load             %9.3f ms   ratio %sx (target >= 100x)\n' \
  "$of" "$tf" "$(ratio "$tf" "$of")"
printf 'low-RSS open:  onnxviz %8.3f ms   onnx.load             %9.3f ms   ratio %sx (as inspect and the service open)\n' \
  "$ol" "$tf" "$(ratio "$tf" "$ol")"
printf 'parse buffer:  onnxviz %8.3f ms   onnx.load_from_string %9.3f ms   ratio %sx\n' \
  "$ob" "$tb" "$(ratio "$tb" "$ob")"
echo "parsed: $(field nodes "$ours_file") nodes, $(field initializers "$ours_file") initializers, arena $(field arena_kb "$ours_file") KB"

# Peak RSS of a command: GNU time's %M (the child's ru_maxrss; it includes the few hundred
# KB that time itself had mapped when it forked, not the multi-MB of a python parent).
rss() { # command... -> KB, or "fail"
  out=$(/usr/bin/time -f 'peak_rss=%M' "$@" 2>&1 >/dev/null) || { echo fail; return; }
  echo "$out" | sed -n 's/^peak_rss=//p' | tail -n 1
}
if [ ! -x /usr/bin/time ]; then
  echo "peak RSS:      n/a (/usr/bin/time missing: make deps installs it)"
  exit 0
fi
inspect=$(rss "$BUILD/onnxviz" inspect "$model")
if [ "$inspect" = fail ]; then
  echo "peak RSS:      onnxviz inspect: n/a (inspect not available)"
else
  echo "peak RSS:      onnxviz inspect: $inspect KB (target < 16384 KB)"
fi
one=$("$BUILD/tools/parsebench" -n 1 --low-rss "$model")
plain=$(rss "$BUILD/tools/parsebench" -n 1 "$model")
base=$("$BUILD/tools/parsebench" -n 1 tests/data/models/ir14.onnx)
echo "peak RSS:      parsebench, one plain open+parse: $plain KB (page-cache folios mapped whole count here)"
echo "peak RSS:      parsebench, one low-RSS open+parse: $(rss "$BUILD/tools/parsebench" -n 1 --low-rss "$model") KB" \
  "(own VmHWM $(field peak_rss_kb "$one") KB); on a 96-byte model (start-up baseline):" \
  "$(rss "$BUILD/tools/parsebench" -n 1 tests/data/models/ir14.onnx) KB (VmHWM $(field peak_rss_kb "$base") KB)"
