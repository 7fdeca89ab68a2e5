#!/usr/bin/env python3
"""Fails on an #include that crosses a layer boundary the wrong way (docs/architecture.md).

The layers, lowest first: core (tensors, dtypes, dispatch, memory, CPU kernels) with core/ops
and autograd beside it as one layer; then the backends (cuda/, sim/); then nn/ and data/; then
distributed/; then the Python binding (python/), tools, examples, benchmarks and tests. A file
may include its own layer and the layers below it, never above, with the exceptions written out
in RULES (each says why). Run from anywhere: python3 scripts/check_layers.py"""

import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIBRARY = ("core", "autograd", "cuda", "sim", "nn", "data", "distributed", "jit")
ABOVE_THE_LIBRARY = {"python", "tools", "examples", "benchmarks", "tests", "tutorials"}

# (files the rule covers, folders they must not include, why)
RULES = [
    (lambda path: path.startswith("core/") and path.endswith((".h", ".cuh")),
     {"autograd"},
     "core's headers are the base API: a header that named the engine would make every includer "
     "depend on it"),
    (lambda path: path.startswith("core/") and not path.startswith("core/ops/")
     and path not in ("core/autocast.cpp", "core/print.cpp"),
     {"autograd"},
     "tensors, dispatch, memory and kernels know nothing of autograd; only the op front "
     "functions (core/ops/) record nodes, autocast asks grad mode, and print shows grad_fn"),
    (lambda path: path.startswith(("core/", "autograd/", "nn/")),
     {"cuda", "sim", "distributed", "nn", "data", "jit"} | ABOVE_THE_LIBRARY,
     "core, autograd and nn reach devices only through the dispatcher and core/backend.h"),
    (lambda path: path.startswith(("cuda/", "sim/")),
     {"autograd", "nn", "data", "distributed", "cuda", "sim"} | ABOVE_THE_LIBRARY,
     "a backend sees core's kernel interface, never the layers above it"),
    (lambda path: path.startswith("data/"),
     {"nn", "distributed"} | ABOVE_THE_LIBRARY,
     "the data loader is independent of models and of distribution"),
    (lambda path: path.startswith("distributed/"), ABOVE_THE_LIBRARY,
     "the library never includes the binding, tools or tests"),
    (lambda path: path.startswith("jit/"),
     {"cuda", "sim", "data", "distributed"} | ABOVE_THE_LIBRARY,
     "the graph compiler traces through the dispatcher and reaches devices only through it"),
]
# data/ may use the public CUDA API (cuda/api.h has a CPU-only twin) to pin batches.
ALLOWED = {("data/dataloader.cpp", "cuda/api.h")}


def check(root=ROOT):
    problems = []
    for top in LIBRARY:
        for folder, _, files in os.walk(os.path.join(root, top)):
            for name in files:
                if not name.endswith((".h", ".cpp", ".cu", ".cuh")):
                    continue
                path = os.path.relpath(os.path.join(folder, name), root)
                text = open(os.path.join(root, path), encoding="utf-8").read()
                for line in re.finditer(r'^\s*#\s*include\s+"([^"]+)"', text, re.M):
                    target = line.group(1)
                    layer = target.split("/")[0]
                    if (path, target) in ALLOWED:
                        continue
                    for covers, forbidden, why in RULES:
                        if covers(path) and layer in forbidden and layer != path.split("/")[0]:
                            problems.append(f"{path}: includes {target}: {why}")
    return problems


if __name__ == "__main__":
    found = check(sys.argv[1] if len(sys.argv) > 1 else ROOT)
    for p in found:
        print(p)
    if found:
        print(f"check_layers: {len(found)} forbidden include(s); see docs/architecture.md")
        sys.exit(1)
    print("check_layers: every include respects the layering")
