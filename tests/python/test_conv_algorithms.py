"""The CPU convolution's algorithms against PyTorch 1.13 and against each other: the float32
forward that gathers its im2col panels straight from the image (Note [im2col inside the
packing]), the direct 3x3 convolution over padded rows, forward and input gradient (Note [direct
convolution over padded rows]), weights packed ahead of time in frozen graphs (Note [weights
packed ahead of time]) and Winograd's F(2x2, 3x3) (Note [Winograd F(2x2, 3x3)]); max pooling
without indices."""

import contextlib
import itertools

import numpy as np
import pytest

import wick
from wick import nn
import wick.nn.functional as F
from wick.models import resnet18

torch = pytest.importorskip("torch")


def close(got, want, rtol):
    """|got - want| within rtol of want's largest magnitude, elementwise."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape
    scale = max(float(np.abs(want).max()), 1e-6)
    err = float(np.abs(got - want).max())
    assert err <= rtol * scale, f"max error {err:.3g} against scale {scale:.3g}"


CASES = [  # (batch, channels, out, kernel, stride, padding, dilation, groups, size)
    (1, 3, 8, 3, 1, 1, 1, 1, (13, 11)),
    (1, 3, 8, 7, 2, 3, 1, 1, (37, 33)),
    (2, 4, 6, (3, 2), 2, (1, 0), (1, 2), 2, (10, 9)),
    (1, 8, 16, 1, 2, 0, 1, 1, (15, 15)),
    (3, 5, 7, 5, 1, 2, 2, 1, (12, 17)),
    (1, 16, 16, 3, 1, 1, 1, 4, (5, 3)),
    (1, 2, 3, 3, 3, 0, 1, 1, (40, 3)),
    (1, 4, 6, 3, 1, 1, 1, 2, (9, 40)),
    (2, 3, 4, 3, 1, 2, 2, 1, (7, 35)),
    (1, 3, 5, (2, 4), (1, 2), (0, 1), (1, 1), 1, (6, 70)),
    # Few positions and many output channels: the product transposed (Note [few positions: the
    # product transposed]), its weight split between the threads, ragged and grouped.
    (1, 24, 256, 3, 1, 1, 1, 1, (7, 7)),
    (1, 16, 520, 3, 2, 1, 1, 2, (9, 11)),
    (1, 40, 300, 1, 1, 0, 1, 1, (4, 6)),
]


@pytest.mark.parametrize("case", CASES, ids=[str(i) for i in range(len(CASES))])
def test_float32_forward_gathers_panels_like_torch(case):
    """Output rows narrower than 16 (im2col written out) and wider (gathered into panels, some
    wider than a 32-column panel), fewer than 64 positions with 256 or more output channels per
    group (the product transposed), with strides, dilations and groups."""
    n, c, o, k, stride, pad, dil, groups, (h, w) = case
    rng = np.random.default_rng(0)
    kh, kw = (k, k) if isinstance(k, int) else k
    x = rng.standard_normal((n, c, h, w)).astype(np.float32)
    wt = rng.standard_normal((o, c // groups, kh, kw)).astype(np.float32)
    b = rng.standard_normal(o).astype(np.float32)
    want = torch.nn.functional.conv2d(torch.from_numpy(x), torch.from_numpy(wt), torch.from_numpy(b),
                                      stride, pad, dil, groups).numpy()
    for threads in (1, 2):
        saved = wick.get_num_threads()
        wick.set_num_threads(threads)
        try:
            got = F.conv2d(wick.tensor(x), wick.tensor(wt), wick.tensor(b), stride, pad, dil, groups)
        finally:
            wick.set_num_threads(saved)
        close(got.numpy(), want, 1e-5)


@contextlib.contextmanager
def cpu_switch_off(name):
    """wick.backends.cpu.<name> off for the block, on again after it."""
    setattr(wick.backends.cpu, name, False)
    try:
        yield
    finally:
        setattr(wick.backends.cpu, name, True)


def im2col_only():
    """Every convolution by im2col + GEMM, the reference (wick.backends.cpu)."""
    return cpu_switch_off("direct_convolution")


@contextlib.contextmanager
def threads(n):
    saved = wick.get_num_threads()
    wick.set_num_threads(n)
    try:
        yield
    finally:
        wick.set_num_threads(saved)


def torch_conv_with_grads(rng, shape, out, stride, pad):
    """Random float32 x [shape], weight [out, C, 3, 3], bias and dY; PyTorch's output and its
    gradients for x, weight and bias, as NumPy arrays."""
    x = rng.standard_normal(shape).astype(np.float32)
    wt = rng.standard_normal((out, shape[1], 3, 3)).astype(np.float32)
    b = rng.standard_normal(out).astype(np.float32)
    tx, tw, tb = (torch.tensor(a, requires_grad=True) for a in (x, wt, b))
    want = torch.nn.functional.conv2d(tx, tw, tb, stride=stride, padding=pad)
    dy = rng.standard_normal(tuple(want.shape)).astype(np.float32)
    want.backward(torch.from_numpy(dy))
    expected = [t.detach().numpy() for t in (want, tx.grad, tw.grad, tb.grad)]
    return (x, wt, b, dy), expected


def wick_conv_with_grads(x, wt, b, dy, stride, pad):
    """wick's output and its gradients for x, weight and bias, as NumPy arrays."""
    wx, ww, wb = (wick.tensor(a, requires_grad=True) for a in (x, wt, b))
    got = F.conv2d(wx, ww, wb, stride=stride, padding=pad)
    got.backward(wick.tensor(dy))
    return [t.detach().numpy() for t in (got, wx.grad, ww.grad, wb.grad)]


