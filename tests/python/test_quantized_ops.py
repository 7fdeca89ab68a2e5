"""int8 inference ops (wick._C._quantized, core/ops/quantized.h) and the int8 dtype.

The ops are compared with PyTorch 1.13's quantized engine (onednn; Debian's torch has no
fbgemm), which requantizes with its own arithmetic, so outputs may differ by one unit; and,
bit for bit, with the float32 formula the ops document, written in NumPy (what the Python lab
reproduces), on every int8 GEMM this machine has."""
import os

import numpy as np
import pytest

import wick
from wick import _C
from reference import needs_torch, torch
from torch_quantization import torch_safe_weights

Q = _C._quantized


@pytest.fixture(autouse=True)
def automatic_backend():
    saved = os.environ.pop("WICK_INT8_GEMM", None)
    yield
    Q.set_gemm_backend(None)
    if saved is not None:
        os.environ["WICK_INT8_GEMM"] = saved


@pytest.fixture(params=Q.gemm_backends())
def backend(request):
    Q.set_gemm_backend(request.param)
    assert Q.gemm_backend() == request.param
    return request.param


# ---- the int8 dtype ---------------------------------------------------------------------------

def test_int8_dtype_basics():
    assert repr(wick.int8) == "wick.int8"
    assert wick.int8.itemsize == 1 and not wick.int8.is_floating_point
    t = wick.tensor([-128, -1, 0, 127], dtype=wick.int8)
    assert t.dtype is wick.int8
    assert t.tolist() == [-128, -1, 0, 127]
    assert "dtype=wick.int8" in repr(t) or "dtype=int8" in repr(t)
    assert wick.zeros(3, dtype=wick.int8).tolist() == [0, 0, 0]
    assert wick.full((2,), -7, dtype=wick.int8).tolist() == [-7, -7]
    assert wick.empty(4, dtype=wick.int8).shape == (4,)
    assert (t < 0).tolist() == [True, True, False, False]
    assert wick.equal(t, t.clone())
    assert (t + t).dtype is wick.int8
    assert (t + wick.tensor([1, 2, 3, 4], dtype=wick.uint8)).dtype is wick.int32


def test_int8_casts_like_pytorch():
    t = wick.tensor([-128, -1, 0, 127], dtype=wick.int8)
    assert t.float().tolist() == [-128.0, -1.0, 0.0, 127.0]
    assert t.to(wick.uint8).tolist() == [128, 255, 0, 127]
    assert t.long().tolist() == [-128, -1, 0, 127]
    assert t.float().char().dtype is wick.int8
    assert wick.tensor([200, -129, 5]).to(wick.int8).tolist() == [-56, 127, 5]
    assert wick.tensor([-3.7, 2.9]).to(wick.int8).tolist() == [-3, 2]
    if torch is not None:
        src = [-3.7, 2.9, 100.0, -100.0]
        assert wick.tensor(src).to(wick.int8).tolist() == torch.tensor(src).to(torch.int8).tolist()


def test_int8_numpy_both_ways():
    a = np.array([[-5, 3], [127, -128]], dtype=np.int8)
    t = wick.from_numpy(a)
    assert t.dtype is wick.int8 and t.tolist() == a.tolist()
    back = t.numpy()
    assert back.dtype == np.int8
    np.testing.assert_array_equal(back, a)
    assert wick.tensor(a).dtype is wick.int8
    assert wick.zeros(2, dtype=np.dtype("int8")).dtype is wick.int8


def test_int8_safetensors_round_trip(tmp_path):
    t = wick.tensor([-128, 5, 127], dtype=wick.int8)
    path = str(tmp_path / "w.safetensors")
    wick.save({"w": t}, path)
    raw = open(path, "rb").read()
    assert b'"I8"' in raw
    back = wick.load(path)["w"]
    assert back.dtype is wick.int8 and back.tolist() == t.tolist()


# ---- quantize / dequantize ----------------------------------------------------------------------

