"""Bad inputs to post-training quantization (wick.quantization, wick.nn.quantized): observers,
QConfig, fuse_modules, prepare / calibrate / convert, fake quantization, quantize_per_tensor and
the quantized modules.

How the types were checked: each row was run against torch.ao.quantization 1.13 (Debian's torch,
/work/main/.venv). Where PyTorch raises a proper type for the same mistake wick raises the same
(QConfig with an observer instance: ValueError; fusing BatchNorm in training mode, quantized
Linear of the wrong width: RuntimeError / ValueError as wick's rule for shapes). Where PyTorch
only asserts (AssertionError: a bad dtype, an unsupported fusion, version=5), accepts the mistake
(eps=-1, bins=0, a zero point outside [quant_min, quant_max] in fake quantization: PyTorch raises
there, wick used to accept it) or fails by accident (AttributeError on a list input), the row has
Python's convention: ValueError for a bad value, TypeError for a wrong type, RuntimeError for a
step taken out of order (convert before calibrate)."""

import math

import wick
import wick.nn as nn
import wick.nn.quantized as nnq
import wick.quantization as Q

from bad_inputs.corpus import Bad, check, parametrize


def _observed(values, observer=Q.MinMaxObserver):
    o = observer()
    o(wick.tensor(values))
    return o.calculate_qparams()


def _per_channel_twice():
    o = Q.PerChannelMinMaxObserver(ch_axis=0)
    o(wick.ones(2, 3))
    o(wick.ones(4, 3))


def _per_channel_axis(axis):
    o = Q.PerChannelMinMaxObserver(ch_axis=axis)
    o(wick.ones(2, 3))


def _net(*layers):
    return nn.Sequential(Q.QuantStub(), *layers, Q.DeQuantStub()).eval()


def _prepared(*layers, qconfig=None):
    m = _net(*(layers or (nn.Linear(4, 3),)))
    m.qconfig = qconfig or Q.get_default_qconfig("x86")
    return Q.prepare(m)


def _calibrated(*layers):
    p = _prepared(*layers)
    wick.manual_seed(0)
    Q.calibrate(p, [(wick.randn(5, 4), 0)], progress=False)
    return p


def _quantized():
    return Q.convert(_calibrated(nn.Linear(4, 3), nn.ReLU()))


def _calibrate(batches, num_batches=None):
    Q.calibrate(_prepared(), batches, num_batches=num_batches, progress=False)


class _FunctionalRelu(nn.Module):
    """Linear -> F.relu -> Linear: the second layer's input comes from a functional call."""

    def __init__(self):
        super().__init__()
        self.q, self.a, self.b, self.d = Q.QuantStub(), nn.Linear(4, 4), nn.Linear(4, 2), \
            Q.DeQuantStub()

    def forward(self, x):
        return self.d(self.b(nn.functional.relu(self.a(self.q(x)))))


def _convert_functional():
    m = _FunctionalRelu().eval()
    m.qconfig = Q.get_default_qconfig("x86")
    p = Q.prepare(m)
    Q.calibrate(p, [(wick.randn(5, 4), 0)], progress=False)
    Q.convert(p)


def _with_qconfig(activation, weight):
    return lambda: _prepared(qconfig=Q.QConfig(activation=activation, weight=weight))


def _conv_bn(bn_features=2, train=False):
    m = nn.Sequential(nn.Conv2d(1, 2, 3), nn.BatchNorm2d(bn_features), nn.ReLU(),
                      nn.Linear(2, 2))
    return m.train() if train else m.eval()


def _fq_channel(scale_n=2, zero_n=2, axis=0):
    return Q.fake_quantize_per_channel_affine(wick.ones(2, 3), wick.ones(scale_n),
                                              wick.zeros(zero_n, dtype=wick.int64), axis, 0, 255)


