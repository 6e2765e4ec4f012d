#!/bin/bash
# tests/docker/image-check.sh [--build-stage] — the container image, proved without a
# Docker engine (the docker suite of `make test` runs it plain; `make docker-check` with
# --build-stage).  As root:
#   1. bases = `debootstrap --variant=minbase` of Debian 12 from the mirror apt uses here
#      (as debian:bookworm), and the same trimmed as debian:*-slim is (docs, man pages,
#      locales);
#   2. replays stages of docker/Dockerfile on them: COPY (files from this tree as the
#      context, the context itself minus .dockerignore, --from=build), RUN (in a chroot, as
#      Docker would), ENV, USER, WORKDIR.  With --build-stage the build stage is replayed
#      too (its `make` compiles this tree) and --from=build copies from it; otherwise from
#      this tree's $BUILD.  The layers before a stage's first COPY --from or COPY of the
#      context are cached as tarballs under ${XDG_CACHE_HOME:-~/.cache}/onnxviz/, keyed by
#      the base, those instructions and the files they copy (rebuilt after
#      ONNXVIZ_ROOTFS_MAX_AGE_DAYS, default 7);
#   3. runs the image's ENTRYPOINT+CMD as its USER with its ENV plus docker/compose.yaml's
#      environment, as compose would: in private mount/pid/network namespaces (so
#      ONNXVIZ_BIND=0.0.0.0 and port 8080 stay inside), read-only root, fresh /proc and
#      /dev, tmpfs /tmp (noexec), the volume bind-mounted on /data and the models folder
#      read-only on /models; checks `onnxviz render` on /models, the HEALTHCHECK command
#      (fails before start, passes after), /healthz, the wildcard listen socket, that every
#      process is non-root, an upload + graph.svg round trip and a one-shot POST /graph.svg
#      of a corpus model, that the layouts ran in worker processes (/metrics), the files in
#      the volume, and that STOPSIGNAL stops it cleanly within the grace period;
#   4. does 3 again as a plain `docker run` (the image's ENV only, 10 s to stop) with
#      Graphviz's plugin configuration (config6a) deleted: the service still lays out (it
#      registers its plugins itself), while the control — Graphviz's own `dot`, copied
#      from this machine into the image — fails there and works in run 3.
# Prints the timings and the root filesystem's size (a proxy for the image size).
# Environment: BUILD (default build), ONNXVIZ_CORPUS, ONNXVIZ_ROOTFS_CACHE (cache folder),
# ONNXVIZ_ROOTFS_MAX_AGE_DAYS, ONNXVIZ_DOCKER_MODEL (model for the round trip).
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
. tests/docker/lib.sh
: "${BUILD:=build}"
DEFAULT_PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
GVCONFIG=/usr/lib/x86_64-linux-gnu/graphviz/config6a

