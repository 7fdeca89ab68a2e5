"""Per-rank memory and speed of DDP, ZeRO-1, ZeRO-2 and FSDP (ZeRO-3) at 2, 3 and 4 ranks, for the
MNIST CNN and ResNet-20, side by side in one run, with a picture of the model state per rank
(docs/sharded_memory.svg).

    WICK_BUILD_DIR=build python3 benchmarks/sharded_memory.py [--ranks 2 3 4] [--steps 3] [--svg docs/sharded_memory.svg]

It launches itself under mpirun once per world size (one thread per rank). Per rank it reports
the bytes of parameters, gradients and Adam's state held between steps (counted tensor by tensor)
and the working memory of a step: the CPU allocator's peak during forward, backward and the update
minus what was allocated before it (activations, gathered parameters, flattened gradients,
communication buffers). Samples/s are the global batch over the slowest rank's step time; with
more ranks than the machine's cores they measure oversubscription as much as the strategies.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import bench_common  # noqa: E402,F401  the source tree on sys.path
STRATEGIES = ["DDP", "ZeRO-1", "ZeRO-2", "FSDP"]
MiB = 1 << 20


# ---- one rank -----------------------------------------------------------------------------------

def build(model_name, strategy):
    import wick
    import wick.nn as nn
    from wick.distributed.fsdp import FullyShardedDataParallel as FSDP
    from wick.distributed.fsdp import ShardingStrategy
    from wick.distributed.fsdp.wrap import ModuleWrapPolicy
    from wick.distributed.optim import ZeroRedundancyOptimizer
    from wick.models import resnet20
    from wick.models.resnet import BasicBlock
    from wick.nn.parallel import DistributedDataParallel as DDP

    sys.path.insert(0, os.path.join(ROOT, "examples"))
    from train_mnist import CNN

    wick.manual_seed(0)
    if model_name == "CNN":
        net, units = CNN(), {nn.Linear, nn.Conv2d}
    else:
        net, units = resnet20(), {BasicBlock}
    if strategy in ("DDP", "ZeRO-1"):
        model = DDP(net)
        params = list(model.parameters())
        if strategy == "DDP":
            return model, wick.optim.Adam(params, lr=1e-3)
        return model, ZeroRedundancyOptimizer(params, optimizer_class=wick.optim.Adam, lr=1e-3)
    sharding = ShardingStrategy.SHARD_GRAD_OP if strategy == "ZeRO-2" else \
        ShardingStrategy.FULL_SHARD
    model = FSDP(net, sharding_strategy=sharding, auto_wrap_policy=ModuleWrapPolicy(units),
                 forward_prefetch=True)
    return model, wick.optim.Adam(model.parameters(), lr=1e-3)


def tensor_bytes(tensors):
    return sum(t.numel() * t.element_size() for t in tensors if t is not None)


def optimizer_state_bytes(optimizer):
    import wick

    return sum(tensor_bytes([v]) for s in optimizer.state.values() for v in s.values()
               if isinstance(v, wick.Tensor) and v.dim() > 0)


def measure(model_name, strategy, steps, per_rank):
    import wick
    import wick.distributed as dist
    import wick.nn.functional as F
    from wick import memory

    model, optimizer = build(model_name, strategy)
    shape = (per_rank, 1, 28, 28) if model_name == "CNN" else (per_rank, 3, 32, 32)
    wick.manual_seed(1 + dist.get_rank())
    x, y = wick.randn(*shape), wick.randint(0, 10, (per_rank,))

    def step():
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

    step()  # optimizer state exists from here on
    before = memory.cpu_memory_stats()["allocated_bytes"]
    memory.cpu_reset_peak_memory_stats()
    step()
    working = memory.cpu_memory_stats()["peak_allocated_bytes"] - before
    params = list(model.parameters())
    result = {"params": tensor_bytes(params), "grads": tensor_bytes([p.grad for p in params]),
              "optimizer": optimizer_state_bytes(optimizer), "working": working}
    dist.barrier()
    start = time.perf_counter()
    for _ in range(steps):
        step()
    elapsed = wick.tensor([time.perf_counter() - start])
    dist.all_reduce(elapsed, op=dist.ReduceOp.MAX)
    result["samples_per_s"] = steps * per_rank * dist.get_world_size() / float(elapsed)
    return result


def worker(args):
    import wick
    import wick.distributed as dist

    wick.set_num_threads(1)
    dist.init_process_group("mpi", timeout=300)
    results = []
    for model_name, per_rank in (("CNN", 32), ("ResNet-20", 16)):
        for strategy in STRATEGIES:
            r = measure(model_name, strategy, args.steps, per_rank)
            rows = [None] * dist.get_world_size()
            packed = wick.tensor([float(r[k]) for k in ("params", "grads", "optimizer",
                                                        "working")])
            gathered = wick.zeros(4 * dist.get_world_size())
            dist.all_gather_into_tensor(gathered, packed)
            rows = gathered.reshape(-1, 4).tolist()
            results.append({"model": model_name, "strategy": strategy,
                            "ranks": dist.get_world_size(), "per_rank": rows,
                            "samples_per_s": r["samples_per_s"], "batch_per_rank": per_rank})
    if dist.get_rank() == 0:
        with open(args.out, "w") as f:
            json.dump(results, f)
    dist.destroy_process_group()


# ---- the driver ---------------------------------------------------------------------------------

def launch(ranks, steps):
    out = tempfile.NamedTemporaryFile(suffix=".json", delete=False).name
    env = dict(os.environ, OMP_NUM_THREADS="1", OMPI_MCA_rmaps_base_oversubscribe="1",
               OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    command = ["mpirun", "-np", str(ranks), sys.executable, os.path.abspath(__file__),
               "--worker", "--out", out, "--steps", str(steps)]
    print(f"running: {' '.join(command[:3])} ... ({ranks} ranks)", flush=True)
    subprocess.run(command, check=True, env=env)
    with open(out) as f:
        results = json.load(f)
    os.unlink(out)
    return results


def table(results):
    lines = [f"{'model':<10} {'ranks':>5} {'strategy':<8} {'params':>8} {'grads':>8} "
             f"{'Adam':>8} {'model state':>11} {'vs DDP':>7} {'working':>8} {'samples/s':>10}",
             f"{'':<10} {'':>5} {'':<8} {'MiB/rank (largest rank)':>35}"]
    ddp = {}
    for r in results:
        worst = [max(row[i] for row in r["per_rank"]) / MiB for i in range(4)]
        state = sum(worst[:3])
        key = (r["model"], r["ranks"])
        if r["strategy"] == "DDP":
            ddp[key] = state
        ratio = state / ddp[key] if key in ddp else float("nan")
        r["worst"], r["state"], r["ratio"] = worst, state, ratio
        lines.append(f"{r['model']:<10} {r['ranks']:>5} {r['strategy']:<8} {worst[0]:>8.2f} "
                     f"{worst[1]:>8.2f} {worst[2]:>8.2f} {state:>11.2f} {ratio:>6.2f}x "
                     f"{worst[3]:>8.2f} {r['samples_per_s']:>10.1f}")
    return "\n".join(lines)


def write_svg(path, results):
    """Stacked bars of the model state each rank keeps between steps (the largest rank)."""
    from xml.sax.saxutils import escape

    colors = ["#1f77b4", "#ff7f0e", "#2ca02c"]
    names = ["parameters", "gradients", "Adam state"]
    models = sorted({r["model"] for r in results}, key=lambda m: m != "CNN")
    bar, gap, left, top, height = 18, 12, 40, 60, 240
    groups = [[r for r in results if r["model"] == m] for m in models]
    width = max(left + sum(len(g) * (bar + 4) + 5 * gap for g in groups) + 20, 760)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{top + height + 100}"'
           ' font-family="sans-serif" font-size="11">', '<rect width="100%" height="100%" '
           'fill="white"/>', f'<text x="{left}" y="22" font-size="14">Model state per rank '
           'between steps (MiB, largest rank), Adam</text>', f'<text x="{left}" y="40" fill="#555">'
           'DDP, ZeRO-1, ZeRO-2, FSDP at 2, 3 and 4 ranks; the working memory of a step is in '
           'the table</text>']
    x = left
    for model, group in zip(models, groups):
        peak = max(r["state"] for r in group)
        out.append(f'<text x="{x}" y="{top - 4}" font-size="12">{escape(model)} '
                   f'(bar height {peak:.1f} MiB = DDP)</text>')
        for r in group:
            y = top + height
            for value, color in zip(r["worst"][:3], colors):
                h = value / peak * height
                y -= h
                out.append(f'<rect x="{x}" y="{y:.1f}" width="{bar}" height="{h:.1f}" '
                           f'fill="{color}"/>')
            label = f"{r['strategy']} {r['ranks']}"
            out.append(f'<text transform="translate({x + 12},{top + height + 6}) rotate(60)">'
                       f'{escape(label)}</text>')
            x += bar + 4
            if r["strategy"] == "FSDP":
                x += gap
        x += 2 * gap
    for i, (name, color) in enumerate(zip(names, colors)):
        out.append(f'<rect x="{left + i * 140}" y="{top + height + 80}" width="10" height="10" '
                   f'fill="{color}"/><text x="{left + i * 140 + 14}" y="{top + height + 89}">'
                   f'{escape(name)}</text>')
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ranks", type=int, nargs="+", default=[2, 3, 4])
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--svg", default=None, help="write the stacked-bar picture here")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        return worker(args)
    results = []
    for ranks in args.ranks:
        results += launch(ranks, args.steps)
    results.sort(key=lambda r: (r["model"] != "CNN", r["ranks"], STRATEGIES.index(r["strategy"])))
    print(table(results))
    if args.svg:
        write_svg(args.svg, results)
        print(f"chart: {args.svg}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
