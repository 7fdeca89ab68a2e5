"""ResNets on the CPU, wick against PyTorch, side by side in one run: ResNet-20 training (CIFAR
layout, batch 64, 3x32x32, SGD with momentum and weight decay) in samples/s, and ResNet-18
inference latency (batch 1 and 8, 3x224x224, eval mode, no grad) in ms, each at 1 and 2 threads,
with each process's peak resident memory.

    WICK_BUILD_DIR=build /usr/bin/python3 benchmarks/resnet_vs_pytorch.py [--steps N] [--rounds R] [--only b1]

Every case runs in a fresh process, so the peak memory is that case's alone. With --rounds R
each case runs R times, the frameworks taking turns (wick, each PyTorch, wick, ...), so that a
slow spell of a shared machine falls on all of them; the table gives the median over the rounds
and each reference's ratio per round follows it. The references are
Debian's PyTorch 1.13 (OpenBLAS told this processor's kernel, printed) and, when
`scripts/setup.sh --bench` has installed it, a current PyTorch 2.x in .venv-bench. PyTorch runs
the same networks: wick.models' source executed with `wick` and `nn` bound to torch and torch.nn
(its ResNet-18 is torchvision's, layer for layer)."""

import argparse
import ast
import json
import os
import resource
import subprocess
import sys
import time

import bench_common
from bench_common import current_torch_python, median_ms, openblas_corename

MODELS_SOURCE = os.path.join(bench_common.ROOT, "python", "wick", "models", "resnet.py")
CASES = ("train resnet20 b64", "infer resnet18 b1", "infer resnet18 b8")


def framework(name):
    if name == "wick":
        import wick
        return wick
    import torch
    return torch


def model(m, name):
    """wick.models.<name>, or the same source run with wick's names bound to torch's. ResNet-18
    is torchvision's architecture and parameter names (tests/python/test_models.py holds the two
    to the same logits), and building it this way needs no torchvision: Debian's is built for
    PyTorch 1.13 and aborts when a PyTorch 2.x imports it."""
    if m.__name__ == "wick":
        import wick.models
        return getattr(wick.models, name)()
    tree = ast.parse(open(MODELS_SOURCE).read())
    body = [n for n in tree.body if not isinstance(n, (ast.Import, ast.ImportFrom))]
    namespace = {"wick": m, "nn": m.nn}
    exec(compile(ast.Module(body=body, type_ignores=[]), MODELS_SOURCE, "exec"), namespace)
    return namespace[name]()


def run_case(m, case, steps):
    """(median ms per step, samples per step) for one case in framework m."""
    m.manual_seed(0)
    if case.startswith("train"):
        net = model(m, "resnet20")
        net.train()
        optimizer = m.optim.SGD(net.parameters(), lr=0.1, momentum=0.9, weight_decay=5e-4)
        x, y = m.randn(64, 3, 32, 32), m.randint(0, 10, (64,))

        def step():
            loss = m.nn.functional.cross_entropy(net(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        return median_ms(step, steps), 64
    batch = int(case.rsplit("b", 1)[1])
    net = model(m, "resnet18").eval()
    x = m.randn(batch, 3, 224, 224)

    def infer():
        with m.no_grad():
            net(x)
    return median_ms(infer, steps), batch


def child(args):
    m = framework(args.framework)
    m.set_num_threads(args.threads)
    start_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    ms, samples = run_case(m, args.case, args.steps)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"ms": ms, "samples": samples, "peak_mib": peak,
                      "growth_mib": peak - start_rss, "version": m.__version__}))


