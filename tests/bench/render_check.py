#!/usr/bin/python3
"""render_check.py — looks for drawing defects in a layout (onnxviz render --format=json).

    /usr/bin/python3 tests/bench/render_check.py LAYOUT.json

Prints one JSON object with counts and a few examples of each defect:
    boxes, edges, clusters   sizes
    overlaps        pairs of boxes whose rectangles overlap (more than 0.5 pt both ways)
    undrawn         edges without a spline (the SVG writer skips them: no line at all)
    detached        edges whose first point is not on the border of their source box, or
                    whose arrow tip (last point without an arrow) is not on the border of
                    their target box (more than 3 pt off)
    overflow        text rows wider than their box (tests/render/textfit.py), measured
                    with Liberation Sans, metrically Helvetica/Arial (the render suite
                    checks DejaVu Sans); needs python3-pil, else null
    through_box     edges whose drawn curve runs through a box other than their own two
                    (sampled 8 times per Bezier segment, boxes shrunk by 2 pt)
    upward          data edges drawn from bottom to top (the consumer's centre above its
                    producer's): cycles between groups, and cut long edges ("→ x" stubs)
                    whose consumer ended up above the producer
    label_on_box    edge labels (drawn where the edge leaves its producer) whose text
                    covers a box
    label_on_label  pairs of edge labels whose texts overlap
    outside_cluster boxes not inside the rectangle of their cluster
The row layout (sizes, paddings, left or centred text) mirrors render/svg.c.
"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "render"))
import textfit  # noqa: E402

EXAMPLES = 5


def _measurer():
    """text, size, bold -> width in points (Liberation Sans), or None without PIL or the
    fonts."""
    return textfit.measurer("liberation")


def rect(b):
    return (b["x"] - b["w"] / 2, b["y"] - b["h"] / 2, b["x"] + b["w"] / 2, b["y"] + b["h"] / 2)


def dist_to_rect(px, py, r):
    """Distance from a point to the border of a rectangle (0 on it)."""
    x0, y0, x1, y1 = r
    if x0 <= px <= x1 and y0 <= py <= y1:
        return min(px - x0, x1 - px, py - y0, y1 - py)
    dx = max(x0 - px, 0, px - x1)
    dy = max(y0 - py, 0, py - y1)
    return (dx * dx + dy * dy) ** 0.5


def bezier_points(pts, samples=8):
    """Points along a piecewise cubic Bezier (dot's spline: 1 + 3k control points)."""
    out = []
    for s in range(0, len(pts) - 3, 3):
        p = pts[s:s + 4]
        for k in range(samples + 1):
            t = k / samples
            u = 1 - t
            a, b, c, d = u * u * u, 3 * u * u * t, 3 * u * t * t, t * t * t
            out.append((a * p[0][0] + b * p[1][0] + c * p[2][0] + d * p[3][0],
                        a * p[0][1] + b * p[1][1] + c * p[2][1] + d * p[3][1]))
    return out


class Grid:
    """Boxes bucketed by rows of 200 pt, to find the boxes under a point quickly."""

    def __init__(self, rects, cell=200.0):
        self.cell, self.rects, self.rows = cell, rects, {}
        for i, r in enumerate(rects):
            for k in range(int(r[1] // cell), int(r[3] // cell) + 1):
                self.rows.setdefault(k, []).append(i)

    def at(self, px, py, margin=0.0):
        """Index of a rectangle containing the point by more than margin, else None."""
        for i in self.rows.get(int(py // self.cell), ()):
            b = self.rects[i]
            if b[0] + margin < px < b[2] - margin and b[1] + margin < py < b[3] - margin:
                return i
        return None

    def hits(self, r, min_depth=0.0):
        """Indices of the rectangles overlapping r by more than min_depth both ways."""
        seen = set()
        for k in range(int(r[1] // self.cell), int(r[3] // self.cell) + 1):
            for i in self.rows.get(k, ()):
                b = self.rects[i]
                if i not in seen and min(r[2], b[2]) - max(r[0], b[0]) > min_depth and \
                   min(r[3], b[3]) - max(r[1], b[1]) > min_depth:
                    seen.add(i)
        return seen


def check(doc, width=None):
    boxes, edges, clusters = doc["nodes"], doc["edges"], doc["clusters"]
    rects = [rect(b) for b in boxes]
    ids = {b["id"]: i for i, b in enumerate(boxes)}
    out = {"boxes": len(boxes), "edges": len(edges), "clusters": len(clusters),
           "width": doc["width"], "height": doc["height"], "settings": doc.get("settings")}
    ex = {}

    grid = Grid(rects)
    pairs = [(i, j) for i, r in enumerate(rects) for j in sorted(grid.hits(r, 0.5)) if j > i]
    out["overlaps"] = len(pairs)
    ex["overlaps"] = [(boxes[i]["id"], boxes[j]["id"]) for i, j in pairs[:EXAMPLES]]

    undrawn, detached = [], []
    for e in edges:
        pts = e["points"]
        if len(pts) < 4:
            undrawn.append(e["id"])
            continue
        a, b = rects[ids[e["from"]]], rects[ids[e["to"]]]
        tip = e.get("arrow") or pts[-1]
        d0, d1 = dist_to_rect(pts[0][0], pts[0][1], a), dist_to_rect(tip[0], tip[1], b)
        if d0 > 3 or d1 > 3:
            detached.append("%s %s->%s (%.0f pt, %.0f pt off)" %
                            (e["id"], e["from"], e["to"], d0, d1))
    out["undrawn"], out["detached"] = len(undrawn), len(detached)
    ex["undrawn"], ex["detached"] = undrawn[:EXAMPLES], detached[:EXAMPLES]

    through = []
    for e in edges:
        if len(e["points"]) < 4:
            continue
        ends = (ids[e["from"]], ids[e["to"]])
        for px, py in bezier_points(e["points"]):
            i = grid.at(px, py, 2.0)
            if i is not None and i not in ends:
                through.append("%s %s->%s through %s" % (e["id"], e["from"], e["to"],
                                                          boxes[i]["id"]))
                break
    out["through_box"] = len(through)
    ex["through_box"] = through[:EXAMPLES]

    upward = []
    for e in edges:
        src = boxes[ids[e["from"]]]
        if src["kind"] == "stub-out":
            continue  # the stub of a cut edge: the edge from the "-> x" stub counts
        if src["kind"] == "stub-in" and src.get("peer") in ids:
            src = boxes[ids[src["peer"]]]
        dst = boxes[ids[e["to"]]]
        if e["style"] in ("data", "outer", "stub") and dst["y"] < src["y"] - 1:
            upward.append("%s %s->%s (%.0f pt up)" % (e["id"], src["id"], dst["id"],
                                                      src["y"] - dst["y"]))
    out["upward"] = len(upward)
    ex["upward"] = upward[:EXAMPLES]

    if width is None:
        out["overflow"] = None
    else:
        over = textfit.layout_overflows(doc, width)
        out["overflow"] = len(over)
        ex["overflow"] = over[:EXAMPLES]

    on_box, label_rects, label_ids = [], [], []
    for e in edges:
        if not e.get("label") or len(e["points"]) < 4:
            continue
        # where the SVG starts the text, on its baseline (layout.c places it); layouts of
        # builds before label_at: just past the producer, where the edge leaves it
        if "label_at" in e:
            lx, ly = e["label_at"]
        else:
            lr = doc.get("rankdir") == "LR"
            lx, ly = e["points"][0][0] + (3 if lr else 4), e["points"][0][1] + (-3 if lr else 9)
        tw = width(e["label"], 8, False) if width else 4.5 * len(e["label"])
        r = (lx, ly - 7, lx + tw, ly + 2)
        label_rects.append(r)
        label_ids.append(e["id"])
        hit = grid.hits(r)
        if hit:
            on_box.append("%s %r on %s" % (e["id"], e["label"], boxes[min(hit)]["id"]))
    out["label_on_box"] = len(on_box)
    ex["label_on_box"] = on_box[:EXAMPLES]
    lgrid = Grid(label_rects)
    on_label = ["%s on %s" % (label_ids[i], label_ids[j]) for i, r in enumerate(label_rects)
                for j in sorted(lgrid.hits(r, 0.5)) if j > i]
    out["label_on_label"] = len(on_label)
    ex["label_on_label"] = on_label[:EXAMPLES]

    cl = {c["id"]: c for c in clusters}
    outside = []
    for b, r in zip(boxes, rects):
        c = cl.get(b.get("cluster"))
        if c is None:
            continue
        if r[0] < c["x"] - 0.5 or r[1] < c["y"] - 0.5 or r[2] > c["x"] + c["w"] + 0.5 or \
           r[3] > c["y"] + c["h"] + 0.5:
            outside.append("%s in %s" % (b["id"], c["id"]))
    out["outside_cluster"] = len(outside)
    ex["outside_cluster"] = outside[:EXAMPLES]
    out["examples"] = {k: v for k, v in ex.items() if v}
    return out


def main(argv):
    if len(argv) != 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    with open(argv[1], encoding="utf-8") as f:
        doc = json.load(f)
    print(json.dumps(check(doc, _measurer())))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
