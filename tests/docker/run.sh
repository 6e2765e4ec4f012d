#!/bin/sh
# tests/docker/run.sh — the `docker` suite of `make test` (fast, no Docker engine, no
# network): checks docker/Dockerfile, docker/runtime-packages.txt, docker/compose.yaml,
# docker/healthcheck.sh and docs/docker.md against the binary that `make` built.
#   1. every shared library that $BUILD/onnxviz loads (ldd) belongs to a Debian package
#      that the runtime stage installs: the ones it links directly are named in
#      runtime-packages.txt, the rest are dependencies of those (host's dpkg database);
#      and every package named there is used (no dead weight in the image);
#   2. the runtime stage: slim base, no compiler or -dev package (also not through
#      dependencies), installs only through runtime-setup.sh + the list, non-root USER,
#      EXPOSE 8080 = ONNXVIZ_PORT, VOLUME /data = ONNXVIZ_STORE, ONNXVIZ_BIND=0.0.0.0,
#      HEALTHCHECK on a file it copies in, STOPSIGNAL SIGTERM, exec-form ENTRYPOINT;
#   3. the ONNXVIZ_* variables the image and compose set are ones `onnxviz serve --help`
#      knows, and docs/docker.md documents all of them;
#   4. compose.yaml: named volume on /data, read-only models folder, port 8080;
#      compose.s3.yaml: two replicas on one s3:// store, a cache volume each, an S3 server,
#      haproxy (docker/haproxy.cfg, checked by haproxy -c) routing on /readyz;
#   5. the healthcheck script answers 0 for a 200 and 1 otherwise (stub server), and
#      against the real service.
#   6. the image itself: tests/docker/image-check.sh builds its root filesystem with
#      debootstrap and runs this build's binary in it; 0.5-2.5 minutes on a fresh machine
#      (mostly the Debian mirror), 5-10 s with cached layers.  `make docker-check` (CI,
#      after make test) replays the Dockerfile's build stage as well.
# The last line: "docker: N passed, N failed, N skipped"; a skip is a line "SKIP what: why".
set -u
cd "$(dirname "$0")/../.."
. tests/suite.sh
suite_start docker
. tests/docker/lib.sh
: "${BUILD:=build}"
BIN=$BUILD/onnxviz
PY=/usr/bin/python3
fails=0
checks=0
skips=0
ok() { checks=$((checks + 1)); echo "ok   $*"; }
bad() { checks=$((checks + 1)); fails=$((fails + 1)); echo "FAIL $*"; }
check() { # description command...  — passes when the command succeeds
	d=$1; shift
	if "$@" >/dev/null 2>&1; then ok "$d"; else bad "$d"; fi
}
tmp=$(mktemp -d)
stub_pid=
serve_pid=
cleanup() {
	for p in $stub_pid $serve_pid; do kill "$p" 2>/dev/null; done
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

[ -x "$BIN" ] || { echo "FAIL $BIN not built (run make)"; exit 1; }
# The image ships the plain build: a sanitizer build (make SANITIZE=...) loads the
# compiler's runtime libraries, so its libraries are not the image's.
plain=1
serve_ok=0
"$BIN" serve --help >"$tmp/serve-help" 2>&1 && serve_ok=1
if readelf -d "$BIN" | grep -Eq 'NEEDED.*lib(asan|ubsan|tsan|lsan)\.'; then
	plain=0
	skips=$((skips + 1))
	echo "SKIP libraries and image: $BIN is a sanitizer build (the image ships the plain one)"
fi
for f in "$DOCKERFILE" "$PKGLIST" docker/runtime-setup.sh docker/healthcheck.sh \
         docker/compose.yaml docker/compose.s3.yaml docker/haproxy.cfg docker/haproxy-503.http \
         docs/docker.md .dockerignore; do
	[ -f "$f" ] || { bad "$f exists"; }
done

# ------------------------------------------------------------------ the runtime stage
stage=$tmp/stage
df_stage >"$stage"
runtime_packages >"$tmp/list"
arg1() { df_args "$1" | sed -n '$p'; } # the last one counts, as in Docker

from=$(arg1 FROM)
case $from in
debian:bookworm-slim | debian:bookworm-slim@* | debian:12-slim | debian:12-slim@*)
	ok "runtime stage is Debian 12 slim ($from)" ;;
