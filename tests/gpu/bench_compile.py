"""Eager against compiled on the GPU, for tests/gpu/run.sh's summary: the MNIST MLP's SGD
training step (batch 64, launch-bound: the target is compiled >= 2x eager's steps/s) and
ResNet-20 inference (batch 64; folding and fusion >= 1.3x eager), each as wick eager, wick
compiled replayed op by op (cuda_graph=False) and wick compiled as one CUDA Graph launch, beside
PyTorch eager and PyTorch with the same step captured by torch.cuda.graph.

Every figure is wall time over a timed loop after warm-up, ended by a synchronize, divided by
the steps.

    WICK_BUILD_DIR=build-gpu python3 tests/gpu/bench_compile.py [--steps 200]
"""

import argparse
import time

# bench_vs_torch finds the build and imports torch (if installed) before wick (Note [torch before
# wick] in tests/gpu/python/conftest.py).
from bench_vs_torch import torch, wick
from wick.models.resnet import resnet20


def ms_per_step(lib, step, steps, warmup=3):
    for _ in range(warmup):
        step()
    lib.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(steps):
        step()
    lib.cuda.synchronize()
    return (time.perf_counter() - start) / steps * 1e3


def mlp(lib):
    nn = lib.nn
    return nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.ReLU(),
                         nn.Linear(256, 10)).to("cuda")


def training_step(lib, model):
    opt = lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)

    def step(x, y):
        opt.zero_grad()
        loss = lib.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss
    return step


def wick_mlp(steps):
    x = wick.randn(64, 1, 28, 28).to("cuda")
    y = wick.randint(0, 10, (64,)).to("cuda")
    rows = {}
    for name, compiled, graph in (("eager", False, False), ("compiled, op by op", True, False),
                                  ("compiled, CUDA Graph", True, True)):
        wick.manual_seed(0)
        step = training_step(wick, mlp(wick))
        if compiled:
            step = wick.compile(step, warmup=1, cuda_graph=graph)
        rows[name] = ms_per_step(wick, lambda: step(x, y), steps)
        if graph:
            print(f"  wick CUDA Graph: {step.cuda_graph['status']}", flush=True)
    return rows


def torch_mlp(steps):
    x = torch.randn(64, 1, 28, 28, device="cuda")
    y = torch.randint(0, 10, (64,), device="cuda")
    step = training_step(torch, mlp(torch))
    rows = {"eager": ms_per_step(torch, lambda: step(x, y), steps)}
    try:  # the whole step captured, as torch.cuda.graph's documentation shows
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(3):
                step(x, y)
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            step(x, y)
        rows["CUDA Graph"] = ms_per_step(torch, graph.replay, steps)
    except Exception as e:  # noqa: BLE001 - a figure missing is reported, not fatal
        print(f"  torch CUDA Graph: {type(e).__name__}: {str(e).splitlines()[0][:120]}")
    return rows


def wick_resnet(steps):
    wick.manual_seed(0)
    model = resnet20().eval().to("cuda")
    x = wick.randn(64, 3, 32, 32).to("cuda")
    rows = {}
    with wick.no_grad():
        rows["eager"] = ms_per_step(wick, lambda: model(x), steps)
        for name, graph in (("compiled, op by op", False), ("compiled, CUDA Graph", True)):
            compiled = wick.compile(model, freeze=True, cuda_graph=graph)
            rows[name] = ms_per_step(wick, lambda: compiled(x), steps)
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200)
    args = parser.parse_args()
    if not wick.cuda.is_available():
        print("SUMMARY compile: skipped, no CUDA device")
        return
    print(f"device: {wick.cuda.get_device_name()}; torch "
          f"{torch.__version__ if torch is not None else 'not installed'}", flush=True)
    for title, run_wick, run_torch in (
            ("MLP SGD step, batch 64", wick_mlp, torch_mlp),
            ("ResNet-20 inference, batch 64", wick_resnet, None)):
        w = run_wick(args.steps)
        t = run_torch(args.steps) if run_torch is not None and torch is not None else {}
        eager = w["eager"]
        for name, ms in w.items():
            print(f"SUMMARY {title}: wick {name:22} {ms:8.3f} ms  {eager / ms:5.2f}x wick eager",
                  flush=True)
        for name, ms in t.items():
            print(f"SUMMARY {title}: torch {name:21} {ms:8.3f} ms  {eager / ms:5.2f}x wick eager",
                  flush=True)


if __name__ == "__main__":
    main()
