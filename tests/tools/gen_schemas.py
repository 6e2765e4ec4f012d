#!/usr/bin/python3
"""gen_schemas.py — writes parser/schema_table.c, the operator schemas onnxviz carries.

Not run by `make` (the table is committed); `make schemas` runs it.  docs/schemas.md says
where the sources come from and how to get them.  Sources, in order of authority:

  1. python3-onnx's schema API (onnx.defs, Debian's onnx 1.12: opsets 1..17 of the default
     domain, ai.onnx.ml 1..3, ai.onnx.preview.training 1);
  2. ONNX's operator changelogs (docs/Changelog.md, docs/Changelog-ml.md of an onnx
     checkout given with --onnx) for every version the API does not know, up to the newest;
     onnx/helper.py's VERSION_TABLE and onnx/onnx.in.proto's IR_VERSION for which IR version
     each opset needs;
  3. onnxruntime's docs/ContribOperators.md (--contrib) for com.microsoft.

Facts only: names, optional/variadic flags, attribute types, required flags and defaults,
type constraints, input/output counts, deprecation.  No prose is copied.

The changelogs are parsed for every version, also those the API knows: --verify compares
the two for every version both describe and fails on any difference, so the markdown
parser is checked against the API on the ~450 schemas they share.

Usage:
  gen_schemas.py --onnx DIR --contrib FILE [--out parser/schema_table.c] [--verify]
                 [--onnx-ref TEXT] [--contrib-ref TEXT]
"""
import argparse
import ast
import collections
import os
import re
import sys

import numpy as np
from onnx import defs

# ---------------------------------------------------------------------------------------
# Types

DTYPES = {
    "float": 1, "uint8": 2, "int8": 3, "uint16": 4, "int16": 5, "int32": 6, "int64": 7,
    "string": 8, "bool": 9, "float16": 10, "double": 11, "uint32": 12, "uint64": 13,
    "complex64": 14, "complex128": 15, "bfloat16": 16, "float8e4m3fn": 17,
    "float8e4m3fnuz": 18, "float8e5m2": 19, "float8e5m2fnuz": 20, "uint4": 21, "int4": 22,
    "float4e2m1": 23, "float8e8m0": 24, "uint2": 25, "int2": 26,
}

ATTR_TYPES = {  # changelog spelling -> AttributeProto.AttributeType
    "float": 1, "int": 2, "string": 3, "tensor": 4, "graph": 5, "list of floats": 6,
    "list of ints": 7, "list of strings": 8, "list of tensors": 9, "list of graphs": 10,
    "sparse_tensor": 11, "list of sparse_tensors": 12, "type_proto": 13,
    "list of type_protos": 14,
}

# domain order in the table (index = the table's domain number)
DOMAINS = ["", "ai.onnx.ml", "ai.onnx.preview.training", "ai.onnx.preview", "com.microsoft"]

# port flags (parser/schema.h)
P_OPTIONAL, P_VARIADIC, P_HETERO = 1, 2, 4
INF = 0xFFFF


def typeset_of(type_strs):
    """(tensor, seq, optional tensor, optional seq, sparse, other) bit masks."""
    m = [0, 0, 0, 0, 0, 0]
    for t in type_strs:
        t = t.replace(" ", "")
        pats = [(r"tensor\((\w+)\)", 0), (r"seq\(tensor\((\w+)\)\)", 1),
                (r"optional\(tensor\((\w+)\)\)", 2), (r"optional\(seq\(tensor\((\w+)\)\)\)", 3),
                (r"sparse_tensor\((\w+)\)", 4)]
        for pat, k in pats:
            g = re.fullmatch(pat, t)
            if g and g.group(1) in DTYPES:
                m[k] |= 1 << DTYPES[g.group(1)]
                break
        else:
            m[5] = 1  # maps, sequences of maps, opaque: not modelled, never checked
    return tuple(m)


def split_types(text):
    """'tensor(a), map(string, int64)' -> ['tensor(a)', 'map(string, int64)']."""
    out, depth, cur = [], 0, ""
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


