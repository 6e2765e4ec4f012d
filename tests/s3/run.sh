#!/bin/sh
# s3 suite: the S3 store against a real object store (a single-node Ceph cluster with its
# S3 gateway, RGW, started and stopped here), the http suite run against it, and three
# replicas on one bucket behind haproxy (tests/s3/s3_test.py says what is checked).
# Needs ceph-mon, ceph-osd, radosgw, ceph-common and haproxy (tests/prereqs.tsv).
set -u
cd "$(dirname "$0")/../.."
. tests/suite.sh
suite_start s3
: "${BUILD:=build}"
: "${ONNXVIZ_CORPUS:=$(cd .. && pwd)/shared/corpus}"
export BUILD ONNXVIZ_CORPUS
[ -x "$BUILD/onnxviz" ] || { echo "s3: $BUILD/onnxviz is missing (make first)"; exit 1; }
exec /usr/bin/python3 tests/s3/s3_test.py "$@"
