"""wick.onnx.load against PyTorch and ONNX Runtime: torchvision's ResNet-18 exported by PyTorch's
own torch.onnx.export runs in wick's executor with PyTorch's outputs; small exported models and
hand-built graphs cover each supported operator; a hand-built QDQ graph matches ONNX Runtime;
corrupt, invalid and unsupported files raise ValueError / NotImplementedError, and a corrupt
value asking for a huge result is refused before anything is allocated. Three hypothesis fuzzers
are the parser's fuzz tests (tests/fuzz/ holds the libFuzzer harnesses of the C++ parsers): one
mutates a valid file's bytes, one draws attributes and input shapes and holds whatever runs to
ONNX Runtime, one does that for the pools' pads and ceil_mode."""

import io
import re

import numpy as np
import pytest

import wick
from reference import torch

onnx = pytest.importorskip("onnx",
                           reason="onnx is not installed (scripts/setup.sh puts it in .venv)")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

import wick.onnx  # noqa: E402

try:
    import onnxruntime
except ImportError:  # pragma: no cover
    onnxruntime = None
try:
    import torchvision
except ImportError:  # pragma: no cover
    torchvision = None

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch is not installed")
needs_ort = pytest.mark.skipif(onnxruntime is None, reason="onnxruntime is not installed")


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


def ort_run(model_or_path, *inputs):
    data = model_or_path.SerializeToString() if isinstance(model_or_path, onnx.ModelProto) \
        else model_or_path
    session = onnxruntime.InferenceSession(data, providers=["CPUExecutionProvider"])
    names = [i.name for i in session.get_inputs()]
    return session.run(None, dict(zip(names, inputs)))


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


# ---- ResNet-18 (the acceptance) ----

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
    np.testing.assert_array_equal(again, got)
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


def make_model(nodes, inputs, outputs, initializers=(), opset=17):
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)


def tensor_info(name, shape, elem=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, elem, shape)


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


def _f32(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def _i64(*values):
    return np.array(values, np.int64)


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
            np.testing.assert_allclose(g.numpy(), e, rtol=1e-6, atol=1e-6)


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


# ---- bad input ----

@pytest.fixture(scope="module")
def small_model():
    """Conv -> Relu -> Flatten -> Gemm: the valid model the bad-input tests and the fuzzer
    start from."""
    rng = np.random.default_rng(6)
    inits = [numpy_helper.from_array(rng.standard_normal((2, 1, 3, 3)).astype(np.float32), "w"),
             numpy_helper.from_array(rng.standard_normal(2).astype(np.float32), "b"),
             numpy_helper.from_array(rng.standard_normal((3, 32)).astype(np.float32), "fw")]
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1], strides=[2, 2]),
             helper.make_node("Relu", ["c"], ["r"]),
             helper.make_node("Flatten", ["r"], ["f"]),
             helper.make_node("Gemm", ["f", "fw"], ["y"], transB=1)]
    return make_model(nodes, [tensor_info("x", ["n", 1, 8, 8])], [tensor_info("y", ["n", 3])],
                      inits)


def test_small_model_loads_from_path_bytes_and_file(small_model, tmp_path):
    path = tmp_path / "small.onnx"
    onnx.save(small_model, str(path))
    x = np.random.default_rng(7).standard_normal((2, 1, 8, 8)).astype(np.float32)
    outs = [wick.onnx.load(f)(x).numpy() for f in
            (str(path), path, path.read_bytes(), io.BytesIO(path.read_bytes()), small_model)]
    for out in outs[1:]:
        np.testing.assert_array_equal(out, outs[0])
    if onnxruntime is not None:
        np.testing.assert_allclose(outs[0], ort_run(small_model, x)[0], rtol=1e-5, atol=1e-6)


@needs_ort
def test_external_data_loads_from_a_path_only(small_model, tmp_path):
    model = onnx.ModelProto()
    model.CopyFrom(small_model)  # save_model moves the tensors out of the proto it is given
    path = tmp_path / "m.onnx"
    onnx.save_model(model, str(path), save_as_external_data=True, location="m.data",
                    size_threshold=0)
    assert (tmp_path / "m.data").exists()
    x = np.random.default_rng(7).standard_normal((2, 1, 8, 8)).astype(np.float32)
    expected = ort_run(str(path), x)[0]
    for f in (str(path), path):
        np.testing.assert_allclose(wick.onnx.load(f)(x).numpy(), expected, rtol=1e-5, atol=1e-6)
    # Without the file's folder there is nowhere to read the data from.
    for f in (path.read_bytes(), io.BytesIO(path.read_bytes()),
              onnx.load(str(path), load_external_data=False)):
        with pytest.raises(NotImplementedError, match=r"\(m.data\); external data needs a path"):
            wick.onnx.load(f)
    (tmp_path / "m.data").unlink()
    with pytest.raises(ValueError, match="m.onnx"):
        wick.onnx.load(path)


