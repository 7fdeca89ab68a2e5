"""wick.quantization's observers against torch.ao.quantization's on the same data, fake
quantization and QConfig. The flow (fuse, prepare, convert) is tests/python/test_quantization.py."""

import warnings

import numpy as np
import pytest
from reference import needs_torch, torch

import wick
import wick.quantization as wq
from torch_quantization import FixedTorchHistogramObserver, tobs  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore:Please use quant_min and quant_max")


def _batches(kind, seed=0):
    rng = np.random.default_rng(seed)
    f = np.float32
    return {
        "normal": lambda: [(rng.standard_normal((32, 50)) * 3).astype(f) for _ in range(3)],
        "positive": lambda: [rng.uniform(0, 6, (32, 50)).astype(f) for _ in range(3)],
        "negative_only": lambda: [-rng.exponential(2, (32, 50)).astype(f) - 0.5
                                  for _ in range(3)],
        "all_zero": lambda: [np.zeros((8, 8), f)],
        "constant": lambda: [np.full((8, 8), 2.5, f), np.full((4, 8), 2.5, f)],
        "growing_range": lambda: [(rng.standard_normal((32, 50)) * (i + 1)).astype(f)
                                  for i in range(4)],
        "outliers": lambda: [np.concatenate([rng.standard_normal(2000),
                                             [40.0, -25.0]]).astype(f)],
    }[kind]()


DISTRIBUTIONS = ["normal", "positive", "negative_only", "all_zero", "constant", "growing_range",
                 "outliers"]


def _torch_kwargs(kw):
    out = {}
    for k, v in kw.items():
        if k == "dtype":
            v = {"quint8": torch.quint8, "qint8": torch.qint8}[v]
        elif k == "qscheme":
            v = getattr(torch, v)
        out[k] = v
    return out


