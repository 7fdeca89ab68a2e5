"""Lab 12's graded tests: the HVP against wick.func.hessian, PyTorch's hvp and functorch's
forward-over-reverse; the finite-difference HVP's error against eps; WGAN-GP's penalty and its
parameter gradient against PyTorch on the same weights; conjugate gradient against a direct
solve; Newton-CG against a NumPy Newton's optimum and gradient descent's step count; MAML's
meta-gradient against PyTorch and its Hessian term against the HVP."""

import functorch
import numpy as np
import pytest
import torch
import wick
import wick.func
from labkit import figure, impl

L = impl(__file__, "higher_order")
A = np.random.default_rng(12).standard_normal((6, 5))
B = np.random.default_rng(13).standard_normal(6)


def f(m, x):
    """A nonconvex test function of x (5,), written once for wick and PyTorch."""
    z = m.tensor(A).to(x.dtype) @ x + m.tensor(B).to(x.dtype)
    return m.logsumexp(z, dim=0) + (m.sin(x) * x ** 2).sum() + 0.1 * (x ** 4).sum()


def test_hvp_matches_the_hessian_pytorch_and_forward_over_reverse():
    rng = np.random.default_rng(1)
    x, v = rng.standard_normal(5), rng.standard_normal(5)
    got = L.hvp(lambda t: f(wick, t), wick.tensor(x), wick.tensor(v))
    assert not got.requires_grad and tuple(got.shape) == (5,)
    explicit = wick.func.hessian(lambda t: f(wick, t))(wick.tensor(x)).numpy() @ v
    _, torch_hv = torch.autograd.functional.hvp(lambda t: f(torch, t), torch.tensor(x),
                                                torch.tensor(v))
    _, fwd = functorch.jvp(functorch.grad(lambda t: f(torch, t)), (torch.tensor(x),),
                           (torch.tensor(v),))
    for reference in (explicit, torch_hv.numpy(), fwd.numpy()):
        np.testing.assert_allclose(got.numpy(), reference, rtol=1e-10, atol=1e-12)


def test_hvp_is_linear_symmetric_and_works_on_a_weight_matrix():
    rng = np.random.default_rng(2)
    data, w = rng.standard_normal((7, 4)), rng.standard_normal((4, 3))
    u, v = rng.standard_normal((4, 3)), rng.standard_normal((4, 3))

    def loss(m, t):
        return m.nn.functional.log_softmax(m.tanh(m.tensor(data) @ t), dim=1)[:, 0].sum()

    wf = lambda t: loss(wick, t)  # noqa: E731
    hu, hv = (L.hvp(wf, wick.tensor(w), wick.tensor(a)).numpy() for a in (u, v))
    np.testing.assert_allclose(L.hvp(wf, wick.tensor(w), wick.tensor(u + 2 * v)).numpy(),
                               hu + 2 * hv, rtol=1e-10, atol=1e-12)
    assert np.isclose((u * hv).sum(), (v * hu).sum(), rtol=1e-10)  # u.Hv = v.Hu
    _, reference = torch.autograd.functional.hvp(lambda t: loss(torch, t), torch.tensor(w),
                                                 torch.tensor(v))
    np.testing.assert_allclose(hv, reference.numpy(), rtol=1e-10, atol=1e-12)


def test_finite_difference_hvp_error_against_eps():
    rng = np.random.default_rng(3)
    x, v = rng.standard_normal(5), rng.standard_normal(5)
    v /= np.linalg.norm(v)
    exact = torch.autograd.functional.hvp(lambda t: f(torch, t), torch.tensor(x),
                                          torch.tensor(v))[1].numpy()
    epsilons = [10.0 ** -k for k in range(1, 10)]
    table = {}
    for dtype in (wick.float64, wick.float32):
        xs, vs = wick.tensor(x, dtype=dtype), wick.tensor(v, dtype=dtype)
        errors = []
        for eps in epsilons:
            fd = L.hvp_finite_difference(lambda t: f(wick, t), xs, vs, eps)
            assert fd.dtype == dtype
            errors.append(np.linalg.norm(fd.numpy() - exact) / np.linalg.norm(exact))
        table[str(dtype).split(".")[-1]] = errors
    e64 = table["float64"]
    # Truncation is O(eps^2): ten times smaller eps, about 100 times smaller error.
    assert 30 < e64[0] / e64[1] < 300 and 30 < e64[1] / e64[2] < 300
    best = int(np.argmin(e64))
    assert 1e-6 <= epsilons[best] <= 1e-3 and e64[best] < 1e-8  # eps ~ u^(1/3), error ~ u^(2/3)
    assert e64[-1] > 10 * e64[best]  # then cancellation takes over
    assert epsilons[int(np.argmin(table["float32"]))] >= 1e-4  # float32's u is 1e9 times larger
    for dtype, errors in table.items():
        figure(f"finite-difference HVP relative error, {dtype}, eps 1e-1..1e-9",
               " ".join(f"{e:.0e}" for e in errors))


