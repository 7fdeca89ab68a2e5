"""Lab 03's graded tests: Linear and the optimizers against wick.nn / wick.optim (PyTorch's
formulas), then the MNIST MLP trained with your code must reach 93% on held-out digits."""

import os

import wick
from labkit import ROOT, figure, impl

L = impl(__file__, "layers_optim")


def test_linear_init_and_shapes():
    wick.manual_seed(0)
    layer = L.Linear(400, 30)
    names = dict(layer.named_parameters())
    assert set(names) == {"weight", "bias"}
    assert tuple(layer.weight.shape) == (30, 400) and tuple(layer.bias.shape) == (30,)
    bound = 1 / 400**0.5
    assert layer.weight.abs().max().item() <= bound
    assert layer.weight.abs().max().item() > 0.9 * bound  # spread over the whole range
    assert abs(layer.weight.mean().item()) < 0.1 * bound


def test_linear_matches_wick():
    ref = wick.nn.Linear(5, 3)
    mine = L.Linear(5, 3)
    with wick.no_grad():
        mine.weight.copy_(ref.weight)
        mine.bias.copy_(ref.bias)
    x = wick.randn(4, 5)
    assert wick.allclose(mine(x), ref(x), atol=1e-6)
    mine(x).sum().backward()
    ref(x).sum().backward()
    assert wick.allclose(mine.weight.grad, ref.weight.grad, atol=1e-5)
    assert wick.allclose(mine.bias.grad, ref.bias.grad, atol=1e-5)


def run_steps(make_opt, make_ref, steps=5):
    wick.manual_seed(1)
    a = wick.nn.Linear(6, 4)
    b = wick.nn.Linear(6, 4)
    b.load_state_dict(a.state_dict())
    opt, ref = make_opt(a.parameters()), make_ref(b.parameters())
    for s in range(steps):
        x = wick.randn(8, 6)
        for model, o in ((a, opt), (b, ref)):
            o.zero_grad()
            (model(x) ** 2).mean().backward()
            o.step()
    for pa, pb in zip(a.parameters(), b.parameters()):
        assert wick.allclose(pa, pb, rtol=1e-5, atol=1e-6), (pa - pb).abs().max().item()


def test_sgd_momentum_matches_wick():
    run_steps(lambda p: L.SGD(p, lr=0.1, momentum=0.9),
              lambda p: wick.optim.SGD(p, lr=0.1, momentum=0.9))


def test_sgd_weight_decay_matches_wick():
    run_steps(lambda p: L.SGD(p, lr=0.05, momentum=0.5, weight_decay=0.01),
              lambda p: wick.optim.SGD(p, lr=0.05, momentum=0.5, weight_decay=0.01))


def test_adam_matches_wick():
    run_steps(lambda p: L.Adam(p, lr=0.01), lambda p: wick.optim.Adam(p, lr=0.01), steps=8)


def test_mnist_mlp_reaches_93_percent():
    accuracy, losses = L.train_mnist(os.path.join(ROOT, "assets", "mnist"), epochs=3, batch_size=32)
    figure("MNIST MLP (784-256-10, Adam, batch 32, 3 epochs): test accuracy", f"{100 * accuracy:.2f}%")
    figure("mean training loss per epoch", ", ".join(f"{v:.4f}" for v in losses))
    assert accuracy >= 0.93