DIRECT_CASES = [  # (batch, in channels, out channels, stride, padding, (height, width))
    (1, 1, 1, 1, 1, (8, 8)),
    (1, 3, 16, 1, 1, (32, 32)),
    (3, 16, 12, 1, 1, (13, 21)),  # out channels not a multiple of the 8-channel block
    (2, 5, 3, 1, 0, (10, 40)),    # no padding: the output is two narrower than the input
    (4, 7, 9, 1, 2, (9, 17)),     # padding 2: wider than the input
    (1, 32, 24, 1, 1, (16, 50)),
    (5, 2, 17, 1, 1, (6, 30)),    # an odd batch over two threads
    (3, 16, 32, 2, 1, (32, 32)),  # stride 2: four phase planes
    (2, 6, 5, 2, 1, (17, 23)),    # odd sizes: phases of unequal size
    (1, 9, 7, 2, 1, (16, 21)),    # one image over two threads; 9 = 8 + 1 input channels
    (1, 4, 8, 2, 0, (21, 20)),
    (2, 3, 10, 2, 2, (16, 19)),
    (2, 4, 6, 1, 0, (18, 34)),    # 16 x 32 outputs: the weight gradient reads dY in place
    (2, 3, 5, 1, 2, (14, 30)),    # ... and with padding 2
]


@pytest.mark.parametrize("case", DIRECT_CASES, ids=[str(i) for i in range(len(DIRECT_CASES))])
@pytest.mark.parametrize("nthreads", [1, 2])
def test_direct_equals_im2col_and_torch(case, nthreads):
    """The forward, the input gradient (at stride 1 a direct convolution of dY with the flipped
    weight; at stride 2 and padding 1 four, one per output phase: Note [strided input gradient
    by output phases]) and, with 256 outputs per image and an image per thread, the weight
    gradient (Note [weight gradient over padded rows]) against PyTorch and against im2col +
    GEMM."""
    n, c, o, stride, pad, (h, w) = case
    inputs, expected = torch_conv_with_grads(np.random.default_rng(2), (n, c, h, w), o, stride, pad)
    with threads(nthreads):
        direct = wick_conv_with_grads(*inputs, stride, pad)
        with im2col_only():
            reference = wick_conv_with_grads(*inputs, stride, pad)
    for got, ref, want in zip(direct, reference, expected):
        close(got, want, 1e-5)
        close(got, ref, 1e-6)


