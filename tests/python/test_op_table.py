"""The table-driven test (in the spirit of PyTorch's OpInfo and ggml's test-backend-ops): for every
op in wick's op table (wick._C._ops(), built from core/ops/op_list.h), a CPU kernel exists, a CUDA
kernel is registered in CUDA builds, the forward matches PyTorch on random strided inputs of each
supported dtype, gradcheck passes in float64 for differentiable ops, and the Python binding and
the type stub have the op's function. An op added to the table without a sample here fails
test_every_op_has_a_sample, so nothing in the table goes untested."""

import os
import re

import numpy as np
import pytest

import wick
from wick import _C
from reference import check, needs_torch, torch

OPS = {op["name"]: op for op in _C._ops()}
STUB = os.path.join(os.path.dirname(__file__), "..", "..", "python", "wick", "_C.pyi")


def positive(*shape, seed=0):
    return np.random.default_rng(seed).uniform(0.5, 2.0, shape)


def away_from(points, *shape, seed=0):
    """Normal values at least 0.1 from each kink in `points` (finite differences cross none)."""
    x = np.random.default_rng(seed).standard_normal(shape)
    for p in points:
        near = np.abs(x - p) < 0.1
        x[near] = p + np.sign(x[near] - p + 1e-9) * 0.1
    return x


def strided(m, x):
    """A non-contiguous view of `x`'s values: every other column of a wider tensor."""
    wide = m.zeros(x.shape[0], 2 * x.shape[1], dtype=x.dtype)
    wide[:, ::2] = x.detach()
    return wide[:, ::2]


def between_integers(*shape, seed=0):
    """Values a fifth to two fifths past an integer: no rounding boundary within 0.1."""
    rng = np.random.default_rng(seed)
    return rng.integers(-3, 3, shape) + rng.uniform(0.2, 0.4, shape)


def kinks(*points):
    return lambda *s, seed=0: away_from(list(points), *s, seed=seed)


# Inputs of the unary ops whose domain is not the whole real line, and PyTorch's name where it
# differs from the table's.
UNARY_INPUT = {
    "log": positive, "sqrt": positive, "rsqrt": positive, "reciprocal": positive,
    "log1p": positive, "log2": positive, "log10": positive, "abs": kinks(0), "relu": kinks(0),
    "sign": kinks(0), "selu": kinks(0), "elu": kinks(0),
    "tan": lambda *s, seed=0: np.random.default_rng(seed).uniform(-1.2, 1.2, s),
    "floor": between_integers, "ceil": between_integers, "trunc": between_integers,
    "round": between_integers, "hardtanh": kinks(-1, 1), "hardswish": kinks(-3, 3),
    "hardsigmoid": kinks(-3, 3),
}
UNARY_CALL = {
    "gelu": lambda m, x: m.nn.functional.gelu(x),
    "gelu_tanh": lambda m, x: m.nn.functional.gelu(x, approximate="tanh"),
    "silu": lambda m, x: m.nn.functional.silu(x),
    "leaky_relu": lambda m, x: m.nn.functional.leaky_relu(x, 0.2),
    "clamp": lambda m, x: m.clamp(x, -0.5, 0.7),
    "pow_scalar": lambda m, x: m.pow(x, 3),
    "elu": lambda m, x: m.nn.functional.elu(x, 0.7),
    "selu": lambda m, x: m.nn.functional.selu(x),
    "softplus": lambda m, x: m.nn.functional.softplus(x, 2.0, 1.5),
    "mish": lambda m, x: m.nn.functional.mish(x),
    "hardtanh": lambda m, x: m.nn.functional.hardtanh(x),
    "hardswish": lambda m, x: m.nn.functional.hardswish(x),
    "hardsigmoid": lambda m, x: m.nn.functional.hardsigmoid(x),
}


def unary_sample(name):
    call = UNARY_CALL.get(name, lambda m, x: getattr(m, name)(x))
    make = UNARY_INPUT.get(name, lambda *s, seed=0: away_from([-0.5, 0.7], *s, seed=seed))
    return call, make


