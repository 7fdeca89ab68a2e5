"""wick.func: grad, vjp, jvp, jacrev, hessian against functorch (Debian's PyTorch 1.13 ships it as
`functorch`) or, where functorch lacks a function, against finite differences; vmap against a
Python loop over the batch, op by op."""

import warnings

import numpy as np
import pytest

import wick
from wick import func
from reference import needs_torch, torch

try:
    import functorch
except ImportError:  # pragma: no cover
    functorch = None

needs_functorch = pytest.mark.skipif(functorch is None, reason="functorch is not installed")


def loss_fn(m):
    return lambda w, x: (m.tanh(x @ w) ** 2).sum()


def both(array):
    return wick.tensor(array), torch.tensor(array)


@needs_functorch
def test_grad_and_hessian_match_functorch():
    rng = np.random.default_rng(0)
    w, x = rng.standard_normal((3, 2)), rng.standard_normal((4, 3))
    (ww, tw), (wx, tx) = both(w), both(x)
    np.testing.assert_allclose(func.grad(loss_fn(wick))(ww, wx).numpy(),
                               functorch.grad(loss_fn(torch))(tw, tx).numpy(), rtol=1e-12)
    g_w, g_x = func.grad(loss_fn(wick), argnums=(0, 1))(ww, wx)
    t_w, t_x = functorch.grad(loss_fn(torch), argnums=(0, 1))(tw, tx)
    np.testing.assert_allclose(g_x.numpy(), t_x.numpy(), rtol=1e-12)
    h = func.hessian(loss_fn(wick))(ww, wx)
    th = functorch.hessian(loss_fn(torch))(tw, tx)
    assert tuple(h.shape) == (3, 2, 3, 2)
    np.testing.assert_allclose(h.numpy(), th.numpy(), rtol=1e-10, atol=1e-12)


@needs_functorch
def test_grad_of_grad_and_grad_and_value():
    f = lambda m: (lambda x: m.sin(x) * x ** 2)  # noqa: E731
    for x in (0.3, -1.7):
        w = func.grad(func.grad(f(wick)))(wick.tensor(x, dtype=wick.float64))
        t = functorch.grad(functorch.grad(f(torch)))(torch.tensor(x, dtype=torch.float64))
        assert w.item() == pytest.approx(t.item(), rel=1e-12)
    g, v = func.grad_and_value(lambda x: (x * x).sum())(wick.tensor([1.0, 2.0]))
    assert g.tolist() == [2.0, 4.0] and v.item() == 5.0


@needs_functorch
def test_vjp_jvp_jacrev_match_functorch():
    rng = np.random.default_rng(1)
    x, v, t = rng.standard_normal(4), rng.standard_normal(3), rng.standard_normal(4)
    a = rng.standard_normal((3, 4))
    f = lambda m: (lambda x: m.tanh(m.tensor(a) @ x) * x[:3])  # noqa: E731
    out, vjp_fn = func.vjp(f(wick), wick.tensor(x))
    tout, tvjp_fn = functorch.vjp(f(torch), torch.tensor(x))
    np.testing.assert_allclose(out.numpy(), tout.numpy(), rtol=1e-12)
    np.testing.assert_allclose(vjp_fn(wick.tensor(v))[0].numpy(),
                               tvjp_fn(torch.tensor(v))[0].numpy(), rtol=1e-12)
    _, jt = func.jvp(f(wick), (wick.tensor(x),), (wick.tensor(t),))
    _, tjt = functorch.jvp(f(torch), (torch.tensor(x),), (torch.tensor(t),))
    np.testing.assert_allclose(jt.numpy(), tjt.numpy(), rtol=1e-12)
    np.testing.assert_allclose(func.jacrev(f(wick))(wick.tensor(x)).numpy(),
                               functorch.jacrev(f(torch))(torch.tensor(x)).numpy(), rtol=1e-12)


