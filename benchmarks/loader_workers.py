"""DataLoader workers on a transform written in Python: samples per second with no workers, with
worker threads (the default) and with worker processes (multiprocessing_context="fork"), side by
side in one run.

    .venv/bin/python benchmarks/loader_workers.py [--samples 1024] [--workers 2] [--repeats 3]
                                                  [--batch-size 32] [--passes 3]

Each sample is a 28 x 28 image blurred --passes times with a 3 x 3 box filter by a pixel-by-pixel
Python loop (a few milliseconds of pure Python holding the GIL), then turned into a wick tensor
and batched by default_collate. Threads take turns on the GIL, so they cannot beat one process
here; worker processes each have their own interpreter and should approach num_workers times
faster. Every configuration must deliver the same batches (checked), and each epoch includes
starting and stopping its workers, as a non-persistent DataLoader does."""

import argparse
import os
import statistics
import sys
import time

import bench_common  # noqa: F401  the source tree on sys.path

import wick  # noqa: E402
from wick.utils.data import DataLoader, Dataset  # noqa: E402

SIDE = 28


class BlurredDigits(Dataset):
    """Synthetic 28 x 28 images, each box-blurred in pure Python when fetched."""

    def __init__(self, n, passes):
        self.n, self.passes = n, passes

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        image = [[((x * 7 + y * 13 + i * 31) % 256) / 255.0 for x in range(SIDE)]
                 for y in range(SIDE)]
        for _ in range(self.passes):
            image = box_blur(image)
        return wick.tensor([image]), i % 10


def box_blur(image):
    out = []
    for y in range(SIDE):
        row = []
        for x in range(SIDE):
            total, count = 0.0, 0
            for dy in (-1, 0, 1):
                for dx in (-1, 0, 1):
                    yy, xx = y + dy, x + dx
                    if 0 <= yy < SIDE and 0 <= xx < SIDE:
                        total += image[yy][xx]
                        count += 1
            row.append(total / count)
        out.append(row)
    return out


def epoch(loader):
    """(seconds, checksum) of one pass over the loader."""
    start = time.perf_counter()
    checksum = 0.0
    for images, labels in loader:
        checksum += images.sum().item() + labels.sum().item()
    return time.perf_counter() - start, round(checksum, 3)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=1024)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--passes", type=int, default=3, help="blur passes per sample")
    args = parser.parse_args()
    if min(args.samples, args.batch_size, args.workers, args.repeats, args.passes) < 1:
        parser.error("--samples, --batch-size, --workers, --repeats and --passes must be positive")

    dataset = BlurredDigits(args.samples, args.passes)
    start = time.perf_counter()
    for i in range(20):
        dataset[i]
    per_sample_ms = (time.perf_counter() - start) / 20 * 1e3
    print(f"loader_workers: {args.samples} samples of {SIDE}x{SIDE}, batch {args.batch_size}, "
          f"{per_sample_ms:.2f} ms of Python per sample, {os.cpu_count()} cores, "
          f"Python {sys.version.split()[0]}, median of {args.repeats} epochs", flush=True)
    configs = [
        ("num_workers=0", 0, {}),
        ("threads", args.workers, {}),
        ("processes (fork)", args.workers, {"multiprocessing_context": "fork"}),
    ]
    rows = []
    for name, workers, extra in configs:
        loader = DataLoader(dataset, batch_size=args.batch_size, num_workers=workers, **extra)
        times, checksums = [], set()
        for r in range(args.repeats):
            seconds, checksum = epoch(loader)
            times.append(seconds)
            checksums.add(checksum)
            print(f"  {name:<17} x{workers}  epoch {r + 1}/{args.repeats}: {seconds:6.2f} s "
                  f"({args.samples / seconds:7.1f} samples/s)", flush=True)
        rows.append((name, workers, args.samples / statistics.median(times), checksums))

    if len({c for *_, checksums in rows for c in checksums}) != 1:
        sys.exit(f"loader_workers: the configurations delivered different batches: {rows}")
    base = rows[0][2]
    print()
    print(f"{'configuration':<18} {'workers':>7} {'samples/s':>10} {'vs 0 workers':>13}")
    for name, workers, rate, _ in rows:
        print(f"{name:<18} {workers:>7} {rate:>10.1f} {rate / base:>12.2f}x")
    print(f"processes/threads at {args.workers} workers: {rows[2][2] / rows[1][2]:.2f}x "
          f"(same batches in every configuration)")


if __name__ == "__main__":
    main()