BINARY_CALL = {
    "maximum": lambda m, a, b: m.maximum(a, b), "minimum": lambda m, a, b: m.minimum(a, b),
    "div_floor": lambda m, a, b: m.div(a, b, rounding_mode="floor"),
    "div_trunc": lambda m, a, b: m.div(a, b, rounding_mode="trunc"),
}
INT_DIVISION = ("div", "pow", "remainder", "fmod", "div_floor", "div_trunc")
# The activations' derivatives are kernels their forward op's backward runs: checked through it.
VIA_GRADIENT = {"relu_backward": "relu", "gelu_backward": "gelu", "gelu_tanh_backward":
                "gelu_tanh", "silu_backward": "silu", "sigmoid_backward": "sigmoid",
                "tanh_backward": "tanh", "conv2d_backward": "conv2d",
                "max_pool2d_backward": "max_pool2d", "avg_pool2d_backward": "avg_pool2d",
                "adaptive_avg_pool2d_backward": "adaptive_avg_pool2d",
                "batch_norm_backward": "batch_norm",
                "lstm_cell_backward": "lstm_cell", "gru_cell_backward": "gru_cell",
                "scaled_dot_product_attention_backward": "scaled_dot_product_attention"}

# The other ops: (function of the module and inputs, input specs, requires_grad per input).
F = lambda m: m.nn.functional  # noqa: E731


def sdpa(m, q, k, v, is_causal=False):
    """PyTorch 1.13 has no scaled_dot_product_attention: its reference is the explicit formula.
    (m may also be wick on a device: tests/gpu/python/test_gpu_op_table.py's OnDevice.)"""
    if m is not torch:
        return F(m).scaled_dot_product_attention(q, k, v, is_causal=is_causal)
    scores = q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5
    if is_causal:
        hidden = m.ones(q.shape[-2], k.shape[-2], dtype=m.bool).tril().logical_not()
        scores = scores.masked_fill(hidden, float("-inf"))
    return m.softmax(scores, -1) @ v


# The int8 ops against the float32 requantization they document (core/ops/quantized.h),
# written with torch's own integer and float32 ops (PyTorch's quantized engine rounds its own way).
QSCALE, QZP = 0.25, 128  # a power-of-two scale: x / scale is exact, so both sides round alike


def quantize(m, x, dtype="uint8"):
    if m is wick:
        return _C._quantized.quantize_per_tensor(x.float(), QSCALE, QZP if dtype == "uint8" else 0,
                                                 getattr(wick, dtype))
    q = torch.quantize_per_tensor(x.float(), QSCALE, QZP if dtype == "uint8" else 0,
                                  torch.quint8 if dtype == "uint8" else torch.qint8)
    return q.int_repr()


def dequantize(m, x):
    if m is wick:
        return _C._quantized.dequantize(quantize(m, x), QSCALE, QZP)
    return torch.quantize_per_tensor(x.float(), QSCALE, QZP, torch.quint8).dequantize()


def requantize_torch(acc, w_scale, bias, out_scale, out_zp, relu=False):
    f32 = torch.float32
    y = acc.to(f32) * (torch.tensor(QSCALE, dtype=f32) * w_scale) + bias
    q = torch.round(y / torch.tensor(out_scale, dtype=f32)) + out_zp
    return q.clamp(out_zp if relu else 0, 255).to(torch.uint8)


def qlinear(m, x, w):
    qx, qw = quantize(m, x), quantize(m, w, "int8")
    w_scale = m.linspace(0.5, 1.0, w.shape[0]).float()
    bias = m.linspace(-1.0, 1.0, w.shape[0]).float()
    if m is wick:
        return _C._quantized.linear(qx, qw, w_scale, bias, QSCALE, QZP, 1.5, 100, relu=True)
    acc = (qx.long() - QZP) @ qw.long().T
    return requantize_torch(acc, w_scale, bias, 1.5, 100, relu=True)


