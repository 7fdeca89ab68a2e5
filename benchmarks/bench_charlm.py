"""The character-level language model of examples/train_charlm.py, trained in wick and in PyTorch
on the same batches: tokens per second for the Transformer and the LSTM, side by side in one run.

    /usr/bin/python3 benchmarks/bench_charlm.py [--steps 20] [--threads 2]

PyTorch runs the example's own model classes: their source is executed with `wick`, `nn` and `F`
bound to torch, torch.nn and torch.nn.functional (the example is written so that this works), so
both frameworks train exactly the same architecture. The references are Debian's PyTorch 1.13,
whose BLAS is OpenBLAS with this processor's kernel selected (printed below), and, when
`scripts/setup.sh --bench` has installed it, a current PyTorch 2.x from PyPI (its own oneDNN and
MKL kernels), timed in a child process under .venv-bench's Python."""

import argparse
import ast
import json
import os
import subprocess
import sys

import bench_common  # noqa: E402  the source tree on sys.path
from bench_common import current_torch_python, median_ms, openblas_corename  # noqa: E402

bench_common.use_openblas_kernel()

import numpy as np  # noqa: E402
import torch  # noqa: E402

if "--torch-only" not in sys.argv:
    import wick  # noqa: E402

EXAMPLE = os.path.join(bench_common.ROOT, "examples", "train_charlm.py")


def model_classes(module, nn_module, functional):
    """TransformerLM and LSTMLM from the example, with its names bound to one framework."""
    tree = ast.parse(open(EXAMPLE).read())
    classes = [node for node in tree.body if isinstance(node, ast.ClassDef)]
    namespace = {"wick": module, "nn": nn_module, "F": functional}
    exec(compile(ast.Module(body=classes, type_ignores=[]), EXAMPLE, "exec"), namespace)
    return namespace["TransformerLM"], namespace["LSTMLM"]


def make(m, kind, vocab, args):
    transformer, lstm = model_classes(m, m.nn, m.nn.functional)
    m.manual_seed(0)
    if kind == "transformer":
        return transformer(vocab, args.context, args.d_model, args.heads, args.layers)
    return lstm(vocab, args.d_model, args.layers)


def step_fn(m, model, batches, vocab):
    optimizer = m.optim.AdamW(model.parameters(), lr=1e-3)
    position = [0]

    def step():
        x, y = batches[position[0] % len(batches)]
        position[0] += 1
        loss = m.nn.functional.cross_entropy(model(x).reshape(-1, vocab), y.reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        return loss
    return step


def batches_for(m, args, vocab):
    rng = np.random.default_rng(0)
    data = [rng.integers(0, vocab, (args.batch_size, args.context + 1)) for _ in range(8)]
    return [(m.tensor(d[:, :-1]), m.tensor(d[:, 1:])) for d in data]


def time_cases(m, args, vocab):
    """ms per training step for each model, in framework m."""
    return {kind: median_ms(step_fn(m, make(m, kind, vocab, args), batches_for(m, args, vocab),
                                    vocab), args.steps)
            for kind in ("transformer", "lstm")}


def torch2_times(argv):
    """The same cases under .venv-bench's current PyTorch, or None when it is not installed."""
    python = current_torch_python()
    if python is None:
        print("PyTorch 2.x: not installed (bash scripts/setup.sh --bench adds it)")
        return None
    done = subprocess.run([python, os.path.abspath(__file__), "--torch-only"] + argv,
                          capture_output=True, text=True)
    if done.returncode != 0:
        print(f"PyTorch 2.x under {python} failed:\n{done.stderr.strip()}")
        return None
    result = json.loads(done.stdout.strip().splitlines()[-1])
    print(f"PyTorch {result['version']} ({python}), {result['threads']} threads")
    return result["ms"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=20, help="timed steps per case")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--context", type=int, default=64)
    parser.add_argument("--d-model", type=int, default=96)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--torch-only", action="store_true",
                        help="(internal) time PyTorch only and print one JSON line")
    args = parser.parse_args()
    vocab = 84  # the Devil's Dictionary's character set
    torch.set_num_threads(args.threads)
    if args.torch_only:
        print(json.dumps({"version": torch.__version__, "threads": torch.get_num_threads(),
                          "ms": time_cases(torch, args, vocab)}))
        return
    wick.set_num_threads(args.threads)
    print(f"PyTorch {torch.__version__} (OpenBLAS core {openblas_corename()}, "
          f"OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE')}), {args.threads} threads; "
          f"batch {args.batch_size} x {args.context} characters, d_model {args.d_model}, "
          f"{args.layers} layers; median of {args.steps} training steps")
    times = {"wick": time_cases(wick, args, vocab), "torch": time_cases(torch, args, vocab)}
    newer = torch2_times([a for a in sys.argv[1:] if a != "--torch-only"])
    tokens = args.batch_size * args.context
    header = f"{'model':<13}{'wick ms/step':>14}{'torch ' + torch.__version__[:4]:>13}"
    header += f"{'torch 2.x':>11}" if newer else ""
    header += f"{'wick tok/s':>12}{'torch tok/s':>13}" + (f"{'2.x tok/s':>11}" if newer else "")
    header += f"{'wick/1.13':>11}" + (f"{'wick/2.x':>10}" if newer else "")
    print(header)
    for kind in ("transformer", "lstm"):
        w, t = times["wick"][kind], times["torch"][kind]
        n = newer[kind] if newer else None
        line = f"{kind:<13}{w:>14.1f}{t:>13.1f}" + (f"{n:>11.1f}" if newer else "")
        line += f"{tokens / w * 1e3:>12.0f}{tokens / t * 1e3:>13.0f}"
        line += f"{tokens / n * 1e3:>11.0f}" if newer else ""
        line += f"{t / w:>10.2f}x" + (f"{n / w:>9.2f}x" if newer else "")
        print(line)


if __name__ == "__main__":
    main()
