#!/usr/bin/python3
"""render_netdrawer.py — the baseline of the rendering benchmark: onnx's net_drawer.

    /usr/bin/python3 tests/bench/render_netdrawer.py MODEL.onnx OUT.dot

Runs onnx/tools/net_drawer.py the way its main() does (and its header documents), with a
top-to-bottom layout like ours: ModelProto.ParseFromString, GetPydotGraph(graph,
rankdir="TB", embed_docstring=False), write_dot(OUT.dot).  The SVG is then made by the
caller with `dot -Tsvg OUT.dot` (render.sh times the whole pipeline as processes).

Note that pydot's write_dot() is not a plain write: it runs `dot -Tdot` (a complete dot
layout) and saves its output.  The helper also writes the graph as given (to_string(),
what write_raw would save) to OUT.dot.raw, and prints the time of each phase on stdout as
"phase seconds" lines, so the report can show where the time goes:
    import    python imports (onnx, pydot)
    parse     reading and parsing the model
    graph     GetPydotGraph
    raw       to_string() + writing OUT.dot.raw
    write_dot pydot's write_dot (dot -Tdot inside)
"""
import sys
import time

t0 = time.monotonic()
from onnx import ModelProto  # noqa: E402
from onnx.tools import net_drawer  # noqa: E402


def main(argv):
    if len(argv) != 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    src, out = argv[1], argv[2]
    t = time.monotonic()
    print("import %.3f" % (t - t0), flush=True)
    model = ModelProto()
    with open(src, "rb") as f:
        model.ParseFromString(f.read())
    t1 = time.monotonic()
    print("parse %.3f" % (t1 - t), flush=True)
    g = net_drawer.GetPydotGraph(
        model.graph, name=model.graph.name, rankdir="TB",
        node_producer=net_drawer.GetOpNodeProducer(embed_docstring=False,
                                                   **net_drawer.OP_STYLE))
    t2 = time.monotonic()
    print("graph %.3f" % (t2 - t1), flush=True)
    with open(out + ".raw", "w", encoding="utf-8") as f:
        f.write(g.to_string())
    t3 = time.monotonic()
    print("raw %.3f" % (t3 - t2), flush=True)
    g.write_dot(out)
    print("write_dot %.3f" % (time.monotonic() - t3), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
