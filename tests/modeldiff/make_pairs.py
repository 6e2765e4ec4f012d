#!/usr/bin/python3
"""make_pairs.py OUT_DIR — the model pairs tests/modeldiff checks `onnxviz diff` on.

Every pair is A (old) and B (new) made here with torch 1.13 (export) and onnx 1.12
(edits), and a JSON file of what is expected, written independently of onnxviz:

  base.onnx             a small CNN exported by torch (opset 13, named nodes)
  weight_b.onnx         one element of one weight changed by +0.5
  added_b.onnx          a Relu inserted after a node
  removed_b.onnx        a Relu taken out (its consumer reads its input)
  attr_b.onnx           LeakyRelu alpha 0.1 -> 0.2
  renamed_b.onnx        one node renamed (its output value keeps its name)
  renamed_all_b.onnx    one node and the value it produces renamed
  reordered_b.onnx      nodes in another topological order, initializers, attributes,
                        value_info and metadata reversed (the same graph)
  anon_a / anon_b       no node names at all; B also renames every inner value and is
                        reordered (structure is all there is to match on)
  quant_b.onnx          base with a QDQ transform (written here: per-tensor int8 weights
                        with DequantizeLinear, QuantizeLinear -> DequantizeLinear on the
                        activations into Conv and Gemm)
  opset11 / opset14     the same module (same weights) exported at opsets 11 and 14
  pairs.json            per pair: files and the expected facts
"""
import copy
import json
import os
import random
import sys

import numpy as np
import onnx
import torch
from onnx import helper, numpy_helper, TensorProto

OUT = sys.argv[1]
os.makedirs(OUT, exist_ok=True)


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.bn1 = torch.nn.BatchNorm2d(8)
        self.act1 = torch.nn.ReLU()
        self.conv2 = torch.nn.Conv2d(8, 16, 3, stride=2, padding=1)
        self.act2 = torch.nn.LeakyReLU(0.1)
        self.conv3 = torch.nn.Conv2d(16, 16, 1)
        self.act3 = torch.nn.ReLU()
        self.fc = torch.nn.Linear(16, 10)

    def forward(self, x):
        x = self.act1(self.bn1(self.conv1(x)))
        x = self.act2(self.conv2(x))
        x = self.act3(self.conv3(x)) + x
        x = x.mean(dim=(2, 3))
        y = self.fc(x)
        s = y.sum(dim=1, keepdim=True).unsqueeze(-1).squeeze(-1)
        return torch.softmax(y - s, dim=1)


def export(path, opset):
    torch.manual_seed(0)
    net = Net().eval()
    with torch.no_grad():  # BatchNormalization statistics that are not 0/1
        net.bn1.running_mean.uniform_(-0.5, 0.5)
        net.bn1.running_var.uniform_(0.5, 1.5)
    x = torch.randn(1, 3, 16, 16)
    torch.onnx.export(net, x, path, opset_version=opset, input_names=["input"],
                      output_names=["probs"], do_constant_folding=True)
    m = onnx.load(path)
    names = [n.name for n in m.graph.node]
    assert all(names) and len(set(names)) == len(names), "torch gave unnamed or duplicate nodes"
    return m


def save(m, name):
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(OUT, name))
    return name


def node(m, op, nth=0):
    return [n for n in m.graph.node if n.op_type == op][nth]


def init(m, name):
    return [t for t in m.graph.initializer if t.name == name][0]


pairs = {}
base = export(os.path.join(OUT, "base.onnx"), 13)
save(base, "base.onnx")

