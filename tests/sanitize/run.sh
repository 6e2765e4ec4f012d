#!/bin/sh
# sanitize suite: the whole test suite once more, built with AddressSanitizer +
# UndefinedBehaviorSanitizer (LeakSanitizer included) into build-san/.  Any report fails.
# Skipped suites: the browser (e2e), docker (rootfs) and this one itself; s3 runs in part.
set -u
cd "$(dirname "$0")/../.."
SAN=build-san
make -s SANITIZE=address,undefined BUILD=$SAN all >/dev/null || exit 1
make -s SANITIZE=address,undefined BUILD=$SAN \
  $(ls tests/unit/test_*.c 2>/dev/null | sed "s#tests/unit/\(.*\)\.c#$SAN/tests/\1#") \
  $(ls tests/tools/*.c 2>/dev/null | sed "s#tests/tools/\(.*\)\.c#$SAN/tools/\1#") \
  $SAN/onnxviz-fault >/dev/null || exit 1
make -s SANITIZE=address,undefined BUILD=$SAN fuzz-replay >/dev/null || exit 1
supp=$(pwd)/tests/sanitize/lsan.supp
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:halt_on_error=1:exitcode=86:strict_string_checks=1:detect_stack_use_after_return=1"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:exitcode=87"
export LSAN_OPTIONS="suppressions=$supp:print_suppressions=0"
export ONNXVIZ_SANITIZED=1
failed=""
run() {
  echo "== sanitized: $1"
  if ! BUILD=$SAN sh "$2"; then failed="$failed $1"; fi
}
echo "== sanitized: unit"
sh tests/run-unit.sh $(ls $SAN/tests/test_* 2>/dev/null | grep -v '\.d$') || failed="$failed unit"
for s in diff fuzz cli http preview hostile render modeldiff; do
  [ -f "tests/$s/run.sh" ] && run "$s" "tests/$s/run.sh"
done
# the S3 store's own paths (replicas, retries, the object store away); the http suite on
# S3 and the kill/throughput parts add time, not code, under the sanitizers
S3_ONLY=rgw,replicas,outage run s3 tests/s3/run.sh
if [ -n "$failed" ]; then
  echo "sanitize: FAILED:$failed"
  exit 1
fi
echo "sanitize: all suites passed under ASan+UBSan+LSan"
