#!/bin/sh
# runtime-setup.sh PACKAGE-LIST — the runtime stage of docker/Dockerfile, as root:
# install the packages named in PACKAGE-LIST (docker/runtime-packages.txt) without
# recommends, create the service account onnxviz (uid/gid 10001, no login, home /data) and
# the store /data it owns, then drop apt's caches.  tests/docker/image-check.sh runs this
# same script inside its Debian root filesystem, so the image and the test cannot drift.
set -eu
list=$1
uid=10001
export DEBIAN_FRONTEND=noninteractive
pkgs=$(sed 's/#.*//' "$list" | tr -s ' \t\n' ' ')
[ -n "${pkgs# }" ] || { echo "runtime-setup: no packages in $list" >&2; exit 1; }
apt-get update -qq
# shellcheck disable=SC2086 # one word per package
apt-get install -y -qq --no-install-recommends $pkgs
# --no-log-init: no lastlog entry (a sparse file as large as the uid times 292 bytes)
groupadd --gid "$uid" onnxviz
useradd --uid "$uid" --gid "$uid" --home-dir /data --no-create-home --no-log-init \
        --shell /usr/sbin/nologin onnxviz
install -d -o "$uid" -g "$uid" -m 0750 /data
apt-get clean
rm -rf /var/lib/apt/lists/* /var/log/apt/* /var/log/dpkg.log /var/cache/debconf/*-old
