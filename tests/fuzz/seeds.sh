#!/bin/sh
# seeds.sh NAME — prints the input folders of fuzz target NAME that exist, one per line:
# its committed corpus tests/fuzz/corpus/NAME/, the folders listed in tests/fuzz/NAME.seeds
# (one a line, relative to the repository; '#' starts a comment), and its saved crashers
# tests/fuzz/regressions/NAME/.  Used by run.sh (replay) and fuzz.sh (libFuzzer).
cd "$(dirname "$0")/../.." || exit 1
name=$1
{
  echo "tests/fuzz/corpus/$name"
  [ -f "tests/fuzz/$name.seeds" ] && sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "tests/fuzz/$name.seeds"
  echo "tests/fuzz/regressions/$name"
} | while read -r d; do
  [ -d "$d" ] && echo "$d"
done
