"""Bad inputs to integer division and remainder: a zero integer divisor in every form (//, %,
floor_divide, div with a rounding_mode, remainder, fmod; tensors, numbers, broadcasts, in place,
compiled, ONNX Div and Mod), and bad rounding modes and dtypes.

PyTorch 1.13 raises RuntimeError("ZeroDivisionError") for each zero divisor; wick's message adds
the op. Rows marked "silent" returned INT64_MIN / INT64_MAX (ONNX Div) or the dividend unchanged;
"missing" rows raised TypeError because the operator did not exist."""

import numpy as np

import wick as W

from bad_inputs.corpus import Bad, check, parametrize

Z = "ZeroDivisionError"


def _ints(*values, dtype=None):
    return W.tensor(list(values), dtype=dtype or W.int64)


def _inplace(method, *args, **kwargs):
    a = _ints(5, 6, 7)
    try:
        getattr(a, method)(*args, **kwargs)
    finally:  # the tensor must be untouched when the call raises
        assert a.tolist() == [5, 6, 7], f"{method} changed its tensor to {a.tolist()}"


def _compiled(fn):
    compiled = W.compile(fn)
    compiled(_ints(7, 8), _ints(2, 3))
    return compiled(_ints(7, 8), _ints(2, 0))  # the replay meets the zero


def _onnx(op, compile, **attrs):
    import wick.onnx  # noqa: F401 (the subpackage is imported on use)
    from onnx import TensorProto, helper
    io = [helper.make_tensor_value_info(n, TensorProto.INT64, [2]) for n in "aby"]
    node = helper.make_node(op, ["a", "b"], ["y"], name=f"bad_{op}", **attrs)
    model = helper.make_model(helper.make_graph([node], "g", io[:2], io[2:]),
                              opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    m = W.onnx.load(model.SerializeToString(), compile=compile)
    return m(np.array([7, 8]), np.array([1, 0]))


CASES = [
    Bad("floordiv_zero", lambda: _ints(1, 2) // _ints(0, 1), RuntimeError, "div_floor", [Z]),
    # missing: Tensor had no __floordiv__
    Bad("floordiv_number_zero", lambda: _ints(1, 2) // 0, RuntimeError, "div_floor", [Z]),
    Bad("rfloordiv_zero", lambda: 7 // _ints(1, 0), RuntimeError, "div_floor", [Z]),
    Bad("floor_divide_zero", lambda: W.floor_divide(_ints(3), _ints(0)), RuntimeError,
        "div_floor", [Z]),
    Bad("div_floor_zero", lambda: W.div(_ints(3), _ints(0), rounding_mode="floor"),
        RuntimeError, "div_floor", [Z]),
    Bad("div_trunc_zero", lambda: _ints(3, 4).div(0, rounding_mode="trunc"), RuntimeError,
        "div_trunc", [Z]),
    Bad("mod_zero", lambda: _ints(1, 2) % _ints(1, 0), RuntimeError, "remainder", [Z]),
    Bad("rmod_zero", lambda: 5 % _ints(0), RuntimeError, "remainder", [Z]),
    Bad("fmod_number_zero", lambda: W.fmod(_ints(1, 2), 0), RuntimeError, "fmod", [Z]),
    Bad("remainder_broadcast_zero", lambda: W.remainder(_ints(1, 2).reshape(2, 1), _ints(3, 0)),
        RuntimeError, "remainder", [Z]),
    Bad("floordiv_uint8_zero", lambda: _ints(9, dtype=W.uint8) // _ints(0, dtype=W.uint8),
        RuntimeError, "div_floor", [Z]),
    Bad("floordiv_int8_zero", lambda: _ints(9, dtype=W.int8) // _ints(0, dtype=W.int8),
        RuntimeError, "div_floor", [Z]),
    Bad("mod_int32_zero", lambda: _ints(9, dtype=W.int32) % _ints(0, dtype=W.int32),
        RuntimeError, "remainder", [Z]),
    Bad("floor_divide_inplace_zero", lambda: _inplace("floor_divide_", _ints(1, 0, 1)),
        RuntimeError, "div_floor", [Z]),
    Bad("ifloordiv_zero", lambda: _inplace("__ifloordiv__", 0), RuntimeError, "div_floor", [Z]),
    Bad("imod_zero", lambda: _inplace("__imod__", _ints(0, 1, 1)), RuntimeError, "remainder",
        [Z]),  # missing: %= rebound the name to a new tensor
    Bad("remainder_inplace_zero", lambda: _inplace("remainder_", 0), RuntimeError, "remainder",
        [Z]),
    Bad("fmod_inplace_zero", lambda: _inplace("fmod_", _ints(2, 2, 0)), RuntimeError, "fmod",
        [Z]),
    Bad("div_inplace_trunc_zero", lambda: _inplace("div_", 0, rounding_mode="trunc"),
        RuntimeError, "div_trunc", [Z]),
    Bad("compiled_floordiv_zero", lambda: _compiled(lambda a, b: a // b), RuntimeError,
        "div_floor", [Z]),
    Bad("compiled_fmod_zero", lambda: _compiled(lambda a, b: W.fmod(a, b) + 1), RuntimeError,
        "fmod", [Z]),
    Bad("onnx_div_zero", lambda: _onnx("Div", False), RuntimeError, "bad_Div", [Z]),  # silent
    Bad("onnx_div_zero_compiled", lambda: _onnx("Div", True), RuntimeError, "bad_Div", [Z]),
    Bad("onnx_mod_zero", lambda: _onnx("Mod", True), RuntimeError, "bad_Mod", [Z]),
    Bad("onnx_fmod_zero", lambda: _onnx("Mod", False, fmod=1), RuntimeError, "bad_Mod", [Z]),
    Bad("onnx_mod_bad_flag", lambda: _onnx("Mod", False, fmod=3), ValueError, "bad_Mod",
        ["fmod=3"]),
    Bad("div_bad_rounding_mode", lambda: W.div(_ints(1), _ints(1), rounding_mode="round"),
        ValueError, "div", ["'round'"]),
    Bad("div_rounding_mode_int", lambda: _ints(1).div(2, rounding_mode=2), TypeError, "div",
        ["rounding_mode", "int"]),
    Bad("floordiv_bool", lambda: W.tensor([True]) // W.tensor([True]), TypeError, "div_floor",
        ["bool"]),
    Bad("floordiv_float_into_int", lambda: _inplace("floor_divide_", 2.5), TypeError,
        "floor_divide_", ["float32", "int64"]),
    Bad("floordiv_string", lambda: _ints(1) // "2", TypeError, "//", ["str"]),
]


@parametrize(CASES)
def test_bad_input(case):
    check(case)