def json_str(s):
    out = '"'
    for ch in s:
        if ch in '"\\':
            out += "\\" + ch
        elif ord(ch) < 0x20:
            out += "\\u%04x" % ord(ch)
        else:
            out += ch
    return out + '"'


def json_float(f):
    f32 = np.float32(f)
    if not np.isfinite(f32):
        raise ValueError("non-finite default %r" % f)
    text = str(f32)
    if re.fullmatch(r"-?\d+", text):
        text += ".0"
    return text


def default_json(atype, value):
    """A default as the JSON literal the table stores (docs/schemas.md)."""
    if atype == 1:
        return json_float(value)
    if atype == 2:
        return str(int(value))
    if atype == 3:
        return json_str(value.decode("utf-8") if isinstance(value, bytes) else value)
    if atype == 6:
        return "[" + ",".join(json_float(v) for v in value) + "]"
    if atype == 7:
        return "[" + ",".join(str(int(v)) for v in value) + "]"
    if atype == 8:
        return "[" + ",".join(json_str(v.decode("utf-8") if isinstance(v, bytes) else v)
                              for v in value) + "]"
    return None  # tensors, graphs: no default worth carrying


# ---------------------------------------------------------------------------------------
# One schema version, whichever source it came from

Port = collections.namedtuple("Port", "name type flags")          # type: "T" or a type string
Attr = collections.namedtuple("Attr", "name type required default")  # default: JSON text/None
Schema = collections.namedtuple(
    "Schema", "domain name since deprecated inputs outputs attrs tcs min_in max_in min_out "
              "max_out")


def from_api(s):
    def ports(params):
        out = []
        for p in params:
            opt = int(p.option.value) if hasattr(p.option, "value") else int(p.option)
            flags = {0: 0, 1: P_OPTIONAL, 2: P_VARIADIC}[opt]
            if opt == 2 and not p.isHomogeneous:
                flags |= P_HETERO
            out.append(Port(p.name, p.typeStr, flags))
        return tuple(out)

    attrs = []
    for name in sorted(s.attributes):
        a = s.attributes[name]
        at = int(a.type.value) if hasattr(a.type, "value") else int(a.type)
        dflt = None
        if a.default_value.name:
            from onnx import helper
            dflt = default_json(at, helper.get_attribute_value(a.default_value))
        attrs.append(Attr(name, at, bool(a.required), dflt))
    tcs = tuple((t.type_param_str, tuple(t.allowed_type_strs)) for t in s.type_constraints)
    cap = lambda n: INF if n >= INF else n  # noqa: E731
    return Schema(s.domain, s.name, s.since_version, bool(s.deprecated), ports(s.inputs),
                  ports(s.outputs), tuple(attrs), tcs, s.min_input, cap(s.max_input),
                  s.min_output, cap(s.max_output))


HEAD_RE = re.compile(r'^### (?:<sub>experimental</sub> )?<a name="[^"]*"></a>(?:<a name="[^"]*">)?'
                     r'\*\*([A-Za-z0-9_.]+?)(?:-(\d+))?\*\*( \(deprecated\))?</a>')
DT_RE = re.compile(r"^<dt><tt>([^<]*)</tt>(?: \(([^)]*)\))? : (.*)</dt>\s*$")
COUNT_RE = re.compile(r"^#### (Inputs|Outputs)(?: \((\d+) - (\d+|&#8734;)\))?\s*$")


def attr_default_from_text(atype, text):
    if atype == 2:
        return str(int(text))
    if atype == 1:
        return json_float(float(text.strip("()")))
    if atype == 3:
        return json_str(text)
    if atype in (6, 7, 8):
        vals = ast.literal_eval(text)
        if atype == 6:
            return "[" + ",".join(json_float(float(v)) for v in vals) + "]"
        if atype == 7:
            return "[" + ",".join(str(int(v)) for v in vals) + "]"
        return "[" + ",".join(json_str(str(v)) for v in vals) + "]"
    return None


