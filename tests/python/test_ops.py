"""Every tensor op against PyTorch: forward values and input gradients, with broadcasting and
non-contiguous inputs (reference.check runs the same lambda in both frameworks)."""

import numpy as np
import pytest
import wick

from reference import check, needs_torch

pytestmark = needs_torch

UNARY = ["neg", "abs", "exp", "sin", "cos", "tanh", "sigmoid", "relu", "square", "reciprocal"]


@pytest.mark.parametrize("name", UNARY)
@pytest.mark.parametrize("noncontig", [False, True])
def test_unary_method_and_function(name, noncontig):
    check(lambda m, x: getattr(x, name)(), [(3, 4)], noncontig=noncontig)
    check(lambda m, x: getattr(m, name)(x), [(2, 5)], noncontig=noncontig)


@pytest.mark.parametrize("name", ["log", "sqrt", "rsqrt", "log1p"])
def test_unary_positive_domain(name):
    x = np.abs(np.random.default_rng(3).standard_normal((3, 4))) + 0.5
    check(lambda m, x: getattr(m, name)(x), [x])
    check(lambda m, x: getattr(x.t(), name)(), [x])


@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "maximum", "minimum"])
@pytest.mark.parametrize("shapes", [[(3, 4), (3, 4)], [(3, 4), (4,)], [(2, 1, 4), (3, 1)],
                                    [(3, 4), ()]])
def test_binary_broadcast(op, shapes):
    check(lambda m, a, b: getattr(m, op)(a, b), shapes)
    check(lambda m, a, b: getattr(a, op)(b), shapes, noncontig=True)


def test_pow():
    a = np.abs(np.random.default_rng(1).standard_normal((3, 4))) + 0.5
    check(lambda m, a, b: a ** b, [a, (4,)])
    check(lambda m, a: a ** 3, [(3, 4)])
    check(lambda m, a: a ** 0.5, [a])
    check(lambda m, a: 2 ** a, [(3, 4)])
    check(lambda m, a: m.pow(a, 2), [(2, 3)])


def test_operators_and_reflected_scalars():
    check(lambda m, a, b: (a + b, a - b, a * b, a / b, -a, a @ b.t()), [(3, 4), (3, 4)])
    check(lambda m, a: (1 + a, 1 - a, 2 * a, 1 / (a.abs() + 1), a + 0.5, a - 2, a * 1.5, a / 4),
          [(3, 4)])
    check(lambda m, a, b: (a > b, a >= b, a < b, a <= b, a == b, a != b), [(3, 4), (4,)],
          grad=False)
    check(lambda m, a: (a > 0, a < 0.5, a == 0, a != 1), [(3, 4)], grad=False)


@pytest.mark.parametrize("noncontig", [False, True])
def test_reductions(noncontig):
    s = [(3, 4, 5)]
    check(lambda m, x: (x.sum(), x.sum(1), x.sum((0, 2), keepdim=True), m.sum(x, -1)), s,
          noncontig=noncontig)
    check(lambda m, x: (x.mean(), x.mean(0), x.mean((1, 2)), m.mean(x, 2, keepdim=True)), s,
          noncontig=noncontig)
    check(lambda m, x: (x.var(), x.var(1), x.var(1, unbiased=False), x.std(2, keepdim=True)), s,
          noncontig=noncontig)
    check(lambda m, x: (x.logsumexp(1), m.logsumexp(x, (0, 1))), s, noncontig=noncontig)
    check(lambda m, x: (x.max(), x.min(), x.amax(1), m.amax(x, (0, 2))), s, noncontig=noncontig)
    check(lambda m, x: (x.max(1).values, x.min(2, keepdim=True).values), s, noncontig=noncontig)
    check(lambda m, x: (x.argmax(1), x.argmin(0), x.argmax(), x.max(1).indices), s, grad=False,
          noncontig=noncontig)


def test_int_and_bool_sums():
    ints = np.arange(12).reshape(3, 4)
    check(lambda m, x: (x.sum(), x.sum(0), (x > 5).sum(), (x > 5).any(), (x > -1).all()),
          [ints], grad=False)


@pytest.mark.parametrize("noncontig", [False, True])
def test_views_and_shapes(noncontig):
    s = [(2, 3, 4)]
    check(lambda m, x: (x.reshape(6, 4), x.reshape(-1), x.view(2, 12) if x.is_contiguous()
                        else x.reshape(2, 12), x.flatten(), x.flatten(1)), s, noncontig=noncontig)
    check(lambda m, x: (x.permute(2, 0, 1), x.transpose(0, 2), x.permute(2, 1, 0), x.unsqueeze(1),
                        x.unsqueeze(-1).squeeze(-1), x[:, :1].squeeze(1), x.narrow(2, 1, 2)),
          s, noncontig=noncontig)
    check(lambda m, x: (x.expand(3, 2, 3, 4), x[:, :1].expand(-1, 5, -1), x.repeat(2, 1, 2)), s,
          noncontig=noncontig)
    check(lambda m, x: (x.split(2, 2), x.split([1, 3], 2), x.chunk(2, 0), x.unbind(1)), s,
          noncontig=noncontig)
    check(lambda m, x: (x.contiguous(), x.clone(), x.select(1, 2), x.t() if x.dim() == 2
                        else x.mT), s, noncontig=noncontig)


def test_joins():
    check(lambda m, a, b: (m.cat([a, b], 0), m.cat([a, b], 1), m.stack([a, b], 2),
                           m.stack([a, b])), [(2, 3), (2, 3)])


