"""http suite, PNG images and cards (issue 36; docs/api.md "PNG"): graph.png, card.png, the
diff's .png, POST /graph.png, `onnxviz render -o g.png` and `onnxviz diff -o d.png`,
decoded with PIL: exact sizes for w, h and scale, the pixel budget (scaled down, or 422
naming the numbers), a 1 x 100,000 drawing with w=640, a pixel bomb under a small worker
memory limit, caching and conditional requests, bad input.

Imported by http_test.py, which passes itself (h): its curl, Server, check, ... are used,
so the responses are audited with the rest and the servers stopped with the rest.
"""
import io
import os
import re
import subprocess
import time

from PIL import Image


def png(r):
    """The decoded image of a response, or None."""
    try:
        im = Image.open(io.BytesIO(r.body))
        im.load()
        return im
    except Exception:  # noqa: BLE001 (anything PIL raises: not a PNG)
        return None


def svg_size(body):
    m = re.search(rb'<svg [^>]*?width="([0-9.]+)" height="([0-9.]+)"', body)
    return (float(m.group(1)), float(m.group(2))) if m else (0.0, 0.0)


def fit(dw, dh, w=0, h=0, scale=1.0):
    """The size the budget-free rule gives (docs/render.md, PNG)."""
    k = min(w / dw, h / dh) if w and h else w / dw if w else h / dh if h else 1.0
    return int(dw * k * scale + 0.5), int(dh * k * scale + 0.5)


def chain(n):
    """A chain of n Relu nodes: a drawing one box wide and n boxes tall (test input)."""
    from onnx import TensorProto, helper
    nodes = [helper.make_node("Relu", ["v%d" % i], ["v%d" % (i + 1)], name="r%d" % i) for i in range(n)]
    g = helper.make_graph(nodes, "chain", [helper.make_tensor_value_info("v0", TensorProto.FLOAT, [1])],
                          [helper.make_tensor_value_info("v%d" % n, TensorProto.FLOAT, [1])])
    return helper.make_model(g).SerializeToString()


def named(graph_name, producer):
    """A two-node model whose graph and producer have the given names (test input)."""
    from onnx import TensorProto, helper
    nodes = [helper.make_node("Relu", ["x"], ["y"], name="a"), helper.make_node("Relu", ["y"], ["z"], name="b")]
    g = helper.make_graph(nodes, graph_name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
                          [helper.make_tensor_value_info("z", TensorProto.FLOAT, [1])])
    m = helper.make_model(g, producer_name=producer)
    return m.SerializeToString()


