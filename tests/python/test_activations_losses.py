"""The activations with parameters and the pointwise losses added with the op table's new rows
(elu, selu, softplus, mish, hardtanh, relu6, hardswish, hardsigmoid; binary_cross_entropy,
smooth_l1_loss, huber_loss, kl_div), their modules, and remainder/fmod/atan2/hypot/logaddexp as
a user calls them: against PyTorch forward and backward, gradcheck in float64, bad inputs."""

import numpy as np
import pytest

import wick
from reference import check, needs_torch, torch

pytestmark = needs_torch


def probabilities(*shape, seed=0):
    return np.random.default_rng(seed).uniform(0.05, 0.95, shape)


ACTIVATIONS = [
    ("elu", lambda F, x: F.elu(x)),
    ("elu alpha", lambda F, x: F.elu(x, alpha=0.3)),
    ("selu", lambda F, x: F.selu(x)),
    ("softplus", lambda F, x: F.softplus(x)),
    ("softplus beta threshold", lambda F, x: F.softplus(x, beta=3.0, threshold=2.0)),
    ("mish", lambda F, x: F.mish(x)),
    ("hardtanh", lambda F, x: F.hardtanh(x, -0.5, 0.8)),
    ("relu6", lambda F, x: F.relu6(x * 4)),
    ("hardswish", lambda F, x: F.hardswish(x * 4)),
    ("hardsigmoid", lambda F, x: F.hardsigmoid(x * 4)),
]


@pytest.mark.parametrize("name,fn", ACTIVATIONS, ids=[a[0] for a in ACTIVATIONS])
def test_activation_matches_pytorch(name, fn):
    check(lambda m, x: fn(m.nn.functional, x), [(5, 7)])
    check(lambda m, x: fn(m.nn.functional, x), [(5, 7)], noncontig=True, seed=1)
    check(lambda m, x: fn(m.nn.functional, x), [(6, 3)], dtype=np.float32, atol=1e-5, seed=2)


def test_activation_gradients_pass_gradcheck():
    F = wick.nn.functional
    x = wick.tensor(np.random.default_rng(0).uniform(0.1, 0.9, (3, 4)) *
                    np.array([[-1], [1], [-1]]), requires_grad=True)
    for _, fn in ACTIVATIONS:
        assert wick.autograd.gradcheck(lambda t: fn(F, t), (x,))


def test_activations_at_their_boundaries_match_pytorch():
    # Exactly on a kink the derivative is a convention: PyTorch's is matched. (Not hardswish's
    # at x = 3: PyTorch 1.13's vectorised loop says 1 and its scalar loop 1.5; wick says 1.5.)
    values = np.array([-3.0, -1.0, 0.0, 1.0, 3.0, 6.0, 20.0, 25.0])
    check(lambda m, x: m.nn.functional.hardtanh(x), [values])
    check(lambda m, x: m.nn.functional.relu6(x), [values])
    check(lambda m, x: m.nn.functional.hardswish(x), [values[values != 3.0]])
    check(lambda m, x: m.nn.functional.hardsigmoid(x), [values])
    check(lambda m, x: m.nn.functional.softplus(x), [values])
    check(lambda m, x: m.nn.functional.elu(x), [values])


def test_relu6_is_hardtanh_as_in_pytorch():
    x = wick.tensor([1.0], requires_grad=True)
    assert "Hardtanh" in type(wick.nn.functional.relu6(x).grad_fn).__name__ or \
        "Hardtanh" in wick.nn.functional.relu6(x).grad_fn.name()


def test_inplace_activations_write_their_input():
    F = wick.nn.functional
    for fn in (F.elu, F.selu, F.mish, F.hardswish, F.hardsigmoid, F.relu6, F.hardtanh):
        x = wick.tensor([-2.0, 0.5, 4.0])
        expected = fn(x.clone())
        out = fn(x, inplace=True)
        assert out is x
        np.testing.assert_allclose(x.numpy(), expected.numpy())


MODULES = [
    ("ELU", dict(alpha=0.5)), ("SELU", {}), ("Mish", {}), ("Hardswish", {}), ("Hardsigmoid", {}),
    ("Hardtanh", dict(min_val=-2.0, max_val=0.5)), ("ReLU6", {}),
    ("Softplus", dict(beta=2.0, threshold=5.0)),
]


@pytest.mark.parametrize("name,kwargs", MODULES, ids=[m[0] for m in MODULES])
def test_activation_modules_match_pytorch(name, kwargs):
    check(lambda m, x: getattr(m.nn, name)(**kwargs)(x * 3), [(4, 5)])
    assert repr(getattr(wick.nn, name)(**kwargs)) == repr(getattr(torch.nn, name)(**kwargs))


