#!/bin/sh
# deps suite (first in `make test`): what the suites need is what `make deps` installs.
#   1. every package tests/prereqs.tsv names is in the Makefile's DEPS_TEST, so a
#      prerequisite missing from it fails here on every machine, also on one where the
#      package happens to be installed (issue 21: fonts-liberation2 was only in DEPS_BENCH);
#   2. every Python module a suite imports is a row of the table (tests/prereqs.py);
#   3. every row names a suite that exists, and every suite's prerequisites are on this
#      machine (each suite checks its own again when it starts);
#   4. the checks themselves: a table with a package outside DEPS_TEST, and DEPS_TEST
#      without a package the table needs, fail naming that package; a prerequisite that
#      cannot exist (program, python module, font) fails its suite naming its package;
#   5. what the rooms' files need of each other (tests/tools/include_cycles.py, issue 27):
#      service/ has no circle of more than 3 files; and the tool fails on a circle of 4.
set -u
cd "$(dirname "$0")/../.."
. tests/suite.sh
suite_start deps
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ok() { T_PASS=$((T_PASS + 1)); echo "ok   $*"; }
bad() { T_FAIL=$((T_FAIL + 1)); echo "FAIL $*"; }

# 1. the table against DEPS_TEST
if sh tests/prereqs.sh --in-deps >"$tmp/out" 2>&1; then
  ok "every package of tests/prereqs.tsv is in DEPS_TEST ($(grep -v '^#' tests/prereqs.tsv | cut -f4 | sort -u | grep -c .) packages)"
else
  bad "packages missing from DEPS_TEST:"; cat "$tmp/out"
fi
# 2. the imports
if /usr/bin/python3 tests/prereqs.py >"$tmp/out" 2>&1; then ok "$(tail -n 1 "$tmp/out")"
else bad "imports not in the table:"; cat "$tmp/out"; fi
# 3. suites named in the table exist; each one's prerequisites are here
for s in $(grep -v '^#' tests/prereqs.tsv | cut -f1 | sort -u); do
  [ "$s" = unit ] || [ -f "tests/$s/run.sh" ] && ok "the table's suite $s exists" ||
    bad "tests/prereqs.tsv names suite $s, which has no tests/$s/run.sh"
  if sh tests/prereqs.sh "$s" >"$tmp/out" 2>&1; then ok "$s: prerequisites installed"
  else bad "$s: prerequisites missing (make deps):"; cat "$tmp/out"; fi
done

# 4. the checks fail, naming the package
cp tests/prereqs.tsv "$tmp/table"
printf 'render\tfont\t/nonexistent/onnxviz-test-font.ttf\tonnxviz-test-fonts\n' >>"$tmp/table"
PREREQS_TABLE=$tmp/table sh tests/prereqs.sh --in-deps >"$tmp/out" 2>&1; rc=$?
[ $rc = 1 ] && grep -q 'package onnxviz-test-fonts (render needs font /nonexistent/onnxviz-test-font.ttf) is not in DEPS_TEST' "$tmp/out" &&
  [ "$(grep -c . "$tmp/out")" = 1 ] && ok "a row whose package is not in DEPS_TEST fails, naming it" ||
  { bad "a row outside DEPS_TEST (exit $rc):"; cat "$tmp/out"; }
# DEPS_TEST as the Makefile has it, less fonts-liberation2 (the bug of issue 21)
deps=$(MAKEFLAGS= MAKELEVEL= make -s --no-print-directory print-deps-test | tr ' ' '\n' | grep -vx fonts-liberation2 | tr '\n' ' ')
DEPS_TEST=$deps sh tests/prereqs.sh --in-deps >"$tmp/out" 2>&1; rc=$?
[ $rc = 1 ] && grep -q 'package fonts-liberation2 (render needs font .*LiberationSans-Regular.ttf) is not in DEPS_TEST' "$tmp/out" &&
  ! grep -qv fonts-liberation2 "$tmp/out" && ok "DEPS_TEST without fonts-liberation2 fails, naming it" ||
  { bad "DEPS_TEST without fonts-liberation2 (exit $rc):"; cat "$tmp/out"; }
