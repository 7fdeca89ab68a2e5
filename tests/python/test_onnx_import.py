"""wick.onnx.load against PyTorch and ONNX Runtime: torchvision's ResNet-18 exported by PyTorch's
own torch.onnx.export runs in wick's executor with PyTorch's outputs; small exported models and
hand-built graphs cover each supported operator; a hand-built QDQ graph matches ONNX Runtime;
bad files and the fuzzers are in test_onnx_import_errors.py."""

import numpy as np
import pytest

import wick
from reference import torch

onnx = pytest.importorskip("onnx",
                           reason="onnx is not installed (scripts/setup.sh puts it in .venv)")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

import wick.onnx  # noqa: E402
from onnx_graphs import (_f32, _i64, make_model, needs_ort, onnxruntime, ort_run,  # noqa: E402
                         tensor_info)

try:
    import torchvision
except ImportError:  # pragma: no cover
    torchvision = None

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch is not installed")


def export(model, args, path, dynamic_batch=False, **kwargs):
    """torch.onnx.export at opset 17 with inputs x0, x1, ... and outputs y0, y1, ..."""
    args = args if isinstance(args, tuple) else (args,)
    names = [f"x{i}" for i in range(len(args))]
    outs = model(*args)
    outs = outs if isinstance(outs, tuple) else (outs,)
    out_names = [f"y{i}" for i in range(len(outs))]
    axes = {n: {0: "batch"} for n in names + out_names} if dynamic_batch else None
    torch.onnx.export(model, args, str(path), opset_version=17, input_names=names,
                      output_names=out_names, dynamic_axes=axes, **kwargs)
    return str(path)


def same_as_torch(model, args, path, atol=1e-5, compile=True, **kwargs):
    args = args if isinstance(args, tuple) else (args,)
    with torch.no_grad():
        expected = model(*args)
        loaded = wick.onnx.load(export(model, args, path, **kwargs), compile=compile)
    got = loaded(*[a.numpy() for a in args])
    expected = expected if isinstance(expected, tuple) else (expected,)
    got = got if isinstance(got, tuple) else (got,)
    for g, e in zip(got, expected):
        assert list(g.shape) == list(e.shape)
        np.testing.assert_allclose(g.numpy(), e.numpy(), rtol=1e-5, atol=atol)
    return loaded


# ---- ResNet-18 exported by PyTorch, end to end ----

@needs_torch
@pytest.mark.skipif(torchvision is None, reason="torchvision is not installed")
def test_resnet18_exported_by_pytorch_matches_pytorch_and_onnxruntime(tmp_path):
    torch.manual_seed(0)
    model = torchvision.models.resnet18(weights=None).eval()
    path = export(model, torch.randn(1, 3, 64, 64), tmp_path / "resnet18.onnx",
                  dynamic_batch=True)
    loaded = wick.onnx.load(path)
    assert loaded.graph is None and loaded.retraces == 0
    for batch in (1, 3):
        x = torch.randn(batch, 3, 64, 64)
        with torch.no_grad():
            expected = model(x).numpy()
        got = loaded(wick.from_numpy(x.numpy())).numpy()
        assert got.shape == (batch, 1000)
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)
        if onnxruntime is not None:
            np.testing.assert_allclose(got, ort_run(path, x.numpy())[0], rtol=1e-4, atol=1e-4)
    # The second batch size traced again; the graph the executor replays is printable.
    assert loaded.retraces == 1
    text = str(loaded.graph)
    assert "conv2d" in text and "f32[3, 1000]" in text
    again = loaded(x.numpy()).numpy()  # a replay, no new trace
    assert loaded.retraces == 1
    # The traced call ran eagerly; the replay runs the frozen graph, whose 3x3 convolutions use
    # Winograd (Note [Winograd F(2x2, 3x3)]): equal to float32 rounding, not bit for bit.
    np.testing.assert_allclose(again, got, rtol=1e-5, atol=1e-5)
    assert loaded.retraces == 1


# ---- each supported op, exported by PyTorch ----

