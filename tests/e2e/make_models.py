#!/usr/bin/python3
"""make_models.py OUTDIR — small models for the browser tests (Debian's python3-onnx).

small_qdq.onnx, dq_axis0_int8.onnx: quantized models (quantization test).
fp16.onnx: a scoped float16 graph whose weight W holds known values, NaN and +-Inf, so
that the page's tensor preview can be checked value by value; nodes carry attributes of
several types (INT, INTS, FLOAT, STRING, TENSOR).  Prints what it wrote as JSON: the
file names and the values the test expects.
"""
import json
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def fp16_model(path):
    w = np.array([[0.5, -1.25, 2.0, 0.0],
                  [1.0, 65504.0, -0.0009765625, 3.140625],
                  [np.nan, np.inf, -np.inf, -2.5],
                  [0.25, 0.125, -8.0, 100.0]], dtype=np.float16)
    b = np.array([0.1, -0.2, 0.3, 0.0], dtype=np.float16)
    shape = np.array([1, 4], dtype=np.int64)
    inits = [numpy_helper.from_array(w, 'block.W'), numpy_helper.from_array(b, 'block.b')]
    nodes = [
        helper.make_node('MatMul', ['x', 'block.W'], ['mm'], name='/block/proj/MatMul'),
        helper.make_node('Add', ['mm', 'block.b'], ['biased'], name='/block/proj/Add'),
        helper.make_node('Constant', [], ['shape'], name='/block/Constant',
                         value=numpy_helper.from_array(shape, 'shape_value')),
        helper.make_node('Reshape', ['biased', 'shape'], ['r'], name='/block/Reshape'),
        helper.make_node('LeakyRelu', ['r'], ['act'], name='/block/act/LeakyRelu', alpha=0.125),
        helper.make_node('Transpose', ['act'], ['t'], name='/head/Transpose', perm=[1, 0]),
        helper.make_node('Softmax', ['t'], ['y'], name='/head/Softmax', axis=0),
        helper.make_node('Identity', ['y'], ['z'], name='/head/Note', doc_string='a plain identity'),
    ]
    graph = helper.make_graph(
        nodes, 'fp16_test',
        [helper.make_tensor_value_info('x', TensorProto.FLOAT16, [1, 4])],
        [helper.make_tensor_value_info('z', TensorProto.FLOAT16, [4, 1])],
        initializer=inits)
    model = helper.make_model(graph, producer_name='onnxviz-e2e', producer_version='1',
                              opset_imports=[helper.make_opsetid('', 17)])
    model.ir_version = 8
    helper.set_model_props(model, {'purpose': 'browser test', 'author': 'tests/e2e'})
    onnx.save(model, path)
    flat = w.astype(np.float32).ravel()

    def js(v):
        if np.isnan(v):
            return 'NaN'
        if np.isinf(v):
            return 'Inf' if v > 0 else '-Inf'
        return float(v)
    finite = flat[np.isfinite(flat)]
    return {
        'file': path, 'weight': 'block.W', 'dims': [4, 4],
        'values': [js(v) for v in flat],
        'min': float(finite.min()), 'max': float(finite.max()),
        'nan': int(np.isnan(flat).sum()), 'inf': int(np.isinf(flat).sum()),
        'zeros': int((flat == 0).sum()),
    }