def test_truncated_and_random_files_raise_value_error(small_model, tmp_path):
    data = small_model.SerializeToString()
    path = tmp_path / "truncated.onnx"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(ValueError, match="truncated.onnx"):
        wick.onnx.load(str(path))
    noise = np.random.default_rng(8).integers(0, 256, 4096, dtype=np.uint8).tobytes()
    with pytest.raises(ValueError, match="wick.onnx.load"):
        wick.onnx.load(noise)
    with pytest.raises(FileNotFoundError):
        wick.onnx.load(str(tmp_path / "missing.onnx"))
    with pytest.raises(TypeError, match="expected a path"):
        wick.onnx.load(42)


def test_unsupported_op_raises_at_load_naming_op_and_node():
    nodes = [helper.make_node("Relu", ["x"], ["r"]),
             helper.make_node("Hardmax", ["r"], ["y"], name="the_hardmax")]
    model = make_model(nodes, [tensor_info("x", [2, 3])], [tensor_info("y", [2, 3])])
    with pytest.raises(NotImplementedError,
                       match=r"op 'Hardmax' \(node 'the_hardmax'\) is not supported; supported: "
                             r".*Conv"):
        wick.onnx.load(model)


def test_model_failing_the_checker_raises_value_error():
    # Relu reads a name that nothing defines: the checker's topological-order rule.
    nodes = [helper.make_node("Relu", ["nowhere"], ["y"])]
    model = make_model(nodes, [tensor_info("x", [2])], [tensor_info("y", [2])])
    with pytest.raises(ValueError, match="not a valid ONNX model.*nowhere"):
        wick.onnx.load(model)


def test_unsupported_opset_and_attributes_raise_at_load():
    relu = [helper.make_node("Relu", ["x"], ["y"])]
    io_ = ([tensor_info("x", [2])], [tensor_info("y", [2])])
    with pytest.raises(NotImplementedError, match="opset 7"):
        wick.onnx.load(make_model(relu, *io_, opset=7))
    bn = helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"],
                          training_mode=1, name="bn1")
    inits = [numpy_helper.from_array(np.ones(2, np.float32), n) for n in "sbmv"]
    model = make_model([bn], [tensor_info("x", [1, 2, 3])], [tensor_info("y", [1, 2, 3])], inits)
    with pytest.raises(ValueError, match="node 'bn1'.*training_mode"):
        wick.onnx.load(model)


def test_huge_pads_are_refused_before_anything_is_allocated():
    # (2e9 + 4)^2 elements: the byte count would overflow int64 inside an allocation.
    pads = numpy_helper.from_array(np.array([0, 0, 10**9, 10**9] * 2, np.int64), "p")
    model = make_model([helper.make_node("Pad", ["x", "p"], ["y"], name="big")],
                       [tensor_info("x", [1, 1, 4, 4])], [tensor_info("y", list("nchw"))], [pads])
    with pytest.raises(ValueError, match=r"node 'big' \(Pad\): the result would have shape "
                                         r"\[1, 1, 2000000004, 2000000004\]"):
        wick.onnx.load(model)(np.ones((1, 1, 4, 4), np.float32))


