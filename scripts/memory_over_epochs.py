"""Trains the MNIST MLP (784 -> 256 -> 10, Adam) for 20 epochs on a few hundred of the committed
digits (assets/mnist) and records the process's resident memory (RSS) after every epoch: a
functional check that training leaks nothing - no growing autograd graph, cached tensors,
optimizer state or loader buffers. Used by tests/python/test_flat_memory.py, which asserts the
growth after the warm-up epochs stays under a small bound; rerun by hand to redraw the chart:

    WICK_BUILD_DIR=build-cpu /usr/bin/python3 scripts/memory_over_epochs.py \
        --svg docs/memory_over_epochs.svg

Prints one JSON object: {"rss_mib": [...per epoch...], "loss": [...], "digits": N}.
"""

import argparse
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_BUILD = os.path.join(ROOT, os.environ.get("WICK_BUILD_DIR", "build"), "python")
if os.path.isdir(os.path.join(_BUILD, "wick")):
    sys.path[:0] = [os.path.join(ROOT, "python"), _BUILD]

import wick  # noqa: E402
import wick.nn.functional as F  # noqa: E402
from wick import datasets, nn  # noqa: E402
from wick.utils.data import DataLoader, Subset  # noqa: E402


def rss_mib():
    # /proc/self/statm's second field: resident pages. (ru_maxrss is a peak and cannot fall.)
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.flatten = nn.Flatten()
        self.fc1 = nn.Linear(784, 256)
        self.fc2 = nn.Linear(256, 10)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(self.flatten(x))))


def train(epochs, digits, keep_batches=False):
    wick.manual_seed(0)
    data = Subset(datasets.MNIST(os.path.join(ROOT, "assets", "mnist"), train=True),
                  range(digits))
    loader = DataLoader(data, batch_size=32, shuffle=True)
    model = MLP()
    optimizer = wick.optim.Adam(model.parameters(), lr=1e-3)
    rss, losses, kept = [], [], []
    for _ in range(epochs):
        total = 0.0
        for x, y in loader:
            loss = F.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.item()
            if keep_batches:
                kept.append(x)
        losses.append(total / len(loader))
        rss.append(rss_mib())
    return rss, losses


def svg(rss, warmup, path):
    """A line chart of RSS over epochs, the warm-up epochs shaded."""
    w, h, left, right, top, bottom = 640, 320, 64, 16, 36, 44
    lo, hi = min(rss), max(rss)
    pad = max(1.0, (hi - lo) * 0.2)
    lo, hi = lo - pad, hi + pad
    n = len(rss)
    x = lambda i: left + (w - left - right) * i / max(1, n - 1)
    y = lambda v: top + (h - top - bottom) * (hi - v) / (hi - lo)
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
           'font-family="sans-serif" font-size="12">' % (w, h),
           '<rect width="100%" height="100%" fill="white"/>',
           '<text x="%d" y="20" font-size="14">Resident memory over %d epochs (MNIST MLP, '
           'Adam): flat after warm-up</text>' % (left, n),
           '<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="#eee"/>'
           % (x(0), top, x(warmup - 1) - x(0), h - top - bottom),
           '<text x="%.1f" y="%d" fill="#888">warm-up</text>' % (x(0) + 4, top + 14)]
    for k in range(5):
        v = lo + (hi - lo) * k / 4
        out.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#ddd"/>'
                   % (left, w - right, y(v), y(v)))
        out.append('<text x="%d" y="%.1f" text-anchor="end">%.1f</text>' % (left - 6, y(v) + 4, v))
    for i in range(n):
        if i % 2 == 0 or i == n - 1:
            out.append('<text x="%.1f" y="%d" text-anchor="middle">%d</text>'
                       % (x(i), h - bottom + 16, i + 1))
    out.append('<text x="%d" y="%d" text-anchor="middle">epoch</text>' % (w // 2, h - 8))
    out.append('<text x="14" y="%d" transform="rotate(-90 14 %d)" text-anchor="middle">RSS (MiB)'
               '</text>' % (h // 2, h // 2))
    points = " ".join("%.1f,%.1f" % (x(i), y(v)) for i, v in enumerate(rss))
    out.append('<polyline points="%s" fill="none" stroke="#1f77b4" stroke-width="2"/>' % points)
    for i, v in enumerate(rss):
        out.append('<circle cx="%.1f" cy="%.1f" r="3" fill="#1f77b4"/>' % (x(i), y(v)))
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--digits", type=int, default=512)
    parser.add_argument("--warmup", type=int, default=5)
    # A deliberate leak, as a cache that never evicts would make: the test runs it to show that
    # the check notices one.
    parser.add_argument("--keep-batches", action="store_true",
                        help="keep every input batch (a deliberate leak of ~100 KB a step)")
    parser.add_argument("--svg", help="write the chart here")
    args = parser.parse_args()
    rss, losses = train(args.epochs, args.digits, args.keep_batches)
    if args.svg:
        svg(rss, args.warmup, args.svg)
    print(json.dumps({"rss_mib": rss, "loss": losses, "digits": args.digits}))


if __name__ == "__main__":
    main()