def parse_markdown(path, default_domain=None):
    """Every operator version a changelog (or ContribOperators.md) describes."""
    out = []
    cur = None
    section = None
    counts = {}

    def finish():
        if cur is None:
            return
        ins, outs = tuple(cur["inputs"]), tuple(cur["outputs"])

        def bounds(kind, ports):
            if kind in counts:
                lo, hi = counts[kind]
                return lo, hi
            return len(ports), len(ports)
        min_in, max_in = bounds("Inputs", ins)
        min_out, max_out = bounds("Outputs", outs)
        out.append(Schema(cur["domain"], cur["name"], cur["since"], cur["deprecated"], ins,
                          outs, tuple(sorted(cur["attrs"])), tuple(cur["tcs"]), min_in, max_in,
                          min_out, max_out))

    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            m = HEAD_RE.match(line)
            if m:
                finish()
                full, ver, dep = m.group(1), m.group(2), m.group(3)
                domain, name = "", full
                for d in sorted(DOMAINS, key=len, reverse=True):
                    if d and full.startswith(d + "."):
                        domain, name = d, full[len(d) + 1:]
                        break
                if default_domain is not None and domain == "":
                    domain = default_domain
                cur = {"domain": domain, "name": name, "since": int(ver) if ver else None,
                       "deprecated": bool(dep), "inputs": [], "outputs": [], "attrs": [],
                       "tcs": []}
                counts = {}
                section = None
                continue
            if cur is None:
                continue
            if line.startswith("## ") or line.startswith("# "):
                finish()
                cur = None
                continue
            if line.startswith("#### "):
                m = COUNT_RE.match(line)
                if m:
                    section = m.group(1)
                    if m.group(2) is not None:
                        hi = INF if m.group(3) == "&#8734;" else int(m.group(3))
                        counts[section] = (int(m.group(2)), hi)
                else:
                    section = line[5:].strip()
                continue
            if section == "Version":
                m = re.search(r"(available|deprecated) since version (\d+) of", line)
                if m:
                    cur["since"] = int(m.group(2))
                    if m.group(1) == "deprecated":
                        cur["deprecated"] = True
                elif line.startswith("No versioning maintained"):
                    cur["since"] = 1
                continue
            m = DT_RE.match(line)
            if not m:
                continue
            name, opts, rest = m.group(1), m.group(2) or "", m.group(3)
            if section == "Attributes":
                am = re.fullmatch(r"(list of [a-z_]+|[a-z_]+)(?: \((required|default is (.*))\))?",
                                  rest)
                if not am:
                    raise SystemExit("%s: cannot read attribute line: %s" % (path, line))
                at = ATTR_TYPES[am.group(1)]
                required = am.group(2) == "required"
                dflt = None
                if am.group(3) is not None:
                    dflt = attr_default_from_text(at, am.group(3))
                cur["attrs"].append(Attr(name, at, required, dflt))
            elif section in ("Inputs", "Outputs"):
                flags = 0
                for o in [x.strip() for x in opts.split(",") if x.strip()]:
                    if o == "optional":
                        flags |= P_OPTIONAL
                    elif o == "variadic":
                        flags |= P_VARIADIC
                    elif o == "heterogeneous":
                        flags |= P_HETERO
                    elif o not in ("differentiable", "non-differentiable"):
                        raise SystemExit("%s: unknown port option %r" % (path, o))
                cur["inputs" if section == "Inputs" else "outputs"].append(
                    Port(name, rest.strip(), flags))
            elif section == "Type Constraints":
                cur["tcs"].append((name, tuple(split_types(rest))))
    finish()
    for s in out:
        if s.since is None:
            raise SystemExit("%s: %s has no version" % (path, s.name))
    return out


def count_problems(schemas):
    """Where a document's "Inputs (a - b)" header disagrees with the ports it lists (the
    last required port fixes the minimum, a variadic last port lifts the maximum): a sign
    of a misread or mistyped document."""
    out = []
    for s in schemas:
        for kind, ports, lo, hi in (("inputs", s.inputs, s.min_in, s.max_in),
                                    ("outputs", s.outputs, s.min_out, s.max_out)):
            if not ports:
                continue
            variadic = ports[-1].flags & P_VARIADIC
            want_hi = INF if variadic else len(ports)
            required = [i for i, p in enumerate(ports) if not p.flags & (P_OPTIONAL | P_VARIADIC)]
            want_lo = required[-1] + 1 if required else 0
            if variadic:
                want_lo = max(want_lo, len(ports))  # at least one value
            if hi != want_hi or not want_lo - (1 if variadic else 0) <= lo <= want_lo:
                out.append("%s %s-%d: %s (%d - %d) but lists %r" % (
                    s.domain or "ai.onnx", s.name, s.since, kind, lo, hi,
                    [p.name for p in ports]))
    return out


