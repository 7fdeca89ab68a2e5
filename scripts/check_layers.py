#!/usr/bin/env python3
"""Fails on an #include that crosses a layer boundary the wrong way (docs/architecture.md).

The layers, highest first. A file never includes a layer above its own, and not every layer
below it either (nn/ reaches the backends only through the dispatcher): RULES writes out what
each folder must not include, each rule with its reason, and ALLOWED the one crossing meant.

  tests/              may include anything
  python/ tools/      the binding, command-line tools, examples, benchmarks and labs: each on
  examples/           the library (and envreport/), never on tests/ or the binding's internals;
  benchmarks/         tools and benchmarks may share the examples' helpers (examples/common/,
  tutorials/          examples/mnist_models.h)
  envreport/          the environment report: a library on the public CUDA and NCCL versions
  jit/  distributed/  static graphs (trace, passes, executor) | process groups, DDP
  nn/   data/         modules, losses, optimizers | datasets, DataLoader (neither sees the other)
  cuda/ sim/          backends: kernels, allocators; graph capture and run-time compilation are
                      hooks of their core/backend.h description, which jit/ calls
  core/ + autograd/   tensors, dispatch, memory, CPU kernels, the op front functions (core/ops/)
                      | the engine and backward formulas: one layer, the core/ops <-> autograd
                      pair kept narrow

Run from anywhere: python3 scripts/check_layers.py [ROOT]"""

import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIBRARY = ("core", "autograd", "cuda", "sim", "nn", "data", "distributed", "jit")
PROGRAMS = {"python", "tools", "examples", "benchmarks", "tests", "tutorials"}
ABOVE_THE_LIBRARY = PROGRAMS | {"envreport"}
SCANNED = LIBRARY + ("envreport", "python", "tools", "examples", "benchmarks", "tutorials")


def under(*folders):
    return lambda path: path.startswith(tuple(f + "/" for f in folders))


# (files the rule covers, folders they must not include, why)
RULES = [
    (lambda path: path.startswith("core/") and path.endswith((".h", ".cuh")),
     {"autograd"},
     "core's headers are the base API: a header that named the engine would make every includer "
     "depend on it"),
    (lambda path: path.startswith("core/") and not path.startswith("core/ops/"),
     {"autograd"},
     "tensors, dispatch, grad mode, memory and kernels know nothing of autograd; only the op "
     "front functions, Tensor's methods and printing (core/ops/) record nodes or show grad_fn"),
    (under("core", "autograd", "nn"),
     {"cuda", "sim", "distributed", "nn", "data", "jit"} | ABOVE_THE_LIBRARY,
     "core, autograd and nn reach devices only through the dispatcher and core/backend.h, and "
     "nn takes a data loader by its shape (nn::Batches), not by its type"),
    (under("cuda", "sim"),
     {"autograd", "nn", "data", "distributed", "cuda", "sim"} | ABOVE_THE_LIBRARY,
     "a backend sees core's kernel interface, never the layers above it or another backend"),
    (under("cuda", "sim"),
     {"jit"},
     "a backend offers graph capture and run-time compilation as hooks of its core/backend.h "
     "description; jit/ calls them, so the backend never knows graphs or fused chains"),
    (under("data"),
     {"cuda", "sim", "nn", "jit", "distributed"} | ABOVE_THE_LIBRARY,
     "the data loader is independent of models, of graphs and of distribution, and reaches a "
     "device only through the dispatcher (and cuda/api.h to pin batches)"),
    (under("jit"),
     {"cuda", "sim", "data", "distributed"} | ABOVE_THE_LIBRARY,
     "the graph compiler traces through the dispatcher and reaches devices only through it and "
     "the backends' hooks"),
    (under("distributed"),
     {"jit"} | ABOVE_THE_LIBRARY,
     "distributed and jit are side by side, and the library never includes the environment "
     "report, the binding, tools or tests"),
    (under("envreport"),
     PROGRAMS,
     "the environment report is a library of its own, used by tools/wick_env, the binding and "
     "the tests; it never includes them"),
    (under("python"),
     PROGRAMS - {"python"},
     "the binding is built from the library and the environment report alone: it never "
     "includes tests, tools or the example programs"),
    (under("tools"),
     {"python", "tests", "benchmarks", "tutorials"},
     "a tool is a program on the library and the environment report (with the examples' "
     "shared argument parsers), never on the binding's or the tests' internals"),
    (under("examples", "benchmarks", "tutorials"),
     {"python", "tests", "tools"},
     "examples, benchmarks and labs are programs written against the public library, as a "
     "reader would write one: never on the binding's or the tests' internals"),
]
# data/ may use the public CUDA API (cuda/api.h has a CPU-only twin) to pin batches.
ALLOWED = {("data/dataloader.cpp", "cuda/api.h")}


def check(root=ROOT):
    problems = []
    for top in SCANNED:
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