def qconv2d(m, x, w):
    qx, qw = quantize(m, x), quantize(m, w, "int8")
    w_scale = m.linspace(0.5, 1.0, w.shape[0]).float()
    bias = m.linspace(-1.0, 1.0, w.shape[0]).float()
    if m is wick:
        return _C._quantized.conv2d(qx, qw, w_scale, bias, 2, 1, 1, 2, QSCALE, QZP, 3.0, 20)
    acc = torch.nn.functional.conv2d((qx.double() - QZP), qw.double(), None, 2, 1, 1, 2)
    return requantize_torch(acc.round().long(), w_scale[:, None, None], bias[:, None, None], 3.0,
                            20)


KERNEL_SAMPLES = {
    "where": (lambda m, c, a, b: m.where(c > 0, a, b), [(4, 5), (4, 5), (4, 5)],
              [False, True, True]),
    "sum": (lambda m, x: (x.sum(), x.sum(1), x.sum((0, 1), keepdim=True)), [(4, 5)], None),
    "amax": (lambda m, x: (m.amax(x), m.amax(x, 1), m.amax(x, (0,), keepdim=True)), [(4, 5)],
             None),
    "amin": (lambda m, x: (m.amin(x), m.amin(x, 0), m.amin(x, (0, 1))), [(4, 5)], None),
    "max_dim": (lambda m, x: m.max(x, 1)[0], [(4, 5)], None),
    "min_dim": (lambda m, x: m.min(x, 0, keepdim=True)[0], [(4, 5)], None),
    "copy": (lambda m, x: (x.t().contiguous(), x.to(m.float64) * 2), [(4, 5)], None),
    "fill": (lambda m: m.full((3, 4), 2.5), [], None),
    "arange": (lambda m: (m.arange(10), m.arange(1.0, 3.0, 0.25)), [], None),
    "bmm": (lambda m, a, b: m.bmm(a, b), [(2, 3, 4), (2, 4, 5)], None),
    "index_select": (lambda m, x: x.index_select(1, m.tensor([3, 0, 3])), [(4, 5)], None),
    "gather": (lambda m, x: x.gather(1, m.tensor([[0, 4], [1, 1], [2, 3], [4, 0]])), [(4, 5)],
               None),
    "scatter_add": (lambda m, x, s: x.scatter_add(0, m.tensor([[0, 1, 2], [3, 0, 1]]), s),
                    [(4, 3), (2, 3)], None),
    "softmax": (lambda m, x: (x.softmax(1), x.softmax(0)), [(4, 5)], None),
    "log_softmax": (lambda m, x: x.log_softmax(1), [(4, 5)], None),
    "conv2d": (lambda m, x, w, b: F(m).conv2d(x, w, b, stride=2, padding=1, dilation=1),
               [(2, 4, 7, 6), (6, 4, 3, 3), (6,)], None),
    "max_pool2d": (lambda m, x: F(m).max_pool2d(x, 3, 2, 1), [(2, 3, 7, 6)], None),
    "avg_pool2d": (lambda m, x: F(m).avg_pool2d(x, 3, 2, 1), [(2, 3, 7, 6)], None),
    "adaptive_avg_pool2d": (lambda m, x: F(m).adaptive_avg_pool2d(x, (3, 2)), [(2, 3, 7, 6)],
                            None),
    "batch_norm": (lambda m, x, w, b: F(m).batch_norm(x, None, None, w, b, training=True),
                   [(4, 3, 5, 5), (3,), (3,)], None),
    "cumsum": (lambda m, x: (x.cumsum(1), m.cumsum(x, 0)), [(4, 5)], None),
    "cumprod": (lambda m, x: (x.cumprod(1), m.cumprod(x, 0)), [(4, 5)], None),
    "sort": (lambda m, x: (x.sort(1)[0], x.sort(0, descending=True)[0]), [(4, 5)], None),
    # The fused recurrent steps, through torch's cell functions (two GEMMs, then the fused kernel)
    "lstm_cell": (lambda m, x, h, c, wi, wh, bi, bh: m.lstm_cell(x, (h, c), wi, wh, bi, bh),
                  [(3, 4), (3, 5), (3, 5), (20, 4), (20, 5), (20,), (20,)], None),
    "gru_cell": (lambda m, x, h, wi, wh, bi, bh: m.gru_cell(x, h, wi, wh, bi, bh),
                 [(3, 4), (3, 5), (15, 4), (15, 5), (15,), (15,)], None),
    "quantize_per_tensor": (lambda m, x: (quantize(m, x), quantize(m, x, "int8")), [(4, 5)],
                            None),
    "dequantize": (dequantize, [(4, 5)], None),
    "quantized_linear": (qlinear, [(4, 5), (3, 5)], None),
    "quantized_conv2d": (qconv2d, [(2, 4, 7, 6), (6, 2, 3, 3)], None),
    "scaled_dot_product_attention": (
        lambda m, q, k, v: (sdpa(m, q, k, v), sdpa(m, q, k, v, is_causal=True)),
        [(2, 5, 3), (2, 4, 3), (2, 4, 2)], None),
}
# Grouped convolution too (the conv row's `groups` attribute).
GROUPED_CONV = (lambda m, x, w: F(m).conv2d(x, w, None, stride=1, padding=(2, 1), dilation=2,
                                           groups=2), [(2, 4, 8, 7), (6, 2, 3, 3)])