def newest_opsets(path):
    """{domain: newest opset version} from a changelog's '## Version N of ...' headers."""
    res = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = re.match(r"^## Version (\d+) of (?:the )?(?:default ONNX|'([^']*)') operator set",
                         line)
            if m:
                d = m.group(2) or ""
                res[d] = max(res.get(d, 0), int(m.group(1)))
    return res


def version_table(helper_py, proto):
    """[(ir, ai.onnx opset, ai.onnx.ml opset, training opset)] from helper.py, newest IR."""
    with open(helper_py, encoding="utf-8") as f:
        src = f.read()
    m = re.search(r"^VERSION_TABLE[^=]*=\s*(\[.*?^\])", src, re.S | re.M)
    rows = ast.literal_eval(m.group(1))
    with open(proto, encoding="utf-8") as f:
        ir = re.search(r"^\s*IR_VERSION = (0x[0-9A-Fa-f]+);", f.read(), re.M)
    return [tuple((list(r[1:5]) + [0])[:4]) for r in rows], int(ir.group(1), 16)


# ---------------------------------------------------------------------------------------
# Comparing the two sources (--verify)

# Versions where the changelog of the newer onnx says something else than onnx 1.12's API.
# The API wins for every version it knows (the order of authority; it is also what
# the differential test's onnx.checker uses).
KNOWN_DIFFERENCES = {
    ("", "Upsample", 10): "the changelog lists the deprecated version without a signature",
    ("", "Scatter", 11): "the changelog lists the deprecated version without a signature",
    ("", "Erf", 13): "later onnx narrowed T to float types",
    ("", "GridSample", 16): "later onnx swapped the type parameters of grid and Y",
}

def norm(s):
    """What the table carries, for comparison (port type strings without spaces)."""
    fix = lambda ps: tuple(Port(p.name, p.type.replace(" ", ""), p.flags) for p in ps)  # noqa
    tcs = tuple(sorted((n, tuple(sorted(t.replace(" ", "") for t in ts))) for n, ts in s.tcs))
    return s._replace(inputs=fix(s.inputs), outputs=fix(s.outputs), tcs=tcs)


def float_close(a, b):
    if a == b:
        return True
    try:
        x, y = ast.literal_eval(a), ast.literal_eval(b)
    except (ValueError, SyntaxError):
        return False
    if isinstance(x, list) and isinstance(y, list):
        return len(x) == len(y) and all(float_close(json_float(p), json_float(q))
                                        for p, q in zip(x, y))
    if isinstance(x, float) and isinstance(y, float):
        return round(x, 5) == round(y, 5) or abs(x - y) <= 1e-5 * max(abs(x), abs(y))
    return False


def differences(a, b):
    a, b = norm(a), norm(b)
    diffs = []
    for field in Schema._fields:
        va, vb = getattr(a, field), getattr(b, field)
        if field == "attrs":
            if [x[:3] for x in va] != [x[:3] for x in vb]:
                diffs.append("attrs %r != %r" % ([x[:3] for x in va], [x[:3] for x in vb]))
            for x, y in zip(va, vb):
                if x.default != y.default and not float_close(x.default or "", y.default or ""):
                    diffs.append("default of %s: %r != %r" % (x.name, x.default, y.default))
        elif va != vb:
            diffs.append("%s: %r != %r" % (field, va, vb))
    return diffs


# ---------------------------------------------------------------------------------------
# Merging

