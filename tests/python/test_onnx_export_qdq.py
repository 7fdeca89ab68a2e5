"""wick.onnx.export of int8 models (wick.quantization.convert's output) in QDQ form (Note [QDQ
export]): onnx.checker accepts the file, the weights are stored as int8, and ONNX Runtime - with
its QDQ fusion into integer kernels and without any graph optimisation - gives outputs within one
quantization step of wick's, at two batch sizes of one dynamic-batch file. The `export` fixture
(onnx_graphs.py) skips on a build of wick without the exporter."""

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

import wick  # noqa: E402
import wick.onnx  # noqa: E402
import wick.nn as nn  # noqa: E402
import wick.nn.quantized as nnq  # noqa: E402
import wick.quantization as wq  # noqa: E402
from wick.models import QuantizableMNISTNet  # noqa: E402
from onnx_graphs import export  # noqa: E402,F401  (the fixture)


@pytest.fixture(autouse=True)
def seeded():
    """The same weights and inputs whatever the test order: the checks below count exactly equal
    outputs, which depends on the draw."""
    wick.manual_seed(0)


class QuantizableMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.quant = wq.QuantStub()
        self.fc1 = nn.Linear(20, 32)
        self.relu = nn.ReLU()
        self.fc2 = nn.Linear(32, 7, bias=False)
        self.dequant = wq.DeQuantStub()

    def forward(self, x):
        return self.dequant(self.fc2(self.relu(self.fc1(self.quant(x)))))


class ResidualConv(nn.Module):
    """A strided, padded, grouped conv, a quantized relu module and a FloatFunctional add."""

    def __init__(self):
        super().__init__()
        self.quant = wq.QuantStub()
        self.conv1 = nn.Conv2d(4, 8, 3, stride=2, padding=1)
        self.relu = nn.ReLU()
        self.conv2 = nn.Conv2d(8, 8, 3, padding=1, groups=2)
        self.skip = nnq.FloatFunctional()
        self.dequant = wq.DeQuantStub()

    def forward(self, x):
        h = self.relu(self.conv1(self.quant(x)))
        return self.dequant(self.skip.add(h, self.conv2(h)))


def _quantize(model, shape, fuse=None):
    wick.manual_seed(0)
    model.eval()
    if fuse:
        model = wq.fuse_modules(model, fuse)
    model.qconfig = wq.get_default_qconfig("x86")
    prepared = wq.prepare(model)
    wq.calibrate(prepared, [wick.randn(*shape) for _ in range(4)], progress=False)
    return wq.convert(prepared)


def _output_step(model):
    return float(model.dequant.scale.item()) if hasattr(model.dequant, "scale") else 1.0


def _check_against_ort(export, model, shape, tmp_path, batches=(2, 5), steps=1):
    path = str(tmp_path / "int8.onnx")
    export(model, wick.randn(*shape), path)
    proto = onnx.load(path)
    onnx.checker.check_model(proto, full_check=True)
    kinds = {n.op_type for n in proto.graph.node}
    assert {"QuantizeLinear", "DequantizeLinear"} <= kinds
    int8 = [i for i in proto.graph.initializer if i.data_type == onnx.TensorProto.INT8]
    assert int8, "the weights must be stored as int8"
    step = _output_step(model)
    levels = (ort.GraphOptimizationLevel.ORT_ENABLE_ALL, ort.GraphOptimizationLevel.ORT_DISABLE_ALL)
    for level in levels:
        options = ort.SessionOptions()
        options.graph_optimization_level = level
        options.log_severity_level = 3  # the fusion's notes on initializers it made unused
        session = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
        for batch in batches:
            x = wick.randn(batch, *shape[1:]) * 1.5
            with wick.no_grad():
                expected = model(x).numpy()
            (got,) = session.run(None, {session.get_inputs()[0].name: x.numpy()})
            assert got.shape == expected.shape
            # one step per requantization on the way: ONNX Runtime's integer kernels (and its
            # float QDQ path) round on their own, and an output off by one step in a layer
            # feeds the next
            assert np.abs(got - expected).max() <= steps * step * 1.001 + 1e-6, (level, batch)
            assert np.mean(got == expected) > 0.6  # most outputs are exactly wick's
    return proto


def test_mlp_with_fused_relu_and_no_bias(export, tmp_path):
    model = _quantize(QuantizableMLP(), (8, 20), fuse=[["fc1", "relu"]])
    assert type(model.fc1) is nnq.LinearReLU
    proto = _check_against_ort(export, model, (8, 20), tmp_path)
    assert sum(n.op_type == "Gemm" for n in proto.graph.node) == 2


def test_mnist_cnn(export, tmp_path):
    model = QuantizableMNISTNet()
    model.eval()
    model = _quantize(model.fuse_model(), (4, 1, 28, 28))
    proto = _check_against_ort(export, model, (4, 1, 28, 28), tmp_path, batches=(1, 3))
    ops = [n.op_type for n in proto.graph.node]
    assert ops.count("Conv") == 2 and ops.count("Gemm") == 2 and "MaxPool" in ops
    weights = {i.name: i for i in proto.graph.initializer if i.data_type == onnx.TensorProto.INT8}
    assert sum(np.prod(i.dims) for i in weights.values()) >= 9216 * 128  # fc1 stays int8


def test_strided_grouped_conv_relu_module_and_residual_add(export, tmp_path):
    model = _quantize(ResidualConv(), (2, 4, 9, 9))
    assert type(model.relu) is nnq.ReLU and type(model.skip) is nnq.QFunctional
    # the sum requantizes h (one step off at most) plus conv2(h): two steps
    _check_against_ort(export, model, (2, 4, 9, 9), tmp_path, steps=2)


def test_uint8_output_without_dequant_stub(export, tmp_path):
    model = _quantize(QuantizableMLP(), (8, 20))
    model.dequant = nn.Identity()  # the model now returns the uint8 tensor itself
    path = str(tmp_path / "u8.onnx")
    export(model, wick.randn(3, 20), path)
    proto = onnx.load(path)
    assert proto.graph.output[0].type.tensor_type.elem_type == onnx.TensorProto.UINT8
    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    x = wick.randn(6, 20)
    with wick.no_grad():
        expected = model(x).numpy().astype(np.int32)
    (got,) = session.run(None, {"input": x.numpy()})
    assert got.dtype == np.uint8 and np.abs(got.astype(np.int32) - expected).max() <= 1


def test_exported_qdq_file_loads_back_into_wick(export, tmp_path):
    model = _quantize(QuantizableMLP(), (8, 20), fuse=[["fc1", "relu"]])
    path = str(tmp_path / "int8.onnx")
    export(model, wick.randn(4, 20), path)
    imported = wick.onnx.load(path)
    x = wick.randn(4, 20)
    with wick.no_grad():
        expected = model(x).numpy()
    got = imported(x)
    got = got[0] if isinstance(got, (list, tuple)) else got
    assert np.abs(got.numpy() - expected).max() <= _output_step(model) * 1.001 + 1e-6