@pytest.mark.parametrize("shapes", [[(3, 4), (4, 5)], [(4,), (4, 2)], [(3, 4), (4,)],
                                    [(2, 3, 4), (4, 5)], [(2, 3, 4), (2, 4, 5)],
                                    [(1, 3, 4), (2, 4, 5)]])
def test_matmul(shapes):
    check(lambda m, a, b: m.matmul(a, b), shapes)
    check(lambda m, a, b: a @ b, shapes, noncontig=True)


def test_mm_bmm():
    check(lambda m, a, b: (a.mm(b), m.mm(a, b)), [(3, 4), (4, 2)])
    check(lambda m, a, b: m.bmm(a, b), [(2, 3, 4), (2, 4, 5)])


def test_softmax_family():
    check(lambda m, x: (x.softmax(1), x.log_softmax(-1), m.softmax(x, 0)), [(3, 5)],
          noncontig=True)


def test_clamp_where_masked_fill():
    check(lambda m, x: (x.clamp(-0.5, 0.5), x.clamp(min=0.1), x.clamp(max=0.2), m.clamp(x, -1, 1),
                        x.clip(-0.3, 0.3)), [(4, 5)])
    check(lambda m, x, y: (m.where(x > 0, x, y), x.where(x > 0, y), m.where(x > 0, x, 0.0)),
          [(3, 4), (4,)])
    check(lambda m, x: (x.masked_fill(x > 0, 0.5), m.masked_fill(x, x < 0, -1.0)), [(3, 4)])


def test_index_ops():
    idx = np.array([2, 0, 1, 2])
    check(lambda m, x, i: (x.index_select(0, i), m.index_select(x, 1, i[:3])), [(3, 4), idx])
    g = np.array([[0, 2], [1, 1], [2, 0]])
    check(lambda m, x, i: (x.gather(1, i), m.gather(x, 1, i)), [(3, 4), g])
    check(lambda m, x, i, s: x.scatter_add(1, i, s), [(3, 4), g, (3, 2)])


def test_logical():
    check(lambda m, x, y: (m.logical_and(x > 0, y > 0), m.logical_or(x > 0, y > 0),
                           m.logical_not(x > 0), (x > 0) & (y > 0), (x > 0) | (y > 0), ~(x > 0)),
          [(3, 4), (3, 4)], grad=False)


def test_float16_and_float64():
    check(lambda m, x: (x.to(m.float16) * 2).to(m.float32), [(3, 4)], grad=False, atol=1e-2)
    check(lambda m, x: (x.double() + 1).sum(1), [(3, 4)], dtype=np.float32)


def test_type_promotion():
    ints = np.arange(6).reshape(2, 3)
    check(lambda m, i, f: (i + f, i * 2.5, i / 2, i + True, (i > 2) + 1, i.float() * f),
          [ints, (2, 3)], requires_grad=[False, False], grad=False)


def test_norms_match_pytorch():
    for p in (2, 1, float("inf"), float("-inf"), 0, 3):
        check(lambda m, x: (x.norm(p), x.norm(p, 1), x.norm(p, (0,), keepdim=True)), [(3, 4)],
              grad=p not in (0, float("inf"), float("-inf")))


def test_norm2_gradient_is_zero_at_zero():
    # x / ||x|| would be 0 / 0 there; PyTorch and wick define the gradient as 0.
    x = wick.zeros(3, dtype=wick.float64, requires_grad=True)
    x.norm().backward()
    assert x.grad.tolist() == [0.0, 0.0, 0.0]
    check(lambda m, x: m.stack([x[0] * 0, x[1]]).norm(dim=1), [(2, 3)])


def test_any_all_amin_equal_allclose_mm():
    check(lambda m, x: (m.amin(x, 1), (x > 0).any(0), (x > 0).all(1, keepdim=True),
                        x.any(), m.zeros(2, 0).any(1), m.zeros(0).all()), [(3, 4)], grad=False)
    a = wick.tensor([1.0, float("nan"), float("inf")])
    assert wick.allclose(a, a, equal_nan=True) and not wick.allclose(a, a)
    assert wick.allclose(wick.tensor([1.0]), wick.tensor([1.0 + 1e-9]))
    assert wick.equal(wick.ones(2, 3), wick.ones(2, 3)) and not wick.equal(wick.ones(2), wick.ones(3))
    with pytest.raises(ValueError, match=r"\[mm\] both operands must be 2-D"):
        wick.mm(wick.ones(2, 3, 4), wick.ones(4, 2))
    with pytest.raises(ValueError, match=r"\[mm\] inner dimensions differ"):
        wick.mm(wick.ones(2, 3), wick.ones(4, 2))
    with pytest.raises(IndexError, match=r"\[amax\] cannot reduce over dimension 1 of size 0"):
        wick.amax(wick.ones(2, 0), 1)


def test_in_place_overlap_rule_is_pytorchs():
    """Partly overlapping dense views are refused by every in-place op, kernel-backed or not;
    interleaved views (x[::2], x[1::2]) share no element and run, as in PyTorch."""
    for op in ["add_", "sub_", "mul_", "div_", "pow_", "copy_"]:
        x = wick.arange(1.0, 11.0)
        with pytest.raises(RuntimeError, match="single memory location"):
            getattr(x[1:], op)(x[:-1])
    x = wick.arange(1.0, 11.0)
    x[::2].add_(x[1::2])
    np.testing.assert_array_equal(x.numpy()[::2], np.arange(1, 11)[::2] + np.arange(1, 11)[1::2])
    y = wick.arange(1.0, 11.0)
    y[:5].div_(y[5:])  # disjoint halves
    np.testing.assert_allclose(y.numpy()[:5], np.arange(1, 6) / np.arange(6, 11))
