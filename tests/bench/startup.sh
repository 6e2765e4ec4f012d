#!/bin/sh
# startup bench: exec to listening with 10,000 models in the store, local and S3 (a
# single-node Ceph RGW started and stopped here); target <= 1 s (tests/bench/startup.py).
set -u
cd "$(dirname "$0")/../.."
: "${BUILD:=build}"
export BUILD
exec nice /usr/bin/python3 tests/bench/startup.py "$@"