*) bad "runtime stage FROM is '$from', expected debian:bookworm-slim" ;;
esac
build_from=$(df_instructions | awk -F '\t' '$1 == 1 && $3 == "FROM" { print $4 }')
case $build_from in
"debian:bookworm AS build" | "debian:bookworm as build") ok "build stage is Debian 12 ($build_from)" ;;
*) bad "build stage FROM is '$build_from', expected 'debian:bookworm AS build'" ;;
esac

user=$(arg1 USER)
uname_=${user%%:*}
case $uname_ in
'' ) bad "runtime stage has no USER (it would run as root)" ;;
root | 0) bad "runtime stage USER is root ($user)" ;;
*) ok "runtime stage runs as USER $user" ;;
esac

envs=$tmp/env
df_env >"$envs"
envval() { sed -n "s/^$1=//p" "$envs" | sed -n '$p'; }
[ "$(envval ONNXVIZ_BIND)" = 0.0.0.0 ] && ok "ENV ONNXVIZ_BIND=0.0.0.0" ||
	bad "ENV ONNXVIZ_BIND is '$(envval ONNXVIZ_BIND)', expected 0.0.0.0"
port=$(envval ONNXVIZ_PORT)
if df_args EXPOSE | tr ' ' '\n' | grep -qx '8080\(/tcp\)\{0,1\}'; then
	ok "EXPOSE 8080"
else
	bad "no EXPOSE 8080"
fi
[ "$port" = 8080 ] && ok "ENV ONNXVIZ_PORT=8080 (the exposed port)" ||
	bad "ENV ONNXVIZ_PORT is '$port', expected 8080 (EXPOSE)"
if df_args VOLUME | sed 's/[][",]/ /g' | tr ' ' '\n' | grep -qx /data; then
	ok "VOLUME /data"
else
	bad "no VOLUME /data"
fi
[ "$(envval ONNXVIZ_STORE)" = /data ] && ok "ENV ONNXVIZ_STORE=/data (the volume)" ||
	bad "ENV ONNXVIZ_STORE is '$(envval ONNXVIZ_STORE)', expected /data"
[ "$(arg1 STOPSIGNAL)" = SIGTERM ] && ok "STOPSIGNAL SIGTERM" ||
	bad "STOPSIGNAL is '$(arg1 STOPSIGNAL)', expected SIGTERM"

hc=$(arg1 HEALTHCHECK)
hc_cmd=$(printf '%s\n' "$hc" | sed -n 's/^.*CMD[ \t]*//p')
hc_exe=$(printf '%s\n' "$hc_cmd" | json_words 2>/dev/null | sed -n 1p)
if [ -n "$hc_exe" ] && df_args COPY | awk -v d="$hc_exe" '$NF == d { f = 1 } END { exit !f }'; then
	ok "HEALTHCHECK runs $hc_exe, which the stage copies in"
else
	bad "HEALTHCHECK '$hc' must be CMD [\"/path\"] of a file the runtime stage COPYs"
fi
entry=$(arg1 ENTRYPOINT)
if printf '%s\n' "$entry" | json_words >/dev/null 2>&1 &&
	df_args COPY | grep -q -- "--from=build .*[ \t]$(printf '%s\n' "$entry" | json_words | sed -n 1p)\$"; then
	ok "ENTRYPOINT $entry is the binary copied from the build stage (exec form)"
else
	bad "ENTRYPOINT '$entry' must be the exec form of the binary copied --from=build"
fi

# Installs go through runtime-setup.sh and the list only, and nothing compiles.
if df_args COPY | grep -q 'docker/runtime-packages.txt' &&
	df_args RUN | grep -q 'runtime-setup.sh .*runtime-packages.txt'; then
	ok "runtime stage installs docker/runtime-packages.txt through runtime-setup.sh"
else
	bad "runtime stage must COPY docker/runtime-packages.txt and RUN runtime-setup.sh with it"
fi
if df_args RUN | grep -Eq 'apt(-get)?[ \t]+install|dpkg[ \t]+-i'; then
	bad "runtime stage installs packages outside runtime-packages.txt"
else
	ok "no package installed outside runtime-packages.txt"
