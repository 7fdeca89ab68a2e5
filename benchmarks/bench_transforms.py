"""Higher-order gradients and function transforms, timed beside PyTorch on the same work:

- a gradient, a Hessian-vector product (two reverse passes, create_graph=True) and their ratio,
  for an MLP loss (the ratio is the cost of the second pass: about 2-4x in any framework);
- a full Hessian of a small logistic-regression loss (func.hessian: one vjp per row in wick;
  functorch's vmap batches the rows);
- per-example gradients: vmap(grad(loss)) against a Python loop of grad calls.

    /usr/bin/python3 benchmarks/bench_transforms.py [--repeats 20]

Both frameworks run on one thread. The reference is Debian's PyTorch 1.13 with functorch; its
BLAS is OpenBLAS, whose kernel for this processor is set with OPENBLAS_CORETYPE (printed below)."""

import argparse
import os
import subprocess
import sys

import bench_common  # noqa: E402  the source tree on sys.path
from bench_common import median_ms, openblas_corename  # noqa: E402

bench_common.use_openblas_kernel()

import numpy as np  # noqa: E402
import torch  # noqa: E402
import functorch  # noqa: E402

import wick  # noqa: E402
from wick import func  # noqa: E402


def mlp_case(m, grad_fn, x, y, w1, w2):
    def loss(a, b):
        return m.nn.functional.cross_entropy(m.tanh(x @ a) @ b, y)

    def gradient():
        return grad_fn(loss(w1, w2), (w1, w2))

    def hvp():
        g1, g2 = grad_fn(loss(w1, w2), (w1, w2), create_graph=True)
        return grad_fn((g1 * w1).sum() + (g2 * w2).sum(), (w1, w2))

    return gradient, hvp


def run(repeats):
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((256, 784)).astype(np.float32), rng.integers(0, 10, 256)
    w1 = (rng.standard_normal((784, 64)) * 0.05).astype(np.float32)
    w2 = (rng.standard_normal((64, 10)) * 0.1).astype(np.float32)
    rows = []
    for name, m, grad_fn in (("wick", wick, wick.autograd.grad),
                             ("torch", torch, torch.autograd.grad)):
        t = [m.tensor(a, requires_grad=i >= 2) for i, a in enumerate((x, y, w1, w2))]
        gradient, hvp = mlp_case(m, grad_fn, *t)
        rows.append((name, median_ms(gradient, repeats), median_ms(hvp, repeats)))
    print(f"{'MLP 784-64-10, batch 256':<30}{'gradient ms':>14}{'HVP ms':>10}{'HVP/grad':>10}")
    for name, g, h in rows:
        print(f"  {name:<28}{g:>14.2f}{h:>10.2f}{h / g:>10.2f}")

    d = 32
    X, Y = rng.standard_normal((128, d)), (rng.random(128) > 0.5).astype(np.float64)
    w0 = rng.standard_normal(d) * 0.1
    hessians = []
    for name, m, hess in (("wick func.hessian", wick, func.hessian),
                          ("functorch.hessian", torch, functorch.hessian)):
        Xm, Ym = m.tensor(X), m.tensor(Y)
        loss = (lambda mm, Xm, Ym: lambda w: mm.nn.functional.binary_cross_entropy_with_logits(
            Xm @ w, Ym))(m, Xm, Ym)
        hessians.append((name, median_ms(lambda: hess(loss)(m.tensor(w0)), max(3, repeats // 4)),
                         hess(loss)(m.tensor(w0)).numpy()))
    np.testing.assert_allclose(hessians[0][2], hessians[1][2], rtol=1e-8, atol=1e-12)
    print(f"{f'Hessian, logistic loss, d={d}':<30}{'ms':>14}   (the two Hessians agree to 1e-8)")
    for name, ms, _ in hessians:
        print(f"  {name:<28}{ms:>14.2f}")

    batch = 64
    xs, ys = rng.standard_normal((batch, 20)), rng.standard_normal(batch)
    wv = rng.standard_normal(20) * 0.3
    print(f"{f'per-example gradients, {batch} examples':<30}{'vmap ms':>14}{'loop ms':>10}"
          f"{'speedup':>10}")
    for name, m, f in (("wick", wick, func), ("torch", torch, functorch)):
        def loss(w, x, y, m=m):
            return (m.tanh((x * w).sum()) - y) ** 2
        W, XS, YS = m.tensor(wv), m.tensor(xs), m.tensor(ys)
        batched = median_ms(lambda: f.vmap(f.grad(loss), in_dims=(None, 0, 0))(W, XS, YS),
                            repeats)
        looped = median_ms(lambda: [f.grad(loss)(W, XS[i], YS[i]) for i in range(batch)],
                           max(3, repeats // 4))
        print(f"  {name:<28}{batched:>14.2f}{looped:>10.2f}{looped / batched:>10.1f}x")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    wick.set_num_threads(1)
    torch.set_num_threads(1)
    load = os.getloadavg()[0]
    print(f"wick {wick.__version__} vs PyTorch {torch.__version__}, 1 thread each; "
          f"OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE')} "
          f"(openblas_get_corename: {openblas_corename()}); load average {load:.1f}")
    cpu = subprocess.run(["sh", "-c", "grep -m1 'model name' /proc/cpuinfo"],
                         capture_output=True, text=True).stdout.split(":")[-1].strip()
    print(f"CPU: {cpu}")
    run(args.repeats)


if __name__ == "__main__":
    main()
