"""Lab 19's graded tests: your quantization parameters against PyTorch's observers, your integer
Linear against wick's u8 x s8 kernel (exactly) and PyTorch's quantized one, and your int8 CNN
against the float one: accuracy, weight bytes and speed are the figures."""

import os
import sys
import time

import numpy as np
import pytest
import torch
import wick
import wick.nn.functional as F
from labkit import ROOT, figure, impl

L = impl(__file__, "quantize")
sys.path.insert(0, os.path.join(ROOT, "examples"))
from train_mnist import CNN  # noqa: E402

rng = np.random.default_rng(0)


def torch_minmax(x, **kw):
    obs = torch.ao.quantization.MinMaxObserver(**kw)
    obs(torch.from_numpy(x))
    scale, zp = obs.calculate_qparams()
    return float(scale), int(zp)


@pytest.mark.parametrize("data", ["normal", "positive", "negative", "constant", "zeros"])
def test_affine_qparams_match_pytorch(data):
    x = {"normal": rng.normal(0.3, 2.0, 1000), "positive": rng.uniform(0.5, 3.0, 1000),
         "negative": -rng.uniform(0.5, 3.0, 1000), "constant": np.full(10, 4.0),
         "zeros": np.zeros(10)}[data].astype(np.float32)
    scale, zp = L.affine_qparams(x.min(), x.max())
    ref_scale, ref_zp = torch_minmax(x)
    assert scale == pytest.approx(ref_scale, rel=1e-6)
    assert zp == ref_zp
    assert isinstance(zp, int)


def test_signed_affine_qparams_match_pytorch():
    x = rng.normal(-0.5, 1.0, 1000).astype(np.float32)
    scale, zp = L.affine_qparams(x.min(), x.max(), -128, 127)
    ref_scale, ref_zp = torch_minmax(x, dtype=torch.qint8)
    assert (scale, zp) == (pytest.approx(ref_scale, rel=1e-6), ref_zp)


def test_symmetric_weight_scales_match_pytorch():
    w = rng.normal(0, 0.1, (16, 8, 3, 3)).astype(np.float32)
    w[3] = 0.0  # an all-zero channel still gets a usable scale
    obs = torch.ao.quantization.PerChannelMinMaxObserver(
        ch_axis=0, dtype=torch.qint8, qscheme=torch.per_channel_symmetric)
    obs(torch.from_numpy(w))
    ref, _ = obs.calculate_qparams()
    np.testing.assert_allclose(L.symmetric_weight_qparams(w), ref.numpy(), rtol=1e-6)


def test_quantize_matches_pytorch_and_round_trips():
    x = rng.normal(0, 1, 4096).astype(np.float32)
    scale, zp = 0.0123, 117
    q = L.quantize(x, scale, zp, 0, 255)
    ref = torch.quantize_per_tensor(torch.from_numpy(x), scale, zp, torch.quint8).int_repr()
    np.testing.assert_array_equal(q, ref.numpy())
    inside = (x > (0 - zp) * scale) & (x < (255 - zp) * scale)
    err = np.abs(L.dequantize(q, scale, zp) - x)[inside]
    assert err.max() <= scale / 2 + 1e-6  # rounding loses at most half a step


def test_per_channel_quantize_round_trips():
    w = rng.normal(0, 0.2, (6, 10)).astype(np.float32)
    s = L.symmetric_weight_qparams(w)
    q = L.quantize(w, s, np.zeros(6, np.int32), -128, 127, axis=0)
    assert q.min() >= -128 and q.max() <= 127
    assert np.all(np.abs(L.dequantize(q, s, np.zeros(6, np.int32), axis=0) - w)
                  <= s[:, None] / 2 + 1e-7)


def random_linear(n=37, k=70, o=19):
    xq = rng.integers(0, 256, (n, k)).astype(np.uint8)
    wq = rng.integers(-128, 128, (o, k)).astype(np.int8)
    w_scale = rng.uniform(0.001, 0.01, o).astype(np.float32)
    bias = rng.normal(0, 1, o).astype(np.float32)
    return xq, wq, w_scale, bias


@pytest.mark.parametrize("relu", [False, True])
@pytest.mark.parametrize("x_zp", [0, 128, 255])
def test_int8_linear_equals_wicks_kernel(relu, x_zp):
    xq, wq, w_scale, bias = random_linear()
    args = (0.02, x_zp)
    out = (0.05, 100)
    mine = L.int8_linear(xq, *args, wq, w_scale, bias, *out, relu=relu)
    theirs = wick._C._quantized.linear(
        wick.from_numpy(xq), wick.from_numpy(wq), wick.from_numpy(w_scale), wick.from_numpy(bias),
        *args, *out, relu).numpy()
    assert mine.dtype == np.uint8
    np.testing.assert_array_equal(mine, theirs)


