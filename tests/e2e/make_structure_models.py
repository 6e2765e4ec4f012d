#!/usr/bin/python3
"""make_structure_models.py OUTDIR [BIG_MB] — models for the structure walk (web/structure.js).
make_structure_models.py check ORIGINAL STRUCTURE — checks a structure against its file.

kinds.onnx: a tensor payload in every place the walk looks: initializers as raw_data,
packed float_data, double_data and int64_data (this one stays inline), a Constant's
tensor attribute, a sparse initializer, an If's subgraph initializer, a function's
Constant, small tensors (under the threshold).  big.onnx (BIG_MB, 0: none): one file of
random float32 weights, a chain of MatMuls (not in git, made at test time).
Prints JSON: the files and, per payload expected to be cut, the tensor name.
"""
import json
import os
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
    out = sys.argv[1]
    mb = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    os.makedirs(out, exist_ok=True)
    info = {'kinds': kinds(os.path.join(out, 'kinds.onnx'))}
    if mb:
        info['big'] = big(os.path.join(out, 'big.onnx'), mb)
    json.dump(info, sys.stdout)


if __name__ == '__main__':
    main()
