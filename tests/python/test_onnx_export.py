"""wick.onnx.export checked by the real runtime: every exported file passes onnx.checker, and ONNX
Runtime's outputs equal wick's (1e-5) for the MNIST MLP and CNN, ResNet-20 and ResNet-18, at the
export's batch size and at others (the batch axis is dynamic). Also the view translation
(Note [ONNX views]) op by op, and the errors: an op with no ONNX form names itself and its module."""

import os
import sys

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

import wick  # noqa: E402
import wick.nn as nn  # noqa: E402
import wick.onnx  # noqa: E402
from wick.models import resnet18, resnet20  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "examples"))
from train_mnist import CNN, MLP  # noqa: E402

MODELS = {
    "mlp": (MLP, (1, 28, 28)),
    "cnn": (CNN, (1, 28, 28)),
    "resnet20": (resnet20, (3, 32, 32)),
    "resnet18": (resnet18, (3, 64, 64)),
}


def run_ort(path, x):
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return session.run(None, {session.get_inputs()[0].name: x.numpy()})[0]


def eager(model, x):
    with wick.no_grad():
        return model(x).numpy()


@pytest.mark.parametrize("name,fold", [(name, True) for name in MODELS] +
                         [("mlp", False), ("cnn", False), ("resnet20", False)])
def test_onnx_runtime_equals_wick(tmp_path, name, fold):
    make, shape = MODELS[name]
    wick.manual_seed(0)
    model = make().eval()
    path = tmp_path / f"{name}.onnx"
    proto = wick.onnx.export(model, (wick.randn(2, *shape),), path, do_constant_folding=fold)
    onnx.checker.check_model(onnx.load(str(path)), full_check=True)
    assert proto.opset_import[0].version >= 17
    batch = proto.graph.input[0].type.tensor_type.shape.dim[0]
    assert batch.dim_param == "batch"
    for n in (2, 1, 5):
        x = wick.randn(n, *shape)
        np.testing.assert_allclose(run_ort(path, x), eager(model, x), rtol=1e-5, atol=1e-5)


def test_parameters_are_named_initializers(tmp_path):
    model = CNN().eval()
    proto = wick.onnx.export(model, wick.randn(1, 1, 28, 28), tmp_path / "cnn.onnx",
                             do_constant_folding=False)
    names = {i.name for i in proto.graph.initializer}
    assert {"conv1.weight", "conv1.bias", "conv2.weight", "fc1.weight", "fc2.bias"} <= names
    weight = next(i for i in proto.graph.initializer if i.name == "conv1.weight")
    np.testing.assert_array_equal(onnx.numpy_helper.to_array(weight), model.conv1.weight.detach().numpy())
    ops = {n.op_type for n in proto.graph.node}
    assert {"Conv", "MatMul", "MaxPool", "Relu", "Reshape"} <= ops


def test_folding_leaves_one_conv_per_layer(tmp_path):
    proto = wick.onnx.export(resnet20().eval(), wick.randn(1, 3, 32, 32), tmp_path / "r.onnx")
    ops = [n.op_type for n in proto.graph.node]
    assert ops.count("Conv") == 19  # batch norm folded into each convolution
    assert "Sub" not in ops and "Sqrt" not in ops


class Views(nn.Module):
    """Every kind of view the exporter translates: reshape, transpose, unsqueeze, broadcast and a
    strided slice, composed."""

    def forward(self, x):  # x: [N, 4, 6]
        a = x.transpose(1, 2).reshape(x.shape[0], 24)  # a permutation, then a reshape
        b = x[:, 1:3, ::2]  # a slice with a step
        c = x.permute(2, 0, 1).unsqueeze(0)
        d = x[:, :1, :].expand(x.shape[0], 4, 6)  # a broadcast
        return a.sum(1) + b.sum((1, 2)) + c.sum((0, 1, 3)).sum(0) * 0 + d.sum((1, 2))


def test_views_translate(tmp_path):
    model = Views()
    wick.onnx.export(model, wick.randn(3, 4, 6), tmp_path / "views.onnx", dynamic_batch=False)
    x = wick.randn(3, 4, 6)
    np.testing.assert_allclose(run_ort(tmp_path / "views.onnx", x), eager(model, x), rtol=1e-5,
                               atol=1e-5)


def test_static_batch_keeps_fixed_shapes(tmp_path):
    proto = wick.onnx.export(MLP().eval(), wick.randn(4, 1, 28, 28), tmp_path / "m.onnx",
                             dynamic_batch=False, input_names=["digits"], output_names=["logits"])
    dims = proto.graph.input[0].type.tensor_type.shape.dim
    assert [d.dim_value for d in dims] == [4, 1, 28, 28]
    assert proto.graph.input[0].name == "digits" and proto.graph.output[0].name == "logits"


class Inner(nn.Module):
    def forward(self, x):
        return x.cumprod(1)  # an op without an ONNX export name


class Outer(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.block = nn.Sequential(nn.ReLU(), Inner())

    def forward(self, x):
        return self.block(self.fc(x))


def test_op_without_export_names_op_and_module(tmp_path):
    with pytest.raises(RuntimeError, match=r"op 'cumprod' has no ONNX export \(in module 'block.1'\)"):
        wick.onnx.export(Outer(), wick.randn(2, 4), tmp_path / "bad.onnx")
    assert not (tmp_path / "bad.onnx").exists()  # nothing half-written


def test_bad_arguments(tmp_path):
    model = MLP().eval()
    with pytest.raises(TypeError, match=r"args\[0\] is int"):
        wick.onnx.export(model, [3], tmp_path / "m.onnx")
    with pytest.raises(TypeError, match="Tensor or a non-empty tuple"):
        wick.onnx.export(model, (), tmp_path / "m.onnx")
    with pytest.raises(FileNotFoundError, match="no such directory"):
        wick.onnx.export(model, wick.randn(1, 1, 28, 28), tmp_path / "missing" / "m.onnx")
    with pytest.raises(ValueError, match="opset_version must be >= 17"):
        wick.onnx.export(model, wick.randn(1, 1, 28, 28), tmp_path / "m.onnx", opset_version=13)
    with pytest.raises(ValueError, match="1 input_names for 1 inputs, 2 output_names"):
        wick.onnx.export(model, wick.randn(1, 1, 28, 28), tmp_path / "m.onnx",
                         output_names=["a", "b"])


def test_training_mode_is_restored(tmp_path):
    model = CNN()
    assert model.training
    wick.onnx.export(model, wick.randn(1, 1, 28, 28), tmp_path / "cnn.onnx")
    assert model.training  # exported in eval mode (dropout off), then put back
