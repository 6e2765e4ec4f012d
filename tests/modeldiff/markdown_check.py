"""markdown.py — tests/modeldiff, part of check.py: the diff as GitHub Flavored Markdown
(`onnxviz diff --format md`, GET /diff.md) and the model card (`onnxviz inspect --format
md`), read through a real GFM renderer (Debian's cmark-gfm, with GitHub's extensions:
table, autolink, strikethrough, tagfilter) and Python's html.parser:

  * the tables parse with the right rows: as many node, tensor and attribute rows as the
    JSON document has changes, every row as many cells as its header, the tensors' max
    absolute and relative differences equal to the JSON's;
  * hostile names stay text: node, tensor, op type, attribute, dim, producer and metadata
    strings with pipes, backticks, <script>, ](javascript:, HTML comments, entities,
    autolinks, emphasis, line breaks and bidi overrides appear verbatim inside <code> and
    nowhere else — no element, link, image or comment that we did not write;
  * the 65,536-byte bound on a big diff (transformer_12x12 against a copy with every
    weight and node name changed), ending its list with "… and N more nodes", N the rows
    left out;
  * the CLI and GET /diff.md give the same bytes (with --base-url on both), and the
    route's errors;
  * docs/github-actions-diff.yml is valid YAML that runs the image and posts the comment.
"""
import html.parser
import json
import os
import re
import subprocess

import numpy as np
import onnx
import yaml
from onnx import helper, numpy_helper

MD_MAX = 65536
BASE = "https://onnxviz.example:8443/viz"

HOSTILE = [
    "a|b",
    "x`y``z",
    "`",
    "<script>alert(1)</script>",
    "](javascript:alert(1))",
    "[click](javascript:alert(1))",
    "<img src=x onerror=alert(1)>",
    "*em* _u_ **b** ~~s~~",
    "&lt;&#60;&amp;",
    "http://evil.example/x www.evil.example a@evil.example",
    "@everyone #1",
    "trailing\\",
    "a\\|b",
    " spaced ",
    "line\nbreak|",
    "\u202eevil",
    "| --- |",
    "<!-- c -->",
    "\\`x\\`",
]


def shown(s):
    """What a reader sees of a model string: control characters as spaces, bidi
    controls as U+FFFD (md.c)."""
    out = []
    for ch in s:
        if ord(ch) < 0x20 or 0x7F <= ord(ch) < 0xA0:
            out.append(" ")
        elif ch in "\u200e\u200f\u061c" or 0x202A <= ord(ch) <= 0x202E or 0x2066 <= ord(ch) <= 0x2069:
            out.append("\ufffd")
        else:
            out.append(ch)
    return "".join(out)


