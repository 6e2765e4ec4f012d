#!/usr/bin/python3
"""make_seeds.py — regenerates the hand-made seeds of the fuzz targets graph, tensor,
render, http, quant and derived (tests/fuzz/corpus/<name>/), from the generators of
tests/hostile/models.py, tests/data/quant_models.py, tests/bench/render_models.py and
tests/render/repeats.py.

Run by hand (/usr/bin/python3 tests/fuzz/make_seeds.py); the files are committed (each
under 64 KB, derived's under 128 KB) so replays need no python.  The targets also read the parse target's corpus
(tests/fuzz/<name>.seeds).
"""
import base64
import hashlib
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "hostile"))
sys.path.insert(0, os.path.join(HERE, "..", "data"))
sys.path.insert(0, os.path.join(HERE, "..", "bench"))
sys.path.insert(0, os.path.join(HERE, "..", "render"))
sys.dont_write_bytecode = True

import models as M  # noqa: E402

MAX_SEED = 64 * 1024
MAX_SEED_DERIVED = 128 * 1024  # a 400-node decoder (the overview starts at 320 boxes)


def graph_seeds():
    s = {
        "hostile_names": M.names_model(M.HOSTILE_NAMES, M.INVALID_UTF8),
        "recursive_functions": M.recursive_functions(),
        "if_nested_30": M.nested_if(30),
        "if_nested_33": M.nested_if(33),
        "chain_60": M.chain(60),
        "wide_node_300": M.wide_node(300),
        "many_nodes_500": M.many_nodes(500),
        "dims_overflow": M.dims_model([2**62, 4]),
        "dims_negative": M.dims_model([-1]),
        "dims_zero": M.dims_model([0]),
        "rank_64": M.shape_dims_model(64),
        "external": M.external_model([("location", "w.bin"), ("length", "16")]),
        "small": M.small(),
    }
    return s


def render_seeds():
    return {
        "hostile_names": M.names_model(M.HOSTILE_NAMES, M.INVALID_UTF8),
        "chain_40": M.chain(40),
        "if_nested_4": M.nested_if(4),
        "recursive_functions": M.recursive_functions(),
        "long_names": M.chain(8, name_len=3000),
        "small": M.small(),
    }