class Blocks(torch.nn.Module if torch is not None else object):
    """Conv (strides, dilation, groups, bias-less), BatchNorm, pools, Concat, Flatten, Gemm."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(4, 8, 3, stride=2, padding=1)
        self.grouped = torch.nn.Conv2d(8, 8, 3, padding=2, dilation=2, groups=4, bias=False)
        self.bn = torch.nn.BatchNorm2d(8)
        self.fc = torch.nn.Linear(16 * 2 * 2, 5)

    def forward(self, x):
        y = self.bn(self.grouped(torch.relu(self.conv(x))))
        a = torch.nn.functional.avg_pool2d(y, 3, stride=2, padding=1)
        m = torch.nn.functional.max_pool2d(y, 2, ceil_mode=True)[:, :, :a.shape[2], :a.shape[3]]
        z = torch.cat([a, m], 1)
        z = torch.nn.functional.adaptive_avg_pool2d(z, 2)
        return torch.softmax(self.fc(torch.flatten(z, 1)), dim=1)


@needs_torch
def test_layers_without_folding(tmp_path):
    torch.manual_seed(1)
    model = Blocks().eval()
    with torch.no_grad():  # running statistics that are not 0 and 1
        model.bn.running_mean.uniform_(-1, 1)
        model.bn.running_var.uniform_(0.5, 2)
    x = torch.randn(2, 4, 16, 16)
    loaded = same_as_torch(model, x, tmp_path / "blocks.onnx", do_constant_folding=False,
                           training=torch.onnx.TrainingMode.PRESERVE)
    ops = {n.op for n in loaded.nodes}
    assert {"Conv", "BatchNormalization", "AveragePool", "MaxPool", "Concat", "Flatten",
            "Gemm", "Softmax", "Relu"} <= ops, ops
    # The executor's passes folded the batch norm into the convolution before it.
    assert "conv+bn folding: 1" in loaded.log
    assert "batch_norm" not in str(loaded.graph)


class Arithmetic(torch.nn.Module if torch is not None else object):
    """MatMul, broadcasting Add/Sub/Mul/Div, Reshape with 0/-1 from Shape/Gather, Transpose,
    Unsqueeze/Squeeze, LogSoftmax, Sigmoid, Tanh, Clip, Dropout, Gemm with alpha/beta."""

    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(6, 4))
        self.bias = torch.nn.Parameter(torch.randn(4))
        self.drop = torch.nn.Dropout(0.5)

    def forward(self, x, y):
        h = torch.matmul(x, self.w) + self.bias          # [B, 3, 4]
        h = (h - y.unsqueeze(1)) * 0.5 / (y.abs().unsqueeze(1) + 1)
        h = h.reshape(x.size(0), -1)                     # Shape -> Gather -> Reshape
        h = torch.sigmoid(h) + torch.tanh(h).clamp(-0.5, 0.25)
        h = self.drop(h).view(x.size(0), 3, 4).transpose(1, 2).unsqueeze(1).squeeze(1)
        g = torch.addmm(y, x[:, 0, :], self.w, beta=0.5, alpha=2.0)
        return torch.log_softmax(h, dim=-1), g


@needs_torch
@pytest.mark.parametrize("compile", [True, False])
def test_arithmetic_and_shapes(tmp_path, compile):
    torch.manual_seed(2)
    model = Arithmetic().eval()
    args = (torch.randn(2, 3, 6), torch.randn(2, 4))
    loaded = same_as_torch(model, args, tmp_path / "arith.onnx", dynamic_batch=True,
                           compile=compile)
    ops = {n.op for n in loaded.nodes}
    assert {"MatMul", "Add", "Sub", "Mul", "Div", "Reshape", "Transpose", "Unsqueeze", "Squeeze",
            "Sigmoid", "Tanh", "Clip", "LogSoftmax", "Gemm"} <= ops, ops
    # Another batch size: the shape arithmetic is recomputed, not frozen at the first trace.
    x, y = torch.randn(5, 3, 6), torch.randn(5, 4)
    got = loaded(x.numpy(), y.numpy())
    with torch.no_grad():
        expected = model(x, y)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g.numpy(), e.numpy(), rtol=1e-5, atol=1e-5)


@needs_torch
def test_linear_exports_as_gemm_with_transB(tmp_path):
    torch.manual_seed(3)
    model = torch.nn.Sequential(torch.nn.Linear(7, 3), torch.nn.ReLU()).eval()
    loaded = same_as_torch(model, torch.randn(4, 7), tmp_path / "linear.onnx")
    gemm = [n for n in loaded.nodes if n.op == "Gemm"][0]
    assert gemm.attrs.get("transB") == 1


def test_round_trip_through_wicks_own_exporter(tmp_path):
    """wick.onnx.export's file (dynamic batch: Shape, Slice, Expand, Concat around the
    reshapes) loads back and gives the eager model's outputs at the traced and another batch."""
    import wick.models
    if not wick.onnx.available():
        pytest.skip("this build of wick has no ONNX exporter (libonnx-dev, libprotobuf-dev)")
    wick.manual_seed(0)
    model = wick.models.resnet20().eval()
    path = str(tmp_path / "resnet20.onnx")
    wick.onnx.export(model, (wick.randn(2, 3, 32, 32),), path)
    loaded = wick.onnx.load(path)
    for batch in (2, 5):
        x = wick.randn(batch, 3, 32, 32)
        with wick.no_grad():
            expected = model(x).numpy()
        np.testing.assert_allclose(loaded(x).numpy(), expected, rtol=1e-5, atol=1e-5)
    assert loaded.retraces == 1


