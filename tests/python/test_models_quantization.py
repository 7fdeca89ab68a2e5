"""wick.models.quantization: the networks written for eager-mode int8 (torchvision.models.
quantization's layout). The float network computes what wick.models' does from the same
state_dict; after fuse_model, prepare, calibrate and convert it runs on int8 kernels close to the
float one, and its QDQ export runs in ONNX Runtime with wick's outputs."""

import numpy as np
import pytest

import wick
import wick.models
import wick.nn.quantized as nnq
import wick.quantization as wq
from wick.models import quantization as qmodels


def _pair(seed=0):
    wick.manual_seed(seed)
    float_model = wick.models.resnet18(num_classes=10).eval()
    model = qmodels.resnet18(num_classes=10)
    model.load_state_dict(float_model.state_dict())  # strict: the same names
    return float_model, model.eval()


def _convert(model, shape=(4, 3, 64, 64)):
    model.fuse_model()
    model.qconfig = wq.get_default_qconfig("x86")
    prepared = wq.prepare(model)
    wq.calibrate(prepared, [wick.randn(*shape) for _ in range(3)], progress=False)
    return wq.convert(prepared)


def test_state_dict_names_are_resnet18s():
    float_model, model = _pair()
    assert list(model.state_dict()) == list(float_model.state_dict())


def test_float_forward_equals_resnet18_before_and_after_fusion():
    float_model, model = _pair()
    x = wick.randn(2, 3, 64, 64)
    with wick.no_grad():
        expected = float_model(x).numpy()
        assert np.array_equal(model(x).numpy(), expected)
        model.fuse_model()
        np.testing.assert_allclose(model(x).numpy(), expected, rtol=1e-4, atol=1e-4)


def test_int8_resnet18_is_close_to_float_and_uses_quantized_blocks():
    float_model, model = _pair()
    quantized = _convert(model)
    block = quantized.layer2[0]
    assert type(block.conv1) is nnq.ConvReLU2d and type(block.add_relu) is nnq.QFunctional
    assert type(block.downsample[0]) is nnq.Conv2d and type(quantized.fc) is nnq.Linear
    x = wick.randn(8, 3, 64, 64)
    with wick.no_grad():
        expected, got = float_model(x).numpy(), quantized(x).numpy()
    assert np.abs(got - expected).max() < 0.15 * np.abs(expected).max()
    assert np.mean(got.argmax(1) == expected.argmax(1)) >= 0.75


def _needs_exporter():
    import wick.onnx
    if not wick.onnx.available():
        pytest.skip("this build of wick has no ONNX exporter (libonnx-dev, libprotobuf-dev)")


def test_int8_resnet18_exports_in_qdq_form_and_onnx_runtime_agrees(tmp_path):
    ort = pytest.importorskip("onnxruntime")
    import wick.onnx
    _needs_exporter()
    _, model = _pair()
    quantized = _convert(model)
    path = str(tmp_path / "resnet18-int8.onnx")
    wick.onnx.export(quantized, wick.randn(2, 3, 64, 64), path)
    options = ort.SessionOptions()
    options.log_severity_level = 3
    session = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
    for batch in (1, 3):
        x = wick.randn(batch, 3, 64, 64)
        with wick.no_grad():
            expected = quantized(x).numpy()
        got = session.run(None, {session.get_inputs()[0].name: x.numpy()})[0]
        step = float(quantized.dequant.scale.item())
        assert np.abs(got - expected).max() <= 2 * step + 1e-6


def test_a_dequant_stub_inside_the_network_returns_to_float():
    # the global pooling runs in float between dequant_pool and quant_head; convert must not
    # take the pool for a float module fed a quantized tensor
    _, model = _pair()
    quantized = _convert(model)
    assert type(quantized.dequant_pool) is nnq.DeQuantize
    assert type(quantized.quant_head) is nnq.Quantize


def test_quantize_true_is_refused():
    with pytest.raises(ValueError, match="quantize=True"):
        qmodels.resnet18(quantize=True)
    with pytest.raises(ValueError, match="downloads nothing"):
        qmodels.resnet34(weights="DEFAULT")


def _cifar_pair():
    """wick.models.resnet20 with batch-norm statistics from a few training batches, and its
    quantizable twin loaded from the same state_dict."""
    wick.manual_seed(0)
    float_model = wick.models.resnet20()
    with wick.no_grad():
        for _ in range(3):
            float_model(wick.randn(16, 3, 32, 32))
    float_model.eval()
    model = qmodels.resnet20()
    model.load_state_dict(float_model.state_dict())  # strict: the same names
    return float_model, model.eval()


def test_cifar_resnet20_float_twin_then_int8_close_to_float():
    float_model, model = _cifar_pair()
    assert list(model.state_dict()) == list(float_model.state_dict())
    x = wick.randn(8, 3, 32, 32)
    with wick.no_grad():
        expected = float_model(x).numpy()
        assert np.array_equal(model(x).numpy(), expected)
    quantized = _convert(model, (16, 3, 32, 32))
    shortcut = quantized.layer2[0].downsample  # option A: padded in float, quantized again
    assert type(shortcut.dequant) is nnq.DeQuantize and type(shortcut.quant) is nnq.Quantize
    assert type(quantized.layer3[0].conv1) is nnq.ConvReLU2d
    with wick.no_grad():
        got = quantized(x).numpy()
    assert np.abs(got - expected).max() < 0.05 * np.abs(expected).max()
    assert np.mean(got.argmax(1) == expected.argmax(1)) >= 0.75


def test_int8_resnet20_exports_in_qdq_form_and_onnx_runtime_agrees(tmp_path):
    ort = pytest.importorskip("onnxruntime")
    import wick.onnx
    _needs_exporter()
    quantized = _convert(_cifar_pair()[1], (16, 3, 32, 32))
    path = str(tmp_path / "resnet20-int8.onnx")
    wick.onnx.export(quantized, wick.randn(2, 3, 32, 32), path)
    options = ort.SessionOptions()
    options.log_severity_level = 3
    session = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
    for batch in (1, 5):
        x = wick.randn(batch, 3, 32, 32)
        with wick.no_grad():
            expected = quantized(x).numpy()
        got = session.run(None, {session.get_inputs()[0].name: x.numpy()})[0]
        step = float(quantized.dequant.scale.item())
        assert np.abs(got - expected).max() <= 2 * step + 1e-6