def test_hardtanh_rejects_inverted_bounds():
    with pytest.raises(ValueError, match="hardtanh"):
        wick.nn.functional.hardtanh(wick.zeros(3), 1.0, -1.0)
    with pytest.raises(ValueError, match="Hardtanh"):
        wick.nn.Hardtanh(1.0, -1.0)
    with pytest.raises(ValueError, match="softplus"):
        wick.nn.functional.softplus(wick.zeros(3), beta=0.0)


# ---- losses ----

LOSSES = [
    ("bce", lambda F, x, y: F.binary_cross_entropy(x, y), "prob"),
    ("bce sum", lambda F, x, y: F.binary_cross_entropy(x, y, reduction="sum"), "prob"),
    ("bce none", lambda F, x, y: F.binary_cross_entropy(x, y, reduction="none"), "prob"),
    ("smooth_l1", lambda F, x, y: F.smooth_l1_loss(x, y), "normal"),
    ("smooth_l1 beta", lambda F, x, y: F.smooth_l1_loss(x, y, beta=0.4, reduction="sum"),
     "normal"),
    ("smooth_l1 beta 0", lambda F, x, y: F.smooth_l1_loss(x, y, beta=0.0), "normal"),
    ("huber", lambda F, x, y: F.huber_loss(x, y), "normal"),
    ("huber delta", lambda F, x, y: F.huber_loss(x, y, reduction="none", delta=0.3), "normal"),
    ("kl_div", lambda F, x, y: F.kl_div(x.log_softmax(1), y, reduction="batchmean"), "prob"),
    ("kl_div sum", lambda F, x, y: F.kl_div(x.log_softmax(1), y, reduction="sum"), "prob"),
    ("kl_div log_target", lambda F, x, y: F.kl_div(x.log_softmax(1), y.log(),
                                                     reduction="batchmean", log_target=True),
     "prob"),
]


@pytest.mark.parametrize("name,fn,kind", LOSSES, ids=[l[0] for l in LOSSES])
def test_loss_matches_pytorch(name, fn, kind):
    if kind == "prob":
        inputs = [probabilities(4, 5), probabilities(4, 5, seed=1)]
    else:
        inputs = [(4, 5), (4, 5)]
    check(lambda m, x, y: fn(m.nn.functional, x, y), inputs)
    w = [wick.tensor(a if isinstance(a, np.ndarray) else np.random.default_rng(2).standard_normal(a),
                     requires_grad=True) for a in inputs]
    assert wick.autograd.gradcheck(lambda x, y: fn(wick.nn.functional, x, y), tuple(w))


def test_bce_weight_and_zero_target_entries_match_pytorch():
    x, y = probabilities(3, 4), np.random.default_rng(3).integers(0, 2, (3, 4)).astype(float)
    weight = probabilities(4, seed=4)
    check(lambda m, x, y, w: m.nn.functional.binary_cross_entropy(x, y, weight=w), [x, y, weight],
          requires_grad=[True, False, False])
    # A certain wrong answer costs 100 (the logs are clamped), not infinity.
    check(lambda m, x, y: m.nn.functional.binary_cross_entropy(x, y, reduction="none"),
          [np.array([0.0, 1.0]), np.array([1.0, 0.0])], grad=False)


def test_kl_div_with_zero_targets_matches_pytorch():
    y = np.array([[0.0, 0.5, 0.5], [0.2, 0.0, 0.8]])
    check(lambda m, x, y: m.nn.functional.kl_div(x.log_softmax(1), y, reduction="batchmean"),
          [(2, 3), y], requires_grad=[True, False])


LOSS_MODULES = [
    ("BCELoss", {}, "prob"), ("SmoothL1Loss", dict(beta=0.5), "normal"),
    ("HuberLoss", dict(delta=2.0), "normal"), ("KLDivLoss", dict(reduction="batchmean"), "kl"),
]


@pytest.mark.parametrize("name,kwargs,kind", LOSS_MODULES, ids=[m[0] for m in LOSS_MODULES])
def test_loss_modules_match_pytorch(name, kwargs, kind):
    if kind == "normal":
        inputs = [(4, 5), (4, 5)]
    else:
        inputs = [probabilities(4, 5), probabilities(4, 5, seed=1)]

    def fn(m, x, y):
        if kind == "kl":
            x = x.log()
        return getattr(m.nn, name)(**kwargs)(x, y)
    check(fn, inputs)