@needs_ort
def test_asymmetric_pads_and_same_upper_match_onnxruntime():
    rng = np.random.default_rng(4)
    w = numpy_helper.from_array(rng.standard_normal((3, 2, 3, 3)).astype(np.float32), "w")
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[0, 1, 2, 1], strides=[2, 1]),
             helper.make_node("MaxPool", ["c"], ["m"], kernel_shape=[2, 3], auto_pad="SAME_UPPER",
                              strides=[2, 2]),
             helper.make_node("AveragePool", ["m"], ["y"], kernel_shape=[2, 2], pads=[1, 0, 0, 1],
                              count_include_pad=1)]
    model = make_model(nodes, [tensor_info("x", [1, 2, 9, 8])], [tensor_info("y", list("nchw"))],
                       [w])
    x = rng.standard_normal((1, 2, 9, 8)).astype(np.float32)
    expected = ort_run(model, x)[0]
    for compile in (True, False):
        got = wick.onnx.load(model, compile=compile)(x).numpy()
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


# One small graph per operator (or per opset's form of one), against ONNX Runtime:
# (name, nodes, graph inputs as arrays, initializers as arrays, opset).
_GRAPHS = [
    ("slice_gather_dynamic", [
        helper.make_node("Slice", ["x", "st", "en", "ax", "sp"], ["s"]),
        helper.make_node("Gather", ["s", "idx"], ["y"], axis=1)],
     {"x": _f32(3, 7, 5)}, {"st": _i64(1, -4), "en": _i64(7, 100), "ax": _i64(1, 2),
                            "sp": _i64(2, 1), "idx": _i64([0, -1], [1, 1])}, 17),
    ("pad_modes", [
        helper.make_node("Pad", ["x", "p"], ["a"], mode="reflect"),
        helper.make_node("Pad", ["a", "p", "v"], ["b"], mode="constant"),
        helper.make_node("Pad", ["b", "p"], ["y"], mode="edge")],
     {"x": _f32(1, 2, 4, 5)}, {"p": _i64(0, 0, 1, 2, 0, 0, 2, 1),
                               "v": np.array(1.5, np.float32)}, 17),
    ("expand_where_cast_compare", [
        helper.make_node("Expand", ["x", "shape"], ["e"]),
        helper.make_node("Greater", ["e", "z"], ["g"]),
        helper.make_node("Where", ["g", "e", "z"], ["w"]),
        helper.make_node("Cast", ["g"], ["c"], to=TensorProto.FLOAT),
        helper.make_node("Max", ["w", "c", "z"], ["y"])],
     {"x": _f32(3, 1)}, {"shape": _i64(2, 3, 4), "z": np.array(0.25, np.float32)}, 17),
    ("opset11_forms", [  # axes as attributes, Softmax over a flattened [N, C*H]
        helper.make_node("Unsqueeze", ["x"], ["u"], axes=[0, 3]),
        helper.make_node("Squeeze", ["u"], ["q"], axes=[0]),
        helper.make_node("Softmax", ["q"], ["s"], axis=1),
        helper.make_node("ReduceMean", ["s"], ["y"], axes=[2], keepdims=0)],
     {"x": _f32(2, 3, 4)}, {}, 11),
    ("clip_leaky_global_max", [
        helper.make_node("Clip", ["x", "lo", ""], ["c"]),
        helper.make_node("LeakyRelu", ["c"], ["l"], alpha=0.2),
        helper.make_node("GlobalMaxPool", ["l"], ["y"])],
     {"x": _f32(2, 3, 4, 5)}, {"lo": np.array(-0.5, np.float32)}, 17),
    ("constant_shapes_and_integer_division", [
        helper.make_node("Constant", [], ["k"], value_ints=[7, -7]),
        helper.make_node("Div", ["k", "two"], ["d"]),  # static integers: truncation
        helper.make_node("Shape", ["x"], ["s"], start=1),
        helper.make_node("Concat", ["s", "d"], ["cat"], axis=0),
        helper.make_node("ConstantOfShape", ["s"], ["ones"],
                         value=numpy_helper.from_array(np.array([1.0], np.float32))),
        helper.make_node("Add", ["x", "ones"], ["a"]),
        helper.make_node("Cast", ["cat"], ["cf"], to=TensorProto.FLOAT),
        helper.make_node("Mul", ["a", "f"], ["m"]),
        helper.make_node("Identity", ["m"], ["y"]),
        helper.make_node("Identity", ["cf"], ["y2"])],
     {"x": _f32(2, 3)}, {"two": _i64(2), "f": np.array(2.0, np.float32)}, 17),
    ("flatten_negative_axis", [  # axis + rank: -1 on [2, 3, 4] is (6, 4)
        helper.make_node("Flatten", ["x"], ["y"], axis=-1),
        helper.make_node("Flatten", ["x"], ["y2"], axis=-3)],
     {"x": _f32(2, 3, 4)}, {}, 17),
    ("gather_indices_from_an_input", [  # negative indices count from the end
        helper.make_node("Gather", ["x", "idx"], ["y"]),
        helper.make_node("Gather", ["x", "idx"], ["y2"], axis=1),
        helper.make_node("Gather", ["w", "idx"], ["y3"])],
     {"x": _f32(5, 4), "idx": _i64([0, 1, -1])}, {"w": _f32(6, 2, seed=1)}, 17),
    ("clip_without_bounds", [
        helper.make_node("Clip", ["x"], ["c"]),
        helper.make_node("Clip", ["c", "", ""], ["y"])],
     {"x": _f32(2, 3) * 1e30}, {}, 17),
    ("clip_opset9_without_bounds", [helper.make_node("Clip", ["x"], ["y"])],
     {"x": _f32(2, 3) * 1e30}, {}, 9),
    ("pools_with_pads_wider_than_half_the_kernel", [  # ONNX Runtime allows up to kernel - 1
        helper.make_node("AveragePool", ["x"], ["y"], kernel_shape=[3, 3], pads=[2, 1, 2, 1],
                         count_include_pad=1),
        helper.make_node("AveragePool", ["x"], ["y2"], kernel_shape=[3, 3], pads=[2, 1, 1, 2],
                         strides=[2, 2], ceil_mode=1, count_include_pad=1),
        helper.make_node("MaxPool", ["x"], ["y3"], kernel_shape=[3, 2], pads=[2, 1, 1, 0],
                         strides=[2, 1], ceil_mode=1)],
     {"x": _f32(1, 2, 7, 6)}, {}, 17),
    ("scalars_stay_scalars", [  # 0-d values stayed 1-D through np.ascontiguousarray
        helper.make_node("ReduceMean", ["x"], ["r"], keepdims=0),
        helper.make_node("Add", ["r", "eps"], ["y"]),
        helper.make_node("Mul", ["s", "eps"], ["y2"]),
        helper.make_node("Add", ["qa", "qb"], ["q"]),  # NumPy folds two 0-d arrays to a scalar
        helper.make_node("DequantizeLinear", ["q", "eps"], ["y3"]),
        helper.make_node("Mul", ["x", "s"], ["y4"])],
     {"x": _f32(2, 3), "s": np.array(1.5, np.float32)},
     {"eps": np.array(0.5, np.float32), "qa": np.array(3, np.uint8),
      "qb": np.array(4, np.uint8)}, 17),
    ("reduce_mean_noop_with_empty_axes", [
        helper.make_node("ReduceMean", ["x"], ["y"], noop_with_empty_axes=1),
        helper.make_node("ReduceMean", ["x"], ["y2"], keepdims=0)],
     {"x": _f32(2, 3)}, {}, 18),
]


