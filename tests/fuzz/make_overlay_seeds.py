"""make_overlay_seeds.py — the overlay fuzz target's model and seeds (tests/fuzz/fuzz_overlay.c).

Writes tests/fuzz/overlay_model.h: two small models as C arrays, the one the overlays are
attributed to (three repeated scopes /layers.K/{conv/Conv, act/Relu}, a scoped Add, an
unnamed Add and Mul as ORT names them, a Shape -> Gather -> Reshape chain that is folded)
and an optimized model in ORT's manner (NCHWc Conv+Relu named after their output value +
"_nchwc", a ReorderInput/ReorderOutput pair, the rest as it was); and the seeds in
tests/fuzz/corpus/overlay/: each is one option byte (bits: 0-2 metric, 3-4 scale, 5 the
optimized model, 6-7 grouping) followed by an overlay file of every kind the parser reads
(ORT profiles of one and several runs and providers, fused and fusion-segment names,
Model Explorer node data with thresholds, a Netron attachment, CSV with quotes and empty
cells) and hostile ones (deep nesting, NaN, huge numbers, NUL bytes, markup, bad escapes,
a profile cut short).  Run from the repository root with Debian's python3 (onnx).
"""
import json
import os

from onnx import TensorProto, helper

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "corpus", "overlay")


def model():
    nodes, inits = [], []
    x = "x"
    for k in range(3):
        w = "w%d" % k
        inits.append(helper.make_tensor(w, TensorProto.FLOAT, [4, 4, 1, 1], [(i * 7 + k) / 16 for i in range(16)]))
        c = "/layers.%d/conv/Conv_output_0" % k
        r = "/layers.%d/act/Relu_output_0" % k
        nodes.append(helper.make_node("Conv", [x, w], [c], name="/layers.%d/conv/Conv" % k))
        nodes.append(helper.make_node("Relu", [c], [r], name="/layers.%d/act/Relu" % k))
        x = r
    nodes.append(helper.make_node("Add", [x, "x"], ["/head/Add_output_0"], name="/head/Add"))
    nodes.append(helper.make_node("Add", ["/head/Add_output_0", x], ["a1"]))  # unnamed: Add_0
    nodes.append(helper.make_node("Mul", ["a1", "a1"], ["m1"]))              # unnamed: Mul_0
    nodes.append(helper.make_node("Shape", ["m1"], ["s"], name="/head/Shape"))
    inits.append(helper.make_tensor("i0", TensorProto.INT64, [], [0]))
    nodes.append(helper.make_node("Gather", ["s", "i0"], ["g"], name="/head/Gather", axis=0))
    inits.append(helper.make_tensor("minus1", TensorProto.INT64, [1], [-1]))
    nodes.append(helper.make_node("Unsqueeze", ["g", "i0u"], ["gu"], name="/head/Unsqueeze"))
    inits.append(helper.make_tensor("i0u", TensorProto.INT64, [1], [0]))
    nodes.append(helper.make_node("Concat", ["gu", "minus1"], ["shape"], name="/head/Concat", axis=0))
    nodes.append(helper.make_node("Reshape", ["m1", "shape"], ["y"], name="/head/Reshape"))
    g = helper.make_graph(nodes, "overlay_fuzz", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 8, 8])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    return m.SerializeToString()


def optimized():
    nodes, inits = [], []
    nodes.append(helper.make_node("ReorderInput", ["x"], ["reorder_token_0"], name="ReorderInput",
                                  domain="com.microsoft.nchwc"))
    x = "reorder_token_0"
    for k in range(3):
        w = "w%d_nchwc" % k
        inits.append(helper.make_tensor(w, TensorProto.FLOAT, [8, 8, 1, 1], [(i * 5 + k) / 64 for i in range(64)]))
        r = "/layers.%d/act/Relu_output_0" % k
        nodes.append(helper.make_node("Conv", [x, w], [r + "_nchwc"], name=r + "_nchwc",
                                      domain="com.microsoft.nchwc", activation="Relu"))
        x = r + "_nchwc"
    nodes.append(helper.make_node("ReorderOutput", [x], ["/layers.2/act/Relu_output_0"], name="ReorderOutput",
                                  domain="com.microsoft.nchwc"))
    x = "/layers.2/act/Relu_output_0"
    nodes.append(helper.make_node("Add", [x, "x"], ["/head/Add_output_0"], name="/head/Add"))
    nodes.append(helper.make_node("Add", ["/head/Add_output_0", x], ["a1"], name="Add_0"))
    nodes.append(helper.make_node("Mul", ["a1", "a1"], ["y"], name="Mul_0"))
    g = helper.make_graph(nodes, "overlay_fuzz_opt", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 8, 8])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("com.microsoft.nchwc", 1)])
    m.ir_version = 8
    return m.SerializeToString()


