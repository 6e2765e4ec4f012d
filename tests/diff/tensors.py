#!/usr/bin/python3
"""tensors.py — decoded tensor values against python3-onnx's numpy_helper.to_array.

For every TensorProto file of the corpus (onnx-testdata/**/test_data_set_*/*.pb and
light/*.pb) and for a set generated here with python3-onnx (every data type onnx 1.12
knows, raw_data and typed fields, odd and empty shapes, special float values, external
data), runs $BUILD/tools/tensor_dump and compares with onnx.numpy_helper.to_array:
  - integers, bools and strings exactly;
  - floats bit for bit in their own format (FLOAT16 bits, BFLOAT16 as the float32 onnx
    widens it to, FLOAT/DOUBLE bits, complex parts), NaN payloads included, and the
    decoded double values (NaN as NaN);
  - the statistics (counts exactly, min/max exactly, mean/std to 1e-9 relative) against
    numpy over the finite values;
  - a file onnx refuses must be refused too, and the other way round.
onnx 1.12 cannot decode complex values held in float_data/double_data (see oracle()): for
those the pairs are combined here, as onnx.proto specifies.
Prints how many files and elements were compared; exits 1 on any difference.
Use Debian's /usr/bin/python3 (it has onnx and numpy).
"""
import glob
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, numpy_helper

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD = os.environ.get("BUILD", "build")
TOOL = os.path.join(ROOT, BUILD, "tools", "tensor_dump")
CORPUS = os.environ.get("ONNXVIZ_CORPUS", os.path.join(ROOT, "..", "shared", "corpus"))

BITS = {TensorProto.FLOAT: (np.float32, np.uint32), TensorProto.DOUBLE: (np.float64, np.uint64),
        TensorProto.FLOAT16: (np.float16, np.uint16),
        TensorProto.BFLOAT16: (np.float32, np.uint32),  # onnx widens bf16 to float32
        TensorProto.COMPLEX64: (np.float32, np.uint32),
        TensorProto.COMPLEX128: (np.float64, np.uint64)}


def corpus_files():
    base = os.path.join(CORPUS, "models", "onnx-testdata")
    files = glob.glob(os.path.join(base, "**", "test_data_set_*", "*.pb"), recursive=True)
    files += glob.glob(os.path.join(base, "light", "*.pb"))
    return sorted(set(files))


# ---------------------------------------------------------------------------------------
# Generated tensors
def f16_specials():
    bits = [0x0000, 0x8000, 0x0001, 0x8001, 0x03ff, 0x0400, 0x3c00, 0xbc00, 0x7bff, 0xfbff,
            0x7c00, 0xfc00, 0x7c01, 0x7e00, 0xfe01, 0x7fff, 0x3555, 0x1234]
    return np.array(bits, dtype=np.uint16)


