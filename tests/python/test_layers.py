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


# One forbidden include per rule of check_layers.RULES, in its order (several for the rules that
# carry more than one direction the layering forbids).
FORBIDDEN = [
    ("core/tensor.h", "autograd/node.h"),            # a core header naming autograd
    ("core/tensor.cpp", "autograd/engine.h"),        # tensor code needing the engine
    ("core/autocast.cpp", "autograd/node.h"),        # core below the ops layer naming nodes
    ("core/dispatch.cpp", "cuda/kernels.h"),         # core naming a backend
    ("core/ops/nn.cpp", "nn/module.h"),              # core above nn
    ("nn/layers/linear.cpp", "distributed/ddp.h"),          # nn above distributed
    ("nn/fit.h", "data/dataloader.h"),               # nn taking the loader by type
    ("autograd/engine.cpp", "nn/module.h"),          # autograd above nn
    ("cuda/copy.cpp", "nn/module.h"),                # a backend above its layer
    ("cuda/graph.cpp", "jit/cuda_graph.h"),          # a backend knowing graphs
    ("sim/register.cpp", "jit/fused_cuda.h"),        # a backend knowing fused chains
    ("data/mnist.cpp", "python/bind_common.h"),      # the library including the binding
    ("data/dataloader.cpp", "nn/module.h"),          # data above nn
    ("data/transforms.cpp", "cuda/kernels.h"),       # data past the public CUDA API
    ("jit/executor.cpp", "cuda/runtime.h"),          # jit naming a backend
    ("distributed/ddp.cpp", "jit/executor.h"),       # distributed beside jit
    ("envreport/gather.cpp", "tools/wick_env.h"),    # the report including its tool
    ("python/bind_env.cpp", "tests/cpp/helpers.h"),  # the binding including tests
    ("python/bind_jit.cpp", "tools/env/env_report.h"),  # the binding including a tool
    ("tools/wick_env.cpp", "python/bind_common.h"),  # a tool including the binding
    ("tools/alloc_replay.cpp", "tests/cpp/helpers.h"),  # a tool including tests
    ("examples/train_mnist.cpp", "tests/cpp/helpers.h"),  # an example including tests
    ("benchmarks/bench_ops.cpp", "python/bind_common.h"),  # a benchmark on binding internals
]


def test_forbidden_includes_are_reported(tmp_path):
    for path, include in FORBIDDEN:
        write(tmp_path, path, include)
    found = check_layers.check(str(tmp_path))
    for path, include in FORBIDDEN:
        assert any(p.startswith(f"{path}: includes {include}: ") for p in found), (path, found)
    # every rule is proved by some case: each reason is reported at least once
    for _, _, why in check_layers.RULES:
        assert any(p.endswith(why) for p in found), why


def test_allowed_includes_pass(tmp_path):
    for path, include in [("core/ops/nn.cpp", "autograd/functions/nn.h"),
                          ("core/autocast.cpp", "core/grad_mode.h"),
                          ("nn/layers/linear.cpp", "autograd/node.h"),
                          ("data/dataloader.cpp", "cuda/api.h"),
                          ("distributed/ddp.h", "nn/module.h"),
                          ("jit/trace.cpp", "nn/module.h"),
                          ("cuda/register.cpp", "core/backend.h"),
                          ("envreport/gather.cpp", "distributed/backends.h"),
                          ("python/bind_env.cpp", "envreport/report.h"),
                          ("tools/wick_env.cpp", "envreport/report.h"),
                          ("tools/alloc_replay.cpp", "examples/common/cli.h"),
                          ("benchmarks/bench_amp.cpp", "examples/mnist_models.h"),
                          ("tests/cpp/test_env.cpp", "python/bind_common.h")]:
        write(tmp_path, path, include)
    assert check_layers.check(str(tmp_path)) == []
