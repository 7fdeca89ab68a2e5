"""Small ONNX graphs for the import tests: build one with onnx.helper, run it in ONNX Runtime. And
the `export` fixture of the export tests: wick.onnx.export, then its C++ twin where built."""

import numpy as np
import pytest
from onnx import TensorProto, helper

try:
    import onnxruntime
except ImportError:  # pragma: no cover
    onnxruntime = None

needs_ort = pytest.mark.skipif(onnxruntime is None, reason="onnxruntime is not installed")


@pytest.fixture(params=["python", "cpp"])
def export(request):
    """wick.onnx.export, or the C++ exporter (jit/onnx_export.h) behind the same signature."""
    import wick.onnx
    if request.param == "python":
        return wick.onnx.export
    if not wick.onnx._export_cpp.available():
        pytest.skip("this build has no C++ ONNX exporter (libonnx-dev, libprotobuf-dev)")
    return wick.onnx.export_cpp


def ort_run(model_or_path, *inputs):
    data = model_or_path.SerializeToString() if hasattr(model_or_path, "SerializeToString") \
        else model_or_path
    session = onnxruntime.InferenceSession(data, providers=["CPUExecutionProvider"])
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