def t_png(h):
    s = h.Server()
    sq = h.upload(s, h.SQUEEZENET).json()["id"]
    tr = h.upload(s, h.TRANSFORMER).json()["id"]
    base = "/models/%s/graph" % sq
    svg = h.curl(s.url(base + ".svg"))
    dw, dh = svg_size(svg.body)
    h.check(dw > 0 and dh > 0, "squeezenet's SVG has a size: %r x %r" % (dw, dh))

    # sizes: the drawing's own, fitted in w / h / both, times scale
    for q, want in [("", fit(dw, dh)), ("?w=640", fit(dw, dh, w=640)), ("?h=300", fit(dw, dh, h=300)),
                    ("?w=400&h=400", fit(dw, dh, 400, 400)), ("?w=300&scale=2", fit(dw, dh, w=300, scale=2)),
                    ("?w=200&scale=1.5", fit(dw, dh, w=200, scale=1.5)),
                    ("?h=250&scale=4&theme=light", fit(dw, dh, h=250, scale=4))]:
        r = h.curl(s.url(base + ".png" + q))
        im = png(r)
        h.check(r.status == 200 and r.h("content-type") == "image/png" and im is not None and
                im.format == "PNG" and im.size == want,
                "graph.png%s: a PNG of %r: %r %r" % (q, want, r, im and im.size))

    # the pixels are exactly librsvg's and cairo's, as rsvg-convert draws the same SVG on
    # the same page colour: our encoder (rows filtered where the pixel above does not
    # predict, coded in parts on threads) and the shortcut for the labels' bounding boxes
    # (decision 95) change no pixel.  Scale 2 of the full detail is 8 MP (several parts).
    for q, page in [("group=none", "white"), ("group=none&theme=dark", "#0f1419")]:
        drawn = h.curl(s.url(base + ".svg?" + q))
        r = h.curl(s.url(base + ".png?scale=2&" + q))
        im = png(r)
        src, ref = os.path.join(h.TMP, "exact.svg"), os.path.join(h.TMP, "exact.png")
        with open(src, "wb") as f:
            f.write(drawn.body)
        p = subprocess.run(["rsvg-convert", "-z", "2", "-b", page, src, "-o", ref],
                           capture_output=True, timeout=120)
        want = Image.open(ref).convert("RGB") if p.returncode == 0 else None
        got = im.convert("RGB") if im is not None else None
        same = want is not None and got is not None and want.size == got.size and \
            want.tobytes() == got.tobytes()
        h.check(r.status == 200 and same, "graph.png?scale=2&%s: rsvg-convert's pixels exactly: "
                "%r %r %r" % (q, r, got and got.size, want and want.size))

    # the same options as graph.svg, drawn: group=none is the full detail
    r = h.curl(s.url(base + ".png?group=none&rankdir=LR&w=800"))
    lr = h.curl(s.url(base + ".svg?group=none&rankdir=LR"))
    h.check(r.status == 200 and png(r) is not None and png(r).size == fit(*svg_size(lr.body), w=800),
            "graph.png takes graph.svg's options (rankdir=LR): %r" % r)
    r = h.curl(s.url(base + ".png?overlay=cost&metric=macs&scale=log&w=500"))
    h.check(r.status == 200 and png(r) is not None and png(r).size[0] == 500,
            "a heat overlay as PNG, scale=log its scale: %r" % r)

    # cached and conditional like the other renderings
    url = s.url(base + ".png?w=640")
    hits = s.metrics().get('onnxviz_cache_hits_total{tier="memory"}', 0)
    r1, r2 = h.curl(url), h.curl(url)
    h.check(r1.body == r2.body and r1.h("etag") and r1.h("etag") == r2.h("etag") and
            "immutable" in (r1.h("cache-control") or ""),
            "graph.png: the same bytes and ETag again, immutable: %r" % r2)
    h.check(s.metrics().get('onnxviz_cache_hits_total{tier="memory"}', 0) > hits, "the second from memory")
    r = h.curl(url, headers=["If-None-Match: " + (r1.h("etag") or "")])
    h.check(r.status == 304 and r.body == b"", "If-None-Match: 304: %r" % r)
    r = h.curl(url, head=True)
    h.check(r.status == 200 and r.h("content-type") == "image/png", "HEAD graph.png: %r" % r)

    # the card: 1200 x 630 (Open Graph), times scale
    for q, want in [("", (1200, 630)), ("?scale=2", (2400, 1260))]:
        r = h.curl(s.url("/models/%s/card.png%s" % (tr, q)))
        im = png(r)
        h.check(r.status == 200 and im is not None and im.size == want,
                "card.png%s: %r: %r %r" % (q, want, r, im and im.size))
    card = h.curl(s.url("/models/%s/card.png" % sq))
    im = png(card)
    # not a blank image: the text column and the drawing's boxes have dark and coloured pixels
    colours = len(set(im.convert("RGB").resize((300, 158)).getdata())) if im else 0
    h.check(card.status == 200 and colours > 200, "card.png is a picture (%d colours)" % colours)
    r = h.curl(s.url("/models/%s/card.png" % sq), headers=["If-None-Match: " + (card.h("etag") or "")])
    h.check(r.status == 304, "card.png: 304 on its ETag: %r" % r)
    # names the card's SVG must escape or cut: markup, entities, a name too long for two
    # lines, right-to-left text, a NUL-free control character
    for gname, prod in [("<script>alert(1)</script>&amp;]]>", "x\"/><svg onload=1>"),
                        ("x" * 400, "p" * 300), ("/encoder/layers.11/self_attn/" * 6, ""),
                        ("\u05e9\u05dc\u05d5\u05dd model \u202e", "\x01tool")]:
        mid = h.curl(s.url("/models"), data=named(gname, prod)).json()["id"]
        r = h.curl(s.url("/models/%s/card.png" % mid))
        im = png(r)
        h.check(r.status == 200 and im is not None and im.size == (1200, 630),
                "card of a model named %r: %r" % (gname[:40], r))

    # the card's title is the name the model was uploaded under (GET /models's "name"),
    # the graph's name below it; the PNG says it in an iTXt "Title"; without a name, the
    # graph's; a name is untrusted text (UTF-8, markup)
    for q, want in [("?name=my-model.onnx", "my-model.onnx"),
                    ("?name=mod%C3%A8le%20%E2%98%83%20%3Cb%3E.onnx", "mod\u00e8le \u2603 <b>.onnx"),
                    ("", "graph-of-titled")]:
        mid = h.curl(s.url("/models" + q), data=named("graph-of-titled", "p" + q)).json()["id"]
        listed = [m.get("name") for m in h.curl(s.url("/models?limit=1000")).json()["models"] if m["id"] == mid]
        r = h.curl(s.url("/models/%s/card.png" % mid))
        im = png(r)
        h.check(r.status == 200 and im is not None and im.info.get("Title") == want,
                "card of a model uploaded %r (listed as %r) is titled %r: %r" %
                (q, listed, want, im and im.info.get("Title")))

    # the one-shot and the diff
    r = h.curl(s.url("/graph.png?w=300"), data_file=h.SQUEEZENET)
    h.check(r.status == 200 and png(r) is not None and png(r).size[0] == 300 and r.h("x-model-id") == sq,
            "POST /graph.png?w=300: %r" % r)
    r = h.curl(s.url("/models/%s/diff/%s.png?w=500" % (sq, tr)))
    h.check(r.status == 200 and png(r) is not None and png(r).size[0] == 500, "diff .png w=500: %r" % r)

    # bad input: each a clear 4xx, the server up
    for q, status, code in [("?w=0", 400, "bad_option"), ("?scale=1e9", 400, "bad_option"),
                            ("?scale=0.5", 400, "bad_option"), ("?theme=%3Cscript%3E", 400, "bad_option"),
                            ("?theme=Dark", 400, "bad_option"), ("?w=-5", 400, "bad_option"),
                            ("?w=1&w=2", 400, "bad_option"), ("?w=99999", 400, "bad_option"),
                            ("?w=20000&h=20000", 422, "too_big"), ("?w=30000&scale=2", 422, "too_big")]:
        r = h.curl(s.url(base + ".png" + q))
        h.check(r.status == status and r.error_code() == code and b"<script>" not in r.body,
                "graph.png%s: %d %s: %r %r" % (q, status, code, r, r.body[:200]))
    r = h.curl(s.url(base + ".png?w=20000&h=20000"))
    msg = (r.json() or {}).get("error", {}).get("message", "")
    h.check("20000" in msg and "64000000" in msg and "--max-pixels" in msg,
            "the refusal names the numbers: %r" % msg)
    r = h.curl(s.url("/models/%s/graph.png?group=none&scale=4" % tr))
    msg = (r.json() or {}).get("error", {}).get("message", "")
    h.check(r.status == 422 and "scale 4.00" in msg, "scale=4 on a drawing it takes past the budget: 422: %r" % msg)
    h.check(h.curl(s.url("/models/%s/graph.png" % ("0" * 64))).status == 404, "unknown id: 404")
    h.check(h.curl(s.url("/models/%s/card.png?w=100" % sq)).status == 400, "card.png?w=: 400")
    h.check(h.curl(s.url("/models/%s/card.png?theme=dark" % sq)).status == 400, "card.png?theme=dark: 400 (light only)")
    # theme=dark: the drawing's dark palette on its dark page (render/style.c)
    r = h.curl(s.url(base + ".png?w=300&theme=dark"))
    im = png(r)
    h.check(r.status == 200 and im is not None and im.convert("RGB").getpixel((1, 1)) == (0x0f, 0x14, 0x19),
            "graph.png?theme=dark: the dark page: %r %r" % (r, im.convert("RGB").getpixel((1, 1)) if im else None))
    light = png(h.curl(s.url(base + ".png?w=300")))
    h.check(light is not None and light.convert("RGB").getpixel((1, 1)) == (255, 255, 255), "light: white")
    h.check(h.curl(s.url("/healthz")).status == 200, "server up after bad PNG requests")
    h.check(s.stop() == 0, "server exit (png)")