def torch_multiplies_exactly():
    """PyTorch's x86 int8 kernels multiply uint8 by int8 exactly only with VNNI. Without it (AVX2,
    or AVX-512 before Cascade Lake) they use vpmaddubsw, which saturates each pair's sum to int16:
    255 * -128 * 2 does not fit. That is why PyTorch advises reduce_range on such processors."""
    try:
        with open("/proc/cpuinfo") as f:
            flags = next((line for line in f if line.startswith("flags")), "").split()
    except OSError:
        flags = []
    return bool({"avx512_vnni", "avx_vnni", "amx_int8"} & set(flags))


def test_int8_linear_agrees_with_pytorch():
    xq, wq, w_scale, bias = random_linear()
    if not torch_multiplies_exactly():  # 7-bit weights: pair sums that fit in int16
        wq = (wq.astype(np.int16) // 2).astype(np.int8)
    mine = L.int8_linear(xq, 0.02, 128, wq, w_scale, bias, 0.05, 100)
    x = torch._make_per_tensor_quantized_tensor(torch.from_numpy(xq), 0.02, 128)
    w = torch._make_per_channel_quantized_tensor(
        torch.from_numpy(wq), torch.from_numpy(w_scale).double(), torch.zeros(19, dtype=torch.long),
        0)
    layer = torch.ao.nn.quantized.Linear(70, 19, dtype=torch.qint8)
    layer.set_weight_bias(w, torch.from_numpy(bias))
    layer.scale, layer.zero_point = 0.05, 100
    ref = layer(x).int_repr().numpy()
    # PyTorch (oneDNN engine here) rounds its requantization differently: at most one step apart
    assert np.abs(mine.astype(int) - ref.astype(int)).max() <= 1


@pytest.fixture(scope="module")
def trained():
    """The CNN after one epoch of Adam on 4,000 of the committed digits, and the test digits."""
    wick.manual_seed(0)
    train = wick.datasets.MNIST(os.path.join(ROOT, "assets", "mnist"), train=True)
    test = wick.datasets.MNIST(os.path.join(ROOT, "assets", "mnist"), train=False)
    x = train.data[:4000].float().div(255.0).unsqueeze(1)
    y = train.targets[:4000]
    model = CNN()
    opt = wick.optim.Adam(model.parameters(), lr=2e-3)
    for start in range(0, 4000, 50):
        opt.zero_grad()
        F.cross_entropy(model(x[start:start + 50]), y[start:start + 50]).backward()
        opt.step()
    model.eval()
    return model, test.data.float().div(255.0).unsqueeze(1), test.targets, x


def accuracy(predict, x, y):
    with wick.no_grad():
        hits = sum(int((predict(x[i:i + 500]).argmax(1) == y[i:i + 500]).sum().item())
                   for i in range(0, x.shape[0], 500))
    return 100.0 * hits / x.shape[0]


def test_calibration_ranges(trained):
    model, _, _, x = trained
    ranges = L.calibrate(model, [x[i:i + 100] for i in range(0, 500, 100)])
    assert set(ranges) == {"input", "conv1", "conv2", "fc1", "fc2"}
    assert ranges["input"] == pytest.approx((0.0, 1.0))
    for name in ("conv1", "conv2", "fc1"):
        assert ranges[name][0] == 0.0 and ranges[name][1] > 0  # after ReLU
    assert ranges["fc2"][0] < 0 < ranges["fc2"][1]  # logits


def test_int8_cnn_keeps_accuracy_and_is_smaller_and_faster(trained):
    model, xt, yt, x = trained
    ranges = L.calibrate(model, [x[i:i + 100] for i in range(0, 1000, 100)])
    qmodel = L.QuantizedCNN(model, ranges)
    fp32 = accuracy(model, xt, yt)
    int8 = accuracy(qmodel, xt, yt)
    figure("test accuracy fp32 / int8 (%)", f"{fp32:.2f} / {int8:.2f}")
    fp32_bytes = sum(p.numel() * 4 for p in model.parameters())
    figure("weight bytes fp32 / int8", f"{fp32_bytes} / {qmodel.weight_bytes()} "
           f"({fp32_bytes / qmodel.weight_bytes():.2f}x smaller)")
    batch = xt[:64]
    with wick.no_grad():
        times = {}
        for name, f in (("fp32", model), ("int8", qmodel)):
            f(batch)
            start = time.perf_counter()
            for _ in range(10):
                f(batch)
            times[name] = (time.perf_counter() - start) / 10
    figure("batch-64 forward fp32 / int8 (ms)",
           f"{times['fp32'] * 1e3:.1f} / {times['int8'] * 1e3:.1f} "
           f"({times['fp32'] / times['int8']:.2f}x; int8 kernel: "
           f"{wick._C._quantized.gemm_backend()})")
    assert fp32 > 90.0
    assert int8 >= fp32 - 1.0
    assert fp32_bytes / qmodel.weight_bytes() > 3.9
