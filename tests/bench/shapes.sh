#!/bin/sh
# shapes.sh — the time shape inference adds to linking (oxp_dag_build), on the corpus's
# real models.  Target: linking transformer_12x12.onnx (4,868 nodes) with inference in
# under 10 ms (median of 50 builds).  Prints the medians (and the fastest builds: the
# machine is shared, so medians move with its load) and the ratio to the target; exits 1
# when it is missed.
set -u
cd "$(dirname "$0")/../.."
: "${BUILD:=build}"
: "${ONNXVIZ_CORPUS:=$(cd .. && pwd)/shared/corpus}"
tool="$BUILD/tools/shapebench"
[ -x "$tool" ] || make -s BUILD="$BUILD" "$tool" || exit 1
status=0
for m in "$ONNXVIZ_CORPUS"/models/real/*.onnx; do
  line=$("$tool" "$m" 50) || { echo "shapes: $m failed"; status=1; continue; }
  echo "$line"
  case "$m" in
    *transformer_12x12.onnx)
      ms=$(echo "$line" | sed -n 's/.*inference, \([0-9.]*\) ms .*/\1/p')
      ok=$(awk -v t="$ms" 'BEGIN { print (t < 10.0) ? 1 : 0 }')
      ratio=$(awk -v t="$ms" 'BEGIN { printf "%.2f", t / 10.0 }')
      echo "transformer_12x12: dag build with inference, median $ms ms; target 10 ms; ratio $ratio"
      [ "$ok" = 1 ] || { echo "shapes: target missed"; status=1; }
      ;;
  esac
done
exit $status