@needs_ort
@pytest.mark.parametrize("name, nodes, inputs, inits, opset", _GRAPHS, ids=[g[0] for g in _GRAPHS])
def test_hand_built_graphs_match_onnxruntime(name, nodes, inputs, inits, opset):
    outputs = sorted({o for n in nodes for o in n.output if o.startswith("y")})
    def build(ranks):  # the checker wants each output's rank: ONNX Runtime's results give it
        return make_model(nodes, [tensor_info(k, list(v.shape),
                                              helper.np_dtype_to_tensor_dtype(v.dtype))
                                  for k, v in inputs.items()],
                          [tensor_info(o, None if r is None else [f"{o}_{i}" for i in range(r)])
                           for o, r in zip(outputs, ranks)],
                          [numpy_helper.from_array(v, k) for k, v in inits.items()], opset)

    expected = ort_run(build([None] * len(outputs)), *inputs.values())
    model = build([e.ndim for e in expected])
    for compile in (True, False):
        got = wick.onnx.load(model, compile=compile)(*inputs.values())
        got = got if isinstance(got, tuple) else (got,)
        for g, e in zip(got, expected):
            assert list(g.shape) == list(e.shape)  # assert_allclose takes [1] for []
            np.testing.assert_allclose(g.numpy(), e, rtol=1e-6, atol=1e-6)


