#!/bin/sh
# prereqs.sh — the test suites' prerequisites, from tests/prereqs.tsv (suite, kind, name,
# Debian package).
#   sh tests/prereqs.sh SUITE        checks SUITE's rows on this machine: for each one that
#                                    is missing prints "SUITE: missing KIND NAME: package
#                                    PACKAGE (make deps installs it)"; exits 1 when any is.
#                                    Every tests/<suite>/run.sh calls it first; a python
#                                    script can too (subprocess: sh tests/prereqs.sh NAME).
#   sh tests/prereqs.sh --in-deps    checks that every package the table names is in the
#                                    Makefile's DEPS_TEST (`make -s print-deps-test`): for
#                                    each one that is not prints "prereqs: package PACKAGE
#                                    (SUITE needs KIND NAME) is not in DEPS_TEST"; exits 1.
# Environment: PREREQS_TABLE (another table), DEPS_TEST (another package list for
# --in-deps; both for the deps suite's own test of this script).
set -u
here=$(cd "$(dirname "$0")" && pwd)
table=${PREREQS_TABLE:-$here/prereqs.tsv}
[ -r "$table" ] || { echo "prereqs: cannot read $table"; exit 2; }
[ $# = 1 ] || { echo "usage: prereqs.sh SUITE | --in-deps"; exit 2; }

rows() { # the table without comments and blank lines
  grep -v -e '^#' -e '^[[:space:]]*$' "$table"
}

if [ "$1" = --in-deps ]; then
  deps=${DEPS_TEST-$(MAKEFLAGS= MAKELEVEL= make -s --no-print-directory -C "$here/.." print-deps-test)} || exit 2
  [ -n "$deps" ] || { echo "prereqs: DEPS_TEST is empty"; exit 1; }
  bad=0
  tab=$(printf '\t')
  while IFS=$tab read -r suite kind name pkg; do
    case " $deps " in
      *" $pkg "*) ;;
      *) echo "prereqs: package $pkg ($suite needs $kind $name) is not in DEPS_TEST (Makefile)"
         bad=1 ;;
    esac
  done <<EOF
$(rows)
EOF
  exit $bad
fi

suite=$1
bad=0
tab=$(printf '\t')
modules=""
while IFS=$tab read -r s kind name pkg; do
  [ "$s" = "$suite" ] || continue
  case $kind in
    program)
      case $name in
        /*) [ -x "$name" ] ;;
        *) command -v "$name" >/dev/null 2>&1 ;;
      esac ;;
    font|file) [ -e "$name" ] ;;
    python) modules="$modules $name=$pkg"; true ;;
    *) echo "prereqs: unknown kind '$kind' in $table"; false ;;
  esac || { echo "$suite: missing $kind $name: package $pkg (make deps installs it)"; bad=1; }
done <<EOF
$(rows)
EOF
# the modules in one interpreter: found, not imported (torch alone takes seconds to import)
if [ -n "$modules" ]; then
  if [ -x /usr/bin/python3 ]; then
    /usr/bin/python3 - "$suite" $modules <<'PYEOF' || bad=1
import importlib.util, sys
suite, bad = sys.argv[1], 0
for arg in sys.argv[2:]:
    name, pkg = arg.split("=", 1)
    try:
        found = importlib.util.find_spec(name) is not None
    except ImportError:  # a parent package missing
        found = False
    if not found:
        print("%s: missing python %s: package %s (make deps installs it)" % (suite, name, pkg))
        bad = 1
sys.exit(bad)
PYEOF
  else
    echo "$suite: missing program /usr/bin/python3: package python3 (make deps installs it)"
    bad=1
  fi
fi
exit $bad
