"""checks.py — what every rendering must satisfy (shared by corpus.py and hostile.py).

  check_svg(data, node_ids)     well-formed UTF-8 XML, only the elements and attributes our
                                writer emits (no script, foreignObject, a, use, style, image,
                                no on* handlers, no href anywhere, no javascript: in any
                                attribute that is not data-*), unique ids, every data-node a
                                node id of the document, edges between existing boxes;
  check_dot(path, boxes)        `dot -Tcanon` accepts it, only the attributes layout.c sets
                                (no URL, href, image, ...), one DOT node per SVG box;
  check_layout(data, svg)       layout JSON parses (strict UTF-8), same boxes as the SVG;
  display_text(b, n)            the text a box shows for model bytes (render/style.c's
                                contract: U+FFFD per invalid byte, controls as spaces, at
                                most n characters then an ellipsis);
  json_text(b)                  the string the JSON document holds for model bytes (U+FFFD
                                per invalid byte, everything else kept).
Each check returns a list of problems (strings); empty means fine.
"""
import json
import re
import subprocess
import xml.etree.ElementTree as ET

SVG_NS = "{http://www.w3.org/2000/svg}"
FORBIDDEN_ELEMENTS = {"script", "foreignObject", "a", "use", "style", "image", "iframe",
                      "embed", "object", "animate", "set", "animateMotion",
                      "animateTransform", "handler", "listener", "feImage"}
ALLOWED_ELEMENTS = {"svg", "g", "rect", "text", "title", "path", "polygon"}
ALLOWED_ATTRS = {"xmlns", "width", "height", "viewBox", "class", "font-family", "id", "x", "y",
                 "rx", "fill", "stroke", "stroke-width", "stroke-dasharray", "font-size",
                 "font-weight", "text-anchor", "d", "points"}
# what layout.c may set on the DOT graph, nodes and edges
ALLOWED_DOT_ATTRS = {"rankdir", "newrank", "ranksep", "nodesep", "splines", "nslimit",
                     "mclimit", "fontname", "fontsize", "label", "width", "height", "shape",
                     "fixedsize", "style", "fillcolor", "tooltip", "weight", "xlabel"}


def utf8_seq(b, i):
    """(length, code point) of the valid UTF-8 sequence at b[i], or (0, None)."""
    c = b[i]
    if c < 0x80:
        return 1, c
    if 0xC2 <= c <= 0xDF:
        n, cp = 2, c & 0x1F
    elif 0xE0 <= c <= 0xEF:
        n, cp = 3, c & 0x0F
    elif 0xF0 <= c <= 0xF4:
        n, cp = 4, c & 0x07
    else:
        return 0, None
    if len(b) - i < n:
        return 0, None
    for k in range(1, n):
        if b[i + k] & 0xC0 != 0x80:
            return 0, None
        cp = cp << 6 | (b[i + k] & 0x3F)
    if (n == 3 and cp < 0x800) or (n == 4 and not 0x10000 <= cp <= 0x10FFFF) or \
            0xD800 <= cp <= 0xDFFF:
        return 0, None
    return n, cp


def json_text(b):
    out, i = [], 0
    while i < len(b):
        n, cp = utf8_seq(b, i)
        if n == 0:
            out.append("\ufffd")
            i += 1
        else:
            out.append(chr(cp))
            i += n
    return "".join(out)


def is_utf8(b):
    try:
        b.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


def display_text(b, max_chars):
    """render/style.c's oxr__text: at most max_chars characters from at most 4*max_chars
    bytes (else an ellipsis); invalid bytes and the XML non-characters U+FFFE/U+FFFF
    become U+FFFD; control characters a space."""
    out, i, chars = [], 0, 0
    limit = min(len(b), max_chars * 4)
    while i < len(b):
        if chars == max_chars or i >= limit:
            out.append("\u2026")
            break
        n, cp = utf8_seq(b, i)
        if n == 0:
            out.append("\ufffd")
            i += 1
        elif cp in (0xFFFE, 0xFFFF):
            out.append("\ufffd")
            i += n
        else:
            control = cp < 0x20 or cp == 0x7F or 0x80 <= cp < 0xA0 or cp in (0x2028, 0x2029)
            out.append(" " if control else chr(cp))
            i += n
        chars += 1
    return "".join(out)


def display_tail(b, max_chars):
    """render/style.c's oxr__text_tail: the end of a long string, after an ellipsis."""
    chars, start = 0, len(b)
    while start > 0 and chars < max_chars:
        start -= 1
        if b[start] & 0xC0 != 0x80:
            chars += 1
    if start == 0:
        return display_text(b, max_chars)
    return "\u2026" + display_text(b[start:], max_chars)


def local(name):
    return name.split("}", 1)[1] if name.startswith("{") else name


def parse_svg(data):
    """(root element, problems)."""
    problems = []
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as e:
        problems.append("SVG is not valid UTF-8: %s" % e)
    for raw in (b"<!DOCTYPE", b"<!ENTITY", b"<?xml-stylesheet", b"<![CDATA["):
        if raw in data:
            problems.append("SVG contains %s" % raw.decode())
    try:
        return ET.fromstring(data), problems
    except ET.ParseError as e:
        return None, problems + ["SVG is not well-formed XML: %s" % e]