def _same_qparams(w_obs, t_obs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ws, wz = w_obs.calculate_qparams()
        ts, tz = t_obs.calculate_qparams()
    np.testing.assert_allclose(ws.numpy(), ts.numpy(), rtol=2e-7, atol=0)
    np.testing.assert_array_equal(wz.numpy(), tz.numpy())


PER_TENSOR_CASES = [
    ("MinMaxObserver", {}),
    ("MinMaxObserver", {"dtype": "qint8", "qscheme": "per_tensor_symmetric"}),
    ("MinMaxObserver", {"qscheme": "per_tensor_symmetric"}),
    ("MinMaxObserver", {"reduce_range": True}),
    ("MinMaxObserver", {"quant_min": 0, "quant_max": 127}),
    ("MovingAverageMinMaxObserver", {}),
    ("MovingAverageMinMaxObserver", {"averaging_constant": 0.5, "dtype": "qint8"}),
]


@needs_torch
@pytest.mark.parametrize("dist", DISTRIBUTIONS)
@pytest.mark.parametrize("name,kw", PER_TENSOR_CASES)
def test_per_tensor_observers_match_torch(name, kw, dist):
    w_obs = getattr(wq, name)(**kw)
    t_obs = getattr(tobs, name)(**_torch_kwargs(kw))
    for b in _batches(dist):
        out = w_obs(wick.from_numpy(b))
        t_obs(torch.from_numpy(b))
        np.testing.assert_array_equal(out.numpy(), b)  # observers pass their input through
    _same_qparams(w_obs, t_obs)


@needs_torch
@pytest.mark.parametrize("dist", DISTRIBUTIONS)
@pytest.mark.parametrize("kw", [{}, {"reduce_range": True},
                                {"qscheme": "per_tensor_symmetric"},
                                {"dtype": "qint8", "qscheme": "per_tensor_symmetric"},
                                {"bins": 256, "upsample_rate": 16}])
def test_histogram_observer_matches_torch(kw, dist):
    """The L2 bin search and the re-binning of a growing range give PyTorch's qparams (1.13's
    algorithm, with its int() truncation of the histogram range fixed as later PyTorch does)."""
    w_obs = wq.HistogramObserver(**kw)
    t_obs = FixedTorchHistogramObserver(**_torch_kwargs(kw))
    for b in _batches(dist):
        w_obs(wick.from_numpy(b))
        t_obs(torch.from_numpy(b))
    w_hist, t_hist = w_obs.histogram.numpy(), t_obs.histogram.numpy()
    assert np.isclose(w_hist.sum(), t_hist.sum(), rtol=1e-6)
    # a value on a bin edge may land on either side of it (float32 rounding of the edge)
    assert np.abs(w_hist - t_hist).sum() <= 4, np.abs(w_hist - t_hist).sum()
    _same_qparams(w_obs, t_obs)


@needs_torch
def test_histogram_observer_matches_unpatched_torch_on_integer_ranges():
    # where min and max are integers, 1.13's int() truncation changes nothing
    rng = np.random.default_rng(3)
    b = np.concatenate([rng.uniform(-3, 5, 5000), [-3.0, 5.0]]).astype(np.float32)
    w_obs, t_obs = wq.HistogramObserver(), tobs.HistogramObserver()
    w_obs(wick.from_numpy(b))
    t_obs(torch.from_numpy(b))
    _same_qparams(w_obs, t_obs)


@needs_torch
@pytest.mark.parametrize("shape,ch_axis", [((6, 3, 3, 3), 0), ((1, 20), 0), ((4, 5, 2), 1),
                                           ((8, 3), -1)])
@pytest.mark.parametrize("kw", [{"dtype": "qint8", "qscheme": "per_channel_symmetric"},
                                {"qscheme": "per_channel_affine"},
                                {"dtype": "qint8", "qscheme": "per_channel_affine",
                                 "reduce_range": True}])
def test_per_channel_observer_matches_torch(shape, ch_axis, kw):
    rng = np.random.default_rng(1)
    w_obs = wq.PerChannelMinMaxObserver(ch_axis=ch_axis, **kw)
    t_obs = tobs.PerChannelMinMaxObserver(ch_axis=ch_axis, **_torch_kwargs(kw))
    for scale in (1.0, 3.0):
        b = (rng.standard_normal(shape) * scale).astype(np.float32)
        b[..., 0] = 0.0
        w_obs(wick.from_numpy(b))
        t_obs(torch.from_numpy(b))
    _same_qparams(w_obs, t_obs)
    zero = np.zeros(shape, np.float32)  # all-zero channels: scale eps, zero point 0 or 128
    w0 = wq.PerChannelMinMaxObserver(ch_axis=ch_axis, **kw)
    t0 = tobs.PerChannelMinMaxObserver(ch_axis=ch_axis, **_torch_kwargs(kw))
    w0(wick.from_numpy(zero))
    t0(torch.from_numpy(zero))
    _same_qparams(w0, t0)


def test_percentile_observer_clips_outliers():
    rng = np.random.default_rng(2)
    data = rng.standard_normal(200000).astype(np.float32)
    data[:5] = [60.0, 55.0, -50.0, 45.0, 70.0]
    obs = wq.PercentileObserver(percentile=99.9)
    for chunk in np.split(data, 4):
        obs(wick.from_numpy(chunk))
    lo, hi = obs._percentile_range()
    width = (obs.max_val.item() - obs.min_val.item()) / 2048
    assert abs(lo - np.percentile(data, 0.1)) < 2 * width + 0.02
    assert abs(hi - np.percentile(data, 99.9)) < 2 * width + 0.02
    scale, zp = obs.calculate_qparams()
    minmax = wq.MinMaxObserver()
    minmax(wick.from_numpy(data))
    assert scale.item() < minmax.calculate_qparams()[0].item() / 10
    assert np.isclose(scale.item(), (hi - lo) / 255, rtol=1e-5)
    assert abs(zp.item() - round(-lo / scale.item())) <= 1


def test_observer_errors():
    with pytest.raises(ValueError, match="MinMaxObserver.*qscheme"):
        wq.MinMaxObserver(qscheme=wq.per_channel_symmetric)
    with pytest.raises(ValueError, match="PerChannelMinMaxObserver.*qscheme"):
        wq.PerChannelMinMaxObserver(qscheme="per_tensor_affine")
    with pytest.raises(ValueError, match="HistogramObserver.*dtype.*float32"):
        wq.HistogramObserver(dtype=wick.float32)
    with pytest.raises(ValueError, match="qscheme.*per_tensor_weird"):
        wq.MinMaxObserver(qscheme="per_tensor_weird")
    with pytest.raises(ValueError, match="symmetric quantization for quint8"):
        wq.MinMaxObserver(qscheme="per_tensor_symmetric", reduce_range=True)
    with pytest.raises(ValueError, match=r"\[-5, 300\]"):
        wq.MinMaxObserver(quant_min=-5, quant_max=300)
    with pytest.raises(TypeError, match="MinMaxObserver.*floating-point.*int64"):
        wq.MinMaxObserver()(wick.tensor([1, 2]))
    with pytest.raises(ValueError, match="averaging_constant"):
        wq.MovingAverageMinMaxObserver(averaging_constant=2.0)
    with pytest.raises(ValueError, match="percentile"):
        wq.PercentileObserver(percentile=30)
    obs = wq.PerChannelMinMaxObserver()
    obs(wick.zeros(3, 2))
    with pytest.raises(ValueError, match="3 channels before and 4 now"):
        obs(wick.zeros(4, 2))
    with pytest.warns(UserWarning, match="seen no data"):
        scale, zp = wq.MinMaxObserver().calculate_qparams()
    assert scale.tolist() == [1.0] and zp.tolist() == [0]


def test_observer_state_dict_round_trip():
    a = wq.HistogramObserver(bins=64)
    a(wick.randn(100))
    a(wick.randn(100) * 3)
    b = wq.HistogramObserver(bins=64)
    b.load_state_dict(a.state_dict())
    assert [t.tolist() for t in a.calculate_qparams()] == \
        [t.tolist() for t in b.calculate_qparams()]


@needs_torch
def test_fake_quantize_matches_torch():
    rng = np.random.default_rng(4)
    x = (rng.standard_normal((4, 3, 5)) * 2).astype(np.float32)
    got = wq.fake_quantize_per_tensor_affine(wick.from_numpy(x), 0.05, 10, 0, 255)
    want = torch.fake_quantize_per_tensor_affine(torch.from_numpy(x), 0.05, 10, 0, 255)
    np.testing.assert_allclose(got.numpy(), want.numpy(), atol=1e-6)
    scale = np.array([0.02, 0.1, 0.5], np.float32)
    zp = np.array([0, 3, -4], np.int64)
    got = wq.fake_quantize_per_channel_affine(wick.from_numpy(x), wick.from_numpy(scale),
                                              wick.from_numpy(zp), 1, -128, 127)
    want = torch.fake_quantize_per_channel_affine(torch.from_numpy(x), torch.from_numpy(scale),
                                                  torch.from_numpy(zp).int(), 1, -128, 127)
    np.testing.assert_allclose(got.numpy(), want.numpy(), atol=1e-6)
    with pytest.raises(TypeError, match="fake_quantize_per_tensor_affine.*floating-point"):
        wq.fake_quantize_per_tensor_affine(wick.tensor([1, 2]), 0.1, 0, 0, 255)
    with pytest.raises(ValueError, match="quant_min=5, quant_max=5"):
        wq.fake_quantize_per_tensor_affine(wick.zeros(2), 0.1, 0, 5, 5)


def test_qconfigs():
    x86 = wq.get_default_qconfig("x86")
    act, weight = x86.activation(), x86.weight()
    assert isinstance(act, wq.HistogramObserver) and act.reduce_range
    assert (act.quant_min, act.quant_max) == (0, 127)
    assert isinstance(weight, wq.PerChannelMinMaxObserver)
    assert weight.qscheme is wq.per_channel_symmetric and weight._dtype_name == "int8"
    assert wq.get_default_qconfig("fbgemm").activation().reduce_range
    assert not wq.get_default_qconfig("wick").activation().reduce_range
    assert wq.default_per_channel_qconfig.weight().qscheme is wq.per_channel_symmetric
    assert wq.default_qconfig.weight().qscheme is wq.per_tensor_symmetric
    with pytest.raises(ValueError, match="get_default_qconfig.*'tpu'"):
        wq.get_default_qconfig("tpu")
    with pytest.raises(ValueError, match="QConfig.*instance"):
        wq.QConfig(activation=wq.MinMaxObserver(), weight=wq.default_weight_observer)