fi
COMPILER_RE='^(gcc|gcc-[0-9.]+|g\+\+|g\+\+-[0-9.]+|cpp|cpp-[0-9.]+|clang|clang-[0-9.]+|llvm|llvm-[0-9.]+|tcc|binutils|binutils-.*|build-essential|make|pkg-config|pkgconf|libc6-dev|libc-dev-bin|.*-dev)$'
if df_args RUN | grep -Eq '(^|[ \t;&|])(gcc|g\+\+|cc|c99|clang|tcc|make|ld|as)([ \t;&|]|$)'; then
	bad "runtime stage RUNs a compiler or make"
else
	ok "runtime stage runs no compiler or make"
fi
bad_pkgs=$(grep -E "$COMPILER_RE" "$tmp/list" | tr '\n' ' ')
[ -z "$bad_pkgs" ] && ok "runtime-packages.txt has no compiler or -dev package" ||
	bad "runtime-packages.txt names build packages: $bad_pkgs"

# Dependency closure of the list, from the host's dpkg database (same Debian release).
closure() { # roots...
	dpkg-query -W -f='${Package}\t${Provides}\t${Pre-Depends}, ${Depends}\n' | awk -F '\t' -v roots="$*" '
	function base(s) { sub(/^[ \t]+/, "", s); sub(/[ \t(].*$/, "", s); sub(/:.*$/, "", s); return s }
	{
		inst[$1] = 1; deps[$1] = $3
		n = split($2, pv, /,[ \t]*/)
		for (i = 1; i <= n; i++) { p = base(pv[i]); if (p != "" && !(p in prov)) prov[p] = $1 }
	}
	END {
		n = split(roots, q, " "); head = 1
		for (i = 1; i <= n; i++) seen[q[i]] = 1
		while (head <= n) {
			pkg = q[head++]
			if (!(pkg in inst)) { print "MISSING " pkg; continue }
			print pkg
			m = split(deps[pkg], d, /,[ \t]*/)
			for (j = 1; j <= m; j++) {
				k = split(d[j], alt, /[ \t]*\|[ \t]*/); pick = ""
				for (a = 1; a <= k && pick == ""; a++) {
					nm = base(alt[a])
					if (nm in inst) pick = nm; else if (nm in prov) pick = prov[nm]
				}
				if (pick != "" && !(pick in seen)) { seen[pick] = 1; q[++n] = pick }
			}
		}
	}' | sort -u
}
# shellcheck disable=SC2046
closure $(cat "$tmp/list") >"$tmp/closure"
missing=$(sed -n 's/^MISSING //p' "$tmp/closure" | tr '\n' ' ')
[ -z "$missing" ] && ok "every listed package is installed on this (build) machine" ||
	bad "listed packages not installed here, so not checkable: $missing"
bad_dep=$(grep -E "$COMPILER_RE" "$tmp/closure" | grep -v '^MISSING' | tr '\n' ' ')
[ -z "$bad_dep" ] && ok "no compiler or -dev package among the $(grep -vc '^MISSING' "$tmp/closure") packages the list pulls in" ||
	bad "the runtime list pulls in build packages: $bad_dep"

if [ "$plain" = 1 ]; then
# ------------------------------------------------------------------ the binary's libraries
# Owners of the libraries' files, from one dpkg -S over every spelling of each path (as
# given, resolved, with and without the /usr prefix: bookworm's merged /usr).
spellings() { # path
	for p in "$1" "$(readlink -f "$1")"; do
		printf '%s\n' "$p" "/usr${p#/usr}" "${p#/usr}"
	done
}
pkg_of() { # path -> the Debian package owning it
	for q in $(spellings "$1"); do
		r=$(awk -F '\t' -v q="$q" '$1 == q { print $2; exit }' "$tmp/owners")
		[ -n "$r" ] && { echo "$r"; return 0; }
	done
	return 1
}
ldd "$BIN" >"$tmp/ldd" 2>&1 || bad "ldd $BIN failed: $(cat "$tmp/ldd")"
readelf -d "$BIN" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' >"$tmp/needed"
# Libraries the binary loads with dlopen (libcurl, when an S3 store is used) are named in
# its .note.dlopen section (systemd.io/ELF_DLOPEN_METADATA): they count as linked
# directly, and what they load in turn as the binary's libraries too.
dlopen_sonames "$BIN" >"$tmp/dlopen"
[ -s "$tmp/dlopen" ] && ok "dlopened libraries named in .note.dlopen: $(tr '\n' ' ' <"$tmp/dlopen")"
while read -r so; do
	path=$(ldconfig -p | awk -v so="$so" '$1 == so && !found { print $NF; found = 1 }')
	if [ -z "$path" ]; then
		bad "$so (dlopened) is not installed here"
		continue
	fi
	echo "$so" >>"$tmp/needed"
	printf '\t%s => %s (dlopen)\n' "$so" "$path" >>"$tmp/ldd"
	ldd "$path" >>"$tmp/ldd" 2>&1 || bad "ldd $path failed"
done <"$tmp/dlopen"
if grep -q 'not found' "$tmp/ldd"; then
	bad "ldd: unresolved libraries: $(grep 'not found' "$tmp/ldd" | tr '\n' ' ')"
fi
# "soname => /path (addr)" or "/path (addr)" (the interpreter); the vDSO has no file.
awk '/=>/ { if ($3 ~ /^\//) print $1 "\t" $3; next } $1 ~ /^\// { print $1 "\t" $1 }' \
	"$tmp/ldd" | sort -u >"$tmp/libs"
cut -f2 "$tmp/libs" | while read -r path; do spellings "$path"; done | sort -u >"$tmp/spellings"
# shellcheck disable=SC2046 # one argument per path
dpkg -S $(cat "$tmp/spellings") 2>/dev/null | awk '
	/^diversion / { next }
	{ i = index($0, ": "); pk = substr($0, 1, i - 1); sub(/,.*/, "", pk); sub(/:.*/, "", pk)
	  print substr($0, i + 2) "\t" pk }' >"$tmp/owners"
nlibs=$(wc -l <"$tmp/libs")
: >"$tmp/libpkgs"
while IFS="$(printf '\t')" read -r so path; do
	if ! pkg=$(pkg_of "$path"); then
		bad "$so ($path) belongs to no Debian package"
		continue
	fi
	printf '%s\t%s\t%s\n' "$so" "$path" "$pkg" >>"$tmp/libpkgs"
	if grep -qx "$so" "$tmp/needed"; then
		if grep -qx "$pkg" "$tmp/list"; then
			ok "$so (linked directly) -> $pkg, listed"
		else
			bad "$so (linked directly) -> $pkg, not in $PKGLIST"
		fi
	elif grep -qx "$pkg" "$tmp/closure"; then
		ok "$so -> $pkg, a dependency of the list"
	else
		bad "$so -> $pkg, neither listed nor a dependency of the list"
	fi
done <"$tmp/libs"
[ "$nlibs" -gt 0 ] || bad "ldd listed no library at all"
while read -r so; do
	grep -q "^$so	" "$tmp/libs" || bad "NEEDED $so not resolved by ldd"
done <"$tmp/needed"
# Nothing listed in vain: each package provides a library the binary loads, or (fonts-*)
# the fonts its drawings name, which librsvg finds through fontconfig (image-check.sh asks
# fc-match inside the image).
unused=
for p in $(cat "$tmp/list"); do
	case $p in fonts-*) continue ;; esac
	cut -f3 "$tmp/libpkgs" | grep -qx "$p" || unused="$unused $p"