def big_model(path, blocks=500):
    """About 10k nodes: `blocks` residual blocks of 20 ops each, named by scope
    (/blocks.N/mlp/MatMul), with a long skip from every 10th block to the next 10th."""
    nodes = []
    w = numpy_helper.from_array(np.full((8, 8), 0.5, dtype=np.float32), 'w')
    prev, skip = 'x', 'x'
    for b in range(blocks):
        p = f'/blocks.{b}'
        t = f'b{b}'
        ops = [
            ('MatMul', [prev, 'w'], f'{t}.mm', f'{p}/mlp/MatMul'),
            ('Relu', [f'{t}.mm'], f'{t}.r', f'{p}/mlp/Relu'),
            ('MatMul', [f'{t}.r', 'w'], f'{t}.mm2', f'{p}/mlp/MatMul_1'),
            ('Add', [f'{t}.mm2', prev], f'{t}.res', f'{p}/Add'),
            ('ReduceMean', [f'{t}.res'], f'{t}.mu', f'{p}/norm/ReduceMean'),
            ('Sub', [f'{t}.res', f'{t}.mu'], f'{t}.d', f'{p}/norm/Sub'),
            ('Mul', [f'{t}.d', f'{t}.d'], f'{t}.sq', f'{p}/norm/Mul'),
            ('ReduceMean', [f'{t}.sq'], f'{t}.var', f'{p}/norm/ReduceMean_1'),
            ('Sqrt', [f'{t}.var'], f'{t}.sd', f'{p}/norm/Sqrt'),
            ('Div', [f'{t}.d', f'{t}.sd'], f'{t}.n', f'{p}/norm/Div'),
            ('Sigmoid', [f'{t}.n'], f'{t}.g', f'{p}/gate/Sigmoid'),
            ('Mul', [f'{t}.n', f'{t}.g'], f'{t}.gm', f'{p}/gate/Mul'),
            ('Tanh', [f'{t}.gm'], f'{t}.th', f'{p}/act/Tanh'),
            ('Abs', [f'{t}.th'], f'{t}.ab', f'{p}/act/Abs'),
            ('Neg', [f'{t}.ab'], f'{t}.ng', f'{p}/act/Neg'),
            ('Exp', [f'{t}.ng'], f'{t}.ex', f'{p}/act/Exp'),
            ('Add', [f'{t}.ex', f'{t}.n'], f'{t}.a2', f'{p}/out/Add'),
            ('Identity', [f'{t}.a2'], f'{t}.id', f'{p}/out/Identity'),
            ('Add', [f'{t}.id', skip], f'{t}.sk', f'{p}/skip/Add'),
            ('Relu', [f'{t}.sk'], f'{t}.out', f'{p}/out/Relu'),
        ]
        for op, ins, out, name in ops:
            nodes.append(helper.make_node(op, ins, [out], name=name))
        prev = f'{t}.out'
        if b % 10 == 0:
            skip = prev
    graph = helper.make_graph(
        nodes, 'big_test',
        [helper.make_tensor_value_info('x', TensorProto.FLOAT, [1, 8])],
        [helper.make_tensor_value_info(prev, TensorProto.FLOAT, [1, 8])],
        initializer=[w])
    model = helper.make_model(graph, producer_name='onnxviz-e2e', opset_imports=[helper.make_opsetid('', 17)])
    model.ir_version = 8
    onnx.save(model, path)
    return {'file': path, 'nodes': len(nodes)}


def external_model(folder):
    """ext.onnx + ext_weights.bin: a Gemm whose float32 weight lives in external data."""
    w = (np.arange(24, dtype=np.float32).reshape(4, 6) - 10.0) / 4.0
    init = numpy_helper.from_array(w, 'ext.W')
    graph = helper.make_graph(
        [helper.make_node('Gemm', ['x', 'ext.W'], ['y'], name='/ext/Gemm', transB=0)], 'ext_test',
        [helper.make_tensor_value_info('x', TensorProto.FLOAT, [1, 4])],
        [helper.make_tensor_value_info('y', TensorProto.FLOAT, [1, 6])],
        initializer=[init])
    model = helper.make_model(graph, producer_name='onnxviz-e2e', opset_imports=[helper.make_opsetid('', 17)])
    model.ir_version = 8
    path = os.path.join(folder, 'ext.onnx')
    onnx.save(model, path, save_as_external_data=True, all_tensors_to_one_file=True,
              location='ext_weights.bin', size_threshold=0)
    return {'file': path, 'data': os.path.join(folder, 'ext_weights.bin'),
            'values': [float(v) for v in w.ravel()]}


def tensor_file(folder):
    """A lone TensorProto (.pb), as onnx's test data sets hold them."""
    t = np.linspace(-1.0, 1.0, 12, dtype=np.float32).reshape(3, 4)
    path = os.path.join(folder, 'input_0.pb')
    with open(path, 'wb') as f:
        f.write(numpy_helper.from_array(t, 'input_0').SerializeToString())
    return {'file': path, 'name': 'input_0', 'values': [float(v) for v in t.ravel()]}


def quant_models(folder):
    """A small QDQ convnet (tests/data/quant_models.py) and a per-channel int8 weight whose
    dequantized values hold -0 (a negative scale where q equals its zero point)."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'data'))
    import quant_models as QM
    qdq = os.path.join(folder, 'small_qdq.onnx')
    onnx.save(QM.qdq(QM.small_float()), qdq)
    name, m, refs, _ = [c for c in QM.dequant_cases() if c[0] == 'dq_axis0_int8'][0]
    negz = os.path.join(folder, name + '.onnx')
    onnx.save(m, negz)
    ref = refs['q'].ravel()
    return {'qdq': qdq, 'negzero': negz, 'negzero_tensor': 'q',
            'negzero_count': int(sum(1 for v in ref if v == 0 and np.signbit(v)))}


def llm_model(path):
    """A 32-layer LLM laid out as onnxruntime-genai exports it (tests/data/llm_models.py):
    64 past_key_values.N.key/value inputs, 64 present.N.* outputs."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'data'))
    import llm_models
    onnx.save(llm_models.genai(32), path)
    return {'file': path}


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    info = {'fp16': fp16_model(os.path.join(out, 'fp16.onnx')),
            'big': big_model(os.path.join(out, 'big10k.onnx')),
            'ext': external_model(out),
            'tensor': tensor_file(out),
            'quant': quant_models(out),
            'llm': llm_model(os.path.join(out, 'llm_genai32.onnx'))}
    json.dump(info, sys.stdout)


if __name__ == '__main__':
    main()