fails=0
checks=0
ok() { checks=$((checks + 1)); echo "ok   $*"; }
bad() { checks=$((checks + 1)); fails=$((fails + 1)); echo "FAIL $*"; }
die() { echo "image-check: $*" >&2; exit 1; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

# ---------------------------------------------------------------------------------------
# load_stage [N]: the instructions of stage N (default: the last one, the image that runs)
# into the arrays INSTR, ARGS and LINES; STAGE is N.
load_stage() {
	INSTR=() ARGS=() LINES=()
	STAGE=${1:-$(df_instructions | awk -F '\t' 'END { print $1 }')}
	local st line instr args
	while IFS=$'\t' read -r st line instr args; do
		[ "$st" = "$STAGE" ] || continue
		LINES+=("$line") INSTR+=("$instr") ARGS+=("$args")
	done < <(df_instructions)
	[ "${#INSTR[@]}" -gt 0 ] || die "no stage $STAGE in $DOCKERFILE"
	# The build stage's WORKDIR is where its sources are (/src): COPY --from=build maps it
	# to this tree, and its build/ to $BUILD.
	BUILD_WORKDIR=$(df_instructions | awk -F '\t' '$1 == 1 && $3 == "WORKDIR" { w = $4 } END { print w }')
	BUILD_NAME=$(df_instructions | awk -F '\t' '$1 == 1 && $3 == "FROM" { print $NF }' | awk '{ print $NF }')
}

# The index of the first COPY --from or COPY of a folder (the context changes with every
# edit): the instructions before it form the cached layers.
prefix_end() {
	local i w
	local -a words
	for i in "${!INSTR[@]}"; do
		[ "${INSTR[$i]}" = COPY ] || continue
		[[ ${ARGS[$i]} == --from=* ]] && { echo "$i"; return; }
		read -r -a words <<<"${ARGS[$i]}"
		for w in "${words[@]:0:${#words[@]}-1}"; do # the sources, not the destination
			[[ $w != --* ]] && [ -d "$ROOT/$w" ] && { echo "$i"; return; }
		done
	done
	echo "${#INSTR[@]}"
}

# env_assign "ENV args": NAME=VALUE lines of one ENV instruction (both forms, no quoting).
env_assign() {
	awk '{ if ($0 !~ /=/) { n = $1; v = $0; sub(/^[^ \t]+[ \t]+/, "", v); print n "=" v; exit }
	       for (i = 1; i <= NF; i++) { gsub(/"/, "", $i); print $i } }' <<<"$1"
}

# resolve_user ROOTFS SPEC: "uid gid home" for a USER value (names looked up in the image).
resolve_user() {
	local root=$1 spec=$2 u g uid gid home
	u=${spec%%:*} g=
	[[ $spec == *:* ]] && g=${spec#*:}
	if [[ $u =~ ^[0-9]+$ ]]; then
		uid=$u
		IFS=: read -r _ _ _ gid _ home _ < <(awk -F: -v u="$u" '$3 == u' "$root/etc/passwd") || true
	else
		IFS=: read -r _ _ uid gid _ home _ < <(awk -F: -v u="$u" '$1 == u' "$root/etc/passwd") ||
			die "USER $u is not in the image's /etc/passwd"
	fi
	if [ -n "$g" ]; then
		if [[ $g =~ ^[0-9]+$ ]]; then gid=$g
		else gid=$(awk -F: -v g="$g" '$1 == g { print $3 }' "$root/etc/group"); fi
	fi
	echo "$uid ${gid:-0} ${home:-/}"
}

# ---------------------------------------------------------------------------------------
# Namespace side: mounts that Docker gives a container or a RUN step.  Called inside
# `unshare --mount --pid --fork` (mounts vanish with the namespace, whatever happens).
ns_mount_common() { # rootfs
	local r=$1
	mount -t proc -o nosuid,nodev,noexec proc "$r/proc"
	mount -t tmpfs -o mode=755,nosuid,size=16m tmpfs "$r/dev"
	mknod -m 666 "$r/dev/null" c 1 3; mknod -m 666 "$r/dev/zero" c 1 5
	mknod -m 666 "$r/dev/full" c 1 7; mknod -m 666 "$r/dev/random" c 1 8
	mknod -m 666 "$r/dev/urandom" c 1 9; mknod -m 666 "$r/dev/tty" c 5 0
	ln -s /proc/self/fd "$r/dev/fd"; ln -s /proc/self/fd/0 "$r/dev/stdin"
	ln -s /proc/self/fd/1 "$r/dev/stdout"; ln -s /proc/self/fd/2 "$r/dev/stderr"
	mkdir "$r/dev/shm" "$r/dev/pts"
	mount -t tmpfs -o mode=1777,nosuid,nodev,size=64m tmpfs "$r/dev/shm"
	mount -t devpts -o newinstance,ptmxmode=0666,mode=0620,gid=5,nosuid,noexec devpts "$r/dev/pts"
	ln -s pts/ptmx "$r/dev/ptmx"
}

# image_cmd ROOTFS UID GID WORKDIR ENV-FILE CMD...: set IMG to the command line that runs
# CMD in the image as Docker runs a process: that user, only the image's environment, that
# working directory.  (An array, not a function, so that `"${IMG[@]}" &` gives the pid of
# the process itself: env, chroot and sh each exec the next.)
image_cmd() {
	local r=$1 uid=$2 gid=$3 wd=$4 envf=$5
	shift 5
	local -a envs=()
	mapfile -t envs <"$envf"
	IMG=(env -i "${envs[@]}" chroot --userspec="$uid:$gid" --groups="$gid" "$r"
		/bin/sh -c 'cd "$0" && exec "$@"' "$wd" "$@")
}

# --ns-apply ROOTFS FIRST LAST WORK: apply instructions FIRST..LAST-1 of the
# runtime stage (COPY, RUN, WORKDIR; ENV/USER tracked from the start) to ROOTFS.
ns_apply() {
	local r=$1 first=$2 last=$3 i instr args
	ns_mount_common "$r"
	# Docker gives RUN the host's resolver; the image's own file stays as it is.
	[ -f "$r/etc/resolv.conf" ] || : >"$r/etc/resolv.conf"
	mount --bind /etc/resolv.conf "$r/etc/resolv.conf"
	local -a envs=("PATH=$DEFAULT_PATH")
	local user=0:0 wd=/
	for ((i = 0; i < last; i++)); do
		instr=${INSTR[$i]} args=${ARGS[$i]}
		case $instr in
		ENV) while IFS= read -r kv; do envs+=("$kv"); done < <(env_assign "$args") ;;
		USER) user=$args ;;
		WORKDIR) wd=$args; [ "$i" -ge "$first" ] && mkdir -p "$r$wd" ;;
		COPY) [ "$i" -ge "$first" ] && apply_copy "$r" "$args" "$wd" ;;
		RUN)
			[ "$i" -ge "$first" ] || continue
			echo "  RUN $args"
			local uid gid home log=$WORK/run-line${LINES[$i]}.log
			read -r uid gid home < <(resolve_user "$r" "$user")
			env -i "${envs[@]}" HOME="$home" chroot --userspec="$uid:$gid" --groups="$gid" "$r" \
				/bin/sh -c 'cd "$0" && eval "$1"' "$wd" "$args" >"$log" 2>&1 ||
				{ tail -n 30 "$log"; die "line ${LINES[$i]}: RUN failed (log: $log)"; }
			grep -i 'warn\|error' "$log" | sed 's/^/    | /' | head -n 10 || true
			;;
		FROM | EXPOSE | VOLUME | STOPSIGNAL | HEALTHCHECK | ENTRYPOINT | CMD | LABEL) ;;
		*) die "line ${LINES[$i]}: $instr is not replayed by this check (extend image-check.sh)" ;;
		esac
	done
}