def test_quantize_rounds_half_to_even_and_saturates():
    x = wick.tensor([0.25, 0.75, 1.25, -0.25, 100.0, -100.0])
    assert Q.quantize_per_tensor(x, 0.5, 10).tolist() == [10, 12, 12, 10, 210, 0]
    q8 = Q.quantize_per_tensor(x, 0.5, 0, wick.int8)
    assert q8.dtype is wick.int8 and q8.tolist() == [0, 2, 2, 0, 127, -128]
    assert Q.dequantize(wick.tensor([0, 10, 255], dtype=wick.uint8), 0.5, 10).tolist() == [
        -5.0, 0.0, 122.5]


@needs_torch
@pytest.mark.parametrize("dtype,tdtype,zp", [("uint8", "quint8", 0), ("uint8", "quint8", 131),
                                             ("int8", "qint8", -3)])
def test_quantize_matches_pytorch(dtype, tdtype, zp):
    x = np.random.default_rng(0).standard_normal((7, 33)).astype(np.float32) * 3
    scale = 0.0371
    ours = Q.quantize_per_tensor(wick.tensor(x), scale, zp, getattr(wick, dtype)).numpy()
    theirs = torch.quantize_per_tensor(torch.tensor(x), scale, zp, getattr(torch, tdtype))
    assert np.abs(ours.astype(int) - theirs.int_repr().numpy().astype(int)).max() <= 1
    # Dequantizing PyTorch's bytes gives PyTorch's floats: float(q - zero_point) * float(scale).
    np.testing.assert_array_equal(
        Q.dequantize(wick.tensor(theirs.int_repr().numpy()), scale, zp).numpy(),
        theirs.dequantize().numpy())


# ---- the NumPy statement of the requantization (bit for bit) -------------------------------------

def numpy_requantize(acc, in_scale, w_scale, bias, out_scale, out_zp, relu):
    f32 = np.float32
    y = acc.astype(f32) * (f32(in_scale) * w_scale.astype(f32))
    if bias is not None:
        y = y + bias.astype(f32)
    q = np.rint(y / f32(out_scale)) + f32(out_zp)
    return np.clip(q, out_zp if relu else 0, 255).astype(np.uint8)


def random_case(rng, rows, depth, out):
    x = rng.integers(0, 256, (rows, depth), dtype=np.uint8)
    w = rng.integers(-128, 128, (out, depth), dtype=np.int8)
    w_scale = rng.uniform(0.005, 0.03, out).astype(np.float32)
    bias = rng.uniform(-2, 2, out).astype(np.float32)
    return x, w, w_scale, bias


