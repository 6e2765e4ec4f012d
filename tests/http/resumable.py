"""http suite, resumable uploads (issue 23; docs/api.md "Resumable uploads"): POST /uploads,
HEAD/GET/PATCH/DELETE /uploads/{uid} against the real server.

Imported by http_test.py, which passes itself (h): its curl, Server, check, ... are used,
so the responses are audited with the rest and the servers stopped with the rest.  The
same tests run against the S3 store when the s3 suite sets ONNXVIZ_TEST_S3.
"""
import base64
import hashlib
import os
import signal
import socket
import time

PART = 1 << 20  # --upload-part-size of these tests: squeezenet (4.9 MB) is 5 parts


def b64(s):
    return base64.b64encode(s.encode()).decode()


def begin(h, s, size, sha, name="model.onnx", structure=None, headers=(), token=None, kind=None):
    """POST /uploads; sha None: begun without sha256 (decision 97: the last part names it)."""
    meta = ("sha256 %s," % b64(sha) if sha is not None else "") + "filename %s" % b64(name)
    if kind:
        meta += ",kind %s" % b64(kind)
    if structure:
        meta += ",structure %s" % b64(structure)
    hs = ["Upload-Length: %d" % size, "Upload-Metadata: " + meta] + list(headers)
    if not any(x.lower().startswith("tus-resumable:") for x in hs):
        hs.append("Tus-Resumable: 1.0.0")
    if token:
        hs.append("Authorization: Bearer %s" % token)
    return h.curl(s.url("/uploads"), method="POST", headers=hs)


def patch(h, s, uid, offset, data, ctype="application/offset+octet-stream", token=None, headers=()):
    # Expect: 100-continue: an answer before the body (409, 413, 415) is then read
    # cleanly instead of meeting a body still on the wire
    hs = ["Content-Type: " + ctype, "Upload-Offset: %d" % offset, "Tus-Resumable: 1.0.0", "Expect: 100-continue"]
    hs += list(headers)
    if token:
        hs.append("Authorization: Bearer %s" % token)
    return h.curl(s.url("/uploads/" + uid), method="PATCH", headers=hs, data=data)


def send_from(h, s, uid, blob, offset, part=PART, stop_after=None):
    """PATCH the parts of blob from offset on; the last answer (or the one that stopped)."""
    r = None
    sent = 0
    while offset < len(blob):
        chunk = blob[offset:offset + part]
        r = patch(h, s, uid, offset, chunk)
        if r.status not in (200, 201, 204):
            return r
        offset += len(chunk)
        sent += 1
        if stop_after is not None and sent >= stop_after:
            break
    return r


def store_uid(secret):
    """The store's name of the upload whose URL carries secret (issue 35: the URL is a
    secret; the store knows only its hash)."""
    return hashlib.sha256(("onnxviz-upload/2 " + secret).encode()).hexdigest()[:32]


def offset_of(r):
    v = r.h("upload-offset")
    return int(v) if v is not None and v.isdigit() else -1


def t_protocol(h):
    """begin, parts, HEAD, a part twice, wrong offsets and sizes, the end, never twice."""
    s = h.Server("--upload-part-size", "1M")
    blob = open(h.SQUEEZENET, "rb").read()
    sha = hashlib.sha256(blob).hexdigest()
    r = begin(h, s, len(blob), sha, name="squeezenet1_1.onnx")
    j = r.json() or {}
    uid = j.get("upload", "")
    h.check(r.status == 201 and r.h("location") == "/uploads/" + uid and offset_of(r) == 0 and
            r.h("upload-part-size") == str(PART) and r.h("tus-resumable") == "1.0.0" and
            r.h("upload-expires"), "POST /uploads: 201, Location, Upload-Offset 0, part size: %r %r" % (r, r.headers))
    h.check(j.get("length") == len(blob) and j.get("sha256") == sha and j.get("name") == "squeezenet1_1.onnx",
            "the upload's JSON: %r" % j)
    r = h.curl(s.url("/uploads/" + uid), head=True)
    h.check(r.status == 200 and offset_of(r) == 0 and r.h("upload-length") == str(len(blob)) and
            r.h("cache-control") == "no-store", "HEAD: offset 0: %r %r" % (r, r.headers))
    r = patch(h, s, uid, 0, blob[:PART])
    h.check(r.status == 204 and offset_of(r) == PART, "first part: 204, offset %d: %r %r" % (PART, r, r.headers))
    r = patch(h, s, uid, 0, blob[:PART])
    h.check(r.status == 409 and r.error_code() == "offset_mismatch" and offset_of(r) == PART,
            "a part sent twice: 409 with the offset to go on from: %r" % r)
    r = patch(h, s, uid, 2 * PART, blob[2 * PART:3 * PART])
    h.check(r.status == 409 and r.error_code() == "offset_mismatch", "a part out of order: 409: %r" % r)
    r = patch(h, s, uid, PART, blob[PART:PART + 1000])
    h.check(r.status == 400 and r.error_code() == "bad_part_size", "a short part: 400: %r" % r)
    r = patch(h, s, uid, PART, blob[PART:PART + PART + 1])
    h.check(r.status == 413 and r.error_code() == "part_too_large", "an oversized part: 413: %r" % r)
    r = patch(h, s, uid, PART, blob[PART:PART + 100], ctype="application/octet-stream")  # (small: answered before the body)
    h.check(r.status == 415, "a part of another type: 415: %r" % r)
    r = h.curl(s.url("/uploads/" + uid), method="PATCH", headers=["Content-Type: application/offset+octet-stream"],
               data=blob[PART:PART + 100])
    h.check(r.status == 400 and r.error_code() == "bad_upload", "a part without Upload-Offset: 400: %r" % r)
    r = patch(h, s, "0" * 32, 0, b"x")
    h.check(r.status == 404 and r.error_code() == "upload_not_found", "PATCH of no upload: 404: %r" % r)
    # the same file started again (another client, or one that forgot its URL): an
    # upload of its own, which cannot touch the first (issue 35); a client resumes by the
    # URL it was given (HEAD above)
    r = begin(h, s, len(blob), sha, name="squeezenet1_1.onnx")
    other = (r.json() or {}).get("upload", "")
    h.check(r.status == 201 and other not in ("", uid) and offset_of(r) == 0,
            "POST again: an upload of its own, at 0: %r" % r)
    h.check(h.curl(s.url("/uploads/" + other), method="DELETE").status == 204, "its creator ends it")
    r = h.curl(s.url("/uploads/" + uid))
    h.check(r.status == 200 and (r.json() or {}).get("offset") == PART, "GET: the offset as JSON: %r" % r)
    r = send_from(h, s, uid, blob, PART)
    j = r.json() or {}
    h.check(r.status == 201 and j.get("id") == sha and r.h("location") == "/models/" + sha,
            "last part: 201 with the model's summary: %r" % r)
    r = h.curl(s.url("/models/%s/model.onnx" % sha))
    h.check(r.status == 200 and r.body == blob, "the model stored is the file, bit for bit")
    r = h.curl(s.url("/models"))
    item = [m for m in (r.json() or {}).get("models", []) if m["id"] == sha]
    h.check(item and item[0].get("name") == "squeezenet1_1.onnx", "listed with its file name: %r" % item)
    r = h.curl(s.url("/uploads/" + uid), head=True)
    h.check(r.status == 404, "the finished upload is gone: %r" % r)
    r = begin(h, s, len(blob), sha)
    h.check(r.status == 200 and (r.json() or {}).get("stored") is True and r.h("location") == "/models/" + sha,
            "never twice: POST /uploads of a stored file: 200 and its model: %r" % r)
    m = s.metrics()
    ev = lambda e: m.get('onnxviz_resumable_uploads_total{event="%s"}' % e, 0)  # noqa: E731
    h.check(ev("started") == 2 and ev("completed") == 1 and ev("held") == 1 and ev("resumed") == 2,
            "metrics: started, resumed, completed, held: %r" % {k: v for k, v in m.items() if "resumable" in k})
    h.check(m.get("onnxviz_resumable_bytes_total") == len(blob), "metrics: bytes acknowledged")
    # bad requests
    r = h.curl(s.url("/uploads"), method="POST", headers=["Upload-Metadata: sha256 %s" % b64(sha)])
    h.check(r.status == 400 and r.error_code() == "bad_upload", "no Upload-Length: 400: %r" % r)
    # (a model or a data file may begin without sha256, its last part naming it: t_unnamed)
    r = h.curl(s.url("/uploads"), method="POST", headers=["Upload-Length: 10", "Upload-Metadata: kind " + b64("bundle")])
    h.check(r.status == 400 and r.error_code() == "bad_upload", "a manifest without sha256: 400: %r" % r)
    r = h.curl(s.url("/uploads"), method="POST", headers=["Upload-Length: 10", "Upload-Metadata: sha256 %%%"])
    h.check(r.status == 400 and r.error_code() == "bad_upload", "metadata not base64: 400: %r" % r)
    r = begin(h, s, 10, "ab" * 32, headers=["Tus-Resumable: 0.2.2"])
    h.check(r.status == 412 and r.h("tus-version") == "1.0.0", "another tus version: 412: %r" % r)
    r = h.curl(s.url("/uploads"), method="POST", headers=["Upload-Length: 10"], data=b"0123456789")
    h.check(r.status == 413, "POST /uploads with a body: 413: %r" % r)
    # DELETE
    r = begin(h, s, 5000, "cd" * 32)
    uid2 = (r.json() or {}).get("upload", "")
    r = h.curl(s.url("/uploads/" + uid2), method="DELETE")
    h.check(r.status == 204, "DELETE: 204: %r" % r)
    r = h.curl(s.url("/uploads/" + uid2), head=True)
    h.check(r.status == 404, "deleted: 404: %r" % r)
    h.check(s.metrics().get('onnxviz_resumable_uploads_total{event="aborted"}') == 2, "metrics: aborted")
    r = h.curl(s.url("/uploads/" + uid2), method="PUT")
    h.check(r.status == 405 and "PATCH" in (r.h("allow") or ""), "PUT: 405 naming PATCH: %r" % r)
    # an LLM-sized file with the default limits: taken (the parts are what --max-upload bounds)
    big = h.Server()
    free = os.statvfs(big.store)
    size = 3 << 30
    r = begin(h, big, size, "ef" * 32, name="llm.onnx.data")
    if free.f_bavail * free.f_frsize > size:
        h.check(r.status == 201 and r.h("upload-part-size") == str(16 << 20),
                "a 3 GiB file with the default limits: 201, 16 MiB parts: %r" % r)
    else:
        h.check(r.status == 507 and r.error_code() == "insufficient_storage", "3 GiB on a small disk: 507: %r" % r)
    r = begin(h, big, 1 << 52, "ef" * 32)
    h.check(r.status == 400, "an absurd length: 400: %r" % r)
    h.check(big.stop() == 0, "server exit (default limits)")
    lim = h.Server("--max-resumable", "1M")
    r = begin(h, lim, 2 << 20, "ef" * 32)
    h.check(r.status == 413 and r.error_code() == "upload_too_large", "--max-resumable: 413: %r" % r)
    h.check(lim.stop() == 0, "server exit (--max-resumable)")
    h.check(s.stop() == 0, "server exit (resumable protocol)")


