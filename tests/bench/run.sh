#!/bin/sh
# run.sh — every benchmark under tests/bench/ (`make bench`).  Each prints what it
# measured and the ratios against its targets; none of them is part of `make test`.
set -u
cd "$(dirname "$0")/../.."
status=0
for b in tests/bench/*.sh; do
  [ "$b" = tests/bench/run.sh ] && continue
  echo "################ $b"
  sh "$b" || status=1
done
exit $status