OBSERVERS = [
    Bad("minmax-per-channel-scheme",
        lambda: Q.MinMaxObserver(qscheme=Q.per_channel_affine), ValueError, "MinMaxObserver",
        ["per_channel_affine"]),
    Bad("minmax-float-dtype", lambda: Q.MinMaxObserver(dtype=wick.float32), ValueError,
        "MinMaxObserver", ["float32"]),
    Bad("minmax-reduce-range-str", lambda: Q.MinMaxObserver(reduce_range="yes"), TypeError,
        "MinMaxObserver", ["'yes'"]),
    Bad("minmax-eps-negative", lambda: Q.MinMaxObserver(eps=-1.0), ValueError, "MinMaxObserver",
        ["-1.0"]),
    Bad("minmax-range-without-zero", lambda: Q.MinMaxObserver(quant_min=5, quant_max=100),
        ValueError, "MinMaxObserver", ["[5, 100]"]),
    Bad("minmax-range-too-wide", lambda: Q.MinMaxObserver(quant_min=0, quant_max=1000),
        ValueError, "MinMaxObserver", ["[0, 1000]"]),
    Bad("minmax-only-quant-min", lambda: Q.MinMaxObserver(quant_min=0), ValueError,
        "MinMaxObserver", ["quant_max=None"]),
    Bad("minmax-symmetric-reduce-range",
        lambda: Q.MinMaxObserver(qscheme=Q.per_tensor_symmetric, reduce_range=True), ValueError,
        "MinMaxObserver", ["quint8"]),
    Bad("minmax-observes-int", lambda: Q.MinMaxObserver()(wick.ones(3, dtype=wick.int64)),
        TypeError, "MinMaxObserver", ["int64"]),
    Bad("minmax-observes-list", lambda: Q.MinMaxObserver()([1.0, 2.0]), TypeError,
        "MinMaxObserver", ["list"]),
    # silent: the scale came back NaN (PyTorch asserts) or infinite, so every value quantized
    # to the same code.
    Bad("minmax-observed-nan", lambda: _observed([math.nan, 1.0]), RuntimeError,
        "MinMaxObserver.calculate_qparams", ["nan", "not finite"]),
    Bad("minmax-observed-inf", lambda: _observed([math.inf, 1.0]), RuntimeError,
        "MinMaxObserver.calculate_qparams", ["inf"]),
    Bad("per-channel-observed-nan", lambda: _observed([[math.nan, 1.0]],
                                                       Q.PerChannelMinMaxObserver),
        RuntimeError, "PerChannelMinMaxObserver.calculate_qparams", ["nan"]),
    Bad("moving-average-observed-inf", lambda: _observed([-math.inf, 1.0],
                                                         Q.MovingAverageMinMaxObserver),
        RuntimeError, "MovingAverageMinMaxObserver.calculate_qparams", ["-inf"]),
    Bad("histogram-observed-inf", lambda: _observed([-math.inf, 1.0], Q.HistogramObserver),
        RuntimeError, "histc", ["[-inf, 1]", "not finite"]),
    Bad("moving-average-constant-2",
        lambda: Q.MovingAverageMinMaxObserver(averaging_constant=2.0), ValueError,
        "MovingAverageMinMaxObserver", ["2.0"]),
    Bad("moving-average-constant-0",
        lambda: Q.MovingAverageMinMaxObserver(averaging_constant=0.0), ValueError,
        "MovingAverageMinMaxObserver", ["0.0"]),
    Bad("per-channel-axis-str", lambda: Q.PerChannelMinMaxObserver(ch_axis="0"), TypeError,
        "PerChannelMinMaxObserver", ["'0'"]),
    Bad("per-channel-axis-out-of-range", lambda: _per_channel_axis(3), ValueError,
        "PerChannelMinMaxObserver", ["ch_axis 3"]),
    Bad("per-channel-channels-change", _per_channel_twice, ValueError,
        "PerChannelMinMaxObserver", ["2 channels", "4"]),
    Bad("per-channel-per-tensor-scheme",
        lambda: Q.PerChannelMinMaxObserver(qscheme=Q.per_tensor_affine), ValueError,
        "PerChannelMinMaxObserver", ["per_tensor_affine"]),
    Bad("histogram-bins-0", lambda: Q.HistogramObserver(bins=0), ValueError,
        "HistogramObserver", ["0"]),
    Bad("histogram-bins-negative", lambda: Q.HistogramObserver(bins=-5), ValueError,
        "HistogramObserver", ["-5"]),
    Bad("histogram-upsample-0", lambda: Q.HistogramObserver(upsample_rate=0), ValueError,
        "HistogramObserver", ["upsample_rate"]),
    Bad("histogram-observes-int", lambda: Q.HistogramObserver()(wick.ones(3, dtype=wick.int64)),
        TypeError, "HistogramObserver", ["int64"]),
    Bad("percentile-below-50", lambda: Q.PercentileObserver(percentile=40), ValueError,
        "PercentileObserver", ["40"]),
    Bad("percentile-above-100", lambda: Q.PercentileObserver(percentile=101), ValueError,
        "PercentileObserver", ["101"]),
    Bad("placeholder-qparams", lambda: Q.PlaceholderObserver().calculate_qparams(),
        RuntimeError, "PlaceholderObserver", ["no quantization parameters"]),
    Bad("observer-unknown-argument", lambda: Q.MinMaxObserver.with_args(foo=1)(), TypeError,
        "MinMaxObserver", ["'foo'"]),
]

