#!/bin/sh
# http.sh — load on the HTTP service: wrk against a cached graph.svg on loopback.
#
# Starts build/onnxviz serve (default options: 4 HTTP threads, request logs on, written
# to a file), uploads squeezenet, renders its SVG once, then runs wrk for DURATION
# seconds with CONNS connections on one wrk thread (the machine has 2 cores: wrk takes
# one).  Prints requests/s and latency percentiles for the full 200 answers and for 304
# revalidations, with the ratio to the goals (>= 10000 req/s, p99 < 10 ms).  Exits 1 when
# the 200 run misses a goal.
# Environment: BUILD (build), DURATION (10), CONNS (8), SERVE_ARGS (extra serve flags).
set -u
cd "$(dirname "$0")/../.."
: "${BUILD:=build}"
: "${DURATION:=10}"
: "${CONNS:=8}"
: "${SERVE_ARGS:=}"
: "${ONNXVIZ_CORPUS:=$(cd .. && pwd)/shared/corpus}"
BIN=$BUILD/onnxviz
MODEL=$ONNXVIZ_CORPUS/models/real/squeezenet1_1.onnx
command -v wrk >/dev/null || { echo "bench http: wrk is missing (make deps)"; exit 1; }
[ -x "$BIN" ] || { echo "bench http: $BIN is missing (make first)"; exit 1; }
tmp=$(mktemp -d)
pid=
cleanup() {
  [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

# shellcheck disable=SC2086
"$BIN" serve --port 0 --store "$tmp/store" --port-file "$tmp/port" $SERVE_ARGS 2>"$tmp/log" &
pid=$!
i=0
while [ ! -s "$tmp/port" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
[ -s "$tmp/port" ] || { echo "bench http: the server did not start"; cat "$tmp/log"; exit 1; }
base=http://127.0.0.1:$(cat "$tmp/port")
id=$(curl -sS --data-binary @"$MODEL" -H 'Content-Type: application/octet-stream' "$base/models" |
     /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])') || exit 1
url=$base/models/$id/graph.svg
etag=$(curl -sS -o "$tmp/g.svg" -D - "$url" | tr -d '\r' | sed -n 's/^[Ee][Tt][Aa][Gg]: //p')
size=$(wc -c < "$tmp/g.svg" | tr -d ' ')
[ -n "$etag" ] && [ "$size" -gt 0 ] || { echo "bench http: no rendering to load"; exit 1; }

# wrk --latency output -> "rps p50_ms p90_ms p99_ms"
summarize() {
  /usr/bin/python3 -c '
import re, sys
t = sys.stdin.read()
def ms(v, u): return float(v) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[u]
p = {k: ms(v, u) for k, v, u in re.findall(r"^\s+(50|90|99)%\s+([\d.]+)(us|ms|s)\s*$", t, re.M)}
rps = float(re.search(r"Requests/sec:\s+([\d.]+)", t).group(1))
errs = re.search(r"Non-2xx or 3xx responses: (\d+)", t)
print("%.0f %.3f %.3f %.3f %s" % (rps, p["50"], p["90"], p["99"], errs.group(1) if errs else 0))
'
}

echo "bench http: GET graph.svg ($size bytes, cached), $CONNS connections, ${DURATION}s"
wrk -t1 -c"$CONNS" -d"${DURATION}s" --latency "$url" > "$tmp/wrk200" 2>&1
set -- $(summarize < "$tmp/wrk200")
rps=$1 p50=$2 p90=$3 p99=$4 errs=$5
echo "  200: $rps req/s, p50 $p50 ms, p90 $p90 ms, p99 $p99 ms, non-2xx/3xx $errs"

wrk -t1 -c"$CONNS" -d"${DURATION}s" --latency -H "If-None-Match: $etag" "$url" > "$tmp/wrk304" 2>&1
set -- $(summarize < "$tmp/wrk304")
echo "  304: $1 req/s, p50 $2 ms, p90 $3 ms, p99 $4 ms, non-2xx/3xx $5"

/usr/bin/python3 - "$rps" "$p99" "$errs" <<'EOF'
import sys
rps, p99, errs = float(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
print("  goal req/s >= 10000: measured %.0f, ratio %.2f" % (rps, rps / 10000))
print("  goal p99 < 10 ms:    measured %.2f ms, ratio %.2f" % (p99, 10 / p99 if p99 else float("inf")))
ok = rps >= 10000 and p99 < 10 and errs == 0
print("bench http: %s" % ("goals met" if ok else "GOALS MISSED"))
sys.exit(0 if ok else 1)
EOF