def direct_only():
    """3x3 stride-1 convolutions run directly, never by Winograd (wick.backends.cpu)."""
    return cpu_switch_off("winograd_convolution")


WINOGRAD_CASES = [  # (batch, in channels, out channels, (height, width)): 3x3, padding 1
    (4, 16, 16, (32, 32)),  # a row of tiles per vector of 16
    (4, 32, 24, (16, 16)),  # two rows of tiles per vector; 24 = 6 + 6 + 6 + 6 channels
    (5, 16, 20, (8, 8)),    # four rows per vector; 4 images a step, then a step of one; 6 6 6 2
    (2, 17, 16, (2, 64)),   # two vectors to a row: the columns at their edges come from each other
    (3, 16, 16, (6, 32)),   # a batch not a multiple of the threads
    (3, 24, 80, (8, 16)),   # weight gradient: 64 + 16 output channels, 24 = 6 + 6 + 6 + 6 in
]


@pytest.mark.parametrize("case", WINOGRAD_CASES, ids=[str(i) for i in range(len(WINOGRAD_CASES))])
@pytest.mark.parametrize("nthreads", [1, 2])
def test_winograd_over_tiles_equals_direct_and_torch(case, nthreads):
    """Forward, input gradient and weight gradient by Winograd over blocks of 16 tiles (Notes
    [Winograd over blocks of 16 tiles], [Winograd's weight gradient over tiles]) against PyTorch,
    the direct convolution and im2col + GEMM. Its rounding differs from theirs, which is also how
    the test knows it ran."""
    if wick.backends.cpu.get_cpu_capability() != "AVX512":
        pytest.skip("Winograd over tiles is chosen on AVX-512 builds")
    n, c, o, (h, w) = case
    inputs, expected = torch_conv_with_grads(np.random.default_rng(3), (n, c, h, w), o, 1, 1)
    with threads(nthreads):
        winograd = wick_conv_with_grads(*inputs, 1, 1)
        with direct_only():
            direct = wick_conv_with_grads(*inputs, 1, 1)
        with im2col_only():
            reference = wick_conv_with_grads(*inputs, 1, 1)
    for got, ref, want in zip(winograd, reference, expected):
        close(got, want, 1e-5)
        close(got, ref, 1e-5)
    assert not np.array_equal(winograd[0], direct[0]), "the forward did not run Winograd"
    assert not np.array_equal(winograd[1], direct[1]), "the input gradient did not run Winograd"
    if o % 16 == 0:
        assert not np.array_equal(winograd[2], direct[2]), "the weight gradient did not run Winograd"
    else:  # output channels not in whole vectors: the direct kernel's weight gradient
        np.testing.assert_array_equal(winograd[2], direct[2])


def test_winograd_switch_is_a_flag():
    assert wick.backends.cpu.winograd_convolution is True
    with direct_only():
        assert wick.backends.cpu.winograd_convolution is False
    assert wick.backends.cpu.winograd_convolution is True


def test_direct_convolution_can_be_turned_off():
    assert wick.backends.cpu.direct_convolution is True
    assert wick.backends.cpu.get_cpu_capability() in ("AVX512", "AVX2", "DEFAULT")
    conv = nn.Conv2d(4, 8, 3, padding=1).eval()
    x = wick.randn(2, 4, 16, 16)
    with im2col_only():
        assert wick.backends.cpu.direct_convolution is False
        compiled, got, eager = frozen_pair(conv, x, winograd=False)
        assert compiled.convolutions == {"prepacked": 1, "winograd": 0, "direct": 0}
    direct, got_direct, _ = frozen_pair(conv, x, winograd=False)
    assert direct.convolutions == {"prepacked": 1, "winograd": 0, "direct": 1}
    close(got_direct, got, 1e-6)
    close(got, eager, 1e-6)