def test_losses_refuse_bad_inputs():
    F = wick.nn.functional
    with pytest.raises(RuntimeError, match=r"binary_cross_entropy.*between 0 and 1"):
        F.binary_cross_entropy(wick.tensor([0.5, 1.5]), wick.tensor([0.0, 1.0]))
    for fn in (F.binary_cross_entropy, F.smooth_l1_loss, F.huber_loss, F.kl_div):
        with pytest.raises(ValueError, match="shape"):
            fn(wick.full((2, 3), 0.5), wick.full((3,), 0.5))
    with pytest.raises(ValueError, match="huber_loss.*delta"):
        F.huber_loss(wick.zeros(2), wick.zeros(2), delta=0.0)
    with pytest.raises(ValueError, match="smooth_l1_loss.*beta"):
        F.smooth_l1_loss(wick.zeros(2), wick.zeros(2), beta=-1.0)
    with pytest.raises(ValueError, match="reduction"):
        F.huber_loss(wick.zeros(2), wick.zeros(2), reduction="average")


# ---- the binary math ops as a user calls them ----

def test_remainder_and_fmod_follow_their_sign_rules():
    a = np.array([5.5, -5.5, 5.5, -5.5, 0.0])
    b = np.array([2.0, 2.0, -2.0, -2.0, 3.0])
    # PyTorch 1.13 has no derivative of remainder for its divisor: compared for the dividend,
    # and wick's divisor gradient is gradchecked.
    check(lambda m, a, b: (m.remainder(a, b), m.fmod(a, b), a % b, a.remainder(1.5),
                           a.fmod(-1.5)), [a, b], requires_grad=[True, False])
    check(lambda m, a, b: 7 % b, [a, b], grad=False)
    # Away from the jumps (where a / b is an integer), both gradients are smooth.
    ta = wick.tensor([5.3, -5.1, 5.7, -5.9, 0.4], dtype=wick.float64, requires_grad=True)
    tb = wick.tensor([2.2, 2.1, -2.3, -1.9, 3.1], dtype=wick.float64, requires_grad=True)
    assert wick.autograd.gradcheck(lambda x, y: (x % y, wick.fmod(x, y)), (ta, tb))
    ai, bi = np.array([7, -7, 7, -7]), np.array([3, 3, -3, -3])
    for fn in (lambda m, a, b: m.remainder(a, b), lambda m, a, b: m.fmod(a, b),
               lambda m, a, b: a % b):
        w, t = fn(wick, wick.tensor(ai), wick.tensor(bi)), fn(torch, torch.tensor(ai),
                                                            torch.tensor(bi))
        np.testing.assert_array_equal(w.numpy(), t.numpy())
        assert w.dtype == wick.int64


def test_integer_division_by_zero_raises():
    for fn in (wick.remainder, wick.fmod):
        with pytest.raises(RuntimeError, match="ZeroDivisionError"):
            fn(wick.tensor([1, 2]), wick.tensor([1, 0]))
    # Floating point gives NaN, as in PyTorch.
    check(lambda m, a, b: (m.remainder(a, b), m.fmod(a, b)),
          [np.array([5.0, -5.0]), np.array([0.0, 0.0])], grad=False)


def test_atan2_hypot_logaddexp_match_pytorch():
    check(lambda m, y, x: (m.atan2(y, x), y.atan2(x), m.arctan2(y, x)), [(4, 5), (4, 5)])
    check(lambda m, a, b: (m.hypot(a, b), a.hypot(b)), [(4, 5), (5,)])
    check(lambda m, a, b: (m.logaddexp(a, b), a.logaddexp(b)), [(4, 5), (4, 1)])
    big = np.array([1000.0, -1000.0, -np.inf, np.inf])
    check(lambda m, a, b: m.logaddexp(a, b), [big, big.copy()], grad=False)
    ints = np.array([3, -3, 4]), np.array([2, 2, -3])
    w = wick.atan2(wick.tensor(ints[0]), wick.tensor(ints[1]))
    t = torch.atan2(torch.tensor(ints[0]), torch.tensor(ints[1]))
    assert w.dtype == wick.float32
    np.testing.assert_allclose(w.numpy(), t.numpy(), rtol=1e-6)


def test_rounding_and_predicates_on_special_values():
    x = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, np.nan, np.inf, -np.inf, -0.0])
    check(lambda m, x: (m.round(x), m.floor(x), m.ceil(x), m.trunc(x), m.sign(x), x.sign(),
                        m.isnan(x), m.isinf(x), m.isfinite(x), x.isnan()), [x], grad=False)
    check(lambda m, x: (m.tan(x), m.sinh(x), m.cosh(x), m.log2(x.abs() + 1), m.log10(x.abs() + 1)),
          [(3, 4)])
    with pytest.raises(TypeError, match="floor"):
        wick.floor(wick.tensor([True]))