class Html(html.parser.HTMLParser):
    """Tables (list of rows of cell texts, the header row first), <code> texts, and every
    tag, link and image."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tables, self.codes, self.tags, self.links, self.images, self.comments = [], [], [], [], [], []
        self._cell = None
        self._code = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.append(tag)
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self._cell = ""
        elif tag == "code":
            self._code = ""
        elif tag == "a":
            self.links.append(a.get("href", ""))
        elif tag == "img":
            self.images.append(a.get("src", ""))

    def handle_endtag(self, tag):
        if tag in ("td", "th"):
            self.tables[-1][-1].append(self._cell)
            self._cell = None
        elif tag == "code":
            self.codes.append(self._code)
            self._code = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell += data
        if self._code is not None:
            self._code += data

    def handle_comment(self, data):
        self.comments.append(data)


def gfm(md):
    p = subprocess.run(["cmark-gfm", "-e", "table", "-e", "autolink", "-e", "strikethrough",
                        "-e", "tagfilter"], input=md, capture_output=True, timeout=60)
    h = Html()
    h.feed(p.stdout.decode("utf-8"))
    return h, p.stdout.decode("utf-8")


def table(h, first_header):
    for t in h.tables:
        if t and t[0] and t[0][: len(first_header)] == first_header:
            return t
    return None


def hostile_pair(d):
    """A chain of nodes named HOSTILE (Mul by a weight named like it, then LeakyRelu), a
    custom op with a hostile op type and domain, a dim with a hostile name; B changes
    every weight, every alpha, the producer and a metadata entry, removes one node and
    adds one."""
    def model(b):
        nodes, inits = [], []
        prev = "x"
        for i, name in enumerate(HOSTILE):
            w = np.full((4,), 1.0 + i, dtype=np.float32)
            if b:
                w[i % 4] += 0.5 * (i + 1)
            wname = "w:" + name
            inits.append(numpy_helper.from_array(w, wname))
            nodes.append(helper.make_node("Mul", [prev, wname], ["m%d" % i], name=name))
            if b and i == 3:
                prev = "m%d" % i  # B: the LeakyRelu after the 4th is removed
                continue
            nodes.append(helper.make_node("LeakyRelu", ["m%d" % i], ["r%d" % i], name="act " + name,
                                          alpha=0.2 if b else 0.1))
            prev = "r%d" % i
        nodes.append(helper.make_node("Evil|Op`<b>" + ("|2" if b else ""), [prev], ["c"], name="custom <script>",
                                      domain="evil.domain|<i>"))
        prev = "c"
        if b:
            nodes.append(helper.make_node("Relu", [prev], ["added"], name="added ](javascript:alert(1))"))
            prev = "added"
        nodes.append(helper.make_node("Identity", [prev], ["y"], name="out"))
        g = helper.make_graph(nodes, "g|<script>", [helper.make_tensor_value_info(
            "x", onnx.TensorProto.FLOAT, ["`b|a`<i>", 4])],
            [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, None)], inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 14),
                                                helper.make_opsetid("evil.domain|<i>", 1)],
                              producer_name="<script>alert(1)</script>|pwn" if b else "torch")
        onnx.helper.set_model_props(m, {"k|`<b>": "v](javascript:x)" if b else "v"})
        return m
    pa, pb = os.path.join(d, "hostile_a.onnx"), os.path.join(d, "hostile_b.onnx")
    onnx.save(model(False), pa)
    onnx.save(model(True), pb)
    return pa, pb


def big_pair(d, corpus):
    """transformer_12x12 and a copy with one element of every float weight changed and
    every node renamed: thousands of changes."""
    src = os.path.join(corpus, "models", "real", "transformer_12x12.onnx")
    m = onnx.load(src)
    for t in m.graph.initializer:
        a = numpy_helper.to_array(t)
        if a.dtype.kind == "f" and a.size:
            a = a.copy()
            a.flat[0] += 0.25
            t.CopyFrom(numpy_helper.from_array(a, t.name))
    for n in m.graph.node:
        n.name = n.name + "|v2"
    pb = os.path.join(d, "transformer_b.onnx")
    onnx.save(m, pb)
    return src, pb


def pressure_pair(d, n=300):
    """Every list of the Markdown over its room at once: n opsets, metadata entries, op
    types, op type changes, attributes, tensors and nodes that differ, with long names."""
    def model(b):
        long = "x" * 100
        nodes, inits, prev = [], [], "x"
        for i in range(n):
            w = np.full((2,), float(i), dtype=np.float32)
            if b:
                w[0] += 1
            inits.append(numpy_helper.from_array(w, "w%03d_%s" % (i, long)))
            nodes.append(helper.make_node("Op%s%03d" % ("B" if b else "A", i), [prev, "w%03d_%s" % (i, long)],
                                          ["v%d" % i], name="node %03d %s" % (i, long),
                                          domain="d%03d.%s" % (i, long), tag=("b" if b else "a") * 100))
            prev = "v%d" % i
        g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info(prev, onnx.TensorProto.FLOAT, [2])], inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 14)] +
                              [helper.make_opsetid("d%03d.%s" % (i, long), 2 if b else 1) for i in range(n)])
        onnx.helper.set_model_props(m, {"key %03d %s" % (i, long): ("b" if b else "a") * 100 for i in range(n)})
        return m
    pa, pb = os.path.join(d, "pressure_a.onnx"), os.path.join(d, "pressure_b.onnx")
    onnx.save(model(False), pa)
    onnx.save(model(True), pb)
    return pa, pb


def t_pressure(ctx, d):
    check = ctx.check
    pa, pb = pressure_pair(d)
    rc, out, err = ctx.run("diff", pa, pb, "--format", "md", "--base-url", BASE)
    check(rc == 1 and len(out) <= MD_MAX, "pressure: every list full: %d bytes (exit %d %s)" % (len(out), rc, err))
    md = out.decode("utf-8")
    for what in ("opsets", "model fields", "op types", "op type changes", "attribute changes", "tensors", "nodes"):
        check(re.search(r"\n\n\u2026 and [0-9,]+ more %s\n" % what, md) is not None,
              "pressure: '… and N more %s'" % what)
    h, _ = gfm(out)
    for t in h.tables:
        check(all(len(r) == len(t[0]) for r in t), "pressure: table %s well formed" % t[0])
    check(md.endswith("\n") and "*onnxviz diff: A is the old model, B the new one.*" in md.splitlines()[-1],
          "pressure: the closing line is there")


def no_markup_but_ours(h, base, label, check):
    """Nothing the names could have made: only our elements, links and image."""
    ours = {"h3", "h4", "p", "table", "thead", "tbody", "tr", "th", "td", "code", "strong", "em", "a", "img"}
    check(set(h.tags) <= ours, "%s: only our elements (%s)" % (label, sorted(set(h.tags) - ours)))
    check(not h.comments, "%s: no HTML comment (%s)" % (label, h.comments[:2]))
    check(all(base is not None and l.startswith(base + "/") for l in h.links),
          "%s: every link is ours (%s)" % (label, [l for l in h.links if not (base and l.startswith(base))][:3]))
    check(all(base is not None and s.startswith(base + "/diff.png?") for s in h.images),
          "%s: the only image is the diff's PNG (%s)" % (label, h.images[:3]))
    check(not any("javascript:" in l for l in h.links), "%s: no javascript: link" % label)


def t_diff_md(ctx, pa, pb, doc, label, base):
    check = ctx.check
    args = ["diff", pa, pb, "--format", "md"] + (["--base-url", base] if base else [])
    rc, out, err = ctx.run(*args)
    check(rc == 1, "%s: diff --format md exits 1 (%d %s)" % (label, rc, err))
    check(len(out) <= MD_MAX, "%s: %d bytes, within GitHub's 65,536" % (label, len(out)))
    md = out.decode("utf-8")
    h, page = gfm(out)
    check("<script" not in page and "<img src=x" not in page and "<!--" not in page,
          "%s: no <script>, no foreign <img>, no comment in the HTML" % label)
    no_markup_but_ours(h, base, label, check)
    for t in h.tables:
        check(all(len(r) == len(t[0]) for r in t), "%s: every row of table %s has %d cells" %
              (label, t[0], len(t[0])))
    s = doc["summary"]
    nodes = table(h, ["", "node", "op type", "what changed"])
    total = s["added"] + s["removed"] + s["changed"]
    more = re.search(r"\u2026 and ([0-9,]+) more nodes\n", md)
    left = int(more.group(1).replace(",", "")) if more else 0
    check(nodes is not None and len(nodes) - 1 + left == total,
          "%s: node rows %s + %d left out = %d changed nodes" % (label, nodes and len(nodes) - 1, left, total))
    return md, h, nodes, left


def t_hostile(ctx, pa, pb):
    check = ctx.check
    out = os.path.join(ctx.TMP, "hostile.json")
    ctx.run("diff", pa, pb, "-o", out)
    doc = json.load(open(out))
    md, h, nodes, left = t_diff_md(ctx, pa, pb, doc, "hostile", BASE)
    check(left == 0, "hostile: every node listed")
    codes = set(h.codes)
    for name in HOSTILE:
        check(shown(name) in codes, "hostile: node name %r is a <code> text verbatim" % name)
        check(shown("w:" + name) in codes, "hostile: tensor name %r verbatim" % ("w:" + name))
    for s in ("Evil|Op`<b>", "Evil|Op`<b>|2", "evil.domain|<i>", "<script>alert(1)</script>|pwn", "k|`<b>",
              "v](javascript:x)", "added ](javascript:alert(1))"):
        check(s in codes, "hostile: %r verbatim in <code>" % s)
    # rows: nodes (checked above), tensors with the JSON's figures, attributes
    tens = table(h, ["", "tensor", "change"])
    want = {shown(t["name"]): t for t in doc["tensors"] if t["status"] != "unchanged"}
    check(tens is not None and len(tens) - 1 == len(want),
          "hostile: %s tensor rows for %d changed tensors" % (tens and len(tens) - 1, len(want)))
    for row in (tens or [])[1:]:
        t = want.get(row[1])
        ok = t is not None and abs(float(row[4]) - t["max_abs_diff"]) <= 1e-3 * abs(t["max_abs_diff"]) \
            and abs(float(row[5]) - t["max_rel_diff"]) <= 1e-3 * abs(t["max_rel_diff"])
        check(ok, "hostile: tensor %r figures %s / %s = the JSON's" % (row[1], row[4:6], t and (t["max_abs_diff"], t["max_rel_diff"])))
    attrs = table(h, ["node", "attribute", "A", "B"])
    nattr = sum(1 for n in doc["nodes"] for c in n["changes"] if c["kind"] == "attribute")
    check(attrs is not None and len(attrs) - 1 == nattr and all(r[2] == "0.1" and r[3] == "0.2" for r in attrs[1:]),
          "hostile: %s attribute rows, alpha 0.1 → 0.2, for %d changes" % (attrs and len(attrs) - 1, nattr))
    opsets = table(h, ["domain", "A", "B"])
    check(opsets is None, "hostile: no opset changed, no opset table")
    changes = table(h, ["A", "B", "nodes"])
    check(changes == [["A", "B", "nodes"], ["Evil|Op`<b>", "Evil|Op`<b>|2", "1"]],
          "hostile: the op type change %s" % changes)
    ops = table(h, ["op type", "A", "B", "change"])
    check(ops is not None and ["evil.domain|<i> Evil|Op`<b>", "1", "0", "\u22121"] in ops and
          ["Relu", "0", "1", "+1"] in ops and ["LeakyRelu", str(len(HOSTILE)), str(len(HOSTILE) - 1), "\u22121"] in ops,
          "hostile: op type counts %s" % ops)
    check("[![B drawn with the changes marked](%s/diff.png?a=" % BASE in md and "](%s/#/diff/" % BASE in md,
          "hostile: the PNG and the diff view linked under --base-url")
    return md


def t_card(ctx, pa):
    check = ctx.check
    rc, out, err = ctx.run("inspect", pa, "--format", "md")
    check(rc == 0 and len(out) <= MD_MAX, "inspect --format md: exit %d %s" % (rc, err))
    h, page = gfm(out)
    check("<script" not in page and "<!--" not in page and not h.links and not h.images,
          "card: no script, comment, link or image")
    ins = table(h, ["name", "type", "shape"])
    check(ins is not None and ins[1:] == [["x", "f32", "`b|a`<i>×4"]], "card: inputs %s" % ins)
    ops = table(h, ["op type", "nodes"])
    check(ops is not None and ["Mul", str(len(HOSTILE))] in ops and ["evil.domain|<i> Evil|Op`<b>", "1"] in ops,
          "card: op histogram %s" % (ops and ops[:3]))
    facts = {r[0]: r[1] for r in (h.tables[0] if h.tables else [])[1:]}
    check(facts.get("producer") == "torch" and facts.get("graph") == "g|<script>" and
          facts.get("opsets", "").startswith("ai.onnx 14"), "card: facts %s" % facts)


def t_route(ctx, pa, pb, cli_md, label):
    """GET /diff.md equals the CLI's bytes (same --base-url); errors."""
    check = ctx.check
    s = ctx.Server("--base-url", BASE + "/")
    try:
        a, b = ctx.upload(s, pa), ctx.upload(s, pb)
        st, hd, body = ctx.curl("%s/diff.md?a=%s&b=%s" % (s.base, a, b))
        check(st == 200 and hd.get("content-type") == "text/markdown; charset=utf-8",
              "%s: GET /diff.md %d %s" % (label, st, hd.get("content-type")))
        check(body == cli_md.encode("utf-8"), "%s: GET /diff.md is the CLI's Markdown byte for byte" % label)
        st2, _, _ = ctx.curl("%s/diff.md?a=%s&b=%s" % (s.base, a, b), "-H", "If-None-Match: " + hd.get("etag", "x"))
        check(st2 == 304, "%s: /diff.md cached (304: %d)" % (label, st2))
        for q, want in (("a=%s" % a, 400), ("a=%s&b=%s&c=1" % (a, b), 400), ("a=%s&a=%s&b=%s" % (a, a, b), 400),
                        ("a=%s&b=nothex" % a, 400), ("a=%s&b=%s" % (a, "0" * 64), 404),
                        ("a=%s&b=%s" % ("0" * 64, b), 404)):
            st, _, body = ctx.curl("%s/diff.md?%s" % (s.base, q))
            check(st == want, "%s: /diff.md?%s: %d (want %d)" % (label, q[:40], st, want))
    finally:
        s.stop()


