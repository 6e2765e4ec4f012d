"""textfit.py — does the text of a drawing stay inside its box, in a given font?

Shared by the render suite (fit.py: every drawing of the corpus test, DejaVu Sans) and the
render benchmark (tests/bench/render_check.py: layout JSON, Liberation Sans).

  measurer(family)          text, size, bold -> width in points with the real font files
                            (PIL's FreeType), or None without PIL or the fonts; family is
                            "dejavu" (what rsvg and browsers without Helvetica/Arial draw
                            in) or "liberation" (metrically Helvetica/Arial);
  svg_overflows(data, w)    every text element of one of our SVGs that leaves its box
                            (rows of a node, a cluster's label: the rectangle drawn behind
                            them) or the drawing (edge labels), as strings;
  layout_overflows(doc, w)  the same for the rows of a layout JSON document, placed as
                            render/svg.c places them.
Widths are measured on a 100x font and divided: FreeType rounds advances to whole pixels.
"""
import threading
import xml.etree.ElementTree as ET

FONTS = {
    "dejavu": ("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
               "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf"),
    "liberation": ("/usr/share/fonts/truetype/liberation2/LiberationSans-Regular.ttf",
                   "/usr/share/fonts/truetype/liberation2/LiberationSans-Bold.ttf"),
}
SCALE = 100
# render/svg.c's drawing constants
HDR_SIZE, ROW_SIZE, PAD_X = 11.0, 9.0, 8.0
# coordinates are written with one decimal: that much is rounding, not overflow
SLACK = 0.06

SVG_NS = "{http://www.w3.org/2000/svg}"


def measurer(family="dejavu"):
    try:
        from PIL import ImageFont
    except ImportError:
        return None
    regular, bold = FONTS[family]
    cache = {}
    lock = threading.Lock()  # a FreeType face is not to be used by two threads at once

    def width(text, size, is_bold=False):
        key = (size, is_bold)
        with lock:
            font = cache.get(key)
            if font is None:
                font = cache[key] = ImageFont.truetype(bold if is_bold else regular,
                                                       int(round(size * SCALE)))
            return font.getlength(text) / SCALE

    try:
        width("x", 9)
    except OSError:
        return None
    return width


def _num(el, name, default=0.0):
    v = el.get(name)
    return float(v) if v is not None else default


def _extent(t, width):
    """(left, right) of a <text> element as drawn."""
    size = _num(t, "font-size", 16.0)
    w = width(t.text or "", size, t.get("font-weight") == "bold")
    x = _num(t, "x")
    anchor = t.get("text-anchor", "start")
    if anchor == "middle":
        return x - w / 2, x + w / 2
    if anchor == "end":
        return x - w, x
    return x, x + w


def svg_overflows(data, width):
    """Text of an SVG from render/svg.c that sticks out; list of strings."""
    root = ET.fromstring(data)
    dw = _num(root, "width")
    out = []
    for g in root.iter(SVG_NS + "g"):
        cls = (g.get("class") or "").split()
        texts = g.findall(SVG_NS + "text")
        if not texts:
            continue
        if "node" in cls or "cluster" in cls:
            r = g.find(SVG_NS + "rect")
            x0 = _num(r, "x")
            x1 = x0 + _num(r, "width")
            where = "box"
        elif "edge" in cls:
            x0, x1, where = 0.0, dw, "drawing"
        else:
            continue
        for t in texts:
            left, right = _extent(t, width)
            over = max(x0 - left, right - x1)
            if over > SLACK:
                out.append("%s %r sticks out of its %s by %.1f pt" %
                           (g.get("id"), t.text, where, over))
    return out


def layout_overflows(doc, width):
    """Rows of a layout JSON document wider than their box; list of strings."""
    out = []
    for b in doc["nodes"]:
        left = b["kind"] in ("op", "group")
        x0 = b["x"] - b["w"] / 2
        for r in b["rows"]:
            hdr = r["style"] == "header"
            w = width(r["text"], HDR_SIZE if hdr else ROW_SIZE, hdr)
            # headers and the rows of terminals/stubs are centred; the others start
            # PAD_X from the left edge
            if left and not hdr:
                lo, hi = x0 + PAD_X, x0 + PAD_X + w
            else:
                lo, hi = b["x"] - w / 2, b["x"] + w / 2
            over = max(x0 - lo, hi - (x0 + b["w"]))
            if over > SLACK:
                out.append("%s %r %.0f pt in %.0f pt" % (b["id"], r["text"], w, b["w"]))
    return out
