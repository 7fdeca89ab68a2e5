"""GPU benchmarks of wick beside PyTorch on the same device, for tests/gpu/run.sh's summary.

Each figure is measured the same way for both libraries (CUDA events around a timed loop after a
warm-up, or wall time with a synchronize for the training loops) and printed as a SUMMARY line
with the ratio wick / PyTorch:
- GEMM fp32, TF32 and bf16 (TFLOP/s) against torch.matmul (cuBLAS);
- 3x3 convolution forward + backward (TFLOP/s) against torch (cuDNN);
- softmax, average pooling and batch norm with wick.backends.cudnn.enabled on and off;
- cached allocation + free from Python (us) against PyTorch's caching allocator;
- MNIST CNN training images/s, fp32 and bf16 autocast, against PyTorch eager.

    WICK_BUILD_DIR=build-gpu python3 tests/gpu/bench_vs_torch.py [--quick]
"""

import argparse
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("WICK_BUILD_DIR", os.path.join(ROOT, "build"))
if not os.path.isabs(BUILD):
    BUILD = os.path.join(ROOT, BUILD)
sys.path[:0] = [os.path.join(ROOT, "python"), os.path.join(BUILD, "python")]

try:
    import torch  # before wick: Note [torch before wick] in tests/gpu/python/conftest.py
except ImportError:
    torch = None

import wick  # noqa: E402


def timed_ms(lib, fn, iters):
    """Median-free simple timing: CUDA events around `iters` calls after two warm-ups."""
    for _ in range(2):
        fn()
    lib.cuda.synchronize()
    start, stop = lib.cuda.Event(enable_timing=True), lib.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(iters):
        fn()
    stop.record()
    stop.synchronize()
    return start.elapsed_time(stop) / iters


def report(name, unit, w, t, higher_is_better=True):
    ratio = (w / t if higher_is_better else t / w) if t and w else float("nan")
    print(f"SUMMARY {name:38} wick {w:10.2f} {unit:8} torch {t:10.2f} {unit:8} ratio {ratio:5.2f}",
          flush=True)


def flags(tf32):
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.allow_tf32 = tf32
    wick.backends.cuda.matmul.allow_tf32 = tf32
    wick.backends.cudnn.allow_tf32 = tf32


def gemm(n, dtype_name, tf32, iters):
    flags(tf32)
    results = []
    for lib in (wick, torch):
        dtype = getattr(lib, dtype_name)
        a = lib.randn(n, n, device="cuda").to(dtype)
        b = lib.randn(n, n, device="cuda").to(dtype)
        ms = timed_ms(lib, lambda: a @ b, iters)
        results.append(2 * n ** 3 / ms / 1e9)
    label = "tf32" if tf32 else dtype_name
    report(f"gemm {label} n={n}", "TFLOP/s", *results)
    flags(False)


def conv(batch, iters):
    flags(True)
    results = []
    for lib in (wick, torch):
        x = lib.randn(batch, 64, 56, 56, device="cuda", requires_grad=True)
        w = lib.randn(64, 64, 3, 3, device="cuda", requires_grad=True)
        g = lib.randn(batch, 64, 56, 56, device="cuda")

        def step():
            y = lib.nn.functional.conv2d(x, w, None, 1, 1)
            y.backward(g)

        ms = timed_ms(lib, step, iters)
        results.append(3 * 2 * batch * 64 * 64 * 9 * 56 * 56 / ms / 1e9)
    report(f"conv3x3 64ch 56x56 n={batch} fwd+bwd tf32", "TFLOP/s", *results)
    flags(False)