def t_wrong_hash(h):
    """The bytes do not hash to the sha256 given: 422 at the end, nothing kept."""
    s = h.Server("--upload-part-size", "1M")
    blob = open(h.SQUEEZENET, "rb").read()
    real = hashlib.sha256(blob).hexdigest()
    claimed = hashlib.sha256(b"another file").hexdigest()
    r = begin(h, s, len(blob), claimed)
    uid = (r.json() or {}).get("upload", "")
    r = send_from(h, s, uid, blob, 0)
    h.check(r.status == 422 and r.error_code() == "checksum_mismatch" and real in r.json()["error"]["message"],
            "wrong hash: 422 checksum_mismatch naming the hash received: %r" % r)
    h.check(h.curl(s.url("/models/" + claimed)).status == 404 and h.curl(s.url("/models/" + real)).status == 404,
            "wrong hash: no model under either id")
    h.check(h.curl(s.url("/uploads/" + uid), head=True).status == 404, "wrong hash: the upload is gone")
    h.check(not s.model_files(), "wrong hash: nothing in the store")
    h.check(s.metrics().get('onnxviz_resumable_uploads_total{event="refused"}') == 1, "metrics: refused")
    # a file that is not a model: refused by the parser, as a plain upload would be
    junk = os.urandom(3 * PART // 2)
    r = begin(h, s, len(junk), hashlib.sha256(junk).hexdigest())
    uid = (r.json() or {}).get("upload", "")
    r = send_from(h, s, uid, junk, 0)
    h.check(r.status in (400, 422) and r.error_code() not in (None, "checksum_mismatch"),
            "not a model: refused by the parser: %r" % r)
    h.check(not s.model_files() and h.curl(s.url("/uploads/" + uid), head=True).status == 404,
            "not a model: nothing kept")
    h.check(s.stop() == 0, "server exit (wrong hash)")


def begin_unnamed(h, s, size, name="model.onnx", kind=None):
    return begin(h, s, size, None, name=name, kind=kind)


def t_unnamed(h):
    """An upload begun without sha256 (issue 37, decision 97: the page sends parts while it
    hashes): every request of its last part names the file (Upload-Sha256), checked against
    the bytes received as a POST's sha256 is; a claim they do not meet is 422
    checksum_mismatch with nothing kept, also the id of a model the server holds."""
    s = h.Server("--upload-part-size", "1M")
    blob = open(h.SQUEEZENET, "rb").read()
    real = hashlib.sha256(blob).hexdigest()
    other = open(h.SILERO, "rb").read()
    held = h.curl(s.url("/models"), method="POST", data=other,
                  headers=["Content-Type: application/octet-stream"]).json()["id"]
    last = (len(blob) - 1) // PART * PART
    claim = lambda sha: ["Upload-Sha256: " + sha]  # noqa: E731
    r = begin_unnamed(h, s, len(blob))
    j = r.json() or {}
    h.check(r.status == 201 and "sha256" in j and j["sha256"] is None and j.get("upload"),
            "unnamed: 201, sha256 null: %r" % r)
    uid = j.get("upload", "")
    r = begin_unnamed(h, s, 100, kind="bundle")
    h.check(r.status == 400 and r.error_code() == "bad_upload", "unnamed manifest: 400 (it lists every hash): %r" % r)
    r = begin(h, s, len(blob), "0" * 64)
    h.check(r.status == 400 and r.error_code() == "bad_upload", "sha256 of 64 zeros: 400 (no file hashes to it): %r" % r)
    r = send_from(h, s, uid, blob[:last], 0)
    h.check(r is not None and r.status == 204 and offset_of(r) == last, "unnamed: the parts before the last: %r" % r)
    # the last part without its name, or with one malformed: 400, the upload as it was
    for hs, code in (((), "sha256_required"), (claim("12ab"), "bad_upload"), (claim("0" * 64), "bad_upload")):
        r = patch(h, s, uid, last, blob[last:], headers=hs)
        h.check(r.status == 400 and r.error_code() == code, "unnamed, last part %r: 400 %s: %r" % (hs, code, r))
        r = piece(h, s, uid, last, blob[last:last + 4096]) if not hs and h.S3 is None else None
        h.check(r is None or (r.status == 400 and r.error_code() == code), "unnamed, a piece of the last part: 400: %r" % r)
    h.check(offset_of(h.curl(s.url("/uploads/" + uid), head=True)) == last, "unnamed: still before its last part")
    # a part before the last may carry the name (checked for its form only)
    r = patch(h, s, uid, last - PART, blob[last - PART:last], headers=claim("12ab"))
    h.check(r.status == 400 and r.error_code() == "bad_upload", "a malformed name on any part: 400: %r" % r)
    # a claim the bytes do not meet: the id of a model the server holds (and of the same
    # size would make no difference: the bytes are hashed first) — 422, nothing kept
    refused0 = s.metrics().get('onnxviz_resumable_uploads_total{event="refused"}', 0)
    r = patch(h, s, uid, last, blob[last:], headers=claim(held))
    h.check(r.status == 422 and r.error_code() == "checksum_mismatch" and real in r.json()["error"]["message"],
            "unnamed, a claim of another file: 422 checksum_mismatch naming the hash received: %r" % r)
    h.check(h.curl(s.url("/models/" + real)).status == 404, "unnamed, wrong claim: nothing stored under the bytes' id")
    h.check(h.curl(s.url("/models/%s/model.onnx" % held)).body == other, "unnamed, wrong claim: the held model unchanged")
    h.check(h.curl(s.url("/uploads/" + uid), head=True).status == 404, "unnamed, wrong claim: the upload is gone")
    h.check(s.metrics().get('onnxviz_resumable_uploads_total{event="refused"}') == refused0 + 1, "metrics: refused")
    # again, the last part as pieces each naming the file (an S3 store: whole parts only):
    # stored under the id it hashes to
    uid = (begin_unnamed(h, s, len(blob)).json() or {}).get("upload", "")
    send_from(h, s, uid, blob[:last], 0)
    mid = last + (len(blob) - last) // 2 // 64 * 64
    if h.S3 is None:
        r1 = patch(h, s, uid, last, blob[last:mid], headers=["Upload-Piece: 1"] + claim(real))
        r2 = patch(h, s, uid, mid, blob[mid:], headers=["Upload-Piece: 1"] + claim(real.upper()))
        h.check(r1.status == 204, "unnamed, the first piece of the last part: 204: %r" % r1)
    else:
        r2 = patch(h, s, uid, last, blob[last:], headers=claim(real.upper()))
    h.check(r2.status == 201 and (r2.json() or {}).get("id") == real,
            "unnamed, named by its last part: 201 with the file's id: %r" % r2)
    h.check(h.curl(s.url("/models/%s/model.onnx" % real)).body == blob, "unnamed: the model is the file")
    # a named upload's last part may repeat its name, not another
    uid = (begin(h, s, len(other), hashlib.sha256(other + b"x").hexdigest()).json() or {}).get("upload", "")
    r = patch(h, s, uid, 0, other[:PART], headers=claim(held))
    h.check(r.status == 400 and r.error_code() == "bad_upload", "named upload, another name: 400: %r" % r)
    # bytes that are not the held file's, of its size, claiming its id: hashed first, 422
    uid = (begin_unnamed(h, s, len(blob)).json() or {}).get("upload", "")
    send_from(h, s, uid, blob[:last], 0)
    bad = blob[last:-1] + bytes([blob[-1] ^ 1])
    r = patch(h, s, uid, last, bad, headers=claim(real))
    h.check(r.status == 422 and r.error_code() == "checksum_mismatch",
            "unnamed, other bytes of the held file's size claiming its id: 422: %r" % r)
    h.check(h.curl(s.url("/models/%s/model.onnx" % real)).body == blob, "the held model unchanged")
    # the same file again, unnamed: sent whole (nothing to look up), then told it is held
    uid = (begin_unnamed(h, s, len(blob)).json() or {}).get("upload", "")
    r = send_from(h, s, uid, blob[:last], 0)
    r = patch(h, s, uid, last, blob[last:], headers=claim(real))
    h.check(r.status == 200 and (r.json() or {}).get("id") == real and r.json().get("stored") is True,
            "unnamed, a file stored meanwhile: 200 stored, once its bytes are its own: %r" % r)
    h.check(s.metrics().get("onnxviz_resumable_known") == 1, "only the named upload above is left in progress")
    # a bundle's data file may begin unnamed too: kept as the blob its bytes hash to, and
    # a claim they do not meet is 422 with nothing kept
    data = os.urandom(2 * PART + 4096)
    dsha = hashlib.sha256(data).hexdigest()
    dlast = (len(data) - 1) // PART * PART
    for sent, name in ((bytes([data[0] ^ 1]) + data[1:], "other bytes"), (data, "its bytes")):
        r = begin_unnamed(h, s, len(data), name="w.bin", kind="data")
        j = r.json() or {}
        h.check(r.status == 201 and j.get("sha256", "") is None and j.get("kind") == "data",
                "unnamed data file: 201, sha256 null: %r" % r)
        send_from(h, s, j.get("upload", ""), sent[:dlast], 0)
        r = patch(h, s, j.get("upload", ""), dlast, sent[dlast:], headers=claim(dsha))
        if sent is data:
            h.check(r.status == 201 and (r.json() or {}).get("sha256") == dsha and r.json().get("stored") is True,
                    "unnamed data file named by its last part: 201, kept as its blob: %r" % r)
        else:
            h.check(r.status == 422 and r.error_code() == "checksum_mismatch",
                    "unnamed data file, %s claiming its hash: 422: %r" % (name, r))
    r = begin(h, s, len(data), dsha, name="w.bin", kind="data")
    h.check(r.status == 200 and (r.json() or {}).get("stored") is True,
            "the data file again, named: 200 already there (nothing sent): %r" % r)
    h.check(s.stop() == 0, "server exit (unnamed)")


def t_expiry(h):
    """Idle uploads expire: their parts go, HEAD says 404, the metrics count them."""
    s = h.Server("--upload-part-size", "1M", "--upload-expiry", "3")
    blob = open(h.SQUEEZENET, "rb").read()
    r = begin(h, s, len(blob), hashlib.sha256(blob).hexdigest())
    uid = (r.json() or {}).get("upload", "")
    r = patch(h, s, uid, 0, blob[:PART])
    h.check(r.status == 204, "expiry: a part: %r" % r)
    time.sleep(4.2)
    r = h.curl(s.url("/uploads/" + uid), head=True)
    h.check(r.status == 404, "expired: HEAD 404: %r" % r)
    # removed by the sweep's thread (a pass every 1.5 s here), not by the HEAD
    until = time.time() + 15
    while time.time() < until and s.metrics().get('onnxviz_resumable_uploads_total{event="expired"}') != 1:
        time.sleep(0.2)
    h.check(s.metrics().get('onnxviz_resumable_uploads_total{event="expired"}') == 1, "metrics: expired")
    h.check(not os.path.exists(os.path.join(s.store, "uploads", store_uid(uid))), "expired: its parts removed")
    h.check(s.stop() == 0, "server exit (expiry)")


def t_kill_resume(h):
    """kill -9 of the server mid-transfer (mid-part too): after a restart the upload goes on
    from the last acknowledged part, and ends with the right model."""
    s = h.Server("--upload-part-size", "1M")
    blob = open(h.SQUEEZENET, "rb").read()
    sha = hashlib.sha256(blob).hexdigest()
    r = begin(h, s, len(blob), sha, name="squeezenet1_1.onnx")
    uid = (r.json() or {}).get("upload", "")
    r = send_from(h, s, uid, blob, 0, stop_after=2)
    h.check(r.status == 204 and offset_of(r) == 2 * PART, "two parts acknowledged: %r" % r)
    # half of the third part on the wire, then the server dies
    c = cut_patch(s, uid, 2 * PART, PART, blob[2 * PART:2 * PART + PART // 2])
    time.sleep(0.3)
    s.proc.send_signal(signal.SIGKILL)
    s.proc.wait()
    c.close()
    s2 = h.Server("--upload-part-size", "1M", store=s.store)
    r = h.curl(s2.url("/uploads/" + uid), head=True)
    h.check(r.status == 200 and offset_of(r) == 2 * PART, "after kill -9: HEAD says the acknowledged offset: %r" % r)
    r = send_from(h, s2, uid, blob, 2 * PART)
    h.check(r.status == 201 and (r.json() or {}).get("id") == sha, "resumed after kill -9: stored: %r" % r)
    r = h.curl(s2.url("/models/%s/model.onnx" % sha))
    h.check(r.status == 200 and hashlib.sha256(r.body).hexdigest() == sha, "resumed: bit for bit")
    h.check(s2.stop() == 0, "server exit (kill -9 resume)")


def page_structure(h, path, name):
    """The structure the page cuts out of the file at path named `name` (web/structure.js
    structureOf, run by node: the page's own code, not the server's), or None."""
    import subprocess
    web = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "web", "structure.js"))
    out = h.write_tmp(b"")
    js = ("import {structureOf} from %s; import fs from 'node:fs';"
          "const [p, n, o] = process.argv.slice(1);"
          "const s = await structureOf(new File([await fs.openAsBlob(p)], n), {name: n});"
          "if (s.bytes) fs.writeFileSync(o, s.bytes); else process.exit(3);") % repr("file://" + web)
    p = subprocess.run(["node", "--input-type=module", "-e", js, path, name, out])
    return open(out, "rb").read() if p.returncode == 0 else None


def links_lines(s):
    try:
        return open(os.path.join(s.store, "uploads", "links")).read().splitlines()
    except FileNotFoundError:
        return []


def wait_status(h, s, path, status, seconds=20):
    """The status of GET path once it is `status` (the start-up check of links runs in the
    background), or the last one seen after `seconds`."""
    end = time.time() + seconds
    while True:
        r = h.curl(s.url(path))
        if r.status == status or time.time() > end:
            return r
        time.sleep(0.1)


def t_structure_link(h):
    """The page's structure uploaded first, then its file: the structure's URLs redirect to
    the whole model's, GET /models lists the model once; only a structure the server cuts
    out of the stored model itself is linked (decision 82)."""
    s = h.Server("--upload-part-size", "1M")
    blob = open(h.SQUEEZENET, "rb").read()
    sha = hashlib.sha256(blob).hexdigest()
    cut = page_structure(h, h.SQUEEZENET, "squeezenet1_1.onnx")
    h.check(cut is not None and len(cut) < len(blob) // 4, "the page cuts a structure out of squeezenet")
    st = h.upload(s, h.write_tmp(cut), query="?name=squeezenet1_1.onnx")
    sid = (st.json() or {}).get("id", "")
    h.check(st.status == 201, "structure stored: %r" % st)
    # a model of the same name that is not the structure: never linked
    fake = h.upload(s, h.write_tmp(h.make_chain(3)), query="?name=squeezenet1_1.onnx").json()["id"]
    other = h.upload(s, h.write_tmp(h.make_chain(4)), query="?name=other.onnx").json()["id"]
    r = begin(h, s, len(blob), sha, name="squeezenet1_1.onnx", structure=fake)
    uid = (r.json() or {}).get("upload", "")
    r = send_from(h, s, uid, blob, 0, stop_after=1)
    h.check(r.status == 204, "a part: %r" % r)
    # the same file begun again is an upload of its own (its URL is its creator's secret,
    # decision 83), which cannot change the first one's claim
    r2 = begin(h, s, len(blob), sha, name="squeezenet1_1.onnx", structure=sid)
    h.check(r2.status == 201 and (r2.json() or {}).get("upload") != uid,
            "the same file begun again: an upload of its own: %r" % r2)
    h.check((r.json() or {}).get("structure", fake) == fake, "the first upload keeps its claim: %r" % r)
    r = send_from(h, s, uid, blob, PART)
    h.check(r.status == 201, "the whole model: %r" % r)
    h.check(h.curl(s.url("/models/" + fake)).status == 200,
            "a model of the file's name that is not its structure is not redirected")
    h.check(links_lines(s) == [], "no link: %r" % links_lines(s))
    # the file stored already: POST /uploads naming another model as its structure links
    # nothing; naming its real structure links it (proven from the stored bytes: the page
    # reopening a file the server holds)
    r = begin(h, s, len(blob), sha, name="squeezenet1_1.onnx", structure=fake)
    h.check(r.status == 200 and h.curl(s.url("/models/" + fake)).status == 200 and links_lines(s) == [],
            "a claim on a stored model links nothing: %r" % r)
    r = begin(h, s, len(blob), sha, name="squeezenet1_1.onnx", structure=sid)
    r2 = h.curl(s.url("/models/" + sid))
    h.check(r.status == 200 and r2.status == 307 and r2.h("location") == "/models/" + sha,
            "its real structure named for the stored model: proven, linked: %r %r" % (r, r2))
    # the page's flow from the start (a store without the model)
    h.check(s.stop() == 0, "server exit (structure link, refused)")
    s = h.Server("--upload-part-size", "1M")
    sid = h.upload(s, h.write_tmp(cut), query="?name=squeezenet1_1.onnx").json()["id"]
    other = h.upload(s, h.write_tmp(h.make_chain(4)), query="?name=other.onnx").json()["id"]
    r = begin(h, s, len(blob), sha, name="squeezenet1_1.onnx", structure=sid)
    uid = (r.json() or {}).get("upload", "")
    h.check((r.json() or {}).get("structure") == sid, "the upload names its structure: %r" % r)
    r = send_from(h, s, uid, blob, 0)
    h.check(r.status == 201, "the whole model: %r" % r)
    r = h.curl(s.url("/models/" + sid))
    h.check(r.status == 307 and r.h("location") == "/models/" + sha, "structure summary: 307 to the model: %r %r" %
            (r, r.headers))
    r = h.curl(s.url("/models/%s/graph.svg?rankdir=LR" % sid))
    h.check(r.status == 307 and r.h("location") == "/models/%s/graph.svg?rankdir=LR" % sha,
            "structure drawing: 307 with the path and query kept: %r" % r.h("location"))
    r = h.curl(s.url("/models/%s/tensors/a%%20b" % sid))
    h.check(r.status == 307 and r.h("location") == "/models/%s/tensors/a%%20b" % sha,
            "a tensor URL: the name stays encoded: %r" % r.h("location"))
    ids = [m["id"] for m in (h.curl(s.url("/models")).json() or {}).get("models", [])]
    h.check(sha in ids and sid not in ids and other in ids, "listed once: %r" % ids)
    h.check(h.curl(s.url("/models/" + other)).status == 200, "another model is not redirected")
    h.check(links_lines(s) == ["%s %s squeezenet1_1.onnx" % (sid, sha)], "the link's line: %r" % links_lines(s))
    # the link survives a restart
    h.check(s.stop() == 0, "server exit (structure link)")
    s2 = h.Server("--upload-part-size", "1M", store=s.store)
    r = wait_status(h, s2, "/models/" + sid, 307)
    h.check(r.status == 307 and r.h("location") == "/models/" + sha, "after a restart: still 307: %r" % r)
    h.check(s2.stop() == 0, "server exit (structure link, restarted)")


def t_repoint(h):
    """Issue 35 item 1: a client's claims alone never repoint a model's URL.  V stored by
    someone, T any stored model: POST /uploads naming sha256 T, V's public name, structure V
    and V's size + 1 (no bytes sent); a bundle whose manifest names V as its model file; a
    forged line in uploads/links: /models/V serves V's bytes throughout, and after restarts."""
    s = h.Server("--upload-part-size", "64K")
    victim = open(h.SILERO, "rb").read()
    V = h.upload(s, h.write_tmp(victim), query="?name=silero_vad_v5.onnx").json()["id"]
    tb = open(h.SQUEEZENET, "rb").read()
    T = h.upload(s, h.write_tmp(tb), query="?name=squeezenet1_1.onnx").json()["id"]
    public = [m for m in h.curl(s.url("/models")).json()["models"] if m["id"] == V][0]
    name = (public.get("meta") or public).get("name") or "silero_vad_v5.onnx"

    def serves_v(what, srv):
        r = h.curl(srv.url("/models/%s/model.onnx" % V))
        h.check(r.status == 200 and hashlib.sha256(r.body).hexdigest() == V, "%s: /models/V serves V's bytes: %r" % (what, r))
        r = h.curl(srv.url("/models/" + V))
        h.check(r.status == 200 and (r.json() or {}).get("id") == V, "%s: V's summary, no redirect: %r" % (what, r))
        ids = [m["id"] for m in (h.curl(srv.url("/models")).json() or {}).get("models", [])]
        h.check(V in ids, "%s: V still listed" % what)

    r = begin(h, s, len(victim) + 1, T, name=name, structure=V)
    h.check(r.status == 200 and (r.json() or {}).get("stored") is True, "the claim: T is held: %r" % r)
    serves_v("the claim", s)
    h.check(links_lines(s) == [], "the claim made no link: %r" % links_lines(s))
    # a bundle naming V as its model file (V holds its weights: it is no structure)
    data = os.urandom(5000)
    dsha = hashlib.sha256(data).hexdigest()
    r = begin(h, s, len(data), dsha, name="w.bin", kind="data")
    send_from(h, s, (r.json() or {}).get("upload", ""), data, 0, part=64 << 10)
    man = ("onnxviz-bundle/1\nmodel %s %d\nfile %s %d w.bin\n" % (V, len(victim), dsha, len(data))).encode()
    bid = hashlib.sha256(man).hexdigest()
    r = begin(h, s, len(man), bid, name=name, kind="bundle", structure=V)
    r = patch(h, s, (r.json() or {}).get("upload", ""), 0, man)
    h.check(r.status == 201 and (r.json() or {}).get("id") == bid, "the bundle is stored: %r" % r)
    serves_v("a bundle naming V", s)
    h.check(links_lines(s) == [], "the bundle made no link: %r" % links_lines(s))
    # a forged line (as written before decision 82), then restarts
    h.check(s.stop() == 0, "server exit (repoint)")
    with open(os.path.join(s.store, "uploads", "links"), "a") as f:
        f.write("%s %s\n%s %s %s\n" % (V, T, bid, T, name))
    s2 = h.Server("--upload-part-size", "64K", store=s.store)
    serves_v("a forged line, restarted", s2)
    end = time.time() + 20
    while links_lines(s2) and time.time() < end:
        time.sleep(0.1)
    h.check(links_lines(s2) == [], "the forged lines are dropped from the file: %r" % links_lines(s2))
    h.check(sum("structure link not proven" in l and V in l for l in s2.log) == 1 and
            sum("structure link not proven" in l and bid in l for l in s2.log) == 1,
            "each drop is logged: %r" % [l for l in s2.log if "link" in l])
    h.check(s2.stop() == 0, "server exit (repoint, restarted)")
    s3 = h.Server("--upload-part-size", "64K", store=s.store)
    serves_v("restarted again", s3)
    h.check(s3.stop() == 0, "server exit (repoint, restarted again)")


def make_bundle(d):
    """model.onnx with two initializers in external data files (w.bin, sub/b.bin): the
    model's bytes and {location: bytes}."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(3)
    w = numpy_helper.from_array(rng.standard_normal((256, 256)).astype(np.float32), "w")
    b = numpy_helper.from_array(rng.standard_normal((256,)).astype(np.float32), "b")
    files = {"w.bin": w.raw_data, "sub/b.bin": b.raw_data}
    for t, loc in ((w, "w.bin"), (b, "sub/b.bin")):
        t.ClearField("raw_data")
        t.data_location = TensorProto.EXTERNAL
        for k, v in (("location", loc), ("offset", "0"), ("length", str(len(files[loc])))):
            e = t.external_data.add()
            e.key, e.value = k, v
    nodes = [helper.make_node("MatMul", ["x", "w"], ["y"], name="mm"),
             helper.make_node("Add", ["y", "b"], ["z"], name="add")]
    g = helper.make_graph(nodes, "bundle", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 256])],
                          [helper.make_tensor_value_info("z", TensorProto.FLOAT, [1, 256])], [w, b])
    m = helper.make_model(g, producer_name="resumable-test", opset_imports=[helper.make_opsetid("", 17)])
    return m.SerializeToString(), files


def manifest(model, files):
    """The bundle's manifest: its SHA-256 is the bundle's model id (oxs_bundle_id)."""
    text = "onnxviz-bundle/1\nmodel %s %d\n" % (hashlib.sha256(model).hexdigest(), len(model))
    for loc in sorted(files, key=lambda x: x.encode()):
        text += "file %s %d %s\n" % (hashlib.sha256(files[loc]).hexdigest(), len(files[loc]), loc)
    return text.encode()


def t_bundle(h):
    """A model and its external data files, resumably: the model alone first (the page's
    structure: drawn at once), each data file as kind data, then the manifest (kind
    bundle): the same id as a multipart upload of them all; the model's URLs redirect."""
    s = h.Server("--upload-part-size", "64K")
    model, files = make_bundle(h.TMP)
    sid = h.upload(s, h.write_tmp(model), query="?name=model.onnx").json()["id"]
    for loc, data in files.items():
        sha = hashlib.sha256(data).hexdigest()
        r = begin(h, s, len(data), sha, name=loc, kind="data")
        uid = (r.json() or {}).get("upload", "")
        h.check(r.status == 201 and (r.json() or {}).get("kind") == "data", "data file %s: 201: %r" % (loc, r))
        r = send_from(h, s, uid, data, 0, part=64 << 10)
        h.check(r.status == 201 and (r.json() or {}).get("stored") is True, "data file %s stored: %r" % (loc, r))
        r = h.curl(s.url("/uploads"), method="POST", headers=["Upload-Length: %d" % len(data),
                   "Upload-Metadata: sha256 %s,kind %s" % (b64(sha), b64("data"))])
        h.check(r.status == 200 and (r.json() or {}).get("stored") is True, "a data file again: held: %r" % r)
    man = manifest(model, files)
    bid = hashlib.sha256(man).hexdigest()
    meta = "sha256 %s,kind %s,filename %s,structure %s" % (b64(bid), b64("bundle"), b64("model.onnx"), b64(sid))
    r = h.curl(s.url("/uploads"), method="POST", headers=["Upload-Length: %d" % len(man), "Upload-Metadata: " + meta])
    uid = (r.json() or {}).get("upload", "")
    h.check(r.status == 201, "the manifest: 201: %r" % r)
    r = patch(h, s, uid, 0, man)
    h.check(r.status == 201 and (r.json() or {}).get("id") == bid, "the bundle stored under its id: %r" % r)
    # the same id as a plain multipart upload of the model with its data files
    plain = h.Server()
    form = [("model", "@%s;filename=model.onnx" % h.write_tmp(model))] + \
        [(loc, "@%s;filename=%s" % (h.write_tmp(data), os.path.basename(loc))) for loc, data in files.items()]
    r = h.curl(plain.url("/models"), form=form)
    h.check(r.status == 201 and (r.json() or {}).get("id") == bid, "a multipart upload gives the same id: %r" % r)
    h.check(plain.stop() == 0, "server exit (plain bundle)")
    r = h.curl(s.url("/models/%s/tensors/w?values=4" % bid))
    import struct
    want = list(struct.unpack("<4f", files["w.bin"][:16]))
    got = ((r.json() or {}).get("values") or {}).get("data")
    h.check(r.status == 200 and got is not None and len(got) == 4 and all(abs(a - b) <= 1e-6 * max(1, abs(b)) for a, b in zip(got, want)),
            "the weights are there: %r" % r)
    r = h.curl(s.url("/models/%s/tensors/b?values=4" % bid))
    h.check(r.status == 200, "the data file in a folder: %r" % r)
    r = h.curl(s.url("/models/" + sid))
    h.check(r.status == 307 and r.h("location") == "/models/" + bid, "the model file's URLs lead to the bundle: %r" % r)
    h.check(not os.listdir(os.path.join(s.store, "uploads", "blobs")), "the blobs went into the model")
    r = h.curl(s.url("/uploads"), method="POST", headers=["Upload-Length: %d" % len(man), "Upload-Metadata: " + meta])
    h.check(r.status == 200 and (r.json() or {}).get("id") == bid, "the bundle again: held: %r" % r)
    # a manifest naming a data file never sent; one not in canonical order
    files2 = dict(files, **{"c.bin": b"\x01" * 1000})
    for what, man2, code in (("missing data", manifest(model, files2), "bundle_incomplete"),
                             ("unsorted", b"onnxviz-bundle/1\nmodel %s %d\n" % (sid.encode(), len(model)) +
                              b"".join(b"file %s %d %s\n" % (hashlib.sha256(files[k]).hexdigest().encode(), len(files[k]), k.encode())
                                       for k in ("w.bin", "sub/b.bin")), "bad_manifest")):
        m2 = hashlib.sha256(man2).hexdigest()
        r = h.curl(s.url("/uploads"), method="POST", headers=["Upload-Length: %d" % len(man2), "Upload-Metadata: sha256 %s,kind %s" % (b64(m2), b64("bundle"))])
        r = patch(h, s, (r.json() or {}).get("upload", ""), 0, man2)
        h.check(r.status == 422 and r.error_code() == code, "%s: 422 %s: %r" % (what, code, r))
        h.check(h.curl(s.url("/models/" + m2)).status == 404, "%s: nothing stored" % what)
    h.check(s.stop() == 0, "server exit (bundle)")


def t_bundle_collide(h):
    """Issue 35 item 6: a manifest naming both `a` and `a/b` (a file and a folder of the
    same name) is 400 bad_location, as a multipart POST /models answers, before anything
    is touched: both blobs stay."""
    s = h.Server("--upload-part-size", "64K")
    model, _ = make_bundle(h.TMP)
    h.upload(s, h.write_tmp(model), query="?name=model.onnx")
    files = {"a": os.urandom(3000), "a/b": os.urandom(2000)}
    for loc, data in files.items():
        r = begin(h, s, len(data), hashlib.sha256(data).hexdigest(), name=loc, kind="data")
        r = send_from(h, s, (r.json() or {}).get("upload", ""), data, 0, part=64 << 10)
        h.check(r.status == 201, "data file %s: %r" % (loc, r))
    man = manifest(model, files)
    bid = hashlib.sha256(man).hexdigest()
    r = begin(h, s, len(man), bid, kind="bundle")
    r = patch(h, s, (r.json() or {}).get("upload", ""), 0, man)
    h.check(r.status == 400 and r.error_code() == "bad_location" and "'a'" in (r.json() or {}).get("error", {}).get("message", ""),
            "a and a/b: 400 bad_location naming them: %r" % r)
    blobs = sorted(os.listdir(os.path.join(s.store, "uploads", "blobs")))
    want = sorted(hashlib.sha256(d).hexdigest() for d in files.values())
    h.check(blobs == want, "both blobs kept: %r" % blobs)
    h.check(h.curl(s.url("/models/" + bid)).status == 404, "nothing stored")
    h.check(s.stop() == 0, "server exit (bundle a and a/b)")


def t_finish_retry(h):
    """Issue 35 item 3: an upload stays resumable until its model is stored.  The store's
    budget full at the last part (507): HEAD still says the acknowledged offset, POST finds
    the upload; a bundle's manifest the same, its blobs kept; with room again (a restart
    with a larger budget) the last part sent again finishes each — nothing else is sent."""
    if h.S3 is not None:  # an S3 store's budget is its cache's, which evicts: no 507 here
        return
    s = h.Server("--store-budget", "300K", "--upload-part-size", "64K")
    base = os.path.join(h.MODELS, "onnx-testdata", "light")
    h.check(h.upload(s, os.path.join(base, "light_inception_v2.onnx")).status == 201, "a model fills the budget")
    blob = open(os.path.join(base, "light_densenet121.onnx"), "rb").read()
    sha = hashlib.sha256(blob).hexdigest()
    part = 64 << 10
    last = len(blob) // part * part
    r = begin(h, s, len(blob), sha, name="densenet.onnx")
    uid = (r.json() or {}).get("upload", "")
    r = send_from(h, s, uid, blob, 0, part=part, stop_after=3)
    h.check(r.status == 204 and offset_of(r) == last, "three parts acknowledged: %r" % r)
    r = patch(h, s, uid, last, blob[last:])
    h.check(r.status == 507, "the last part: 507, the store is full: %r" % r)
    r = h.curl(s.url("/uploads/" + uid), head=True)
    h.check(r.status == 200 and offset_of(r) == last, "after the 507: HEAD says the acknowledged offset: %r" % r)
    # a bundle whose store fails: the manifest's upload and the blobs stay
    model, files = make_bundle(h.TMP)
    h.check(h.upload(s, h.write_tmp(model), query="?name=model.onnx").status == 201, "the bundle's model file")
    for loc, data in files.items():
        r = begin(h, s, len(data), hashlib.sha256(data).hexdigest(), name=loc, kind="data")
        r = send_from(h, s, (r.json() or {}).get("upload", ""), data, 0, part=part)
        h.check(r.status == 201, "data file %s: %r" % (loc, r))
    man = manifest(model, files)
    bid = hashlib.sha256(man).hexdigest()
    r = begin(h, s, len(man), bid, kind="bundle")
    muid = (r.json() or {}).get("upload", "")
    r = patch(h, s, muid, 0, man)
    h.check(r.status == 507, "the bundle: 507: %r" % r)
    blobs = os.path.join(s.store, "uploads", "blobs")
    h.check(len(os.listdir(blobs)) == 2, "the blobs are kept: %r" % os.listdir(blobs))
    r = h.curl(s.url("/uploads/" + muid), head=True)
    h.check(r.status == 200 and offset_of(r) == 0, "the manifest's upload stays: %r" % r)
    h.check(s.stop() == 0, "server exit (finish retry)")
    s2 = h.Server("--store-budget", "4M", "--upload-part-size", "64K", store=s.store)
    r = patch(h, s2, uid, last, blob[last:])
    h.check(r.status == 201 and (r.json() or {}).get("id") == sha, "the last part again: stored: %r" % r)
    r = h.curl(s2.url("/models/%s/model.onnx" % sha))
    h.check(r.status == 200 and hashlib.sha256(r.body).hexdigest() == sha, "bit for bit")
    h.check(h.curl(s2.url("/uploads/" + uid), head=True).status == 404, "the upload is over")
    r = patch(h, s2, muid, 0, man)
    h.check(r.status == 201 and (r.json() or {}).get("id") == bid, "the manifest again: the bundle: %r" % r)
    r = h.curl(s2.url("/models/%s/tensors/w?values=4" % bid))
    h.check(r.status == 200, "its weights are there: %r" % r)
    h.check(os.listdir(blobs) == [], "its blobs went into the model: %r" % os.listdir(blobs))
    left = [d for d in os.listdir(os.path.join(s.store, "uploads")) if d not in ("blobs", "links")]
    h.check(left == [], "no upload left: %r" % left)
    h.check(s2.stop() == 0, "server exit (finish retry, restarted)")


def structure_model(ranges, location="m.onnx"):
    """A structure: initializers of 256 floats each, external at (offset) in `location`; a
    range given as (offset, floats) has that many floats."""
    from onnx import TensorProto, helper
    inits, nodes, prev = [], [], "x"
    for i, off in enumerate(ranges):
        off, n = off if isinstance(off, tuple) else (off, 256)
        t = TensorProto(name="w%d" % i, data_type=TensorProto.FLOAT, dims=[n])
        t.data_location = TensorProto.EXTERNAL
        for k, v in (("location", location), ("offset", str(off)), ("length", str(4 * n))):
            e = t.external_data.add()
            e.key, e.value = k, v
        inits.append(t)
        nodes.append(helper.make_node("Add", [prev, "w%d" % i], ["y%d" % i], name="add%d" % i))
        prev = "y%d" % i
    g = helper.make_graph(nodes, "s", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [256])],
                          [helper.make_tensor_value_info(prev, TensorProto.FLOAT, [256])], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


def t_structure_lies(h):
    """A structure whose ranges do not fit the file it names is refused at POST /uploads:
    422 structure_lies naming the tensor and the rule; nothing is begun."""
    s = h.Server("--upload-part-size", "64K")
    size = 4096
    for what, ranges, rule in (("past the end", [0, 1024, 3584], "past_end"), ("overlap", [0, 512], "overlap"),
                               # the third starts inside the first; the empty one between them
                               # is no range to compare with
                               ("overlap past an empty tensor", [0, (100, 0), 500], "overlap")):
        sid = h.upload(s, h.write_tmp(structure_model(ranges)), query="?name=m.onnx").json()["id"]
        r = begin(h, s, size, hashlib.sha256(what.encode()).hexdigest(), name="m.onnx", structure=sid)
        e = (r.json() or {}).get("error", {})
        h.check(r.status == 422 and e.get("code") == "structure_lies" and e.get("rule") == rule and
                "'w" in e.get("message", ""), "%s: 422 structure_lies %s naming the tensor: %r" % (what, rule, r))
    h.check(not [d for d in os.listdir(os.path.join(s.store, "uploads")) if len(d) == 32], "nothing begun")
    sid = h.upload(s, h.write_tmp(structure_model([0, 1024, 3072])), query="?name=m.onnx").json()["id"]
    r = begin(h, s, size, hashlib.sha256(b"fits").hexdigest(), name="m.onnx", structure=sid)
    h.check(r.status == 201, "ranges within the file: 201: %r" % r)
    h.check(s.stop() == 0, "server exit (structure lies)")


def piece(h, s, uid, offset, data, flag="1"):
    return patch(h, s, uid, offset, data, headers=["Upload-Piece: " + flag])


def cut_patch(s, uid, offset, length, sent, as_piece=False):
    """A PATCH of `length` bytes at `offset` whose body stops after `sent` (bytes): the open
    socket, for the caller to close (or to keep while the server is killed)."""
    c = socket.create_connection(("127.0.0.1", s.port))
    head = ("PATCH /uploads/%s HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/offset+octet-stream\r\n%s"
            "Upload-Offset: %d\r\nContent-Length: %d\r\n\r\n" % (uid, "Upload-Piece: 1\r\n" if as_piece else "",
                                                                 offset, length))
    try:
        c.sendall(head.encode() + sent)
    except OSError:
        pass  # refused early (409): the server closed its side
    return c


def send_pieces(h, s, uid, blob, at, cuts):
    """The part at `at` as pieces [at+cuts[i], at+cuts[i+1]), all at once: their answers."""
    import threading
    end = min(len(blob), at + PART)
    bounds = [at + c for c in cuts if at + c < end] + [end]
    out = [None] * (len(bounds) - 1)

    def go(i):
        out[i] = piece(h, s, uid, bounds[i], blob[bounds[i]:bounds[i + 1]])
    ts = [threading.Thread(target=go, args=(i,)) for i in range(len(out))]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return out


def t_pieces(h):
    """One part in several requests at once (Upload-Piece, --upload-streams): a piece is
    answered 204 with the offset unchanged until the pieces cover the part; then the part is
    hashed in order and acknowledged as a whole PATCH would be.  Pieces in any order, sent
    again, re-cut, cut short by a kill -9; the rules they break answer 4xx."""
    blob = open(h.SQUEEZENET, "rb").read()
    sha = hashlib.sha256(blob).hexdigest()
    if h.S3 is not None:  # an object store's part is a temporary per request: whole parts only
        s = h.Server("--upload-part-size", "1M")
        r = begin(h, s, len(blob), sha)
        uid = (r.json() or {}).get("upload", "")
        h.check(r.h("upload-part-streams") == "1" and (r.json() or {}).get("streams") == 1,
                "S3 store: one stream per upload: %r" % r.headers)
        r = piece(h, s, uid, 0, blob[:1000])
        h.check(r.status == 400 and r.error_code() == "pieces_unsupported", "S3 store: a piece: 400: %r" % r)
        h.check(s.stop() == 0, "server exit (pieces, S3)")
        return
    s = h.Server("--upload-part-size", "1M")
    r = begin(h, s, len(blob), sha, name="squeezenet1_1.onnx")
    uid = (r.json() or {}).get("upload", "")
    h.check(r.h("upload-part-streams") == "4" and (r.json() or {}).get("streams") == 4,
            "POST /uploads: Upload-Part-Streams 4 by default: %r %r" % (r.headers, r.json()))
    # part 0: four pieces one after the other, last first
    q = PART // 4
    for i in (3, 2, 1):
        r = piece(h, s, uid, i * q, blob[i * q:(i + 1) * q])
        h.check(r.status == 204 and offset_of(r) == 0, "piece %d of part 0: 204, the offset still 0: %r" % (i, r))
    r = h.curl(s.url("/uploads/" + uid), head=True)
    h.check(offset_of(r) == 0, "three pieces in: HEAD still says 0 (nothing acknowledged): %r" % r)
    r = piece(h, s, uid, 0, blob[:q])
    h.check(r.status == 204 and offset_of(r) == PART, "the piece that covers the part: 204 at %d: %r" % (PART, r))
    h.check(s.metrics().get("onnxviz_resumable_pieces_total") == 4 and
            s.metrics().get('onnxviz_resumable_parts_total{outcome="stored"}') == 1, "metrics: 4 pieces, 1 part")
    # part 1: four at once
    rs = send_pieces(h, s, uid, blob, PART, [0, q, 2 * q, 3 * q])
    h.check(all(x.status == 204 for x in rs) and max(offset_of(x) for x in rs) == 2 * PART and
            sorted(offset_of(x) for x in rs)[:3] == [PART] * 3, "part 1 in 4 pieces at once: %r" % rs)
    # the rules: outside the part, past its end, empty, a bad flag
    r = piece(h, s, uid, PART, blob[PART:PART + 100])
    h.check(r.status == 409 and r.error_code() == "offset_mismatch" and offset_of(r) == 2 * PART,
            "a piece of a part acknowledged: 409 offset_mismatch at %d: %r" % (2 * PART, r))
    r = piece(h, s, uid, 3 * PART, blob[3 * PART:3 * PART + 100])
    h.check(r.status == 409 and r.error_code() == "offset_mismatch", "a piece of a later part: 409: %r" % r)
    r = piece(h, s, uid, 3 * PART - 10, blob[3 * PART - 10:3 * PART + 10])
    h.check(r.status == 413 and r.error_code() == "part_too_large", "a piece past the part's end: 413: %r" % r)
    r = piece(h, s, uid, 2 * PART, b"")
    h.check(r.status == 400 and r.error_code() == "bad_part_size", "an empty piece: 400: %r" % r)
    r = piece(h, s, uid, 2 * PART, blob[2 * PART:2 * PART + 100], flag="yes")
    h.check(r.status == 400 and r.error_code() == "bad_upload", "Upload-Piece: yes: 400: %r" % r)
    # part 2: a piece sent twice is harmless; pieces cut other ways add to what arrived
    a = 2 * PART
    for _ in range(2):
        r = piece(h, s, uid, a, blob[a:a + 300000])
        h.check(r.status == 204 and offset_of(r) == a, "the same piece twice: 204: %r" % r)
    r = piece(h, s, uid, a + 600000, blob[a + 600000:a + PART])
    h.check(r.status == 204 and offset_of(r) == a, "a piece apart from it: %r" % r)
    r = piece(h, s, uid, a + 200000, blob[a + 200000:a + 700000])
    h.check(r.status == 204 and offset_of(r) == 3 * PART,
            "a piece overlapping both received ones completes the part: %r" % r)
    # a whole PATCH while a piece of the part is received: takes the part as before
    r = piece(h, s, uid, 3 * PART + 5000, blob[3 * PART + 5000:3 * PART + 9000])
    h.check(r.status == 204 and offset_of(r) == 3 * PART, "a stray piece of part 3: %r" % r)
    r = patch(h, s, uid, 3 * PART, blob[3 * PART:4 * PART])
    h.check(r.status == 204 and offset_of(r) == 4 * PART, "a whole PATCH over received pieces: %r" % r)
    # part 4 (the last, shorter): pieces received, then kill -9 before the last one
    a = 4 * PART
    r = piece(h, s, uid, a + 1000, blob[a + 1000:])
    h.check(r.status == 204 and offset_of(r) == a, "the last part's tail piece: %r" % r)
    s.proc.send_signal(signal.SIGKILL)
    s.proc.wait()
    s2 = h.Server("--upload-part-size", "1M", store=s.store)
    r = h.curl(s2.url("/uploads/" + uid), head=True)
    h.check(offset_of(r) == a, "after kill -9: the acknowledged offset: %r" % r)
    r = piece(h, s2, uid, a, blob[a:a + 1000])
    h.check(r.status == 204 and offset_of(r) == a, "after kill -9 the received pieces are gone: %r" % r)
    r = piece(h, s2, uid, a + 1000, blob[a + 1000:])
    h.check(r.status == 201 and (r.json() or {}).get("id") == sha,
            "the piece that completes the last part carries the model: %r" % r)
    r = h.curl(s2.url("/models/%s/model.onnx" % sha))
    h.check(r.status == 200 and hashlib.sha256(r.body).hexdigest() == sha, "pieces: the model bit for bit")
    # bytes that do not hash to the id: refused at the end, nothing kept
    junk = bytearray(blob[:PART + 5000])
    jsha = hashlib.sha256(bytes(junk)).hexdigest()
    r = begin(h, s2, len(junk), jsha)
    juid = (r.json() or {}).get("upload", "")
    send_pieces(h, s2, juid, junk, 0, [0, q, 2 * q])
    junk[PART + 10] ^= 1
    rs = send_pieces(h, s2, juid, junk, PART, [0, 2500])
    h.check(any(x.status == 422 and x.error_code() == "checksum_mismatch" for x in rs),
            "a piece with other bytes: 422 checksum_mismatch: %r" % rs)
    h.check(h.curl(s2.url("/uploads/" + juid), head=True).status == 404 and
            h.curl(s2.url("/models/" + jsha)).status == 404, "nothing kept of it")
    h.check(s2.stop() == 0, "server exit (pieces)")
    # one stream: pieces refused, whole parts as before
    s3 = h.Server("--upload-part-size", "1M", "--upload-streams", "1")
    other = blob[:PART + 64]
    r = begin(h, s3, len(other), hashlib.sha256(other).hexdigest())
    ouid = (r.json() or {}).get("upload", "")
    h.check(r.h("upload-part-streams") == "1", "--upload-streams 1: Upload-Part-Streams 1: %r" % r.headers)
    r = piece(h, s3, ouid, 0, other[:100])
    h.check(r.status == 400 and r.error_code() == "pieces_unsupported", "--upload-streams 1: a piece: 400: %r" % r)
    h.check(s3.stop() == 0, "server exit (one stream)")


def t_pieces_race(h):
    """Hostile and racing pieces: six clients cut the part at the upload's offset their own
    random ways, overlap each other, cut bodies short; the upload ends as the file, once."""
    import random
    import threading
    if h.S3 is not None:
        return
    s = h.Server("--upload-part-size", "1M")
    blob = open(h.SQUEEZENET, "rb").read()
    sha = hashlib.sha256(blob).hexdigest()
    uid = (begin(h, s, len(blob), sha).json() or {}).get("upload", "")
    done, answers, lock = [], {}, threading.Lock()

    def client(seed):
        rnd = random.Random(seed)
        for _ in range(400):
            if done:
                return
            r = h.curl(s.url("/uploads/" + uid), head=True, record=False)
            at = offset_of(r)
            if r.status != 200 or at < 0:
                return
            end = min(len(blob), at + PART)
            a = rnd.randrange(at, end) if rnd.random() < 0.7 else at
            b = rnd.randrange(a + 1, end + 1) if rnd.random() < 0.7 else end
            if rnd.random() < 0.15:  # a body cut short: its range is free again
                cut_patch(s, uid, a, b - a, blob[a:a + (b - a) // 2], as_piece=True).close()
                continue
            r = piece(h, s, uid, a, blob[a:b])
            with lock:
                k = (r.status, r.error_code(), offset_of(r)); answers[k] = answers.get(k, 0) + 1
            if r.status in (200, 201):
                done.append(r)
    ts = [threading.Thread(target=client, args=(i,)) for i in range(6)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    h.check(len(done) == 1 and (done[0].json() or {}).get("id") == sha,
            "racing pieces: one answer carries the model: %d (%r)" % (len(done), answers))
    h.check({k[0] for k in answers} <= {200, 201, 204, 404, 409}, "racing pieces: only 2xx, 404 and 409: %r" % answers)
    r = h.curl(s.url("/models/%s/model.onnx" % sha))
    h.check(r.status == 200 and hashlib.sha256(r.body).hexdigest() == sha, "racing pieces: the model bit for bit")
    h.check(len((h.curl(s.url("/models")).json() or {}).get("models", [])) == 1, "racing pieces: listed once")
    h.check(s.stop() == 0, "server exit (racing pieces)")


def t_cut_body(h):
    """A part cut short by the client (its socket closed after 400 KB of 1 MiB, more than
    a read buffer): the server sees the close at once and the part is free again (with
    libmicrohttpd's epoll it waited for the 30 s idle timeout: decision 80)."""
    s = h.Server("--upload-part-size", "1M")
    blob = open(h.SQUEEZENET, "rb").read()
    uid = (begin(h, s, len(blob), hashlib.sha256(blob).hexdigest()).json() or {}).get("upload", "")
    for i, cut in enumerate((100000, 400000, 700000)):  # epoll missed some of these, not all
        at = i * PART
        cut_patch(s, uid, at, PART, blob[at:at + cut]).close()
        t = time.time()
        r = None
        while time.time() - t < 5:
            r = patch(h, s, uid, at, blob[at:at + PART])
            if r.error_code() != "upload_busy":
                break
            time.sleep(0.1)
        h.check(r.status == 204 and offset_of(r) == at + PART and time.time() - t < 3,
                "a part cut short after %d bytes frees the upload at once: %r after %.1f s" % (cut, r, time.time() - t))
    h.check(s.stop() == 0, "server exit (cut body)")


def t_auth(h):
    s = h.Server("--token", "t", "--upload-part-size", "1M")
    r = begin(h, s, 100, "ab" * 32)
    h.check(r.status == 401, "POST /uploads without the token: 401: %r" % r)
    r = begin(h, s, 100, "ab" * 32, token="t")
    uid = (r.json() or {}).get("upload", "")
    h.check(r.status == 201, "with the token: 201: %r" % r)
    r = patch(h, s, uid, 0, b"x" * 100)
    h.check(r.status == 401, "PATCH without the token: 401: %r" % r)
    r = h.curl(s.url("/uploads/" + uid), head=True)
    h.check(r.status == 401, "HEAD without the token: 401: %r" % r)
    r = h.curl(s.url("/uploads/" + uid), method="DELETE", headers=["Authorization: Bearer t"])
    h.check(r.status == 204, "DELETE with the token: 204: %r" % r)
    # a name of 250 characters that JSON escapes: its answer once outgrew its buffer (503,
    # and the buffer leaked: found by fuzz_http)
    odd = '"' * 250
    r = begin(h, s, 1000, hashlib.sha256(b"odd name").hexdigest(), name=odd, token="t")
    h.check(r.status == 201 and (r.json() or {}).get("name") == odd, "a long name escaped in JSON: 201: %r" % r)
    h.check(s.stop() == 0, "server exit (resumable auth)")


# ---------------------------------------------------------------------------------------
# Hostile clients (issue 35, items 2, 7 and 8): quotas, start expiry, one writer per upload


def raw_post(conn, size, sha, name="junk.onnx"):
    """POST /uploads on a kept-alive http.client connection: (status, headers, json)."""
    import json
    meta = "sha256 %s,filename %s" % (b64(sha), b64(name))
    conn.request("POST", "/uploads", headers={"Upload-Length": str(size), "Upload-Metadata": meta,
                                              "Tus-Resumable": "1.0.0"})
    r = conn.getresponse()
    body = r.read()
    try:
        j = json.loads(body)
    except ValueError:
        j = {}
    return r.status, {k.lower(): v for k, v in r.getheaders()}, j


def conn_from(s, source):
    """A connection to the server from the loopback address source (another client)."""
    import http.client
    return http.client.HTTPConnection("127.0.0.1", s.port, timeout=30, source_address=(source, 0))


def t_flood(h):
    """4,096+ POST /uploads with made-up sha256 from one client: that client is held to its
    --uploads-per-client (429 with Retry-After, never 409), and another client's upload of
    a real model goes through from start to end (issue 35 item 2: the table of uploads in
    progress was filled and every upload of anyone was 409 upload_busy for a day)."""
    s = h.Server("--upload-part-size", "1M")
    a = conn_from(s, "127.0.0.1")
    statuses = {}
    first_429 = None
    for i in range(4200):
        st, hs, j = raw_post(a, 1000 + i, hashlib.sha256(b"junk %d" % i).hexdigest())
        statuses[st] = statuses.get(st, 0) + 1
        if st == 429 and first_429 is None:
            first_429 = (hs, j)
    a.close()
    h.check(statuses.get(201) == 16 and statuses.get(429) == 4200 - 16 and 409 not in statuses,
            "4,200 junk POSTs from one client: 16 started (--uploads-per-client), the rest 429: %r" % statuses)
    hs, j = first_429 or ({}, {})
    ra = hs.get("retry-after", "")
    h.check(j.get("error", {}).get("code") == "too_many_uploads" and ra.isdigit() and 1 <= int(ra) <= 600,
            "the quota's answer: 429 too_many_uploads with Retry-After within --upload-start-expiry: %r %r" % (hs, j))
    # another client (another address), a real model: started, sent, stored
    blob = open(h.SQUEEZENET, "rb").read()
    sha = hashlib.sha256(blob).hexdigest()
    b = conn_from(s, "127.0.0.2")
    st, hs, j = raw_post(b, len(blob), sha, name="squeezenet1_1.onnx")
    b.close()
    h.check(st == 201 and j.get("upload"), "after the flood another client starts its upload: %r %r" % (st, j))
    r = send_from(h, s, j.get("upload", ""), blob, 0)
    h.check(r is not None and r.status == 201 and (r.json() or {}).get("id") == sha,
            "... and finishes it: %r" % r)
    m = s.metrics()
    h.check(m.get('onnxviz_resumable_refused_total{reason="quota"}') == 4200 - 16 and
            m.get("onnxviz_resumable_known") == 16, "metrics: refused by quota, 16 known: %r" %
            {k: v for k, v in m.items() if "resumable_refused" in k or "known" in k})
    h.check(s.stop() == 0, "server exit (flood)")


def t_quota(h):
    """The quota counts per client and gives back what ends: DELETE frees a slot; an upload
    with nothing acknowledged expires after --upload-start-expiry and frees its slot, one
    with a part acknowledged is kept; a full table answers 503 uploads_full with
    Retry-After; failed starts and uploads ended while a part arrives leak nothing."""
    s = h.Server("--upload-part-size", "1M", "--uploads-per-client", "2", "--upload-start-expiry", "2",
                 "--max-connections", "6")
    blob = open(h.SQUEEZENET, "rb").read()
    sha = hashlib.sha256(blob).hexdigest()
    u1 = (begin(h, s, len(blob), sha).json() or {}).get("upload", "")
    u2 = (begin(h, s, 5000, "cd" * 32).json() or {}).get("upload", "")
    r = begin(h, s, 6000, "ce" * 32)
    h.check(r.status == 429 and r.error_code() == "too_many_uploads" and (r.h("retry-after") or "").isdigit(),
            "a third upload of a client allowed two: 429 with Retry-After: %r %r" % (r, r.headers))
    h.check(h.curl(s.url("/uploads/" + u2), method="DELETE").status == 204, "DELETE of one")
    r = begin(h, s, 6000, "ce" * 32)
    h.check(r.status == 201, "the slot is free again: 201: %r" % r)
    u3 = (r.json() or {}).get("upload", "")
    r = patch(h, s, u1, 0, blob[:PART])
    h.check(r.status == 204, "a part of the first: 204: %r" % r)
    time.sleep(3.5)  # past --upload-start-expiry 2
    h.check(h.curl(s.url("/uploads/" + u3), head=True).status == 404,
            "an upload with nothing acknowledged expires after --upload-start-expiry")
    r = h.curl(s.url("/uploads/" + u1), head=True)
    h.check(r.status == 200 and offset_of(r) == PART, "one with a part acknowledged is kept: %r" % r)
    until = time.time() + 10
    while time.time() < until and begin(h, s, 7000, "cf" * 32).status != 201:
        time.sleep(0.3)
    h.check(time.time() < until, "the expired upload's slot is free again (the sweep's pass)")
    # a full table: --max-connections 6 x 2 uploads a client = 12; five more clients
    got = []
    for k in range(2, 8):
        c = conn_from(s, "127.0.0.%d" % k)
        for i in range(2):
            got.append(raw_post(c, 100 + i, hashlib.sha256(b"%d %d" % (k, i)).hexdigest()))
        c.close()
    full = [g for g in got if g[0] == 503]
    h.check(full and all(g[2].get("error", {}).get("code") == "uploads_full" and
                         g[1].get("retry-after", "").isdigit() for g in full) and
            sum(1 for g in got if g[0] == 201) == 12 - 2,
            "a full table: 503 uploads_full with Retry-After (never 409): %r" % [g[0] for g in got])
    h.check(s.stop() == 0, "server exit (quota)")
    # no leak on a failed start: the store cannot make the upload's folder (chattr +i)
    s = h.Server("--upload-part-size", "1M", "--uploads-per-client", "2")
    up = os.path.join(s.store, "uploads")
    locked = subprocess_ok(["chattr", "+i", up])
    if locked:
        try:
            fails = [begin(h, s, 1000 + i, hashlib.sha256(b"f %d" % i).hexdigest()).status for i in range(4)]
        finally:
            subprocess_ok(["chattr", "-i", up])
        h.check(all(x >= 500 for x in fails), "the store failing to start an upload: 5xx: %r" % fails)
        ok = [begin(h, s, 2000 + i, hashlib.sha256(b"g %d" % i).hexdigest()).status for i in range(2)]
        h.check(ok == [201, 201] and s.metrics().get("onnxviz_resumable_known") == 2,
                "after 4 failed starts the client still has its 2 uploads (nothing leaked): %r" % ok)
    else:
        h.skip("resumable quota: a failed start leaks nothing",
               "chattr +i is refused on %s (not ext2/3/4, xfs or btrfs?)" % up)
    # the race of a DELETE and a PATCH of one upload: nothing stays known, the quota is whole
    import threading
    s2 = h.Server("--upload-part-size", "1M", "--uploads-per-client", "3")
    for i in range(12):
        u = (begin(h, s2, len(blob), sha).json() or {}).get("upload", "")
        th = threading.Thread(target=lambda: patch(h, s2, u, 0, blob[:PART]))
        th.start()
        time.sleep(0.002 * (i % 4))
        h.curl(s2.url("/uploads/" + u), method="DELETE")
        th.join()
        h.curl(s2.url("/uploads/" + u), method="DELETE")  # the PATCH may have held it busy
    h.check(s2.metrics().get("onnxviz_resumable_known") == 0,
            "DELETE racing PATCH: nothing left in the table: %r" % s2.metrics().get("onnxviz_resumable_known"))
    ok = [begin(h, s2, 3000 + i, hashlib.sha256(b"h %d" % i).hexdigest()).status for i in range(3)]
    h.check(ok == [201, 201, 201], "... and the client's quota is whole: %r" % ok)
    h.check(s2.stop() == 0 and s.stop() == 0, "server exit (quota leaks)")


def subprocess_ok(cmd):
    import subprocess
    try:
        return subprocess.run(cmd, capture_output=True).returncode == 0
    except OSError:
        return False


def t_stranger(h):
    """One writer per upload (issue 35 items 7 and 8): a stranger who knows the file's
    sha256 and size cannot name the upload (the old derived id, or the store's name), so
    cannot DELETE or PATCH it; starting the same file gives it an upload of its own; the
    admin token may DELETE by the store's name; the creator finishes with the right bytes."""
    s = h.Server("--upload-part-size", "1M")
    blob = open(h.SQUEEZENET, "rb").read()
    sha = hashlib.sha256(blob).hexdigest()
    r = begin(h, s, len(blob), sha, name="squeezenet1_1.onnx")
    uid = (r.json() or {}).get("upload", "")
    h.check(r.status == 201 and len(uid) == 32 and r.h("location") == "/uploads/" + uid, "the creator's URL: %r" % r)
    h.check(patch(h, s, uid, 0, blob[:PART]).status == 204, "the creator's first part")
    derived = hashlib.sha256(("onnxviz-upload/1 %s %d" % (sha, len(blob))).encode()).hexdigest()[:32]
    for name, u in (("the id derived from sha256 and size", derived), ("the store's name", store_uid(uid))):
        r = h.curl(s.url("/uploads/" + u), method="DELETE", headers=["Tus-Resumable: 1.0.0"])
        h.check(r.status == 404, "a stranger's DELETE by %s: 404: %r" % (name, r))
        bad = bytearray(blob[PART:2 * PART])
        bad[0] ^= 0xff
        r = patch(h, s, u, PART, bytes(bad))
        h.check(r.status == 404, "a stranger's PATCH by %s: 404: %r" % (name, r))
    st, hs, j = raw_post(conn_from(s, "127.0.0.2"), len(blob), sha, name="squeezenet1_1.onnx")
    h.check(st == 201 and j.get("upload") not in (None, "", uid) and j.get("offset") == 0,
            "a second client of the same file: an upload of its own at 0: %r %r" % (st, j))
    bad = bytearray(blob[:PART])
    bad[7] ^= 0xff
    h.check(patch(h, s, j.get("upload", ""), 0, bytes(bad)).status == 204, "the stranger writes its own upload")
    r = h.curl(s.url("/uploads/" + uid), head=True)
    h.check(r.status == 200 and offset_of(r) == PART, "the creator's upload is where it was: %r" % r)
    r = send_from(h, s, uid, blob, PART)
    h.check(r is not None and r.status == 201 and (r.json() or {}).get("id") == sha, "the creator finishes: %r" % r)
    got = h.curl(s.url("/models/%s/model.onnx" % sha))
    h.check(got.status == 200 and got.body == blob, "the model is the creator's bytes")
    h.check(s.stop() == 0, "server exit (stranger)")
    # with a token: holders of it are admins; one DELETEs an upload it has no URL of
    s = h.Server("--upload-part-size", "1M", "--token", "t")
    r = begin(h, s, 5000, "cd" * 32, token="t")
    uid = (r.json() or {}).get("upload", "")
    r = h.curl(s.url("/uploads/" + store_uid(uid)), method="DELETE")
    h.check(r.status == 401, "DELETE by the store's name without the token: 401: %r" % r)
    r = h.curl(s.url("/uploads/" + store_uid(uid)), method="DELETE", headers=["Authorization: Bearer t"])
    h.check(r.status == 204, "the admin token DELETEs by the store's name: 204: %r" % r)
    h.check(h.curl(s.url("/uploads/" + uid), head=True, headers=["Authorization: Bearer t"]).status == 404,
            "gone for its creator too")
    h.check(s.stop() == 0, "server exit (stranger, token)")


def t_sweep_thread(h):
    """The expiry sweep runs on its own thread, a bounded number of state reads per pass
    (issue 35, suspected: a GET/HEAD/PATCH/DELETE of an expired upload read and removed
    every expired upload before it answered — on S3 one GET per upload).  600 uploads,
    made expired in their state files while the server is down; after the restart a HEAD
    of one answers 404 at once while most are still there; the sweep's passes then remove
    them all."""
    if h.S3 is not None:  # the states are edited as files
        return
    n = 600
    s = h.Server("--upload-part-size", "1M", "--uploads-per-client", "1000")
    c = conn_from(s, "127.0.0.1")
    urls = [raw_post(c, 1000 + i, hashlib.sha256(b"sweep %d" % i).hexdigest())[2].get("upload") for i in range(n)]
    c.close()
    h.check(s.stop() == 0, "server exit (sweep thread, 1)")
    up = os.path.join(s.store, "uploads")
    dirs = [d for d in os.listdir(up) if len(d) == 32]
    h.check(len(dirs) == n and all(u for u in urls), "%d uploads in the store: %d" % (n, len(dirs)))
    for d in dirs:  # expired long ago
        p = os.path.join(up, d, "state")
        text = open(p).read()
        open(p, "w").write("".join("expires 1\n" if x.startswith("expires ") else x + "\n"
                                   for x in text.splitlines()))
    count = lambda: sum(1 for d in os.listdir(up) if len(d) == 32)  # noqa: E731
    s2 = h.Server("--upload-part-size", "1M", "--upload-expiry", "4", store=s.store)
    before = count()
    t = time.time()
    r = h.curl(s2.url("/uploads/" + urls[-1]), head=True)
    took = time.time() - t
    after = count()
    print("  resumable sweep thread: HEAD of an expired upload %.3f s, %d of %d expired uploads there "
          "before it, %d after" % (took, before, n, after))
    h.check(r.status == 404 and before > 0 and after > 0,
            "HEAD of an expired upload: 404 without sweeping the others (%d before, %d after)" % (before, after))
    until = time.time() + 30
    while time.time() < until and count() > 0:
        time.sleep(0.3)
    m = s2.metrics()
    h.check(count() == 0 and m.get("onnxviz_resumable_known") == 0 and m.get("onnxviz_resumable_sweeps_total", 0) >= 2,
            "the sweep's thread removed them all, pass by pass: %d left, %r" %
            (count(), {k: v for k, v in m.items() if "sweep" in k or "known" in k}))
    h.check(s2.stop() == 0, "server exit (sweep thread)")

def t_answered_free(h):
    """An upload is free for its next request once its answer is sent, not only once the
    server has seen the request end: a client sending its first part on another connection
    the moment POST /uploads answered met 409 upload_busy (59 of 300 before)."""
    import http.client
    s = h.Server("--upload-part-size", "64K", "--uploads-per-client", "1000")
    c1 = http.client.HTTPConnection("127.0.0.1", s.port, timeout=20)
    c2 = http.client.HTTPConnection("127.0.0.1", s.port, timeout=20)
    busy, n, statuses = 0, 200, {}
    for i in range(n):
        blob = b"not a model %d " % i * 40
        sha = hashlib.sha256(blob).hexdigest()
        meta = "sha256 %s,filename %s" % (b64(sha), b64("m.onnx"))
        c1.request("POST", "/uploads", headers={"Host": "localhost", "Tus-Resumable": "1.0.0",
                                                 "Upload-Length": str(len(blob)), "Upload-Metadata": meta})
        r = c1.getresponse()
        r.read()
        loc = r.getheader("Location")
        c2.request("PATCH", loc, body=blob, headers={"Host": "localhost", "Tus-Resumable": "1.0.0", "Upload-Offset": "0",
                                                     "Content-Type": "application/offset+octet-stream"})
        r2 = c2.getresponse()
        r2.read()
        statuses[r2.status] = statuses.get(r2.status, 0) + 1
        busy += r2.status == 409
    c1.close()
    c2.close()
    h.check(busy == 0, "a part sent as POST /uploads answered: never 409 upload_busy: %d of %d (%r)" % (busy, n, statuses))
    h.check(s.stop() == 0, "server exit (answered free)")


def t_resumable(h):
    for name, fn in (("protocol", t_protocol), ("wrong hash", t_wrong_hash), ("unnamed", t_unnamed), ("expiry", t_expiry),
                     ("kill -9 resume", t_kill_resume), ("structure link", t_structure_link),
                     ("repoint", t_repoint), ("bundle", t_bundle), ("bundle a and a/b", t_bundle_collide),
                     ("finish retry", t_finish_retry),
                     ("structure lies", t_structure_lies), ("auth", t_auth),
                     ("pieces", t_pieces), ("racing pieces", t_pieces_race),
                     ("cut body", t_cut_body), ("answered free", t_answered_free), ("flood", t_flood), ("quota", t_quota),
                     ("stranger", t_stranger), ("sweep thread", t_sweep_thread)):
        only = [x for x in os.environ.get("RESUMABLE_ONLY", "").split(",") if x]
        if only and name not in only:  # a developer's quick run; never in CI
            continue
        t = time.time()
        fn(h)
        print("  resumable %s: %.1f s" % (name, time.time() - t), flush=True)