@pytest.mark.parametrize("rows,depth,out", [(1, 1, 1), (64, 288, 64), (5, 9216 // 16, 10),
                                            (37, 129, 33)])
@pytest.mark.parametrize("zp,relu", [(0, False), (128, True), (255, False)])
def test_linear_is_the_documented_float32_formula(backend, rows, depth, out, zp, relu):
    rng = np.random.default_rng(rows * 1000 + depth)
    x, w, w_scale, bias = random_case(rng, rows, depth, out)
    in_scale, out_scale, out_zp = 0.05, 0.05 * 2.5 * depth ** 0.5, 97
    got = Q.linear(wick.tensor(x), wick.tensor(w), wick.tensor(w_scale), wick.tensor(bias),
                   in_scale, zp, out_scale, out_zp, relu=relu).numpy()
    acc = (x.astype(np.int64) - zp) @ w.astype(np.int64).T
    want = numpy_requantize(acc, in_scale, w_scale, bias, out_scale, out_zp, relu)
    np.testing.assert_array_equal(got, want)
    assert 0 < np.count_nonzero((want > 0) & (want < 255))


def test_linear_keeps_leading_dims_and_takes_no_bias(backend):
    rng = np.random.default_rng(1)
    x, w, w_scale, _ = random_case(rng, 6, 20, 7)
    out = Q.linear(wick.tensor(x.reshape(2, 3, 20)), wick.tensor(w), wick.tensor(w_scale), None,
                   0.1, 3, 1.0, 50)
    assert out.shape == (2, 3, 7) and out.dtype is wick.uint8
    acc = (x.astype(np.int64) - 3) @ w.astype(np.int64).T
    np.testing.assert_array_equal(out.numpy().reshape(6, 7),
                                  numpy_requantize(acc, 0.1, w_scale, None, 1.0, 50, False))


# ---- against PyTorch's quantized layers ---------------------------------------------------------

def torch_weight(w, w_scale):
    return torch._make_per_channel_quantized_tensor(
        torch.tensor(w), torch.tensor(w_scale, dtype=torch.float64),
        torch.zeros(len(w_scale), dtype=torch.long), 0)


@needs_torch
@pytest.mark.parametrize("relu", [False, True])
def test_linear_matches_pytorch(backend, relu):
    torch.backends.quantized.engine = "onednn"
    import torch.ao.nn.quantized as nnq
    import torch.nn.intrinsic.quantized as nniq  # torch 1.13: not yet under torch.ao
    rng = np.random.default_rng(3)
    x, w, w_scale, bias = random_case(rng, 16, 96, 24)
    w = torch_safe_weights(w)
    in_scale, in_zp, out_scale, out_zp = 0.02, 120, 0.4, 64
    layer = (nniq.LinearReLU if relu else nnq.Linear)(96, 24)
    layer.set_weight_bias(torch_weight(w, w_scale), torch.tensor(bias))
    layer.scale, layer.zero_point = out_scale, out_zp
    qx = torch._make_per_tensor_quantized_tensor(torch.tensor(x), in_scale, in_zp)
    theirs = layer(qx).int_repr().numpy().astype(int)
    ours = Q.linear(wick.tensor(x), wick.tensor(w), wick.tensor(w_scale), wick.tensor(bias),
                    in_scale, in_zp, out_scale, out_zp, relu=relu).numpy().astype(int)
    assert np.abs(ours - theirs).max() <= 1
    assert np.mean(ours == theirs) > 0.9


@needs_torch
@pytest.mark.parametrize("cfg", [
    dict(c=1, o=8, k=3, stride=1, padding=0, dilation=1, groups=1, relu=True),   # MNIST conv1
    dict(c=8, o=16, k=3, stride=1, padding=0, dilation=1, groups=1, relu=True),  # conv2-like
    dict(c=6, o=9, k=3, stride=2, padding=1, dilation=1, groups=3, relu=False),
    dict(c=4, o=4, k=3, stride=1, padding=2, dilation=2, groups=1, relu=False),
    dict(c=16, o=12, k=1, stride=1, padding=0, dilation=1, groups=1, relu=False),
])
def test_conv2d_matches_pytorch(backend, cfg):
    torch.backends.quantized.engine = "onednn"
    import torch.ao.nn.quantized as nnq
    import torch.nn.intrinsic.quantized as nniq  # torch 1.13: not yet under torch.ao
    rng = np.random.default_rng(cfg["o"])
    c, o, k, groups = cfg["c"], cfg["o"], cfg["k"], cfg["groups"]
    x = rng.integers(0, 256, (3, c, 11, 10), dtype=np.uint8)
    w = torch_safe_weights(rng.integers(-128, 128, (o, c // groups, k, k), dtype=np.int8))
    w_scale = rng.uniform(0.005, 0.03, o).astype(np.float32)
    bias = rng.uniform(-2, 2, o).astype(np.float32)
    in_scale, in_zp, out_zp = 0.03, 17, 70
    out_scale = in_scale * 2.5 * (c // groups * k * k) ** 0.5
    cls = nniq.ConvReLU2d if cfg["relu"] else nnq.Conv2d
    layer = cls(c, o, k, stride=cfg["stride"], padding=cfg["padding"], dilation=cfg["dilation"],
                groups=groups)
    layer.set_weight_bias(torch_weight(w, w_scale), torch.tensor(bias))
    layer.scale, layer.zero_point = out_scale, out_zp
    qx = torch._make_per_tensor_quantized_tensor(torch.tensor(x), in_scale, in_zp)
    theirs = layer(qx).int_repr().numpy().astype(int)
    ours = Q.conv2d(wick.tensor(x), wick.tensor(w), wick.tensor(w_scale), wick.tensor(bias),
                    cfg["stride"], cfg["padding"], cfg["dilation"], groups, in_scale, in_zp,
                    out_scale, out_zp, relu=cfg["relu"]).numpy().astype(int)
    assert ours.shape == theirs.shape
    assert np.abs(ours - theirs).max() <= 1
    assert np.mean(ours == theirs) > 0.9


def test_max_pool2d_on_uint8_is_exact():
    x = np.random.default_rng(2).integers(0, 256, (2, 3, 8, 8), dtype=np.uint8)
    pooled = wick.nn.functional.max_pool2d(wick.tensor(x), 2)
    assert pooled.dtype is wick.uint8
    want = x.reshape(2, 3, 4, 2, 4, 2).max(axis=(3, 5))
    np.testing.assert_array_equal(pooled.numpy(), want)


# ---- backend selection and errors ---------------------------------------------------------------

def test_backend_names_and_the_environment_override():
    assert "portable" in Q.gemm_backends()
    assert Q.gemm_backend() == Q.gemm_backends()[-1]  # the fastest available, by default
    os.environ["WICK_INT8_GEMM"] = "portable"
    try:
        assert Q.gemm_backend() == "portable"
        Q.set_gemm_backend(Q.gemm_backends()[-1])
        assert Q.gemm_backend() == "portable"  # the environment wins, read on every call
    finally:
        del os.environ["WICK_INT8_GEMM"]
    with pytest.raises(ValueError, match="set_gemm_backend"):
        Q.set_gemm_backend("sse")


def test_bad_arguments_raise_like_pytorch():
    x = wick.zeros(2, 4, dtype=wick.uint8)
    w = wick.zeros(3, 4, dtype=wick.int8)
    s = wick.full((3,), 0.1)
    with pytest.raises(TypeError, match="quantized_linear"):
        Q.linear(x.float(), w, s, None, 0.1, 0, 0.1, 0)
    with pytest.raises(TypeError, match="int8 weight"):
        Q.linear(x, w.to(wick.uint8), s, None, 0.1, 0, 0.1, 0)
    with pytest.raises(ValueError, match="weight_scale"):
        Q.linear(x, w, wick.full((2,), 0.1), None, 0.1, 0, 0.1, 0)
    with pytest.raises(ValueError, match="features"):
        Q.linear(x, wick.zeros(3, 5, dtype=wick.int8), s, None, 0.1, 0, 0.1, 0)
    with pytest.raises(ValueError, match="input_scale"):
        Q.linear(x, w, s, None, 0.0, 0, 0.1, 0)
    with pytest.raises(ValueError, match="output_zero_point"):
        Q.linear(x, w, s, None, 0.1, 0, 0.1, 256)
    with pytest.raises(ValueError, match="zero_point"):
        Q.quantize_per_tensor(wick.zeros(2), 0.1, -1)
    with pytest.raises(ValueError, match="scale"):
        Q.quantize_per_tensor(wick.zeros(2), -0.1, 0)
    with pytest.raises(TypeError, match="dequantize"):
        Q.dequantize(wick.zeros(2), 0.1, 0)
    with pytest.raises(ValueError, match="groups"):
        Q.conv2d(wick.zeros(1, 4, 5, 5, dtype=wick.uint8), wick.zeros(6, 3, 3, 3, dtype=wick.int8),
                 wick.full((6,), 0.1), None, 1, 0, 1, 2, 0.1, 0, 0.1, 0)
