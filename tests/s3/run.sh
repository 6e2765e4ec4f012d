#!/bin/sh
# s3 suite: the S3 store against a real object store (a single-node Ceph cluster with its
# S3 gateway, RGW, started and stopped here), the http suite run against it, and three
# replicas on one bucket behind haproxy (tests/s3/s3_test.py says what is checked).
# Needs ceph-mon, ceph-osd, radosgw, ceph-common and haproxy (make deps).
set -u
cd "$(dirname "$0")/../.."
: "${BUILD:=build}"
: "${ONNXVIZ_CORPUS:=$(cd .. && pwd)/shared/corpus}"
export BUILD ONNXVIZ_CORPUS
[ -x "$BUILD/onnxviz" ] || { echo "s3: $BUILD/onnxviz is missing (make first)"; exit 1; }
for t in ceph-mon ceph-osd radosgw radosgw-admin monmaptool haproxy curl; do
  command -v "$t" >/dev/null || { echo "s3: $t is missing (make deps)"; exit 1; }
done
exec /usr/bin/python3 tests/s3/s3_test.py "$@"
