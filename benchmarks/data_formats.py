#!/usr/bin/env python3
"""Loading the same MNIST digits from five storage formats, side by side in one run: samples/s
and CPU-seconds per sample for PNG files, JPEG files, a TFRecord shard, an LMDB store and the IDX
files held in memory, with 0, 1 and 2 workers of the C++ loader (threads), and the Python loader
with 2 threads against 2 processes (the same dataset wrapped in a Python Dataset, so each example
crosses the Python layer as a PyTorch dataset's would).

    python3 benchmarks/data_formats.py [--count N] [--svg docs/data_formats.svg]

The digits are written first by scripts/write_digit_formats.py into a temporary folder. Each
configuration reads one epoch (batch 64) twice and keeps the faster; CPU time is this process's
and its children's (worker processes) user + system time over that epoch.
"""

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from xml.sax.saxutils import escape

import bench_common  # noqa: F401  (puts the source tree on sys.path)

import wick
from wick import records
from wick.utils.data import DataLoader, Dataset


class PythonSide(Dataset):
    """A C++ dataset behind Python's __getitem__: the Python loader serves it."""

    def __init__(self, inner):
        self.inner = inner

    def __len__(self):
        return len(self.inner)

    def __getitem__(self, i):
        return self.inner[i]


def cpu_seconds():
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def one_epoch(make_loader):
    best = None
    for _ in range(2):
        loader = make_loader()
        cpu, start = cpu_seconds(), time.perf_counter()
        samples = sum(x.shape[0] for x, _ in loader)
        wall, used = time.perf_counter() - start, cpu_seconds() - cpu
        del loader  # worker processes are reaped here, so their CPU time is counted next time
        if best is None or wall < best[0]:
            best = (wall, used, samples)
    wall, used, samples = best
    return samples / wall, used / samples * 1e6


def datasets(folder, count):
    mnist = wick.datasets.MNIST(train=True)
    if count < len(mnist):
        mnist = wick.utils.data.Subset(mnist, range(count))
    shape = (1, 28, 28)
    return {
        "IDX in memory": mnist,
        "TFRecord": records.TFRecordImageDataset(os.path.join(folder, "digits.tfrecord"), shape),
        "LMDB": records.LMDBImageDataset(os.path.join(folder, "digits.lmdb"), shape),
        "PNG files": wick.datasets.ImageFolder(os.path.join(folder, "png"), mode="L"),
        "JPEG files": wick.datasets.ImageFolder(os.path.join(folder, "jpeg"), mode="L"),
    }


CONFIGS = [("C++ loader, 0 workers", dict(num_workers=0), False),
           ("C++ loader, 1 thread", dict(num_workers=1), False),
           ("C++ loader, 2 threads", dict(num_workers=2), False),
           ("Python loader, 2 threads", dict(num_workers=2), True),
           ("Python loader, 2 processes", dict(num_workers=2, multiprocessing_context="fork"), True)]


def write_svg(path, results, formats):
    """Grouped horizontal bars: samples/s per format, one bar per configuration."""
    colors = ["#9ecae1", "#6baed6", "#2171b5", "#fdae6b", "#d94801"]
    bar, gap, left, width = 11, 14, 130, 760
    top = 50
    height = top + len(formats) * (len(CONFIGS) * bar + gap) + 30 + 18 * len(CONFIGS)
    peak = max(v[0] for v in results.values())
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'font-family="sans-serif" font-size="11">', f'<rect width="{width}" height="{height}" fill="white"/>',
           '<text x="10" y="22" font-size="14">MNIST digits per second by storage format and loader '
           '(2-core VM, batch 64)</text>']
    y = top
    for fmt in formats:
        out.append(f'<text x="10" y="{y + len(CONFIGS) * bar / 2 + 4}">{escape(fmt)}</text>')
        for c, (name, _, _) in enumerate(CONFIGS):
            rate = results[(fmt, name)][0]
            w = (width - left - 90) * rate / peak
            out.append(f'<rect x="{left}" y="{y}" width="{w:.1f}" height="{bar - 2}" fill="{colors[c]}"/>')
            out.append(f'<text x="{left + w + 4:.1f}" y="{y + bar - 3}">{rate:,.0f}</text>')
            y += bar
        y += gap
    for c, (name, _, _) in enumerate(CONFIGS):
        out.append(f'<rect x="{left}" y="{y + 18 * c}" width="12" height="10" fill="{colors[c]}"/>')
        out.append(f'<text x="{left + 18}" y="{y + 18 * c + 9}">{escape(name)}</text>')
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=8000,
                        help="training digits per epoch (default: all 8000; fewer puts the IDX "
                             "set behind a Python Subset, so it leaves the C++ loader)")
    parser.add_argument("--svg", default=None, help="write a bar chart here")
    args = parser.parse_args()
    if not 64 <= args.count <= 8000:
        parser.error(f"--count must be 64-8000 (the committed training digits); got {args.count}")
    with tempfile.TemporaryDirectory() as folder:
        subprocess.run([sys.executable, os.path.join(bench_common.ROOT, "scripts", "write_digit_formats.py"),
                        folder, "--train", "--count", str(args.count)], check=True)
        sets = datasets(folder, args.count)
        sizes = {"TFRecord": os.path.getsize(os.path.join(folder, "digits.tfrecord")),
                 "LMDB": os.path.getsize(os.path.join(folder, "digits.lmdb"))}
        for sub, name in (("png", "PNG files"), ("jpeg", "JPEG files")):
            sizes[name] = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in
                              os.walk(os.path.join(folder, sub)) for f in fs)
        results = {}
        print(f"{args.count} digits per epoch, batch 64, {os.cpu_count()} cores; best of 2 epochs")
        for fmt, dataset in sets.items():
            for name, options, python_side in CONFIGS:
                ds = PythonSide(dataset) if python_side else dataset
                results[(fmt, name)] = one_epoch(lambda: DataLoader(ds, batch_size=64, **options))
                rate, cpu = results[(fmt, name)]
                print(f"  {fmt:14s} {name:27s} {rate:9,.0f} samples/s {cpu:8.1f} CPU-us/sample",
                      flush=True)
    formats = list(sets)
    print("\nsamples/s (CPU-microseconds per sample)")
    print(f"{'format':14s} {'bytes':>9s} " + " ".join(f"{n[:26]:>26s}" for n, _, _ in CONFIGS))
    for fmt in formats:
        size = f"{sizes[fmt] / 1e6:.2f} MB" if fmt in sizes else "-"
        print(f"{fmt:14s} {size:>9s} " + " ".join(
            f"{results[(fmt, n)][0]:>15,.0f} ({results[(fmt, n)][1]:6.1f})" for n, _, _ in CONFIGS))
    if args.svg:
        write_svg(args.svg, results, formats)
        print(f"chart: {args.svg}")


if __name__ == "__main__":
    main()