RANDOM = {"uniform": lambda: wick.rand(20000), "normal": lambda: wick.randn(20000)}
OPTIMIZER = {"adam_step": "Adam", "sgd_step": "SGD"}


def sample_kind(name):
    op = OPS[name]
    if op["family"] == "unary":
        return "unary"
    if name in VIA_GRADIENT:
        return "via_gradient"
    if op["family"] == "binary":
        return "binary"
    for kind, table in (("kernel", KERNEL_SAMPLES), ("random", RANDOM), ("optimizer", OPTIMIZER)):
        if name in table:
            return kind
    return None


def test_every_op_has_a_sample():
    missing = [name for name in OPS if sample_kind(name) is None]
    assert not missing, f"ops in the table without a test sample here: {missing}"


def test_table_is_complete_and_consistent():
    names = [op["name"] for op in _C._ops()]
    assert len(names) == len(set(names))
    for op in OPS.values():
        assert "cpu" in op["kernels"], f"{op['name']} has no CPU kernel"
        if wick.backends.cuda.is_built():
            assert "cuda" in op["kernels"], f"{op['name']} has no CUDA kernel in a CUDA build"
        assert op["differentiable"] == bool(op["backward"]), op["name"]
        for attr_name, attr_type in op["attrs"]:
            assert re.fullmatch(r"\w+", attr_name) and attr_type, (op["name"], attr_name)
    assert _C._missing_kernels("cpu") == []


def test_plain_unary_ops_are_bound_and_stubbed():
    stub = open(STUB).read()
    for op in OPS.values():
        if op["generated_api"]:
            assert callable(getattr(wick, op["name"])), op["name"]
            assert callable(getattr(wick.Tensor, op["name"])), op["name"]
            assert re.search(rf"^def {op['name']}\(", stub, re.M), f"stub lacks {op['name']}"


