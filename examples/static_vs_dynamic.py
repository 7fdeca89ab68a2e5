"""The same model eager and compiled (wick.compile), side by side: per step, the kernels
launched, the dispatcher calls, the peak memory and the time - for the MNIST MLP
(overhead-bound), the classic CNN and ResNet-20, in inference and for a training step (SGD, or
Adam). The C++ twin is examples/static_vs_dynamic.cpp (SGD).

    /usr/bin/python3 examples/static_vs_dynamic.py [--batch 64] [--steps 20]
        [--models mlp,cnn,resnet20] [--mode inference,training,sim] [--optimizer sgd|adam]

Eager runs the model from Python: every op goes through its binding, its front function
(checks, promotion, allocation), the dispatcher and, in training, autograd. Compiled replays the
traced, optimised graph from C++: for inference with frozen parameters (constant folding,
conv + batch-norm folding, elementwise fusion, one planned arena); for training the whole step -
forward, the backward kernels the engine ran, the optimizer's update - as one graph. The eager peak is
what the host allocator (malloc with counters) saw during a step beyond what was allocated
before it; the compiled peak is the arena, planned before the step runs, plus what the host
allocator saw during the step (the outputs). Mode sim compares the plan with PyTorch's caching
allocator policy, on wick's simulated device. docs/static_graphs.md explains each figure.
"""

import argparse
import os
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_BUILD = os.path.join(ROOT, os.environ.get("WICK_BUILD_DIR", "build"), "python")
if os.path.isdir(os.path.join(_BUILD, "wick")):  # run from a source tree after scripts/build.sh
    sys.path[:0] = [os.path.join(ROOT, "python"), _BUILD]
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import wick  # noqa: E402
import wick.nn.functional as F  # noqa: E402
from train_mnist import CNN, MLP  # noqa: E402
from wick.models.resnet import resnet20  # noqa: E402

MODELS = {
    "mlp": (MLP, (1, 28, 28)),
    "cnn": (CNN, (1, 28, 28)),
    "resnet20": (resnet20, (3, 32, 32)),
}


def timed(step, x, steps):
    """Median seconds per step over `steps` calls, after two warm-up calls."""
    for _ in range(2):
        step(x)
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        step(x)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def peak_during(step, x, prepare=None):
    """Bytes the host allocator had live beyond its level before one call, at the most."""
    if prepare is not None:
        prepare()
    before, _ = wick.jit._jit.host_memory()
    wick.jit._jit.reset_host_peak()
    out = step(x)
    _, peak = wick.jit._jit.host_memory()
    del out
    return peak - before


def dispatches(step, x):
    with wick.jit.DispatchCounter() as counter:
        step(x)
    return counter.count


def largest_relative_difference(a, b):
    a, b = a.flatten().tolist(), b.flatten().tolist()
    scale = max(abs(v) for v in b) or 1.0
    return max(abs(p - q) for p, q in zip(a, b)) / scale


def report(title, rows, unfused_kernels, diff):
    print(f"\n{title}")
    print(f"  {'':10s}{'kernels':>9s}{'dispatcher':>12s}{'peak MiB':>10s}{'ms/step':>10s}"
          f"{'steps/s':>10s}")
    for mode, kernels, calls, peak, seconds in rows:
        print(f"  {mode:10s}{kernels:9d}{calls:12d}{peak / 2**20:10.2f}{seconds * 1e3:10.2f}"
              f"{1 / seconds:10.1f}")
    print(f"  speed-up {rows[0][4] / rows[1][4]:.2f}x; kernels before fusion and folding "
          f"{unfused_kernels}, after {rows[1][1]}; planned peak {rows[1][3] / 2**20:.2f} MiB vs "
          f"eager's {rows[0][3] / 2**20:.2f} MiB; largest difference {diff:.1e} of the scale")


def inference(name, batch, steps):
    make, shape = MODELS[name]
    wick.manual_seed(0)
    model = make().eval()
    x = wick.randn(batch, *shape)

    def eager(inp):
        with wick.no_grad():
            return model(inp)

    compiled = wick.compile(model, freeze=True)
    unfused = wick.compile(model, freeze=True, fuse=False, fold_conv_bn=False)
    with wick.no_grad():  # inference is traced without grad mode
        compiled(x)
        unfused(x)
    eager_kernels = dispatches(eager, x)
    rows = [
        ("eager", eager_kernels, eager_kernels, peak_during(eager, x), timed(eager, x, steps)),
        ("compiled", compiled.kernels_per_run, dispatches(compiled, x),
         compiled.memory_plan["arena_bytes"] + peak_during(compiled, x), timed(compiled, x, steps)),
    ]
    report(f"{name}, batch {batch}, inference ({steps} timed steps, median)", rows,
           unfused.kernels_per_run, largest_relative_difference(compiled(x), eager(x)))