def t_workflow(ctx):
    check = ctx.check
    path = os.path.join(ctx.ROOT, "docs", "github-actions-diff.yml")
    wf = yaml.safe_load(open(path))
    on = wf.get(True, wf.get("on"))  # YAML 1.1 reads the key `on` as true
    check(isinstance(on, dict) and "pull_request" in on, "workflow: runs on pull_request")
    steps = [s for j in wf["jobs"].values() for s in j["steps"]]
    runs = "\n".join(s.get("run", "") for s in steps)
    check("docker run" in runs and "diff" in runs and "--format md" in runs,
          "workflow: runs onnxviz diff --format md in the image")
    check("gh pr comment" in runs or any("github-script" in s.get("uses", "") for s in steps),
          "workflow: posts the Markdown as a PR comment")
    perms = [j.get("permissions", wf.get("permissions", {})) for j in wf["jobs"].values()]
    check(all(p.get("pull-requests") == "write" for p in perms), "workflow: pull-requests: write")


def main(ctx, corpus):
    """ctx: check.py's module (check, run, Server, curl, upload, TMP, ROOT)."""
    d = os.path.join(ctx.TMP, "md")
    os.makedirs(d, exist_ok=True)
    pa, pb = hostile_pair(d)
    md = t_hostile(ctx, pa, pb)
    t_card(ctx, pa)
    t_pressure(ctx, d)
    if os.path.exists(os.path.join(corpus, "models", "real", "transformer_12x12.onnx")):
        ba, bb = big_pair(d, corpus)
        out = os.path.join(ctx.TMP, "big.json")
        ctx.run("diff", ba, bb, "-o", out)
        big, _, _, left = t_diff_md(ctx, ba, bb, json.load(open(out)), "transformer_12x12", BASE)
        ctx.check(left > 0 and len(big.encode()) <= MD_MAX and len(big.encode()) > MD_MAX - 4096,
                  "transformer_12x12: cut at the bound with '… and %d more nodes' (%d bytes)" % (left, len(big.encode())))
        ctx.check(big.endswith("*onnxviz diff: A is the old model, B the new one.* [JSON](%s/models/" % BASE
                               + big.split("/models/")[-1]), "transformer_12x12: the closing line is kept")
        big_pair_files = (ba, bb, big)
    else:
        print("SKIP the 65,536 bound: transformer_12x12.onnx is not in the corpus (%s)" % corpus)
        big_pair_files = None
    t_workflow(ctx)
    return md, (pa, pb), big_pair_files


def http(ctx, hostile, md, big):
    t_route(ctx, hostile[0], hostile[1], md, "hostile")
    if big is not None:
        t_route(ctx, big[0], big[1], big[2], "transformer_12x12")
