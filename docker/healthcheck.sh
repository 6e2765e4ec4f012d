#!/bin/bash
# onnxviz-healthcheck — the image's HEALTHCHECK: exit 0 when GET /healthz answers 200.
# The slim image has no curl; bash's /dev/tcp is enough for one HTTP/1.0 request.  Reads
# the service's own configuration: ONNXVIZ_PORT (default 8080) and ONNXVIZ_BIND (a
# wildcard bind is reached through the loopback address).
set -u
port=${ONNXVIZ_PORT:-8080}
host=${ONNXVIZ_BIND:-127.0.0.1}
case $host in 0.0.0.0 | '' ) host=127.0.0.1 ;; :: | '[::]') host=::1 ;; esac
host=${host#[}; host=${host%]}
case $port in '' | *[!0-9]*) echo "unhealthy: bad ONNXVIZ_PORT '$port'" >&2; exit 1 ;; esac
if ! { exec 3<>"/dev/tcp/$host/$port"; } 2>/dev/null; then
	echo "unhealthy: cannot connect to $host:$port" >&2
	exit 1
fi
printf 'GET /healthz HTTP/1.0\r\nHost: localhost\r\nConnection: close\r\n\r\n' >&3
status=
IFS= read -r -t 5 status <&3
exec 3<&-
case $status in
"HTTP/1."[01]" 200"*) exit 0 ;;
esac
echo "unhealthy: /healthz answered '${status%$'\r'}'" >&2
exit 1