def test_a_dropped_compiled_model_is_freed():
    """The compiled function is held by wick's C++ executor, where Python's garbage collector sees
    no cycle; a cycle back to the model through it kept every loaded model alive (with its
    initializers), which the fuzzer's memory showed: ~30 kB a load."""
    import gc
    import weakref
    model = make_model([helper.make_node("Relu", ["x"], ["y"])], [tensor_info("x", [2])],
                       [tensor_info("y", [2])])
    loaded = wick.onnx.load(model, compile=True)
    loaded(np.ones(2, np.float32))
    ref = weakref.ref(loaded)
    del loaded
    gc.collect()
    assert ref() is None


# ---- QuantizeLinear / DequantizeLinear ----

@needs_ort
@pytest.mark.parametrize("qtype", [TensorProto.UINT8, TensorProto.INT8])
def test_qdq_matches_onnxruntime(qtype):
    """x -> Q -> DQ -> MatMul(DQ(int8 weight, per-column scales)) -> Q -> DQ, and a Q output."""
    rng = np.random.default_rng(5)
    np_q = np.uint8 if qtype == TensorProto.UINT8 else np.int8
    zp = np.array(128 if qtype == TensorProto.UINT8 else 3, np_q)
    inits = [numpy_helper.from_array(np.array(0.02, np.float32), "s"),
             numpy_helper.from_array(zp, "zp"),
             numpy_helper.from_array(rng.integers(-127, 128, (8, 5)).astype(np.int8), "wq"),
             numpy_helper.from_array(rng.uniform(0.01, 0.05, 5).astype(np.float32), "ws"),
             numpy_helper.from_array(np.zeros(5, np.int8), "wzp"),
             numpy_helper.from_array(np.array(0.1, np.float32), "s2")]
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "zp"], ["xq"]),
             helper.make_node("DequantizeLinear", ["xq", "s", "zp"], ["xd"]),
             helper.make_node("DequantizeLinear", ["wq", "ws", "wzp"], ["w"], axis=1),
             helper.make_node("MatMul", ["xd", "w"], ["h"]),
             helper.make_node("QuantizeLinear", ["h", "s2", "zp"], ["hq"]),
             helper.make_node("DequantizeLinear", ["hq", "s2", "zp"], ["y"])]
    outputs = [tensor_info("y", [4, 5]), tensor_info("hq", [4, 5], qtype)]
    model = make_model(nodes, [tensor_info("x", [4, 8])], outputs, inits)
    if qtype == TensorProto.INT8 and not hasattr(wick, "int8"):
        with pytest.raises(NotImplementedError, match="output 'hq' has element type INT8"):
            wick.onnx.load(model)
        model = make_model(nodes, [tensor_info("x", [4, 8])], outputs[:1], inits)
    # Values from -4 to 4 saturate at both ends; exact halves test round-half-to-even.
    x = rng.uniform(-4, 4, (4, 8)).astype(np.float32)
    x[0, :4] = np.array([0.01, 0.03, -0.05, 0.07], np.float32)
    expected = ort_run(model, x)
    got = wick.onnx.load(model)(x)
    got = got if isinstance(got, tuple) else (got,)
    np.testing.assert_allclose(got[0].numpy(), expected[0], rtol=1e-6, atol=1e-6)
    if len(got) > 1:  # the quantized output leaves as its ONNX type
        assert got[1].dtype == (wick.uint8 if qtype == TensorProto.UINT8 else wick.int8)
        np.testing.assert_array_equal(got[1].numpy(), expected[1])