# --- one weight element
m = copy.deepcopy(base)
conv2 = node(m, "Conv", 1)
wname = conv2.input[1]
t = init(m, wname)
w = numpy_helper.to_array(t).copy()
idx = (3, 5, 1, 2)
w[idx] = np.float32(w[idx] + np.float32(0.5))
t.CopyFrom(numpy_helper.from_array(w, wname))
old = numpy_helper.to_array(init(base, wname)).astype(np.float64)
pairs["weight"] = {"a": "base.onnx", "b": save(m, "weight_b.onnx"), "tensor": wname,
                   "elements": int(w.size), "elements_changed": int(np.sum(w != old)),
                   "max_abs_diff": float(np.max(np.abs(w.astype(np.float64) - old))),
                   "max_rel_diff": float(np.abs(w.astype(np.float64)[idx] - old[idx]) / abs(old[idx])),
                   "changed_nodes": [conv2.name]}

# --- an added node: a Relu after the first Conv's consumer chain
m = copy.deepcopy(base)
act1 = node(m, "Relu", 0)
new = helper.make_node("Relu", [act1.output[0]], ["added_relu_out"], name="/added/Relu")
consumers = [n for n in m.graph.node if act1.output[0] in n.input]
for c in consumers:
    c.input[list(c.input).index(act1.output[0])] = "added_relu_out"
pos = list(m.graph.node).index(act1) + 1
m.graph.node.insert(pos, new)
pairs["added"] = {"a": "base.onnx", "b": save(m, "added_b.onnx"), "added": ["/added/Relu"],
                  "changed_nodes": [c.name for c in consumers]}

# --- a removed node: act3 (Relu) taken out
m = copy.deepcopy(base)
act3 = node(m, "Relu", 1)
consumers = [n for n in m.graph.node if act3.output[0] in n.input]
for c in consumers:
    c.input[list(c.input).index(act3.output[0])] = act3.input[0]
m.graph.node.remove(act3)
pairs["removed"] = {"a": "base.onnx", "b": save(m, "removed_b.onnx"), "removed": [act3.name],
                    "changed_nodes": [c.name for c in consumers]}

# --- a changed attribute
m = copy.deepcopy(base)
lr = node(m, "LeakyRelu")
for a in lr.attribute:
    if a.name == "alpha":
        a.f = 0.2
pairs["attr"] = {"a": "base.onnx", "b": save(m, "attr_b.onnx"), "node": lr.name,
                 "attribute": "alpha", "old": 0.1, "new": 0.2, "changed_nodes": [lr.name]}

# --- renamed: the node's name only, then the node and its output value
m = copy.deepcopy(base)
conv3 = node(m, "Conv", 2)
old_name = conv3.name
conv3.name = "/renamed/conv3/Conv"
pairs["renamed"] = {"a": "base.onnx", "b": save(m, "renamed_b.onnx"), "old": old_name,
                    "new": conv3.name, "matched_by": "output"}
m = copy.deepcopy(base)
conv3 = node(m, "Conv", 2)
out = conv3.output[0]
conv3.name = "/renamed/conv3/Conv"
conv3.output[0] = "renamed_value"
for n in m.graph.node:
    for i, x in enumerate(n.input):
        if x == out:
            n.input[i] = "renamed_value"
for vi in m.graph.value_info:
    if vi.name == out:
        vi.name = "renamed_value"
pairs["renamed_all"] = {"a": "base.onnx", "b": save(m, "renamed_all_b.onnx"), "old": old_name,
                        "new": conv3.name, "matched_by": "structure"}


def topo_orders(g, rng):
    """Another topological order of g's nodes: a random ready node each step."""
    produced = {x.name for x in g.input} | {t.name for t in g.initializer} | {""}
    left = list(g.node)
    order = []
    while left:
        ready = [n for n in left if all(i in produced for i in n.input)]
        n = rng.choice(ready)
        order.append(n)
        left.remove(n)
        produced.update(n.output)
    return order


def reorder(m, seed):
    rng = random.Random(seed)
    g = m.graph
    order = [copy.deepcopy(n) for n in topo_orders(g, rng)]
    for n in order:
        attrs = list(n.attribute)[::-1]
        del n.attribute[:]
        n.attribute.extend(attrs)
    del g.node[:]
    g.node.extend(order)
    for field in (g.initializer, g.value_info, m.metadata_props):
        items = [copy.deepcopy(x) for x in field][::-1]
        del field[:]
        field.extend(items)
    return m