def generated(d):
    """Write TensorProto files into d; return their paths."""
    rng = np.random.default_rng(7)
    out = []

    def save(name, t):
        path = os.path.join(d, name + ".pb")
        with open(path, "wb") as f:
            f.write(t.SerializeToString())
        out.append(path)

    def typed(dtype, dims, field, values):
        t = TensorProto()
        t.data_type = dtype
        t.dims.extend(dims)
        getattr(t, field).extend(values)
        return t

    ints = {TensorProto.INT8: np.int8, TensorProto.UINT8: np.uint8,
            TensorProto.INT16: np.int16, TensorProto.UINT16: np.uint16,
            TensorProto.INT32: np.int32, TensorProto.INT64: np.int64,
            TensorProto.UINT32: np.uint32, TensorProto.UINT64: np.uint64}
    for dt, npt in ints.items():
        info = np.iinfo(npt)
        edge = np.array([info.min, info.max, 0, 1, info.max // 3], dtype=npt)
        rand = rng.integers(info.min, info.max, size=(3, 5), dtype=npt, endpoint=True)
        for shape, arr in (("edge", edge), ("rand", rand), ("empty", np.zeros((0, 4), npt)),
                           ("scalar", np.array(7, dtype=npt))):
            save("%s_%s_raw" % (TensorProto.DataType.Name(dt), shape),
                 numpy_helper.from_array(arr))
            field = ("int64_data" if dt == TensorProto.INT64 else
                     "uint64_data" if dt in (TensorProto.UINT32, TensorProto.UINT64) else
                     "int32_data")
            save("%s_%s_typed" % (TensorProto.DataType.Name(dt), shape),
                 typed(dt, arr.shape, field, [int(x) for x in arr.reshape(-1)]))

    b = rng.integers(0, 2, size=(7,)).astype(bool)
    save("BOOL_raw", numpy_helper.from_array(b))
    save("BOOL_typed", typed(TensorProto.BOOL, b.shape, "int32_data", [int(x) for x in b]))

    f32 = np.concatenate([rng.standard_normal(21).astype(np.float32),
                          np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -3.4e38],
                                   dtype=np.float32)])
    snan = np.array([0x7f800001, 0xffa00000, 0x7fc12345], dtype=np.uint32).view(np.float32)
    save("FLOAT_raw", numpy_helper.from_array(f32.reshape(4, 7)))
    save("FLOAT_snan_raw", numpy_helper.from_array(snan))
    save("FLOAT_typed", typed(TensorProto.FLOAT, (4, 7), "float_data", f32.tolist()))
    f64 = np.concatenate([rng.standard_normal(10), [0.0, -0.0, np.inf, np.nan, 5e-324]])
    save("DOUBLE_raw", numpy_helper.from_array(f64))
    save("DOUBLE_typed", typed(TensorProto.DOUBLE, f64.shape, "double_data", f64.tolist()))

    h = np.concatenate([f16_specials(), rng.integers(0, 65536, 101, dtype=np.uint16)])
    save("FLOAT16_raw", numpy_helper.from_array(h.view(np.float16)))
    save("FLOAT16_typed", typed(TensorProto.FLOAT16, h.shape, "int32_data", h.tolist()))
    bf = rng.integers(0, 65536, 77, dtype=np.uint16)
    bf[:6] = [0x0000, 0x8000, 0x7f80, 0xff80, 0x7fc1, 0x0001]
    t = TensorProto()
    t.data_type = TensorProto.BFLOAT16
    t.dims.extend([7, 11])
    t.raw_data = bf.tobytes()
    save("BFLOAT16_raw", t)
    save("BFLOAT16_typed", typed(TensorProto.BFLOAT16, (7, 11), "int32_data", bf.tolist()))

    c64 = (rng.standard_normal(5) + 1j * rng.standard_normal(5)).astype(np.complex64)
    save("COMPLEX64_raw", numpy_helper.from_array(c64))
    pairs = np.stack([c64.real, c64.imag], axis=1).reshape(-1)
    save("COMPLEX64_typed", typed(TensorProto.COMPLEX64, c64.shape, "float_data",
                                  pairs.tolist()))
    c128 = rng.standard_normal(3) + 1j * rng.standard_normal(3)
    save("COMPLEX128_raw", numpy_helper.from_array(c128))
    pairs = np.stack([c128.real, c128.imag], axis=1).reshape(-1)
    save("COMPLEX128_typed", typed(TensorProto.COMPLEX128, c128.shape, "double_data",
                                   pairs.tolist()))

    s = np.array([b"a", b"", "\u00e9t\u00e9".encode(), b"x" * 300], dtype=object)
    save("STRING", numpy_helper.from_array(s))

    # both must refuse: sizes that do not match the dims
    t = numpy_helper.from_array(np.arange(6, dtype=np.float32))
    t.raw_data = t.raw_data[:-1]
    save("bad_FLOAT_raw_short", t)
    save("bad_INT64_typed_long", typed(TensorProto.INT64, (2,), "int64_data", [1, 2, 3]))

    # external data beneath the file's directory, at an unaligned offset
    ext = rng.standard_normal(33).astype(np.float32)
    with open(os.path.join(d, "weights.bin"), "wb") as f:
        f.write(b"\0" * 100 + ext.tobytes() + b"tail")
    t = TensorProto()
    t.data_type = TensorProto.FLOAT
    t.dims.extend([3, 11])
    t.data_location = TensorProto.EXTERNAL
    for k, v in (("location", "weights.bin"), ("offset", "100"), ("length", "132")):
        e = t.external_data.add()
        e.key, e.value = k, v
    save("FLOAT_external", t)
    return out


