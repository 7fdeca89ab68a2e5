"""Operator fallback, measured: an op on the sim device without its kernel (inputs copied to the
host, the CPU kernel, results copied back) against the same op once the device has a kernel,
with the copies' share of the time - the seeds' "tf.where 10 ms -> 200 ms" on a machine
without an accelerator. A CNN training step on sim shows the same for a whole model.

    /usr/bin/python3 benchmarks/bench_fallback.py [--repeats 20]

sim's memory is host memory, so its "copies" cost a memcpy each way; on a GPU each is a PCIe or
NVLink transfer plus a synchronisation, and the share is larger still."""

import argparse

from bench_common import median_ms  # noqa: E402  (also puts the source tree on sys.path)

import wick  # noqa: E402
import wick.nn as nn  # noqa: E402
import wick.nn.functional as F  # noqa: E402
from wick.backends import fallback, sim  # noqa: E402


def op_table(repeats):
    print(f"{'op':<26}{'size':>12}{'fallback ms':>14}{'kernel ms':>12}{'slowdown':>10}"
          f"{'copy share':>12}")
    cases = [
        ("where", lambda x: wick.where(x > 0, x, -x)),
        ("softmax", lambda x: wick.softmax(x, 1)),
        ("scatter_add", lambda x: wick.zeros(x.shape[0], x.shape[1], device="sim").scatter_add(
            0, wick.zeros(x.shape, dtype=wick.int64, device="sim"), x)),
    ]
    for name, fn in cases:
        for n in (256, 2048):
            x = wick.randn(n, n).to("sim")
            fallback.reset()
            slow = median_ms(lambda: fn(x), repeats)
            calls, copy_s, kernel_s = fallback.stats()[name]
            share = copy_s / (copy_s + kernel_s)
            sim.add_kernel(name)
            try:
                fast = median_ms(lambda: fn(x), repeats)
            finally:
                sim.remove_kernel(name)
            print(f"{name:<26}{f'{n}x{n}':>12}{slow:>14.3f}{fast:>12.3f}{slow / fast:>9.1f}x"
                  f"{100 * share:>11.0f}%")


def cnn_step(repeats):
    wick.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
                          nn.MaxPool2d(2), nn.Flatten(), nn.Linear(16 * 14 * 14, 10)).to("sim")
    opt = wick.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x, y = wick.randn(64, 1, 28, 28).to("sim"), wick.randint(0, 10, (64,)).to("sim")

    def step():
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()

    fallback.reset()
    ms = median_ms(step, repeats)
    stats = fallback.stats()
    copy_s = sum(s[1] for s in stats.values())
    kernel_s = sum(s[2] for s in stats.values())
    steps = repeats + 1
    print(f"\nMNIST CNN training step on sim (batch 64): {ms:.2f} ms; per step, "
          f"{sum(s[0] for s in stats.values()) / steps:.0f} fallbacks "
          f"({', '.join(sorted(stats))}), copies {1e3 * copy_s / steps:.2f} ms "
          f"({100 * copy_s / (copy_s + kernel_s):.0f}% of the fallbacks' time)")
    model_cpu = nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
                              nn.MaxPool2d(2), nn.Flatten(), nn.Linear(16 * 14 * 14, 10))
    opt_cpu = wick.optim.SGD(model_cpu.parameters(), lr=0.01, momentum=0.9)
    xc, yc = x.cpu(), y.cpu()

    def step_cpu():
        opt_cpu.zero_grad()
        F.cross_entropy(model_cpu(xc), yc).backward()
        opt_cpu.step()

    print(f"the same step on the CPU device: {median_ms(step_cpu, repeats):.2f} ms")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=20)
    args = ap.parse_args()
    fallback.set_mode("silent")
    print(f"wick {wick.__version__}, {wick.get_num_threads()} threads; sim ops with kernels: "
          f"{len(sim.ops_with_kernels())}, falling back: {len(fallback.missing_kernels('sim'))}\n")
    op_table(args.repeats)
    cnn_step(args.repeats)


if __name__ == "__main__":
    main()