@needs_torch
@pytest.mark.parametrize("name", [n for n in OPS if OPS[n]["family"] == "unary"])
def test_unary_matches_pytorch(name):
    call, make = unary_sample(name)
    op = OPS[name]
    if op["differentiable"]:
        check(lambda m, x: call(m, x), [make(4, 6)])
        check(lambda m, x: call(m, strided(m, x)), [make(4, 6, seed=1)], grad=False)
        x = wick.tensor(make(3, 4, seed=2), requires_grad=True)
        assert wick.autograd.gradcheck(lambda t: call(wick, t), (x,))
    dtypes = [np.float32]
    if op["dtype_rule"] in ("numeric", "bool"):
        dtypes.append(np.int64)
    for dtype in dtypes:
        data = make(5, 3, seed=3)
        data = (data * 4).round().astype(dtype) if dtype == np.int64 else data.astype(dtype)
        w, t = call(wick, wick.tensor(data)), call(torch, torch.tensor(data))
        assert str(w.dtype).split(".")[-1] == str(t.dtype).split(".")[-1], (name, dtype)
        np.testing.assert_allclose(w.numpy(), t.numpy(), rtol=1e-5, atol=1e-6, err_msg=name)


@needs_torch
@pytest.mark.parametrize("name", [n for n in OPS if sample_kind(n) == "binary"])
def test_binary_matches_pytorch(name):
    call = BINARY_CALL.get(name, lambda m, a, b: getattr(m, name)(a, b))
    if OPS[name]["differentiable"]:
        check(call, [(4, 5), (5,)])
        check(lambda m, a, b: call(m, strided(m, a), b), [(4, 5), (4, 1)], grad=False)
        a = wick.tensor(positive(3, 4), requires_grad=True)
        b = wick.tensor(positive(3, 4, seed=1), requires_grad=True)
        assert wick.autograd.gradcheck(lambda x, y: call(wick, x, y), (a, b))
    for dtype in (np.float32, np.int64):
        if name in INT_DIVISION and dtype == np.int64:
            continue  # checked below with positive divisors and exponents
        if name in ("hypot", "logaddexp") and dtype == np.int64:
            continue  # PyTorch has no integer kernel; wick computes them in float32
        rng = np.random.default_rng(4)
        a, b = rng.integers(-3, 4, (4, 5)).astype(dtype), rng.integers(-3, 4, (5,)).astype(dtype)
        w, t = call(wick, wick.tensor(a), wick.tensor(b)), call(torch, torch.tensor(a),
                                                              torch.tensor(b))
        assert str(w.dtype).split(".")[-1] == str(t.dtype).split(".")[-1], (name, dtype)
        if w.is_floating_point():  # transcendental ops (logaddexp, atan2) may differ by an ulp
            np.testing.assert_allclose(w.numpy(), t.numpy(), rtol=1e-6, err_msg=name)
        else:
            np.testing.assert_array_equal(w.numpy(), t.numpy(), err_msg=name)
    a, b = np.array([7, -7, 9, 2]), np.array([2, 3, 4, 3])
    if name in ("remainder", "fmod", "div_floor", "div_trunc"):
        b = np.array([2, 3, -4, -3])  # both signs of divisor: floor and trunc differ there
    for op_name in INT_DIVISION:
        if name == op_name:
            w, t = call(wick, wick.tensor(a), wick.tensor(b)), call(torch, torch.tensor(a),
                                                                  torch.tensor(b))
            np.testing.assert_allclose(w.numpy(), t.numpy(), rtol=1e-6)


@needs_torch
@pytest.mark.parametrize("name", sorted(KERNEL_SAMPLES))
def test_kernel_op_matches_pytorch(name):
    fn, specs, requires_grad = KERNEL_SAMPLES[name]
    grad = OPS[name]["differentiable"]
    check(fn, specs, requires_grad=requires_grad, grad=grad)
    if len(specs) and all(len(s) >= 2 for s in specs):
        check(fn, specs, requires_grad=requires_grad, grad=False, noncontig=True, seed=1)
    if grad:
        rng = np.random.default_rng(5)
        inputs = [wick.tensor(rng.standard_normal(s), requires_grad=rg is not False)
                  for s, rg in zip(specs, requires_grad or [True] * len(specs))]
        assert wick.autograd.gradcheck(lambda *t: fn(wick, *t), tuple(inputs))
    if name == "conv2d":
        check(*GROUPED_CONV)