# ---------------------------------------------------------------------------------------
# Comparison
def hex_bits(strings, width_type):
    """The tool's hex bit strings as an array of width_type (big-endian text)."""
    if not strings:
        return np.zeros(0, dtype=width_type)
    raw = bytes.fromhex("".join(strings))
    return np.frombuffer(raw, dtype=np.dtype(width_type).newbyteorder(">")).astype(width_type)


def floats(values):
    return np.array([float(v) for v in values], dtype=np.float64)


def compare_stats(rec, flat, dt):
    st = rec.get("stats")
    if st is None:
        return "no stats"
    if dt in (TensorProto.COMPLEX64, TensorProto.COMPLEX128):
        re, im = flat.real.astype(np.float64), flat.imag.astype(np.float64)
        v = np.where(np.isnan(re) | np.isnan(im), np.nan,
                     np.where(np.isinf(re) | np.isinf(im), np.inf, np.hypot(re, im)))
    else:
        v = flat.astype(np.float64)
    fin = v[np.isfinite(v)]
    want = {"finite": fin.size, "nan": int(np.isnan(v).sum()),
            "pos_inf": int(np.isposinf(v).sum()), "neg_inf": int(np.isneginf(v).sum()),
            "zeros": int((fin == 0).sum())}
    for k, w in want.items():
        if st[k] != w:
            return "stats %s: %s, numpy %s" % (k, st[k], w)
    if fin.size == 0:
        return None if all(st[k] == "nan" for k in ("min", "mean")) else "stats of nothing"
    exact = flat.dtype.kind in "iu" and np.abs(flat.astype(np.float64)).max() > 2 ** 53
    for k, w in (("min", fin.min()), ("max", fin.max())):
        if not exact and float(st[k]) != w:
            return "stats %s: %r, numpy %r" % (k, st[k], w)
    if flat.dtype.kind in "iu":
        mean = float(sum(int(x) for x in flat.reshape(-1)) / fin.size)  # exact sum
        std = float(np.std(fin))
    else:  # scaled by max|v|: no overflow near 1e308, no underflow of subnormal squares
        m = float(np.abs(fin).max()) or 1.0
        mean = float(np.mean(fin / m)) * m
        std = float(np.std(fin / m)) * m
    for k, w in (("mean", mean), ("std", std)):
        got = float(st[k])
        if not (np.isfinite(got) and abs(got - w) <= 1e-9 * max(abs(w), abs(mean), 1e-300)):
            return "stats %s: %r, numpy %r" % (k, st[k], w)
    return None


def oracle(t, base_dir):
    """numpy_helper.to_array, except where onnx 1.12 itself is broken: complex values in
    float_data/double_data (its to_array calls float() on the combined complex numbers and
    raises), where the pairs are combined here as onnx.proto defines them."""
    if (t.data_type in (TensorProto.COMPLEX64, TensorProto.COMPLEX128)
            and not t.HasField("raw_data") and t.data_location != TensorProto.EXTERNAL):
        ftype = BITS[t.data_type][0]
        data = t.float_data if t.data_type == TensorProto.COMPLEX64 else t.double_data
        pairs = np.asarray(data, dtype=ftype)
        cplx = np.complex64 if ftype == np.float32 else np.complex128
        return pairs.view(cplx).reshape(t.dims)
    return numpy_helper.to_array(t, base_dir)


