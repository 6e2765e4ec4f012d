#!/usr/bin/python3
"""prereqs.py — the Python modules the suites import, against tests/prereqs.tsv.

For each suite (a folder tests/NAME/ with a run.sh), every module its scripts import (the
*.py files its run.sh or *.mjs name), at the top or inside a function, and the modules of
tests/ they import in turn (found by file name: the suite's own folder first, then the
other folders of tests/): each one
that is neither in Python's standard library nor a file of tests/ must be a `python` row
of that suite in the table.  Prints one line per module missing from the table and
exits 1 then.  Scripts a suite runs as programs (tests/bench/render_models.py from
tests/diff/folded.py) are outside what this sees: their modules are rows by hand.
Usage: prereqs.py [TABLE]  (default tests/prereqs.tsv).
"""
import ast
import glob
import os
import sys

TESTS = os.path.dirname(os.path.abspath(__file__))


def table_modules(path):
    rows = {}
    with open(path) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            suite, kind, name, _pkg = line.rstrip("\n").split("\t")
            if kind == "python":
                rows.setdefault(suite, set()).add(name.split(".")[0])
    return rows


def imports(path):
    """Top-level names of the modules path imports (absolute imports only)."""
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                yield a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.module.split(".")[0]


def local(name, folder):
    """The file of tests/ a module name is, preferring folder; or None."""
    own = os.path.join(folder, name + ".py")
    if os.path.exists(own):
        return own
    found = sorted(glob.glob(os.path.join(TESTS, "*", name + ".py")))
    return found[0] if found else None


def entries(folder):
    """The suite's scripts: its *.py files that its other files (run.sh, *.mjs) name."""
    text = ""
    for p in glob.glob(os.path.join(folder, "*")):
        if os.path.isfile(p) and not p.endswith(".py"):
            with open(p, encoding="utf-8", errors="replace") as f:
                text += f.read()
    return [p for p in sorted(glob.glob(os.path.join(folder, "*.py"))) if os.path.basename(p) in text]


def suite_modules(folder):
    """Third-party modules the suite's scripts import, each with a file that imports it."""
    seen, todo, out = set(), entries(folder), {}
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        for name in imports(path):
            if name in sys.stdlib_module_names or name == "__future__":
                continue
            dep = local(name, folder)
            if dep:
                todo.append(dep)
            else:
                out.setdefault(name, os.path.relpath(path, os.path.dirname(TESTS)))
    return out


def main():
    table = sys.argv[1] if len(sys.argv) > 1 else os.path.join(TESTS, "prereqs.tsv")
    rows = table_modules(table)
    missing = 0
    suites = sorted(os.path.basename(os.path.dirname(p))
                    for p in glob.glob(os.path.join(TESTS, "*", "run.sh")))
    for suite in suites:
        if suite == "bench":  # not a suite of `make test` (make bench)
            continue
        for name, where in sorted(suite_modules(os.path.join(TESTS, suite)).items()):
            if name not in rows.get(suite, set()):
                print("prereqs: %s imports %s (%s), which is no python row of %s in %s" %
                      (suite, name, where, suite, os.path.relpath(table)))
                missing += 1
    print("prereqs: the imports of %d suites checked, %d modules not in the table" %
          (len(suites) - ("bench" in suites), missing))
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
