#!/usr/bin/python3
"""make_seeds.py — regenerates the hand-made seeds of the fuzz targets graph, tensor,
render and http (tests/fuzz/corpus/<name>/), from the generators of tests/hostile/models.py.

Run by hand (/usr/bin/python3 tests/fuzz/make_seeds.py); the files are committed (each
under 64 KB) so replays need no python.  The targets also read the parse target's corpus
(tests/fuzz/<name>.seeds).
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "hostile"))

import models as M  # noqa: E402

MAX_SEED = 64 * 1024


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


def main():
    sets = {"graph": graph_seeds(), "tensor": M.tensor_seeds(), "render": render_seeds()}
    for target, seeds in sets.items():
        out = os.path.join(HERE, "corpus", target)
        os.makedirs(out, exist_ok=True)
        for name, data in seeds.items():
            assert len(data) <= MAX_SEED, "%s/%s: %d bytes" % (target, name, len(data))
            with open(os.path.join(out, "seed_" + name), "wb") as f:
                f.write(data)
        print("%-7s %3d seeds" % (target, len(seeds)))


if __name__ == "__main__":
    main()
