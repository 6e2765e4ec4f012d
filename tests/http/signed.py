"""http suite, signed links (issue 36; docs/api.md "Signed links", service/sign.h): with
reads locked, a URL signed by `onnxviz sign` or POST /sign reads exactly its resource until
it expires, and nothing else.

Imported by http_test.py, which passes itself (h): its curl, Server, check, ... are used, so
the responses are audited with the rest and the servers stopped with the rest.  The
signature is also computed here from the documented rule (HMAC-SHA256 over "GET\\n" +
canonical path + "\\n" + canonical query), so the rule is what the docs say.
"""
import hashlib
import hmac
import json
import os
import secrets
import subprocess
import time
import urllib.parse

SAFE = "-._~"


def enc(s, slash):
    return urllib.parse.quote(s, safe=SAFE + ("/" if slash else ""))


def reference_signature(key, path, query_pairs):
    """hex HMAC-SHA256(key, "GET\\n" + PATH + "\\n" + QUERY) as sign.h defines it."""
    q = "&".join("%s=%s" % (enc(k, False), enc(v, False))
                 for k, v in sorted(query_pairs, key=lambda kv: (kv[0].encode(), kv[1].encode())))
    msg = "GET\n%s\n%s" % (enc(path, True), q)
    return hmac.new(key, msg.encode(), hashlib.sha256).hexdigest()


def sign(h, keyfile, url, *args):
    p = subprocess.run([h.BIN, "sign", url, "--secret-file", keyfile] + list(args),
                       capture_output=True, timeout=30 * h.SLOW)
    return p.returncode, p.stdout.decode().strip(), p.stderr.decode()


def replace_param(url, key, value):
    u = urllib.parse.urlsplit(url)
    q = [(k, value if k == key else v) for k, v in urllib.parse.parse_qsl(u.query, keep_blank_values=True)]
    return urllib.parse.urlunsplit(u._replace(query=urllib.parse.urlencode(q, quote_via=urllib.parse.quote)))


