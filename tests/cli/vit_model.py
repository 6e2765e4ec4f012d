#!/usr/bin/python3
"""vit_model.py — writes a small vision-transformer-like ONNX model as PyTorch exports one
(node names "/blocks.0/mlp/act/Erf", LayerNorm and GELU as their primitive ops, MatMul + Add
on 3-D activations) for the heat overlay tests (heat.py): ONNX Runtime fuses its GELUs
into nodes it names itself ("Gelu", "Gelu_token_3"), its LayerNorms and its 3-D MatMul +
Add, as it does in torchvision's swin_t, so a profile of it without the optimized model
needs matching by op type, shapes and order.

    vit_model.py OUT.onnx [LAYERS]
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

D, H, T = 32, 64, 16  # width, MLP width, tokens


def build(layers):
    rng = np.random.default_rng(1)
    nodes, inits = [], []

    def const(name, arr):
        inits.append(numpy_helper.from_array(np.asarray(arr, dtype=np.float32), name))
        return name

    def node(op, ins, name, **attrs):
        out = name + "_output_0"
        nodes.append(helper.make_node(op, ins, [out], name=name, **attrs))
        return out

    def layer_norm(x, p):
        mean = node("ReduceMean", [x], p + "/ReduceMean", axes=[-1])
        sub = node("Sub", [x, mean], p + "/Sub")
        pw = node("Pow", [sub, const(p + ".two", 2.0)], p + "/Pow")
        var = node("ReduceMean", [pw], p + "/ReduceMean_1", axes=[-1])
        add = node("Add", [var, const(p + ".eps", 1e-5)], p + "/Add")
        sq = node("Sqrt", [add], p + "/Sqrt")
        div = node("Div", [sub, sq], p + "/Div")
        mul = node("Mul", [div, const(p + ".weight", rng.uniform(0.5, 1.5, D))], p + "/Mul")
        return node("Add", [mul, const(p + ".bias", rng.uniform(-0.1, 0.1, D))], p + "/Add_1")

    def linear(x, p, din, dout):
        mm = node("MatMul", [x, const(p + ".weight", rng.normal(0, 0.1, (din, dout)))], p + "/MatMul")
        return node("Add", [const(p + ".bias", rng.normal(0, 0.1, dout)), mm], p + "/Add")

    def gelu(x, p):
        div = node("Div", [x, const(p + ".sqrt2", 1.4142135381698608)], p + "/Div")
        erf = node("Erf", [div], p + "/Erf")
        add = node("Add", [erf, const(p + ".one", 1.0)], p + "/Add")
        mul = node("Mul", [x, add], p + "/Mul")
        return node("Mul", [mul, const(p + ".half", 0.5)], p + "/Mul_1")

    x = linear("input", "/patch_embed", D, D)
    for i in range(layers):
        b = "/blocks.%d" % i
        h = layer_norm(x, b + "/norm1")
        h = linear(h, b + "/attn/proj", D, D)
        x = node("Add", [x, h], b + "/Add")
        h = layer_norm(x, b + "/norm2")
        h = linear(h, b + "/mlp/fc1", D, H)
        h = gelu(h, b + "/mlp/act")
        h = linear(h, b + "/mlp/fc2", H, D)
        x = node("Add", [x, h], b + "/Add_1")
    x = layer_norm(x, "/norm")
    out = node("ReduceMean", [x], "/head/ReduceMean", axes=[1], keepdims=0)
    nodes[-1].output[0] = "logits"
    graph = helper.make_graph(
        nodes, "vit", [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, T, D])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, D])], inits)
    del out
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 7
    onnx.checker.check_model(m)
    return m


if __name__ == "__main__":
    onnx.save(build(int(sys.argv[2]) if len(sys.argv) > 2 else 6), sys.argv[1])