def frozen_pair(module, x, **options):
    with wick.no_grad():
        compiled = wick.compile(module, freeze=True, **options)
        compiled(x)  # the traced call runs eagerly
        return compiled, compiled(x).numpy(), module(x).numpy()


@pytest.mark.parametrize("channels,padding,size,bias,batch",
                         [(5, 1, (16, 16), True, 1), (64, 0, (15, 18), False, 2),
                          (5, 2, (9, 13), True, 1), (65, 1, (23, 7), True, 3)])
def test_winograd_equals_im2col_and_torch(channels, padding, size, bias, batch):
    """Batch 1 (transforms and GEMMs split over the threads) and batches (whole images per
    thread, used from 64 input channels)."""
    rng = np.random.default_rng(1)
    wick.manual_seed(1)  # the layer's weights, whatever ran before
    saved = wick.get_num_threads()
    wick.set_num_threads(2)  # the batch rule depends on the thread count
    try:
        check_winograd(rng, nn.Conv2d(channels, 12, 3, padding=padding, bias=bias).eval(), size,
                       bias, batch, padding)
    finally:
        wick.set_num_threads(saved)


def check_winograd(rng, conv, size, bias, batch, padding):
    channels = conv.weight.shape[1]
    x = wick.tensor(rng.standard_normal((batch, channels) + size).astype(np.float32))
    winograd, got, eager = frozen_pair(conv, x)
    assert winograd.convolutions == {"prepacked": 1, "winograd": 1, "direct": 0}
    with im2col_only():
        im2col, reference, eager_im2col = frozen_pair(conv, x, winograd=False)
    assert im2col.convolutions == {"prepacked": 1, "winograd": 0, "direct": 0}
    want = torch.nn.functional.conv2d(torch.from_numpy(x.numpy()),
                                      torch.from_numpy(conv.weight.detach().numpy()),
                                      torch.from_numpy(conv.bias.detach().numpy()) if bias else None,
                                      padding=padding).numpy()
    close(got, want, 1e-5)
    close(reference, want, 1e-5)
    # Eager code may take the direct convolution, which sums in another order than im2col: it is
    # held to torch like the others, and eager im2col to the prepacked im2col.
    close(eager, want, 1e-5)
    close(eager_im2col, reference, 1e-6)


def test_winograd_skipped_where_it_does_not_fit():
    """Strided, dilated, grouped, non-3x3 and too-few-tile convolutions keep im2col."""
    x = wick.randn(1, 4, 12, 12)
    for conv in (nn.Conv2d(4, 4, 3, stride=2), nn.Conv2d(4, 4, 3, dilation=2),
                 nn.Conv2d(4, 4, 3, groups=2), nn.Conv2d(4, 4, 5), nn.Conv2d(4, 4, 1)):
        compiled, got, eager = frozen_pair(conv.eval(), x)
        assert compiled.convolutions == {"prepacked": 1, "winograd": 0, "direct": 0}
        close(got, eager, 1e-6)
    compiled, _, _ = frozen_pair(nn.Conv2d(4, 4, 3, padding=1).eval(), wick.randn(1, 4, 7, 7))
    assert compiled.convolutions["winograd"] == 0  # 16 tiles of 2x2: im2col is as fast
    saved = wick.get_num_threads()
    wick.set_num_threads(2)
    try:  # a batch with fewer than 64 input channels
        compiled, _, _ = frozen_pair(nn.Conv2d(16, 16, 3).eval(), wick.randn(4, 16, 20, 20))
        assert compiled.convolutions == {"prepacked": 1, "winograd": 0, "direct": 1}
    finally:
        wick.set_num_threads(saved)