def exact_defaults(s, api_latest):
    """Changelog defaults are rounded to 5 decimals; where the newest API version of the
    same op has the same attribute with a default that rounds the same, take its exact
    value."""
    ref = api_latest.get((s.domain, s.name))
    if ref is None:
        return s
    exact = {a.name: a for a in ref.attrs}
    attrs = []
    for a in s.attrs:
        e = exact.get(a.name)
        if (e is not None and e.type == a.type and e.default is not None and
                a.default is not None and e.default != a.default and
                float_close(e.default, a.default)):
            a = a._replace(default=e.default)
        attrs.append(a)
    return s._replace(attrs=tuple(attrs))


def collect(args):
    api = {}
    for s in defs.get_all_schemas_with_history():
        sc = from_api(s)
        api[(sc.domain, sc.name, sc.since)] = sc
    api_latest = {}
    for (d, n, v), sc in sorted(api.items(), key=lambda kv: kv[0][2]):
        api_latest[(d, n)] = sc

    onnx = args.onnx
    md = parse_markdown(os.path.join(onnx, "docs", "Changelog.md"))
    md += parse_markdown(os.path.join(onnx, "docs", "Changelog-ml.md"))
    contrib = parse_markdown(args.contrib, default_domain="com.microsoft")
    for s in contrib:
        if s.domain != "com.microsoft":
            raise SystemExit("contrib op outside com.microsoft: %s %s" % (s.domain, s.name))

    inconsistent = count_problems(md + contrib)
    for line in inconsistent:
        print("counts disagree: " + line, file=sys.stderr)
    if args.verify and inconsistent:
        raise SystemExit("%d schemas whose counts disagree with their ports" % len(inconsistent))
    merged = dict(api)
    checked, bad, known = 0, 0, 0
    for s in md:
        key = (s.domain, s.name, s.since)
        if s.domain not in DOMAINS:
            raise SystemExit("unknown domain %r" % s.domain)
        if key in api:
            checked += 1
            d = differences(api[key], s)
            if d:
                bad += 1
                if key in KNOWN_DIFFERENCES:
                    known += 1
                    if args.verify:
                        print("known difference: %s %s-%d: %s" % (
                            s.domain or "ai.onnx", s.name, s.since, KNOWN_DIFFERENCES[key]),
                            file=sys.stderr)
                elif args.verify:
                    print("differs: %s %s-%d: %s" % (s.domain or "ai.onnx", s.name, s.since,
                                                     "; ".join(d)), file=sys.stderr)
            continue
        if key in merged:
            raise SystemExit("duplicate %r" % (key,))
        merged[key] = exact_defaults(s, api_latest)
    for s in contrib:
        merged[(s.domain, s.name, s.since)] = s
    newest = newest_opsets(os.path.join(onnx, "docs", "Changelog.md"))
    newest.update(newest_opsets(os.path.join(onnx, "docs", "Changelog-ml.md")))
    newest["com.microsoft"] = 1
    table, ir = version_table(os.path.join(onnx, "onnx", "helper.py"),
                              os.path.join(onnx, "onnx", "onnx.in.proto"))
    if newest[""] > max(r[1] for r in table):
        # helper.py's table lags a release: the newest opset comes with the newest IR
        table.append((ir, newest[""], newest.get("ai.onnx.ml", 0),
                      newest.get("ai.onnx.preview.training", 0)))
    return merged, newest, table, ir, checked, bad, known


# ---------------------------------------------------------------------------------------
# Writing the C table

class Pool:
    """One string pool; offset 0 is the empty string (also "no default")."""

    def __init__(self):
        self.data = bytearray(b"\0")
        self.index = {"": 0}

    def add(self, s):
        if s in self.index:
            return self.index[s]
        off = len(self.data)
        self.data += s.encode("utf-8") + b"\0"
        self.index[s] = off
        return off


class Slices:
    """Shared runs of rows: a version's list reuses an identical earlier run."""

    def __init__(self):
        self.rows = []
        self.index = {}

    def add(self, rows):
        rows = tuple(rows)
        if not rows:
            return 0
        if rows in self.index:
            return self.index[rows]
        start = len(self.rows)
        self.rows.extend(rows)
        self.index[rows] = start
        return start