def second_derivative_sample(name):
    """The op's function and float64 inputs (requiring grad where the op differentiates them)."""
    kind = sample_kind(name)
    if kind == "unary":
        call, make = unary_sample(name)
        return (lambda x: call(wick, x)), [wick.tensor(make(3, 4, seed=2), requires_grad=True)]
    if kind == "binary":
        call = BINARY_CALL.get(name, lambda m, a, b: getattr(m, name)(a, b))
        return (lambda a, b: call(wick, a, b)), [
            wick.tensor(positive(3, 4), requires_grad=True),
            wick.tensor(positive(3, 4, seed=1), requires_grad=True)]
    fn, specs, requires_grad = KERNEL_SAMPLES[name]
    rng = np.random.default_rng(5)
    return (lambda *t: fn(wick, *t)), [
        wick.tensor(rng.standard_normal(s), requires_grad=rg is not False)
        for s, rg in zip(specs, requires_grad or [True] * len(specs))]


# Step functions: their derivative is a constant zero with no graph of its own (as in PyTorch).
ZERO_DERIVATIVE = {"floor", "ceil", "round", "trunc", "sign", "div_floor", "div_trunc"}


@pytest.mark.parametrize("name", sorted(n for n in OPS if OPS[n]["differentiable"]
                                        and n not in ZERO_DERIVATIVE))
def test_second_derivatives_match_finite_differences(name):
    # create_graph=True through every differentiable op: the gradient's own gradient (for the
    # inputs and for grad_output) against finite differences of the first derivatives.
    fn, inputs = second_derivative_sample(name)
    assert wick.autograd.gradgradcheck(fn, tuple(inputs))


@needs_torch
@pytest.mark.parametrize("name", sorted(VIA_GRADIENT))
def test_backward_kernels_through_their_forward(name):
    forward = VIA_GRADIENT[name]
    if forward in KERNEL_SAMPLES:
        fn, specs, requires_grad = KERNEL_SAMPLES[forward]
        check(fn, specs, requires_grad=requires_grad)
    else:
        call, make = unary_sample(forward)
        check(lambda m, x: call(m, x), [make(4, 6)])


@pytest.mark.parametrize("name", sorted(RANDOM))
def test_random_kernels_have_the_right_moments(name):
    wick.manual_seed(0)
    x = RANDOM[name]()
    mean, var = x.mean().item(), x.var().item()
    expected = (0.5, 1 / 12) if name == "uniform" else (0.0, 1.0)
    assert abs(mean - expected[0]) < 0.02 and abs(var - expected[1]) / expected[1] < 0.05


@needs_torch
@pytest.mark.parametrize("name", sorted(OPTIMIZER))
def test_optimizer_kernels_match_pytorch(name):
    cls = OPTIMIZER[name]
    kwargs = {"lr": 0.1, "momentum": 0.9, "nesterov": True} if cls == "SGD" else {"lr": 0.1}
    start = np.random.default_rng(6).standard_normal((3, 4))
    results = []
    for m in (wick, torch):
        p = m.nn.Parameter(m.tensor(start.copy()))
        opt = getattr(m.optim, cls)([p], weight_decay=0.01, **kwargs)
        for _ in range(3):
            opt.zero_grad()
            (p * p * p).sum().backward()
            opt.step()
        results.append(p.detach().numpy())
    np.testing.assert_allclose(results[0], results[1], rtol=1e-6, atol=1e-8)


def test_tiny_arguments_are_exact():
    # log1p and expm1 keep every digit near 0, where log(1 + x) and exp(x) - 1 lose them all.
    x = wick.tensor([1e-8, -3e-9, 1e-30], dtype=wick.float32)
    np.testing.assert_allclose(wick.log1p(x).numpy(), x.numpy(), rtol=1.2e-7)
    np.testing.assert_allclose(wick.expm1(x).numpy(), x.numpy(), rtol=1.2e-7)