def test_nothing_is_prepacked_without_freeze_or_when_asked_not_to():
    conv = nn.Conv2d(3, 4, 3).eval()
    x = wick.randn(1, 3, 20, 20)
    with wick.no_grad():
        unfrozen = wick.compile(conv)
        unfrozen(x)
        assert unfrozen.convolutions == {"prepacked": 0, "winograd": 0, "direct": 0}
    compiled, got, eager = frozen_pair(conv, x, prepack_weights=False)
    assert compiled.convolutions == {"prepacked": 0, "winograd": 0, "direct": 0}
    close(got, eager, 1e-6)


def test_a_frozen_graph_keeps_the_weights_it_was_built_with():
    """freeze=True documents that later changes to the parameters are not seen."""
    conv = nn.Conv2d(3, 4, 3, padding=1).eval()
    x = wick.randn(1, 3, 20, 20)
    compiled, before, _ = frozen_pair(conv, x)
    with wick.no_grad():
        conv.weight.mul_(2.0)
        np.testing.assert_array_equal(compiled(x).numpy(), before)


def test_resnet18_frozen_equals_eager():
    model = resnet18(num_classes=10).eval()
    x = wick.randn(2, 3, 64, 64)
    compiled, got, eager = frozen_pair(model, x)
    assert compiled.convolutions["prepacked"] == 20
    # The four 3x3 stride-1 convolutions of the first stage (16x16 outputs, 64 tiles); the
    # second stage's 8x8 outputs have only 16 tiles and run directly; 4x4 rows are too short.
    assert compiled.convolutions["winograd"] == 4
    assert compiled.convolutions["direct"] == 4  # the second stage's, its strided one too
    close(got, eager, 1e-5)


POOLS = [(k, s, p, d, ceil) for k, s, p, d, ceil in
         itertools.product([1, 2, 3], [1, 2, 3], [0, 1], [1, 2], [False, True]) if p <= k // 2]


@pytest.mark.parametrize("k,s,p,d,ceil", POOLS)
def test_max_pool_without_indices_matches_torch(k, s, p, d, ceil):
    """No grad and no return_indices: the values-only path, NaNs and ties included."""
    rng = np.random.default_rng(2)
    a = rng.standard_normal((2, 3, 11, 9)).astype(np.float32)
    a[0, 0, 3, 4] = np.nan
    a[1, 2] = 0.0  # ties everywhere, as after a ReLU
    want = torch.nn.functional.max_pool2d(torch.from_numpy(a), k, s, p, d, ceil)
    with wick.no_grad():
        got = F.max_pool2d(wick.tensor(a), k, s, p, d, ceil)
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    values, indices = F.max_pool2d(wick.tensor(a), k, s, p, d, ceil, return_indices=True)
    want_values, want_indices = torch.nn.functional.max_pool2d(torch.from_numpy(a), k, s, p, d,
                                                               ceil, return_indices=True)
    np.testing.assert_array_equal(values.numpy(), want_values.numpy())
    np.testing.assert_array_equal(indices.numpy(), want_indices.numpy())


@pytest.mark.parametrize("k,s,p,d", [((2, 3), (1, 2), (1, 1), (1, 2)), ((3, 5), (2, 3), (1, 2), (2, 1))])
def test_max_pool_without_indices_on_wide_rows_and_rectangular_windows(k, s, p, d):
    # Rows wide enough that most windows lie inside them and take the vectorised pass across
    # the columns; the clipped ones at the edges take the per-output loop.
    rng = np.random.default_rng(3)
    a = rng.standard_normal((2, 3, 20, 37)).astype(np.float32)
    a[0, 0, 2, 7] = a[1, 1, 5, 30] = np.nan
    with wick.no_grad():
        got = F.max_pool2d(wick.tensor(a), k, s, p, d)
    want = torch.nn.functional.max_pool2d(torch.from_numpy(a), k, s, p, d)
    np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_max_pool_keeps_indices_when_a_gradient_needs_them():
    a = wick.randn(1, 2, 6, 6, requires_grad=True)
    out = F.max_pool2d(a, 2)
    out.sum().backward()
    assert a.grad.sum().item() == pytest.approx(18.0)
