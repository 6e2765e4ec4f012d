#!/usr/bin/python3
"""make_diff_models.py CORPUS OUTDIR — a modified copy of the corpus transformer_12x12 for
the diff view's browser test (tests/e2e/diff.test.mjs): one weight element changed, one
Softmax's axis changed, one Relu removed (its consumer reads its input), one Sigmoid
added.  Prints JSON: the files and the names of what was changed."""
import json
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

corpus, out = sys.argv[1], sys.argv[2]
os.makedirs(out, exist_ok=True)
src = os.path.join(corpus, "models/real/transformer_12x12.onnx")
m = onnx.load(src)
g = m.graph
inits = {t.name: t for t in g.initializer}
facts = {"a": src}

# a weight element of a MatMul in the 4th layer
mm = [n for n in g.node if n.op_type == "MatMul" and any(i in inits for i in n.input)][12]
wname = [i for i in mm.input if i in inits][0]
w = numpy_helper.to_array(inits[wname]).copy()
w.flat[5] += 0.75
inits[wname].CopyFrom(numpy_helper.from_array(w, wname))
facts["weight"] = {"node": mm.name, "tensor": wname}
# an attribute
sm = [n for n in g.node if n.op_type == "Softmax"][20]
for a in sm.attribute:
    if a.name == "axis":
        a.i = -2 if a.i == -1 else -1
facts["attribute"] = {"node": sm.name}
# a node removed
relu = [n for n in g.node if n.op_type == "Relu"][7]
for n in g.node:
    for i, x in enumerate(n.input):
        if x == relu.output[0]:
            n.input[i] = relu.input[0]
g.node.remove(relu)
facts["removed"] = {"node": relu.name}
# a node added
add = [n for n in g.node if n.op_type == "Add"][100]
sig = helper.make_node("Sigmoid", [add.output[0]], ["added_sigmoid"], name=add.name.rsplit("/", 1)[0] + "/Sigmoid_added")
for n in g.node:
    for i, x in enumerate(n.input):
        if x == add.output[0]:
            n.input[i] = "added_sigmoid"
g.node.insert(list(g.node).index(add) + 1, sig)
facts["added"] = {"node": sig.name}
b = os.path.join(out, "transformer_b.onnx")
onnx.save(m, b)
facts["b"] = b

# two small models for the "drop two files" path: B changes one op and one weight

def small(path, op, w0):
    w = np.arange(16, dtype=np.float32).reshape(4, 4) / 16
    w[0, 0] = w0
    nodes = [helper.make_node("MatMul", ["x", "W"], ["h"], name="/block/MatMul"),
             helper.make_node(op, ["h"], ["a"], name="/block/act"),
             helper.make_node("Add", ["a", "x"], ["y"], name="/block/Add")]
    gr = helper.make_graph(nodes, "small", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
                           [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])],
                           [numpy_helper.from_array(w, "W")])
    onnx.save(helper.make_model(gr, opset_imports=[helper.make_opsetid("", 13)]), path)


small(os.path.join(out, "small_a.onnx"), "Relu", 0.0)
small(os.path.join(out, "small_b.onnx"), "Sigmoid", 0.5)
facts["small"] = [os.path.join(out, "small_a.onnx"), os.path.join(out, "small_b.onnx")]
print(json.dumps(facts))
