#!/usr/bin/python3
"""make_structure_models.py OUTDIR [BIG_MB] — models for the structure walk (web/structure.js).
make_structure_models.py check ORIGINAL STRUCTURE — checks a structure against its file.
make_structure_models.py llm OUTDIR MB — an LLM-like model.onnx with MB of random bytes in
model.onnx.data (llm() below).

kinds.onnx: a tensor payload in every place the walk looks: initializers as raw_data,
packed float_data, double_data and int64_data (this one stays inline), a Constant's
tensor attribute, a sparse initializer, an If's subgraph initializer, a function's
Constant, small tensors (under the threshold).  big.onnx (BIG_MB, 0: none): one file of
random float32 weights, a chain of MatMuls (not in git, made at test time).
Prints JSON: the files and, per payload expected to be cut, the tensor name.
"""
import hashlib
import json
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def kinds(path):
    rng = np.random.default_rng(1)
    raw = numpy_helper.from_array(rng.standard_normal((32, 32)).astype(np.float32), 'w_raw')
    fl = helper.make_tensor('w_float_data', TensorProto.FLOAT, [32, 32],
                            rng.standard_normal(1024).astype(np.float32).tolist())
    db = helper.make_tensor('w_double_data', TensorProto.DOUBLE, [16, 16],
                            rng.standard_normal(256).tolist())
    i64 = helper.make_tensor('w_int64_data', TensorProto.INT64, [512], list(range(512)))
    small = numpy_helper.from_array(np.ones((4,), np.float32), 'w_small')
    const = helper.make_node('Constant', [], ['c'], name='/const',
                             value=numpy_helper.from_array(rng.standard_normal((32, 32)).astype(np.float32), 'c_value'))
    sp_vals = numpy_helper.from_array(rng.standard_normal(400).astype(np.float32), 'sp')
    sp_idx = numpy_helper.from_array(np.arange(400, dtype=np.int64) * 2, 'sp_idx')
    sparse = helper.make_sparse_tensor(sp_vals, sp_idx, [1000])
    then_g = helper.make_graph(
        [helper.make_node('Add', ['x', 'w_then'], ['t_out'], name='/then/Add')], 'then',
        [], [helper.make_tensor_value_info('t_out', TensorProto.FLOAT, [32, 32])],
        initializer=[numpy_helper.from_array(rng.standard_normal((32, 32)).astype(np.float32), 'w_then')])
    else_g = helper.make_graph(
        [helper.make_node('Identity', ['x'], ['e_out'], name='/else/Id')], 'else',
        [], [helper.make_tensor_value_info('e_out', TensorProto.FLOAT, [32, 32])])
    fn = helper.make_function(
        'local', 'AddConst', ['a'], ['b'],
        [helper.make_node('Constant', [], ['k'], value=numpy_helper.from_array(rng.standard_normal((32, 32)).astype(np.float32), 'fk')),
         helper.make_node('Add', ['a', 'k'], ['b'])],
        opset_imports=[helper.make_opsetid('', 17)])
    nodes = [
        helper.make_node('MatMul', ['x', 'w_raw'], ['m1'], name='/mm1'),
        helper.make_node('MatMul', ['m1', 'w_float_data'], ['m2'], name='/mm2'),
        helper.make_node('Add', ['m2', 'c'], ['m3'], name='/add'),
        const,
        helper.make_node('Mul', ['m3', 'w_small'], ['m4'], name='/mul'),
        helper.make_node('AddConst', ['m4'], ['m5'], domain='local', name='/fn'),
        helper.make_node('If', ['cond'], ['m6'], name='/if', then_branch=then_g, else_branch=else_g),
        helper.make_node('Add', ['m5', 'm6'], ['y'], name='/out'),
        helper.make_node('Cast', ['w_double_data'], ['dd'], to=TensorProto.FLOAT, name='/cast'),
        helper.make_node('Cast', ['w_int64_data'], ['ii'], to=TensorProto.FLOAT, name='/cast64'),
    ]
    g = helper.make_graph(nodes, 'kinds',
                          [helper.make_tensor_value_info('x', TensorProto.FLOAT, [32, 32]),
                           helper.make_tensor_value_info('cond', TensorProto.BOOL, [])],
                          [helper.make_tensor_value_info('y', TensorProto.FLOAT, [32, 32]),
                           helper.make_tensor_value_info('dd', TensorProto.FLOAT, [16, 16]),
                           helper.make_tensor_value_info('ii', TensorProto.FLOAT, [512])],
                          initializer=[raw, fl, db, i64, small], sparse_initializer=[sparse])
    m = helper.make_model(g, functions=[fn], producer_name='onnxviz-e2e',
                          opset_imports=[helper.make_opsetid('', 17), helper.make_opsetid('local', 1)])
    m.ir_version = 8
    onnx.save(m, path)
    return {'file': path,
            'cut': sorted(['w_raw', 'w_float_data', 'w_double_data', 'c_value', 'sp', 'sp_idx', 'w_then', 'fk']),
            'inline': ['w_int64_data', 'w_small']}


