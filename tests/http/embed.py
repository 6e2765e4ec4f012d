"""http suite, previews others embed (issue 36 items 3, 4 and 6; docs/embed.md): the share
page's Open Graph and Twitter tags (there, escaped for a model named with `"><script>`),
oEmbed (the fields the spec requires, rich or photo, maxwidth/maxheight, 404 for another
site's URL, 501 for another format), frame-ancestors, theme=dark, and what the share page
and oEmbed give with reads locked (nothing without a token or a signed link; through a
signed link, links signed until the same expiry).

Imported by http_test.py, which passes itself (h), as signed.py is.
"""
import html.parser
import json
import secrets
import time
import urllib.parse

import signed

HOSTILE = '"><script>alert(1).onnx'  # no '/' or '\\': the server keeps a base name


class Head(html.parser.HTMLParser):
    """The <meta> and <link> tags of a page, unescaped by the parser."""

    def __init__(self):
        super().__init__()
        self.meta, self.links, self.title, self._in_title = {}, [], "", False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "meta" and "content" in a:
            self.meta[a.get("property") or a.get("name")] = a["content"]
        elif tag == "link":
            self.links.append(a)
        self._in_title = tag == "title"

    def handle_endtag(self, tag):
        self._in_title = False

    def handle_data(self, data):
        if self._in_title:
            self.title += data


def head_of(body):
    p = Head()
    p.feed(body.decode())
    return p


def oembed(h, s, url, **kw):
    headers = kw.pop("headers", [])
    q = urllib.parse.urlencode(dict({"url": url}, **kw))
    return h.curl(s.url("/oembed?" + q), headers=headers)