def cudnn_layers(iters):
    """softmax, avg_pool2d and batch_norm forward + backward: wick with cuDNN on and off."""
    cases = {
        "softmax 4096x1000": lambda lib, x: lib.nn.functional.softmax(x, 1),
        "avg_pool2d 3x3 s2": lambda lib, x: lib.nn.functional.avg_pool2d(x, 3, 2, 1),
        "batch_norm train": lambda lib, x: lib.nn.functional.batch_norm(
            x, None, None, None, None, True, 0.1, 1e-5),
    }
    for name, op in cases.items():
        shape = (4096, 1000) if name.startswith("softmax") else (64, 64, 56, 56)
        times = {}
        for label, lib, enabled in (("cudnn", wick, True), ("handwritten", wick, False),
                                    ("torch", torch, True)):
            if lib is wick:
                wick.backends.cudnn.enabled = enabled
            x = lib.randn(*shape, device="cuda", requires_grad=True)

            def step():
                op(lib, x).sum().backward()

            times[label] = timed_ms(lib, step, iters)
        wick.backends.cudnn.enabled = True
        report(f"{name} fwd+bwd, cuDNN on", "ms", times["cudnn"], times["torch"], False)
        report(f"{name} fwd+bwd, cuDNN off", "ms", times["handwritten"], times["torch"], False)


def alloc_free(iters):
    results = []
    for lib in (wick, torch):
        lib.empty(1 << 20, device="cuda")  # the block is cached from here on
        lib.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(iters):
            x = lib.empty(1 << 20, device="cuda")
            del x
        results.append((time.perf_counter() - start) / iters * 1e6)
    report("cached alloc+free 4 MiB from Python", "us", *results, higher_is_better=False)


def mnist_cnn(batches, amp_dtype):
    results = []
    for lib in (wick, torch):
        nn, F = lib.nn, lib.nn.functional

        class CNN(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv1, self.conv2 = nn.Conv2d(1, 32, 3), nn.Conv2d(32, 64, 3)
                self.fc1, self.fc2 = nn.Linear(9216, 128), nn.Linear(128, 10)

            def forward(self, x):
                x = F.max_pool2d(F.relu(self.conv2(F.relu(self.conv1(x)))), 2).flatten(1)
                return self.fc2(F.relu(self.fc1(x)))

        model = CNN().to("cuda")
        optimizer = lib.optim.Adam(model.parameters(), lr=1e-3)
        images = lib.randn(64, 1, 28, 28, device="cuda")
        labels = lib.randint(0, 10, (64,), device="cuda")

        def step():
            with lib.autocast("cuda", dtype=getattr(lib, amp_dtype), enabled=amp_dtype != "float32"):
                loss = F.cross_entropy(model(images), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

        for _ in range(5):
            step()
        lib.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(batches):
            step()
        lib.cuda.synchronize()
        results.append(batches * 64 / (time.perf_counter() - start))
    label = "fp32" if amp_dtype == "float32" else f"autocast {amp_dtype}"
    report(f"mnist cnn training {label}", "img/s", *results)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    if torch is None or not torch.cuda.is_available() or not wick.cuda.is_available():
        print("bench_vs_torch: needs a GPU visible to both wick and PyTorch with CUDA; skipped")
        return
    print(f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}, "
          f"cuDNN {torch.backends.cudnn.version()} (torch) / {wick.backends.cudnn.version()} (wick)")
    n, iters = (4096, 10) if args.quick else (8192, 20)
    benchmarks = [
        lambda: gemm(n, "float32", False, iters), lambda: gemm(n, "float32", True, iters),
        lambda: gemm(n, "bfloat16", False, iters), lambda: conv(32, 5 if args.quick else 20),
        lambda: cudnn_layers(5 if args.quick else 20), lambda: alloc_free(2000 if args.quick else 20000),
        lambda: mnist_cnn(50 if args.quick else 200, "float32"),
        lambda: mnist_cnn(50 if args.quick else 200, "bfloat16"),
    ]
    failed = 0
    for bench in benchmarks:
        try:
            bench()
        except Exception as e:  # one failing benchmark must not hide the others
            failed += 1
            print(f"SUMMARY FAILED: {type(e).__name__}: {str(e).splitlines()[0][:150]}", flush=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