done
if [ -z "$unused" ]; then
	ok "every package in the list provides a library the binary loads"
else
	bad "listed but not loaded by $BIN:$unused"
fi

fi
# ------------------------------------------------------------------ compose.yaml
if "$PY" -c 'import yaml' 2>/dev/null; then
	if "$PY" - docker/compose.yaml >"$tmp/compose.out" 2>&1 <<'EOF'
import re, sys, yaml
doc = yaml.safe_load(open(sys.argv[1]))
def interp(v):  # compose's ${NAME:-default} with NAME unset
    return re.sub(r"\$\{\w+(?::?-([^}]*))?\}", lambda m: m.group(1) or "", v)
svc = doc["services"]["onnxviz"]
named = set((doc.get("volumes") or {}).keys())
def mounts(s):
    for v in s.get("volumes", []):
        if isinstance(v, str):
            parts = interp(v).split(":")
            yield parts[0], parts[1], "ro" in parts[2:]
        else:
            yield v.get("source"), v.get("target"), bool(v.get("read_only"))
errs = []
b = svc.get("build", {})
if b.get("dockerfile") != "docker/Dockerfile" or b.get("context") != "..":
    errs.append("build must be context .. and dockerfile docker/Dockerfile")
m = list(mounts(svc))
if not any(t == "/data" and s in named and not ro for s, t, ro in m):
    errs.append("no named volume mounted read-write on /data")