def critics(seed=0):
    """The same small CNN critic in wick and PyTorch: PyTorch's initial weights copied over."""
    def net(m):
        nn = m.nn
        return nn.Sequential(nn.Conv2d(1, 3, 3), nn.SiLU(), nn.Flatten(), nn.Linear(27, 8),
                             nn.Tanh(), nn.Linear(8, 1)).double()
    torch.manual_seed(seed)
    tnet, wnet = net(torch), net(wick)
    for wp, tp in zip(wnet.parameters(), tnet.parameters()):
        with wick.no_grad():
            wp.copy_(wick.tensor(tp.detach().numpy()))
    return wnet, tnet


def torch_penalty(critic, real, fake, alpha):
    a = alpha.reshape(-1, 1, 1, 1)
    x_hat = (a * real + (1 - a) * fake).requires_grad_(True)
    (g,) = torch.autograd.grad(critic(x_hat).sum(), x_hat, create_graph=True)
    return ((g.flatten(1).norm(dim=1) - 1) ** 2).mean()


def test_gradient_penalty_and_its_parameter_gradient_match_pytorch():
    rng = np.random.default_rng(4)
    wnet, tnet = critics()
    real, fake = rng.standard_normal((6, 1, 5, 5)), rng.standard_normal((6, 1, 5, 5)) + 1
    alpha = rng.uniform(size=6)
    penalties = []
    for m, net, gp in ((wick, wnet, L.gradient_penalty), (torch, tnet, torch_penalty)):
        penalty = gp(net, m.tensor(real), m.tensor(fake), m.tensor(alpha))
        penalty.backward()
        penalties.append(penalty.item())
    np.testing.assert_allclose(penalties[0], penalties[1], rtol=1e-12)
    # The last bias does not reach the input gradient: it has no gradient in either framework.
    for i, (wp, tp) in enumerate(zip(wnet.parameters(), tnet.parameters())):
        assert (wp.grad is None) == (tp.grad is None) == (i == 5), f"parameter {i}'s grad"
        if wp.grad is not None:
            np.testing.assert_allclose(wp.grad.numpy(), tp.grad.numpy(), rtol=1e-9, atol=1e-12)
    figure("gradient penalty of the initial critic", f"{penalties[0]:.4f}")


def test_gradient_penalty_of_a_linear_critic():
    rng = np.random.default_rng(5)
    # D(x) = w.x has gradient w everywhere: the penalty is (|w| - 1)^2, whatever the batch.
    critic = wick.nn.Sequential(wick.nn.Flatten(), wick.nn.Linear(12, 1)).double()
    w = rng.standard_normal(12)
    for norm in (1.0, 3.0):
        with wick.no_grad():
            critic[1].weight.copy_(wick.tensor(norm * w / np.linalg.norm(w)).reshape(1, 12))
        real, fake = wick.tensor(rng.standard_normal((5, 3, 4))), wick.zeros(5, 3, 4).double()
        got = L.gradient_penalty(critic, real, fake, wick.tensor(rng.uniform(size=5)))
        assert abs(got.item() - (norm - 1) ** 2) < 1e-12


def test_conjugate_gradient_solves_with_products_only():
    rng = np.random.default_rng(6)
    m = rng.standard_normal((8, 8))
    h, b = m @ m.T + 0.5 * np.eye(8), rng.standard_normal(8)
    calls = []

    def product(d):
        calls.append(1)
        return wick.tensor(h) @ d

    p, n = L.conjugate_gradient(product, wick.tensor(b), max_iters=50)
    np.testing.assert_allclose(p.numpy(), np.linalg.solve(h, b), rtol=1e-8, atol=1e-10)
    assert n == len(calls) <= 8 + 2  # n steps in exact arithmetic for an n x n system
    p2, n2 = L.conjugate_gradient(product, wick.tensor(b), max_iters=3)
    assert n2 == 3 and np.linalg.norm(h @ p2.numpy() - b) > 1e-6


