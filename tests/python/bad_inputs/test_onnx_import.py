"""Bad ONNX models that load and then meet a value a translation must check before NumPy or wick
sees it (wick.onnx.load; the fuzzer tests/fuzz/fuzz_onnx_import.py found each class): integer
inputs (shapes, axes, pads, starts) given as floats, NaN or infinity, Expand to a shape that does
not broadcast, and QuantizeLinear / DequantizeLinear scales and zero points of shapes ONNX does
not define. Each is a ValueError naming the node's op and quoting the values, eagerly and
compiled, where before NumPy's or Python's own error (OverflowError, "cannot reshape array")
leaked out under the interpreter's catch-all."""

import numpy as np
import pytest

import wick

onnx = pytest.importorskip("onnx",
                           reason="onnx is not installed (scripts/setup.sh puts it in .venv)")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

import wick.onnx  # noqa: E402
from bad_inputs.corpus import Bad, check, parametrize  # noqa: E402


def _model(nodes, inputs, inits, opset=17):
    graph = helper.make_graph(
        nodes, "bad", [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["a", "b"])],
        [numpy_helper.from_array(np.asarray(v), k) for k, v in inits.items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)


def run(op, ins, inits, compile=False, x=(2, 3), opset=17, **attrs):
    """A one-node model y = op(x, *ins) loaded and called on ones of shape x."""
    def call():
        model = _model([helper.make_node(op, ["x"] + ins, ["y"], **attrs)],
                       [("x", TensorProto.FLOAT, list(x))], inits, opset)
        return wick.onnx.load(model, compile=compile)(np.ones(x, np.float32))
    return call


_F = np.float32
CASES = [
    # Integer inputs typed float: the checker does not check the types of the values a node reads.
    Bad("reshape_shape_float", run("Reshape", ["s"], {"s": np.array([3, 2], _F)}),
        ValueError, "Reshape", ["'shape'", "float32"]),
    Bad("slice_starts_nan", run("Slice", ["st", "en"], {"st": np.array([np.nan], _F),
                                                        "en": np.array([2], np.int64)}),
        ValueError, "Slice", ["'starts'", "float32"]),
    Bad("squeeze_axes_inf_compiled", run("Squeeze", ["a"], {"a": np.array([np.inf], _F)},
                                         compile=True, x=(1, 3)),
        ValueError, "Squeeze", ["'axes'", "float32"]),
    Bad("pad_pads_float", run("Pad", ["p"], {"p": np.array([0, 1.5, 0, 1], _F)}),
        ValueError, "Pad", ["'pads'", "float32"]),
    Bad("expand_shape_bool", run("Expand", ["s"], {"s": np.array([True, False])}),
        ValueError, "Expand", ["'shape'", "bool"]),
    Bad("unsqueeze_axes_float64", run("Unsqueeze", ["a"], {"a": np.array([0.0])}),
        ValueError, "Unsqueeze", ["'axes'", "float64"]),
    # Expand: each dim equal, or 1 on either side (NumPy's broadcast_to raised its own error).
    Bad("expand_not_broadcastable", run("Expand", ["s"], {"s": np.array([2, 2], np.int64)}),
        ValueError, "Expand", ["[2, 2]", "[2, 3]"]),
    Bad("expand_not_broadcastable_compiled",
        run("Expand", ["s"], {"s": np.array([4, 5, 2, 4], np.int64)}, compile=True, x=(5, 3, 1)),
        ValueError, "Expand", ["[4, 5, 2, 4]", "[1, 5, 3, 1]"]),
    # QDQ scales and zero points: a scalar, or 1-D with one value per entry of `axis`.
    Bad("dequantize_scale_2d", run("DequantizeLinear", ["s"], {"s": np.ones((2, 1), _F)}),
        ValueError, "DequantizeLinear", ["x_scale", "[2, 1]"]),
    Bad("dequantize_scale_wrong_length",
        run("DequantizeLinear", ["s"], {"s": np.ones(2, _F)}, axis=1),
        ValueError, "DequantizeLinear", ["x_scale", "[2]", "axis 1", "[2, 3]"]),
    Bad("quantize_scale_wrong_length_compiled",
        run("QuantizeLinear", ["s"], {"s": np.ones(5, _F)}, compile=True, axis=0),
        ValueError, "QuantizeLinear", ["y_scale", "[5]", "axis 0"]),
    Bad("quantize_zero_point_shape_differs",
        run("QuantizeLinear", ["s", "z"], {"s": np.ones(3, _F), "z": np.zeros(1, np.uint8)}),
        ValueError, "QuantizeLinear", ["y_zero_point", "[1]", "[3]"]),
    Bad("dequantize_zero_point_2d",
        run("DequantizeLinear", ["s", "z"], {"s": np.float32(1), "z": np.zeros((3, 1), np.uint8)}),
        ValueError, "DequantizeLinear", ["x_zero_point", "[3, 1]"]),
]


@parametrize(CASES)
def test_onnx_import_bad_input(case):
    check(case)