def check_svg(data, node_ids=None):
    """Problems with an SVG from our writer, and facts about it (ids, boxes, texts)."""
    info = {"boxes": [], "ids": set(), "titles": [], "texts": [], "data_nodes": [],
            "reads": 0, "rows": []}
    root, problems = parse_svg(data)
    if root is None:
        return problems, info
    if root.tag != SVG_NS + "svg":
        problems.append("root element is %s" % root.tag)
    edges = []
    for el in root.iter():
        tag = local(el.tag)
        if not el.tag.startswith(SVG_NS):
            problems.append("element outside the SVG namespace: %s" % el.tag)
        if tag in FORBIDDEN_ELEMENTS:
            problems.append("forbidden element <%s>" % tag)
        elif tag not in ALLOWED_ELEMENTS:
            problems.append("unexpected element <%s>" % tag)
        for name, value in el.attrib.items():
            lname = local(name)
            if lname.lower().startswith("on"):
                problems.append("event handler attribute %s" % name)
            if lname.lower() in ("href", "src", "style") or "href" in lname.lower():
                problems.append("attribute %s on <%s>" % (name, tag))
            if not lname.startswith("data-") and lname not in ALLOWED_ATTRS:
                problems.append("unexpected attribute %s on <%s>" % (name, tag))
            if not lname.startswith("data-"):
                low = value.lower()
                if "javascript:" in low or "url(" in low or "expression(" in low:
                    problems.append("active content in %s=%r" % (name, value[:80]))
        if tag == "title":
            info["titles"].append(el.text or "")
        elif tag == "text":
            info["texts"].append(el.text or "")
        eid = el.get("id")
        if eid is not None:
            if eid in info["ids"]:
                problems.append("duplicate element id %r" % eid)
            info["ids"].add(eid)
        cls = (el.get("class") or "").split()
        if tag == "g" and "node" in cls:
            info["boxes"].append(eid)
            dn = el.get("data-node")
            if dn is not None:
                info["data_nodes"].append(dn)
                if node_ids is not None and dn not in node_ids:
                    problems.append("data-node %r is not a node id of the document" % dn)
                if eid != dn:
                    problems.append("op box id %r != data-node %r" % (eid, dn))
        if tag == "g" and "edge" in cls:
            edges.append((el.get("data-from"), el.get("data-to")))
            info["reads"] += "reads" in cls
        if tag == "g" and "node" in cls:
            for t in el.iter(SVG_NS + "text"):
                if t.get("data-value") is not None:  # a folded row
                    info["rows"].append((eid, t.text or "", int(t.get("data-value")),
                                         t.get("data-unfold")))
    boxes = set(info["boxes"])
    for f, t in edges:
        if f not in boxes or t not in boxes:
            problems.append("edge %r -> %r between unknown boxes" % (f, t))
    declared = root.get("data-boxes")
    if declared is not None and declared != str(len(info["boxes"])):
        problems.append("data-boxes=%s but %d boxes drawn" % (declared, len(info["boxes"])))
    return problems, info


_DOT_TOKEN = re.compile(rb'"(?:[^"\\]|\\.)*"|<|[A-Za-z_\x80-\xff][A-Za-z0-9_\x80-\xff]*|'
                        rb'-?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)|->|--|[\[\]{};,=:]|\s+|.',
                        re.S)


def dot_tokens(data):
    for m in _DOT_TOKEN.finditer(data):
        tok = m.group(0)
        if not tok.isspace():
            yield tok


def unquote(tok):
    if tok.startswith(b'"'):
        return tok[1:-1].replace(b'\\"', b'"')
    return tok


def check_dot(path, boxes=None, timeout=60, edges=None):
    """Problems with a DOT file from our writer: Graphviz must read it, and it may only
    use the attributes layout.c sets; it has `boxes` nodes and `edges` edges when given."""
    problems = []
    r = subprocess.run(["dot", "-Tcanon", path], capture_output=True, timeout=timeout)
    if r.returncode != 0 or b"rror" in r.stderr or b"syntax" in r.stderr:
        problems.append("dot -Tcanon: exit %d: %s" % (r.returncode, r.stderr[:300]))
    with open(path, "rb") as f:
        data = f.read()
    if not is_utf8(data):
        problems.append("DOT is not valid UTF-8")
    for source, text in (("DOT", data), ("dot -Tcanon", r.stdout)):
        toks = list(dot_tokens(text))
        names, nodes = set(), set()
        arrows = sum(1 for tok in toks if tok == b"->")
        if edges is not None and arrows != edges:
            problems.append("%s has %d edges, the layout JSON %d" % (source, arrows, edges))
        for i, tok in enumerate(toks):
            if tok == b"=" and i > 0:
                names.add(unquote(toks[i - 1]).decode("utf-8", "replace"))
            elif tok == b"<":
                problems.append("%s has an HTML-like string" % source)
                break
            elif re.fullmatch(rb"b[0-9]+", tok) and (i == 0 or toks[i - 1] != b"="):
                nodes.add(tok)
        bad = sorted(n for n in names if n not in ALLOWED_DOT_ATTRS)
        if bad:
            problems.append("%s sets attributes %s" % (source, bad))
        if boxes is not None and len(nodes) != boxes:
            problems.append("%s has %d nodes, the SVG %d boxes" % (source, len(nodes), boxes))
    return problems