# context_tar: the build context (this tree) as a tar stream on stdout, without what
# .dockerignore excludes (its patterns: anchored at the root, or **/ for any depth; no
# exceptions with !), owned by root as COPY makes it.
context_tar() {
	local -a ex=()
	local line
	if [ -f "$ROOT/.dockerignore" ]; then
		while IFS= read -r line || [ -n "$line" ]; do
			line=${line%$'\r'}
			[[ $line =~ ^[[:space:]]*(#|$) ]] && continue
			[[ $line == !* ]] && die ".dockerignore exceptions (!) are not replayed: $line"
			line=${line#/}; line=${line%/}
			if [[ $line == '**/'* ]]; then ex+=(--no-anchored "--exclude=${line#'**/'}")
			else ex+=(--anchored "--exclude=$line"); fi
		done <"$ROOT/.dockerignore"
	fi
	(cd "$ROOT" && tar -cf - --owner=0 --group=0 --numeric-owner "${ex[@]}" -- $(ls -A))
}

# apply_copy ROOTFS "ARGS" WORKDIR: COPY [--from=build] [--chown=U:G] [--chmod=M] SRC...
# DEST (DEST relative to WORKDIR unless absolute; a folder source only as the context ".").
# --from=build takes the file from the replayed build stage ($FROM_BUILD_ROOT) when there
# is one, else from this tree's $BUILD.
apply_copy() {
	local r=$1 from= chown=0:0 chmod= w wd=${3:-/}
	local -a words=() srcs=()
	read -r -a words <<<"$2"
	while [[ ${words[0]} == --* ]]; do
		w=${words[0]}; words=("${words[@]:1}")
		case $w in
		--from=*) from=${w#--from=} ;;
		--chown=*) chown=${w#--chown=} ;;
		--chmod=*) chmod=${w#--chmod=} ;;
		*) die "COPY option $w is not replayed by this check" ;;
		esac
	done
	local dest=${words[-1]}
	case $dest in
	/*) ;;
	. | ./) dest=${wd%/}/ ;;
	*) dest=${wd%/}/${dest#./} ;;
	esac
	srcs=("${words[@]:0:${#words[@]}-1}")
	[ "${#srcs[@]}" -gt 0 ] || die "COPY without a source: $2"
	local src path target
	for src in "${srcs[@]}"; do
		[[ $src == *[*?[]* ]] && die "COPY wildcards are not replayed: $src"
		if [ -n "$from" ] && [ -n "${FROM_BUILD_ROOT:-}" ]; then
			[ "$from" = "$BUILD_NAME" ] || die "COPY --from=$from: only --from=$BUILD_NAME is known"
			path=$FROM_BUILD_ROOT$src
		elif [ -n "$from" ]; then
			[ "$from" = "$BUILD_NAME" ] || die "COPY --from=$from: only --from=$BUILD_NAME is known"
			path=${src#"$BUILD_WORKDIR"/}
			[ "$path" != "$src" ] || die "COPY --from=$from $src: not under the build stage's $BUILD_WORKDIR"
			[[ $path == build/* ]] && path=$BUILD/${path#build/}
			[[ $path == /* ]] || path=$ROOT/$path
		else
			path=$ROOT/$src
		fi
		[ -e "$path" ] || die "COPY source $path is missing (run make first?)"
		if [ -d "$path" ]; then
			[ -z "$from" ] && [ "$src" = . ] || die "COPY of folders is only replayed for the context (.): $src"
			mkdir -p "$r$dest"
			context_tar | tar -C "$r$dest" --numeric-owner -xf -
			echo "  COPY . -> $dest ($(du -sh --exclude=build "$r$dest" | cut -f1))"
			continue
		fi
		if [[ $dest == */ ]] || [ "${#srcs[@]}" -gt 1 ] || [ -d "$r$dest" ]; then
			mkdir -p "$r$dest"; target=$r${dest%/}/$(basename "$src")
		else
			mkdir -p "$(dirname "$r$dest")"; target=$r$dest
		fi
		cp --preserve=mode "$path" "$target"
		chown "$chown" "$target"
		[ -z "$chmod" ] || chmod "$chmod" "$target"
		echo "  COPY ${from:+--from=$from }$src -> $dest"
	done
}

# ---------------------------------------------------------------------------------------
# The service's HTTP API as the round trip uses it (docs/api.md): the browser form's
# multipart upload, then the graph by id; and the one-shot POST /graph.svg for pipelines.
api_upload() { # url model-file -> prints the model id
	local out
	out=$(curl -sS --max-time 60 -o - -w '\n%{http_code}' -F "model=@$2" "$1/models") || return 1
	local code=${out##*$'\n'} body=${out%$'\n'*}
	[ "$code" = 201 ] || { echo "POST /models answered $code (expected 201): $body" >&2; return 1; }
	/usr/bin/python3 -c 'import json,sys; print(json.loads(sys.argv[1])["id"])' "$body"
}
api_graph_svg() { # url id out-file -> HTTP status on stdout
	curl -sS --max-time 120 -o "$3" -w '%{http_code}' "$1/models/$2/graph.svg"
}
api_oneshot_svg() { # url model-file out-file headers-file -> HTTP status on stdout
	curl -sS --max-time 120 --data-binary "@$2" -H 'Content-Type: application/octet-stream' \
		-o "$3" -D "$4" -w '%{http_code}' "$1/graph.svg?rankdir=LR"
}

# check_svg FILE: a well-formed SVG document of the model: at least 10 node groups and a
# label naming $MODEL_OP.  Prints "N nodes".
check_svg() {
	/usr/bin/python3 - "$1" "$MODEL_OP" <<'EOF'
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
assert root.tag == "{http://www.w3.org/2000/svg}svg", "root is %s" % root.tag
nodes = [g for g in root.iter("{http://www.w3.org/2000/svg}g") if "node" in (g.get("class") or "").split()]
text = " ".join(t.text or "" for t in root.iter("{http://www.w3.org/2000/svg}text"))
assert len(nodes) >= 10, "only %d nodes" % len(nodes)
assert sys.argv[2] in text, "no %s label" % sys.argv[2]
print("%d nodes" % len(nodes))
EOF
}

# --ns-container CFG SCENARIO: one `docker run` of the image and the checks on it, in
# private mount, pid and network namespaces.  Prints ok/FAIL lines, then "COUNTS checks
# failures" for the caller.
ns_container() {
	# shellcheck disable=SC1090
	. "$1"
	local scenario=$2 r=$RFS
	ip link set lo up
	mount --bind "$r" "$r"
	mkdir -p "$r/models"                                  # docker creates mount points
	mount -o remount,bind,ro "$r"                         # compose: read_only: true
	ns_mount_common "$r"
	mount -t tmpfs -o mode=1777,noexec,nosuid,nodev,size=256m tmpfs "$r/tmp" # compose: tmpfs /tmp
	mount --bind "$VOLUME" "$r/data"                      # the named volume
	mount --bind -o ro "$(dirname "$MODEL")" "$r/models"  # compose: the models folder, ro
	local envf=$WORK/env-$scenario url="http://127.0.0.1:$PORT" log=$WORK/server-$scenario.log
	if touch "$r/usr/.rw-probe" 2>/dev/null || touch "$r/models/.rw-probe" 2>/dev/null; then
		bad "[$scenario] the root or /models is writable (even root must not write there)"
		rm -f "$r/usr/.rw-probe" "$r/models/.rw-probe"
	else
		ok "[$scenario] root filesystem and /models read-only (root in the container cannot write them)"
	fi

	# Control: Graphviz's own dot, which loads its plugins through config6a.
	# It goes on a tmpfs of its own on /mnt: /tmp is noexec, as Docker mounts tmpfs.
	mount -t tmpfs -o mode=755,size=16m tmpfs "$r/mnt"
	cp /usr/bin/dot "$r/mnt/dot"
	image_cmd "$r" "$UID_" "$GID_" / "$envf" /mnt/dot -Tsvg
	if echo 'digraph { a -> b }' | "${IMG[@]}" >"$WORK/dot-$scenario.svg" 2>"$WORK/dot-$scenario.err"; then
		dot_rc=0
	else
		dot_rc=$?
	fi
	if [ -e "$r$GVCONFIG" ]; then
		[ $dot_rc = 0 ] && grep -q '</svg>' "$WORK/dot-$scenario.svg" &&
			ok "[$scenario] control: Graphviz's dot lays out with the package's config6a" ||
			bad "[$scenario] control: dot failed with config6a present: $(head -c 300 "$WORK/dot-$scenario.err")"
	else
		[ $dot_rc != 0 ] &&
			ok "[$scenario] control: Graphviz's dot fails without config6a ($(head -n1 "$WORK/dot-$scenario.err" | cut -c1-80))" ||
			bad "[$scenario] control: dot still works without config6a: the deletion proves nothing"
	fi
	umount "$r/mnt"

	# The CLI on the read-only models folder, as docs/docker.md shows with compose exec.
	local cli_svg=$r/tmp/cli-graph.svg t0
	t0=$(now)
	image_cmd "$r" "$UID_" "$GID_" "$WORKDIR_" "$envf" "${ENTRY[@]}" render \
		"/models/$(basename "$MODEL")" -o /tmp/cli-graph.svg
	if "${IMG[@]}" >"$WORK/cli-$scenario.log" 2>&1 && check_svg "$cli_svg" >"$WORK/cli.check" 2>&1; then
		ok "[$scenario] onnxviz render /models/$(basename "$MODEL"): valid SVG, $(cat "$WORK/cli.check") ($(since "$t0") s)"
	else
		bad "[$scenario] onnxviz render in the image: $(tail -n 3 "$WORK/cli-$scenario.log" "$WORK/cli.check" 2>/dev/null | tr '\n' ' ')"
	fi

	image_cmd "$r" "$UID_" "$GID_" / "$envf" "${HEALTH[@]}"
	local -a health=("${IMG[@]}")
	"${health[@]}" >/dev/null 2>&1 &&
		bad "[$scenario] HEALTHCHECK passes before the service runs" ||
		ok "[$scenario] HEALTHCHECK fails while nothing listens"

	local spid
	t0=$(now)
	image_cmd "$r" "$UID_" "$GID_" "$WORKDIR_" "$envf" "${RUNCMD[@]}"
	"${IMG[@]}" >"$log" 2>&1 &
	spid=$!
	local up=0 i
	for ((i = 0; i < 200; i++)); do
		if curl -fsS --max-time 2 -o /dev/null "$url/healthz" 2>/dev/null; then up=1; break; fi
		kill -0 "$spid" 2>/dev/null || break
		sleep 0.1
	done
	if [ $up = 0 ]; then
		bad "[$scenario] /healthz never answered 200: $(tail -n 5 "$log" | tr '\n' ' ')"
		kill -KILL "$spid" 2>/dev/null
		return 0
	fi
	ok "[$scenario] GET /healthz 200, $(since "$t0") s after start"
	"${health[@]}" >"$WORK/hc.out" 2>&1 &&
		ok "[$scenario] HEALTHCHECK ${HEALTH[*]} passes" ||
		bad "[$scenario] HEALTHCHECK fails on a healthy service: $(cat "$WORK/hc.out")"

	# Listening on the wildcard address (ONNXVIZ_BIND=0.0.0.0), port 8080, in this netns.
	local hexport
	hexport=$(printf '%04X' "$PORT")
	if awk -v p=":$hexport" '$4 == "0A" && ($2 == "00000000" p || $2 == "00000000000000000000000000000000" p) { f = 1 }
	       END { exit !f }' "$r/proc/net/tcp" "$r/proc/net/tcp6"; then
		ok "[$scenario] listens on the wildcard address, port $PORT"
	else
		bad "[$scenario] no wildcard listen socket on port $PORT"
	fi

	# Every process of the container runs as the image's user.
	local p uids rootp= nproc=0
	for p in "$r"/proc/[0-9]*; do
		[ "${p##*/}" = 1 ] && continue # this script, the namespace's init
		[[ $(readlink "$p/exe" 2>/dev/null) == */usr/local/bin/onnxviz ]] || continue
		nproc=$((nproc + 1))
		uids=$(awk '$1 == "Uid:" { print $2, $3, $4, $5 }' "$p/status")
		[ "$uids" = "$UID_ $UID_ $UID_ $UID_" ] || rootp="$rootp ${p##*/}($uids)"
	done
	[ $nproc -gt 0 ] && [ -z "$rootp" ] && ok "[$scenario] $nproc onnxviz process(es), all uid $UID_ (non-root)" ||
		bad "[$scenario] processes not running as $UID_ (found $nproc):$rootp"

	# Upload and render.
	local id code svg=$WORK/graph-$scenario.svg
	t0=$(now)
	if id=$(api_upload "$url" "$MODEL" 2>"$WORK/upload.err"); then
		ok "[$scenario] upload of $(basename "$MODEL") -> id $id ($(since "$t0") s)"
		t0=$(now)
		code=$(api_graph_svg "$url" "$id" "$svg" 2>"$WORK/svg.err") || code="curl: $(cat "$WORK/svg.err")"
		if [ "$code" = 200 ] && check_svg "$svg" >"$WORK/svg.check" 2>&1; then
			ok "[$scenario] graph.svg: valid SVG, $(cat "$WORK/svg.check"), $(wc -c <"$svg") bytes ($(since "$t0") s)"
		else
			bad "[$scenario] graph.svg: HTTP $code: $(head -c 300 "$svg" 2>/dev/null) $(tail -n 2 "$WORK/svg.check" 2>/dev/null)"
		fi
		# a PNG: librsvg loaded in the image's layout worker, drawn with its fonts
		t0=$(now)
		local png=$WORK/graph-$scenario.png
		code=$(curl -sS --max-time 120 -o "$png" -w '%{http_code}' "$url/models/$id/graph.png?w=400" \
			2>"$WORK/png.err") || code="curl: $(cat "$WORK/png.err")"
		if [ "$code" = 200 ] && [ "$(head -c 16 "$png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a0000000d49484452 ] &&
		   [ "$(dd if="$png" bs=1 skip=16 count=4 2>/dev/null | od -An -tu1 | tr -s ' ' | sed 's/^ //')" = "0 0 1 144" ]; then
			ok "[$scenario] graph.png?w=400: a PNG 400 pixels wide, $(wc -c <"$png") bytes ($(since "$t0") s)"
		else
			bad "[$scenario] graph.png: HTTP $code: $(head -c 300 "$png" 2>/dev/null | tr -cd '[:print:]')"
		fi
		[ "$id" = "$(sha256sum "$MODEL" | cut -c1-64)" ] && ok "[$scenario] the id is the model's SHA-256" ||
			bad "[$scenario] id $id is not the SHA-256 of the model"
	else
		bad "[$scenario] upload failed: $(head -c 300 "$WORK/upload.err")"
	fi
	t0=$(now)
	svg=$WORK/oneshot-$scenario.svg
	code=$(api_oneshot_svg "$url" "$MODEL" "$svg" "$WORK/oneshot.h" 2>"$WORK/svg.err") || code="curl: $(cat "$WORK/svg.err")"
	if [ "$code" = 200 ] && check_svg "$svg" >"$WORK/svg.check" 2>&1; then
		ok "[$scenario] one-shot POST /graph.svg?rankdir=LR: valid SVG, $(cat "$WORK/svg.check") ($(since "$t0") s)"
	else
		bad "[$scenario] one-shot POST /graph.svg: HTTP $code: $(head -c 300 "$svg" 2>/dev/null) $(tail -n 2 "$WORK/svg.check" 2>/dev/null)"
	fi
	# The models folder, when the environment serves it (compose: ONNXVIZ_MODELS_DIR).
	local mdir nlay=2
	mdir=$(sed -n 's/^ONNXVIZ_MODELS_DIR=//p' "$envf" | tail -n 1)
	if [ "$mdir" = /models ]; then
		t0=$(now)
		svg=$WORK/files-$scenario.svg
		code=$(curl -sS --max-time 120 -o "$svg" -w '%{http_code}' \
			"$url/files/$(basename "$MODEL")/graph.svg" 2>"$WORK/svg.err") || code="curl: $(cat "$WORK/svg.err")"
		if [ "$code" = 200 ] && check_svg "$svg" >"$WORK/svg.check" 2>&1; then
			ok "[$scenario] GET /files/$(basename "$MODEL")/graph.svg (the read-only /models): valid SVG, $(cat "$WORK/svg.check") ($(since "$t0") s)"
			nlay=3
		else
			bad "[$scenario] GET /files/.../graph.svg: HTTP $code: $(head -c 300 "$svg" 2>/dev/null) $(tail -n 2 "$WORK/svg.check" 2>/dev/null)"
		fi
	elif [ -n "$mdir" ]; then
		bad "[$scenario] ONNXVIZ_MODELS_DIR is $mdir, not the /models mount"
	fi
	# The layouts ran in worker processes, re-executed from /proc/self/exe in the image.
	local lay
	lay=$(curl -fsS --max-time 10 "$url/metrics" 2>/dev/null |
		sed -n 's/^onnxviz_layouts_total{result="ok"} \([0-9]*\)$/\1/p')
	[ "${lay:-0}" -ge "$nlay" ] && ok "[$scenario] /metrics: $lay layouts finished ok in worker processes" ||
		bad "[$scenario] /metrics counts ${lay:-no} finished layouts, expected $nlay"
	local files wrong
	files=$(find "$VOLUME" -mindepth 1 | wc -l)
	wrong=$(find "$VOLUME" -mindepth 1 ! -uid "$UID_" | head -n 3 | tr '\n' ' ')
	[ "$files" -gt 0 ] && [ -z "$wrong" ] && ok "[$scenario] the store in the volume: $files entries, all owned by $UID_" ||
		bad "[$scenario] the volume holds $files entries; not owned by $UID_: $wrong"

	# docker stop: STOPSIGNAL, then SIGKILL after the grace period.
	t0=$(now)
	kill -s "$STOPSIG" "$spid" 2>/dev/null || true
	local rc=
	for ((i = 0; i < STOP_TIMEOUT * 10; i++)); do
		kill -0 "$spid" 2>/dev/null || { wait "$spid" && rc=0 || rc=$?; break; }
		sleep 0.1
	done
	if [ -z "$rc" ]; then
		bad "[$scenario] still running ${STOP_TIMEOUT} s after $STOPSIG (docker would SIGKILL it)"
		kill -KILL "$spid" 2>/dev/null
	elif [ "$rc" = 0 ]; then
		ok "[$scenario] $STOPSIG: clean exit (status 0) in $(since "$t0") s"
	else
		bad "[$scenario] $STOPSIG: exit status $rc: $(tail -n 3 "$log" | tr '\n' ' ')"
	fi
	curl -fsS --max-time 2 -o /dev/null "$url/healthz" 2>/dev/null &&
		bad "[$scenario] /healthz still answers after stop" || true
}

# ---------------------------------------------------------------------------------------
case ${1:-} in
--ns-apply) load_stage "$2"; WORK=$6; ns_apply "$3" "$4" "$5"; exit 0 ;;
--ns-container)
	load_stage
	set +e # every check reports; none ends the run
	ns_container "$2" "$3"
	echo "COUNTS $checks $fails"
	exit 0 ;;