def t_png_limits(h):
    """The budget and the worker's memory: a drawing past the budget scaled down, a 1 x
    100,000 drawing with w=640 clamped, a pixel bomb refused before any allocation, a
    rasterization past the worker's memory limit an error for its request only."""
    s = h.Server("--layout-memory", "700M", "--max-pixels", "4000000")
    tall = h.curl(s.url("/models"), data=chain(1700)).json()["id"]
    svg = h.curl(s.url("/models/%s/graph.svg" % tall))
    dw, dh = svg_size(svg.body)
    h.check(dh > 90000 and dh / dw > 500, "the chain draws tall and thin: %r x %r" % (dw, dh))
    for q in ("", "?w=640"):
        t0 = time.time()
        r = h.curl(s.url("/models/%s/graph.png%s" % (tall, q)))
        im = png(r)
        ok = im is not None and im.size[0] * im.size[1] <= 4000000 and im.size[1] <= 32767
        h.check(r.status == 200 and ok and (q == "" or im.size[0] <= 640),
                "tall drawing%s: clamped to the budget and the side limit: %r %r" % (q, r, im and im.size))
        h.check(time.time() - t0 < 20 * h.SLOW, "tall drawing%s in %.1f s" % (q, time.time() - t0))
    sq = h.upload(s, h.SQUEEZENET).json()["id"]
    t0 = time.time()
    r = h.curl(s.url("/models/%s/graph.png?w=32767&h=32767" % sq))
    h.check(r.status == 422 and r.error_code() == "too_big" and time.time() - t0 < 5 * h.SLOW,
            "a pixel bomb (32767 x 32767, 4 GiB of pixels) refused by the budget at once: %r" % r)
    killed = s.metrics().get('onnxviz_layouts_total{result="killed"}', 0)
    h.check(killed == 0, "no worker was killed for it")
    h.check(s.stop() == 0, "server exit (png budget)")

    # a budget raised past what the worker's memory holds: that request fails, cleanly
    if h.SANITIZED:  # ASan's workers run without an address space limit (serve.c)
        h.skip("a raster past the worker's memory limit", "no memory limit under ASan")
        return
    s = h.Server("--layout-memory", "400M", "--max-pixels", "400000000")
    sq = h.upload(s, h.SQUEEZENET).json()["id"]
    r = h.curl(s.url("/models/%s/graph.png?w=3000" % sq))  # 3000 x 28,000: 84 MP, 336 MB
    h.check(400 <= r.status < 600 and r.status != 200 and r.error_code(),
            "a raster past the worker's memory limit: an error for that request: %r" % r)
    h.check(h.curl(s.url("/healthz")).status == 200, "server up after it")
    h.check(h.curl(s.url("/models/%s/graph.png?w=200" % sq)).status == 200, "other PNGs still drawn")
    h.check(s.stop() == 0, "server exit (png memory)")


