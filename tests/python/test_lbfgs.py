"""L-BFGS against PyTorch 1.13: the same iterates (to 1e-6) on a small least-squares problem and
on the Rosenbrock function, with fixed steps and with the strong-Wolfe line search, over several
step() calls (so the curvature history carries over), plus its argument checks."""

import numpy as np
import pytest

import wick
from reference import needs_torch, torch

pytestmark = needs_torch


def least_squares(lib, x):
    rng = np.random.default_rng(0)
    a = lib.tensor(rng.standard_normal((8, 3)), dtype=lib.float64)
    b = lib.tensor(rng.standard_normal(8), dtype=lib.float64)
    r = a.matmul(x) - b
    return (r * r).sum()


def rosenbrock(lib, x):
    return (1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2


def run(lib, loss_fn, start, steps, **kwargs):
    x = lib.tensor(np.array(start), dtype=lib.float64, requires_grad=True)
    opt = lib.optim.LBFGS([x], **kwargs)
    calls = [0]

    def closure():
        opt.zero_grad()
        loss = loss_fn(lib, x)
        loss.backward()
        calls[0] += 1
        return loss

    iterates, losses = [], []
    for _ in range(steps):
        losses.append(float(opt.step(closure)))
        iterates.append(x.detach().numpy().copy())
    return np.array(iterates), np.array(losses), calls[0]


@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"])
@pytest.mark.parametrize("problem,start,kwargs", [
    (least_squares, [0.0, 0.0, 0.0], dict(max_iter=4)),
    (least_squares, [1.0, -2.0, 0.5], dict(lr=0.5, history_size=2)),
    (rosenbrock, [-1.5, 2.0], dict(max_iter=10)),
    (rosenbrock, [0.0, 0.0], dict(lr=0.2, max_iter=5, history_size=3)),
])
def test_iterates_match_torch(problem, start, kwargs, line_search_fn):
    steps = 6
    iw, lw, cw = run(wick, problem, start, steps, line_search_fn=line_search_fn, **kwargs)
    it, lt, ct = run(torch, problem, start, steps, line_search_fn=line_search_fn, **kwargs)
    np.testing.assert_allclose(iw, it, atol=1e-6, rtol=1e-6)
    np.testing.assert_allclose(lw, lt, atol=1e-6, rtol=1e-6)
    assert cw == ct  # the same number of closure calls: the same stopping decisions


def test_solves_least_squares():
    iw, lw, _ = run(wick, least_squares, [0.0, 0.0, 0.0], 10, line_search_fn="strong_wolfe",
                    tolerance_change=1e-14)
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((8, 3)), rng.standard_normal(8)
    np.testing.assert_allclose(iw[-1], np.linalg.lstsq(a, b, rcond=None)[0], atol=1e-6)


def test_bad_arguments():
    x = wick.zeros(2, requires_grad=True)
    y = wick.zeros(2, requires_grad=True)
    with pytest.raises(ValueError, match="doesn't support per-parameter options"):
        wick.optim.LBFGS([{"params": [x]}, {"params": [y]}])
    opt = wick.optim.LBFGS([x])
    with pytest.raises(ValueError, match="doesn't support per-parameter options"):
        opt.add_param_group({"params": [y]})
    with pytest.raises(RuntimeError, match="only 'strong_wolfe' is supported"):
        wick.optim.LBFGS([x], line_search_fn="backtracking")
    with pytest.raises(ValueError, match="Invalid learning rate: -1"):
        wick.optim.LBFGS([x], lr=-1)
    with pytest.raises(ValueError, match="history_size must be an integer >= 1"):
        wick.optim.LBFGS([x], history_size=0)
    with pytest.raises(TypeError):
        opt.step()  # a closure is required, as in PyTorch
