"""http suite, compressed answers (issue 37 item 1; docs/decisions.md 93).

Step of tests/http/http_test.py (takes that module as H):
  compressed answers  every kind of text answer (SVG, DOT, layout JSON, document.json,
                      the summary, cost.json, search, the page's files, openapi.json),
                      from the memory cache, from the store after a restart and from a
                      file too big for the memory cache: gzip'd when Accept-Encoding
                      accepts it (q-values; gzip;q=0 and *;q=0 refuse), plain when not,
                      the gzip'd bytes decode to the plain answer, Vary: Accept-Encoding
                      on both, an ETag per coding ("...-gz"), 304 for each with its own
                      tag and 200 with the other's, HEAD with the same headers and
                      Content-Length; /metrics (made per request) gzip'd too; small
                      answers and the .onnx download never gzip'd
"""
import gzip
import re

GZ = "Accept-Encoding: gzip"


def check_kind(H, url, what):
    """Both codings of one answer, their ETags, 304s and HEADs; the plain answer."""
    check = H.check
    p = H.curl(url)
    z = H.curl(url, headers=[GZ])
    if not check(p.status == 200 and z.status == 200, "%s: %r / %r" % (what, p, z)):
        return None
    check(p.h("content-encoding") is None and len(p.body) >= 1024,
          "%s plain: no Content-Encoding, %d bytes" % (what, len(p.body)))
    check(z.h("content-encoding") == "gzip", "%s gzip'd when asked: %r" % (what, z.headers))
    try:
        plain = gzip.decompress(z.body)
    except OSError as e:
        plain = None
        check(False, "%s: the gzip'd body does not decode: %r" % (what, e))
    check(plain == p.body, "%s: the gzip'd bytes decode to the plain answer" % what)
    check(len(z.body) < len(p.body) and z.h("content-length") == str(len(z.body))
          and p.h("content-length") == str(len(p.body)),
          "%s: Content-Length of what is sent (%s, %s)" % (what, z.h("content-length"),
                                                          p.h("content-length")))
    for r in (p, z):
        vary = ",".join(r.headers.get("vary", []))
        check("accept-encoding" in vary.lower(), "%s: Vary: Accept-Encoding: %r" % (what, vary))
        check(r.h("content-type") == p.h("content-type") and
              r.h("cache-control") == p.h("cache-control"),
              "%s: same type and caching both ways" % what)
    pe, ze = p.h("etag"), z.h("etag")
    check(pe and ze and ze == pe[:-1] + '-gz"', "%s: ETag per coding: %r %r" % (what, pe, ze))
    # each coding revalidates with its own tag, not with the other's
    for hdrs, tag, want, enc in (([GZ], ze, 304, "gzip"), ([], pe, 304, None),
                                 ([GZ], pe, 200, "gzip"), ([], ze, 200, None),
                                 ([GZ], '"x", ' + ze, 304, "gzip")):
        r = H.curl(url, headers=hdrs + ["If-None-Match: " + tag])
        check(r.status == want and r.h("content-encoding") == (enc if want == 200 else None)
              and (want == 200 or (r.body == b"" and r.h("etag") == tag.split(", ")[-1])),
              "%s: If-None-Match %s %s: %r %r" % (what, tag, hdrs, r, r.headers))
    for hdrs, body in (([GZ], z), ([], p)):
        r = H.curl(url, headers=hdrs, head=True)
        check(r.status == 200 and r.h("content-length") == str(len(body.body)) and
              r.h("etag") == body.h("etag") and
              r.h("content-encoding") == body.h("content-encoding") and
              r.headers.get("vary") == body.headers.get("vary"),
              "%s: HEAD %s carries the same headers: %r" % (what, hdrs, r.headers))
    # q-values: refused, accepted, by wildcard
    for ae, gz in (("gzip;q=0", False), ("gzip; q=0.000", False), ("identity", False),
                   ("*;q=0", False), ("gzip;q=0, *", False), ("br, deflate", False),
                   ("gzip;q=x", False), ("GZIP;Q=0.001", True), ("deflate, gzip;q=0.5", True),
                   ("*", True), ("x-gzip", True), ("br;q=1.0, *;q=0.1", True)):
        r = H.curl(url, headers=["Accept-Encoding: " + ae])
        check(r.status == 200 and (r.h("content-encoding") == "gzip") == gz and
              r.body == (z.body if gz else p.body), "%s: Accept-Encoding %r: %r" % (what, ae, r.headers))
    return p