def c_string_lines(data):
    out, cur = [], ""
    for b in data:
        if b == 0:
            cur += "\\000"  # three digits: a digit after it must not join the escape
        elif b in (34, 92):
            cur += "\\" + chr(b)
        elif 32 <= b < 127 and b != 63:  # '?' escaped: no trigraphs
            cur += chr(b)
        else:
            cur += "\\%03o" % b
        if len(cur) > 88:
            out.append('\t"%s"' % cur)
            cur = ""
    if cur:
        out.append('\t"%s"' % cur)
    return out


def write_table(path, merged, newest, table, ir, refs):
    pool = Pool()
    for d in DOMAINS:
        pool.add(d)
    typesets = {}
    ports, attrs, tcs = Slices(), Slices(), Slices()

    def ts_index(types):
        key = typeset_of(types)
        if key not in typesets:
            typesets[key] = len(typesets)
        return typesets[key]

    ts_index(())  # typeset 0: nothing (unknown type text)
    ops = collections.OrderedDict()
    for key in sorted(merged, key=lambda k: (DOMAINS.index(k[0]), k[1].encode(), k[2])):
        ops.setdefault(key[:2], []).append(merged[key])

    versions = []
    op_rows = []
    for (domain, name), vs in ops.items():
        first = len(versions)
        for s in vs:
            tc_names = [n for n, _ in s.tcs]
            if len(tc_names) > 254:
                raise SystemExit("too many type constraints")

            def port_row(p):
                if p.type in tc_names:
                    tc = tc_names.index(p.type)
                    types = dict(s.tcs)[p.type]
                else:
                    tc = 255
                    types = (p.type,)
                return (pool.add(p.name), ts_index(types), tc, p.flags)

            in_rows = [port_row(p) for p in s.inputs]
            out_rows = [port_row(p) for p in s.outputs]
            attr_rows = [(pool.add(a.name), a.type, int(a.required),
                          pool.add(a.default) if a.default is not None else 0)
                         for a in s.attrs]
            tc_rows = [(pool.add(n), ts_index(t)) for n, t in s.tcs]
            for lst in (in_rows, out_rows, attr_rows):
                if len(lst) > 255:
                    raise SystemExit("too many rows in %s" % s.name)
            for v in (s.min_in, s.max_in, s.min_out, s.max_out, s.since):
                if not 0 <= v <= INF:
                    raise SystemExit("count out of range in %s" % s.name)
            versions.append(dict(
                op=len(op_rows), since=s.since, deprecated=int(s.deprecated),
                first_in=ports.add(in_rows), nin=len(in_rows),
                first_out=ports.add(out_rows), nout=len(out_rows),
                first_attr=attrs.add(attr_rows), nattr=len(attr_rows),
                first_tc=tcs.add(tc_rows), ntc=len(tc_rows),
                min_in=s.min_in, max_in=s.max_in, min_out=s.min_out, max_out=s.max_out))
        op_rows.append((pool.add(name), DOMAINS.index(domain), first, len(vs)))

    for n in (len(ports.rows), len(attrs.rows), len(tcs.rows), len(versions), len(typesets)):
        if n > 0xFFFF:
            raise SystemExit("table index beyond 16 bits")
    if len(pool.data) > 0xFFFFFFFF:
        raise SystemExit("string pool too large")

    L = []
    L.append("/*")
    L.append(" * schema_table.c — GENERATED by tests/tools/gen_schemas.py; do not edit.")
    L.append(" * Operator schemas as data (docs/schemas.md).  Sources:")
    for r in refs:
        L.append(" *   %s" % r)
    L.append(" * %d operators, %d versions, %d distinct ports, %d attributes, %d type "
             "constraints, %d type sets, %d bytes of strings." %
             (len(op_rows), len(versions), len(ports.rows), len(attrs.rows), len(tcs.rows),
              len(typesets), len(pool.data)))
    L.append(" */")
    L.append('#include "parser/schema.h"')
    L.append("")
    L.append("const char oxp__sch_strings[%d] =" % len(pool.data))
    # the pool's last byte is the terminating NUL the literal adds itself
    L.extend(c_string_lines(pool.data[:-1]))
    L[-1] += ";"
    L.append("")
    L.append("const oxp__sch_domain oxp__sch_domains[OXP__SCH_NDOMAINS] = {")
    for d in DOMAINS:
        L.append("\t{%d, %d}," % (pool.add(d) if d else 0, newest.get(d, 1)))
    L.append("};")
    L.append("")
    L.append("const oxp__sch_typeset oxp__sch_typesets[%d] = {" % len(typesets))
    for key, _ in sorted(typesets.items(), key=lambda kv: kv[1]):
        L.append("\t{0x%08xu, 0x%08xu, 0x%08xu, 0x%08xu, 0x%08xu, %d}," % key)
    L.append("};")
    L.append("")
    for nm, typ, rows, fmt in (
            ("ports", "oxp__sch_port", ports.rows, "\t{%d, %d, %d, %d},"),
            ("attrs", "oxp__sch_attr", attrs.rows, "\t{%d, %d, %d, %d},"),
            ("tcs", "oxp__sch_tc", tcs.rows, "\t{%d, %d},")):
        L.append("const %s oxp__sch_%s[%d] = {" % (typ, nm, max(len(rows), 1)))
        for r in rows or [(0,) * fmt.count("%d")]:
            L.append(fmt % r)
        L.append("};")
        L.append("")
    L.append("const oxp__sch_version oxp__sch_versions[%d] = {" % len(versions))
    for v in versions:
        L.append("\t{%(op)d, %(since)d, %(deprecated)d, %(nin)d, %(nout)d, %(nattr)d, %(ntc)d, "
                 "%(first_in)d, %(first_out)d, %(first_attr)d, %(first_tc)d, "
                 "%(min_in)d, %(max_in)d, %(min_out)d, %(max_out)d}," % v)
    L.append("};")
    L.append("")
    L.append("const uint32_t oxp__sch_nversions = %d;" % len(versions))
    L.append("")
    L.append("const oxp__sch_op oxp__sch_ops[%d] = {" % len(op_rows))
    for r in op_rows:
        L.append("\t{%d, %d, %d, %d}," % r)
    L.append("};")
    L.append("const uint32_t oxp__sch_nops = %d;" % len(op_rows))
    L.append("")
    L.append("/* (IR version, newest ai.onnx, ai.onnx.ml, ai.onnx.preview.training opset) from "
             "onnx/helper.py */")
    rows = sorted(set(table))
    L.append("const oxp__sch_irrow oxp__sch_irtable[%d] = {" % len(rows))
    for r in rows:
        L.append("\t{%d, %d, %d, %d}," % r)
    L.append("};")
    L.append("const uint32_t oxp__sch_nirtable = %d;" % len(rows))
    L.append("const uint32_t oxp__sch_ir_newest = %d;" % ir)
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(L) + "\n")
    return len(op_rows), len(versions)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--onnx", required=True, help="onnx checkout (docs/, onnx/helper.py)")
    ap.add_argument("--contrib", required=True, help="onnxruntime docs/ContribOperators.md")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "..", "..",
                                                  "parser", "schema_table.c"))
    ap.add_argument("--onnx-ref", default="onnx (ref not given)")
    ap.add_argument("--contrib-ref", default="onnxruntime (ref not given)")
    ap.add_argument("--verify", action="store_true",
                    help="list every difference between the changelog and the API, and fail "
                         "when there is one")
    args = ap.parse_args()
    merged, newest, table, ir, checked, bad, known = collect(args)
    import onnx
    refs = ["python3-onnx %s schema API (opsets it knows)" % onnx.__version__,
            "%s: docs/Changelog.md, docs/Changelog-ml.md, onnx/helper.py" % args.onnx_ref,
            "%s: docs/ContribOperators.md" % args.contrib_ref]
    nops, nvers = write_table(args.out, merged, newest, table, ir, refs)
    print("wrote %s: %d operators, %d versions; changelog and API agree on %d of %d "
          "versions both describe (%d known differences, %d unexpected)" %
          (args.out, nops, nvers, checked - bad, checked, known, bad - known))
    if args.verify and bad > known:
        sys.exit(1)


if __name__ == "__main__":
    main()