def check_layout(data, svg_info=None):
    problems = []
    try:
        lay = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        return ["layout JSON: %s" % e], None
    if lay.get("format") != "onnxviz.layout/1":
        problems.append("layout JSON format %r" % lay.get("format"))
    ids = [n["id"] for n in lay.get("nodes", [])]
    if len(set(ids)) != len(ids):
        problems.append("layout JSON has duplicate node ids")
    for e in lay.get("edges", []):
        if e["from"] not in ids or e["to"] not in ids:
            problems.append("layout edge %s between unknown nodes" % e["id"])
            break
    if svg_info is not None:
        if ids != svg_info["boxes"]:
            problems.append("layout JSON boxes differ from the SVG's (%d vs %d)" %
                            (len(ids), len(svg_info["boxes"])))
        lay_nodes = [n["node"] for n in lay["nodes"] if "node" in n]
        if lay_nodes != svg_info["data_nodes"]:
            problems.append("layout JSON node refs differ from the SVG's data-node")
        reads = sum(1 for e in lay["edges"] if e["style"] == "reads")
        if reads != svg_info["reads"]:
            problems.append("layout JSON has %d reads edges, the SVG %d" %
                            (reads, svg_info["reads"]))
        rows = [(n["id"], r["text"], r["value"], r.get("unfold")) for n in lay["nodes"]
                for r in n["rows"] if "value" in r]
        if rows != svg_info["rows"]:
            problems.append("layout JSON folded rows differ from the SVG's (%d vs %d)" %
                            (len(rows), len(svg_info["rows"])))
    return problems, lay


def selftest(tmpdir):
    """The checks must catch what they are for: known-bad inputs each raise a problem.
    Returns the inputs that were wrongly accepted."""
    good = (b'<?xml version="1.0" encoding="UTF-8"?>\n<svg xmlns="http://www.w3.org/2000/svg" '
            b'data-boxes="1"><g id="n0" class="node op" data-node="n0"><title>x</title>'
            b'<rect x="1" y="1" width="2" height="2"/></g></svg>')
    bad_svgs = {
        "script": good.replace(b"<title>x</title>", b"<script>alert(1)</script>"),
        "onload": good.replace(b'class="node op"', b'class="node op" onload="x()"'),
        "xlink:href": good.replace(b"<svg ", b'<svg xmlns:xlink="http://www.w3.org/1999/xlink" ')
                          .replace(b"<rect ", b'<rect xlink:href="#a" '),
        "href": good.replace(b"<rect ", b'<rect href="x" '),
        "a": good.replace(b"<title>x</title>", b"<a><title>x</title></a>"),
        "foreignObject": good.replace(b"<title>x</title>", b"<foreignObject/>"),
        "style": good.replace(b"<title>x</title>", b"<style>*{}</style>"),
        "javascript:": good.replace(b'fill="', b'fill="javascript:x').replace(
            b"<rect ", b'<rect fill="javascript:x" '),
        "unknown data-node": good.replace(b'data-node="n0"', b'data-node="n9"')
                                 .replace(b'id="n0"', b'id="n9"'),
        "duplicate id": good.replace(b"</g></svg>", b'</g><g id="n0"/></svg>'),
        "not well-formed": good.replace(b"<title>x</title>", b"<title>\xef\xbf\xbe</title>"),
        "bad UTF-8": good.replace(b"<title>x</title>", b"<title>\xff</title>"),
    }
    missed = []
    if check_svg(good, {"n0"})[0]:
        missed.append("a good SVG was rejected: %s" % check_svg(good, {"n0"})[0])
    for what, svg in bad_svgs.items():
        if not check_svg(svg, {"n0"})[0]:
            missed.append("SVG with " + what)
    bad_dots = {
        "URL": b'digraph { b0 [URL="javascript:x"]; }',
        "image": b'digraph { b0 [label="", image="/etc/passwd"]; }',
        "quoted image": b'digraph { b0 ["image"="/etc/passwd"]; }',
        "HTML label": b"digraph { b0 [label=<<b>x</b>>]; }",
        "syntax error": b'digraph { b0 [label="x]; }',
    }
    for what, dot in bad_dots.items():
        path = "%s/selftest.dot" % tmpdir
        with open(path, "wb") as f:
            f.write(dot)
        if not check_dot(path):
            missed.append("DOT with " + what)
    if display_text(b"a\x00b\xffc\xe2\x80\xa8d", 40) != "a b\ufffdc d":
        missed.append("display_text")
    if json_text(b"a\x00\xc0\xaf\xed\xa0\x80") != "a\x00" + "\ufffd" * 5:
        missed.append("json_text")
    return missed
