"""scripts/check_layers.py passes on the repository and catches each kind of forbidden include."""

import importlib.util
import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
spec = importlib.util.spec_from_file_location(
    "check_layers", os.path.join(ROOT, "scripts", "check_layers.py"))
check_layers = importlib.util.module_from_spec(spec)
spec.loader.exec_module(check_layers)


def test_the_repository_respects_the_layering():
    assert check_layers.check() == []


def write(root, path, include):
    full = os.path.join(root, path)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, "w") as f:
        f.write(f'#include "{include}"\n')


def test_forbidden_includes_are_reported(tmp_path):
    cases = [
        ("core/tensor.h", "autograd/node.h"),        # a core header naming autograd
        ("core/tensor.cpp", "autograd/engine.h"),    # tensor code needing the engine
        ("core/dispatch.cpp", "cuda/kernels.h"),     # core naming a backend
        ("nn/layers.cpp", "distributed/ddp.h"),      # nn above distributed
        ("autograd/engine.cpp", "nn/module.h"),      # autograd above nn
        ("cuda/copy.cpp", "nn/module.h"),            # a backend above its layer
        ("data/mnist.cpp", "python/bind_common.h"),  # the library including the binding
    ]
    for path, include in cases:
        write(tmp_path, path, include)
    found = check_layers.check(str(tmp_path))
    for path, include in cases:
        assert any(p.startswith(f"{path}: includes {include}") for p in found), (path, found)


def test_allowed_includes_pass(tmp_path):
    for path, include in [("core/ops/nn.cpp", "autograd/functions/nn.h"),
                          ("nn/layers.cpp", "autograd/node.h"),
                          ("data/dataloader.cpp", "cuda/api.h"),
                          ("distributed/ddp.h", "nn/module.h")]:
        write(tmp_path, path, include)
    assert check_layers.check(str(tmp_path)) == []