if not any(ro and t not in ("/data",) and s not in named for s, t, ro in m):
    errs.append("no read-only models folder")
if not any(interp(str(p)).split(":")[-1].split("/")[0] == "8080" for p in svc.get("ports", [])):
    errs.append("container port 8080 not published")
if svc.get("read_only") is True and not any("/tmp" in str(t) for t in (svc.get("tmpfs") or [])):
    errs.append("read_only needs a tmpfs on /tmp")
print("\n".join(errs) if errs else "mounts: " + repr(m))
sys.exit(1 if errs else 0)
EOF
	then ok "compose.yaml: $(cat "$tmp/compose.out")"
	else bad "compose.yaml: $(cat "$tmp/compose.out" | tr '\n' ';')"
	fi
	compose_env >"$tmp/compose-env" && cut -d= -f1 "$tmp/compose-env" >"$tmp/compose-vars" ||
		bad "compose.yaml: cannot read the service's environment"
	# Shutdown: the service's grace must end before the engine's SIGKILL (docker stop
	# waits 10 s; compose waits stop_grace_period).
	help_grace=$(sed -n 's/.*ONNXVIZ_GRACE .*(default \([0-9]*\)).*/\1/p' "$tmp/serve-help")
	img_grace=$(envval ONNXVIZ_GRACE)
	img_grace=${img_grace:-$help_grace}
	cmp_grace=$(sed -n 's/^ONNXVIZ_GRACE=//p' "$tmp/compose-env")
	cmp_grace=${cmp_grace:-$img_grace}
	stop_grace=$(compose_stop_grace)
	if [ -z "$img_grace" ]; then
		bad "shutdown grace: the image sets no ONNXVIZ_GRACE and serve --help gives no default"
	else
		[ "$img_grace" -lt 10 ] && ok "image: ONNXVIZ_GRACE $img_grace s ends before docker stop's 10 s" ||
			bad "image: ONNXVIZ_GRACE $img_grace s outlasts docker stop's 10 s (SIGKILL mid-shutdown)"
		[ "$cmp_grace" -lt "$stop_grace" ] &&
			ok "compose: ONNXVIZ_GRACE $cmp_grace s ends before stop_grace_period $stop_grace s" ||
			bad "compose: ONNXVIZ_GRACE $cmp_grace s outlasts stop_grace_period $stop_grace s"
	fi
else
	bad "python3-yaml missing (needed to read compose.yaml)"
fi

# ------------------------------------------------------------------ variables and docs
grep -o 'ONNXVIZ_[A-Z0-9_]*' "$envs" | sort -u >"$tmp/image-vars"
if [ "$serve_ok" = 1 ]; then
	grep -o 'ONNXVIZ_[A-Z0-9_]*' "$tmp/serve-help" | sort -u >"$tmp/known-vars"
	[ -s "$tmp/known-vars" ] && ok "serve --help names $(wc -l <"$tmp/known-vars") ONNXVIZ_ variables" ||
		bad "serve --help names no ONNXVIZ_ variable"
	for v in $(cat "$tmp/image-vars"); do
		grep -qx "$v" "$tmp/known-vars" && ok "image sets $v, a serve variable" ||
			bad "image sets $v, which serve --help does not know"
	done
	for v in $(cat "$tmp/compose-vars" 2>/dev/null); do
		grep -qx "$v" "$tmp/known-vars" && ok "compose sets $v, a serve variable" ||
			bad "compose.yaml uses $v, which serve --help does not know"
	done
	for v in $(cat "$tmp/known-vars"); do
		grep -q "$v" docs/docker.md && ok "docs/docker.md documents $v" ||
			bad "docs/docker.md does not document $v (serve --help has it)"
	done
else
	bad "serve variables: '$BIN serve --help' fails"
	for v in $(cat "$tmp/image-vars"); do
		grep -q "$v" docs/docker.md && ok "docs/docker.md documents $v" ||
			bad "docs/docker.md does not document $v (the image sets it)"
	done
fi
# ------------------------------------------------------------------ compose.s3.yaml, haproxy
# The replicas variant: two onnxviz services on one S3 bucket, each with a cache volume of
# its own, an S3 server, and haproxy routing to the replicas on /readyz.
if "$PY" -c 'import yaml' 2>/dev/null && [ -s "$tmp/known-vars" ]; then
	if "$PY" - docker/compose.s3.yaml docker/haproxy.cfg "$tmp/known-vars" >"$tmp/s3.out" 2>&1 <<'EOF'
