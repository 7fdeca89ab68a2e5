#!/usr/bin/env python3
"""The loader timeline on a real pipeline: MNIST digits as PNG files (ImageFolder, decoded by
libpng in the C++ loader's worker threads) feeding the CNN of examples/train_mnist.py, with 0 and
then 2 workers. Prints where the time went for each and draws the 2-worker epoch.

    python3 scripts/loader_timeline_demo.py [--batches 12] [--svg docs/loader_timeline.svg]
"""

import argparse
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.environ.get("WICK_BUILD_DIR", os.path.join(ROOT, "build"))
sys.path[:0] = [os.path.join(ROOT, "python"), os.path.join(BUILD, "python"),
                os.path.join(ROOT, "examples")]

import wick  # noqa: E402
from wick.utils.data import DataLoader, LoaderTimeline, loader_span  # noqa: E402

from train_mnist import CNN  # noqa: E402


def epoch(dataset, workers, batches, model, optimizer):
    timeline = LoaderTimeline()
    loader = DataLoader(dataset, batch_size=64, shuffle=True, num_workers=workers,
                        timeline=timeline)
    for number, (images, labels) in enumerate(loader):
        if number == batches:
            break
        with loader_span("train step"):
            loss = wick.nn.functional.cross_entropy(model(images), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    return timeline


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batches", type=int, default=12, help="batches of 64 per run")
    parser.add_argument("--svg", default=None, help="draw the 2-worker run here")
    args = parser.parse_args()
    if args.batches < 1:
        parser.error(f"--batches must be >= 1; got {args.batches}")
    wick.manual_seed(0)
    model = CNN()
    optimizer = wick.optim.Adam(model.parameters(), lr=1e-3)
    with tempfile.TemporaryDirectory() as folder:
        subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "write_digit_formats.py"),
                        folder, "--train", "--count", str(64 * args.batches)], check=True)
        dataset = wick.datasets.ImageFolder(os.path.join(folder, "png"), mode="L")
        epoch(dataset, 2, 2, model, optimizer)  # warm-up: first-call allocations
        for workers in (0, 2):
            timeline = epoch(dataset, workers, args.batches, model, optimizer)
            events = timeline.events()
            wall = (max(e[4] for e in events) - min(e[3] for e in events)) / 1000
            idle = sum(e[4] - e[3] for e in events if e[2] == 0 and e[0] in ("wait", "build batch"))
            print(f"{workers} workers: {wall:.0f} ms for {args.batches} batches, the training loop "
                  f"idle {idle / 1000 / wall:.0%}\n  {timeline.summary()}")
            if workers == 2 and args.svg:
                timeline.write_svg(args.svg, f"PNG digits through ImageFolder, 2 worker threads, "
                                             f"the MNIST CNN's training steps")
                print(f"timeline: {args.svg}")


if __name__ == "__main__":
    main()