printf 'fake\tprogram\tonnxviz-no-such-program\tonnxviz-test-pkg1\n' >"$tmp/fake"
printf 'fake\tpython\tonnxviz_no_such_module\tonnxviz-test-pkg2\n' >>"$tmp/fake"
printf 'fake\tfont\t/nonexistent/onnxviz-test-font.ttf\tonnxviz-test-pkg3\n' >>"$tmp/fake"
printf 'fake\tprogram\t/nonexistent/bin/tool\tonnxviz-test-pkg4\n' >>"$tmp/fake"
printf 'fake\tprogram\tsh\tdash\n' >>"$tmp/fake"
PREREQS_TABLE=$tmp/fake sh tests/prereqs.sh fake >"$tmp/out" 2>&1; rc=$?
for p in 1 2 3 4; do
  [ $rc = 1 ] && grep -q "^fake: missing .*: package onnxviz-test-pkg$p (make deps installs it)" "$tmp/out" &&
    ok "a missing prerequisite fails its suite naming its package ($(grep "pkg$p" "$tmp/out" | cut -d: -f2 | cut -d' ' -f3))" ||
    { bad "a missing prerequisite, package onnxviz-test-pkg$p (exit $rc):"; cat "$tmp/out"; }
done
grep -q dash "$tmp/out" && bad "a present program reported missing: $(grep dash "$tmp/out")" ||
  ok "a present program is not reported"
PREREQS_TABLE=$tmp/fake sh tests/prereqs.sh other >"$tmp/out" 2>&1 && [ ! -s "$tmp/out" ] &&
  ok "another suite's rows are not checked" || { bad "another suite's rows:"; cat "$tmp/out"; }
# an import that the table lacks (a copy of the table without the render suite's PIL)
grep -v "^render	python	PIL	" tests/prereqs.tsv >"$tmp/nopil"
/usr/bin/python3 tests/prereqs.py "$tmp/nopil" >"$tmp/out" 2>&1; rc=$?
[ $rc = 1 ] && grep -q 'render imports PIL (tests/render/textfit.py)' "$tmp/out" &&
  ok "an import missing from the table fails, naming the module and the file" ||
  { bad "an import missing from the table (exit $rc):"; cat "$tmp/out"; }

# 5. the rooms' include circles.  store/, render/, parser/ and diff/ are not there yet
# (circles of 6, 20, 22 and 6 files): a room joins this list once it has none above 3.
for room in service; do
  if /usr/bin/python3 tests/tools/include_cycles.py "$room" >"$tmp/out" 2>&1; then
    ok "$(tail -n 1 "$tmp/out")"
  else
    bad "$room/ has a circle of more than 3 files (a part calling up, or a header declaring too much):"
    cat "$tmp/out"
  fi
done
# the tool itself: a.c -> b.h -> b.c -> c.h -> c.c -> d.h -> d.c -> a.h -> a.c fails
mkdir "$tmp/room"
for x in a b c d; do
  case $x in a) n=b ;; b) n=c ;; c) n=d ;; d) n=a ;; esac
  printf 'void %s_f(void);\n' "$x" >"$tmp/room/$x.h"
  printf '#include "room/%s.h"\n#include "room/%s.h"\nvoid %s_f(void)\n{\n\t%s_f();\n}\n' \
    "$x" "$n" "$x" "$n" >"$tmp/room/$x.c"
done
/usr/bin/python3 tests/tools/include_cycles.py "$tmp/room" >"$tmp/out" 2>&1; rc=$?
[ $rc = 1 ] && grep -q '^circle of 4 files: a.c a.h b.c b.h c.c c.h d.c d.h$' "$tmp/out" &&
  ok "include_cycles.py fails on a circle of 4 files, naming them" ||
  { bad "include_cycles.py on a circle of 4 files (exit $rc):"; cat "$tmp/out"; }
# ... and passes once the last call runs down instead (d.c calls nothing of a.c)
printf '#include "room/d.h"\nvoid d_f(void)\n{\n}\n' >"$tmp/room/d.c"
/usr/bin/python3 tests/tools/include_cycles.py "$tmp/room" >"$tmp/out" 2>&1; rc=$?
[ $rc = 0 ] && ! grep -q '^circle of [2-9]' "$tmp/out" &&
  ok "include_cycles.py passes the same files without the call back up" ||
  { bad "include_cycles.py without the circle (exit $rc):"; cat "$tmp/out"; }

tally_print deps
[ "$T_FAIL" = 0 ]