import os, re, sys, yaml
doc = yaml.safe_load(open(sys.argv[1]))
known = set(open(sys.argv[3]).read().split())
services = doc["services"]
named = set((doc.get("volumes") or {}).keys())
errs = []
def interp(v):  # ${NAME:-default} with NAME unset; ${NAME:?message} as empty
    return re.sub(r"\$\{\w+(?::?([-?])([^}]*))?\}", lambda m: m.group(2) if m.group(1) == "-" else "", str(v))
def env(s):
    e = s.get("environment") or {}
    return {k: interp(v) for k, v in (e.items() if isinstance(e, dict) else (x.split("=", 1) for x in e))}
def grace(s):
    v = str(s.get("stop_grace_period", "10s"))
    return sum(float(n) * {"h": 3600, "m": 60, "s": 1}[u] for n, u in re.findall(r"(\d+)(h|m|s)", v))
replicas = {n: s for n, s in services.items() if (s.get("build") or {}).get("dockerfile") == "docker/Dockerfile"}
if len(replicas) < 2:
    errs.append("fewer than two onnxviz replicas")
stores, caches = set(), []
for n, s in replicas.items():
    e = env(s)
    stores.add(e.get("ONNXVIZ_STORE"))
    for k in e:
        if k.startswith("ONNXVIZ_") and k not in known:
            errs.append("%s sets %s, which serve --help does not know" % (n, k))
    for k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_REGION", "AWS_ENDPOINT_URL_S3"):
        if k not in e:
            errs.append("%s: no %s" % (n, k))
    host = re.sub(r"^https?://", "", e.get("AWS_ENDPOINT_URL_S3", "")).split(":")[0]
    if host not in services:
        errs.append("%s: the endpoint %r is no service" % (n, host))
    data = [str(v).split(":")[0] for v in s.get("volumes", []) if str(v).split(":")[1:2] == ["/data"]]
    if len(data) != 1 or data[0] not in named:
        errs.append("%s: no named volume of its own on /data" % n)
    caches += data
    if not e.get("ONNXVIZ_CACHE_DIR", "").startswith("/data/"):
        errs.append("%s: the cache is not in its volume" % n)
    if s.get("read_only") is True and "/tmp" not in [str(t) for t in s.get("tmpfs") or []]:
        errs.append("%s: read_only needs a tmpfs on /tmp" % n)
    if int(e.get("ONNXVIZ_GRACE", "8")) >= grace(s):
        errs.append("%s: ONNXVIZ_GRACE outlasts stop_grace_period" % n)
if len(stores) != 1 or not str(next(iter(stores), "")).startswith("s3://"):
    errs.append("the replicas are not on one s3:// store: %r" % stores)
if len(set(caches)) != len(caches):
    errs.append("replicas share a cache volume")
lb = [s for s in services.values() if str(s.get("image", "")).startswith("haproxy")]
cfg_src = [str(v).split(":")[0] for s in lb for v in s.get("volumes", []) if "haproxy.cfg" in str(v)]
here = os.path.dirname(sys.argv[1])
if len(lb) != 1 or not cfg_src or os.path.normpath(os.path.join(here, cfg_src[0])) != os.path.normpath(sys.argv[2]):
    errs.append("no haproxy service mounting docker/haproxy.cfg")
elif not any(interp(p).split(":")[-1] == "8080" for p in lb[0].get("ports", [])):
    errs.append("haproxy does not publish 8080")
cfg = open(sys.argv[2]).read()
servers = re.findall(r"^\s*server\s+\S+\s+([\w.-]+):(\d+)", cfg, re.M)
if sorted(h for h, _ in servers) != sorted(replicas) or any(p != "8080" for _, p in servers):
    errs.append("haproxy.cfg servers %r are not the replicas on 8080" % servers)
if not re.search(r"option httpchk GET /readyz", cfg):
    errs.append("haproxy.cfg does not check /readyz")
print("\n".join(errs) if errs else "%d replicas on %s, caches %s, haproxy on %s" %
      (len(replicas), stores.pop(), caches, [h for h, _ in servers]))
sys.exit(1 if errs else 0)
EOF
	then ok "compose.s3.yaml: $(cat "$tmp/s3.out")"
	else bad "compose.s3.yaml: $(cat "$tmp/s3.out" | tr '\n' ';')"
	fi