esac

T_START=$(now)
BUILD_STAGE=0
[ "${1:-}" = --build-stage ] && BUILD_STAGE=1
[ "$(id -u)" = 0 ] || die "must run as root (debootstrap, chroot, namespaces); CI runs as root"
for c in debootstrap unshare chroot curl ip mknod sha256sum tar; do
	command -v "$c" >/dev/null || die "$c is missing (make deps)"
done
BIN=$BUILD/onnxviz
[ "$BUILD_STAGE" = 1 ] || [ -x "$BIN" ] || die "$BIN not built (run make)"
CORPUS=${ONNXVIZ_CORPUS:-$(cd .. && pwd)/shared/corpus}
MODEL=${ONNXVIZ_DOCKER_MODEL:-$CORPUS/models/real/squeezenet1_1.onnx}
MODEL_OP=${ONNXVIZ_DOCKER_MODEL_OP:-Conv}
[ -f "$MODEL" ] || die "no model at $MODEL (ONNXVIZ_CORPUS / ONNXVIZ_DOCKER_MODEL)"
[ -x /usr/bin/dot ] || die "/usr/bin/dot (package graphviz) is needed for the control run"

SUITE=bookworm
ARCH=$(dpkg --print-architecture)
MIRROR=$(apt_mirror "$SUITE")
SECURITY=$(apt_mirror "$SUITE-security")
[ -n "$MIRROR" ] || die "no apt source for $SUITE in /etc/apt/sources.list*"
echo "base images: debootstrap $SUITE/$ARCH from $MIRROR${SECURITY:+ (+ $SECURITY)}"

