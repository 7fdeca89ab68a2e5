"""wick.nn.functional's convolution, pooling, normalization and resampling functions (conv1d,
conv_transpose2d, the 1-D and adaptive-max pools, group_norm, instance_norm, pad, interpolate,
pixel_shuffle, unfold/fold, dropout2d, normalize, cosine_similarity, pairwise_distance,
embedding_bag) against PyTorch 1.13: values and input and weight gradients, non-contiguous
inputs, a float64 gradcheck of each, and bad inputs raising PyTorch's exception types with
messages naming the function. Also: the package's public names and where they say they live."""

import numpy as np
import pytest

import wick
from reference import check, needs_torch, torch  # noqa: F401


def F(m):
    return m.nn.functional


def gradcheck(fn, *shapes, seed=0):
    rng = np.random.default_rng(seed)
    inputs = tuple(wick.tensor(rng.standard_normal(s)).requires_grad_(True) for s in shapes)
    assert wick.autograd.gradcheck(fn, inputs)


# ---- conv1d and conv_transpose2d ----

@pytest.mark.parametrize("stride,padding,dilation,groups", [
    (1, 0, 1, 1), (2, 1, 1, 1), (1, 2, 2, 2), (3, 1, 2, 4)])
def test_conv1d(stride, padding, dilation, groups):
    check(lambda m, x, w, b: F(m).conv1d(x, w, b, stride, padding, dilation, groups),
          [(2, 4, 11), (8, 4 // groups, 3), (8,)])


def test_conv1d_unbatched_noncontiguous_and_same_padding():
    check(lambda m, x, w: F(m).conv1d(x, w), [(4, 9), (5, 4, 3)])
    check(lambda m, x, w: F(m).conv1d(x.transpose(1, 2), w, padding="same"),
          [(2, 9, 4), (5, 4, 3)])
    check(lambda m, x, w: F(m).conv1d(x, w, stride=(2,)), [(3, 9), (4, 3, 2)], noncontig=True)
    check(lambda m, x, w: F(m).conv1d(x, w, padding="same", dilation=3), [(2, 3, 9), (4, 3, 2)])
    check(lambda m, x, w: F(m).conv1d(x, w, padding="valid"), [(2, 3, 9), (4, 3, 2)])


@pytest.mark.parametrize("stride,padding,output_padding,groups,dilation", [
    (1, 0, 0, 1, 1), (2, 1, 1, 1, 1), ((2, 3), (1, 0), (1, 2), 1, 1), (2, 1, 0, 2, 2),
    (3, 2, 1, 4, (1, 2))])
def test_conv_transpose2d(stride, padding, output_padding, groups, dilation):
    check(lambda m, x, w, b: F(m).conv_transpose2d(x, w, b, stride, padding, output_padding,
                                                   groups, dilation),
          [(2, 4, 5, 4), (4, 8 // groups, 3, 2), (8,)])


def test_conv_transpose2d_unbatched_noncontiguous_no_bias():
    check(lambda m, x, w: F(m).conv_transpose2d(x, w, stride=2), [(3, 4, 5), (3, 2, 3, 3)],
          noncontig=True)


def test_conv_gradcheck():
    Fw = wick.nn.functional
    gradcheck(lambda x, w, b: Fw.conv1d(x, w, b, 2, 1), (2, 3, 7), (4, 3, 3), (4,))
    gradcheck(lambda x, w, b: Fw.conv_transpose2d(x, w, b, 2, 1, 1), (1, 2, 3, 3),
              (2, 3, 3, 3), (3,))


def test_conv_bad_inputs():
    Fw = wick.nn.functional
    with pytest.raises(RuntimeError, match=r"conv1d.*\(1, 4, 3, 3\)"):
        Fw.conv1d(wick.randn(1, 4, 3, 3), wick.randn(4, 2, 3))
    with pytest.raises(RuntimeError, match="conv1d.*groups=3"):
        Fw.conv1d(wick.randn(1, 4, 5), wick.randn(4, 2, 3), groups=3)
    with pytest.raises(RuntimeError, match="conv_transpose2d.*output padding must be smaller"):
        Fw.conv_transpose2d(wick.randn(1, 4, 3, 3), wick.randn(4, 2, 3, 3), stride=2,
                            output_padding=2)
    with pytest.raises(RuntimeError, match="conv_transpose2d.*3 channels"):
        Fw.conv_transpose2d(wick.randn(1, 3, 3, 3), wick.randn(4, 2, 3, 3))
    with pytest.raises(RuntimeError, match="conv_transpose2d.*too small"):
        Fw.conv_transpose2d(wick.randn(1, 4, 1, 1), wick.randn(4, 2, 1, 1), padding=1)


# ---- pooling ----

@pytest.mark.parametrize("k,s,p,d,ceil", [(2, None, 0, 1, False), (3, 2, 1, 1, True),
                                          (3, 1, 1, 2, False), (2, 3, 1, 1, True)])
def test_max_pool1d(k, s, p, d, ceil):
    check(lambda m, x: F(m).max_pool1d(x, k, s, p, d, ceil, return_indices=True), [(2, 3, 10)])
    check(lambda m, x: F(m).max_pool1d(x, k, s, p, d, ceil), [(3, 9)], noncontig=True)


@pytest.mark.parametrize("k,s,p,ceil,count", [(2, None, 0, False, True), (3, 2, 1, True, False),
                                              (3, 1, 1, False, True), (4, 3, 2, True, True)])
def test_avg_pool1d(k, s, p, ceil, count):
    check(lambda m, x: F(m).avg_pool1d(x, k, s, p, ceil, count), [(2, 3, 10)])


@pytest.mark.parametrize("out", [1, 3, 4, 7])
def test_adaptive_avg_pool1d(out):
    check(lambda m, x: F(m).adaptive_avg_pool1d(x, out), [(2, 3, 10)])
    check(lambda m, x: F(m).adaptive_avg_pool1d(x, (out,)), [(3, 7)], noncontig=True)


@pytest.mark.parametrize("out", [1, 2, (3, 4), (5, 2), (None, 3), 7])
def test_adaptive_max_pool2d(out):
    check(lambda m, x: F(m).adaptive_max_pool2d(x, out, return_indices=True), [(2, 3, 7, 6)])
    check(lambda m, x: F(m).adaptive_max_pool2d(x, out), [(3, 6, 5)], noncontig=True)


def test_pool_gradcheck():
    Fw = wick.nn.functional
    gradcheck(lambda x: Fw.max_pool1d(x, 3, 2, 1), (2, 2, 9))
    gradcheck(lambda x: Fw.avg_pool1d(x, 3, 2, 1, True, False), (2, 2, 9))
    gradcheck(lambda x: Fw.adaptive_avg_pool1d(x, 4), (2, 2, 9))
    gradcheck(lambda x: Fw.adaptive_max_pool2d(x, (2, 3)), (2, 2, 5, 7))


def test_pool_bad_inputs():
    Fw = wick.nn.functional
    with pytest.raises(RuntimeError, match="max_pool1d.*pad should be at most half"):
        Fw.max_pool1d(wick.randn(1, 3, 4), 2, padding=2)
    with pytest.raises(RuntimeError, match=r"avg_pool1d.*\(1, 1, 3, 4\)"):
        Fw.avg_pool1d(wick.randn(1, 1, 3, 4), 2)
    with pytest.raises(RuntimeError, match="max_pool1d.*too small"):
        Fw.max_pool1d(wick.randn(1, 3, 2), 3)
    with pytest.raises(RuntimeError, match="avg_pool1d.*too small.*ceil_mode"):
        Fw.avg_pool1d(wick.randn(1, 3, 1), 3, ceil_mode=True)
    with pytest.raises(RuntimeError, match=r"adaptive_max_pool2d.*\(1, 4, 3, 3, 3\)"):
        Fw.adaptive_max_pool2d(wick.randn(1, 4, 3, 3, 3), 2)
    with pytest.raises(RuntimeError, match="adaptive_max_pool2d.*output_size must be positive"):
        Fw.adaptive_max_pool2d(wick.randn(1, 4, 3, 3), 0)


# ---- normalization ----

@pytest.mark.parametrize("shape,groups", [((2, 6, 5), 3), ((3, 4, 3, 5), 2), ((2, 4), 4),
                                          ((2, 6, 2, 2, 3), 1)])
def test_group_norm(shape, groups):
    c = shape[1]
    check(lambda m, x, w, b: F(m).group_norm(x, groups, w, b, 1e-3), [shape, (c,), (c,)])
    check(lambda m, x: F(m).group_norm(x, groups), [shape], noncontig=True)


def test_instance_norm_with_and_without_running_stats():
    check(lambda m, x, w, b: F(m).instance_norm(x, weight=w, bias=b), [(2, 3, 4, 5), (3,), (3,)])
    check(lambda m, x: F(m).instance_norm(x), [(2, 3, 7)], noncontig=True)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 3, 5, 6))
    rm, rv = rng.standard_normal(3), rng.random(3) + 0.5
    for use_input_stats in (True, False):
        stats = {}
        for mod in (wick, torch):
            mean, var = mod.tensor(rm.copy()), mod.tensor(rv.copy())
            y = F(mod).instance_norm(mod.tensor(x), mean, var, use_input_stats=use_input_stats,
                                     momentum=0.3)
            stats[mod] = [t.detach().numpy() for t in (y, mean, var)]
        for a, b in zip(stats[wick], stats[torch]):
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-8)


def test_norm_gradcheck():
    Fw = wick.nn.functional
    gradcheck(lambda x, w, b: Fw.group_norm(x, 2, w, b), (2, 4, 3), (4,), (4,))
    gradcheck(lambda x, w, b: Fw.instance_norm(x, weight=w, bias=b), (2, 3, 4), (3,), (3,))


def test_norm_bad_inputs():
    Fw = wick.nn.functional
    with pytest.raises(RuntimeError, match="group_norm.*num_groups=4"):
        Fw.group_norm(wick.randn(1, 6, 3), 4)
    with pytest.raises(RuntimeError, match=r"group_norm.*\[6\]"):
        Fw.group_norm(wick.randn(1, 6, 3), 3, wick.ones(5))
    with pytest.raises(ValueError, match="instance_norm.*more than 1 spatial element"):
        Fw.instance_norm(wick.randn(2, 3, 1))


# ---- pad ----

@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
@pytest.mark.parametrize("shape,pads", [((2, 3, 5), (2, 1)), ((3, 5), (0, 3)),
                                        ((2, 3, 4, 5), (1, 2, 3, 0)), ((3, 4, 5), (2, 2, 1, 3)),
                                        ((1, 2, 3, 4, 5), (1, 0, 2, 1, 1, 2)),
                                        ((2, 3, 4, 5), (-1, 2, 1, -2))])
def test_pad(mode, shape, pads):
    if mode == "circular" and len(shape) != len(pads) // 2 + 2:
        with pytest.raises(RuntimeError, match="pad.*Invalid padding size"):
            wick.nn.functional.pad(wick.randn(*shape), pads, mode)
        return
    check(lambda m, x: F(m).pad(x, pads, mode), [shape])
    check(lambda m, x: F(m).pad(x, pads, mode), [shape], noncontig=True)


def test_pad_constant_value_and_many_dims():
    check(lambda m, x: F(m).pad(x, (1, 2, 0, 1, 2, 0, 1, 1), value=-2.5), [(2, 3, 4, 5)])
    check(lambda m, x: F(m).pad(x, (1, 1), "constant", 3.0), [(4,)])


def test_pad_cropping_a_dim_away():
    # Circular padding and 2-D reflect / replicate padding may crop a dim to nothing; 1-D
    # reflect and constant padding may not (PyTorch raises RuntimeError).
    check(lambda m, x: F(m).pad(x, (-1, -1, 1, 0), "circular"), [(2, 3, 4, 2)])
    check(lambda m, x: F(m).pad(x, (-1, -1, 2, 1), "reflect"), [(2, 3, 4, 2)])
    for mode in ("reflect", "constant"):
        with pytest.raises(RuntimeError, match="pad.*plus negative padding -2 and -1"):
            wick.nn.functional.pad(wick.randn(2, 5, 3), (-2, -1), mode)


def test_pad_gradcheck():
    Fw = wick.nn.functional
    for mode in ("constant", "reflect", "replicate", "circular"):
        gradcheck(lambda x, mode=mode: Fw.pad(x, (2, 1, 1, 2), mode), (1, 2, 3, 4))


def test_pad_bad_inputs():
    Fw = wick.nn.functional
    with pytest.raises(RuntimeError, match=r"pad.*Padding size should be less than.*\(3, 3\)"):
        Fw.pad(wick.randn(1, 2, 3), (3, 3), mode="reflect")
    with pytest.raises(RuntimeError, match="pad.*divisible by 2"):
        Fw.pad(wick.randn(1, 2, 3), (1,))
    with pytest.raises(RuntimeError, match="pad.*too large"):
        Fw.pad(wick.randn(1, 2, 3), (1,) * 8)
    with pytest.raises(NotImplementedError, match="pad.*Only 2D, 3D, 4D, 5D"):
        Fw.pad(wick.randn(3), (1, 1), mode="reflect")
    with pytest.raises(RuntimeError, match="pad.*wrapping around more than once"):
        Fw.pad(wick.randn(1, 2, 3), (4, 1), mode="circular")
    with pytest.raises(NotImplementedError, match="Unrecognised padding mode foo"):
        Fw.pad(wick.randn(1, 2, 3), (1, 1), mode="foo")
    with pytest.raises(RuntimeError, match="pad.*negative output size"):
        Fw.pad(wick.randn(1, 2, 3), (-2, -2))


# ---- interpolate ----

@pytest.mark.parametrize("kwargs", [dict(size=(7, 9)), dict(size=(2, 3)), dict(scale_factor=2),
                                    dict(scale_factor=(1.5, 0.7)), dict(size=5),
                                    dict(scale_factor=1.7, recompute_scale_factor=True)])
@pytest.mark.parametrize("mode,align", [("nearest", None), ("bilinear", False),
                                        ("bilinear", True), ("nearest-exact", None),
                                        ("area", None)])
def test_interpolate_2d(kwargs, mode, align):
    if mode == "area" and "recompute_scale_factor" in kwargs:
        kwargs = dict(kwargs, recompute_scale_factor=None)
    check(lambda m, x: F(m).interpolate(x, mode=mode, align_corners=align, **kwargs),
          [(2, 3, 4, 5)])


@pytest.mark.parametrize("mode,align", [("nearest", None), ("linear", False), ("linear", True)])
def test_interpolate_1d_3d_and_float32(mode, align):
    check(lambda m, x: F(m).interpolate(x, size=11, mode=mode, align_corners=align), [(2, 3, 4)],
          noncontig=True)
    check(lambda m, x: F(m).interpolate(x, scale_factor=2.5, mode=mode, align_corners=align),
          [(2, 3, 4)], dtype=np.float32, atol=1e-5)
    tri = "trilinear" if mode == "linear" else mode
    check(lambda m, x: F(m).interpolate(x, size=(3, 5, 2), mode=tri, align_corners=align),
          [(1, 2, 2, 3, 4)])


@pytest.mark.parametrize("channels", [1, 3])
@pytest.mark.parametrize("mode", ["nearest", "nearest-exact", "bilinear"])
def test_interpolate_scale_factor_that_keeps_or_doubles_a_size(channels, mode):
    # PyTorch 1.13 copies a dim of unchanged size in its linear modes, and in its nearest modes
    # only through the channels-last kernel it uses for one channel: (1.08, 2.09) on (4, 4).
    # Values only: PyTorch's nearest backward takes the shortcuts where its forward does not, so
    # its gradient is not the gradient of its output there; wick's is (gradchecked below).
    grad = mode == "bilinear"
    check(lambda m, x: F(m).interpolate(x, scale_factor=(1.08, 2.09), mode=mode),
          [(2, channels, 4, 4)], dtype=np.float32, grad=grad)
    one_d = "linear" if mode == "bilinear" else mode
    check(lambda m, x: F(m).interpolate(x, scale_factor=1.08, mode=one_d), [(2, channels, 4)],
          dtype=np.float32, grad=grad)
    gradcheck(lambda x: wick.nn.functional.interpolate(x, scale_factor=(1.08, 2.09), mode=mode),
              (1, channels, 4, 3))


def test_interpolate_gradcheck():
    Fw = wick.nn.functional
    gradcheck(lambda x: Fw.interpolate(x, size=(5, 3), mode="bilinear"), (1, 2, 3, 4))
    gradcheck(lambda x: Fw.interpolate(x, scale_factor=2, mode="bilinear", align_corners=True),
              (1, 2, 3, 2))
    gradcheck(lambda x: Fw.interpolate(x, size=7, mode="nearest"), (1, 2, 3))
    gradcheck(lambda x: Fw.interpolate(x, size=5, mode="linear"), (1, 2, 3))


def test_interpolate_bad_inputs():
    Fw = wick.nn.functional
    x = wick.randn(1, 2, 3, 4)
    with pytest.raises(RuntimeError, match="linear mode needs 3D input"):
        Fw.interpolate(x, size=(5, 6), mode="linear")
    with pytest.raises(ValueError, match="only one of size or scale_factor"):
        Fw.interpolate(x, size=(5, 6), scale_factor=2)
    with pytest.raises(ValueError, match="either size or scale_factor"):
        Fw.interpolate(x)
    with pytest.raises(ValueError, match="same number of spatial dimensions"):
        Fw.interpolate(x, size=(5,))
    with pytest.raises(ValueError, match="align_corners option can only be set"):
        Fw.interpolate(x, size=(5, 6), align_corners=True)
    with pytest.raises(NotImplementedError, match="bicubic"):
        Fw.interpolate(x, size=(5, 6), mode="bicubic")
    with pytest.raises(RuntimeError, match="interpolate.*greater than 0"):
        Fw.interpolate(x, size=(0, 6))


# ---- pixel_shuffle, unfold / fold ----

def test_pixel_shuffle_and_unshuffle():
    check(lambda m, x: F(m).pixel_shuffle(x, 2), [(2, 8, 3, 4)])
    check(lambda m, x: F(m).pixel_shuffle(x, 3), [(2, 3, 9, 2, 2)], noncontig=True)
    check(lambda m, x: F(m).pixel_unshuffle(x, 2), [(2, 3, 4, 6)])
    check(lambda m, x: F(m).pixel_unshuffle(x, 3), [(2, 6, 3)], noncontig=True)
    gradcheck(lambda x: wick.nn.functional.pixel_shuffle(x, 2), (1, 4, 2, 3))
    gradcheck(lambda x: wick.nn.functional.pixel_unshuffle(x, 2), (1, 2, 4, 2))
    with pytest.raises(RuntimeError, match="divisible by the square of upscale_factor.*=5"):
        wick.nn.functional.pixel_shuffle(wick.randn(1, 5, 3, 4), 2)
    with pytest.raises(RuntimeError, match="pixel_unshuffle.*height.*=3"):
        wick.nn.functional.pixel_unshuffle(wick.randn(1, 5, 3, 4), 2)


@pytest.mark.parametrize("k,d,p,s", [(2, 1, 0, 1), ((2, 3), (1, 2), (1, 0), (2, 1)),
                                     (3, 1, 1, 2)])
def test_unfold_and_fold(k, d, p, s):
    check(lambda m, x: F(m).unfold(x, k, d, p, s), [(2, 3, 6, 7)])
    check(lambda m, x: F(m).unfold(x, k, d, p, s), [(3, 6, 7)], noncontig=True)
    cols = torch.nn.functional.unfold(torch.zeros(2, 3, 6, 7), k, d, p, s).shape
    check(lambda m, x: F(m).fold(x, (6, 7), k, d, p, s), [tuple(cols)])
    check(lambda m, x: F(m).fold(x, (6, 7), k, d, p, s), [tuple(cols[1:])], noncontig=True)


def test_unfold_fold_gradcheck_and_bad_inputs():
    Fw = wick.nn.functional
    gradcheck(lambda x: Fw.unfold(x, 2, padding=1, stride=2), (1, 2, 3, 4))
    gradcheck(lambda x: Fw.fold(x, (3, 4), 2, padding=1, stride=2), (1, 8, 6))
    with pytest.raises(RuntimeError, match="unfold.*smaller than the dilated kernel"):
        Fw.unfold(wick.randn(1, 3, 1, 1), 2)
    with pytest.raises(RuntimeError, match="fold.*divisible by the product of kernel_size"):
        Fw.fold(wick.randn(1, 7, 4), (3, 3), 2)
    with pytest.raises(RuntimeError, match="fold.*sliding blocks 4, but got input.size.2.=5"):
        Fw.fold(wick.randn(1, 12, 5), (3, 3), 2)


# ---- dropout2d, normalize, distances ----

def test_dropout2d_drops_whole_channels():
    x = wick.ones(8, 16, 3, 4)
    y = wick.nn.functional.dropout2d(x, 0.5)
    per_channel = y.reshape(8, 16, 12)
    assert ((per_channel == 0).all(2) | (per_channel == 2).all(2)).all().item()
    dropped = (per_channel == 0).all(2).sum().item()
    assert 20 < dropped < 108  # 128 channels, p = 0.5
    assert wick.nn.functional.dropout2d(x, 0.5, training=False) is x or \
        (wick.nn.functional.dropout2d(x, 0.5, training=False) == x).all().item()
    x.requires_grad_(True)
    y = wick.nn.functional.dropout2d(x, 0.25)
    y.sum().backward()
    assert (x.grad == (y.detach() != 0) * (1 / 0.75)).all().item()
    with pytest.raises(ValueError, match="between 0 and 1"):
        wick.nn.functional.dropout2d(x, 1.5)


def test_normalize_cosine_pairwise():
    check(lambda m, x: F(m).normalize(x), [(3, 4, 5)])
    check(lambda m, x: F(m).normalize(x, p=1.0, dim=-1), [(3, 4)], noncontig=True)
    check(lambda m, a, b: F(m).cosine_similarity(a, b), [(3, 4, 5), (3, 4, 5)])
    check(lambda m, a, b: F(m).cosine_similarity(a, b, dim=-1), [(3, 1, 5), (4, 5)],
          noncontig=True)
    check(lambda m, a, b: F(m).pairwise_distance(a, b), [(3, 5), (3, 5)])
    check(lambda m, a, b: F(m).pairwise_distance(a, b, 1.0, 1e-3, True), [(2, 3, 5), (3, 5)])
    check(lambda m, a, b: F(m).pairwise_distance(a, b, 3.0), [(4, 5), (1, 5)], noncontig=True)
    Fw = wick.nn.functional
    gradcheck(lambda x: Fw.normalize(x, dim=0), (3, 4))
    gradcheck(lambda a, b: Fw.cosine_similarity(a, b), (3, 4), (3, 4))
    gradcheck(lambda a, b: Fw.pairwise_distance(a, b), (3, 4), (3, 4))
    with pytest.raises(RuntimeError, match="cosine_similarity"):
        Fw.cosine_similarity(wick.randn(3, 4), wick.randn(2, 4))


# ---- embedding_bag ----

def _bag_case(mod, weight, mode, **kwargs):
    idx = mod.tensor([1, 2, 4, 5, 4, 3, 2, 9, 0])
    offsets = mod.tensor([0, 2, 2, 5])  # bag 1 is empty
    return F(mod).embedding_bag(idx, weight, offsets, mode=mode, **kwargs)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag(mode):
    check(lambda m, w: _bag_case(m, w, mode), [(10, 3)])
    check(lambda m, w: _bag_case(m, w, mode, padding_idx=4), [(10, 3)])
    check(lambda m, w: F(m).embedding_bag(m.tensor([[1, 2, 3], [4, 1, 0]]), w, mode=mode),
          [(6, 4)])
    check(lambda m, w: F(m).embedding_bag(m.tensor([1, 2, 3, 4, 5]), w, m.tensor([0, 1, 3, 5]),
                                          mode=mode, include_last_offset=True), [(6, 2)])


def test_embedding_bag_per_sample_weights_gradcheck_and_bad_inputs():
    check(lambda m, w, psw: _bag_case(m, w, "sum", per_sample_weights=psw), [(10, 3), (9,)])
    Fw = wick.nn.functional
    idx, offsets = wick.tensor([1, 2, 0, 3]), wick.tensor([0, 1])
    gradcheck(lambda w: Fw.embedding_bag(idx, w, offsets, mode="max"), (4, 3))
    gradcheck(lambda w, p: Fw.embedding_bag(idx, w, offsets, mode="sum", per_sample_weights=p),
              (4, 3), (4,))
    with pytest.raises(RuntimeError, match="offsets.0. has to be 0"):
        Fw.embedding_bag(wick.tensor([1, 2]), wick.randn(3, 4), wick.tensor([1]))
    with pytest.raises(NotImplementedError, match="only supported for mode='sum'"):
        Fw.embedding_bag(idx, wick.randn(4, 3), offsets, mode="mean",
                         per_sample_weights=wick.ones(4))
    with pytest.raises(ValueError, match="offsets has to be None"):
        Fw.embedding_bag(wick.tensor([[1, 2]]), wick.randn(3, 4), wick.tensor([0]))
    with pytest.raises(IndexError, match="embedding_bag.*index out of range"):
        Fw.embedding_bag(wick.tensor([1, 7]), wick.randn(3, 4), wick.tensor([0]))


# ---- the package ----

PUBLIC_NAMES = sorted("""
    adaptive_avg_pool1d adaptive_avg_pool2d adaptive_max_pool2d adaptive_max_pool2d_with_indices
    avg_pool1d avg_pool2d batch_norm batch_norm_relu binary_cross_entropy
    binary_cross_entropy_with_logits conv1d conv2d conv_transpose2d cosine_similarity
    cross_entropy dropout dropout2d elu embedding embedding_bag fold gelu group_norm hardsigmoid
    hardswish hardtanh huber_loss instance_norm interpolate kl_div l1_loss layer_norm leaky_relu
    linear log_softmax max_pool1d max_pool1d_with_indices max_pool2d mish mse_loss
    multi_head_attention_forward nll_loss normalize one_hot pad pairwise_distance pixel_shuffle
    pixel_unshuffle relu relu6 scaled_dot_product_attention selu sigmoid silu smooth_l1_loss
    softmax softplus tanh unfold upsample upsample_bilinear upsample_nearest""".split())


def test_public_names_are_functions_of_wick_nn_functional():
    import wick.nn.functional as Fw
    public = sorted(n for n in dir(Fw) if not n.startswith("_"))
    assert public == PUBLIC_NAMES  # the files by kind are private; no submodule shows
    for name in PUBLIC_NAMES:
        fn = getattr(Fw, name)
        assert callable(fn), name
        # Note [functional's private files]: Python functions name the public module; the
        # C++ ones keep wick._C's, which pickle follows (wick/_pickle_io.py).
        assert fn.__module__ in ("wick.nn.functional", "wick._C._nn", "wick._C._attention",
                                 "wick._C"), (name, fn.__module__)
    assert Fw.pad.__module__ == "wick.nn.functional"
    assert Fw.dropout is wick._C._nn.dropout


def test_a_python_function_pickles_by_its_public_name():
    import pickle
    import wick.nn.functional as Fw
    data = pickle.dumps(Fw.interpolate)
    assert b"wick.nn.functional" in data and b"_resample" not in data
    assert pickle.loads(data) is Fw.interpolate
