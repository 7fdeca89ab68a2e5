"""Lab 14's graded tests: im2col against F.unfold; the im2col, direct and Winograd convolutions
against F.conv2d (outputs and the gradients of input, weight and bias, float64) and against
PyTorch; then, at a ResNet-20 layer's shape, each one's time, the patch matrix's size and
Winograd's multiplications and float32 error; the fused batch norm + ReLU backward and the
stride-2 input gradient by output phases, against autograd."""

import time

import numpy as np
import pytest
import torch
import wick
from labkit import figure, impl

L = impl(__file__, "convolution")
F = wick.nn.functional
CONFIGS = [(1, 0), (1, 1), (2, 1), (2, 0)]  # (stride, padding)


def tensors(seed, *shapes, dtype=np.float64):
    rng = np.random.default_rng(seed)
    return [wick.tensor(rng.standard_normal(s).astype(dtype), requires_grad=True) for s in shapes]


def compare_with_conv2d(fn, stride, padding, shape=(2, 3, 7, 6), seed=0):
    """fn(x, w, b) against F.conv2d: the output and the three gradients, float64."""
    x, w, b = tensors(seed, shape, (4, shape[1], 3, 3), (4,))
    ref_inputs = [t.detach().clone().requires_grad_() for t in (x, w, b)]
    got, ref = fn(x, w, b), F.conv2d(*ref_inputs, stride=stride, padding=padding)
    np.testing.assert_allclose(got.detach().numpy(), ref.detach().numpy(), rtol=1e-10, atol=1e-10)
    upstream = wick.tensor(np.random.default_rng(seed + 1).standard_normal(tuple(ref.shape)))
    (got * upstream).sum().backward()
    (ref * upstream).sum().backward()
    for mine, theirs in zip((x, w, b), ref_inputs):
        np.testing.assert_allclose(mine.grad.numpy(), theirs.grad.numpy(), rtol=1e-9, atol=1e-9)
    expected = torch.nn.functional.conv2d(*(torch.tensor(t.detach().numpy()) for t in (x, w, b)),
                                          stride=stride, padding=padding)
    np.testing.assert_allclose(got.detach().numpy(), expected.numpy(), rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("stride,padding", CONFIGS)
def test_im2col_matches_unfold(stride, padding):
    (x,) = tensors(1, (2, 3, 7, 6))
    for kh, kw in ((3, 3), (1, 1), (2, 3)):
        np.testing.assert_array_equal(
            L.im2col(x, kh, kw, stride, padding).detach().numpy(),
            F.unfold(x, (kh, kw), padding=padding, stride=stride).detach().numpy())


@pytest.mark.parametrize("stride,padding", CONFIGS)
def test_im2col_convolution_matches_conv2d(stride, padding):
    compare_with_conv2d(lambda x, w, b: L.conv2d_im2col(x, w, b, stride, padding), stride,
                        padding)


@pytest.mark.parametrize("stride,padding", CONFIGS)
def test_direct_convolution_matches_conv2d(stride, padding):
    compare_with_conv2d(lambda x, w, b: L.conv2d_direct(x, w, b, stride, padding), stride,
                        padding)


@pytest.mark.parametrize("padding", [0, 1])
@pytest.mark.parametrize("shape", [(2, 3, 7, 6), (1, 5, 8, 8), (2, 2, 3, 3)])
def test_winograd_matches_conv2d(padding, shape):
    compare_with_conv2d(lambda x, w, b: L.conv2d_winograd(x, w, b, padding), 1, padding, shape)


def test_the_three_algorithms_side_by_side():
    """A ResNet-20 layer (32 channels, 16x16, 3x3, stride 1, padding 1), batch 16, float32."""
    n, c, h = 16, 32, 16
    x, w = (t.detach() for t in tensors(3, (n, c, h, h), (c, c, 3, 3), dtype=np.float32))
    exact = F.conv2d(x.double(), w.double(), padding=1)
    algorithms = {"library conv2d": lambda: F.conv2d(x, w, padding=1),
                  "im2col + GEMM": lambda: L.conv2d_im2col(x, w, None, 1, 1),
                  "direct": lambda: L.conv2d_direct(x, w, None, 1, 1),
                  "Winograd F(2x2,3x3)": lambda: L.conv2d_winograd(x, w, None, 1)}
    errors = {}
    for name, run in algorithms.items():
        with wick.no_grad():
            out = run()
            start = time.perf_counter()
            for _ in range(3):
                run()
        figure(f"{name}, batch {n} (ms)", round((time.perf_counter() - start) / 3 * 1e3, 1))
        errors[name] = float((out.double() - exact).abs().max())
        assert errors[name] < 1e-3, (name, errors[name])
    figure("im2col's patch matrix for the batch (MiB)", round(n * c * 9 * h * h * 4 / 2**20, 1))
    figure("multiplications per output per channel: direct / Winograd", "9 / 4 (16 per 2x2 tile)")
    figure("largest float32 error: direct / Winograd",
           f"{errors['direct']:.1e} / {errors['Winograd F(2x2,3x3)']:.1e}")


@pytest.mark.parametrize("shape", [(4, 3, 5, 6), (2, 2, 3, 3)])
def test_fused_batch_norm_relu_backward_matches_autograd_of_the_three_ops(shape):
    """The hand-written backward against autograd through batch_norm, + and relu (float64), and
    against wick's fused kernel, F.batch_norm_relu."""
    x, r, dz = tensors(5, shape, shape, shape)
    w, b = tensors(6, (shape[1],), (shape[1],))
    z = F.relu(F.batch_norm(x, None, None, w, b, training=True) + r)
    want = wick.autograd.grad([z], [x, w, b, r], [dz.detach()])
    with wick.no_grad():
        got = L.batch_norm_relu_backward(x, w, b, r, dz)
    for mine, theirs in zip(got, want):
        np.testing.assert_allclose(mine.numpy(), theirs.numpy(), rtol=1e-9, atol=1e-9)
    fused = F.batch_norm_relu(x, None, None, w, b, training=True, residual=r)
    kernel = wick.autograd.grad([fused], [x, w, b, r], [dz.detach()])
    for mine, theirs in zip(got, kernel):
        np.testing.assert_allclose(mine.numpy(), theirs.numpy(), rtol=1e-9, atol=1e-9)


def test_fusion_side_by_side():
    """The end of a ResNet-20 block (16 channels, 32x32, batch 64, float32), forward + backward:
    three ops (six passes over the data forward, four backward) against the fused kernel."""
    x, r = (t.detach().requires_grad_() for t in tensors(7, (64, 16, 32, 32), (64, 16, 32, 32),
                                                            dtype=np.float32))
    w, b = tensors(8, (16,), (16,), dtype=np.float32)
    dz = wick.randn(64, 16, 32, 32)
    def by_hand():
        with wick.no_grad():
            F.relu(F.batch_norm(x, None, None, w, b, True) + r)
            L.batch_norm_relu_backward(x, w, b, r, dz)

    ways = {"batch_norm, +, relu": lambda: F.relu(F.batch_norm(x, None, None, w, b, True) + r)
            .backward(dz),
            "F.batch_norm_relu": lambda: F.batch_norm_relu(x, None, None, w, b, True, residual=r)
            .backward(dz),
            "your backward, composed of wick ops": by_hand}
    for name, run in ways.items():
        run()
        start = time.perf_counter()
        for _ in range(5):
            run()
        figure(f"{name}, forward + backward (ms)",
               round((time.perf_counter() - start) / 5 * 1e3, 2))


@pytest.mark.parametrize("shape,out", [((2, 3, 8, 6), 4), ((1, 5, 16, 16), 7), ((3, 2, 2, 4), 3)])
def test_strided_input_grad_by_phases_matches_autograd(shape, out):
    """The four-phase input gradient of a stride-2, padding-1 3x3 convolution against autograd
    through F.conv2d and against PyTorch's (float64)."""
    x, w = tensors(7, shape, (out, shape[1], 3, 3))
    y = F.conv2d(x, w, stride=2, padding=1)
    (dy,) = tensors(8, tuple(y.shape))
    (want,) = wick.autograd.grad([y], [x], [dy.detach()])
    with wick.no_grad():
        got = L.conv2d_strided_input_grad(dy.detach(), w.detach(), shape[2:])
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-10, atol=1e-10)
    tx = torch.tensor(x.detach().numpy(), requires_grad=True)
    torch.nn.functional.conv2d(tx, torch.tensor(w.detach().numpy()), stride=2,
                               padding=1).backward(torch.tensor(dy.detach().numpy()))
    np.testing.assert_allclose(got.numpy(), tx.grad.numpy(), rtol=1e-10, atol=1e-10)
