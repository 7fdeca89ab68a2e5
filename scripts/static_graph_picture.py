"""Draws docs/static_graph_block.svg: one ResNet basic block (conv, batch norm, ReLU, conv, batch
norm, the identity added, ReLU) as wick.jit.trace records it, and the same graph after the
inference passes (functionalization, freezing, constant folding, conv + batch-norm folding,
elementwise fusion), side by side. Needs Graphviz's `dot`.

    /usr/bin/python3 scripts/static_graph_picture.py [build]
"""

import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = sys.argv[1] if len(sys.argv) > 1 else "build"
sys.path[:0] = [os.path.join(ROOT, "python"), os.path.join(ROOT, BUILD, "python")]

import wick  # noqa: E402
from wick.models.resnet import BasicBlock  # noqa: E402


def body(dot, prefix, title):
    """The statements of one digraph, its node names prefixed, as a cluster."""
    inner = dot[dot.index("{") + 1:dot.rindex("}")]
    inner = re.sub(r"\b([nvo]u?t?\d+)\b", lambda m: prefix + m.group(1), inner)
    inner = inner.replace("rankdir=TB;", "")
    return (f'  subgraph cluster_{prefix} {{\n    label="{title}"; fontname="Helvetica"; '
            f'fontsize=14; color="#bbbbbb";\n{inner}  }}\n')


def main():
    wick.manual_seed(0)
    block = BasicBlock(16, 16).eval()
    x = wick.randn(1, 16, 8, 8)
    params = list(block.named_parameters()) + list(block.named_buffers())
    with wick.no_grad():
        graph = wick.jit._jit.trace(lambda xs: [block(*xs)], [x], params)
    before = graph.dot()
    optimized = graph.copy()
    log = wick.jit._jit.optimize(optimized, params, {"freeze": True})
    print(log)
    after = optimized.dot()
    dot = ('digraph static_graph {\n  rankdir=TB; newrank=true;\n'
           '  node [fontname="Helvetica", fontsize=10];\n'
           + body(before, "a", f"traced: {graph.num_kernels} kernels")
           + body(after, "b", f"after the passes: {optimized.num_kernels} kernels") + "}\n")
    out = os.path.join(ROOT, "docs", "static_graph_block.svg")
    svg = subprocess.run(["dot", "-Tsvg"], input=dot.encode(), check=True,
                         capture_output=True).stdout
    with open(out, "wb") as f:
        f.write(svg)
    print(f"wrote {os.path.relpath(out, ROOT)}")


if __name__ == "__main__":
    main()