def t_signed(h):
    check = h.check
    key = secrets.token_hex(32).encode()
    keyfile = h.write_tmp(key + b"\n", suffix=".key")
    s = h.Server("--token", "w", "--read-token", "r", "--auth-reads", "--sign-secret-file", keyfile,
                 "--sign-max-ttl", "3600", "--base-url", "http://viz.example/")
    try:
        r = h.upload(s, h.SQUEEZENET, token="w")
        check(r.status == 201, "signed: upload %r" % r)
        mid = h.sha256_file(h.SQUEEZENET)
        path = "/models/%s/graph.svg" % mid
        check(h.curl(s.url(path)).status == 401, "signed: reads are locked")
        want = h.curl(s.url(path + "?rankdir=LR"), headers=["Authorization: Bearer r"])

        # onnxviz sign: the URL reads its resource, with its query, GET and HEAD
        rc, url, err = sign(h, keyfile, s.url(path + "?rankdir=LR"), "--ttl", "10m")
        check(rc == 0 and url.startswith(s.base + path + "?"), "signed: onnxviz sign %d %s %s" % (rc, url, err))
        r = h.curl(url)
        check(r.status == 200 and r.body == want.body, "signed: the signed URL reads graph.svg?rankdir=LR: %r" % r)
        check(h.curl(url, head=True).status == 200, "signed: HEAD")
        q = urllib.parse.parse_qsl(urllib.parse.urlsplit(url).query)
        sig = dict(q)["signature"]
        ref = reference_signature(key, path, [kv for kv in q if kv[0] != "signature"])
        check(sig == ref, "signed: the signature is the documented HMAC-SHA256 (%s vs %s)" % (sig[:12], ref[:12]))
        # a key longer than SHA-256's 64-byte block is hashed first (RFC 2104); an odd path
        long_key = secrets.token_bytes(100).hex().encode()
        odd = "/files/dir with space/m~o%.onnx/graph.svg"
        rc, lurl, err = sign(h, h.write_tmp(long_key, suffix=".key"),
                             "/files/dir%20with%20space/m~o%25.onnx/graph.svg?q=a%2Fb+c&z=")
        lq = urllib.parse.parse_qsl(urllib.parse.urlsplit(lurl).query, keep_blank_values=True)
        ref = reference_signature(long_key, odd, [(k, v) for k, v in lq if k != "signature"])
        check(rc == 0 and dict(lq).get("signature") == ref and ("q", "a/b c") in lq and ("z", "") in lq,
              "signed: a 200-byte key, escapes in the path and query: %s %s" % (lurl, err))
        expires = int(dict(q)["expires"])
        check(abs(expires - (time.time() + 600)) < 30, "signed: --ttl 10m: expires in 600 s (%d)" % (expires - time.time()))

        # exactly that resource: another path, another query, one byte changed
        others = {
            "another path (graph.dot)": url.replace("/graph.svg?", "/graph.dot?"),
            "another model": url.replace(mid, "0" * 64),
            "another query value": replace_param(url, "rankdir", "TB"),
            "a parameter added": url + "&group=2",
            "a parameter removed": url.replace("rankdir=LR&", "").replace("&rankdir=LR", ""),
            "expires moved by one": replace_param(url, "expires", str(expires + 1)),
            "the signature's last digit": url[:-1] + ("0" if url[-1] != "0" else "1"),
            "one byte of the path": url.replace(mid, mid[:-1] + ("0" if mid[-1] != "0" else "1")),
        }
        for what, u in others.items():
            r = h.curl(u)
            check(r.status == 403 and r.error_code() == "signature_mismatch",
                  "signed: %s: 403 signature_mismatch: %r" % (what, r))
        for what, u in (("no expires", url.replace("expires=%d&" % expires, "")),
                        ("two signatures", url + "&signature=" + sig),
                        ("a signature not hex", url[:-64] + "z" * 64)):
            r = h.curl(u)
            check(r.status == 403 and r.error_code() == "signature_malformed",
                  "signed: %s: 403 signature_malformed: %r" % (what, r))

        # a late clock: past its expiry (fixed, and a real 1 s TTL), or beyond --sign-max-ttl
        rc, old, _ = sign(h, keyfile, s.url(path), "--expires", str(int(time.time()) - 5))
        r = h.curl(old)
        check(rc == 0 and r.status == 403 and r.error_code() == "signature_expired",
              "signed: expired 5 s ago: 403 signature_expired: %r" % r)
        rc, short, _ = sign(h, keyfile, s.url(path), "--ttl", "1")
        check(h.curl(short).status == 200, "signed: --ttl 1 reads at once")
        time.sleep(2.2)
        r = h.curl(short)
        check(r.status == 403 and r.error_code() == "signature_expired",
              "signed: --ttl 1, 2.2 s later: 403 signature_expired: %r" % r)
        rc, far, _ = sign(h, keyfile, s.url(path), "--expires", str(int(time.time()) + 7200))
        r = h.curl(far)
        check(r.status == 403 and r.error_code() == "signature_ttl_too_long",
              "signed: 2 h ahead with --sign-max-ttl 3600: 403 signature_ttl_too_long: %r" % r)
        rc, wrong, _ = sign(h, h.write_tmp(secrets.token_hex(32).encode(), suffix=".key"), s.url(path))
        r = h.curl(wrong)
        check(r.status == 403 and r.error_code() == "signature_mismatch", "signed: another key: %r" % r)

        # nothing else: a signed URL never writes
        rc, lst, _ = sign(h, keyfile, s.url("/models"))
        check(h.curl(lst).status == 200, "signed: GET /models signed reads the list")
        r = h.curl(lst, data_file=h.SQUEEZENET)
        check(r.status == 401, "signed: POST /models with a signed URL: 401 %r" % r)
        rc, one, _ = sign(h, keyfile, s.url("/models/" + mid))
        r = h.curl(one, method="DELETE")
        check(r.status in (401, 405), "signed: DELETE with a signed URL: %r" % r)
        check(h.curl(s.url("/models/" + mid), headers=["Authorization: Bearer r"]).status == 200,
              "signed: the model is still there")
        r = h.curl(s.url("/sign?path=" + urllib.parse.quote(path)) + "&" + urllib.parse.urlsplit(lst).query,
                   method="POST")
        check(r.status in (401, 403), "signed: POST /sign cannot be reached by a signature: %r" % r)
        for target in ("/uploads", "/models/%s/overlays" % mid, "/healthz", "relative", "/models/%s#x" % mid):
            rc, _, err = sign(h, keyfile, target)
            check(rc == 2, "signed: onnxviz sign refuses %s (%s)" % (target, err.strip()))

        # POST /sign: for a read-token holder; query or JSON body
        r = h.curl(s.url("/sign?path=" + urllib.parse.quote(path + "?rankdir=LR", safe="") + "&ttl=60"),
                   method="POST")
        check(r.status == 401, "signed: POST /sign without a token: %r" % r)
        r = h.curl(s.url("/sign?path=" + urllib.parse.quote(path + "?rankdir=LR", safe="") + "&ttl=60"),
                   method="POST", headers=["Authorization: Bearer r"])
        doc = json.loads(r.body) if r.status == 200 else {}
        check(r.status == 200 and doc.get("url") == "http://viz.example" + doc.get("path", "") and
              abs(doc.get("expires", 0) - time.time() - 60) < 30, "signed: POST /sign (query): %r %s" % (r, doc))
        r2 = h.curl(s.url(doc.get("path", "/")))
        check(r2.status == 200 and r2.body == want.body, "signed: POST /sign's path reads: %r" % r2)
        r = h.curl(s.url("/sign"), method="POST", data=json.dumps({"path": path, "ttl": "1h"}).encode(),
                   headers=["Authorization: Bearer r", "Content-Type: application/json"])
        doc = json.loads(r.body) if r.status == 200 else {}
        check(r.status == 200 and h.curl(s.url(doc.get("path", "/"))).status == 200,
              "signed: POST /sign (JSON body, ttl 1h): %r" % r)
        for body, code in (({"path": path, "ttl": 7200}, "bad_ttl"), ({"path": path, "ttl": 0}, "bad_ttl"),
                           ({"path": "/uploads"}, "not_signable"), ({"path": path, "x": 1}, "bad_request"),
                           ({"path": path + "?expires=1"}, "not_signable")):
            r = h.curl(s.url("/sign"), method="POST", data=json.dumps(body).encode(),
                       headers=["Authorization: Bearer r", "Content-Type: application/json"])
            check(r.status == 400 and r.error_code() == code, "signed: POST /sign %s: 400 %s: %r" % (body, code, r))
    finally:
        check(s.stop() == 0, "signed: server exit")

    # a server without a key: a signed link is refused with the reason, /sign too
    s = h.Server()
    try:
        h.upload(s, h.SQUEEZENET)
        rc, url, _ = sign(h, keyfile, s.url(path))
        r = h.curl(url)
        check(r.status == 403 and r.error_code() == "signing_disabled", "signed: no --sign-secret-file: %r" % r)
        r = h.curl(s.url("/sign?path=/models"), method="POST")
        check(r.status == 403 and r.error_code() == "signing_disabled", "signed: POST /sign without a key: %r" % r)
    finally:
        check(s.stop() == 0, "signed: server exit (no key)")
    # a key too short stops the server at start
    p = subprocess.run([h.BIN, "serve", "--port", "0", "--store", h.TMP + "/nokey",
                        "--sign-secret-file", h.write_tmp(b"short\n", suffix=".key")],
                       capture_output=True, timeout=30 * h.SLOW)
    check(p.returncode != 0 and b"--sign-secret-file" in p.stderr, "signed: a short key: %d %s" % (p.returncode, p.stderr[-200:]))