FLOW = [
    Bad("qconfig-observer-instance",
        lambda: Q.QConfig(activation=Q.MinMaxObserver(), weight=Q.default_weight_observer),
        ValueError, "QConfig", ["instance"]),
    Bad("qconfig-int", lambda: Q.QConfig(activation=3, weight=Q.default_weight_observer),
        TypeError, "QConfig", ["int"]),
    Bad("default-qconfig-backend", lambda: Q.get_default_qconfig("arm"), ValueError,
        "get_default_qconfig", ["'arm'"]),
    Bad("default-qconfig-version", lambda: Q.get_default_qconfig("x86", version=5), ValueError,
        "get_default_qconfig", ["5"]),
    Bad("fuse-not-a-module", lambda: Q.fuse_modules(3, [["a", "b"]]), TypeError, "fuse_modules",
        ["int"]),
    Bad("fuse-missing-name", lambda: Q.fuse_modules(_conv_bn(), [["0", "9"]]), AttributeError,
        "fuse_modules", ["'9'"]),
    Bad("fuse-one-module", lambda: Q.fuse_modules(_conv_bn(), [["0"]]), TypeError,
        "fuse_modules", ["['0']"]),
    Bad("fuse-unsupported-pair", lambda: Q.fuse_modules(_conv_bn(), [["2", "3"]]), ValueError,
        "fuse_modules", ["ReLU + Linear"]),
    Bad("fuse-empty-list", lambda: Q.fuse_modules(_conv_bn(), []), TypeError, "fuse_modules",
        ["non-empty"]),
    Bad("fuse-batchnorm-training", lambda: Q.fuse_modules(_conv_bn(train=True), [["0", "1"]]),
        RuntimeError, "fuse_modules", ["eval mode", "training=True"]),
    Bad("fuse-batchnorm-width", lambda: Q.fuse_modules(_conv_bn(bn_features=3), [["0", "1"]]),
        ValueError, "fuse_modules", ["3 features", "2 output channels"]),
    Bad("fuse-batchnorm-no-statistics", lambda: Q.fuse_conv_bn_eval(
        nn.Conv2d(1, 2, 3).eval(), nn.BatchNorm2d(2, track_running_stats=False).eval()),
        ValueError, "fuse_modules", ["track_running_stats=False"]),
    Bad("prepare-not-a-module", lambda: Q.prepare(3), TypeError, "prepare", ["int"]),
    Bad("prepare-no-qconfig", lambda: Q.prepare(nn.Sequential(nn.Linear(2, 2))), RuntimeError,
        "prepare", ["no module has a qconfig"]),
    Bad("prepare-twice", lambda: Q.prepare(_prepared()), RuntimeError, "prepare",
        ["already prepared"]),
    Bad("prepare-asymmetric-weights", _with_qconfig(Q.MinMaxObserver, Q.MinMaxObserver),
        ValueError, "prepare", ["'1' (Linear)", "symmetric int8"]),
    Bad("prepare-int8-activations",
        _with_qconfig(Q.MinMaxObserver.with_args(dtype=Q.qint8), Q.default_weight_observer),
        ValueError, "prepare", ["'0' (QuantStub)", "dtype int8"]),
    Bad("calibrate-unprepared", lambda: Q.calibrate(nn.Linear(2, 2), [(wick.ones(1, 2), 0)]),
        RuntimeError, "calibrate", ["prepare"]),
    Bad("calibrate-num-batches-0", lambda: _calibrate([(wick.randn(5, 4), 0)], 0), ValueError,
        "calibrate", ["got 0"]),
    Bad("calibrate-num-batches-negative", lambda: _calibrate([(wick.randn(5, 4), 0)], -1),
        ValueError, "calibrate", ["-1"]),
    Bad("calibrate-no-batches", lambda: _calibrate([]), RuntimeError, "calibrate",
        ["no batches"]),
    Bad("calibrate-wrong-width", lambda: _calibrate([(wick.randn(5, 7), 0)]), ValueError,
        "linear", ["(5, 7)"]),
    Bad("convert-not-a-module", lambda: Q.convert("m"), TypeError, "convert", ["str"]),
    Bad("convert-unprepared", lambda: Q.convert(nn.Sequential(nn.Linear(2, 2))), RuntimeError,
        "convert", ["'0' (Linear)", "no observer"]),
    Bad("convert-uncalibrated", lambda: Q.convert(_prepared()), RuntimeError, "convert",
        ["saw no data"]),
    Bad("convert-functional-relu", _convert_functional, RuntimeError, "convert",
        ["'b' (Linear)", "F.relu"]),
]