CACHE=${ONNXVIZ_ROOTFS_CACHE:-${XDG_CACHE_HOME:-${HOME:-/root}/.cache}/onnxviz}
MAX_AGE=${ONNXVIZ_ROOTFS_MAX_AGE_DAYS:-7}
mkdir -p "$CACHE"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/onnxviz-image.XXXXXX")
RFS=$WORK/rootfs
NS_PID=
cleanup() {
	local rc=$?
	set +e
	if [ -n "$NS_PID" ]; then # unshare --kill-child takes the namespace's processes along
		kill -KILL "$NS_PID" 2>/dev/null
		wait "$NS_PID" 2>/dev/null
	fi
	# Mounts live in the namespaces and are gone with them; never delete through one.
	if grep -q " $WORK" /proc/self/mountinfo; then
		echo "image-check: mounts left under $WORK, not removing it" >&2
	else
		rm -rf --one-file-system "$WORK"
	fi
	exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP
exec 9>"$CACHE/.lock"
flock 9
# Partial files of an interrupted run, and caches named by an older version of this script.
rm -f "$CACHE"/*.part "$CACHE"/base-"$SUITE"-*.tar "$CACHE"/layers-[0-9a-f]*.tar

# in_ns ARGS...: run this script in fresh private mount + pid namespaces (+ ARGS' extras).
in_ns() { # unshare-flags... -- script-args...
	local -a flags=()
	while [ "$1" != -- ]; do flags+=("$1"); shift; done
	shift
	unshare --mount --pid --fork --kill-child --propagation private "${flags[@]}" \
		bash "$0" "$@" &
	NS_PID=$!
	local rc=0
	wait "$NS_PID" || rc=$?
	NS_PID=
	return $rc
}

fresh() { # file -> true when it exists and is younger than MAX_AGE days
	[ -f "$1" ] && [ -z "$(find "$1" -mtime +"$MAX_AGE")" ]
}

# 1. The bases: debootstrap minbase as debian:bookworm, and the same trimmed like
# debian:bookworm-slim.  Sets FULL_TAR, SLIM_TAR and their keys.
COLD=0 FIGS=
FULL_KEY=$(printf 'minbase-v2 %s %s %s %s\n' "$SUITE" "$ARCH" "$MIRROR" "$SECURITY" | sha256sum | cut -c1-16)
FULL_TAR=$CACHE/base-full-$FULL_KEY.tar
SLIM_KEY=$(printf 'slim-v2 %s\n' "$FULL_KEY" | sha256sum | cut -c1-16)
SLIM_TAR=$CACHE/base-slim-$SLIM_KEY.tar
ensure_bases() {
	local t d=$WORK/base
	if ! fresh "$FULL_TAR"; then
		COLD=1 t=$(now)
		mkdir -p "$d"
		echo "base: debootstrap --variant=minbase $SUITE ..."
		debootstrap --variant=minbase --arch="$ARCH" "$SUITE" "$d" "$MIRROR" >"$WORK/debootstrap.log" 2>&1 ||
			{ tail -n 20 "$WORK/debootstrap.log"; die "debootstrap failed"; }
		# As in Docker's Debian images: the same apt sources as here, no service starts
		# during installs, no translations, no caches.
		printf '#!/bin/sh\nexit 101\n' >"$d/usr/sbin/policy-rc.d"
		chmod 755 "$d/usr/sbin/policy-rc.d"
		printf 'Acquire::Languages "none";\n' >"$d/etc/apt/apt.conf.d/onnxviz-no-languages"
		rm -f "$d/etc/apt/sources.list"
		{
			printf 'Types: deb\nURIs: %s\nSuites: %s %s-updates\nComponents: main\n' "$MIRROR" "$SUITE" "$SUITE"
			printf 'Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n'
			[ -z "$SECURITY" ] ||
				printf '\nTypes: deb\nURIs: %s\nSuites: %s-security\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
					"$SECURITY" "$SUITE"
		} >"$d/etc/apt/sources.list.d/debian.sources"
		rm -rf "$d"/var/cache/apt/archives/*.deb "$d"/var/lib/apt/lists/* "$d"/var/log/* \
			"$d/etc/resolv.conf" "$d/etc/hostname"
		rm -f "$CACHE"/base-full-*.tar
		tar -C "$d" --numeric-owner -cf "$FULL_TAR.part" . && mv "$FULL_TAR.part" "$FULL_TAR"
		rm -rf --one-file-system "$d"
		FIGS="$FIGS debootstrap $(since "$t") s,"
	fi
	if ! fresh "$SLIM_TAR" || [ "$SLIM_TAR" -ot "$FULL_TAR" ]; then
		COLD=1
		mkdir -p "$d"
		tar -C "$d" --numeric-owner -xf "$FULL_TAR"
		# What the slim images leave out (also for packages installed later), as dpkg config.
		cat >"$d/etc/dpkg/dpkg.cfg.d/onnxviz-slim" <<-'EOF'
			# like debian:*-slim: no documentation, manual pages or translations
			path-exclude /usr/share/doc/*
			path-include /usr/share/doc/*/copyright
			path-exclude /usr/share/man/*
			path-exclude /usr/share/info/*
			path-exclude /usr/share/groff/*
			path-exclude /usr/share/linda/*
			path-exclude /usr/share/lintian/overrides/*
			path-exclude /usr/share/locale/*
			path-include /usr/share/locale/locale.alias
		EOF
		find "$d/usr/share/doc" -mindepth 1 ! -type d ! -name copyright -delete
		rm -rf "$d"/usr/share/{man,info,groff,linda}/* "$d/usr/share/lintian/overrides"/*
		find "$d/usr/share/locale" -mindepth 1 -maxdepth 1 ! -name locale.alias -exec rm -rf {} +
		rm -f "$CACHE"/base-slim-*.tar
		tar -C "$d" --numeric-owner -cf "$SLIM_TAR.part" . && mv "$SLIM_TAR.part" "$SLIM_TAR"
		rm -rf --one-file-system "$d"
	fi
}

# stage_rootfs N DIR: stage N of the Dockerfile replayed into DIR.  Its base comes from
# its FROM; the instructions before prefix_end are cached as layers-s<N>-<key>.tar (key:
# the base, those instructions, the files they copy).
stage_rootfs() {
	local n=$1 dir=$2 t base base_key
	load_stage "$n"
	n=$STAGE
	case ${ARGS[0]%% *} in
	debian:bookworm | debian:12) base=$FULL_TAR base_key=$FULL_KEY ;;
	debian:bookworm-slim | debian:12-slim) base=$SLIM_TAR base_key=$SLIM_KEY ;;
	*) die "stage $n: FROM ${ARGS[0]}: only debian:bookworm and debian:bookworm-slim are replayed" ;;
	esac
	local pre key layer i w
	pre=$(prefix_end)
	key=$({
		echo "$base_key"
		for ((i = 0; i < pre; i++)); do
			printf '%s %s\n' "${INSTR[$i]}" "${ARGS[$i]}"
			if [ "${INSTR[$i]}" = COPY ]; then
				for w in ${ARGS[$i]}; do [ -f "$ROOT/$w" ] && sha256sum "$ROOT/$w" | cut -d' ' -f1; done
			fi
		done
	} | sha256sum | cut -c1-16)
	layer=$CACHE/layers-s$n-$key.tar
	mkdir -p "$dir"
	if fresh "$layer" && [ "$base" -ot "$layer" ]; then
		t=$(now)
		tar -C "$dir" --numeric-owner -xf "$layer"
		echo "stage $n: layers cached ($(basename "$layer")), unpacked in $(since "$t") s"
	else
		COLD=1 t=$(now)
		tar -C "$dir" --numeric-owner -xf "$base"
		echo "stage $n: replaying lines ${LINES[0]}..${LINES[$((pre - 1))]} of $DOCKERFILE"
		in_ns -- --ns-apply "$n" "$dir" 1 "$pre" "$WORK" || die "replaying stage $n failed"
		rm -f "$CACHE"/layers-s"$n"-*.tar
		tar -C "$dir" --numeric-owner -cf "$layer.part" . && mv "$layer.part" "$layer"
		FIGS="$FIGS stage $n layers $(since "$t") s,"
	fi
	t=$(now)
	in_ns -- --ns-apply "$n" "$dir" "$pre" "${#INSTR[@]}" "$WORK" || die "replaying stage $n failed"
	[ "$pre" -lt "${#INSTR[@]}" ] && FIGS="$FIGS stage $n rest $(since "$t") s,"
	return 0
}

ensure_bases
# 2. With --build-stage (make docker-check): the build stage too, from this tree as the
# context, and the runtime stage then copies the binary it built.
if [ "$BUILD_STAGE" = 1 ]; then
	BRFS=$WORK/build-rootfs
	stage_rootfs 1 "$BRFS"
	FROM_BUILD_ROOT=$BRFS
	export FROM_BUILD_ROOT
	bwd=$(df_instructions | awk -F '\t' '$1 == 1 && $3 == "WORKDIR" { w = $4 } END { print w }')
	[ -x "$BRFS$bwd/build/onnxviz" ] && ok "build stage: $bwd/build/onnxviz built ($(stat -c %s "$BRFS$bwd/build/onnxviz") bytes)" ||
		bad "build stage: no $bwd/build/onnxviz"
fi
# 3. The runtime stage, the image itself.
stage_rootfs "" "$RFS"
T_READY=$(since "$T_START")

# ---------------------------------------------------------------------------------------
# The image's run configuration.
user=0:0 workdir=/ STOPSIG=SIGTERM PORT=
ENVS=("PATH=$DEFAULT_PATH")
ENTRY=() CMDW=() HEALTH=()
for i in "${!INSTR[@]}"; do
	a=${ARGS[$i]}
	case ${INSTR[$i]} in
	ENV) while IFS= read -r kv; do ENVS+=("$kv"); done < <(env_assign "$a") ;;
	USER) user=$a ;;
	WORKDIR) workdir=$a ;;
	STOPSIGNAL) STOPSIG=$a ;;
	EXPOSE) PORT=${a%%[/ ]*} ;;
	ENTRYPOINT) mapfile -t ENTRY < <(json_words <<<"$a") || die "ENTRYPOINT must be exec form" ;;
	CMD) mapfile -t CMDW < <(json_words <<<"$a") || die "CMD must be exec form" ;;
	HEALTHCHECK)
		hc=$(sed -n 's/^.*CMD[ \t]*//p' <<<"$a")
		if [[ $hc == \[* ]]; then mapfile -t HEALTH < <(json_words <<<"$hc")
		else HEALTH=(/bin/sh -c "$hc"); fi ;;
	esac
done
read -r UID_ GID_ HOME_ < <(resolve_user "$RFS" "$user")
RUNCMD=("${ENTRY[@]}" "${CMDW[@]}")
[ "${#RUNCMD[@]}" -gt 0 ] || die "no ENTRYPOINT/CMD"
[ "${#HEALTH[@]}" -gt 0 ] || die "no HEALTHCHECK"
[ -n "$PORT" ] || die "no EXPOSE"
# The environment of the container: Docker's PATH, HOSTNAME, HOME, then the image's ENV.
printf '%s\n' HOSTNAME=onnxviz-check "HOME=$HOME_" "${ENVS[@]}" >"$WORK/env-docker-run"
# compose adds its service's environment (later assignments win).
{ cat "$WORK/env-docker-run"; compose_env; } >"$WORK/env-compose" || die "cannot read $COMPOSE"
echo "image: USER $user (uid $UID_ gid $GID_), WORKDIR $workdir, ${RUNCMD[*]}, env: $(grep ONNXVIZ_ "$WORK/env-docker-run" | tr '\n' ' ')"
echo "compose adds: $(compose_env | sed 's/\(TOKEN=\).\{1,\}/\1(set)/' | tr '\n' ' ')"

# Static checks of the root filesystem.
size_mb=$(du -sx --block-size=1M "$RFS" | cut -f1)
size_apparent=$(du -sx --apparent-size --block-size=1M "$RFS" | cut -f1)
base_mb=$(tar -tvf "$SLIM_TAR" | awk '{ s += $3 } END { printf "%d", s / 1048576 }')
ok "root filesystem: $size_mb MB on disk, $size_apparent MB of files (slim base: $base_mb MB)"
[ "$UID_" != 0 ] && ok "USER $user is uid $UID_, not root" || bad "USER $user is root"
grep -q "^[^:]*:[^:]*:$UID_:" "$RFS/etc/passwd" && ok "uid $UID_ is in the image's /etc/passwd" ||
	bad "uid $UID_ has no /etc/passwd entry"
[ "$(stat -c %u "$RFS/data")" = "$UID_" ] && ok "/data belongs to uid $UID_ (a new volume inherits it)" ||
	bad "/data belongs to uid $(stat -c %u "$RFS/data"), not $UID_"
compilers=$(cd "$RFS" && for d in usr/local/bin usr/bin bin usr/sbin; do
	ls "$d" 2>/dev/null | grep -Ex '(gcc|g\+\+|cc|c\+\+|c89|c99|clang|clang\+\+|tcc|cpp|as|ld|ld\.bfd|ld\.gold|make)(-[0-9.]+)?' |
		sed "s|^|/$d/|"; done | tr '\n' ' ' || true)
[ -z "$compilers" ] && ok "no compiler, assembler, linker or make in the image" ||
	bad "build tools in the image: $compilers"
devpk=$(chroot "$RFS" dpkg-query -W -f='${Package}\n' | grep -E -- '-dev$|^(gcc|gcc-[0-9]+|g\+\+(-[0-9]+)?|cpp(-[0-9]+)?|binutils.*|clang.*|llvm.*|tcc|make|build-essential)$' | tr '\n' ' ' || true)
[ -z "$devpk" ] && ok "no -dev, gcc, cpp, binutils, clang or make package installed" ||
	bad "build packages installed: $devpk"
missing=$(chroot "$RFS" /usr/bin/ldd "${ENTRY[0]}" 2>&1 | grep 'not found' | tr '\n' ' ' || true)
[ -z "$missing" ] && ok "ldd ${ENTRY[0]} inside the image: every library found" ||
	bad "ldd inside the image: $missing"
for so in $(dlopen_sonames "$RFS${ENTRY[0]}"); do
	path=$(chroot "$RFS" /sbin/ldconfig -p | awk -v so="$so" '$1 == so && !found { print $NF; found = 1 }')
	if [ -z "$path" ]; then
		bad "$so (dlopened by ${ENTRY[0]}) is not in the image"
	else
		missing=$(chroot "$RFS" /usr/bin/ldd "$path" 2>&1 | grep 'not found' | tr '\n' ' ' || true)
		[ -z "$missing" ] && ok "$so (dlopened) inside the image: $path, every library found" ||
			bad "ldd $path inside the image: $missing"
	fi
done
[ -f "$RFS$GVCONFIG" ] && ok "libgvc6's trigger wrote $GVCONFIG during the install" ||
	bad "$GVCONFIG missing after the install"
# The drawings name "Helvetica, Arial, sans-serif": Liberation Sans (metric-compatible
# with both) through fontconfig's metric aliases, for librsvg's PNGs as for a browser.
for f in /usr/share/fonts/truetype/liberation2/LiberationSans-Regular.ttf \
         /usr/share/fonts/truetype/liberation2/LiberationSans-Bold.ttf \
         /etc/fonts/conf.d/30-metric-aliases.conf; do
	[ -f "$RFS$f" ] && ok "$f in the image (the drawings' font)" || bad "$f missing from the image"
done

# 4. Run the image twice: as built, then without Graphviz's plugin configuration.
run_scenario() { # name: "compose" (its environment) or "docker-run" (the image's only)
	VOLUME=$WORK/volume-$1 WORKDIR_=$workdir
	# Seconds between the stop signal and SIGKILL: docker stop's 10, compose's own.
	STOP_TIMEOUT=10
	[ "$1" = compose ] && STOP_TIMEOUT=$(compose_stop_grace)
	# A new named volume starts as a copy of the image's /data (content, owner, mode).
	cp -a "$RFS/data" "$VOLUME"
	declare -p RFS WORK VOLUME PORT UID_ GID_ WORKDIR_ STOPSIG STOP_TIMEOUT MODEL MODEL_OP HEALTH \
		RUNCMD ENTRY >"$WORK/cfg"
	local t out
	t=$(now)
	out=$WORK/run-$1.out
	in_ns --net -- --ns-container "$WORK/cfg" "$1" >"$out" 2>&1 || true
	grep -v '^COUNTS ' "$out" || true
	local c f
	read -r _ c f < <(grep '^COUNTS ' "$out" || echo "COUNTS 1 1")
	[ -n "$(grep '^COUNTS ' "$out")" ] || echo "FAIL [$1] the namespace died early"
	checks=$((checks + c)) fails=$((fails + f))
	echo "     [$1] run took $(since "$t") s"
}
run_scenario compose
rm -f "$RFS$GVCONFIG"
[ ! -e "$RFS$GVCONFIG" ] && ok "deleted $GVCONFIG from the image for the next run"
run_scenario docker-run

T_TOTAL=$(since "$T_START")
echo
echo "docker-check figures: $([ $COLD = 1 ] && echo cold || echo warm) run,$FIGS image ready after $T_READY s, total $T_TOTAL s; root filesystem $size_mb MB (slim base $base_mb MB)"
echo "docker-check: $((checks - fails)) passed, $fails failed"
[ "$fails" = 0 ]
