"""http suite, two clients (issue 35): a victim and an attacker on one server, with and
without tokens, across every route that writes (uploads, parts, pieces, bundles, links,
overlays, deletes).  Nothing the attacker sends may change what the victim's ids serve, or
deny the victim an upload while the victim is within its quota.

Two clients on one machine: the victim speaks from 127.0.0.1, the attacker from 127.0.0.2
(Linux routes all of 127/8 to lo with no setup; curl --interface, sockets bound to it), so
the server, which counts per address (service/quota.h), sees two clients.  With tokens a
client is its token: every holder of one token is one client, so an attacker holding the
victim's token is tried for the ids (links, bundles, parts, overlays) but not for quotas.

The victim's ids are recorded once its uploads are done (status, Location and SHA-256 of
GET /models/{id}/model.onnx, and the small model's drawing); after each attack they must
answer exactly the same, and the victim must still complete a new resumable upload.  The
attacker knows only public facts: ids, sizes, file names (GET /models), the upload id's
public formula of today (uid_of in service/resumable.c).  Expectations are the issue's
(behaviour, never how it is built).

Imported by http_test.py (as resumable.py is); the s3 suite runs it against Ceph RGW with
the rest of the http suite (ONNXVIZ_TEST_S3).  TWOCLIENT_ONLY="name,name" picks attacks
(a developer's quick run; never in CI).
"""
import gzip
import hashlib
import os
import socket
import subprocess
import threading
import time

import resumable as R

VICTIM, ATTACKER = "127.0.0.1", "127.0.0.2"
PART = 64 << 10  # --upload-part-size here: the generated models are a few parts
WEB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "web")

# The page's cut (web/structure.js structureOf) run by node: a file's structure, as the
# page uploads it before the weights.
CUT = """
import fs from 'node:fs';
import path from 'node:path';
const [web, file, name] = process.argv.slice(1);
const { structureOf } = await import(path.resolve(web, 'structure.js'));
const s = await structureOf(new File([await fs.openAsBlob(file)], name), { name });
if (!s.bytes) { console.error(s.reason); process.exit(1); }
process.stdout.write(Buffer.from(s.bytes));
"""


def sha(b):
    return hashlib.sha256(b).hexdigest()


def uid_of(file_sha, size):
    """The upload id a stranger computes from a file's public hash and size (today's)."""
    return sha(("onnxviz-upload/1 %s %d" % (file_sha, size)).encode())[:32]


