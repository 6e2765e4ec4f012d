# lib.sh — shell functions shared by tests/docker/run.sh and tests/docker/image-check.sh
# (sourced, POSIX sh): reading docker/Dockerfile and docker/runtime-packages.txt the way
# Docker and runtime-setup.sh do, so that the tests check the files the image is built
# from rather than a copy of them.

DOCKERFILE=${DOCKERFILE:-docker/Dockerfile}
PKGLIST=${PKGLIST:-docker/runtime-packages.txt}

# df_instructions [FILE]: one line per instruction, "STAGE<TAB>LINE<TAB>INSTR<TAB>ARGS".
# Continuation lines (trailing backslash) are joined, comment lines dropped (also inside a
# continuation, as Docker does), INSTR is upper-cased, STAGE counts FROM lines from 1.
df_instructions() {
	awk '
	function emit(   word, rest) {
		word = cur; sub(/[ \t].*$/, "", word)
		rest = cur; sub(/^[^ \t]+[ \t]*/, "", rest); sub(/[ \t]+$/, "", rest)
		word = toupper(word)
		if (word == "FROM") stage++
		printf "%d\t%d\t%s\t%s\n", stage, start, word, rest
		cur = ""
	}
	{
		sub(/\r$/, "")
		if (!cont) {
			if ($0 ~ /^[ \t]*(#|$)/) next
			start = NR; cur = $0; sub(/^[ \t]+/, "", cur)
		} else {
			if ($0 ~ /^[ \t]*#/) next
			line = $0; sub(/^[ \t]+/, "", line); cur = cur " " line
		}
		if (cur ~ /\\[ \t]*$/) { sub(/\\[ \t]*$/, "", cur); cont = 1; next }
		cont = 0; emit()
	}
	END { if (cont) emit() }
	' "${1:-$DOCKERFILE}"
}

# df_stage [FILE]: the instructions of the last stage (the image that runs), as
# "LINE<TAB>INSTR<TAB>ARGS".
df_stage() {
	df_instructions "${1:-$DOCKERFILE}" | awk -F '\t' '
		{ line[NR] = $0; st[NR] = $1; if ($1 > last) last = $1 }
		END { for (i = 1; i <= NR; i++) if (st[i] == last) { sub(/^[0-9]+\t/, "", line[i]); print line[i] } }'
}

# df_args INSTR [FILE]: the arguments of every INSTR of the last stage, one per line.
df_args() {
	df_stage "${2:-$DOCKERFILE}" | awk -F '\t' -v want="$1" '$2 == want { print $3 }'
}

# json_words: read a JSON array of plain strings (exec form: ["a", "b"]) on stdin and print
# one element per line.  Fails on anything else (escapes included): the Dockerfile keeps
# its exec forms simple.
json_words() {
	awk '
	{ s = s $0 }
	END {
		if (s !~ /^[ \t]*\[.*\][ \t]*$/) exit 1
		sub(/^[ \t]*\[[ \t]*/, "", s); sub(/[ \t]*\][ \t]*$/, "", s)
		while (length(s) > 0) {
			if (s !~ /^"[^"\\]*"/) exit 1
			match(s, /^"[^"\\]*"/)
			print substr(s, 2, RLENGTH - 2)
			s = substr(s, RLENGTH + 1); sub(/^[ \t]*/, "", s)
			if (s == "") break
			if (s !~ /^,/) exit 1
			s = substr(s, 2); sub(/^[ \t]*/, "", s)
		}
	}'
}

# df_env [FILE]: the ENV settings of the last stage as NAME=VALUE lines (both ENV forms;
# values without quotes or spaces, which the Dockerfile keeps to).
df_env() {
	df_args ENV "${1:-$DOCKERFILE}" | awk '
	{
		if ($0 !~ /=/) { n = $1; v = $0; sub(/^[^ \t]+[ \t]+/, "", v); print n "=" v; next }
		for (i = 1; i <= NF; i++) { gsub(/"/, "", $i); print $i }
	}'
}

# runtime_packages [FILE]: the package names of docker/runtime-packages.txt, one per line,
# read as runtime-setup.sh reads them.
runtime_packages() {
	sed 's/#.*//' "${1:-$PKGLIST}" | tr -s ' \t' '\n\n' | sed '/^$/d'
}

# apt_mirror: the Debian archive URI apt on this machine uses for the suite in $1 (main
# component), from /etc/apt/sources.list and sources.list.d (one-line and deb822 forms).
apt_mirror() {
	suite=$1
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -f "$f" ] || continue
		awk -v s="$suite" '
			$1 == "deb" {
				i = 2; if ($i ~ /^\[/) { while ($i !~ /\]$/) i++; i++ }
				if ($(i + 1) == s) { print $i; exit }
			}' "$f"
	done
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		awk -v s="$suite" '
			function done_stanza() {
				if (types ~ /(^|[ \t])deb([ \t]|$)/ && enabled != "no" &&
				    (" " suites " ") ~ (" " s " ")) { split(uris, u, /[ \t]+/); print u[1]; found = 1 }
				types = uris = suites = ""; enabled = "yes"
			}
			BEGIN { enabled = "yes" }
			/^[ \t]*$/ { done_stanza(); if (found) exit; next }
			/^[ \t]*#/ { next }
			{ key = tolower($1); sub(/:$/, "", key); val = $0; sub(/^[^:]*:[ \t]*/, "", val) }
			key == "types" { types = val } key == "uris" { uris = val }
			key == "suites" { suites = val } key == "enabled" { enabled = tolower(val) }
			END { if (!found) done_stanza() }' "$f"
	done | sed -n '1p'
}

COMPOSE=${COMPOSE:-docker/compose.yaml}

# compose_env [FILE]: the environment compose gives the onnxviz service, as NAME=VALUE
# lines, with ${NAME:-default} interpolated as when NAME is unset (python3-yaml reads it).
compose_env() {
	/usr/bin/python3 - "${1:-$COMPOSE}" <<'PY'
import re, sys, yaml
svc = yaml.safe_load(open(sys.argv[1]))["services"]["onnxviz"]
env = svc.get("environment") or {}
pairs = env.items() if isinstance(env, dict) else (e.split("=", 1) for e in env)
for k, v in pairs:
    v = re.sub(r"\$\{\w+(?::?-([^}]*))?\}", lambda m: m.group(1) or "", str(v))
    print("%s=%s" % (k, v))
PY
}

# compose_stop_grace [FILE]: compose's stop_grace_period in seconds (10 when not set).
compose_stop_grace() {
	/usr/bin/python3 - "${1:-$COMPOSE}" <<'PY'
import re, sys, yaml
v = str(yaml.safe_load(open(sys.argv[1]))["services"]["onnxviz"].get("stop_grace_period", "10s"))
secs = 0
for n, u in re.findall(r"(\d+(?:\.\d+)?)(h|ms|m|s|us|ns)", v):
    secs += float(n) * {"h": 3600, "m": 60, "s": 1, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}[u]
print(int(secs))
PY
}

# dlopen_sonames BIN: the sonames BIN's .note.dlopen section names (the ELF dlopen metadata,
# systemd.io/ELF_DLOPEN_METADATA: JSON arrays of {"soname": [...], ...}), one per line.
dlopen_sonames() {
	readelf -p .note.dlopen "$1" 2>/dev/null | grep -o '"soname":\[[^]]*\]' |
		grep -o '"lib[^"]*"' | tr -d '"' | sort -u
}