m = reorder(copy.deepcopy(base), 7)
assert [n.name for n in m.graph.node] != [n.name for n in base.graph.node]
pairs["reordered"] = {"a": "base.onnx", "b": save(m, "reordered_b.onnx")}

# --- no names: structure only
a = copy.deepcopy(base)
for n in a.graph.node:
    n.name = ""
save(a, "anon_a.onnx")
b = reorder(copy.deepcopy(a), 11)
keep = {x.name for x in b.graph.input} | {x.name for x in b.graph.output} | \
       {t.name for t in b.graph.initializer}
ren = {}
for n in b.graph.node:
    for i, x in enumerate(n.output):
        if x and x not in keep:
            ren[x] = "v%d" % len(ren)
            n.output[i] = ren[x]
for n in b.graph.node:
    for i, x in enumerate(n.input):
        if x in ren:
            n.input[i] = ren[x]
for vi in b.graph.value_info:
    if vi.name in ren:
        vi.name = ren[vi.name]
pairs["anon"] = {"a": "anon_a.onnx", "b": save(b, "anon_b.onnx")}


# --- QDQ
def qdq(src):
    m = copy.deepcopy(src)
    g = m.graph
    inits = {t.name: t for t in g.initializer}
    added = []
    new_nodes = []
    act_done = {}
    for n in list(g.node):
        if n.op_type not in ("Conv", "Gemm"):
            new_nodes.append(n)
            continue
        # the activation: QuantizeLinear -> DequantizeLinear (uint8, a fixed scale)
        x = n.input[0]
        if x not in act_done:
            s, z = x + "_scale", x + "_zero_point"
            g.initializer.extend([numpy_helper.from_array(np.array(0.05, np.float32), s),
                                  numpy_helper.from_array(np.array(128, np.uint8), z)])
            q = helper.make_node("QuantizeLinear", [x, s, z], [x + "_quantized"], name=x + "_QuantizeLinear")
            dq = helper.make_node("DequantizeLinear", [x + "_quantized", s, z], [x + "_dequantized"],
                                  name=x + "_DequantizeLinear")
            new_nodes += [q, dq]
            added += [q.name, dq.name]
            act_done[x] = x + "_dequantized"
        n.input[0] = act_done[x]
        # the weight: int8, per tensor
        wn = n.input[1]
        w = numpy_helper.to_array(inits[wn])
        scale = np.float32(np.abs(w).max() / 127.0)
        wq = np.clip(np.round(w / scale), -127, 127).astype(np.int8)
        g.initializer.remove(inits[wn])
        g.initializer.extend([numpy_helper.from_array(wq, wn + "_quantized"),
                              numpy_helper.from_array(np.array(scale, np.float32), wn + "_scale"),
                              numpy_helper.from_array(np.array(0, np.int8), wn + "_zero_point")])
        dq = helper.make_node("DequantizeLinear", [wn + "_quantized", wn + "_scale", wn + "_zero_point"],
                              [wn + "_dequantized"], name=wn + "_DequantizeLinear")
        new_nodes.append(dq)
        added.append(dq.name)
        n.input[1] = wn + "_dequantized"
        new_nodes.append(n)
    del g.node[:]
    g.node.extend(new_nodes)
    return m, added


m, added = qdq(base)
pairs["quant"] = {"a": "base.onnx", "b": save(m, "quant_b.onnx"), "added": added,
                  "changed_nodes": [n.name for n in base.graph.node if n.op_type in ("Conv", "Gemm")]}

# --- one module, two opsets
export(os.path.join(OUT, "opset11.onnx"), 11)
export(os.path.join(OUT, "opset14.onnx"), 14)
pairs["opset"] = {"a": "opset11.onnx", "b": "opset14.onnx", "opsets": [11, 14]}

with open(os.path.join(OUT, "pairs.json"), "w") as f:
    json.dump(pairs, f, indent=1)
print("made", len(pairs), "pairs in", OUT)