def cut(h, blob, name):
    """The structure the page would upload for blob named `name` (bytes; None: not cut)."""
    p = subprocess.run(["node", "--input-type=module", "-e", CUT, "--", WEB, h.write_tmp(blob), name],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return p.stdout if p.returncode == 0 else None


def weighted_model(seed, floats=48 << 10):
    """A model with one initializer of `floats` random floats (192 KiB by default: three
    parts, and a structure the page cuts) and a name of its own, so every call is a new id."""
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper
    w = numpy_helper.from_array(np.random.default_rng(seed).standard_normal(floats).astype(np.float32), "w")
    node = helper.make_node("Add", ["x", "w"], ["y"], name="add_%d" % seed)
    g = helper.make_graph([node], "g%d" % seed, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [floats])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [floats])], [w])
    return helper.make_model(g, producer_name="twoclient", opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


class Client:
    """One client: an address (and a token); every request goes from that address."""

    def __init__(self, h, s, addr, token=None):
        self.h, self.s, self.addr, self.token = h, s, addr, token
        self.begun = []  # uploads this client began (Location)

    def curl(self, path, headers=(), extra=(), **kw):
        hs = list(headers) + (["Authorization: Bearer %s" % self.token] if self.token else [])
        return self.h.curl(self.s.url(path), headers=hs, extra=["--interface", self.addr] + list(extra), **kw)

    def post_model(self, blob, name):
        return self.curl("/models?name=" + name, data=blob)

    def begin(self, size, file_sha, name="model.onnx", structure=None, kind=None):
        """POST /uploads; file_sha None: begun without sha256 (decision 97: the page's parts
        go while it hashes, the last part names the file)."""
        meta = ("sha256 %s," % R.b64(file_sha) if file_sha is not None else "") + "filename %s" % R.b64(name)
        if kind:
            meta += ",kind %s" % R.b64(kind)
        if structure:
            meta += ",structure %s" % R.b64(structure)
        r = self.curl("/uploads", method="POST", headers=[
            "Tus-Resumable: 1.0.0", "Upload-Length: %d" % size, "Upload-Metadata: " + meta])
        if r.status == 201 and r.h("location"):
            self.begun.append(r.h("location"))
        return r

    def begin_unnamed(self, size, name="model.onnx"):
        return self.begin(size, None, name)

    def finish_unnamed(self, loc, blob, claim, offset=0):
        """The parts of blob from offset on, the last naming the file as claim
        (Upload-Sha256): its answer."""
        last = (len(blob) - 1) // PART * PART
        r = self.send(loc, blob[:last], offset) if last > offset else None
        if r is not None and r.status != 204:
            return r
        return self.patch(loc, last, blob[last:], headers=["Upload-Sha256: " + claim])

    def cleanup(self):
        """Ends the uploads it began (an attacker that tidies up keeps its quota for the
        next attack; filling tables is an attack of its own)."""
        for loc in self.begun:
            self.curl(loc, method="DELETE")
        self.begun = []

    def patch(self, loc, offset, data, piece=False, headers=()):
        """A part (or a piece; headers: more of them).  A 409 upload_busy is tried again, as the page does: the
        server lets go of an upload once the request before has completed, which may be
        just after its answer left (seen once in ten runs, right after POST /uploads)."""
        hs = ["Content-Type: application/offset+octet-stream", "Upload-Offset: %d" % offset,
              "Tus-Resumable: 1.0.0", "Expect: 100-continue"] + (["Upload-Piece: 1"] if piece else []) + list(headers)
        for _ in range(40):
            r = self.curl(loc, method="PATCH", headers=hs, data=data)
            if r.error_code() != "upload_busy":
                break
            time.sleep(0.05)
        return r

    def send(self, loc, blob, offset=0):
        """The parts of blob from offset on, to the upload at loc; the last answer."""
        r = None
        while offset < len(blob):
            r = self.patch(loc, offset, blob[offset:offset + PART])
            if r.status not in (201, 204, 200):
                return r
            offset = min(len(blob), offset + PART)
        return r

    def resumable(self, blob, name, structure=None, kind=None):
        """A whole resumable upload as the page makes it: the final answer (or the refusal)."""
        r = self.begin(len(blob), sha(blob), name, structure, kind)
        if r.status == 200 and (r.json() or {}).get("stored"):
            return r
        if r.status != 201:
            return r
        return self.send(r.h("location"), blob, R.offset_of(r))


class Victim(Client):
    """The victim: its ids and what they served when recorded."""

    def __init__(self, h, s, addr, token=None):
        super().__init__(h, s, addr, token)
        self.ids = {}       # id -> what it is, for messages
        self.svg = None     # an id whose drawing is recorded too
        self.record = None
        self.fresh = 1000   # seeds of new models
        self.last = None    # the id of the last of them

    def served(self):
        out = {}
        for i in self.ids:
            r = self.curl("/models/%s/model.onnx" % i)
            out[i] = (r.status, r.h("location"), sha(r.body) if r.status == 200 else None)
        if self.svg:
            r = self.curl("/models/%s/graph.svg" % self.svg)
            out["graph.svg"] = (r.status, r.h("location"), sha(r.body) if r.status == 200 else None)
        listed, page = set(), "/models?limit=1000"
        while page:
            j = self.curl(page).json() or {}
            listed |= {m["id"] for m in j.get("models", [])}
            page = j.get("next")
        out["listed"] = tuple(sorted(i for i in self.ids if i in listed))
        return out

    def keep(self):
        self.record = self.served()
        self.first = dict(self.record)

    def adopt(self, *ids):
        """New ids of the victim join the record as they serve now; the others keep theirs."""
        now = self.served()
        listed = {i for i in ids if i in now["listed"]}
        for rec in (self.record, self.first):
            for i in ids:
                rec[i] = now[i]
            rec["listed"] = tuple(sorted(set(rec["listed"]) | listed))

    def intact(self, what, since_first=False):
        """After an attack: every id of the victim serves what it served before it (a
        change is reported once, at the attack that made it), or, since_first, what it
        served when recorded first."""
        now = self.served()
        for k, was in (self.first if since_first else self.record).items():
            self.h.check(now.get(k) == was, "%s: the victim's %s serves as %s: %r, now %r" %
                         (what, self.ids.get(k, k), "first recorded" if since_first else "before",
                          was, now.get(k)))
        self.record = now

    def can_upload(self, what):
        """The victim, within its quota, completes a new upload (three parts)."""
        self.fresh += 1
        blob = weighted_model(self.fresh)
        r = self.resumable(blob, "fresh%d.onnx" % self.fresh)
        ok = r.status == 201 and (r.json() or {}).get("id") == sha(blob)
        if ok:
            got = self.curl("/models/%s/model.onnx" % sha(blob))
            ok = got.status == 200 and got.body == blob
        self.h.check(ok, "%s: the victim still completes an upload: %r" % (what, r))
        self.last = sha(blob)


# ---------------------------------------------------------------------------------------
# The victim's uploads
def victim_setup(h, v, with_squeezenet):
    """A small model (POST /models), a structure and its full model the page's way
    (structure first, then the file resumably naming it), squeezenet too when asked."""
    small = h.make_model()
    r = v.post_model(small, "small.onnx")
    h.check(r.status in (200, 201), "victim: the small model: %r" % r)
    v.ids[sha(small)] = "small model"
    v.svg = sha(small)
    pairs = [(weighted_model(1), "victim.onnx")]
    if with_squeezenet:
        pairs.append((open(h.SQUEEZENET, "rb").read(), "squeezenet1_1.onnx"))
    for blob, name in pairs:
        st = cut(h, blob, name)
        h.check(st is not None and len(st) < len(blob) // 2, "the page's cut of %s" % name)
        r = v.post_model(st, name)
        h.check(r.status in (200, 201), "victim: the structure of %s: %r" % (name, r))
        r = v.resumable(blob, name, structure=sha(st))
        h.check(r.status in (200, 201) and (r.json() or {}).get("id") == sha(blob), "victim: %s resumably: %r" % (name, r))
        v.ids[sha(st)] = "structure of " + name
        v.ids[sha(blob)] = name
        r = v.curl("/models/" + sha(st))
        h.check(r.status == 307 and r.h("location") == "/models/" + sha(blob),
                "victim: the structure of %s leads to it: %r" % (name, r))
    v.sizes = {sha(small): (len(small), "small.onnx")}
    v.sizes.update({sha(b): (len(b), n) for b, n in pairs})
    v.keep()


# ---------------------------------------------------------------------------------------
# Attacks: each takes (h, v, a, ctx) and leaves the checks to the caller (intact, can_upload)
def a_forged_link(h, v, a, ctx):
    """Links from claims: Upload-Metadata naming the victim's id as the structure of the
    attacker's model, with the victim's file name and its size (+1, or exact), the
    attacker's model already stored ("already stored" path) or sent whole."""
    t = h.make_chain(3 + ctx["round"])
    a.post_model(t, "t.onnx")
    for vid, (size, name) in v.sizes.items():
        for length in (size + 1, size, len(t)):
            a.begin(length, sha(t), name=name, structure=vid)
    # a new model sent whole, naming each victim id as its structure
    for vid, (size, name) in v.sizes.items():
        ctx["round"] += 1
        a.resumable(weighted_model(50000 + ctx["round"], floats=1 << 10), name, structure=vid)
    # and the victim's structures, relinked to the attacker's model
    for vid, what in v.ids.items():
        if what.startswith("structure of "):
            a.begin(len(t), sha(t), name=what[len("structure of "):], structure=vid)


def a_bundle(h, v, a, ctx):
    """Bundle manifests naming a victim's model as the bundle's model, with the attacker's
    data file, and the victim's id as the structure; and `a` + `a/b` (issue item 6)."""
    # a model of the victim's no other attack has touched (a link made before would hide
    # what this one does: the first link wins)
    ctx["round"] += 1
    mine = weighted_model(60000 + ctx["round"], floats=256)
    h.check(v.post_model(mine, "mine.onnx").status in (200, 201), "bundles: the victim's new model")
    v.ids[sha(mine)] = "mine.onnx"
    v.sizes[sha(mine)] = (len(mine), "mine.onnx")
    v.adopt(sha(mine))
    junk = os.urandom(5000)
    for vid, (size, name) in v.sizes.items():
        a.resumable(junk, "w.bin", kind="data")  # (a bundle made takes the data file in)
        man = b"onnxviz-bundle/1\nmodel %s %d\nfile %s %d w.bin\n" % (vid.encode(), size, sha(junk).encode(), len(junk))
        a.resumable(man, name, structure=vid, kind="bundle")
    # data files at a and a/b (the second would be a file below the first): 400/422, never
    # a 500 that loses the blob already uploaded (issue item 6)
    ba, bb = os.urandom(4000), os.urandom(3000)
    a.resumable(ba, "a", kind="data")
    a.resumable(bb, "b", kind="data")
    vid, (size, name) = next(iter(v.sizes.items()))
    man = b"onnxviz-bundle/1\nmodel %s %d\n" % (vid.encode(), size) + b"".join(
        b"file %s %d %s\n" % (sha(d).encode(), len(d), loc) for loc, d in ((b"a", ba), (b"a/b", bb)))
    r = a.resumable(man, name, kind="bundle")
    h.check(r.status in (400, 422), "a bundle naming a and a/b: 400/422, not stored: %r" % r)
    r = a.begin(len(ba), sha(ba), "a", kind="data")
    h.check(r.status == 200 and (r.json() or {}).get("stored") is True,
            "a bundle naming a and a/b: the data file a is still held: %r" % r)


def a_race_structure(h, v, a, ctx):
    """The victim's structure is up and its file on its way (one part sent): the attacker
    claims the structure for its own model, bundles it with junk weights, and sends a model
    of the same structure with other weights.  The victim's file then finishes; its
    structure leads (if anywhere) to a model the server proved it is the structure of."""
    ctx["round"] += 1
    blob = weighted_model(70000 + ctx["round"])
    name = "race%d.onnx" % ctx["round"]
    st = cut(h, blob, name)
    sid = sha(st)
    h.check(v.post_model(st, name).status in (200, 201), "race: the victim's structure")
    r = v.begin(len(blob), sha(blob), name, structure=sid)
    loc = r.h("location")
    h.check(r.status == 201 and v.patch(loc, 0, blob[:PART]).status == 204, "race: the victim's first part")
    t = h.make_chain(40 + ctx["round"])
    a.post_model(t, "t.onnx")
    a.begin(len(blob), sha(t), name=name, structure=sid)            # claims alone
    a.begin(len(blob) + 1, sha(t), name=name, structure=sid)
    junk = os.urandom(len(blob))                                    # a bundle of the structure
    a.resumable(junk, name, kind="data")
    man = b"onnxviz-bundle/1\nmodel %s %d\nfile %s %d %s\n" % (sid.encode(), len(st), sha(junk).encode(),
                                                                 len(junk), name.encode())
    a.resumable(man, name, structure=sid, kind="bundle")
    other = bytearray(blob)                                         # the same structure, other weights
    other[-4096:-4000] = os.urandom(96)
    a.resumable(bytes(other), name, structure=sid)
    r = v.send(loc, blob, PART)
    h.check(r is not None and r.status in (200, 201) and (r.json() or {}).get("id") == sha(blob),
            "race: the victim's file completes: %r" % r)
    got = v.curl("/models/%s/model.onnx" % sha(blob))
    h.check(got.status == 200 and got.body == blob, "race: the victim's file serves its bytes")
    r = v.curl("/models/" + sid)
    if r.status == 307:
        to = (r.h("location") or "").rsplit("/", 1)[-1]
        full = v.curl("/models/%s/model.onnx" % to)
        # proven: the server's cut of the model is the structure, or the model is a bundle
        # whose model file is the structure itself (its weights in data files; decision 82)
        proven = full.status == 200 and (cut(h, full.body, name) == st or full.body == st)
        h.check(proven, "race: the victim's structure leads only to a model it is the structure of: %s" % to)
        if proven and to != sha(blob):
            print("  NOTE race: the victim's structure leads to another model of the same structure "
                  "(%s, sent first), not to the victim's file" % to[:12], flush=True)
    else:
        h.check(r.status == 200 and sha(r.body) != "" and (r.json() or {}).get("id") == sid,
                "race: the victim's structure serves itself or a proven model: %r" % r)
    v.ids[sha(blob)] = name
    v.ids[sid] = "structure of " + name
    v.sizes[sha(blob)] = (len(blob), name)
    v.adopt(sha(blob), sid)  # the victim's new file, and whatever its structure became


def a_upload_delete(h, v, a, ctx):
    """The victim's upload in progress, its id computed from public facts (hash and size):
    the attacker DELETEs it; the victim goes on from its acknowledged offset."""
    ctx["round"] += 1
    blob = weighted_model(90000 + ctx["round"])
    r = v.begin(len(blob), sha(blob), "mine.onnx")
    loc = r.h("location")
    h.check(r.status == 201 and v.patch(loc, 0, blob[:PART]).status == 204, "delete: the victim's first part")
    uid = uid_of(sha(blob), len(blob))
    a.curl("/uploads/" + uid, method="DELETE")
    a.curl("/uploads/" + uid, method="PATCH", headers=["Tus-Resumable: 1.0.0", "Upload-Length: 0"])
    r = v.curl(loc, head=True)
    h.check(r.status == 200 and R.offset_of(r) == PART, "delete: the victim's upload is where it was: %r" % r)
    r = v.send(loc, blob, PART)
    h.check(r is not None and r.status == 201 and (r.json() or {}).get("id") == sha(blob),
            "delete: the victim's upload completes without sending a byte again: %r" % r)


def a_wrong_parts(h, v, a, ctx):
    """The attacker begins "the same" upload (the victim's hash and size) and sends wrong
    bytes for the victim's next part, whole and as pieces, before the victim does."""
    ctx["round"] += 1
    blob = weighted_model(95000 + ctx["round"])
    r = v.begin(len(blob), sha(blob), "mine.onnx")
    loc = r.h("location")
    h.check(r.status == 201 and v.patch(loc, 0, blob[:PART]).status == 204, "wrong parts: the victim's first part")
    bad = bytes(b ^ 0xff for b in blob[PART:2 * PART])
    r = a.begin(len(blob), sha(blob), "mine.onnx")
    aloc = r.h("location") or "/uploads/" + uid_of(sha(blob), len(blob))
    at = R.offset_of(r) if R.offset_of(r) >= 0 else PART
    a.patch(aloc, at, bad[:PART // 2], piece=True)
    a.patch(aloc, at, bad)
    guessed = "/uploads/" + uid_of(sha(blob), len(blob))
    if guessed != aloc:
        a.patch(guessed, PART, bad, piece=True)
        a.patch(guessed, PART, bad)
    r = v.curl(loc, head=True)
    at = R.offset_of(r)
    h.check(r.status == 200 and at == PART, "wrong parts: the victim's upload is at its own offset: %r %r" % (r, at))
    r = v.send(loc, blob, max(at, 0))
    h.check(r is not None and r.status == 201 and (r.json() or {}).get("id") == sha(blob),
            "wrong parts: the victim's upload completes with its bytes: %r" % r)
    got = v.curl("/models/%s/model.onnx" % sha(blob))
    h.check(got.status == 200 and got.body == blob, "wrong parts: the model is the victim's file")


def a_unnamed(h, v, a, ctx):
    """Uploads begun without their id (decision 97): while the victim's is in progress, the
    attacker finishes uploads of its own bytes naming each of the victim's ids (and the
    victim's file in progress) by Upload-Sha256: each refused (422), nothing stored; the
    victim's upload then ends as its file."""
    ctx["round"] += 1
    blob = weighted_model(97000 + ctx["round"])
    r = v.begin_unnamed(len(blob), "mine.onnx")
    loc = r.h("location")
    h.check(r.status == 201 and v.patch(loc, 0, blob[:PART]).status == 204, "unnamed: the victim's first part")
    targets = [(sha(blob), len(blob))] + [(i, n) for i, (n, _) in v.sizes.items() if n <= 4 * PART]
    for vid, size in targets:
        r = a.begin_unnamed(size, "mine.onnx")
        h.check(r.status == 201, "unnamed: the attacker's upload begins: %r" % r)
        r = a.finish_unnamed(r.h("location"), os.urandom(size), vid)
        h.check(r.status == 422 and r.error_code() == "checksum_mismatch",
                "unnamed: the attacker's bytes named as the victim's %s: 422: %r" % (vid[:12], r))
    h.check(v.curl("/models/%s" % sha(blob), head=True).status == 404, "unnamed: nothing stored as the victim's file")
    r = v.finish_unnamed(loc, blob, sha(blob), PART) if R.offset_of(v.curl(loc, head=True)) == PART else None
    h.check(r is not None and r.status == 201 and (r.json() or {}).get("id") == sha(blob),
            "unnamed: the victim's upload ends as its file: %r" % r)
    got = v.curl("/models/%s/model.onnx" % sha(blob))
    h.check(got.status == 200 and got.body == blob, "unnamed: the model is the victim's file")


def a_overlays(h, v, a, ctx):
    """Overlays posted to the victim's models (their drawings and bytes stay), and posts
    held open in flight; the victim's own overlay post is still taken."""
    for vid in v.sizes:
        a.curl("/models/%s/overlays" % vid, method="POST", data=b"node,ms\nadd0,5\n",
               headers=["Content-Type: text/csv"])
    held = []
    try:
        for _ in range(8):  # bodies of 1 MB promised, 10 bytes sent, held open
            c = socket.create_connection(("127.0.0.1", v.s.port), source_address=(a.addr, 0), timeout=5)
            c.sendall(b"POST /models/%s/overlays HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: text/csv\r\n%s"
                      b"Content-Length: 1000000\r\n\r\nnode,ms\nad" %
                      (v.svg.encode(), v.s.port, b"Authorization: Bearer %s\r\n" % a.token.encode() if a.token else b""))
            held.append(c)
        time.sleep(0.2)
        r = v.curl("/models/%s/overlays" % v.svg, method="POST", data=b"node,ms\nadd0,%d\n" % ctx["round"],
                   headers=["Content-Type: text/csv"], timeout=10)
        if a.token is not None and a.token == v.token:
            # the same token is the same client: its posts in flight are the victim's own
            h.check(r.status in (200, 201, 429), "overlays, one client: the post is taken or waits: %r" % r)
        else:
            h.check(r.status in (200, 201),
                    "overlays: the victim's own overlay is taken while the attacker's are held: %r" % r)
    finally:
        for c in held:
            c.close()


def a_junk_uploads(h, v, a, ctx):
    """Uploads begun with made-up hashes, as fast as one address can (keep-alive, 4
    connections), until the table (4,096) would be full or the attacker is refused 40
    times in a row: the attacker holds at most --uploads-per-client (16 here) and is
    answered 503 with Retry-After beyond, never 409; the victim is not refused."""
    n, statuses, lock = 4200, {}, threading.Lock()
    deadline = time.time() + 20 * h.SLOW
    refused = [0]  # in a row

    def run(k):
        try:
            run1(k)
        except OSError as e:  # the server closed on it: what it answered so far counts
            key = "closed: %s" % e.__class__.__name__
            with lock:
                statuses[key] = statuses.get(key, 0) + 1

    def run1(k):
        c = socket.create_connection(("127.0.0.1", v.s.port), source_address=(a.addr, 0), timeout=30)
        f = c.makefile("rb")
        auth = b"Authorization: Bearer %s\r\n" % a.token.encode() if a.token else b""
        i = k
        while i < n and time.time() < deadline and refused[0] < 40:
            meta = "sha256 %s,filename %s" % (R.b64(sha(b"junk %d %d" % (ctx["round"], i))), R.b64("j.onnx"))
            c.sendall(b"POST /uploads HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nTus-Resumable: 1.0.0\r\n%s"
                      b"Upload-Length: 1000000\r\nUpload-Metadata: %s\r\n\r\n" % (v.s.port, auth, meta.encode()))
            line = f.readline()
            if not line:
                break
            st = int(line.split()[1])
            length, retry = 0, False
            while True:
                hl = f.readline().strip()
                if not hl:
                    break
                k_, _, val = hl.partition(b":")
                if k_.lower() == b"content-length":
                    length = int(val)
                retry |= k_.lower() == b"retry-after"
            f.read(length)
            with lock:
                key = "%d%s" % (st, " retry-after" if retry else "")
                statuses[key] = statuses.get(key, 0) + 1
                refused[0] = 0 if st == 201 else refused[0] + 1
            i += 4
        c.close()

    ts = [threading.Thread(target=run, args=(k,)) for k in range(4)]
    t0 = time.time()
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    print("  junk uploads from one address: %r in %.1f s" % (statuses, time.time() - t0), flush=True)
    h.check(not any(k.startswith("409") for k in statuses) and
            all(k.startswith(("201", "429", "closed")) or k == "503 retry-after" for k in statuses),
            "junk: the attacker's uploads are taken or 503 with Retry-After, never 409: %r" % statuses)
    h.check(statuses.get("201", 0) <= 16, "junk: the attacker holds at most --uploads-per-client (16) uploads "
            "in progress: %d" % statuses.get("201", 0))
    ctx["round"] += 1


def a_bodies(h, v, a, ctx):
    """Huge, gzip'd and slow bodies: the gzip bomb is 413 naming the ratio; a body past
    --max-upload 413; the slow body is dropped."""
    bomb = gzip.compress(b"\0" * (64 << 20), 9)
    r = a.curl("/models", data=bomb, headers=["Content-Encoding: gzip"])
    msg = ((r.json() or {}).get("error") or {}).get("message", "")
    h.check(r.status == 413 and "ratio" in msg, "a gzip bomb (%d KB to 64 MiB): 413 naming the ratio: %r" %
            (len(bomb) >> 10, r))
    r = a.curl("/models", extra=["-H", "Content-Length: %d" % (3 << 30)], data=b"x" * 10, timeout=10)
    h.check(r.status == 413, "a body past --max-upload: 413: %r" % r)


def slow_body_start(s, addr):
    """A POST /models whose body comes one byte a second (a thread): answers a function that
    says, when asked, after how many seconds the server closed it (None: still open), and
    ends the trickle (a request still open would hold the server's stop for --grace)."""
    c = socket.create_connection(("127.0.0.1", s.port), source_address=(addr, 0), timeout=2)
    c.sendall(b"POST /models HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: application/octet-stream\r\n"
              b"Content-Length: 100000\r\n\r\n" % s.port)
    t0, closed = time.time(), []

    def drip():
        while not closed and time.time() - t0 < 40:
            try:
                c.sendall(b"x")
                c.settimeout(1)
                c.recv(4096)  # an answer (408, 413) or the close: either way it is over
                closed.append(time.time() - t0)
            except socket.timeout:
                continue
            except OSError:
                closed.append(time.time() - t0)
        c.close()

    th = threading.Thread(target=drip, daemon=True)
    th.start()

    def waited(limit=25):
        # the attacks may be over before two --timeout windows have passed: wait for them
        while not closed and time.time() - t0 < limit:
            time.sleep(0.2)
        t = closed[0] if closed else None
        closed.append(None)  # the trickle stops
        th.join(3)
        return t
    return waited


def a_host(h, v, a, ctx):
    """A page on another site that rebinds its name to 127.0.0.1 (DNS rebinding): its
    requests carry its own Host; nothing of the victim's is answered to it."""
    vid = v.last  # served to the victim (its last upload)
    r = v.curl("/models/%s/model.onnx" % vid)
    h.check(r.status == 200, "host: the victim reads its model: %r" % r)
    for host in ("attacker.example", "attacker.example:%d" % v.s.port, "127.0.0.1.attacker.example"):
        r = a.curl("/models/%s/model.onnx" % vid, headers=["Host: " + host])
        h.check(not 200 <= r.status < 300, "Host %s: the victim's model is not served: %r" % (host, r))
        r = a.curl("/models", headers=["Host: " + host])
        h.check(not 200 <= r.status < 300, "Host %s: the model list is not served: %r" % (host, r))


ATTACKS = (("forged links", a_forged_link), ("bundles", a_bundle), ("structure race", a_race_structure),
           ("delete upload", a_upload_delete), ("wrong parts", a_wrong_parts), ("unnamed", a_unnamed),
           ("overlays", a_overlays),
           ("bodies", a_bodies), ("host", a_host), ("junk uploads", a_junk_uploads))
# an attacker holding the victim's token is the same client: no quota of its own to fill
SAME_CLIENT = ("forged links", "bundles", "structure race", "delete upload", "wrong parts", "unnamed",
               "overlays")


def attack_all(h, v, a, names, tag):
    only = [x for x in os.environ.get("TWOCLIENT_ONLY", "").split(",") if x]
    ctx = {"round": 0}
    for name, fn in ATTACKS:
        if name not in names or (only and name not in only):
            continue
        t = time.time()
        fn(h, v, a, ctx)
        a.cleanup()
        what = "%s, %s" % (tag, name)
        v.intact(what)
        v.can_upload(what)
        print("  two clients %s: %.1f s" % (what, time.time() - t), flush=True)


def t_open(h):
    """No tokens: the victim at 127.0.0.1, the attacker at 127.0.0.2."""
    s = h.Server("--upload-part-size", "64K", "--timeout", "5", "--min-body-rate", "1K", "--uploads-per-client", "16")
    v, a = Victim(h, s, VICTIM), Client(h, s, ATTACKER)
    victim_setup(h, v, with_squeezenet=True)
    slow = slow_body_start(s, ATTACKER)
    r = a.curl("/models/%s" % next(iter(v.sizes)), method="DELETE")
    h.check(r.status in (401, 403), "DELETE of the victim's model: refused: %r" % r)
    attack_all(h, v, a, [n for n, _ in ATTACKS], "open")
    waited = slow()
    h.check(waited is not None and waited <= 4 * 5, "a body sent a byte a second is dropped within two --timeout "
            "windows: %s" % ("%.0f s" % waited if waited else "still open"))
    # what was made survives a restart, and nothing else does
    h.check(s.stop() == 0, "server exit (two clients, open)")
    s2 = h.Server("--upload-part-size", "64K", store=s.store)
    v.s = a.s = s2
    v.intact("open, after a restart", since_first=True)
    v.can_upload("open, after a restart")
    h.check(s2.stop() == 0, "server exit (two clients, open, restarted)")


def t_tokens(h):
    """--token W --read-token R --auth-reads: the victim holds W; the attacker holds nothing,
    then R, then W too (the same client as the victim: ids, not quotas)."""
    s = h.Server("--upload-part-size", "64K", "--token", "victim-w", "--read-token", "reader-r", "--auth-reads")
    v = Victim(h, s, VICTIM, token="victim-w")
    victim_setup(h, v, with_squeezenet=False)
    vid = next(iter(v.sizes))
    size, name = v.sizes[vid]
    for tok in (None, "reader-r", "wrong"):
        a = Client(h, s, ATTACKER, token=tok)
        who = "token %s" % tok if tok else "no token"
        writes = [a.post_model(h.make_chain(5), "t.onnx"),
                  a.begin(size + 1, sha(b"t"), name=name, structure=vid),
                  a.curl("/uploads/" + uid_of(vid, size), method="DELETE"),
                  a.patch("/uploads/" + uid_of(vid, size), 0, b"x" * 100),
                  a.curl("/models/%s/overlays" % vid, method="POST", data=b"node,ms\nadd0,5\n",
                         headers=["Content-Type: text/csv"]),
                  a.curl("/models/" + vid, method="DELETE")]
        h.check(all(r.status in (401, 403) for r in writes), "%s: every write refused (401/403): %r" %
                (who, [r.status for r in writes]))
        r = a.curl("/models/%s/model.onnx" % vid)
        if tok == "reader-r":
            cc = r.h("cache-control") or ""
            h.check(r.status == 200 and "private" in cc and "public" not in cc,
                    "the read token's answers are private to caches: %r %r" % (r.status, cc))
        else:
            h.check(r.status == 401, "%s: the victim's model is not read: %r" % (who, r))
        v.intact("tokens, attacker with " + who)
    v.can_upload("tokens, attacker without the write token")
    a = Client(h, s, ATTACKER, token="victim-w")
    attack_all(h, v, a, SAME_CLIENT, "tokens, attacker holding the write token")
    v.intact("tokens, after every attack", since_first=True)
    h.check(s.stop() == 0, "server exit (two clients, tokens)")


def t_twoclient(h):
    with socket.socket() as probe:
        try:
            probe.bind((ATTACKER, 0))
        except OSError as e:  # not Linux's lo: the two clients need a second address
            h.skip("two clients", "cannot bind %s: %s" % (ATTACKER, e))
            return
    for name, fn in (("open", t_open), ("tokens", t_tokens)):
        t = time.time()
        fn(h)
        print("  two clients %s: %.1f s" % (name, time.time() - t), flush=True)