def test_jvp_matches_finite_differences():
    x = np.array([0.4, -0.8, 1.3])
    t = np.array([1.0, 0.5, -2.0])
    f = lambda z: wick.exp(z) * z.sum()  # noqa: E731
    _, jt = func.jvp(f, (wick.tensor(x),), (wick.tensor(t),))
    eps = 1e-6
    numeric = (f(wick.tensor(x + eps * t)) - f(wick.tensor(x - eps * t))) / (2 * eps)
    np.testing.assert_allclose(jt.numpy(), numeric.numpy(), rtol=1e-7)


def test_transforms_reject_bad_calls():
    x = wick.tensor([1.0, 2.0])
    with pytest.raises(RuntimeError, match="scalar"):
        func.grad(lambda t: t * 2)(x)
    with pytest.raises(ValueError, match="argnums"):
        func.grad(lambda t: t.sum(), argnums=3)(x)
    with pytest.raises(TypeError, match="floating-point"):
        func.grad(lambda t: t.sum())(wick.tensor([1, 2]))
    with pytest.raises(ValueError, match="tangent 0 has shape"):
        func.jvp(lambda t: t, (x,), (wick.ones(3),))
    _, vjp_fn = func.vjp(lambda t: t * 2, x)
    with pytest.raises(ValueError, match="cotangent 0 has shape"):
        vjp_fn(wick.ones(3))
    with pytest.raises(ValueError, match="same size in the mapped dimension"):
        func.vmap(lambda a, b: a + b)(wick.ones(2, 3), wick.ones(4, 3))
    with pytest.raises(ValueError, match="in_dims=2 is out of range"):
        func.vmap(lambda a: a, in_dims=2)(wick.ones(2, 3))
    with pytest.raises(NotImplementedError, match="nested vmap"):
        func.vmap(func.vmap(lambda a: a.sin()))(wick.ones(2, 3))
    assert wick.func is func  # import wick is enough, as with torch.func


# vmap: each case is (function, batched input shapes); compared with a loop over the batch.
W = np.random.default_rng(7).standard_normal((5, 4)).astype(np.float32)
VMAP_CASES = {
    "sin": (lambda x: wick.sin(x), [(5,)]),
    "exp_method": (lambda x: x.exp(), [(2, 3)]),
    "relu": (lambda x: wick.nn.functional.relu(x), [(4,)]),
    "gelu": (lambda x: wick.nn.functional.gelu(x), [(4,)]),
    "tanh_sigmoid": (lambda x: wick.tanh(x) + wick.sigmoid(x), [(3, 2)]),
    "add_broadcast": (lambda a, b: a + b, [(3, 4), (4,)]),
    "mul_rank_mismatch": (lambda a, b: a * b, [(4,), (3, 4)]),
    "sub_scalar": (lambda a: 2.0 - a, [(3,)]),
    "div": (lambda a, b: a / (b * b + 1), [(2, 3), (2, 3)]),
    "pow": (lambda a: a ** 2, [(3,)]),
    "maximum": (lambda a, b: wick.maximum(a, b), [(4,), (4,)]),
    "where": (lambda a, b: wick.where(a > 0, a, b), [(3, 2), (3, 2)]),
    "sum_all": (lambda x: x.sum(), [(3, 4)]),
    "sum_dim": (lambda x: x.sum(1), [(3, 4)]),
    "mean_neg_dim": (lambda x: x.mean(-1, keepdim=True), [(3, 4)]),
    "amax": (lambda x: wick.amax(x, 0), [(3, 4)]),
    "max_dim": (lambda x: x.max(1).values, [(3, 4)]),
    "softmax": (lambda x: wick.softmax(x, 0), [(3, 4)]),
    "log_softmax": (lambda x: wick.nn.functional.log_softmax(x, dim=-1), [(3, 4)]),
    "matmul_vec": (lambda x: x @ wick.tensor(W).t(), [(4,)]),
    "matmul_mat": (lambda x: x @ wick.tensor(W).t(), [(3, 4)]),
    "matmul_both": (lambda a, b: a @ b, [(3, 4), (4, 2)]),
    "matmul_vec_vec": (lambda a, b: wick.matmul(a, b), [(4,), (4,)]),
    "linear": (lambda x: wick.nn.functional.linear(x, wick.tensor(W)), [(4,)]),
    "reshape_transpose": (lambda x: x.reshape(2, 6).transpose(0, 1), [(3, 4)]),
    "permute_flatten": (lambda x: x.permute(2, 0, 1).flatten(), [(2, 3, 4)]),
    "unsqueeze_expand": (lambda x: x.unsqueeze(0).expand(3, 4), [(4,)]),
    "getitem": (lambda x: x[1:, 0], [(3, 4)]),
    "stack_cat": (lambda a, b: wick.cat([wick.stack([a, b]), a.unsqueeze(0)]), [(3,), (3,)]),
    "conv2d": (lambda x: wick.nn.functional.conv2d(x, wick.ones(2, 1, 3, 3) * 0.1),
               [(1, 5, 5)]),
    "max_pool2d": (lambda x: wick.nn.functional.max_pool2d(x, 2), [(2, 4, 4)]),
}