def c_array(name, data):
    lines = ["static const unsigned char %s[] = {" % name]
    for i in range(0, len(data), 16):
        lines.append("    " + ", ".join("0x%02x" % b for b in data[i:i + 16]) + ",")
    lines.append("};")
    return "\n".join(lines)


def profile(kernels, runs=1, extra=()):
    ev, ts = [], 0
    for r in range(runs):
        ev.append({"cat": "Session", "pid": 1, "tid": 1, "dur": 5000, "ts": ts, "ph": "X", "name": "model_run", "args": {}})
        for i, (name, op, pv, dur) in enumerate(kernels):
            ev.append({"cat": "Node", "pid": 1, "tid": 1, "dur": 1, "ts": ts + 2 * i, "ph": "X",
                       "name": name + "_fence_before", "args": {"op_name": op}})
            ev.append({"cat": "Node", "pid": 1, "tid": 1, "dur": dur + r, "ts": ts + 2 * i + 1, "ph": "X",
                       "name": name + "_kernel_time", "args": {"op_name": op, "provider": pv,
                                                               "input_type_shape": [{"float": [1, 4, 8, 8]}],
                                                               "output_size": "1024", "parameter_size": "64"}})
        ts += 10000
    return ev + list(extra)


def main():
    with open(os.path.join(HERE, "overlay_model.h"), "w") as f:
        f.write("/* Generated by tests/fuzz/make_overlay_seeds (python3 with onnx): do not edit. */\n")
        f.write(c_array("overlay_model", model()) + "\n")
        f.write(c_array("overlay_optimized", optimized()) + "\n")
    os.makedirs(OUT, exist_ok=True)
    cpu, cuda = "CPUExecutionProvider", "CUDAExecutionProvider"
    plain = [("/layers.%d/conv/Conv" % k, "Conv", cpu, 10 + k) for k in range(3)] + \
            [("/layers.%d/act/Relu" % k, "Relu", cpu, 3) for k in range(3)] + \
            [("/head/Add", "Add", cuda, 2), ("Add_0", "Add", cuda, 2), ("Mul_0", "Mul", cpu, 4),
             ("/head/Reshape", "Reshape", cpu, 1), ("nosuch<b>&", "Gelu", cpu, 7)]
    fused = [("/layers.%d/act/Relu_output_0_nchwc" % k, "Conv", cpu, 20 + k) for k in range(3)] + \
            [("ReorderInput", "ReorderInput", cpu, 1), ("ReorderOutput", "ReorderOutput", cpu, 1),
             ("/head/Add/FusionSegment/", "Add", cuda, 2), ("Add_0", "Add", cuda, 2), ("Mul_0", "Mul", "Odd provider", 3)]
    csv = "node,latency_ms,accuracy\n" + "".join('"%s",%d,%s\n' % (n, d, "" if i % 2 else "0.5")
                                                for i, (n, _, _, d) in enumerate(plain)) + \
          '"quoted ""name"", with comma",1,2\n/layers.1/act/Relu_output_0,3,0.25\n'
    seeds = {
        "profile_1run": (0x00, json.dumps(profile(plain))),
        "profile_3runs_p90_log": (0x0a, json.dumps(profile(plain, 3))),
        "profile_trace_object": (0x43, json.dumps({"traceEvents": profile(plain, 2), "displayTimeUnit": "ns"})),
        "profile_fused_optimized": (0x24, json.dumps(profile(fused, 2))),
        "profile_fused_plain_grouped": (0x85, json.dumps(profile(fused, 1))),
        "profile_providers_metric": (0x05, json.dumps(profile(plain, 2))),
        "model_explorer": (0x10, json.dumps({"overlay_fuzz": {"results": {"/layers.0/conv/Conv": {"value": 5},
                                                                          "/layers.1/act/Relu_output_0": {"value": 7.5},
                                                                          "Add_0": {"value": "text"}, "nosuch": {"value": 1}},
                                                              "thresholds": [{"value": 6, "bgColor": "#f00"}, {"value": 1, "bgColor": "#0f0"}]}})),
        "model_explorer_flat": (0x18, json.dumps({"results": {"/head/Add": {"value": 1e300}, "Mul_0": {"value": -3}}})),
        "netron": (0x01, json.dumps({"signature": "netron:attachment", "metrics": [
            {"kind": "node", "target": "/layers.2/conv/Conv", "name": "latency", "value": 1.5},
            {"kind": "node", "target": "/layers.2/conv/Conv", "name": "error", "value": "0.25"},
            {"kind": "value", "target": "a1", "name": "latency", "value": 2},
            {"kind": "model", "target": "", "name": "latency", "value": 9}]})),
        "csv": (0x41, csv),
        "csv_crlf_thresholds": (0x11, csv.replace("\n", "\r\n")),
        "hostile_nesting": (0x00, '[{"cat": "Node", "args": {"x": ' + "[" * 80 + "]" * 80 + "}}]"),
        "hostile_nan_csv": (0x00, "node,t\n/head/Add,nan\n"),
        "hostile_huge_json": (0x00, '{"results": {"/head/Add": {"value": 1e400}}}'),
        "hostile_nul": (0x00, "node,t\nab\0c,1\n"),
        "hostile_escape": (0x00, '[{"cat": "Node", "name": "x\\ud800\\q_kernel_time", "dur": 5}]'),
        "hostile_cut": (0x00, json.dumps(profile(plain))[:300]),
        "hostile_negative_dur": (0x00, json.dumps([{"cat": "Node", "name": "Mul_0_kernel_time", "dur": -1, "ts": 1}])),
        "hostile_dup_key": (0x00, '[{"cat": "Node", "dur": 1, "dur": 2}]'),
        "hostile_markup_names": (0x20, "node,t\n<script>alert(1)</script>,1\n\"<img src=x onerror=y>\",2\n"),
        # TensorRT and OpenVINO (issue 38): fused, merged, reformatter and Myelin layers
        "tensorrt_profile": (0x00, json.dumps([{"count": 10}] + [
            {"name": "/layers.0/conv/Conv + /layers.0/act/Relu", "timeMs": 3, "averageMs": 0.3,
             "medianMs": 0.29, "percentage": 30},
            {"name": "/layers.0/conv/Conv + /layers.0/act/Relu input reformatter 0", "timeMs": 1,
             "averageMs": 0.1, "medianMs": 0.1, "percentage": 10},
            {"name": "/layers.1/conv/Conv || /layers.2/conv/Conv", "timeMs": 2, "averageMs": 0.2,
             "percentage": 20},
            {"name": "{ForeignNode[/layers.1/act/Relu.../head/Add]}", "timeMs": 4, "percentage": 40}])),
        "tensorrt_layers": (0x01, json.dumps({"Layers": [
            {"Name": "/layers.0/conv/Conv + /layers.0/act/Relu", "LayerType": "CaskConvolution",
             "Outputs": [{"Name": "y", "Format/Datatype": "Channel major FP16 format"}]},
            "/head/Add"], "Bindings": ["x"]})),
        "openvino_counters": (0x20, "layerName;execStatus;layerType;execType;realTime (ms);cpuTime (ms)\n"
                              "/layers.0/conv/Conv;EXECUTED;Convolution;jit_avx2_FP32;0.25;0.25\n"
                              "/layers.0/act/Relu;OPTIMIZED_OUT;Relu;undef;0;0\n"
                              "Mul_0;EXECUTED;Multiply;jit_avx_I8;0.01;0.01\nTotal;;;;0.26;0.26\n\n"
                              "layerName;execStatus;layerType;execType;realTime (ms);cpuTime (ms)\n"
                              "/layers.0/conv/Conv;EXECUTED;Convolution;jit_avx2_FP32;0.3;0.3\n"),
    }
    for name, (opt, text) in seeds.items():
        with open(os.path.join(OUT, "seed_" + name), "wb") as f:
            f.write(bytes([opt]) + text.encode("utf-8", "surrogatepass"))
    print("overlay: %d seeds, overlay_model.h" % len(seeds))


if __name__ == "__main__":
    main()