def big(path, mb):
    """About `mb` MB of random float32 weights in one file: 1024x1024 matrices (4 MiB
    each), a chain of MatMul + Add + Relu named by block, so the overview groups them."""
    rng = np.random.default_rng(2)
    n = max(1, (mb * 1000 * 1000) // (4 << 20))
    inits, nodes, prev = [], [], 'x'
    for i in range(n):
        w = rng.standard_normal((1024, 1024), dtype=np.float32)
        inits.append(numpy_helper.from_array(w, f'blocks.{i}.w'))
        inits.append(numpy_helper.from_array(w[0].copy(), f'blocks.{i}.b'))
        nodes += [helper.make_node('MatMul', [prev, f'blocks.{i}.w'], [f'b{i}.mm'], name=f'/blocks.{i}/MatMul'),
                  helper.make_node('Add', [f'b{i}.mm', f'blocks.{i}.b'], [f'b{i}.add'], name=f'/blocks.{i}/Add'),
                  helper.make_node('Relu', [f'b{i}.add'], [f'b{i}.out'], name=f'/blocks.{i}/Relu')]
        prev = f'b{i}.out'
    g = helper.make_graph(nodes, 'big_weights',
                          [helper.make_tensor_value_info('x', TensorProto.FLOAT, [1, 1024])],
                          [helper.make_tensor_value_info(prev, TensorProto.FLOAT, [1, 1024])],
                          initializer=inits)
    m = helper.make_model(g, producer_name='onnxviz-e2e', opset_imports=[helper.make_opsetid('', 17)])
    m.ir_version = 8
    with open(path, 'wb') as f:
        f.write(m.SerializeToString())
    return {'file': path, 'size': os.path.getsize(path), 'nodes': len(nodes), 'tensors': len(inits)}


def random_file(path, size):
    """`size` random bytes (not compressible, not sparse) written to `path`; answers their
    SHA-256 (hex).  AES-128-CTR of zeros under a key from os.urandom (openssl: 3-4 times as
    fast as os.urandom here), else os.urandom."""
    h = hashlib.sha256()
    try:
        with open(path, 'wb') as f:
            enc = subprocess.Popen(['sh', '-c', 'head -c "$0" /dev/zero | openssl enc -aes-128-ctr -nosalt -K "$1" -iv "$2"',
                                    str(size), os.urandom(16).hex(), os.urandom(16).hex()],
                                   stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
            for block in iter(lambda: enc.stdout.read(8 << 20), b''):
                h.update(block)
                f.write(block)
            if enc.wait() == 0 and f.tell() == size:
                return h.hexdigest()
    except OSError:
        pass
    h = hashlib.sha256()
    with open(path, 'wb') as f:
        left = size
        while left:
            block = os.urandom(min(left, 64 << 20))
            h.update(block)
            f.write(block)
            left -= len(block)
    return h.hexdigest()


def llm(out, mb):
    """A model.onnx with its weights in model.onnx.data (about `mb` MB of random bytes: not
    in git, made at test time, never sparse), shaped like a decoder-only LLM export: an
    embedding, layers of RMSNorm, attention with rotary embedding and a SwiGLU MLP, a head;
    float16 weights, each external tensor at its offset in the data file."""
    d, ff, vocab, heads = 2048, 5632, 32000, 16
    per_layer = (4 * d * d + 3 * d * ff + 2 * d) * 2
    layers = max(1, round((mb * 1000 * 1000 - 2 * vocab * d * 2) / per_layer))
    os.makedirs(out, exist_ok=True)
    model_path, data_path = os.path.join(out, 'model.onnx'), os.path.join(out, 'model.onnx.data')
    inits, nodes, offset = [], [], 0
    f16 = TensorProto.FLOAT16

    def weight(name, dims):
        nonlocal offset
        n = int(np.prod(dims)) * 2
        t = TensorProto(name=name, data_type=f16, dims=dims, data_location=TensorProto.EXTERNAL)
        for k, v in (('location', 'model.onnx.data'), ('offset', str(offset)), ('length', str(n))):
            e = t.external_data.add()
            e.key, e.value = k, v
        offset += n
        inits.append(t)
        return name

    def const(name, values):
        return helper.make_node('Constant', [], [name], name=f'/{name}/Constant',
                                value=numpy_helper.from_array(np.array(values, np.int64), f'{name}_value'))

    def node(op, ins, outs, name, **attrs):
        nodes.append(helper.make_node(op, ins, outs, name=name, **attrs))
        return outs[0]

    def rms(x, w, scope):
        p = node('Pow', [x, 'two'], [f'{scope}.pow'], f'{scope}/Pow')
        m = node('ReduceMean', [p], [f'{scope}.mean'], f'{scope}/ReduceMean', axes=[-1])
        a = node('Add', [m, 'eps'], [f'{scope}.add'], f'{scope}/Add')
        r = node('Sqrt', [a], [f'{scope}.sqrt'], f'{scope}/Sqrt')
        dv = node('Div', [x, r], [f'{scope}.div'], f'{scope}/Div')
        return node('Mul', [dv, w], [f'{scope}.out'], f'{scope}/Mul')

    def rotary(x, scope):
        h1 = node('Slice', [x, 'zero', 'half', 'axis3'], [f'{scope}.x1'], f'{scope}/Slice')
        h2 = node('Slice', [x, 'half', 'end', 'axis3'], [f'{scope}.x2'], f'{scope}/Slice_1')
        n2 = node('Neg', [h2], [f'{scope}.neg'], f'{scope}/Neg')
        c = node('Concat', [n2, h1], [f'{scope}.cat'], f'{scope}/Concat', axis=-1)
        a = node('Mul', [x, 'cos'], [f'{scope}.cos'], f'{scope}/Mul')
        b = node('Mul', [c, 'sin'], [f'{scope}.sin'], f'{scope}/Mul_1')
        return node('Add', [a, b], [f'{scope}.out'], f'{scope}/Add')

    nodes += [const('shape_heads', [1, -1, heads, d // heads]), const('shape_flat', [1, -1, d]),
              const('zero', [0]), const('half', [d // heads // 2]), const('end', [d // heads]), const('axis3', [3])]
    for nm, v in (('two', 2.0), ('eps', 1e-6), ('scale', float(np.sqrt(d // heads)))):
        inits.append(numpy_helper.from_array(np.array(v, np.float16), nm))
    x = node('Gather', [weight('model.embed_tokens.weight', [vocab, d]), 'input_ids'], ['embeds'], '/model/embed_tokens/Gather')
    for i in range(layers):
        s = f'/model/layers.{i}'
        p = f'model.layers.{i}'
        h = rms(x, weight(f'{p}.input_layernorm.weight', [d]), f'{s}/input_layernorm')
        qkv = []
        for nm in ('q', 'k', 'v'):
            y = node('MatMul', [h, weight(f'{p}.self_attn.{nm}_proj.weight', [d, d])], [f'{s}.{nm}'], f'{s}/self_attn/{nm}_proj/MatMul')
            y = node('Reshape', [y, 'shape_heads'], [f'{s}.{nm}.r'], f'{s}/self_attn/Reshape_{nm}')
            y = node('Transpose', [y], [f'{s}.{nm}.t'], f'{s}/self_attn/Transpose_{nm}', perm=[0, 2, 1, 3])
            if nm != 'v':
                y = rotary(y, f'{s}/self_attn/rotary_{nm}')
            qkv.append(y)
        kt = node('Transpose', [qkv[1]], [f'{s}.kt'], f'{s}/self_attn/Transpose_kt', perm=[0, 1, 3, 2])
        sc = node('MatMul', [qkv[0], kt], [f'{s}.scores'], f'{s}/self_attn/MatMul')
        sc = node('Div', [sc, 'scale'], [f'{s}.scaled'], f'{s}/self_attn/Div')
        sc = node('Add', [sc, 'attention_mask'], [f'{s}.masked'], f'{s}/self_attn/Add')
        pr = node('Softmax', [sc], [f'{s}.probs'], f'{s}/self_attn/Softmax', axis=-1)
        o = node('MatMul', [pr, qkv[2]], [f'{s}.ctx'], f'{s}/self_attn/MatMul_1')
        o = node('Transpose', [o], [f'{s}.ctx.t'], f'{s}/self_attn/Transpose', perm=[0, 2, 1, 3])
        o = node('Reshape', [o, 'shape_flat'], [f'{s}.ctx.r'], f'{s}/self_attn/Reshape')
        o = node('MatMul', [o, weight(f'{p}.self_attn.o_proj.weight', [d, d])], [f'{s}.o'], f'{s}/self_attn/o_proj/MatMul')
        x = node('Add', [x, o], [f'{s}.res1'], f'{s}/Add')
        h = rms(x, weight(f'{p}.post_attention_layernorm.weight', [d]), f'{s}/post_attention_layernorm')
        g = node('MatMul', [h, weight(f'{p}.mlp.gate_proj.weight', [d, ff])], [f'{s}.gate'], f'{s}/mlp/gate_proj/MatMul')
        sg = node('Sigmoid', [g], [f'{s}.sig'], f'{s}/mlp/act_fn/Sigmoid')
        g = node('Mul', [g, sg], [f'{s}.silu'], f'{s}/mlp/act_fn/Mul')
        u = node('MatMul', [h, weight(f'{p}.mlp.up_proj.weight', [d, ff])], [f'{s}.up'], f'{s}/mlp/up_proj/MatMul')
        m = node('Mul', [g, u], [f'{s}.gu'], f'{s}/mlp/Mul')
        m = node('MatMul', [m, weight(f'{p}.mlp.down_proj.weight', [ff, d])], [f'{s}.down'], f'{s}/mlp/down_proj/MatMul')
        x = node('Add', [x, m], [f'{s}.out'], f'{s}/Add_1')
    x = rms(x, weight('model.norm.weight', [d]), '/model/norm')
    node('MatMul', [x, weight('lm_head.weight', [d, vocab])], ['logits'], '/lm_head/MatMul')
    g = helper.make_graph(
        nodes, 'llm',
        [helper.make_tensor_value_info('input_ids', TensorProto.INT64, ['batch', 'seq']),
         helper.make_tensor_value_info('attention_mask', f16, ['batch', 1, 'seq', 'seq']),
         helper.make_tensor_value_info('cos', f16, ['seq', d // heads]),
         helper.make_tensor_value_info('sin', f16, ['seq', d // heads])],
        [helper.make_tensor_value_info('logits', f16, ['batch', 'seq', vocab])], initializer=inits)
    m = helper.make_model(g, producer_name='onnxviz-e2e', opset_imports=[helper.make_opsetid('', 17)])
    m.ir_version = 8
    with open(model_path, 'wb') as f:
        f.write(m.SerializeToString())
    data_sha256 = random_file(data_path, offset)
    return {'model': model_path, 'data': [data_path], 'data_sha256': [data_sha256], 'model_size': os.path.getsize(model_path),
            'size': os.path.getsize(model_path) + offset, 'layers': layers, 'nodes': len(nodes),
            'tensors': len(inits)}


def all_tensors(m):
    """Every TensorProto of a model, in a fixed order: initializers, sparse initializers,
    attribute tensors, subgraphs and functions included."""
    out = []

    def graph(g):
        out.extend(g.initializer)
        for sp in g.sparse_initializer:
            out.extend([sp.values, sp.indices])
        for n in g.node:
            node(n)

    def node(n):
        for a in n.attribute:
            if a.HasField('t'):
                out.append(a.t)
            out.extend(a.tensors)
            if a.HasField('sparse_tensor'):
                out.extend([a.sparse_tensor.values, a.sparse_tensor.indices])
            for sp in a.sparse_tensors:
                out.extend([sp.values, sp.indices])
            if a.HasField('g'):
                graph(a.g)
            for g in a.graphs:
                graph(g)
    graph(m.graph)
    for f in m.functions:
        for n in f.node:
            node(n)
    return out


def check(original, structure):
    """The structure holds the same model as the file, with payloads external: every
    external tensor's bytes at (offset, length) in the file decode to the original
    values, and the models are equal once the payloads are cleared.  Prints the names of
    the tensors made external (JSON); raises on any difference."""
    mo = onnx.load(original)
    ms = onnx.load(structure, load_external_data=False)
    with open(original, 'rb') as f:
        data = f.read()
    to, ts = all_tensors(mo), all_tensors(ms)
    assert [t.name for t in to] == [t.name for t in ts], 'the same tensors in the same order'
    cut = []
    for o, t in zip(to, ts):
        want = numpy_helper.to_array(o)
        if t.data_location == TensorProto.EXTERNAL:
            ext = {e.key: e.value for e in t.external_data}
            assert ext['location'] == os.path.basename(original), ext
            off, n = int(ext['offset']), int(ext['length'])
            raw = TensorProto()
            raw.CopyFrom(t)
            del raw.external_data[:]
            raw.data_location = TensorProto.DEFAULT
            raw.raw_data = data[off:off + n]
            got = numpy_helper.to_array(raw)
            cut.append(t.name)
        else:
            got = numpy_helper.to_array(t)
        assert want.dtype == got.dtype and want.shape == got.shape and want.tobytes() == got.tobytes(), t.name
    for m in (mo, ms):
        for t in all_tensors(m):
            for fld in ('raw_data', 'float_data', 'double_data', 'int64_data', 'int32_data', 'external_data', 'data_location'):
                t.ClearField(fld)
    assert mo.SerializeToString() == ms.SerializeToString(), 'the rest of the model is the same'
    json.dump(sorted(cut), sys.stdout)


def main():
    if sys.argv[1] == 'check':
        check(sys.argv[2], sys.argv[3])
        return
    if sys.argv[1] == 'llm':  # llm OUTDIR MB: model.onnx + model.onnx.data only
        json.dump(llm(sys.argv[2], int(sys.argv[3])), sys.stdout)
        return
    out = sys.argv[1]
    mb = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    os.makedirs(out, exist_ok=True)
    info = {'kinds': kinds(os.path.join(out, 'kinds.onnx'))}
    if mb:
        info['big'] = big(os.path.join(out, 'big.onnx'), mb)
    json.dump(info, sys.stdout)


if __name__ == '__main__':
    main()