KERNELS = [
    Bad("fake-quant-scale-0", lambda: Q.fake_quantize_per_tensor_affine(wick.ones(3), 0.0, 0, 0,
                                                                        255),
        ValueError, "fake_quantize_per_tensor_affine", ["0.0"]),
    Bad("fake-quant-scale-negative",
        lambda: Q.fake_quantize_per_tensor_affine(wick.ones(3), -0.1, 0, 0, 255), ValueError,
        "fake_quantize_per_tensor_affine", ["-0.1"]),
    Bad("fake-quant-range-reversed",
        lambda: Q.fake_quantize_per_tensor_affine(wick.ones(3), 0.1, 0, 255, 0), ValueError,
        "fake_quantize_per_tensor_affine", ["quant_min=255"]),
    # silent: a zero point outside the range gave values off the grid (-4.5 for 1.0).
    Bad("fake-quant-zero-point-outside",
        lambda: Q.fake_quantize_per_tensor_affine(wick.ones(3), 0.1, 300, 0, 255), ValueError,
        "fake_quantize_per_tensor_affine", ["300", "[0, 255]"]),
    Bad("fake-quant-int-input",
        lambda: Q.fake_quantize_per_tensor_affine(wick.ones(3, dtype=wick.int64), 0.1, 0, 0, 255),
        TypeError, "fake_quantize_per_tensor_affine", ["int64"]),
    Bad("fake-quant-channel-scale-count", lambda: _fq_channel(scale_n=3), ValueError,
        "fake_quantize_per_channel_affine", ["scale", "[3]"]),
    # silent: axis 5 was taken modulo the rank, and the message spoke of axis 1.
    Bad("fake-quant-channel-axis", lambda: _fq_channel(axis=5), IndexError,
        "fake_quantize_per_channel_affine", ["axis 5"]),
    Bad("fake-quant-channel-zero-point-count", lambda: _fq_channel(zero_n=3), ValueError,
        "fake_quantize_per_channel_affine", ["zero_point", "[3]"]),
    Bad("quantize-int-input",
        lambda: nnq.quantize_per_tensor(wick.ones(3, dtype=wick.int64), 0.1, 0, wick.uint8),
        TypeError, "quantize_per_tensor", ["int64"]),
    Bad("quantize-scale-negative", lambda: nnq.quantize_per_tensor(wick.ones(3), -0.1, 0),
        ValueError, "quantize_per_tensor", ["-0.1"]),
    Bad("quantize-scale-nan", lambda: nnq.quantize_per_tensor(wick.ones(3), math.nan, 0),
        ValueError, "quantize_per_tensor", ["nan"]),
    Bad("quantize-zero-point-300", lambda: nnq.quantize_per_tensor(wick.ones(3), 0.1, 300),
        ValueError, "quantize_per_tensor", ["300"]),
    Bad("quantize-int8-zero-point-200",
        lambda: nnq.quantize_per_tensor(wick.ones(3), 0.1, 200, wick.int8), ValueError,
        "quantize_per_tensor", ["200"]),
    Bad("quantize-float-dtype",
        lambda: nnq.quantize_per_tensor(wick.ones(3), 0.1, 0, wick.float32), ValueError,
        "quantize_per_tensor", ["float32"]),
    Bad("dequantize-float", lambda: nnq.dequantize(wick.ones(3), 0.1, 0), TypeError,
        "dequantize", ["float32"]),
    Bad("dequantize-scale-negative",
        lambda: nnq.dequantize(wick.ones(3, dtype=wick.uint8), -0.1, 0), ValueError,
        "dequantize", ["-0.1"]),
    Bad("quantize-module-int8", lambda: nnq.Quantize(0.1, 0, wick.int8), ValueError, "Quantize",
        ["int8"]),
    Bad("quantize-module-int-input", lambda: nnq.Quantize(0.1, 0)(wick.ones(3, dtype=wick.int64)),
        TypeError, "Quantize", ["int64"]),
    Bad("quantized-model-wrong-width", lambda: _quantized()(wick.ones(2, 5)), ValueError,
        "Linear", ["[2, 5]"]),
    Bad("quantized-linear-float-input", lambda: _quantized()[1](wick.ones(2, 4)), TypeError,
        "Linear", ["float32", "QuantStub"]),
]

CASES = OBSERVERS + FLOW + KERNELS


@parametrize(CASES)
def test_bad_input(case):
    check(case)