def _peak_rss_kib():
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def test_sizes_computed_from_values_are_bounded_before_allocating():
    """A corrupt constant that asks for a huge result is a ValueError naming the node, the shape
    and the bound, raised at once; the bound is min(2**32, physical memory / itemsize / 4)."""
    import os
    import time
    from wick.onnx import _onnx_ops
    bound = _onnx_ops.element_bound(4)
    memory = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    assert bound == min(2**32, memory // 4 // 4)
    x = np.ones((1, 1, 1, 1), np.float32)
    # 10**11 elements, and just over the bound (below 2**32 on a machine under 64 GiB).
    for rows, cols in ((10**11 // 65536, 65536), (bound // 65536 + 1, 65536)):
        pads = np.array([0, 0, 0, 0, 0, 0, rows - 1, cols - 1], np.int64)
        nodes = [helper.make_node("Constant", [], ["p"], value=numpy_helper.from_array(pads)),
                 helper.make_node("Pad", ["x", "p"], ["y"], name="corrupt")]
        model = make_model(nodes, [tensor_info("x", [1, 1, 1, 1])],
                           [tensor_info("y", list("nchw"))])
        for compile in (True, False):
            before, start = _peak_rss_kib(), time.monotonic()
            with pytest.raises(ValueError, match=rf"node 'corrupt' \(Pad\): the result would have "
                                                 rf"shape \[1, 1, {rows}, {cols}\].*bound of "
                                                 rf"{bound} elements"):
                wick.onnx.load(model, compile=compile)(x)
            assert time.monotonic() - start < 10
            assert _peak_rss_kib() - before < 1 << 20  # under 1 GiB more at its peak
    # Broadcasting two 400 kB constants asks for 10**10 elements.
    inits = [numpy_helper.from_array(np.ones((100000, 1), np.float32), "a"),
             numpy_helper.from_array(np.ones((1, 100000), np.float32), "b")]
    nodes = [helper.make_node("Add", ["a", "b"], ["s"], name="outer"),
             helper.make_node("Add", ["x", "s"], ["y"])]
    model = make_model(nodes, [tensor_info("x", [1, 1])], [tensor_info("y", ["a", "b"])], inits)
    with pytest.raises(ValueError, match=r"node 'outer' \(Add\).*\[100000, 100000\]"):
        wick.onnx.load(model)(np.ones((1, 1), np.float32))


def test_out_of_memory_is_wicks_out_of_memory_error_from_a_node_or_the_replay(small_model,
                                                                               monkeypatch):
    """Memory running out is wick.OutOfMemoryError (a RuntimeError) wherever it happens: in a
    node's wick op or NumPy fold (named by the node) or in the compiled replay."""
    from wick.onnx import _import
    x = np.zeros((2, 1, 8, 8), np.float32)
    loaded = wick.onnx.load(small_model)
    loaded(x)  # traced: later calls replay

    def replay_without_memory(*args):
        raise wick.OutOfMemoryError("[cpu allocator] out of memory: tried to allocate 8 GiB")
    monkeypatch.setattr(loaded, "_compiled", replay_without_memory)
    with pytest.raises(wick.OutOfMemoryError, match=r"ran out of memory running its compiled "
                                                    r"graph on inputs \[\[2, 1, 8, 8\]\]"):
        loaded(x)

    def relu_without_memory(node, ins):
        raise MemoryError("Unable to allocate 8 GiB")
    monkeypatch.setitem(_import.OPS, "Relu", relu_without_memory)
    for compile in (True, False):
        with pytest.raises(wick.OutOfMemoryError, match=r"node 'Relu_1' \(Relu\).*MemoryError"):
            wick.onnx.load(small_model, compile=compile)(x)


def test_gather_index_out_of_range_raises_index_error():
    data = np.arange(20, dtype=np.float32).reshape(5, 4)
    nodes = [helper.make_node("Gather", ["x", "idx"], ["y"], name="g")]
    model = make_model(nodes, [tensor_info("x", [5, 4]), tensor_info("idx", [1, 3],
                                                                      TensorProto.INT64)],
                       [tensor_info("y", [1, 3, 4])])
    for compile in (True, False):
        loaded = wick.onnx.load(model, compile=compile)
        for bad in ([[0, 1, 5]], [[0, -6, 1]]):
            with pytest.raises(IndexError, match="node 'g' \\(Gather\\)"):
                loaded(data, np.array(bad, np.int64))
        got = loaded(data, np.array([[4, -5, -1]], np.int64)).numpy()
        np.testing.assert_array_equal(got, data[[[4, 0, 4]]])
        with pytest.raises(IndexError):  # compiled: the replay's kernel refuses it
            loaded(data, np.array([[0, 1, 5]], np.int64))
    # Static indices are checked in NumPy, with the same type.
    idx = numpy_helper.from_array(np.array([1, 7], np.int64), "idx")
    model = make_model(nodes, [tensor_info("x", [5, 4])], [tensor_info("y", [2, 4])], [idx])
    with pytest.raises(IndexError, match=r"node 'g' \(Gather\): indices from 1 to 7"):
        wick.onnx.load(model)(data)


@pytest.mark.parametrize("op, attr, value", [("MaxPool", "ceil_mode", -3),
                                             ("AveragePool", "ceil_mode", 100),
                                             ("AveragePool", "count_include_pad", 2),
                                             ("Gemm", "transB", 5)])
def test_flags_outside_0_and_1_are_refused_at_load(op, attr, value):
    if op == "Gemm":
        node = helper.make_node("Gemm", ["x", "x"], ["y"], name="flag", **{attr: value})
        io_ = [tensor_info("x", [2, 2])], [tensor_info("y", [2, 2])]
    else:
        node = helper.make_node(op, ["x"], ["y"], name="flag", kernel_shape=[2, 2],
                                **{attr: value})
        io_ = [tensor_info("x", [1, 1, 4, 4])], [tensor_info("y", list("nchw"))]
    with pytest.raises(ValueError, match=rf"node 'flag' \({op}\): attribute {attr}={value} .*"
                                         "ONNX defines 0 or 1"):
        wick.onnx.load(make_model([node], *io_))


def test_average_pool_wide_pads_without_count_include_pad_are_refused_at_load():
    for pads in ([2, 1, 2, 1], [1, 0, 0, 1]):  # wider than half the kernel; unequal
        node = helper.make_node("AveragePool", ["x"], ["y"], name="avg", kernel_shape=[3, 3],
                                pads=pads, count_include_pad=0)
        model = make_model([node], [tensor_info("x", [1, 1, 6, 6])],
                           [tensor_info("y", list("nchw"))])
        with pytest.raises(NotImplementedError, match=r"node 'avg' \(AveragePool\): pads "
                                                      + re.escape(str(pads))
                                                      + " with count_include_pad=0"):
            wick.onnx.load(model)


def test_wrong_inputs_at_call_time(small_model):
    loaded = wick.onnx.load(small_model)
    with pytest.raises(ValueError, match=r"input 'x' has shape \[2, 1, 9, 8\]; the model expects "
                                         r"\[n, 1, 8, 8\]"):
        loaded(np.zeros((2, 1, 9, 8), np.float32))
    with pytest.raises(TypeError, match="input 'x' must be wick.float32; got wick.float64"):
        loaded(np.zeros((2, 1, 8, 8)))
    with pytest.raises(TypeError, match=r"takes 1 input\(s\) \['x'\]; got 2"):
        loaded(np.zeros((2, 1, 8, 8), np.float32), np.zeros(1, np.float32))
    with pytest.raises(TypeError, match="must be a wick Tensor or a NumPy array"):
        loaded([1.0, 2.0])


def test_data_dependent_shape_is_refused_with_the_node_name():
    # Reshape's target computed from the input's values cannot be frozen by a trace.
    nodes = [helper.make_node("Cast", ["s"], ["si"], to=TensorProto.INT64),
             helper.make_node("Reshape", ["x", "si"], ["y"], name="dyn")]
    model = make_model(nodes, [tensor_info("x", [2, 3]), tensor_info("s", [2])],
                       [tensor_info("y", ["a", "b"])])
    with pytest.raises(ValueError, match="node 'dyn'.*'shape' must be a constant"):
        wick.onnx.load(model, compile=False)(np.zeros((2, 3), np.float32),
                                             np.array([3, 2], np.float32))


# ---- fuzzing the loader ----

hypothesis = pytest.importorskip("hypothesis", reason="hypothesis is not installed")
from hypothesis import HealthCheck, given, settings, strategies as st  # noqa: E402

_EDITS = st.lists(st.tuples(st.sampled_from(["flip", "set", "insert", "delete", "truncate"]),
                            st.integers(0, 1 << 20), st.integers(0, 255)), min_size=1, max_size=4)


def _mutate(data, edits):
    data = bytearray(data)
    for kind, where, byte in edits:
        i = where % max(len(data), 1)
        if kind == "flip" and data:
            data[i] ^= 1 << (byte % 8)
        elif kind == "set" and data:
            data[i] = byte
        elif kind == "insert":
            data[i:i] = bytes([byte])
        elif kind == "delete" and data:
            del data[i]
        elif kind == "truncate":
            del data[i:]
    return bytes(data)


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(edits=_EDITS, compile=st.booleans())
def test_fuzz_mutated_model_loads_or_raises_a_clear_error(small_model, edits, compile):
    data = _mutate(small_model.SerializeToString(), edits)
    x = np.random.default_rng(9).standard_normal((2, 1, 8, 8)).astype(np.float32)
    try:
        loaded = wick.onnx.load(data, compile=compile)
        loaded(*[x] * len(loaded.input_names))
    except (ValueError, NotImplementedError, TypeError, IndexError, wick.OutOfMemoryError) as e:
        assert str(e)  # every error says something


_ANY_INTS = st.lists(st.integers(-1, 4), max_size=5)  # shapes, pads, strides, ... of any length


def _mostly(valid):
    """Mostly valid values, so that most examples run, and sometimes anything."""
    return st.one_of(valid, valid, valid, _ANY_INTS)


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(pads=_mostly(st.lists(st.integers(0, 3), min_size=4, max_size=4)),
       strides=_mostly(st.lists(st.integers(1, 3), min_size=2, max_size=2)),
       dilations=_mostly(st.lists(st.integers(1, 2), min_size=2, max_size=2)),
       group=st.sampled_from([1, 1, 1, 0, 2]),
       pool=_mostly(st.lists(st.integers(1, 3), min_size=2, max_size=2)),
       auto_pad=st.sampled_from(["NOTSET", "VALID", "SAME_LOWER", "SAME_UPPER", "BAD"]),
       axis=st.integers(-5, 5), trans_b=st.integers(0, 1),
       shape=_mostly(st.tuples(st.integers(1, 3), st.just(1), st.integers(3, 12),
                               st.integers(3, 12)).map(list)), compile=st.booleans())
def test_fuzz_attributes_and_shapes_raise_only_clear_errors(pads, strides, dilations, group, pool,
                                                            auto_pad, axis, trans_b, shape,
                                                            compile):
    """The translations' own checks: any attribute values and input shape load and run, or raise
    ValueError / NotImplementedError / TypeError; never another exception or a crash."""
    rng = np.random.default_rng(10)
    conv = {"pads": pads, "strides": strides, "dilations": dilations, "group": group,
            "auto_pad": auto_pad}
    conv = {k: v for k, v in conv.items() if v != [] and not (k == "auto_pad" and pads)}
    inits = [numpy_helper.from_array(rng.standard_normal((2, 1, 3, 3)).astype(np.float32), "w"),
             numpy_helper.from_array(np.ones((3, 1) if trans_b else (1, 3), np.float32), "fw")]
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], **conv),
             helper.make_node("MaxPool", ["c"], ["m"], kernel_shape=pool or [1, 1]),
             helper.make_node("Flatten", ["m"], ["f"], axis=axis),
             helper.make_node("ReduceMean", ["f"], ["r"], axes=[1]),
             helper.make_node("Gemm", ["r", "fw"], ["y"], transB=trans_b)]
    model = make_model(nodes, [tensor_info("x", list("nchw"))], [tensor_info("y", ["a", "b"])],
                       inits)
    try:
        x = rng.standard_normal([max(d, 0) for d in shape]).astype(np.float32)
        got = wick.onnx.load(model, compile=compile)(x).numpy()
    except (ValueError, NotImplementedError, TypeError) as e:
        assert str(e)
        return
    if onnxruntime is None:
        return
    try:  # ONNX Runtime refuses some models the standard allows (dilated SAME_* convolutions)
        expected = ort_run(model, x)[0]
    except Exception:
        return
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)  # what wick runs is right