def t_png_cli(h):
    """onnxviz render -o g.png and onnxviz diff -o d.png: PNG files of the asked size."""
    out = os.path.join(h.TMP, "g.png")
    p = subprocess.run([h.BIN, "render", h.SQUEEZENET, "-o", out, "--w=321", "--scale=2"],
                       capture_output=True, timeout=120)
    im = Image.open(out) if p.returncode == 0 and os.path.exists(out) else None
    h.check(im is not None and im.size[0] == 642, "render -o g.png --w=321 --scale=2: %r %r" %
            (p.stderr[-300:], im and im.size))
    p = subprocess.run([h.BIN, "render", h.SQUEEZENET, "-o", out, "--w=0"], capture_output=True, timeout=60)
    h.check(p.returncode == 2 and b"'w'" in p.stderr and b"1..32767" in p.stderr,
            "render --w=0: usage error naming w: %r" % p.stderr)
    p = subprocess.run([h.BIN, "render", h.SQUEEZENET, "-o", out, "--w=30000", "--h=30000"],
                       capture_output=True, timeout=60)
    h.check(p.returncode == 1 and b"too_big" in p.stderr and b"--max-pixels" in p.stderr,
            "render past the budget: refused with the numbers: %r" % p.stderr)
    # the program exports raster.c's cairo_fill_extents, so librsvg calls it while our
    # drawings are rasterized (the labels' bounding boxes without tessellation: decision 95)
    p = subprocess.run(["nm", "-D", "--defined-only", h.BIN], capture_output=True, text=True,
                       timeout=60)
    h.check(p.returncode == 0 and re.search(r" T cairo_fill_extents$", p.stdout, re.M),
            "the program exports cairo_fill_extents for librsvg: %r" % p.stderr[-300:])
    d = os.path.join(h.TMP, "d.png")
    p = subprocess.run([h.BIN, "diff", h.SQUEEZENET, h.SILERO, "-o", d, "--w=700"], capture_output=True,
                       timeout=120)
    im = Image.open(d) if os.path.exists(d) else None
    h.check(p.returncode == 1 and im is not None and im.size[0] == 700,
            "diff -o d.png --w=700: %r %r" % (p.stderr[-300:], im and im.size))
