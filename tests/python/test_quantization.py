"""wick.quantization and wick.nn.quantized: fuse_modules, prepare/calibrate/convert, the quantized modules
against the fake-quant float reference and against PyTorch's converted model, state dicts and
the errors. Observers are tests/python/test_quantization_observers.py; the MNIST accuracy check
is tests/python/test_quantization_mnist.py."""

import os

import numpy as np
import pytest
from reference import needs_torch, torch

import wick
import wick.nn as nn
import wick.nn.functional as F
import wick.nn.quantized as nnq
import wick.quantization as wq
from wick.utils.data import DataLoader, TensorDataset

from torch_quantization import (  # noqa: E402
    TORCH_INT8_EXACT, WEIGHT_QMAX, WEIGHT_QMIN, FixedTorchHistogramObserver, tobs, tq)

pytestmark = pytest.mark.filterwarnings("ignore:Please use quant_min and quant_max")

HAS_INT8 = not isinstance(wq.int8, str)


# ---- fusion ----

class ConvBnReLU(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.relu = nn.ReLU()
        self.conv2 = nn.Conv2d(8, 4, 3, bias=False)
        self.bn2 = nn.BatchNorm2d(4)
        self.conv3 = nn.Conv2d(4, 4, 1)
        self.relu3 = nn.ReLU()
        self.flatten = nn.Flatten()
        self.fc = nn.Linear(4 * 6 * 6, 5)
        self.relu4 = nn.ReLU()

    def forward(self, x):
        x = self.relu(self.bn(self.conv(x)))
        x = self.relu3(self.conv3(self.bn2(self.conv2(x))))
        return self.relu4(self.fc(self.flatten(x)))


def _with_bn_statistics(model):
    wick.manual_seed(5)
    model.train()
    with wick.no_grad():
        for _ in range(3):
            model(wick.randn(16, 3, 8, 8) * 2 + 0.5)
    for m in model.modules():  # make gamma and beta non-trivial
        if isinstance(m, nn.BatchNorm2d):
            with wick.no_grad():
                m.weight.copy_(wick.rand(m.num_features) + 0.5)
                m.bias.copy_(wick.randn(m.num_features))
    return model.eval()


def test_fuse_modules_matches_the_unfused_model():
    model = _with_bn_statistics(ConvBnReLU())
    fused = wq.fuse_modules(model, [["conv", "bn", "relu"], ["conv2", "bn2"],
                                    ["conv3", "relu3"], ["fc", "relu4"]])
    assert type(fused.conv) is wick.nn.intrinsic.ConvReLU2d
    assert type(fused.conv2) is nn.Conv2d and type(fused.bn2) is nn.Identity
    assert type(fused.conv3) is wick.nn.intrinsic.ConvReLU2d
    assert type(fused.fc) is wick.nn.intrinsic.LinearReLU
    assert type(model.bn) is nn.BatchNorm2d  # inplace=False left the original alone
    x = wick.randn(4, 3, 8, 8)
    with wick.no_grad():
        np.testing.assert_allclose(fused(x).numpy(), model(x).numpy(), atol=1e-5, rtol=1e-5)
    assert fused.conv2.bias is not None  # a bias appears where BN had a shift


@needs_torch
def test_conv_bn_folding_matches_torch():
    model = _with_bn_statistics(ConvBnReLU())
    folded = wq.fuse_conv_bn_eval(model.conv, model.bn)
    tconv = torch.nn.Conv2d(3, 8, 3, padding=1).eval()
    tbn = torch.nn.BatchNorm2d(8).eval()
    with torch.no_grad():
        tconv.weight.copy_(torch.from_numpy(model.conv.weight.detach().numpy()))
        tconv.bias.copy_(torch.from_numpy(model.conv.bias.detach().numpy()))
        for name in ("weight", "bias", "running_mean", "running_var"):
            getattr(tbn, name).copy_(torch.from_numpy(getattr(model.bn, name).detach().numpy()))
    want = torch.nn.utils.fusion.fuse_conv_bn_eval(tconv, tbn)
    np.testing.assert_allclose(folded.weight.detach().numpy(), want.weight.detach().numpy(),
                               rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(folded.bias.detach().numpy(), want.bias.detach().numpy(),
                               rtol=1e-6, atol=1e-6)


def test_fuse_modules_errors():
    model = ConvBnReLU()
    with pytest.raises(RuntimeError, match="eval mode"):
        wq.fuse_modules(model, ["conv", "bn"])
    model.eval()
    with pytest.raises(ValueError, match="cannot fuse ReLU \\+ Conv2d"):
        wq.fuse_modules(model, ["relu", "conv2"])
    with pytest.raises(AttributeError, match="no submodule 'nope'"):
        wq.fuse_modules(model, ["conv", "nope"])


# ---- prepare, calibrate, convert ----

class SmallNet(nn.Module):
    """quant -> conv+relu -> maxpool -> conv -> relu (module) -> flatten -> linear+relu ->
    linear -> dequant"""

    def __init__(self):
        super().__init__()
        self.quant = wq.QuantStub()
        self.conv1 = nn.Conv2d(2, 6, 3, padding=1)
        self.relu1 = nn.ReLU()
        self.pool = nn.MaxPool2d(2)
        self.conv2 = nn.Conv2d(6, 8, 3, stride=1, groups=2)
        self.relu2 = nn.ReLU()
        self.flatten = nn.Flatten()
        self.fc1 = nn.Linear(8 * 2 * 2, 16)
        self.relu3 = nn.ReLU()
        self.fc2 = nn.Linear(16, 5)
        self.dequant = wq.DeQuantStub()

    def forward(self, x):
        x = self.pool(self.relu1(self.conv1(self.quant(x))))
        x = self.flatten(self.relu2(self.conv2(x)))
        return self.dequant(self.fc2(self.relu3(self.fc1(x))))


def _data(n=64, seed=7):
    rng = np.random.default_rng(seed)
    return wick.from_numpy((rng.standard_normal((n, 2, 8, 8)) * 1.5 + 0.3).astype(np.float32))


def _calibrated(qconfig, fuse=True, seed=0):
    wick.manual_seed(seed)
    model = SmallNet().eval()
    if fuse:
        model = wq.fuse_modules(model, [["conv1", "relu1"], ["fc1", "relu3"]])
    model.qconfig = qconfig
    prepared = wq.prepare(model)
    x = _data()
    wq.calibrate(prepared, DataLoader(TensorDataset(x, wick.zeros(64)), batch_size=16),
                 progress=False)
    return model, prepared


def test_prepare_attaches_observers_by_eager_rules():
    model, prepared = _calibrated(wq.minmax_qconfig())
    observed = {path for path, m in prepared.named_modules()
                if "activation_post_process" in m._modules}
    assert observed == {"quant", "conv1", "conv2", "fc1", "fc2"}
    assert "activation_post_process" not in model.conv2._modules  # a copy was prepared
    x = _data(8, seed=9)
    with wick.no_grad():  # the float outputs are unchanged
        np.testing.assert_array_equal(prepared(x).numpy(), model(x).numpy())
    obs = prepared.conv1.activation_post_process
    assert obs.min_val.item() >= 0  # the fused relu's output is observed


def test_calibrate_counts_batches(capsys):
    wick.manual_seed(0)
    model = SmallNet().eval()
    model.qconfig = wq.default_qconfig
    prepared = wq.prepare(model)
    loader = DataLoader(TensorDataset(_data(), wick.zeros(64)), batch_size=8)
    wq.calibrate(prepared, loader, num_batches=3)
    assert "[calibrate] batch 3/3" in capsys.readouterr().err
    with pytest.raises(ValueError, match="num_batches.*0"):
        wq.calibrate(prepared, loader, num_batches=0)
    with pytest.raises(RuntimeError, match="call wick.quantization.prepare"):
        wq.calibrate(model, loader)


def _fake_quant_reference(prepared, x):
    """The float model with every activation and weight fake-quantized by the calibrated
    qparams: what the int8 model computes, in float32."""
    def act(module, y):
        s, z = module.activation_post_process.calculate_qparams()
        o = module.activation_post_process
        return wq.fake_quantize_per_tensor_affine(y, s.item(), z.item(), o.quant_min, o.quant_max)

    def weight(module):
        obs = module.qconfig.weight()
        obs(module_float(module).weight.detach())
        s, z = obs.calculate_qparams()
        if s.numel() == 1:
            s, z = s.expand(module_float(module).weight.shape[0]), z.expand(
                module_float(module).weight.shape[0])
        return wq.fake_quantize_per_channel_affine(module_float(module).weight.detach(), s, z, 0,
                                                   -128, 127)

    def module_float(m):
        return m[0] if isinstance(m, wick.nn.intrinsic._FusedModule) else m

    p = prepared
    with wick.no_grad():
        h = act(p.quant, x)
        c1 = module_float(p.conv1)
        h = act(p.conv1, F.relu(F.conv2d(h, weight(p.conv1), c1.bias, c1.stride, c1.padding)))
        h = p.pool(h)
        c2 = p.conv2
        h = act(c2, F.conv2d(h, weight(c2), c2.bias, c2.stride, c2.padding, c2.dilation,
                             c2.groups))
        h = F.relu(h).flatten(1)
        f1 = module_float(p.fc1)
        h = act(p.fc1, F.relu(F.linear(h, weight(p.fc1), f1.bias)))
        return act(p.fc2, F.linear(h, weight(p.fc2), p.fc2.bias))


@pytest.mark.parametrize("qconfig", [wq.minmax_qconfig(), wq.default_qconfig,
                                     wq.get_default_qconfig("x86"),
                                     wq.percentile_qconfig(99.0)],
                         ids=["minmax", "default", "x86-histogram", "percentile"])
def test_converted_model_matches_the_fake_quant_reference(qconfig):
    _, prepared = _calibrated(qconfig)
    quantized = wq.convert(prepared)
    assert type(quantized.quant) is nnq.Quantize
    assert type(quantized.conv1) is nnq.ConvReLU2d
    assert type(quantized.conv2) is nnq.Conv2d and type(quantized.relu2) is nnq.ReLU
    assert type(quantized.fc1) is nnq.LinearReLU and type(quantized.fc2) is nnq.Linear
    assert type(quantized.dequant) is nnq.DeQuantize and type(quantized.pool) is nn.MaxPool2d
    if HAS_INT8:
        assert quantized.conv1.weight.dtype == wick.int8
    x = _data(32, seed=11)
    got = quantized(x)
    assert got.dtype == wick.float32
    want = _fake_quant_reference(prepared, x)
    step = quantized.fc2.scale.item()
    diff = np.abs(got.numpy() - want.numpy())
    # a one-step difference in a hidden layer can move an output by a little more than a step
    assert diff.max() <= 2 * step + 1e-6, diff.max() / step
    assert (diff <= step + 1e-6).mean() > 0.97
    float_out = prepared(x).detach().numpy()
    assert np.abs(got.numpy() - float_out).mean() < 0.1 * np.abs(float_out).mean()


def test_quantized_layers_match_fake_quant_to_one_step():
    """One quantized Linear and Conv2d (+relu) against quantize -> float op -> quantize."""
    rng = np.random.default_rng(12)
    in_s, in_zp, out_s, out_zp = 0.03, 100, 0.05, 80
    x_q = wick.from_numpy(rng.integers(0, 256, (6, 3, 7, 7)).astype(np.uint8))
    x_real = (x_q.to(wick.float32) - in_zp) * in_s
    w = wick.from_numpy((rng.standard_normal((5, 3, 3, 3)) * 0.2).astype(np.float32))
    b = wick.from_numpy(rng.standard_normal(5).astype(np.float32))
    w_scale = wick.amax(w.abs().reshape(5, -1), 1) / 127.5
    for relu, cls in ((False, nnq.Conv2d), (True, nnq.ConvReLU2d)):
        conv = cls(nnq.quantize_weight(w, w_scale), w_scale, b, 2, 1, 1, 1, in_s, in_zp,
                   out_s, out_zp)
        w_fq = wq.fake_quantize_per_channel_affine(w, w_scale, wick.zeros(5, dtype=wick.int64),
                                                   0, -128, 127)
        y = F.conv2d(x_real, w_fq, b, 2, 1)
        y = F.relu(y) if relu else y
        want = wq.fake_quantize_per_tensor_affine(y, out_s, out_zp, 0, 255)
        got = (conv(x_q).to(wick.float32) - out_zp) * out_s
        assert np.abs(got.numpy() - want.numpy()).max() <= out_s * 1.0001
    x2 = wick.from_numpy(rng.integers(0, 256, (4, 2, 30)).astype(np.uint8))
    w2 = wick.from_numpy((rng.standard_normal((7, 30)) * 0.1).astype(np.float32))
    s2 = wick.amax(w2.abs(), 1) / 127.5
    lin = nnq.LinearReLU(nnq.quantize_weight(w2, s2), s2, None, in_s, in_zp, out_s, out_zp)
    got = lin(x2)
    assert list(got.shape) == [4, 2, 7] and got.dtype == wick.uint8
    w2_fq = wq.fake_quantize_per_channel_affine(w2, s2, wick.zeros(7, dtype=wick.int64), 0,
                                                -128, 127)
    want = wq.fake_quantize_per_tensor_affine(
        F.relu(F.linear((x2.to(wick.float32) - in_zp) * in_s, w2_fq)), out_s, out_zp, 0, 255)
    got_real = (got.to(wick.float32) - out_zp) * out_s
    assert np.abs(got_real.numpy() - want.numpy()).max() <= out_s * 1.0001
    assert got.numpy().min() >= out_zp  # relu clamps at the zero point


@pytest.mark.skipif(nnq.backend() != "kernels", reason="needs wick._C._quantized (int8 kernels)")
def test_kernels_match_the_reference_arithmetic():
    _, prepared = _calibrated(wq.get_default_qconfig("wick"))
    quantized = wq.convert(prepared)
    x = _data(16, seed=13)
    q_in = quantized.quant(x)
    for name in ("conv1",):
        got = getattr(quantized, name)(q_in)
        with nnq.reference_kernels():
            want = getattr(quantized, name)(q_in)
        diff = np.abs(got.numpy().astype(int) - want.numpy().astype(int))
        assert diff.max() <= 1 and diff.mean() < 0.05
    got = quantized(x)
    with nnq.reference_kernels():
        want = quantized(x)
    assert np.abs(got.numpy() - want.numpy()).max() <= 2 * quantized.fc2.scale.item() + 1e-6


@needs_torch
@pytest.mark.parametrize("observer", ["MinMaxObserver", "HistogramObserver"])
def test_converted_model_matches_pytorch(observer):
    """The same model, observers and calibration data through torch.ao.quantization (onednn
    engine: per-channel int8 weights, uint8 activations): the same qparams at every layer and
    outputs within a step or two."""
    wick.manual_seed(21)
    model = SmallNet().eval()

    class TorchSmallNet(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.quant = tq.QuantStub()
            self.conv1 = torch.nn.Conv2d(2, 6, 3, padding=1)
            self.relu1 = torch.nn.ReLU()
            self.pool = torch.nn.MaxPool2d(2)
            self.conv2 = torch.nn.Conv2d(6, 8, 3, groups=2)
            self.relu2 = torch.nn.ReLU()
            self.flatten = torch.nn.Flatten()
            self.fc1 = torch.nn.Linear(32, 16)
            self.relu3 = torch.nn.ReLU()
            self.fc2 = torch.nn.Linear(16, 5)
            self.dequant = tq.DeQuantStub()

        def forward(self, x):
            x = self.pool(self.relu1(self.conv1(self.quant(x))))
            x = self.flatten(self.relu2(self.conv2(x)))
            return self.dequant(self.fc2(self.relu3(self.fc1(x))))

    tmodel = TorchSmallNet().eval()
    tmodel.load_state_dict({k: torch.from_numpy(v.numpy().copy())
                            for k, v in model.state_dict().items()})
    if observer == "HistogramObserver":  # 1.13's int() truncation fixed (see the observer test)
        w_act, t_act = wq.HistogramObserver, FixedTorchHistogramObserver
    else:
        w_act, t_act = wq.MinMaxObserver, tobs.MinMaxObserver
    w_weight = wq.default_per_channel_weight_observer
    t_weight = tq.default_per_channel_weight_observer
    if not TORCH_INT8_EXACT:  # Note [PyTorch's int8 reference without VNNI]: 7-bit weights
        w_weight = w_weight.with_args(quant_min=WEIGHT_QMIN, quant_max=WEIGHT_QMAX)
        t_weight = t_weight.with_args(quant_min=WEIGHT_QMIN, quant_max=WEIGHT_QMAX)
    model.qconfig = wq.QConfig(activation=w_act, weight=w_weight)
    tmodel.qconfig = tq.QConfig(activation=t_act, weight=t_weight)
    pairs = [["conv1", "relu1"], ["fc1", "relu3"]]
    prepared = wq.prepare(wq.fuse_modules(model, pairs))
    old_engine = torch.backends.quantized.engine
    torch.backends.quantized.engine = "onednn"
    try:
        tprepared = tq.prepare(tq.fuse_modules(tmodel, pairs))
        x = _data(64, seed=22)
        for i in range(0, 64, 16):
            prepared(x[i:i + 16])
            tprepared(torch.from_numpy(x[i:i + 16].numpy()))
        quantized, tquantized = wq.convert(prepared), tq.convert(tprepared)
        for name in ("conv1", "conv2", "fc1", "fc2"):
            got, want = getattr(quantized, name), getattr(tquantized, name)
            assert np.isclose(got.scale.item(), want.scale, rtol=1e-6), name
            assert got.zero_point.item() == want.zero_point, name
            tw = want.weight()
            np.testing.assert_allclose(got.weight_scale.numpy(),
                                       tw.q_per_channel_scales().numpy(), rtol=1e-6)
            np.testing.assert_array_equal(got.weight.numpy(), tw.int_repr().numpy())
        xt = _data(32, seed=23)
        got = quantized(xt).numpy()
        want = tquantized(torch.from_numpy(xt.numpy())).numpy()
    finally:
        torch.backends.quantized.engine = old_engine
    step = quantized.fc2.scale.item()
    diff = np.abs(got - want)
    assert diff.max() <= 2 * step + 1e-6 and (diff <= step + 1e-6).mean() > 0.97


# ---- a residual block: FloatFunctional ----

class Residual(nn.Module):
    def __init__(self):
        super().__init__()
        self.quant = wq.QuantStub()
        self.stem = nn.Conv2d(3, 8, 3, padding=1)
        self.stem_relu = nn.ReLU()
        self.conv1 = nn.Conv2d(8, 8, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(8)
        self.relu1 = nn.ReLU()
        self.conv2 = nn.Conv2d(8, 8, 3, padding=1)
        self.bn2 = nn.BatchNorm2d(8)
        self.skip_add = nnq.FloatFunctional()
        self.pool = nn.AdaptiveMaxPool2d(1)
        self.flatten = nn.Flatten()
        self.fc = nn.Linear(8, 4)
        self.dequant = wq.DeQuantStub()

    def forward(self, x):
        x = self.stem_relu(self.stem(self.quant(x)))
        y = self.bn2(self.conv2(self.relu1(self.bn1(self.conv1(x)))))
        y = self.skip_add.add_relu(y, x)
        return self.dequant(self.fc(self.flatten(self.pool(y))))


def _residual():
    wick.manual_seed(30)
    model = Residual()
    model.train()
    with wick.no_grad():
        model(wick.randn(16, 3, 6, 6))
    return model.eval()


def test_residual_add_is_quantized_with_float_functional():
    model = _residual()
    fused = wq.fuse_modules(model, [["stem", "stem_relu"], ["conv1", "bn1", "relu1"],
                                    ["conv2", "bn2"]])
    fused.qconfig = wq.minmax_qconfig()
    prepared = wq.prepare(fused)
    x = wick.randn(64, 3, 6, 6)
    wq.calibrate(prepared, [(x[i:i + 16],) for i in range(0, 64, 16)], progress=False)
    quantized = wq.convert(prepared)
    assert type(quantized.skip_add) is nnq.QFunctional
    assert quantized.skip_add.input_scales.shape[0] == 2
    got = quantized(x).numpy()
    want = model(x).detach().numpy()
    assert np.abs(got - want).max() < 0.1 * np.abs(want).max() + 0.05
    # QFunctional.add_relu: dequantize, add, relu, quantize
    qf = quantized.skip_add
    a = wick.from_numpy(np.arange(0, 250, 10, dtype=np.uint8))
    b = wick.from_numpy(np.arange(240, -10, -10).astype(np.uint8))
    (sa, sb), (za, zb) = qf.input_scales.tolist(), qf.input_zero_points.tolist()
    real = np.maximum((a.numpy().astype(int) - za) * sa + (b.numpy().astype(int) - zb) * sb, 0)
    s, z = qf.scale.item(), qf.zero_point.item()
    want_q = np.clip(np.round(real / s) + z, 0, 255)
    assert np.abs(qf.add_relu(a, b).numpy().astype(int) - want_q).max() <= 1


def test_unfused_batchnorm_on_a_quantized_tensor_is_named():
    model = _residual()
    model.qconfig = wq.default_qconfig
    prepared = wq.prepare(model)
    prepared(wick.randn(4, 3, 6, 6))
    with pytest.raises(RuntimeError, match=r"'bn1' \(BatchNorm2d\) receives a quantized tensor "
                                           r"\(from 'conv1'\).*fuse"):
        wq.convert(prepared)


# ---- errors ----

class FunctionalReLU(nn.Module):
    def __init__(self):
        super().__init__()
        self.quant = wq.QuantStub()
        self.conv1 = nn.Conv2d(1, 2, 3)
        self.conv2 = nn.Conv2d(2, 2, 3)
        self.dequant = wq.DeQuantStub()

    def forward(self, x):
        return self.dequant(self.conv2(F.relu(self.conv1(self.quant(x)))))


def test_convert_errors_name_the_module():
    model = SmallNet().eval()
    with pytest.raises(RuntimeError, match="'quant' \\(QuantStub\\) has no observer.*prepare"):
        wq.convert(model)
    model.qconfig = wq.default_qconfig
    prepared = wq.prepare(model)
    with pytest.raises(RuntimeError, match="observer of 'quant' \\(QuantStub\\) saw no data.*"
                                           "calibrate"):
        wq.convert(prepared)
    with pytest.raises(RuntimeError, match="already prepared"):
        wq.prepare(prepared)
    functional = FunctionalReLU().eval()
    functional.qconfig = wq.default_qconfig
    prepared = wq.prepare(functional)
    prepared(wick.randn(2, 1, 8, 8))
    with pytest.raises(RuntimeError, match="'conv2' \\(Conv2d\\): its input was not produced by "
                                           "an observed module.*F.relu"):
        wq.convert(prepared)
    with pytest.raises(RuntimeError, match="no module has a qconfig"):
        wq.prepare(SmallNet())


def test_unsupported_qconfigs_raise_value_error():
    model = SmallNet().eval()
    model.qconfig = wq.QConfig(activation=wq.MinMaxObserver.with_args(dtype=wq.qint8),
                               weight=wq.default_weight_observer)
    with pytest.raises(ValueError, match="'quant' \\(QuantStub\\).*uint8.*int8"):
        wq.prepare(model)
    model.qconfig = wq.QConfig(activation=wq.MinMaxObserver,
                               weight=wq.MinMaxObserver.with_args(dtype=wq.qint8))
    with pytest.raises(ValueError, match="'conv1' \\(Conv2d\\): weights must be symmetric int8"):
        wq.prepare(model)


def test_quantized_modules_reject_float_input():
    _, prepared = _calibrated(wq.default_qconfig)
    quantized = wq.convert(prepared)
    x = _data(2)
    with pytest.raises(TypeError, match="ConvReLU2d.*wick.uint8.*float32"):
        quantized.conv1(x)
    with pytest.raises(TypeError, match="Linear.*wick.uint8.*float32"):
        quantized.fc2(wick.randn(2, 16))
    with pytest.raises(TypeError, match="DeQuantize.*wick.uint8"):
        quantized.dequant(wick.randn(2, 5))
    with pytest.raises(TypeError, match="Quantize.*floating-point.*uint8"):
        quantized.quant(quantized.quant(x))
    with pytest.raises(ValueError, match="Linear.*\\[\\.\\.\\., 16\\]"):
        quantized.fc2(wick.zeros(2, 15, dtype=wick.uint8))
    with pytest.raises(ValueError, match="zero_point must be in \\[0, 255\\].*300"):
        nnq.Quantize(0.1, 300)


# ---- saving ----

def test_state_dict_round_trip(tmp_path):
    _, prepared = _calibrated(wq.get_default_qconfig("wick"))
    quantized = wq.convert(prepared)
    path = str(tmp_path / "q.safetensors")
    wick.save(quantized.state_dict(), path)
    _, other = _calibrated(wq.minmax_qconfig(), seed=1)  # different weights and qparams
    other = wq.convert(other)
    x = _data(8, seed=31)
    assert not np.array_equal(other(x).numpy(), quantized(x).numpy())
    other.load_state_dict(wick.load(path))
    np.testing.assert_array_equal(other(x).numpy(), quantized(x).numpy())


@pytest.mark.skipif(not HAS_INT8, reason="needs wick.int8")
def test_quantized_checkpoint_is_about_a_quarter_of_the_float_one(tmp_path):
    model = nn.Sequential(wq.QuantStub(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 256),
                          wq.DeQuantStub()).eval()
    model.qconfig = wq.get_default_qconfig("wick")
    prepared = wq.prepare(wq.fuse_modules(model, ["1", "2"]))
    wq.calibrate(prepared, [(wick.randn(32, 512),)], progress=False)
    quantized = wq.convert(prepared)
    f32, i8 = str(tmp_path / "f.safetensors"), str(tmp_path / "q.safetensors")
    wick.save(model.state_dict(), f32)
    wick.save(quantized.state_dict(), i8)
    ratio = os.path.getsize(i8) / os.path.getsize(f32)
    assert 0.24 < ratio < 0.27, ratio


def test_quant_wrapper_and_a_float_submodule():
    wick.manual_seed(40)
    body = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3)).eval()
    body.qconfig = wq.minmax_qconfig()
    wrapped = wq.QuantWrapper(body)
    assert wrapped.quant.qconfig is body.qconfig
    prepared = wq.prepare(wrapped)
    x = wick.randn(32, 6)
    wq.calibrate(prepared, [(x,)], progress=False)
    quantized = wq.convert(prepared)
    assert [type(m) for m in quantized.module] == [nnq.Linear, nnq.ReLU, nnq.Linear]
    with wick.no_grad():
        want = body(x).numpy()
    assert np.abs(quantized(x).numpy() - want).max() < 0.05 * np.abs(want).max() + 0.02
    # qconfig = None keeps a submodule in float; feeding it a quantized tensor is an error
    body2 = nn.Sequential(nn.Linear(6, 8), nn.Linear(8, 3)).eval()
    wrapped2 = wq.QuantWrapper(body2)
    wrapped2.qconfig = wq.minmax_qconfig()
    body2[1].qconfig = None
    prepared2 = wq.prepare(wrapped2)
    assert "activation_post_process" not in prepared2.module[1]._modules
    prepared2(x)
    with pytest.raises(RuntimeError, match=r"'module.1' \(Linear\) receives a quantized tensor"):
        wq.convert(prepared2)


def test_torchvision_style_resnet_is_refused_by_name():
    """wick.models' ResNet adds the shortcut with `out + identity` and shares one ReLU per
    block, as torchvision's does; eager-mode convert cannot quantize that (PyTorch ships
    separate quantizable ResNets) and says where."""
    import wick.models
    model = wick.models.resnet20(num_classes=10).eval()
    pairs = [[f"{n}.conv{i}" if n else f"conv{i}", f"{n}.bn{i}" if n else f"bn{i}"]
             for n, m in model.named_modules() for i in (1, 2)
             if hasattr(m, f"conv{i}") and hasattr(m, f"bn{i}")]
    wrapped = wq.QuantWrapper(wq.fuse_modules(model, pairs))
    wrapped.qconfig = wq.default_qconfig
    prepared = wq.prepare(wrapped)
    prepared(wick.randn(2, 3, 32, 32))
    with pytest.raises(RuntimeError, match=r"'module.layer1.0.relu' \(ReLU\) received inputs "
                                           "from different producers"):
        wq.convert(prepared)