@pytest.mark.parametrize("name", sorted(VMAP_CASES))
def test_vmap_equals_a_python_loop(name):
    fn, shapes = VMAP_CASES[name]
    rng = np.random.default_rng(3)
    inputs = [wick.tensor(rng.standard_normal((6,) + s).astype(np.float32)) for s in shapes]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # every case here has a batching rule: no loop fallback
        batched = func.vmap(fn)(*inputs)
    looped = wick.stack([fn(*[x[i] for x in inputs]) for i in range(6)])
    assert tuple(batched.shape) == tuple(looped.shape)
    np.testing.assert_allclose(batched.numpy(), looped.numpy(), rtol=1e-5, atol=1e-6)


def test_vmap_in_dims_out_dims_and_unbatched_arguments():
    x = wick.randn(3, 5)  # batch along dim 1
    w = wick.randn(3)
    out = func.vmap(lambda col, w: (col * w).sum(), in_dims=(1, None))(x, w)
    np.testing.assert_allclose(out.numpy(), (x * w.unsqueeze(1)).sum(0).numpy(), rtol=1e-5)
    out = func.vmap(lambda col: col * 2, in_dims=1, out_dims=1)(x)
    np.testing.assert_allclose(out.numpy(), (x * 2).numpy())


def test_an_op_without_a_rule_runs_in_a_loop_and_warns():
    # mse_loss reduces the whole tensor, so running it on the batch would mix the examples; it
    # has no rule, and vmap runs it once per example.
    a, b = wick.randn(4, 3), wick.randn(4, 3)
    with pytest.warns(UserWarning, match="no batching rule for 'mse_loss'"):
        out = func.vmap(wick.nn.functional.mse_loss)(a, b)
    looped = wick.stack([wick.nn.functional.mse_loss(a[i], b[i]) for i in range(4)])
    np.testing.assert_allclose(out.numpy(), looped.numpy(), rtol=1e-6)


def test_per_example_gradients_with_vmap_of_grad():
    # The classic use: one gradient per example, in one call (vmap(grad(loss))).
    rng = np.random.default_rng(4)
    w = wick.tensor(rng.standard_normal(3))
    xs, ys = wick.tensor(rng.standard_normal((5, 3))), wick.tensor(rng.standard_normal(5))

    def loss(w, x, y):
        return (wick.tanh((x * w).sum()) - y) ** 2

    per_example = func.vmap(func.grad(loss), in_dims=(None, 0, 0))(w, xs, ys)
    expected = wick.stack([func.grad(loss)(w, xs[i], ys[i]) for i in range(5)])
    assert tuple(per_example.shape) == (5, 3)
    np.testing.assert_allclose(per_example.numpy(), expected.numpy(), rtol=1e-10)
