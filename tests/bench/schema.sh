#!/bin/sh
# schema.sh — what the operator-schema table (parser/schema_table.c, docs/schemas.md)
# adds to onnxviz: bytes in the linked binary, and time at start-up.  Prints:
#   - the bytes of the table's symbols (oxp__sch_*) and of its reader and the check
#     (schema.o, check.o) in $BUILD/onnxviz, and how many dynamic relocations point into
#     the table (0: it is plain .rodata, nothing to fix up at load); target < 1 MiB;
#   - the first pass over the whole table in a fresh process ($BUILD/tools/schemabench:
#     every version looked up and read, every page of the table faulted in: the most a
#     process can pay for it) against the anchor, onnxviz's own start-up (`onnxviz
#     --version`, median of RUNS wall times measured here); target < 1 ms;
#   - a warm pass and the cost of one look-up.
# Environment: BUILD (default build), RUNS (default 21).
set -eu
cd "$(dirname "$0")/../.."
: "${BUILD:=build}"
: "${RUNS:=21}"
make -s BUILD="$BUILD" "$BUILD/onnxviz" "$BUILD/tools/schemabench" >/dev/null
BIN=$BUILD/onnxviz

sym_bytes=$(nm -S "$BIN" | awk '$4 ~ /^oxp__sch_/ { printf "%d\n", "0x" $2 }' |
  /usr/bin/python3 -c "import sys; print(sum(int(l) for l in sys.stdin))")
code_bytes=$(size "$BUILD/obj/parser/schema.o" "$BUILD/obj/parser/check.o" |
  awk 'NR > 1 { s += $1 + $2 } END { print s }')
relocs=$(readelf -rW "$BIN" | grep -c 'oxp__sch_' || true)
total=$((sym_bytes + code_bytes))
echo "bench schema: table symbols $sym_bytes bytes, reader and check code $code_bytes bytes:" \
     "$total bytes ($(( total * 1000 / 1048576 ))/1000 MiB; target < 1 MiB);" \
     "$relocs dynamic relocations into the table"

# the anchor: onnxviz's start-up, median of RUNS
startup=$(/usr/bin/python3 - "$BIN" "$RUNS" <<'PY'
import statistics, subprocess, sys, time
bin_, runs = sys.argv[1], int(sys.argv[2])
ts = []
for _ in range(runs + 1):
    t = time.perf_counter()
    subprocess.run([bin_, "--version"], stdout=subprocess.DEVNULL, check=True)
    ts.append(time.perf_counter() - t)
print("%.1f" % (statistics.median(ts[1:]) * 1e6))
PY
)
# the table's first touch, median over RUNS fresh processes
firsts=""
i=0
while [ $i -lt "$RUNS" ]; do
  line=$("$BUILD/tools/schemabench" -n 20)
  firsts="$firsts $(echo "$line" | tr ' ' '\n' | sed -n 's/^first_us=//p')"
  i=$((i + 1))
done
first=$(echo $firsts | tr ' ' '\n' | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
echo "bench schema: first pass over the whole table in a fresh process: ${first} us" \
     "(median of $RUNS; target < 1000 us); onnxviz --version start-up: ${startup} us;" \
     "ratio $(echo "$first $startup" | awk '{ printf "%.3f", $1 / $2 }')"
echo "bench schema: warm: $line"

fail=0
[ "$total" -lt 1048576 ] || { echo "bench schema: FAIL: the table adds $total bytes"; fail=1; }
[ "$relocs" -eq 0 ] || { echo "bench schema: FAIL: $relocs relocations into the table"; fail=1; }
echo "$first" | awk '{ exit !($1 < 1000) }' || { echo "bench schema: FAIL: first pass ${first} us"; fail=1; }
exit $fail
