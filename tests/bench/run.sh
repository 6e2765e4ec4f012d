#!/bin/sh
# run.sh — the benchmark scripts (make bench); each prints what it measured.
set -u
cd "$(dirname "$0")/../.."
status=0
sh tests/bench/parse.sh || status=1
exit $status