else
	bad "compose.s3.yaml: needs python3-yaml and the variables of serve --help"
fi
# haproxy's own check mode, with the error page where this checkout has it
sed "s|/usr/local/etc/haproxy/503.http|$(pwd)/docker/haproxy-503.http|" docker/haproxy.cfg >"$tmp/haproxy.cfg"
check "docker/haproxy.cfg passes haproxy -c" haproxy -c -q -f "$tmp/haproxy.cfg"
check "haproxy-503.http is a 503 with Retry-After" sh -c \
	"head -1 docker/haproxy-503.http | grep -q '^HTTP/1.0 503' && grep -q '^Retry-After: ' docker/haproxy-503.http"
for w in 'make docker-check' '/data' 'curl' 'graph.svg' 'docker compose' 'replica'; do
	grep -q -- "$w" docs/docker.md && ok "docs/docker.md covers '$w'" ||
		bad "docs/docker.md does not mention '$w'"
done

# ------------------------------------------------------------------ the healthcheck script
check "healthcheck.sh parses (bash -n)" bash -n docker/healthcheck.sh
# A stub HTTP server answering /healthz with a chosen status (test oracle only).
cat >"$tmp/stub.py" <<'EOF'
import http.server, sys
code = int(sys.argv[1])
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(code if self.path == "/healthz" else 404)
        self.end_headers(); self.wfile.write(b"x\n")
    def log_message(self, *a): pass
s = http.server.HTTPServer(("127.0.0.1", 0), H)
print(s.server_address[1], flush=True)
s.serve_forever()
EOF
stub_status() { # HTTP-status -> healthcheck exit code
	"$PY" "$tmp/stub.py" "$1" >"$tmp/stub.port" 2>>"$tmp/stub.err" &
	stub_pid=$!
	i=0
	while [ ! -s "$tmp/stub.port" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
	ONNXVIZ_PORT=$(cat "$tmp/stub.port") ONNXVIZ_BIND=0.0.0.0 timeout 10 bash docker/healthcheck.sh \
		>/dev/null 2>&1
	rc=$?
	kill "$stub_pid" 2>/dev/null; wait "$stub_pid" 2>/dev/null; stub_pid=
	: >"$tmp/stub.port"
	return $rc
}
stub_status 200 && ok "healthcheck: 0 when /healthz answers 200" || bad "healthcheck: non-zero for 200"
stub_status 503 && bad "healthcheck: 0 for a 503" || ok "healthcheck: non-zero when /healthz answers 503"
# Nothing listens on a port we just had and closed.
free_port=$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
ONNXVIZ_PORT=$free_port timeout 10 bash docker/healthcheck.sh >/dev/null 2>&1 &&
	bad "healthcheck: 0 with nothing listening" || ok "healthcheck: non-zero when nothing listens"
if [ "$serve_ok" = 1 ]; then
	port=$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
	mkdir -p "$tmp/store"
	ONNXVIZ_BIND=127.0.0.1 ONNXVIZ_PORT=$port ONNXVIZ_STORE=$tmp/store "$BIN" serve \
		>"$tmp/serve.log" 2>&1 &
	serve_pid=$!
	i=0; rc=1
	while [ $i -lt 100 ]; do
		ONNXVIZ_PORT=$port timeout 10 bash docker/healthcheck.sh >/dev/null 2>&1 && { rc=0; break; }
		kill -0 "$serve_pid" 2>/dev/null || break
		sleep 0.1; i=$((i + 1))
	done
	[ $rc = 0 ] && ok "healthcheck: 0 against onnxviz serve (after $((i * 100)) ms)" ||
		bad "healthcheck: onnxviz serve never healthy: $(tail -3 "$tmp/serve.log" | tr '\n' ' ')"
	kill -TERM "$serve_pid" 2>/dev/null; wait "$serve_pid" 2>/dev/null; serve_pid=
else
	bad "healthcheck against onnxviz serve: '$BIN serve --help' fails"
fi

# ------------------------------------------------------------------ the image
echo
if [ "$plain" = 1 ]; then
	echo "image (tests/docker/image-check.sh):"
	if BUILD=$BUILD bash tests/docker/image-check.sh; then
		ok "image check"
	else
		bad "image check (above)"
	fi
fi

echo
echo "docker: $((checks - fails)) passed, $fails failed, $skips skipped"
[ "$fails" = 0 ]
