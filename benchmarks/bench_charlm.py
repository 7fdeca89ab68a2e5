"""The character-level language model of examples/train_charlm.py, trained in wick and in PyTorch
on the same batches: tokens per second for the Transformer and the LSTM, side by side in one run.

    /usr/bin/python3 benchmarks/bench_charlm.py [--steps 20] [--threads 2]

PyTorch runs the example's own model classes: their source is executed with `wick`, `nn` and `F`
bound to torch, torch.nn and torch.nn.functional (the example is written so that this works), so
both frameworks train exactly the same architecture. The reference is Debian's PyTorch 1.13,
whose BLAS is OpenBLAS with this processor's kernel selected (printed below)."""

import argparse
import ast
import os

import bench_common  # noqa: E402  the source tree on sys.path
from bench_common import median_ms, openblas_corename  # noqa: E402

bench_common.use_openblas_kernel()

import numpy as np  # noqa: E402
import torch  # noqa: E402

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


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=20, help="timed steps per case")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--context", type=int, default=64)
    parser.add_argument("--d-model", type=int, default=96)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--layers", type=int, default=2)
    args = parser.parse_args()
    wick.set_num_threads(args.threads)
    torch.set_num_threads(args.threads)
    print(f"PyTorch {torch.__version__} (OpenBLAS core {openblas_corename()}, "
          f"OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE')}), {args.threads} threads; "
          f"batch {args.batch_size} x {args.context} characters, d_model {args.d_model}, "
          f"{args.layers} layers; median of {args.steps} training steps")
    vocab = 84  # the Devil's Dictionary's character set
    rng = np.random.default_rng(0)
    data = [rng.integers(0, vocab, (args.batch_size, args.context + 1)) for _ in range(8)]
    tokens = args.batch_size * args.context
    print(f"{'model':<13}{'wick ms/step':>14}{'torch ms/step':>15}{'wick tok/s':>12}"
          f"{'torch tok/s':>13}{'wick/torch':>12}")
    for kind in ("transformer", "lstm"):
        times = {}
        for name, m in (("wick", wick), ("torch", torch)):
            batches = [(m.tensor(d[:, :-1]), m.tensor(d[:, 1:])) for d in data]
            model = make(m, kind, vocab, args)
            times[name] = median_ms(step_fn(m, model, batches, vocab), args.steps)
        w, t = times["wick"], times["torch"]
        print(f"{kind:<13}{w:>14.1f}{t:>15.1f}{tokens / w * 1e3:>12.0f}{tokens / t * 1e3:>13.0f}"
              f"{t / w:>11.2f}x")


if __name__ == "__main__":
    main()