def quant_seeds():
    """Every dequantization layout of quant_models.dequant_cases() (DequantizeLinear per
    tensor / axis / block on 2-, 4- and 8-bit types, MatMulNBits, GatherBlockQuantized),
    and hostile variants of the GatherBlockQuantized and MatMulNBits ones: block size 0 and
    negative, a zero-length quantize axis, bits 0, 3 and 64, a scale of the wrong size."""
    import quant_models as Q
    from onnx import helper, numpy_helper
    import numpy as np
    s = {}
    for name, m, _, _ in Q.dequant_cases():
        s["dq_" + name] = m.SerializeToString()

    def gbq(block_size=16, bits=4, axis=1, V=4, D=8, S=1):
        data = numpy_helper.from_array(np.arange(V * D, dtype=np.uint8).reshape(V, D), "W")
        scales = numpy_helper.from_array(np.ones((V, S), np.float32), "scales")
        zp = numpy_helper.from_array(np.full((V, S), 0x88, np.uint8), "zp")
        n = helper.make_node("GatherBlockQuantized", ["W", "idx", "scales", "zp"], ["y"],
                             domain=Q.MS, gather_axis=0, quantize_axis=axis,
                             block_size=block_size, bits=bits)
        return Q.model([n], [data, scales, zp], [Q.vi("idx", 7, [2])], [Q.vi("y")],
                       ms=True, opset=21, ir=10).SerializeToString()

    s["gbq_block0"] = gbq(block_size=0)  # issue 22: SIGFPE in the preview
    s["gbq_block_neg"] = gbq(block_size=-16)
    s["gbq_axis_zero_len"] = gbq(D=0, S=0)
    s["gbq_bits3"] = gbq(bits=3)
    s["gbq_bits64"] = gbq(bits=64)
    s["gbq_axis0"] = gbq(axis=0, S=2)
    s["gbq_scale_wrong"] = gbq(S=3)

    def nbits(K=16, N=2, bs=16, bits=4, nbytes=None):
        kb = max(1, -(-K // bs)) if bs > 0 else 1
        blob = max(1, bs * bits // 8) if bs > 0 else 1
        B = np.arange(nbytes if nbytes is not None else N * kb * blob, dtype=np.uint8)
        n = helper.make_node("MatMulNBits", ["A", "B", "scales"], ["y"], domain=Q.MS, K=K,
                             N=N, bits=bits, block_size=bs)
        return Q.model([n], [numpy_helper.from_array(B, "B"),
                             numpy_helper.from_array(np.ones(N * kb, np.float32), "scales")],
                       [Q.vi("A", shape=[1, K])], [Q.vi("y")], ms=True).SerializeToString()

    s["nbits_block0"] = nbits(bs=0, nbytes=4)
    s["nbits_bits3"] = nbits(bits=3, nbytes=12)
    s["nbits_k0"] = nbits(K=0, nbytes=0)
    s["nbits_short"] = nbits(nbytes=5)
    return s


def derived_seeds():
    """Graphs big enough for the automatic overview (more than 320 drawn nodes) with name
    scopes: runs of identical layers, layers that differ (ranges), a LLaMA-like decoder
    whose Shape/Gather/Concat chains fold, and the 2,000-node scoped graph."""
    import render_models as R
    import repeats as P

    def differ(i, spec):
        spec["alpha"] = 0.1 + i  # every layer its own: no run; a family of more than 32: ranges
    from onnx import helper, TensorProto
    # a folded Shape whose known value overflows the row early: 8 symbolic dims of 13
    # four-byte characters, each shown as 12 and an ellipsis (issue 22, render/fold.c)
    dims = ["\U0001d538" * 13 + str(i) for i in range(8)]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, dims)
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    g = helper.make_graph([helper.make_node("Shape", ["x"], ["s"], name="shape_of_x"),
                           helper.make_node("Reshape", ["x", "s"], ["y"], name="reshape")],
                          "long_dims", [x], [y])
    long_dims = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    s = {
        "fold_row_long_dims": long_dims,
        "layered_4": R.layered_graph(4, "layered_4"),
        "chain_30_top": P.chain_model(30, extra_top=True),
        "chain_34_differ": P.chain_model(34, tweak=differ),
        "norms": P.norms_model(),
        "scoped_2x5": R.scoped_graph(2, 5, "scoped_2x5"),
    }
    # the target takes its options from the input's last two bytes: end each model with an
    # unknown ModelProto field (15, bytes) holding them, one seed per set of options
    opts = {"": (0x00, 0x00),                # arith=fold, group=auto, attrs=key, quant=fold
            "_unfold_all": (0x02, 0x80),     # unfold=n0,n1,n2,n3, attrs=all
            "_ranges": (0x00, 0x30),         # group=2
            "_range_open": (0x80 | 7 << 3, 0x30),  # group=2, expand=/model/layers.0..9
            "_open": (0x80 | 2 << 3, 0x08),  # expand=/model/layers.0..3/*, subgraphs=expand
            "_depth2": (0x40 | 0x08, 0x00),  # depth=2
            "_nodes": (0x01, 0x03)}          # arith=nodes, initializers=nodes, quant=nodes
    which = {"layered_4": ["", "_unfold_all", "_nodes"],  # the big ones: a few (the size)
             "chain_30_top": ["", "_open", "_depth2"],
             "chain_34_differ": ["_ranges", "_range_open"],
             "scoped_2x5": ["", "_depth2"]}
    out = {}
    for k, m in s.items():
        b = m.SerializeToString()
        for suffix in which.get(k, opts):
            k2, k1 = opts[suffix]
            out[k + suffix] = b + bytes([15 << 3 | 2, 2, k2, k1])
    return out


def req(method, path, body=None, headers=(), chunked=False):
    """One HTTP/1.1 request as bytes."""
    h = [b"%s %s HTTP/1.1" % (method, path), b"Host: fuzz"] + list(headers)
    if body is not None and chunked:
        h.append(b"Transfer-Encoding: chunked")
        half = len(body) // 2
        body = b"".join(b"%x\r\n%s\r\n" % (len(c), c) for c in (body[:half], body[half:]) if c) + b"0\r\n\r\n"
    elif body is not None:
        h.append(b"Content-Length: %d" % len(body))
    return b"\r\n".join(h) + b"\r\n\r\n" + (body or b"")


def http_seeds():
    """Request streams for fuzz_http: every route, uploads raw, chunked and multipart, the
    one-shot renderings, and the hostile cases of the hostile suite in small."""
    import hashlib
    model = M.small()
    mid = hashlib.sha256(model).hexdigest().encode()
    tok = [b"Authorization: Bearer t"]  # the fuzz server's token
    raw = [b"Content-Type: application/octet-stream"] + tok
    mp = [b"Content-Type: multipart/form-data; boundary=xYzZy"] + tok
    base = b"/models/" + mid
    s = {
        "gets": b"".join(req(b"GET", p) for p in (b"/healthz", b"/readyz", b"/metrics", b"/openapi.json",
                                                  b"/", b"/index.html", b"/models?limit=2")),
        "head": req(b"HEAD", b"/healthz") + req(b"HEAD", b"/openapi.json"),
        "upload_then_read": req(b"POST", b"/models", model, raw) + b"".join(
            req(b"GET", base + p) for p in (b"", b"/document.json", b"/nodes/n0", b"/nodes/n1",
                                            b"/search?q=r&limit=5", b"/model.onnx", b"/graph.svg")),
        "upload_etag": req(b"POST", b"/models", model, raw) +
                       req(b"GET", base, headers=[b'If-None-Match: "x", W/"' + mid[:32] + b'"']),
        "upload_chunked": req(b"POST", b"/models", model, raw, chunked=True),
        "upload_multipart": req(b"POST", b"/models", M.multipart([(b"model", model)]), mp),
        "multipart_two_parts": req(b"POST", b"/models", M.multipart([(b"note", b"hi"), (b"model", model)]), mp),
        "multipart_twenty_parts": req(b"POST", b"/models",
                                      M.multipart([(b"f%d" % i, b"x") for i in range(20)]), mp),
        "multipart_nul_boundary": req(b"POST", b"/models", M.multipart([(b"model", model)], b"a\x00b"),
                                      [b"Content-Type: multipart/form-data; boundary=a\x00b"] + tok),
        "multipart_long_boundary": req(b"POST", b"/models", M.multipart([(b"model", model)], b"b" * 200),
                                       [b"Content-Type: multipart/form-data; boundary=" + b"b" * 200] + tok),
        "oneshot_svg": req(b"POST", b"/graph.svg?rankdir=LR&group=none", model, raw),
        "oneshot_json_multipart": req(b"POST", b"/graph.json", M.multipart([(b"model", model)]), mp),
        "delete": req(b"POST", b"/models", model, raw) + req(b"DELETE", base, headers=tok) +
                  req(b"DELETE", base, headers=[b"Authorization: Bearer nope"]),
        "bad_model": req(b"POST", b"/models", M.varint_11(), raw) +
                     req(b"POST", b"/models", M.length_prefix(2**63), raw),
        "smuggle_two_lengths": b"POST /models HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n"
                               b"Content-Length: 40\r\n\r\nhelloGET /healthz HTTP/1.1\r\n\r\n",
        "te_and_length": b"POST /models HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
                         b"Content-Length: 5\r\n\r\n0\r\n\r\n",
        "length_lies_short": b"POST /models HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\n"
                             b"Authorization: Bearer t\r\nContent-Length: 999\r\n\r\n" + model,
        "length_lies_long": b"POST /models HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\n"
                            b"Authorization: Bearer t\r\nContent-Length: 3\r\n\r\n" + model,
        "bad_options": req(b"GET", base + b"/graph.svg?rankdir=XY&depth=1&depth=2") +
                       req(b"GET", b"/models?after=zz&limit=0"),
        "long_header": req(b"GET", b"/healthz", headers=[b"X-Long: " + b"a" * 3000]),
        "methods": req(b"PUT", b"/models") + req(b"OPTIONS", b"/") + req(b"GET", b"/models", b"x"),
        "bad_request_line": b"GET\r\n\r\n" + b"G\x00T / HTTP/1.1\r\n\r\n",
        "percent_paths": req(b"GET", b"/models/%2e%2e/%00") + req(b"GET", b"/%2e%2e%2fetc%2fpasswd"),
        "http10": b"GET /healthz HTTP/1.0\r\n\r\n",
        "expect_continue": req(b"POST", b"/models", model, raw + [b"Expect: 100-continue"]),
        "unsupported_type": req(b"POST", b"/models", b"abc", [b"Content-Type: text/plain"] + tok),
    }
    # gzip'd bodies (service/gunzip.c): whole, two members, cut short, garbage after it
    import gzip
    gz = raw + [b"Content-Encoding: gzip"]
    zm = gzip.compress(M.small(producer="gzip"), mtime=0)
    half = len(model) // 2
    s.update({
        "upload_gzip": req(b"POST", b"/models?name=z.onnx", zm, gz) + req(b"POST", b"/graph.json", zm, gz),
        "upload_gzip_members": req(b"POST", b"/models", gzip.compress(model[:half], mtime=0) +
                                   gzip.compress(model[half:], mtime=0), gz, chunked=True),
        "upload_gzip_bad": req(b"POST", b"/models", zm[:-5], gz) + req(b"POST", b"/models", zm + b"junk", gz),
        # past --inflate-ratio-burst (1M) at ~1000x: 413 inflate_ratio_exceeded, in slices
        "upload_gzip_ratio": req(b"POST", b"/models", gzip.compress(bytes(2 << 20), mtime=0), gz),
    })
    # overlays (service/heat_svc.c): a CSV posted, its table (default and one metric), its
    # drawing; then what is refused before the body (the query) and after it
    csv = b"node,t,u\nr0,1,2\nnope,3,4\n"
    oid = hashlib.sha256(csv).hexdigest().encode()
    ov = [b"Content-Type: text/csv"] + tok
    csv_b = b"node,t,u\nr0,2,2\n"
    bid = hashlib.sha256(csv_b).hexdigest().encode()
    js = [b"Content-Type: application/json"] + tok
    s.update({
        "overlay_post_get": req(b"POST", b"/models", model, raw) +
                            req(b"POST", base + b"/overlays", csv, ov) +
                            req(b"POST", base + b"/overlays", csv, ov, chunked=True) +
                            b"".join(req(b"GET", base + p) for p in (
                                b"/overlays/" + oid, b"/overlays/" + oid + b"?metric=u",
                                b"/graph.svg?overlay=" + oid + b"&metric=t")),
        # refused after the body, then the GETs, then a query refused before the body
        # (that answer closes the connection)
        "overlay_refused": req(b"POST", b"/models", model, raw) + b"".join(
            req(b"POST", base + b"/overlays" + q, body, ov) for q, body in (
                (b"?optimized=" + b"0" * 64, csv), (b"", b""),
                (b"", b"onnxviz:optimized=" + b"0" * 64 + b"\n" + csv), (b"", b"[" * 300))) +
            b"".join(req(b"GET", base + b"/overlays/" + oid + q) for q in (
                b"?metric=a%40%40b", b"?metric=", b"?x=1", b"?metric=t&metric=u")) +
            req(b"POST", base + b"/overlays?other=1", csv, ov),
        # two overlays compared in one POST (issue 38): the parts a and b, then hostile
        # multipart (a third part, b missing, a twice, the same file twice); then the
        # JSON form naming the two stored ids, and its refusals (unknown, twice, not ids)
        "overlay_compare_parts": req(b"POST", b"/models", model, raw) + b"".join(
            req(b"POST", base + b"/overlays", M.multipart(parts), mp) for parts in (
                [(b"a", csv), (b"b", csv_b)], [(b"a", csv), (b"b", csv_b), (b"c", csv)],
                [(b"a", csv)], [(b"a", csv), (b"a", csv_b)], [(b"a", csv), (b"b", csv)])) +
            req(b"GET", base + b"/overlays/" + oid + b"?compare=" + bid),
        "overlay_compare_ids": req(b"POST", b"/models", model, raw) +
            req(b"POST", base + b"/overlays", csv, ov) + req(b"POST", base + b"/overlays", csv_b, ov) +
            b"".join(req(b"POST", base + b"/overlays", b'{"compare": ["%s", "%s"]}' % ids, js) for ids in (
                (oid, bid), (bid, oid), (oid, b"0" * 64), (oid, oid), (oid, b"x"))) +
            req(b"POST", base + b"/overlays", b'{"compare": "x"}', js),
    })
    # the Host check (service/host.c): names the fuzz server answers to, then one it does
    # not (403: the connection ends there); two Hosts
    s["host_check"] = b"".join(
        b"GET /models HTTP/1.1\r\nHost: %s\r\n\r\n" % h for h in (b"localhost:8080", b"[::1]:80", b"evil.example"))
    s["host_two"] = b"GET /healthz HTTP/1.1\r\nHost: fuzz\r\nHost: evil.example\r\n\r\n"
    s.update(resumable_seeds(tok))
    s.update(hostile_client_seeds(tok))
    return s


def sha_hex(b):
    return hashlib.sha256(b).hexdigest().encode()


def upload_uid(digest, size):
    """A resumable upload's id as the server derives it from the claimed hash and length."""
    return hashlib.sha256(b"onnxviz-upload/1 %s %d" % (digest, size)).hexdigest()[:32].encode()


def upload_begin(size, digest, headers, name=b"m.onnx", kind=None, structure=None):
    """POST /uploads with the tus metadata of a file."""
    meta = b"sha256 " + base64.b64encode(digest) + b",filename " + base64.b64encode(name)
    if kind:
        meta += b",kind " + base64.b64encode(kind)
    if structure:
        meta += b",structure " + base64.b64encode(structure)
    return req(b"POST", b"/uploads", None, [b"Upload-Length: %d" % size, b"Upload-Metadata: " + meta,
                                            b"Tus-Resumable: 1.0.0"] + list(headers))


def resumable_seeds(tok):
    """Resumable uploads (service/resumable.c; docs/api.md): the upload id is derived from
    the claimed SHA-256 and length, so one stream can begin an upload and send its parts.
    Each file fits one part (16 MiB by default), its last: the hash check, the parse and
    the store run at the end of every flow.  Distinct models per flow, so that a flow is
    not answered "held" by another's model in the same run."""
    sys.path.insert(0, os.path.join(HERE, "..", "http"))
    from resumable import structure_model
    sha, uid = sha_hex, upload_uid

    def begin(size, digest, name=b"m.onnx", kind=None, structure=None):
        return upload_begin(size, digest, tok, name, kind, structure)

    def patch(u, off, body, extra=()):
        return req(b"PATCH", b"/uploads/" + u, body, [b"Content-Type: application/offset+octet-stream",
                                                      b"Upload-Offset: %d" % off, b"Tus-Resumable: 1.0.0"] +
                   tok + list(extra))

    piece = [b"Upload-Piece: 1"]
    whole, pieces, bad, model = (M.small(producer="resumable-" + k) for k in ("whole", "pieces", "bad", "bundle"))
    uw, up = uid(sha(whole), len(whole)), uid(sha(pieces), len(pieces))
    ub = uid(sha(b"not it"), len(bad))  # the upload of `bad` under a hash it does not have
    half = len(pieces) // 2
    # a structure whose tensors point past the file it names (422 structure_lies), and one
    # that fits
    lies, fits = structure_model([0, 1024, 3584]), structure_model([0, 1024, 3072])
    data = bytes(range(256)) * 16
    manifest = b"onnxviz-bundle/1\nmodel %s %d\nfile %s %d w.bin\n" % (sha(model), len(model), sha(data), len(data))
    raw = [b"Content-Type: application/octet-stream"]  # POST /models
    # a refusal with a body unread ends the connection: each refused PATCH ends its seed
    refused = {
        "offset": patch(ub, 5, bad),                      # 409 offset_mismatch
        "too_large": patch(ub, 0, bad + b"x" * 64),       # 413 part_too_large
        "empty_piece": patch(ub, 0, b"", piece),          # 400 bad_part_size
        "piece_flag": patch(ub, 0, bad[:8], [b"Upload-Piece: 2"]),  # 400 bad_upload
        "checksum": patch(ub, 0, bad),                    # 422 checksum_mismatch
        "type": req(b"PATCH", b"/uploads/" + ub, bad, [b"Content-Type: text/plain", b"Upload-Offset: x"] + tok),
    }
    seeds = {
        "resumable_whole": begin(len(whole), sha(whole)) + patch(uw, 0, whole) +
        req(b"HEAD", b"/uploads/" + uw, headers=tok) + req(b"GET", b"/models/" + sha(whole)),
        "resumable_pieces": begin(len(pieces), sha(pieces)) + req(b"HEAD", b"/uploads/" + up, headers=tok) +
        patch(up, half, pieces[half:], piece) + patch(up, 0, pieces[:half + 7], piece) +
        req(b"GET", b"/uploads/" + up, headers=tok),
        "resumable_begin_refused": begin(len(bad), b"not a hash") + begin(1 << 40, sha(b"too big")) +
        begin(len(bad), sha(b"not it")) + req(b"DELETE", b"/uploads/" + ub, headers=tok) +
        req(b"GET", b"/uploads/" + ub, headers=tok),
        "resumable_structure": req(b"POST", b"/models?name=m.onnx", lies, raw + tok) +
        begin(4096, sha(b"lies"), structure=sha(lies)) + req(b"POST", b"/models?name=m.onnx", fits, raw + tok) +
        begin(4096, sha(b"fits"), structure=sha(fits)),
        "resumable_bundle": begin(len(data), sha(data), b"w.bin", b"data") + patch(uid(sha(data), len(data)), 0, data) +
        req(b"POST", b"/models?name=model.onnx", model, raw + tok) +
        begin(len(manifest), sha(manifest), b"model.onnx", b"bundle", sha(model)) +
        patch(uid(sha(manifest), len(manifest)), 0, manifest),
    }
    for k, v in refused.items():
        seeds["resumable_refused_" + k] = begin(len(bad), sha(b"not it")) + v
    # begun without sha256 (decision 97): its last part names it (Upload-Sha256); without
    # the name, or naming another file, refused
    unnamed = M.small(producer="resumable-unnamed")
    uu = uid(b"", len(unnamed))
    begin_unnamed = req(b"POST", b"/uploads", None, [b"Upload-Length: %d" % len(unnamed), b"Upload-Metadata: "
                                                     b"filename " + base64.b64encode(b"u.onnx"), b"Tus-Resumable: 1.0.0"] + tok)
    seeds["resumable_unnamed"] = begin_unnamed + req(b"GET", b"/uploads/" + uu, headers=tok) + \
        patch(uu, 0, unnamed, [b"Upload-Sha256: " + sha(unnamed)])
    seeds["resumable_unnamed_refused_name"] = begin_unnamed + patch(uu, 0, unnamed[:64], [b"Upload-Piece: 1"])
    seeds["resumable_unnamed_refused_claim"] = begin_unnamed + patch(uu, 0, unnamed, [b"Upload-Sha256: " + sha(b"another")])
    return seeds


def hostile_client_seeds(tok):
    """The flows of a hostile client (issue 35; tests/http/twoclient.py does them with two
    clients): a link from claims alone, a bundle naming a and a/b, junk uploads, another's
    upload ended or written from its computed id, a gzip bomb, foreign Host headers,
    overlay posts."""
    import gzip
    sha, uid = sha_hex, upload_uid

    def begin(size, digest, name=b"m.onnx", kind=None, structure=None):
        return upload_begin(size, digest, tok, name, kind, structure)

    def patch(digest, size, body, headers=tok, extra=()):
        return req(b"PATCH", b"/uploads/" + uid(digest, size), body,
                   [b"Content-Type: application/offset+octet-stream", b"Upload-Offset: 0",
                    b"Tus-Resumable: 1.0.0"] + list(headers) + list(extra))

    def send(data, name=b"m.onnx", kind=None, structure=None):
        return begin(len(data), sha(data), name, kind, structure) + patch(sha(data), len(data), data)

    raw = [b"Content-Type: application/octet-stream"] + tok
    victim, mine = M.small(producer="victim"), M.small(producer="attacker")
    vid = sha(victim)
    # a link from claims alone: the attacker's stored model named as the victim's whole
    # model, with the victim's name and size (+1)
    forged = (req(b"POST", b"/models?name=v.onnx", victim, raw) + req(b"POST", b"/models?name=t.onnx", mine, raw) +
              begin(len(victim) + 1, sha(mine), b"v.onnx", structure=vid) +
              begin(len(victim), sha(mine), b"v.onnx", structure=vid) +
              req(b"GET", b"/models/" + vid) + req(b"GET", b"/models?limit=5"))
    # a bundle naming a and a/b (the second a file below the first), then a again
    a, b = bytes(range(256)) * 4, bytes(range(255, -1, -1)) * 3
    man = b"onnxviz-bundle/1\nmodel %s %d\nfile %s %d a\nfile %s %d a/b\n" % (
        vid, len(victim), sha(a), len(a), sha(b), len(b))
    bundle = (send(a, b"a", b"data") + send(b, b"b", b"data") + req(b"POST", b"/models?name=v.onnx", victim, raw) +
              send(man, b"v.onnx", b"bundle", vid) + begin(len(a), sha(a), b"a", b"data"))
    # made-up hashes until the client's quota, then a real upload
    junk = b"".join(begin(1 << 20, sha(b"junk %d" % i)) for i in range(40)) + send(M.small(producer="after junk"))
    # another's upload: its id computed from the hash and size, ended and written
    w = M.small(producer="another's")
    flipped = bytes(x ^ 0xff for x in w)
    other = (begin(len(w), sha(w)) + req(b"DELETE", b"/uploads/" + uid(sha(w), len(w))) +
             req(b"DELETE", b"/uploads/" + uid(sha(w), len(w)), headers=[b"Authorization: Bearer nope"]) +
             req(b"DELETE", b"/uploads/" + uid(sha(w), len(w)), headers=tok) + begin(len(w), sha(w)) +
             begin(len(w), sha(w)) + patch(sha(w), len(w), flipped[:64], extra=[b"Upload-Piece: 1"]) +
             patch(sha(w), len(w), w) + req(b"HEAD", b"/uploads/" + uid(sha(w), len(w)), headers=tok))
    # gzip bombs: 8 MiB of zeros in about 8 KB, to an upload, a one-shot drawing and a part
    # (which takes no coding: 415, and the refusal ends the stream)
    bomb = gzip.compress(b"\0" * (8 << 20), 9, mtime=0)
    gz = [b"Content-Encoding: gzip"]
    bombs = (req(b"POST", b"/models", bomb, raw + gz) + req(b"POST", b"/graph.json", bomb, raw + gz) +
             begin(len(w), sha(w)) + patch(sha(w), len(w), bomb[:4096], extra=gz))
    # Host: another site's name (DNS rebinding), loopback names, none, two, malformed
    hosts = b"".join(b"GET /models HTTP/1.1\r\n%s\r\n" % h for h in (
        b"Host: evil.example\r\n", b"Host: evil.example:8080\r\n", b"Host: 127.0.0.1:8080\r\n",
        b"Host: localhost\r\n", b"Host: [::1]:8080\r\n", b"Host: 127.0.0.1.evil.example\r\n", b"Host: \r\n",
        b"Host: a b\r\n", b"Host: " + b"h" * 300 + b"\r\n", b"Host: fuzz\r\nHost: evil.example\r\n"))
    hosts += (b"POST /models HTTP/1.1\r\nHost: evil.example\r\nAuthorization: Bearer t\r\n"
              b"Content-Type: application/octet-stream\r\nContent-Length: %d\r\n\r\n" % len(mine) + mine +
              b"GET /healthz HTTP/1.1\r\n\r\n")
    # overlays: CSV and an ORT profile posted to a model, read back by id, to an unknown
    # model, without the token, with an optimized model that is not stored
    csv = b"node,ms\nr0,5\nr1,3\nnot a node,1\n"
    prof = (b'[{"cat":"Session","name":"model_run","ts":0,"dur":100,"ph":"X"},'
            b'{"cat":"Node","name":"r0_kernel_time","ts":1,"dur":10,"ph":"X","args":{"op_name":"Relu"}}]')
    ov = b"/models/" + vid + b"/overlays"
    overlays = (req(b"POST", b"/models?name=v.onnx", victim, raw) +
                req(b"POST", ov, csv, tok + [b"Content-Type: text/csv"]) +
                req(b"POST", ov, prof, tok + [b"Content-Type: application/json"]) +
                req(b"GET", ov + b"/" + sha(csv)) + req(b"GET", ov + b"/" + sha(csv) + b"?metric=ms") +
                req(b"POST", ov + b"?optimized=" + sha(b"none"), csv, tok + [b"Content-Type: text/csv"]) +
                req(b"POST", b"/models/" + sha(b"none") + b"/overlays", csv, tok + [b"Content-Type: text/csv"]) +
                req(b"POST", ov, csv, [b"Content-Type: text/csv"]))
    return {"hostile_forged_link": forged, "hostile_bundle_a_ab": bundle, "hostile_junk_uploads": junk,
            "hostile_others_upload": other, "hostile_gzip_bombs": bombs, "hostile_hosts": hosts,
            "hostile_overlays": overlays}


def main():
    sets = {"graph": graph_seeds(), "tensor": M.tensor_seeds(), "render": render_seeds(),
            "http": http_seeds(), "quant": quant_seeds(),
            "derived": derived_seeds()}
    for target, seeds in sets.items():
        out = os.path.join(HERE, "corpus", target)
        os.makedirs(out, exist_ok=True)
        for name, data in seeds.items():
            limit = MAX_SEED_DERIVED if target == "derived" else MAX_SEED
            assert len(data) <= limit, "%s/%s: %d bytes" % (target, name, len(data))
            with open(os.path.join(out, "seed_" + name), "wb") as f:
                f.write(data)
        print("%-7s %3d seeds" % (target, len(seeds)))


if __name__ == "__main__":
    main()
