"""Higher-order gradients on the GPU against PyTorch's: a gradient penalty through convolution,
batch norm and pooling, whose backward runs the CUDA backward kernels recorded as ops
(Note [convolution's double backward]), with cuDNN on and off; and per-example gradients with
wick.func.vmap(grad) against torch.func. Skipped without a GPU for both frameworks."""

import numpy as np
import pytest

import wick
from test_gpu_vs_torch import close, cudnn, pair, randn, torch  # noqa: F401  (cudnn: fixture)

_why = None
if not wick.cuda.is_available():
    _why = "needs a CUDA device for wick"
elif not torch.cuda.is_available():
    _why = "needs PyTorch with CUDA (torch %s has none)" % torch.__version__
pytestmark = pytest.mark.skipif(_why is not None, reason=_why or "")


def critic(m, weights):
    nn = m.nn
    net = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.GELU(),
                        nn.MaxPool2d(2), nn.Conv2d(8, 4, 3), nn.SiLU(), nn.AvgPool2d(4),
                        nn.Flatten(), nn.Linear(4, 1)).to("cuda").double()
    with (torch.no_grad() if m is torch else wick.no_grad()):
        for p, w in zip(net.parameters(), weights):
            p.copy_(m.tensor(w).to("cuda"))
    return net


def test_gradient_penalty_matches_pytorch(cudnn):  # noqa: F811
    rng = np.random.default_rng(0)
    shapes = [(8, 3, 3, 3), (8,), (8,), (8,), (4, 8, 3, 3), (4,), (1, 4), (1,)]
    weights = [rng.standard_normal(s) * 0.3 for s in shapes]
    x = rng.standard_normal((4, 3, 12, 12))
    grads = []
    for m in (wick, torch):
        net = critic(m, weights)
        inputs = m.tensor(x).to("cuda").requires_grad_(True)
        (g,) = m.autograd.grad(net(inputs).sum(), inputs, create_graph=True)
        ((g.reshape(4, -1).norm(dim=1) - 1) ** 2).mean().backward()
        grads.append([p.grad for p in net.parameters()])
    for w, t in zip(*grads):
        assert (w is None) == (t is None)
        if w is not None:
            close(w, t, "float64", scale=100)


def test_per_example_gradients_match_torch_func():
    func = getattr(torch, "func", None)
    if func is None:
        pytest.skip("torch.func needs PyTorch 2")
    w_np, xs_np, ys_np = randn(5), randn(16, 5, seed=1), randn(16, seed=2)
    results = []
    for m, f in ((wick, wick.func), (torch, func)):
        def loss(w, x, y, m=m):
            return (m.tanh((x * w).sum()) - y) ** 2
        w, xs, ys = (m.tensor(a).to("cuda") for a in (w_np, xs_np, ys_np))
        results.append(f.vmap(f.grad(loss), in_dims=(None, 0, 0))(w, xs, ys))
    close(results[0], results[1])
