#!/usr/bin/env python3
"""One training trace under every allocator policy: a few steps of train_mnist's CNN on the sim
device (memory from the caching allocator over a simulated device), recorded with
wick.memory.start_trace, then replayed under caching, no_caching, bfc and bfc_growth on a
simulated 80 GiB device. Prints the policies side by side and draws reserved against allocated
memory over the trace, one panel per policy:

    WICK_BUILD_DIR=build /usr/bin/python3 scripts/allocator_policies.py \\
        --svg docs/allocator_policies.svg [--snapshot runs/mnist_snapshot.json]

--snapshot also writes the memory history of the same steps (wick.memory._dump_snapshot), for
tools/memory_viewer.py."""

import argparse
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_BUILD = os.path.join(ROOT, os.environ.get("WICK_BUILD_DIR", "build"), "python")
if os.path.isdir(os.path.join(_BUILD, "wick")):
    sys.path[:0] = [os.path.join(ROOT, "python"), _BUILD]
sys.path.insert(0, os.path.join(ROOT, "examples"))

import wick  # noqa: E402
import wick.nn.functional as F  # noqa: E402
from wick import datasets, memory, transforms  # noqa: E402
from wick.utils.data import DataLoader  # noqa: E402
from train_mnist import CNN  # noqa: E402

POLICIES = ("caching", "no_caching", "bfc", "bfc_growth")


def record(trace, steps, batch_size, snapshot=None):
    """Trains `steps` steps on sim with every allocation written to `trace`."""
    wick.manual_seed(0)
    wick.backends.fallback.set_mode("silent")  # convolution and pooling fall back, by design
    digits = datasets.MNIST(os.path.join(ROOT, "assets", "mnist"), train=True,
                            transform=transforms.Normalize((0.1307,), (0.3081,)))
    loader = DataLoader(digits, batch_size=batch_size, shuffle=True)
    memory.start_trace(trace, device="sim")
    if snapshot:
        memory._record_memory_history("all", device="sim")
    try:
        model = CNN().to("sim")
        optimizer = wick.optim.Adam(model.parameters(), lr=1e-3)
        for step, (images, labels) in enumerate(loader):
            if step == steps:
                break
            loss = F.cross_entropy(model(images.to("sim")), labels.to("sim"))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            print(f"step {step + 1}/{steps}: loss {loss.item():.4f}")
        del model, optimizer, loss, images, labels
        if snapshot:
            memory._dump_snapshot(snapshot, device="sim")
    finally:
        memory.stop_trace(device="sim")
        if snapshot:
            memory._record_memory_history(None, device="sim")


def fmt(b):
    for unit in ("B", "KiB", "MiB", "GiB"):
        if b < 1024 or unit == "GiB":
            return f"{b:.0f} {unit}" if unit == "B" else f"{b:.1f} {unit}"
        b /= 1024


def svg(timelines, results):
    """Four panels: reserved (area) and allocated (line) over the trace's events."""
    w, h, pad, gap = 440, 200, 64, 16
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{2 * w + gap}" '
           f'height="{2 * (h + 44) + 30}" font-family="sans-serif" font-size="11">',
           '<rect width="100%" height="100%" fill="white"/>',
           f'<text x="8" y="18" font-size="14">Reserved and allocated memory of one MNIST CNN '
           f'trace, per allocator policy (each panel its own scale)</text>']
    for i, (tl, r) in enumerate(zip(timelines, results)):
        x0, y0 = (i % 2) * (w + gap), 30 + (i // 2) * (h + 44)
        ymax = max(1, max(tl["reserved"]), max(tl["allocated"]))
        n = max(1, len(tl["allocated"]) - 1)
        X = lambda k: x0 + pad + (w - pad - 8) * k / n  # noqa: E731
        Y = lambda v: y0 + 24 + (h - 30) * (1 - v / ymax)  # noqa: E731
        out.append(f'<text x="{x0 + 8}" y="{y0 + 14}"><tspan font-size="12" font-weight="bold">'
                   f'{r["policy"]}</tspan>  peak reserved {fmt(r["peak_reserved"])}, allocated '
                   f'{fmt(r["peak_allocated"])}; {r["device_mallocs"]} device mallocs</text>')
        for t in range(5):
            y = Y(ymax * t / 4)
            out.append(f'<line x1="{x0 + pad}" x2="{x0 + w - 8}" y1="{y:.1f}" y2="{y:.1f}" '
                       f'stroke="#e5e5e5"/><text x="{x0 + pad - 4}" y="{y + 4:.1f}" '
                       f'text-anchor="end" fill="#555">{fmt(ymax * t / 4)}</text>')
        res = " ".join(f"{X(k):.1f},{Y(v):.1f}" for k, v in enumerate(tl["reserved"]))
        out.append(f'<polygon points="{X(0):.1f},{Y(0):.1f} {res} {X(n):.1f},{Y(0):.1f}" '
                   f'fill="#9ecae1" opacity="0.7"/>')
        alloc = " ".join(f"{X(k):.1f},{Y(v):.1f}" for k, v in enumerate(tl["allocated"]))
        out.append(f'<polyline points="{alloc}" fill="none" stroke="#08519c" stroke-width="1.2"/>')
    y = 2 * (h + 44) + 22
    out.append(f'<rect x="8" y="{y - 9}" width="12" height="10" fill="#9ecae1"/>'
               f'<text x="24" y="{y}">reserved (held from the device)</text>'
               f'<line x1="230" x2="250" y1="{y - 4}" y2="{y - 4}" stroke="#08519c" '
               f'stroke-width="2"/><text x="256" y="{y}">allocated (handed to tensors); '
               f'x: the trace\'s allocations and frees, in order</text></svg>')
    return "\n".join(out) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--trace", default=os.path.join(ROOT, "runs", "mnist_cnn_trace.jsonl"))
    parser.add_argument("--svg", help="write the chart here (docs/allocator_policies.svg)")
    parser.add_argument("--snapshot", help="also write the memory snapshot of the steps here")
    args = parser.parse_args()
    if args.steps < 1 or args.batch_size < 1:
        parser.error(f"--steps and --batch-size must be positive; got {args.steps}, "
                     f"{args.batch_size}")
    os.makedirs(os.path.dirname(os.path.abspath(args.trace)), exist_ok=True)
    record(args.trace, args.steps, args.batch_size, args.snapshot)
    events = memory.read_trace(args.trace)
    results = memory.compare(events, POLICIES)
    print(f"\n{len(events)} events from {args.steps} training steps of the MNIST CNN "
          f"(batch {args.batch_size}), replayed on a simulated 80 GiB device:\n")
    print(memory.format_replay_table(results), end="")
    if args.svg:
        timelines = [memory.timeline(events, p, points=600) for p in POLICIES]
        with open(args.svg, "w") as f:
            f.write(svg(timelines, results))
        print(f"chart: {args.svg}")


if __name__ == "__main__":
    main()