def t_compressed(H):
    check = H.check
    s = H.Server()
    try:
        r = H.upload(s, H.SQUEEZENET)
        check(r.status == 201, "upload: %r" % r)
        mid = H.sha256_file(H.SQUEEZENET)
        base = s.url("/models/" + mid)
        kinds = [("graph.svg", base + "/graph.svg?group=none"),
                 ("graph.dot", base + "/graph.dot"),
                 ("layout JSON", base + "/graph.json?group=none"),
                 ("document.json", base + "/document.json"),
                 ("summary", base),
                 ("cost.json", base + "/cost.json"),
                 ("search", base + "/search?q=conv&limit=50"),
                 ("the page", s.url("/")),
                 ("app.js", s.url("/app.js")),
                 ("openapi.json", s.url("/openapi.json"))]
        plain = {}
        for what, url in kinds:
            plain[what] = check_kind(H, url, what)
        # small answers go plain, with no Vary; the model's bytes never gzip'd
        for what, url in (("no hits", base + "/search?q=zzzzqq"), ("healthz", s.url("/healthz"))):
            r = H.curl(url, headers=[GZ])
            check(r.status == 200 and len(r.body) < 1024 and r.h("content-encoding") is None,
                  "%s (small) plain: %r %r" % (what, r, r.headers))
        # answers made per request (no-store, no ETag): gzip'd too when big enough
        for what, url in (("metrics", s.url("/metrics")),):
            p, z = H.curl(url), H.curl(url, headers=[GZ])
            check(p.status == 200 and z.status == 200 and len(p.body) >= 1024 and
                  p.h("content-encoding") is None and z.h("content-encoding") == "gzip" and
                  z.h("cache-control") == "no-store" and
                  "Accept-Encoding" in (p.h("vary") or "") and z.h("vary") == p.h("vary"),
                  "%s: %r %r" % (what, p.headers, z.headers))
            check(gzip.decompress(z.body).split(b"\n")[:5] == p.body.split(b"\n")[:5],
                  "%s: the gzip'd bytes decode to the answer" % what)
        r = H.curl(base + "/model.onnx", headers=[GZ])
        check(r.status == 200 and r.h("content-encoding") is None and
              r.body == open(H.SQUEEZENET, "rb").read(), "model.onnx plain: %r" % r.headers)
    finally:
        s.stop()
    # the renderings from the store after a restart: compressed again when loaded
    s2 = H.Server(store=s.store)
    try:
        for what, url in kinds[:4]:
            p = check_kind(H, url.replace(s.base, s2.base), what + " from the store")
            check(p is None or plain[what] is None or p.body == plain[what].body,
                  "%s from the store: the same bytes" % what)
    finally:
        s2.stop()
    # an answer too big for the memory cache is sent from its file (transformer_12x12's
    # 4.9 MB document.json over a 16M cache's eighth); its gzip'd variant is made once,
    # from a mapping of the file, and held in memory
    s3 = H.Server("--memory-cache", "16M")
    try:
        r = H.upload(s3, H.TRANSFORMER)
        check(r.status == 201, "upload transformer: %r" % r)
        url = s3.url("/models/%s/document.json" % H.sha256_file(H.TRANSFORMER))
        p = check_kind(H, url, "document.json from a file")
        check(p is None or len(p.body) > (16 << 20) // 8,
              "document.json bigger than the cache's eighth: %d" % (len(p.body) if p else 0))
    finally:
        s3.stop()
    # an answer that fits an eighth of the memory cache plain but not with its gzip'd
    # variant (4,859,552 + 286,919 bytes over an eighth of 39,600K) is still kept in
    # memory, plain then from its file: the third and later requests are memory hits
    # (they were read and compressed again from the store for each request)
    s4 = H.Server("--memory-cache", "39600K")
    try:
        r = H.upload(s4, H.TRANSFORMER)
        url = s4.url("/models/%s/document.json" % H.sha256_file(H.TRANSFORMER))

        def hits(tier):
            m = re.search(r'^onnxviz_cache_hits_total\{tier="%s"\} (\d+)$' % tier,
                          H.curl(s4.url("/metrics")).body.decode(), re.M)
            return int(m.group(1)) if m else -1
        first = [H.curl(url, headers=hdrs) for hdrs in ([GZ], [])]
        mem0, store0 = hits("memory"), hits("store")
        later = [H.curl(url, headers=hdrs) for hdrs in ([GZ], [], [GZ])]
        check(all(r.status == 200 for r in first + later) and
              later[0].body == later[2].body == first[0].body and later[1].body == first[1].body and
              len(first[1].body) <= (39600 << 10) // 8 < len(first[1].body) + len(first[0].body),
              "the document and its gzip'd variant: %r" % [(r.status, len(r.body)) for r in first])
        check(hits("memory") - mem0 == 3 and hits("store") == store0,
              "kept in memory with its gzip'd variant: memory hits +%d, store hits +%d"
              % (hits("memory") - mem0, hits("store") - store0))
    finally:
        s4.stop()