def caching_allocator(batch):
    """ResNet-20 inference on the sim device, whose memory comes from the caching allocator over a
    simulated device (PyTorch's CUDA policy, run on the host): eager's dynamic peak there against
    the planned arena. The ops sim has no kernel for run through the CPU fallback, in eager and
    in the replay alike."""
    wick.manual_seed(0)
    model = resnet20().eval().to("sim")
    x = wick.randn(batch, 3, 32, 32).to("sim")
    base = wick.backends.sim.memory_stats()["allocated_bytes.all.current"]
    with wick.backends.fallback.fallback_mode("silent"), wick.no_grad():
        want = model(x)
        stats = wick.backends.sim.memory_stats()
        compiled = wick.compile(model, freeze=True)
        compiled(x)
        got = compiled(x)
    eager_peak = stats["allocated_bytes.all.peak"] - base
    plan = compiled.memory_plan
    print(f"\nresnet20, batch {batch}, inference on the sim device (the caching allocator)")
    print(f"  eager: allocated peak {eager_peak / 2**20:.2f} MiB beyond the parameters and input, "
          f"reserved {stats['reserved_bytes.all.peak'] / 2**20:.2f} MiB")
    print(f"  compiled: planned arena {plan['arena_bytes'] / 2**20:.2f} MiB + outputs "
          f"{plan['output_bytes'] / 2**20:.2f} MiB (live-peak bound "
          f"{plan['live_peak_bytes'] / 2**20:.2f} MiB); largest difference "
          f"{largest_relative_difference(got.to('cpu'), want.to('cpu')):.1e} of the scale")


OPTIMIZERS = {
    "sgd": ("SGD", lambda params: wick.optim.SGD(params, lr=0.01, momentum=0.9)),
    "adam": ("Adam", lambda params: wick.optim.Adam(params, lr=1e-3)),
}


def training(name, batch, steps, optimizer="sgd"):
    """One training step (forward, cross-entropy, backward, the optimizer's update) eager and
    compiled, on two copies of the model started from one seed and given the same batches, so
    their parameters must end equal."""
    title, make_optimizer = OPTIMIZERS[optimizer]
    make, shape = MODELS[name]
    wick.manual_seed(1)
    x, y = wick.randn(batch, *shape), wick.randint(0, 10, (batch,))

    def make_step():
        wick.manual_seed(0)
        model = make()
        opt = make_optimizer(model.parameters())

        def step(inputs, targets):
            opt.zero_grad()
            loss = F.cross_entropy(model(inputs), targets)
            loss.backward()
            opt.step()
            return loss
        return model, step, opt

    eager_model, eager_raw, eager_opt = make_step()
    jit_model, jit_raw, _ = make_step()
    compiled_step = wick.compile(jit_raw, warmup=1)  # the first step creates the optimizer state

    def eager(batch):
        return eager_raw(*batch)

    def compiled(batch):
        return compiled_step(*batch)

    def measure(step, prepare=None):
        # Each side makes the same calls from the same generator state: the warm-up step and
        # (compiled) the traced one, one counted, one measured, the timed ones. Their dropout
        # masks are then the same, and so must their parameters be.
        wick.manual_seed(7)
        step((x, y))
        step((x, y))
        calls = dispatches(step, (x, y))
        peak = peak_during(step, (x, y), prepare)
        return calls, peak, timed(step, (x, y), steps)

    eager_calls, eager_peak, eager_seconds = measure(eager, eager_opt.zero_grad)
    compiled_calls, compiled_peak, compiled_seconds = measure(compiled)
    rows = [
        # The last step's gradients are freed first: they are no part of this step's peak.
        ("eager", eager_calls, eager_calls, eager_peak, eager_seconds),
        ("compiled", compiled_step.kernels_per_run, compiled_calls,
         compiled_step.memory_plan["arena_bytes"] + compiled_peak, compiled_seconds),
    ]
    traced = int(compiled_step.log.split("traced: ")[1].split(" kernels")[0])
    diff = max(largest_relative_difference(p, q)
               for p, q in zip(jit_model.parameters(), eager_model.parameters()))
    report(f"{name}, batch {batch}, {title} training step ({steps} timed steps, median)", rows,
           traced, diff)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--models", default="mlp,cnn,resnet20")
    parser.add_argument("--mode", default="inference,training,sim")
    parser.add_argument("--optimizer", default="sgd", choices=sorted(OPTIMIZERS),
                        help="the training step's optimizer")
    args = parser.parse_args()
    for mode in args.mode.split(","):
        if mode not in ("inference", "training", "sim"):
            parser.error(f"unknown mode '{mode}' (inference, training or sim)")
        if mode == "sim":
            caching_allocator(args.batch)
            continue
        for name in args.models.split(","):
            if name not in MODELS:
                parser.error(f"unknown model '{name}' (choose from {', '.join(MODELS)})")
            if mode == "inference":
                inference(name, args.batch, args.steps)
            else:
                training(name, args.batch, args.steps, args.optimizer)


if __name__ == "__main__":
    main()