@needs_ort
@settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))
@given(op=st.sampled_from(["MaxPool", "AveragePool"]), data=st.data(),
       kernel=st.lists(st.integers(1, 4), min_size=2, max_size=2),
       strides=st.lists(st.integers(1, 3), min_size=2, max_size=2), ceil=st.integers(0, 1),
       include=st.integers(0, 1), size=st.lists(st.integers(1, 9), min_size=2, max_size=2),
       compile=st.booleans())
def test_fuzz_pool_pads_and_ceil_mode_match_onnxruntime(op, data, kernel, strides, ceil, include,
                                                        size, compile):
    """Pools with any pads ONNX Runtime takes (up to kernel - 1: wider than wick's layers allow
    and unequal) and ceil_mode: wick gives ONNX Runtime's result or refuses the model."""
    pads = [data.draw(st.integers(0, k - 1)) for k in kernel * 2]
    attrs = {"kernel_shape": kernel, "strides": strides, "pads": pads, "ceil_mode": ceil}
    if op == "AveragePool":
        attrs["count_include_pad"] = include
    model = make_model([helper.make_node(op, ["x"], ["y"], **attrs)],
                       [tensor_info("x", [1, 2] + size)], [tensor_info("y", list("nchw"))])
    x = np.random.default_rng(11).standard_normal([1, 2] + size).astype(np.float32)
    try:
        got = wick.onnx.load(model, compile=compile)(x).numpy()
    except (ValueError, NotImplementedError) as e:
        assert str(e)
        return
    try:
        expected = ort_run(model, x)[0]
    except Exception:
        return
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)
