"""wick.onnx.export checked by the real runtime: every exported file passes onnx.checker, and ONNX
Runtime's outputs equal wick's (1e-5) for the MNIST MLP and CNN, ResNet-20 and ResNet-18, at the
export's batch size and at others (the batch axis is dynamic). Also the view translation
(Note [views in ONNX]) op by op, and the errors: an op with no ONNX form names itself and its
module. wick.onnx.export is a Python face over the C++ exporter (jit/onnx_export.h); the `export`
fixture (onnx_graphs.py) skips on a build without it. The file's last tests: a C++ program exports
(examples/export_onnx), and `import wick.onnx` and export need no onnx package."""

import os
import subprocess
import sys

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

import wick  # noqa: E402
import wick.nn as nn  # noqa: E402
import wick.onnx  # noqa: E402
from wick.models import resnet18, resnet20  # noqa: E402
from conftest import BUILD  # noqa: E402
from onnx_graphs import export  # noqa: E402,F401  (the fixture)

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
def test_onnx_runtime_equals_wick(export, tmp_path, name, fold):
    make, shape = MODELS[name]
    wick.manual_seed(0)
    model = make().eval()
    path = tmp_path / f"{name}.onnx"
    proto = export(model, (wick.randn(2, *shape),), path, do_constant_folding=fold)
    onnx.checker.check_model(onnx.load(str(path)), full_check=True)
    assert proto.opset_import[0].version >= 17
    batch = proto.graph.input[0].type.tensor_type.shape.dim[0]
    assert batch.dim_param == "batch"
    for n in (2, 1, 5):
        x = wick.randn(n, *shape)
        np.testing.assert_allclose(run_ort(path, x), eager(model, x), rtol=1e-5, atol=1e-5)


def test_parameters_are_named_initializers(export, tmp_path):
    model = CNN().eval()
    proto = export(model, wick.randn(1, 1, 28, 28), tmp_path / "cnn.onnx",
                             do_constant_folding=False)
    names = {i.name for i in proto.graph.initializer}
    assert {"conv1.weight", "conv1.bias", "conv2.weight", "fc1.weight", "fc2.bias"} <= names
    weight = next(i for i in proto.graph.initializer if i.name == "conv1.weight")
    np.testing.assert_array_equal(onnx.numpy_helper.to_array(weight), model.conv1.weight.detach().numpy())
    ops = {n.op_type for n in proto.graph.node}
    assert {"Conv", "MatMul", "MaxPool", "Relu", "Reshape"} <= ops


def test_folding_leaves_one_conv_per_layer(export, tmp_path):
    proto = export(resnet20().eval(), wick.randn(1, 3, 32, 32), tmp_path / "r.onnx")
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


def test_views_translate(export, tmp_path):
    model = Views()
    export(model, wick.randn(3, 4, 6), tmp_path / "views.onnx", dynamic_batch=False)
    x = wick.randn(3, 4, 6)
    np.testing.assert_allclose(run_ort(tmp_path / "views.onnx", x), eager(model, x), rtol=1e-5,
                               atol=1e-5)


def test_static_batch_keeps_fixed_shapes(export, tmp_path):
    proto = export(MLP().eval(), wick.randn(4, 1, 28, 28), tmp_path / "m.onnx",
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


def test_op_without_export_names_op_and_module(export, tmp_path):
    with pytest.raises(RuntimeError, match=r"op 'cumprod' has no ONNX export \(in module 'block.1'\)"):
        export(Outer(), wick.randn(2, 4), tmp_path / "bad.onnx")
    assert not (tmp_path / "bad.onnx").exists()  # nothing half-written


def test_bad_arguments(export, tmp_path):
    model = MLP().eval()
    with pytest.raises(TypeError, match=r"args\[0\] is int"):
        export(model, [3], tmp_path / "m.onnx")
    with pytest.raises(TypeError, match="Tensor or a non-empty tuple"):
        export(model, (), tmp_path / "m.onnx")
    with pytest.raises(FileNotFoundError, match="no such directory"):
        export(model, wick.randn(1, 1, 28, 28), tmp_path / "missing" / "m.onnx")
    with pytest.raises(ValueError, match="opset_version must be >= 17"):
        export(model, wick.randn(1, 1, 28, 28), tmp_path / "m.onnx", opset_version=13)
    with pytest.raises(ValueError, match="1 input_names for 1 inputs, 2 output_names"):
        export(model, wick.randn(1, 1, 28, 28), tmp_path / "m.onnx",
                         output_names=["a", "b"])


def test_training_mode_is_restored(export, tmp_path):
    model = CNN()
    assert model.training
    export(model, wick.randn(1, 1, 28, 28), tmp_path / "cnn.onnx")
    assert model.training  # exported in eval mode (dropout off), then put back


class Activations(nn.Module):
    """The ops with attributes (slopes, bounds, exponents) and the reductions, each exported as
    its own ONNX operator."""

    def forward(self, x):
        import wick.nn.functional as F
        y = F.leaky_relu(x, 0.2) + F.elu(x, 0.7) + x.clamp(-0.5, 0.8) + x ** 3
        y = y + (x.abs() + 1).rsqrt()
        return y.sum(1) + y.amax(1) - y.amin(1), y.sum((1, 2), keepdim=True)


def test_attribute_ops_and_reductions(export, tmp_path):
    path = tmp_path / "acts.onnx"
    proto = export(Activations(), wick.randn(3, 4, 5), path)
    kinds = {n.op_type for n in proto.graph.node}
    assert {"LeakyRelu", "Elu", "Clip", "Pow", "ReduceSum", "ReduceMax", "ReduceMin"} <= kinds
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    x = wick.randn(6, 4, 5)
    got = session.run(None, {session.get_inputs()[0].name: x.numpy()})
    with wick.no_grad():
        expected = [t.numpy() for t in Activations()(x)]
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-5)