def logistic_problem():
    rng = np.random.default_rng(3)
    n, d, lam = 200, 10, 1e-2
    x = rng.standard_normal((n, d)) * np.linspace(0.3, 3.0, d)  # features of unequal scale
    y = (x @ rng.standard_normal(d) + rng.standard_normal(n) > 0).astype(np.float64)

    def loss(w):
        z = wick.tensor(x) @ w
        return wick.nn.functional.binary_cross_entropy_with_logits(z, wick.tensor(y)) + \
            0.5 * lam * (w * w).sum()

    # The optimum by NumPy Newton with the explicit Hessian X^T diag(s(1 - s)) X / n + lam I.
    w = np.zeros(d)
    for _ in range(30):
        s = 1 / (1 + np.exp(-x @ w))
        g = x.T @ (s - y) / n + lam * w
        w -= np.linalg.solve(x.T @ (x * (s * (1 - s))[:, None]) / n + lam * np.eye(d), g)
    smooth = np.linalg.eigvalsh(x.T @ x / (4 * n)).max() + lam  # bounds every Hessian's norm
    return loss, w, d, 1 / float(smooth)


def test_newton_cg_reaches_the_optimum_in_fewer_steps_than_gradient_descent(monkeypatch):
    loss, optimum, d, lr = logistic_problem()
    for name in ("hessian", "jacrev"):  # HVPs only: no explicit Hessian
        monkeypatch.setattr(wick.func, name, lambda *a, **k: pytest.fail("formed a Hessian"))
    w0 = wick.zeros(d, dtype=wick.float64)  # every logit 0: the loss must be smooth there
    w, steps, hvps = L.newton_cg(loss, w0, tol=1e-10)
    np.testing.assert_allclose(w.numpy(), optimum, rtol=1e-8, atol=1e-10)
    assert np.linalg.norm(L.gradient(loss, w).numpy()) <= 1e-10
    assert 1 <= steps <= 10 and steps <= hvps <= steps * (d + 2)
    w_gd, gd_steps = L.gradient_descent(loss, w0, lr, tol=1e-6, max_steps=20000)
    np.testing.assert_allclose(w_gd.numpy(), optimum, atol=1e-4)
    assert steps < gd_steps
    figure("Newton-CG to |g| <= 1e-10", f"{steps} steps, {hvps} HVPs")
    figure("gradient descent (lr = 1/L) to |g| <= 1e-6", f"{gd_steps} steps")


def test_maml_meta_gradient_matches_pytorch_and_holds_a_hessian_term():
    rng = np.random.default_rng(7)
    xs, xq = rng.standard_normal((8, 4)), rng.standard_normal((8, 4))
    ys, yq, w = rng.standard_normal(8), rng.standard_normal(8), rng.standard_normal(4)
    lr = 0.3

    def loss(m, t, batch):
        return ((m.tanh(m.tensor(batch[0]) @ t) - m.tensor(batch[1])) ** 2).mean()

    wl = lambda t, batch: loss(wick, t, batch)  # noqa: E731
    full = L.maml_meta_gradient(wl, wick.tensor(w), (xs, ys), (xq, yq), lr)
    first = L.maml_meta_gradient(wl, wick.tensor(w), (xs, ys), (xq, yq), lr, first_order=True)
    assert not full.requires_grad
    t = torch.tensor(w, requires_grad=True)
    (g,) = torch.autograd.grad(loss(torch, t, (xs, ys)), t, create_graph=True)
    (reference,) = torch.autograd.grad(loss(torch, t - lr * g, (xq, yq)), t)
    np.testing.assert_allclose(full.numpy(), reference.numpy(), rtol=1e-10, atol=1e-12)
    # first order drops -lr H_support grad_query(w'): rebuild it from the HVP.
    adapted = wick.tensor(w) - lr * L.gradient(lambda t: wl(t, (xs, ys)), wick.tensor(w))
    query_grad = L.gradient(lambda t: wl(t, (xq, yq)), adapted)
    np.testing.assert_allclose(first.numpy(), query_grad.numpy(), rtol=1e-12)
    term = -lr * L.hvp(lambda t: wl(t, (xs, ys)), wick.tensor(w), query_grad).numpy()
    np.testing.assert_allclose(full.numpy() - first.numpy(), term, rtol=1e-8, atol=1e-12)
    figure("MAML: |Hessian term| / |first-order meta-gradient|",
           f"{np.linalg.norm(term) / np.linalg.norm(first.numpy()):.3f}")