def measure(python, name, case, threads, steps):
    command = [python, os.path.abspath(__file__), "--child", "--framework", name, "--case", case,
               "--threads", str(threads), "--steps", str(steps)]
    done = subprocess.run(command, capture_output=True, text=True, env=os.environ)
    if done.returncode != 0:
        tail = done.stderr.strip().splitlines()[-1:] or ["no output"]
        return {"error": tail[0]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def median_round(figures):
    """One case's rounds as one: the median time (the upper middle of an even count) and the
    largest peak memory; the first error if any round failed."""
    errors = [f for f in figures if "error" in f]
    if errors:
        return errors[0]
    times = sorted(f["ms"] for f in figures)
    return dict(figures[0], ms=times[len(times) // 2],
                peak_mib=max(f["peak_mib"] for f in figures))


def cell(result, case):
    """The case's figure and its process's peak RSS."""
    if "error" in result:
        return "failed"
    if case.startswith("train"):
        figure = f"{result['samples'] / result['ms'] * 1e3:.1f}/s"
    else:
        figure = f"{result['ms']:.1f} ms"
    return f"{figure} ({result['peak_mib']:.0f} MiB)"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=6, help="timed steps per case (median)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--framework", default="wick", help=argparse.SUPPRESS)
    parser.add_argument("--case", default=CASES[0], help=argparse.SUPPRESS)
    parser.add_argument("--rounds", type=int, default=1,
                        help="times each case runs, the frameworks taking turns (median)")
    parser.add_argument("--only", default="",
                        help="run only the cases whose name contains this, e.g. 'b1'")
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    if args.child:
        return child(args)
    bench_common.use_openblas_kernel()
    references = [("torch", sys.executable)]
    newer = current_torch_python()
    if newer:
        references.append(("torch", newer))
    else:
        print("PyTorch 2.x: not installed (bash scripts/setup.sh --bench adds it)")
    print(f"OpenBLAS core {openblas_corename()} (OPENBLAS_CORETYPE="
          f"{os.environ.get('OPENBLAS_CORETYPE')}); median of {args.steps} steps per case; "
          "training: samples/s (higher is better), inference: ms per batch (lower is better); "
          "peak RSS of each case's process in MiB")
    runs = [("wick", sys.executable)] + references
    cases = [case for case in CASES if args.only in case]
    if not cases:
        parser.error(f"--only {args.only!r} matches none of {', '.join(CASES)}")
    started = time.perf_counter()
    for threads in (1, 2):
        rounds = {}  # (case, index into runs) -> each round's figures
        for _ in range(args.rounds):
            for case in cases:
                for i, (name, python) in enumerate(runs):
                    rounds.setdefault((case, i), []).append(
                        measure(python, name, case, threads, args.steps))
        results = {key: median_round(figures) for key, figures in rounds.items()}
        versions = {i: "?" for i in range(len(runs))}  # from any case that ran
        for (_, i), r in results.items():
            versions[i] = r.get("version", versions[i])
        labels = ["wick"] + [f"torch {versions[i]}" for i in range(1, len(runs))]
        print(f"\n{threads} thread(s)")
        print(f"{'case':<20}" + "".join(f"{label[:20]:>22}" for label in labels)
              + "".join(f"{'wick / ' + label[6:12]:>16}" for label in labels[1:]))
        for case in cases:
            row = [results[(case, i)] for i in range(len(runs))]
            line = f"{case:<20}" + "".join(f"{cell(r, case):>22}" for r in row)
            for r in row[1:]:  # the same work per step: time ratio = speed ratio
                ok = "error" not in r and "error" not in row[0]
                line += f"{r['ms'] / row[0]['ms']:>15.2f}x" if ok else f"{'-':>16}"
            print(line)
        if args.rounds > 1:
            for i in range(1, len(runs)):
                print(f"  wick / {labels[i][6:12]} per round: " + "; ".join(
                    f"{case.split()[0]} {case.split()[-1]} " + " ".join(
                        f"{ref['ms'] / own['ms']:.2f}" for own, ref in
                        zip(rounds[(case, 0)], rounds[(case, i)])
                        if "error" not in own and "error" not in ref)
                    for case in cases))
        for (case, i), r in results.items():
            if "error" in r:
                print(f"  {case}, {runs[i][0]} under {runs[i][1]}: {r['error']}")
    print(f"\nsummary: {len(cases)} case(s) x 2 thread counts x {len(runs)} frameworks x "
          f"{args.rounds} round(s) in "
          f"{time.perf_counter() - started:.0f} s; a ratio above 1 means wick is faster")


if __name__ == "__main__":
    main()