def t_embed(h):
    check = h.check
    s = h.Server("--frame-ancestors", "https://registry.example.com,https://wiki.example.org:8443")
    plain = h.Server()
    key = secrets.token_hex(32).encode()
    keyfile = h.write_tmp(key + b"\n", suffix=".key")
    locked = h.Server("--token", "w", "--read-token", "r", "--auth-reads", "--sign-secret-file",
                      keyfile, "--base-url", "https://viz.example/")
    try:
        r = h.upload(s, h.SQUEEZENET, query="?name=" + urllib.parse.quote(HOSTILE))
        check(r.status == 201, "embed: upload %r" % r)
        mid = h.sha256_file(h.SQUEEZENET)
        check(h.upload(plain, h.SQUEEZENET).status == 201, "embed: upload to the plain server")

        # the share page: tags there and escaped
        r = h.curl(s.url("/m/%s" % mid))
        check(r.status == 200 and (r.h("content-type") or "").startswith("text/html"), "share: %r" % r)
        check("frame-ancestors 'none'" in (r.h("content-security-policy") or ""), "share: unframable")
        check(b"<script>alert" not in r.body and b'"><script' not in r.body,
              "share: the model's name is escaped in the page")
        hd = head_of(r.body)
        check(hd.meta.get("og:title") == HOSTILE and hd.meta.get("twitter:title") == HOSTILE,
              "share: og:title is the file's name: %r" % hd.meta.get("og:title"))
        check(hd.title == HOSTILE + " \u2014 onnxviz", "share: <title> %r" % hd.title)
        desc = hd.meta.get("og:description", "")
        check("83 nodes" in desc and "1,233,288 parameters" in desc and "MACs" in desc,
              "share: description %r" % desc)
        check(hd.meta.get("og:image") == s.base + "/models/%s/card.png" % mid and
              hd.meta.get("twitter:image") == hd.meta.get("og:image") and
              hd.meta.get("og:image:width") == "1200" and hd.meta.get("og:image:height") == "630" and
              hd.meta.get("twitter:card") == "summary_large_image" and
              hd.meta.get("og:url") == s.base + "/m/%s" % mid,
              "share: og:image, og:url, twitter:card from the Host: %r" % hd.meta)
        disc = [l for l in hd.links if l.get("type") == "application/json+oembed"]
        check(len(disc) == 1 and disc[0].get("rel") == "alternate", "share: one oEmbed link %r" % hd.links)
        # its href, as a consumer follows it
        o = h.curl(disc[0]["href"]) if disc else None
        j = o.json() if o is not None and o.status == 200 else {}
        for k in ("version", "type", "width", "height", "provider_name", "provider_url"):
            check(k in j, "oembed: required field %s in %r" % (k, j))
        check(j.get("version") == "1.0" and j.get("type") == "rich" and j.get("title") == HOSTILE and
              isinstance(j.get("width"), int) and isinstance(j.get("height"), int),
              "oembed: rich (frame-ancestors lists hosts): %r" % j)
        frame = j.get("html", "")
        check(('<iframe src="%s/embed/%s"' % (s.base, mid)) in frame and "<script" not in frame and
              "&quot;&gt;&lt;script&gt;" in frame, "oembed: the iframe, its title escaped: %r" % frame)
        # rich only for a listed Origin; photo for another
        j = oembed(h, s, s.base + "/m/" + mid, headers=["Origin: https://wiki.example.org:8443"]).json() or {}
        check(j.get("type") == "rich", "oembed: a listed Origin: rich %r" % j.get("type"))
        j = oembed(h, s, s.base + "/m/" + mid, maxwidth=300, maxheight=500,
                   headers=["Origin: https://evil.example"]).json() or {}
        check(j.get("type") == "photo" and j.get("width", 999) <= 300 and j.get("height", 999) <= 500 and
              j.get("url") == "%s/models/%s/graph.png?w=%d&h=%d" % (s.base, mid, j.get("width"), j.get("height")),
              "oembed: an unlisted Origin: photo within maxwidth 300: %r" % j)
        j = oembed(h, plain, plain.base + "/#/models/" + mid, maxheight=120).json() or {}
        check(j.get("type") == "photo" and j.get("height") == 120 and "html" not in j,
              "oembed: no --frame-ancestors: photo, maxheight: %r" % j)
        # bad input: each a clear 4xx (JSON errors: the audit checks them), the server up
        for args, status, code in [
                ((s.base + "/m/" + mid,), 501, "format_not_implemented"),
                (("http://evil.example/m/" + mid,), 404, "not_found"),
                ((s.base + "/m/" + "0" * 64,), 404, "not_found"),
                ((s.base + "/m/" + mid + "x",), 404, "not_found"),
                (("",), 400, "bad_query")]:
            kw = {"format": "xml"} if status == 501 else {}
            r = oembed(h, s, *args, **kw)
            check(r.status == status and (r.json() or {}).get("error", {}).get("code") == code,
                  "oembed: %s -> %d %s: %r" % (args[0], status, code, r))
        r = oembed(h, s, s.base + "/m/" + mid, maxwidth=0)
        check(r.status == 400, "oembed: maxwidth=0 %r" % r)
        for path, status in [("/m/%s" % ("0" * 64), 404), ("/m/%s?x=1" % mid, 400),
                             ("/models/%s/graph.svg?theme=%%3Cscript%%3E" % mid, 400),
                             ("/embed/%s?theme=%%3Cscript%%3E" % mid, 400), ("/embed/nope", 404)]:
            r = h.curl(s.url(path))
            check(r.status == status, "embed: %s -> %d: %r" % (path, status, r))
        check(h.curl(s.url("/healthz")).status == 200, "embed: the server is up")
        # theme=dark: the dark palette, a drawing of its own
        light = h.curl(s.url("/models/%s/graph.svg" % mid))
        dark = h.curl(s.url("/models/%s/graph.svg?theme=dark" % mid))
        check(dark.status == 200 and b'data-theme="dark"' in dark.body and b'fill="#0f1419"' in dark.body and
              b'data-theme="light"' in light.body and light.h("etag") != dark.h("etag"),
              "theme: graph.svg?theme=dark is the dark drawing")

        # reads locked: nothing without a token or a signed link
        r = h.upload(locked, h.SQUEEZENET, token="w")
        check(r.status == 201, "locked: upload %r" % r)
        for path in ["/m/%s" % mid, "/embed/%s" % mid,
                     "/oembed?url=" + urllib.parse.quote("https://viz.example/m/" + mid)]:
            r = h.curl(locked.url(path))
            check(r.status == 401 and b"squeezenet" not in r.body and b"83 nodes" not in r.body,
                  "locked: %s without a token: 401 %r" % (path, r))
            r = h.curl(locked.url(path), headers=["Authorization: Bearer r"])
            check(r.status == 200, "locked: %s with the read token %r" % (path, r))
        # a signed share link: its page's links are signed until the same expiry
        rc, url, err = signed.sign(h, keyfile, locked.url("/m/%s" % mid), "--ttl", "10m")
        r = h.curl(url)
        check(rc == 0 and r.status == 200, "locked: the signed share link reads: %r %s" % (r, err))
        expires = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(url).query)).get("expires")
        hd = head_of(r.body) if r.status == 200 else Head()
        def signed_until(link, path):
            u = urllib.parse.urlsplit(link)
            q = urllib.parse.parse_qsl(u.query)
            return (u.path == path and dict(q).get("expires") == expires and
                    dict(q).get("signature") == signed.reference_signature(
                        key, u.path, [kv for kv in q if kv[0] != "signature"]))
        check(signed_until(hd.meta.get("og:url", ""), "/m/%s" % mid),
              "locked: og:url is the share link signed until its expiry: %s" % hd.meta.get("og:url"))
        disc = [l["href"] for l in hd.links if l.get("type") == "application/json+oembed"]
        check(disc and signed_until(disc[0], "/oembed"), "locked: the oEmbed link is signed: %s" % disc)
        o = h.curl(disc[0].replace("https://viz.example", locked.base)) if disc else None
        j = o.json() if o is not None and o.status == 200 else {}
        check(j.get("type") == "photo" and "html" not in j, "locked: the signed oEmbed link answers photo: %r" % j)
        # card.png and graph.png are signed too once the server has those routes (PNG is
        # another change of issue 36: a path the server does not read is never signed)
        img = hd.meta.get("og:image", "")
        has_png = h.curl(locked.url("/models/%s/card.png" % mid), headers=["Authorization: Bearer r"]).status != 404
        if has_png:
            check(signed_until(img, "/models/%s/card.png" % mid), "locked: og:image signed: %s" % img)
            check("signature=" in j.get("url", ""), "locked: oEmbed's PNG signed: %r" % j)
        else:
            check(img == "https://viz.example/models/%s/card.png" % mid, "locked: og:image %s" % img)
        # another path under the same signature: 403
        bad = url.replace("/m/", "/embed/")
        check(h.curl(bad).status == 403, "locked: the share link's signature on /embed: 403")
        embed_capability(h, locked, keyfile, mid)
    finally:
        for srv in (s, plain, locked):
            check(srv.stop() == 0, "embed: server exit")


