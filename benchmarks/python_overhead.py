"""The cost of calling wick from Python, next to PyTorch: a small add, a matmul, and one training
step (forward, backward, Adam) of a tiny MLP, each timed from Python with the same number of
threads in both frameworks. Prints a table with the ratio wick / PyTorch (below 1: wick faster).

    /usr/bin/python3 benchmarks/python_overhead.py [--threads N] [--build build]

It imports wick from python/ and the extension from <build>/python (scripts/build.sh makes
build/ with the extension), or an installed wick.
"""

import argparse
import os
import sys
import timeit

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def import_wick(build):
    folder = os.path.join(ROOT, build, "python")
    if os.path.isdir(os.path.join(folder, "wick")):
        sys.path[:0] = [os.path.join(ROOT, "python"), folder]
    import wick

    return wick


def per_call_us(fn, min_seconds=0.3, repeats=5):
    """The best of `repeats` runs of many calls, in microseconds per call."""
    fn()  # warm up (allocator caches, lazy initialisation)
    number = 1
    while timeit.timeit(fn, number=number) < min_seconds / 10:
        number *= 4
    return min(timeit.repeat(fn, number=number, repeat=repeats)) / number * 1e6


def cases(fw):
    """The three workloads for framework module `fw` (wick or torch)."""
    nn, F = fw.nn, fw.nn.functional
    fw.manual_seed(0)
    a, b = fw.ones(4), fw.ones(4)
    m1, m2 = fw.randn(64, 64), fw.randn(64, 64)

    class TinyMLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(32, 64)
            self.fc2 = nn.Linear(64, 10)

        def forward(self, x):
            return self.fc2(F.relu(self.fc1(x)))

    model = TinyMLP()
    optimizer = fw.optim.Adam(model.parameters(), lr=1e-3)
    x, y = fw.randn(16, 32), fw.randint(0, 10, (16,))

    def step():
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()

    return [
        ("add, 4 floats", lambda: a + b),
        ("matmul 64x64", lambda: m1 @ m2),
        ("tiny MLP step (32-64-10, batch 16, Adam)", step),
    ]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=1,
                        help="threads for both frameworks (default 1: per-call overhead)")
    parser.add_argument("--build", default=os.environ.get("WICK_BUILD_DIR", "build"))
    args = parser.parse_args()
    wick = import_wick(args.build)
    try:
        import torch
    except ImportError:
        torch = None
    wick.set_num_threads(args.threads)
    rows = [(name, per_call_us(fn)) for name, fn in cases(wick)]
    torch_rows = [None] * len(rows)
    if torch is not None:
        torch.set_num_threads(args.threads)
        torch_rows = [per_call_us(fn) for _, fn in cases(torch)]
    version = torch.__version__ if torch is not None else "not installed"
    print(f"Python overhead, {args.threads} thread(s); PyTorch {version}")
    print(f"{'workload':42} {'wick us':>9} {'PyTorch us':>11} {'ratio':>7}")
    for (name, w), t in zip(rows, torch_rows):
        ratio = f"{w / t:6.2f}x" if t else "    -"
        tt = f"{t:11.2f}" if t else f"{'-':>11}"
        print(f"{name:42} {w:9.2f} {tt} {ratio}")


if __name__ == "__main__":
    main()