def compare(rec, path):
    """None when the tool agrees with onnx, else a one-line difference."""
    t = TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    try:
        arr = oracle(t, os.path.dirname(path))
    except Exception as e:  # onnx refuses it
        if not rec["ok"]:
            return None
        return "onnx refuses (%s) but tensor_dump reads it" % str(e).splitlines()[0]
    if not rec["ok"]:
        return "tensor_dump refuses (%s: %s), onnx reads it" % (rec["code"], rec["message"])
    if rec["dtype"] != t.data_type or rec["dims"] != list(t.dims):
        return "dtype/dims differ"
    flat = arr.reshape(-1)
    vals = rec["values"]
    if len(vals) != flat.size:
        return "%d values, onnx %d" % (len(vals), flat.size)
    cls, dt = rec["class"], t.data_type
    if cls == "string":
        want = [s.encode("utf-8") if isinstance(s, str) else bytes(s) for s in flat]
        got = [bytes.fromhex(v) for v in vals]
        return None if got == want else "strings differ"
    if cls in ("float", "complex"):
        ftype, btype = BITS[dt]
        parts = np.ascontiguousarray(flat)
        if cls == "complex":
            parts = parts.view(ftype)  # real, imaginary, interleaved
        want_bits = parts.view(btype)
        got_bits = hex_bits(rec["bits"], np.uint16 if dt == TensorProto.BFLOAT16 else btype)
        if dt == TensorProto.BFLOAT16:
            got_bits = got_bits.astype(np.uint32) << 16
        if not np.array_equal(got_bits, want_bits):
            i = int(np.nonzero(got_bits != want_bits)[0][0])
            return "bits differ at %d: %x vs onnx %x" % (i, got_bits[i], want_bits[i])
        got = floats([x for pair in vals for x in pair] if cls == "complex" else vals)
        if not np.array_equal(got, parts.astype(np.float64), equal_nan=True):
            return "values differ"
    else:  # int, uint, bool: exact values, and the stored bits two's complement
        want = [bool(x) for x in flat] if cls == "bool" else [int(x) for x in flat]
        if vals != want:
            return "values differ"
        mask = (1 << (8 * flat.dtype.itemsize)) - 1
        if [int(x, 16) for x in rec["bits"]] != [int(x) & mask for x in want]:
            return "bits differ"
    return compare_stats(rec, flat, dt)


def main():
    if not os.access(TOOL, os.X_OK):
        print("tensors.py: %s missing (make tools)" % TOOL)
        return 1
    corpus = corpus_files()
    if not corpus:
        print("tensors.py: no .pb files under %s" % CORPUS)
        return 1
    failures = 0
    with tempfile.TemporaryDirectory(prefix="oxp_tensors_") as d:
        gen = generated(d)
        for label, files in (("corpus", corpus), ("generated", gen)):
            out = subprocess.run([TOOL] + files, check=True, stdout=subprocess.PIPE).stdout
            lines = out.decode().splitlines()
            recs = {}
            for line in lines:
                rec = json.loads(line)
                if rec["file"] in recs and not rec["ok"]:  # error after a partial line
                    rec = dict(rec, partial=True)
                recs[rec["file"]] = rec
            elements = refused = 0
            for f in files:
                rec = recs.get(f)
                with np.errstate(all="ignore"):  # signalling NaNs, overflow in numpy casts
                    why = "no output" if rec is None else compare(rec, f)
                if rec is not None and rec.get("partial"):
                    why = why or "failed mid-way: " + rec["message"]
                if why:
                    failures += 1
                    print("DIFF %s: %s" % (os.path.relpath(f, ROOT) if label == "corpus"
                                           else os.path.basename(f), why))
                elif rec["ok"]:
                    elements += len(rec["values"])
                else:
                    refused += 1
            print("%s: %d .pb files compared (%d elements, %d refused by both), %s" %
                  (label, len(files), elements, refused,
                   "0 differences" if not failures else "%d differences so far" % failures))
    print("tensors: %s" % ("ok" if failures == 0 else "FAILED (%d differences)" % failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