class Html(html.parser.HTMLParser):
    """The attributes of a page's <html> tag."""
    def __init__(self):
        super().__init__()
        self.attrs = None

    def handle_starttag(self, tag, attrs):
        if tag == "html" and self.attrs is None:
            self.attrs = dict(attrs)


def embed_capability(h, locked, keyfile, mid):
    """A signed /embed/{id} on a server with reads locked: its page holds a capability
    (data-embed-cap) that reads that one model (X-Onnxviz-Cap) until the link's expiry, and
    nothing else (decision 92)."""
    check = h.check
    other = h.sha256_file(h.TRANSFORMER)
    check(h.upload(locked, h.TRANSFORMER, token="w").status == 201, "cap: upload a second model")
    rc, url, err = signed.sign(h, keyfile, locked.url("/embed/%s" % mid), "--ttl", "10m")
    r = h.curl(url)
    check(rc == 0 and r.status == 200, "cap: the signed embed reads %r %s" % (r, err))
    p = Html()
    p.feed(r.body.decode() if r.status == 200 else "")
    cap = (p.attrs or {}).get("data-embed-cap", "")
    expires = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(url).query)).get("expires")
    check(cap.split(".")[0] == expires and len(cap) == len(expires) + 65,
          "cap: the page holds a capability until the link's expiry: %r" % cap)
    unsigned = h.curl(locked.url("/embed/%s" % mid), headers=["Authorization: Bearer r"])
    check(unsigned.status == 200 and b"data-embed-cap" not in unsigned.body,
          "cap: an embed read with a token holds none %r" % unsigned)

    def read(path, c=cap, **kw):
        return h.curl(locked.url(path), headers=["X-Onnxviz-Cap: " + c], **kw)
    m = "/models/%s" % mid
    node = h.curl(locked.url(m + "/graph.json"), headers=["Authorization: Bearer r"])
    nodes = node.json().get("nodes", []) if node.status == 200 else []
    nid = nodes[0].get("id", "") if nodes and isinstance(nodes[0], dict) else ""
    for path in [m, m + "/graph.svg", m + "/graph.svg?theme=dark", m + "/graph.json", m + "/document.json",
                 m + "/nodes/" + urllib.parse.quote(str(nid))]:
        r = read(path)
        check(r.status == 200 and len(r.body) > 0, "cap: reads %s: %r" % (path, r))
        check(h.curl(locked.url(path)).status == 401, "cap: %s without it: 401" % path)
    check(read(m, head=True).status == 200, "cap: HEAD of the summary")
    # nothing beyond that one model
    for path in ["/models/%s" % other, "/models/%s/graph.svg" % other, "/models",
                 "/models/%s/diff/%s.json" % (mid, other), "/m/%s" % mid, "/embed/%s" % mid,
                 "/models/%s/graph.svg" % (mid[:-1] + ("0" if mid[-1] != "0" else "1"))]:
        r = read(path)
        check(r.status == 403 and r.error_code() == "signature_mismatch" and b"<svg" not in r.body,
              "cap: refuses %s: %r" % (path, r))
    # no writes: DELETE and POST never look at it (they need the write token)
    check(read(m, method="DELETE").status == 401 and h.curl(locked.url(m), headers=["Authorization: Bearer r"]).status == 200,
          "cap: does not delete")
    r = h.curl(locked.url(m + "/overlays"), method="POST", headers=["X-Onnxviz-Cap: " + cap], data=b"{}")
    check(r.status == 401, "cap: does not post an overlay %r" % r)
    r = h.curl(locked.url("/sign"), method="POST", headers=["X-Onnxviz-Cap: " + cap],
               data=json.dumps({"path": m + "/graph.svg"}).encode())
    check(r.status == 401, "cap: does not sign links %r" % r)
    # one byte changed (the expiry or the MAC), malformed, expired
    e, mac = cap.split(".", 1) if "." in cap else ("0", "")
    flip = lambda c: "0" if c != "0" else "1"
    for bad, code in [("%d.%s" % (int(e) + 1, mac), "signature_mismatch"),
                      ("%s.%s%s" % (e, mac[:-1], flip(mac[-1:])), "signature_mismatch"),
                      ("%s.%s%s" % (e, flip(mac[:1]), mac[1:]), "signature_mismatch"),
                      (cap.upper(), "signature_malformed"), (cap + "0", "signature_malformed")]:
        r = read(m + "/graph.svg", c=bad)
        check(r.status == 403 and r.error_code() == code, "cap: %r refused (%s): %r" % (bad, code, r))
    # a link's signature is not a capability, nor the other way round
    sig = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(url).query)).get("signature", "")
    check(read(m, c="%s.%s" % (expires, sig)).error_code() == "signature_mismatch", "cap: a link signature is no cap")
    # expired: a link that expires in 2 s, its capability refused after
    rc, short, err = signed.sign(h, keyfile, locked.url("/embed/%s" % mid), "--ttl", "2s")
    r = h.curl(short)
    p = Html()
    p.feed(r.body.decode() if r.status == 200 else "")
    c2 = (p.attrs or {}).get("data-embed-cap", "")
    check(rc == 0 and read(m, c=c2).status == 200, "cap: a 2 s capability reads at first %r %s" % (c2, err))
    time.sleep(3.2)
    r = read(m + "/graph.svg", c=c2)
    check(r.status == 403 and r.error_code() == "signature_expired", "cap: refused after its expiry %r" % r)
