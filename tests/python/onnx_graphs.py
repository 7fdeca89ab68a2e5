"""Small ONNX graphs for the import tests: build one with onnx.helper, run it in ONNX Runtime. And
the `export` fixture of the export tests: wick.onnx.export, where this build of wick can export."""

import numpy as np
import pytest
from onnx import TensorProto, helper

try:
    import onnxruntime
except ImportError:  # pragma: no cover
    onnxruntime = None

needs_ort = pytest.mark.skipif(onnxruntime is None, reason="onnxruntime is not installed")


@pytest.fixture
def export():
    """wick.onnx.export (the C++ exporter of jit/onnx_export.h behind its Python face); the test
    skips on a build of wick without the exporter."""
    import wick.onnx
    if not wick.onnx.available():
        pytest.skip("this build of wick has no ONNX exporter (libonnx-dev, libprotobuf-dev)")
    return wick.onnx.export


def ort_run(model_or_path, *inputs):
    data = model_or_path.SerializeToString() if hasattr(model_or_path, "SerializeToString") \
        else model_or_path
    # The reference is the graph as the ONNX spec defines it, node by node. ONNX Runtime's
    # optimizer may fuse DequantizeLinear -> MatMul -> QuantizeLinear into an integer kernel
    # that rounds differently (1.32 does for uint8: a step or three of the output scale off).
    options = onnxruntime.SessionOptions()
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = onnxruntime.InferenceSession(data, options, providers=["CPUExecutionProvider"])
    names = [i.name for i in session.get_inputs()]
    return session.run(None, dict(zip(names, inputs)))


def make_model(nodes, inputs, outputs, initializers=(), opset=17):
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)


def tensor_info(name, shape, elem=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, elem, shape)


def _f32(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def _i64(*values):
    return np.array(values, np.int64)