EXPORT_EXAMPLE = os.path.join(BUILD, "examples", "export_onnx")


@pytest.mark.skipif(not os.path.exists(EXPORT_EXAMPLE), reason=f"{EXPORT_EXAMPLE} not built")
@pytest.mark.parametrize("name,fold", [("mlp", 1), ("cnn", 1), ("resnet20", 1), ("resnet20", 0),
                                       ("resnet18", 1)])
def test_cpp_models_exported_from_cpp(tmp_path, name, fold):
    """examples/export_onnx: wick::models written by the C++ exporter from a C++ program; ONNX
    Runtime gives the outputs wick computed there (1e-5), at the traced batch and another."""
    if not wick.onnx.available():
        pytest.skip("this build of wick has no ONNX exporter (libonnx-dev, libprotobuf-dev)")
    path = str(tmp_path / f"{name}.onnx")
    done = subprocess.run([EXPORT_EXAMPLE, "--model", name, "--out", path, "--batch", "3",
                           "--size", "64", "--fold", str(fold)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    onnx.checker.check_model(onnx.load(path), full_check=True)
    sample = wick.load(path + ".sample.safetensors")
    x, expected = sample["input"].numpy(), sample["output"].numpy()
    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    name_in = session.get_inputs()[0].name
    np.testing.assert_allclose(session.run(None, {name_in: x})[0], expected, rtol=1e-5, atol=1e-5)
    (first,) = session.run(None, {name_in: x[:1]})  # the batch axis is dynamic
    np.testing.assert_allclose(first, expected[:1], rtol=1e-5, atol=1e-5)



WITHOUT_ONNX = """
import sys
sys.modules["onnx"] = None  # as if the package were not installed
import wick, wick.onnx
print("exported", wick.onnx.export(wick.nn.Linear(3, 2), wick.randn(2, 3), sys.argv[1]))
try:
    wick.onnx.load(sys.argv[1])
except ImportError as e:
    print("load:", e)
"""


def test_export_needs_no_onnx_package_and_load_says_it_does(export, tmp_path):
    path = str(tmp_path / "linear.onnx")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    done = subprocess.run([sys.executable, "-c", WITHOUT_ONNX, path], capture_output=True,
                          text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr
    assert "exported None" in done.stdout  # no ModelProto without the package, but the file
    assert "load: wick.onnx.load reads ONNX files with the onnx package" in done.stdout
    onnx.checker.check_model(onnx.load(path), full_check=True)


def test_multiple_inputs_and_outputs_take_numbered_names(export, tmp_path):
    class Pair(nn.Module):
        def forward(self, a, b):
            return a + b, a * b

    proto = export(Pair(), (wick.randn(1, 3), wick.randn(1, 3)), tmp_path / "pair.onnx")
    assert [i.name for i in proto.graph.input] == ["input0", "input1"]
    assert [o.name for o in proto.graph.output] == ["output0", "output1"]
    session = ort.InferenceSession(str(tmp_path / "pair.onnx"), providers=["CPUExecutionProvider"])
    a, b = np.ones((4, 3), np.float32), np.full((4, 3), 2, np.float32)  # a batch of 1 traced at 2
    got = session.run(None, {"input0": a, "input1": b})
    np.testing.assert_allclose(got[0], a + b)
    np.testing.assert_allclose(got[1], a * b)
