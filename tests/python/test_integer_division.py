"""Integer division and remainder: //, %, floor_divide, div(rounding_mode=...), remainder and
fmod against PyTorch (floor vs trunc on negative operands, every dtype, broadcasting, numbers on
either side, gradients), and a zero integer divisor raising PyTorch's RuntimeError
("ZeroDivisionError") on every path: eager ops, number operands, in-place forms (which leave the
tensor unchanged), wick.compile's replay, and ONNX models (wick.onnx.load, compiled or not) next
to what ONNX Runtime does. MIN // -1, which crashes PyTorch on x86 with SIGFPE, wraps
(Note [integer division] in core/ops/scalar_math.h)."""

import numpy as np
import pytest

import wick
from reference import check, needs_torch, torch

DIVISION = {  # name -> fn(module, a, b)
    "floordiv": lambda m, a, b: a // b,
    "floor_divide": lambda m, a, b: m.floor_divide(a, b),
    "method_floor_divide": lambda m, a, b: a.floor_divide(b),
    "div_floor": lambda m, a, b: m.div(a, b, rounding_mode="floor"),
    "div_trunc": lambda m, a, b: m.div(a, b, rounding_mode="trunc"),
    "method_div_trunc": lambda m, a, b: a.div(b, rounding_mode="trunc"),
    "mod": lambda m, a, b: a % b,
    "remainder": lambda m, a, b: m.remainder(a, b),
    "fmod": lambda m, a, b: m.fmod(a, b),
}
INPLACE = {  # name -> fn(a, b) that updates a
    "ifloordiv": lambda a, b: a.__ifloordiv__(b),
    "imod": lambda a, b: a.__imod__(b),
    "floor_divide_": lambda a, b: a.floor_divide_(b),
    "remainder_": lambda a, b: a.remainder_(b),
    "fmod_": lambda a, b: a.fmod_(b),
    "div_trunc_": lambda a, b: a.div_(b, rounding_mode="trunc"),
    "div_floor_": lambda a, b: a.div_(b, rounding_mode="floor"),
}
INT_DTYPES = ["uint8", "int8", "int32", "int64"]
SIGNED = np.array([7, -7, 7, -7, 6, -6, 0, 1, -1, 5])
DIVISORS = np.array([2, 2, -2, -2, 3, -3, 4, -5, 5, 1])


def pair(m, a, b, dtype):
    return m.tensor(a, dtype=getattr(m, dtype)), m.tensor(b, dtype=getattr(m, dtype))


def same(w, t):
    assert str(w.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    np.testing.assert_array_equal(w.numpy(), t.numpy())


@needs_torch
@pytest.mark.parametrize("name", sorted(DIVISION))
@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_integers_match_pytorch(name, dtype):
    fn = DIVISION[name]
    a, b = (SIGNED, DIVISORS) if dtype != "uint8" else (np.abs(SIGNED), np.abs(DIVISORS))
    same(fn(wick, *pair(wick, a, b, dtype)), fn(torch, *pair(torch, a, b, dtype)))
    # Broadcast: a column of dividends against a row of divisors.
    a2, b2 = a.reshape(-1, 1)[:4], b[:3]
    same(fn(wick, *pair(wick, a2, b2, dtype)), fn(torch, *pair(torch, a2, b2, dtype)))


@needs_torch
@pytest.mark.parametrize("name", sorted(DIVISION))
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_floats_match_pytorch(name, dtype):
    fn = DIVISION[name]
    a = np.array([7.5, -7.5, 7.5, -7.5, -0.5, 0.5, 1.0, -0.0, 5.5, -5.5, np.inf, 1.0, 0.0, 3.0])
    b = np.array([2.0, 2.0, -2.0, -2.0, 3.0, -3.0, 0.1, 1.0, np.inf, np.inf, 2.0, 0.0, 0.0, -0.0])
    w, t = fn(wick, *pair(wick, a, b, dtype)), fn(torch, *pair(torch, a, b, dtype))
    assert str(w.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    wn, tn = w.float().numpy(), t.float().numpy()
    if "trunc" in name and dtype == "bfloat16":
        # 1 / bfloat16(0.1) is 9.990: PyTorch rounds the quotient to bfloat16 (10.0) before it
        # truncates, wick truncates the float quotient (9, as both give for rounding_mode='floor').
        assert (wn[6], tn[6]) == (9.0, 10.0)
        wn[6] = tn[6]
    np.testing.assert_array_equal(wn, tn)  # inf and NaN where the divisor is 0, no error
    numbers = ~np.isnan(tn)  # -0.0 where PyTorch gives it (a NaN's sign bit means nothing)
    np.testing.assert_array_equal(np.signbit(wn)[numbers], np.signbit(tn)[numbers])


@needs_torch
def test_floor_is_exact_where_rounding_the_quotient_is_not():
    # 1 / 0.1 rounds to 10.0 in float64; Python, PyTorch and wick say 1 // 0.1 == 9.
    for m in (wick, torch):
        assert (m.tensor([1.0], dtype=m.float64) // 0.1).item() == 9.0 == 1.0 // 0.1


@needs_torch
def test_numbers_on_either_side_and_promotion():
    cases = [
        lambda m, x: x // 2, lambda m, x: x // -2, lambda m, x: 7 // x, lambda m, x: -7 // x,
        lambda m, x: x // 2.5, lambda m, x: 7.5 // x, lambda m, x: x % -3, lambda m, x: 9 % x,
        lambda m, x: x % 2.5, lambda m, x: m.fmod(x, -3), lambda m, x: m.floor_divide(x, 3),
        lambda m, x: m.div(x, 2, rounding_mode="trunc"),
        lambda m, x: x.div(2.5, rounding_mode="floor"),
        lambda m, x: m.tensor([True, False]) // 1,
    ]
    for fn in cases:
        same(fn(wick, wick.tensor([5, -5])), fn(torch, torch.tensor([5, -5])))
    for fn in cases[:-1]:
        x = np.array([5.5, -4.0])
        same(fn(wick, wick.tensor(x, dtype=wick.float32)), fn(torch, torch.tensor(x).float()))


@needs_torch
def test_gradients_are_zero_like_pytorchs_div_with_rounding_mode():
    for mode in ("floor", "trunc"):
        check(lambda m, a, b: m.div(a, b, rounding_mode=mode), [(3, 4), (4,)])
    # PyTorch 1.13's floor_divide (and //) raises "not implemented" in backward; wick gives the
    # zeros of div(rounding_mode='floor'), the same quotient.
    a = wick.tensor([3.5, -5.0], requires_grad=True)
    b = wick.tensor([2.0, 2.0], requires_grad=True)
    (a // b).sum().backward()
    assert a.grad.tolist() == [0.0, 0.0] and b.grad.tolist() == [0.0, 0.0]
    assert (a // b).grad_fn is not None


def test_bad_rounding_modes_and_bool():
    a = wick.tensor([1, 2])
    with pytest.raises(ValueError, match=r"\[div\].*rounding_mode.*'round'"):
        wick.div(a, a, rounding_mode="round")
    with pytest.raises(ValueError, match=r"\[div\].*rounding_mode"):
        a.div(a, rounding_mode="")
    with pytest.raises(TypeError, match=r"\[div\].*rounding_mode.*int"):
        a.div(a, rounding_mode=1)
    t = wick.tensor([True])
    for fn in (lambda: t // t, lambda: t % t, lambda: wick.div(t, t, rounding_mode="trunc")):
        with pytest.raises(TypeError, match="bool"):
            fn()
    assert (wick.tensor([1, 2]).__floordiv__("x")) is NotImplemented
    with pytest.raises(TypeError):
        wick.tensor([1, 2]) // "x"


# ---- a zero integer divisor ----

ZERO_MESSAGE = r"ZeroDivisionError"


@pytest.mark.parametrize("name", sorted(DIVISION))
@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_zero_divisor_raises(name, dtype):
    a, b = pair(wick, [5, 6, 7], [1, 0, 2], dtype)
    with pytest.raises(RuntimeError, match=ZERO_MESSAGE):
        DIVISION[name](wick, a, b)
    # A broadcast zero, a number zero, and a zero dividend's number form.
    with pytest.raises(RuntimeError, match=ZERO_MESSAGE):
        DIVISION[name](wick, a.reshape(3, 1), b)
    with pytest.raises(RuntimeError, match=ZERO_MESSAGE):
        DIVISION[name](wick, a, 0)
    # The error names the op.
    with pytest.raises(RuntimeError, match=r"\[(div_floor|div_trunc|remainder|fmod)\] "
                                           r"ZeroDivisionError"):
        DIVISION[name](wick, a, b)


@needs_torch
def test_pytorch_raises_the_same_error():
    a, b = torch.tensor([1, 2]), torch.tensor([0, 1])
    for fn in DIVISION.values():
        with pytest.raises(RuntimeError, match=ZERO_MESSAGE):
            fn(torch, a, b)
    with pytest.raises(RuntimeError, match=ZERO_MESSAGE):
        5 // b
    assert torch.isinf(a / b).any()  # true division of integers gives floats: no error


def test_reflected_numbers_and_true_division():
    b = wick.tensor([0, 1])
    for fn in (lambda: 5 // b, lambda: 5 % b):
        with pytest.raises(RuntimeError, match=ZERO_MESSAGE):
            fn()
    assert wick.tensor([1, 2]).__truediv__(b).tolist() == [float("inf"), 2.0]
    # Floating point never raises: inf and NaN, as IEEE and PyTorch say.
    f = wick.tensor([1.0, -1.0, 0.0])
    assert (f // 0.0).tolist()[:2] == [float("inf"), float("-inf")]
    assert np.isnan((f % 0.0).numpy()).all() and np.isnan(wick.fmod(f, 0.0).numpy()).all()
    # An int tensor // a float zero is a float division: inf, no error (PyTorch agrees).
    assert (wick.tensor([7]) // 0.0).tolist() == [float("inf")]


def test_empty_output_does_not_raise():
    empty = wick.zeros(0, 3, dtype=wick.int64)
    assert list((empty // wick.tensor([0, 1, 2])).shape) == [0, 3]
    assert list((wick.tensor([1, 2]) % wick.zeros(0, 2, dtype=wick.int64)).shape) == [0, 2]


@pytest.mark.parametrize("name", sorted(INPLACE))
def test_in_place_leaves_the_tensor_unchanged(name):
    a = wick.tensor([50, 60, 70, 80])
    version = a._version()
    with pytest.raises(RuntimeError, match=ZERO_MESSAGE):
        INPLACE[name](a, wick.tensor([3, 4, 0, 5]))
    assert a.tolist() == [50, 60, 70, 80]  # PyTorch leaves [16, 15, 70, 80] after //=
    assert a._version() == version
    with pytest.raises(RuntimeError, match=ZERO_MESSAGE):
        INPLACE[name](a, 0)
    assert a.tolist() == [50, 60, 70, 80]
    # A view's base is not touched either, and a good divisor writes through the view.
    base = wick.tensor([[9, 8], [7, 6]])
    with pytest.raises(RuntimeError, match=ZERO_MESSAGE):
        INPLACE[name](base[0], wick.tensor([1, 0]))
    assert base.tolist() == [[9, 8], [7, 6]]
    view = base[1]
    INPLACE[name](view, wick.tensor([2, 4]))
    assert base[0].tolist() == [9, 8] and base[1].tolist() != [7, 6]


@needs_torch
def test_in_place_operators_keep_identity_and_match_pytorch():
    for op in ("__ifloordiv__", "__imod__"):
        w, t = wick.tensor([7, -7, 9]), torch.tensor([7, -7, 9])
        w_id = id(w)
        w = getattr(w, op)(wick.tensor([2, 2, -4]))
        t = getattr(t, op)(torch.tensor([2, 2, -4]))
        assert id(w) == w_id
        same(w, t)
    w = wick.tensor([7, 8])
    w //= 2
    w %= 3
    assert w.tolist() == [0, 1]
    with pytest.raises(TypeError, match="can't be cast"):
        x = wick.tensor([5, 6])
        x //= 2.5  # the float result cannot be stored in int64, as in PyTorch


@pytest.mark.parametrize("dtype", ["int32", "int64", "int8"])
def test_min_divided_by_minus_one_wraps(dtype):
    # PyTorch 1.13 and 2.x die with SIGFPE here (x86's idiv traps) for int32 and int64; int8,
    # computed in int, gives -128 and 0. wick gives that for every width (no UB, no trap).
    low = int(np.iinfo(dtype).min)
    a = wick.tensor([low, low, 7], dtype=getattr(wick, dtype))
    b = wick.tensor([-1, 1, -1], dtype=getattr(wick, dtype))
    assert (a // b).tolist() == [low, low, -7]
    assert wick.div(a, b, rounding_mode="trunc").tolist() == [low, low, -7]
    assert (a % b).tolist() == [0, 0, 0]
    assert wick.fmod(a, b).tolist() == [0, 0, 0]
    assert (a // -1).tolist() == [low, low, -7]


# ---- wick.compile ----

def test_compiled_graph_raises_on_the_replay_that_meets_a_zero():
    compiled = wick.compile(lambda a, b: (a // b + a % b, wick.fmod(a, b)))
    a, b = wick.tensor([7, -7, 9]), wick.tensor([2, 3, -4])
    first = compiled(a, b)
    assert [t.tolist() for t in first] == [[4, -1, -6], [1, -1, 1]]
    assert compiled.traces == 1
    with pytest.raises(RuntimeError, match=r"\[div_floor\] ZeroDivisionError"):
        compiled(a, wick.tensor([2, 0, -4]))  # the same signature: the replay raises
    assert compiled.traces == 1
    again = compiled(a, b)  # and the executor still works after the error
    assert [t.tolist() for t in again] == [[4, -1, -6], [1, -1, 1]]


def test_compiled_in_place_leaves_the_input_unchanged():
    def step(a, b):
        a.floor_divide_(b)
        return a
    compiled = wick.compile(step)
    compiled(wick.tensor([8, 9]), wick.tensor([2, 3]))
    a = wick.tensor([8, 9])
    with pytest.raises(RuntimeError, match=ZERO_MESSAGE):
        compiled(a, wick.tensor([2, 0]))
    assert a.tolist() == [8, 9]


def test_integer_division_is_never_fused():
    # The fused loop (jit/fused_cpu.cpp) runs float32 chains only; integer steps stay kernels
    # with their own divisor check.
    compiled = wick.compile(lambda a, b: (a // b) % b + 1)
    compiled(wick.tensor([7, 8]), wick.tensor([2, 3]))
    assert "fused" not in str(compiled.graph).lower()
    with pytest.raises(RuntimeError, match=ZERO_MESSAGE):
        compiled(wick.tensor([7, 8]), wick.tensor([2, 0]))
    fused = wick.compile(lambda a, b: ((a // b) * 2.0).relu())
    x = wick.tensor([7.0, -8.0])
    assert fused(x, wick.tensor([2.0, 0.0])).tolist() == [6.0, 0.0]  # -inf relu'd: no error


# ---- ONNX ----

onnx = pytest.importorskip("onnx")
import wick.onnx  # noqa: E402
from onnx import TensorProto, helper  # noqa: E402

try:
    import onnxruntime as ort
except ImportError:  # pragma: no cover
    ort = None

ONNX_TYPES = {np.int64: TensorProto.INT64, np.int32: TensorProto.INT32,
              np.float32: TensorProto.FLOAT, np.uint8: TensorProto.UINT8}


def onnx_model(op, dtype=np.int64, constant_b=None, **attrs):
    elem = ONNX_TYPES[dtype]
    inputs = [helper.make_tensor_value_info("a", elem, [None])]
    inits = []
    if constant_b is None:
        inputs.append(helper.make_tensor_value_info("b", elem, [None]))
    else:
        inits.append(helper.make_tensor("b", elem, [len(constant_b)], constant_b))
    node = helper.make_node(op, ["a", "b"], ["y"], name=f"my_{op.lower()}", **attrs)
    output = helper.make_tensor_value_info("y", elem, [None])
    graph = helper.make_graph([node], "g", inputs, [output], initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model.SerializeToString()


def run_ort(data, *inputs):
    session = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    names = [i.name for i in session.get_inputs()]
    return session.run(None, dict(zip(names, inputs)))[0]


ONNX_CASES = [("Div", {}), ("Mod", {}), ("Mod", {"fmod": 1})]


@pytest.mark.skipif(ort is None, reason="onnxruntime is not installed")
@pytest.mark.parametrize("op,attrs", ONNX_CASES)
@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.uint8])
def test_onnx_integer_div_and_mod_match_onnxruntime(op, attrs, dtype):
    a = np.array([7, -7, 7, -7, 9], dtype=np.int64)
    b = np.array([2, 2, -2, -2, 4], dtype=np.int64)
    if dtype == np.uint8:
        a, b = np.abs(a), np.abs(b)
    a, b = a.astype(dtype), b.astype(dtype)
    data = onnx_model(op, dtype, **attrs)
    expected = run_ort(data, a, b)
    for compile in (False, True):
        model = wick.onnx.load(data, compile=compile)
        for _ in range(2):
            np.testing.assert_array_equal(model(a, b).numpy(), expected)
    # A constant divisor folds in NumPy when the dividend is constant too; here it is not.
    constant = onnx_model(op, dtype, constant_b=b.tolist(), **attrs)
    np.testing.assert_array_equal(wick.onnx.load(constant)(a).numpy(), expected)


@pytest.mark.skipif(ort is None, reason="onnxruntime is not installed")
@pytest.mark.parametrize("op,attrs", ONNX_CASES)
def test_onnx_zero_divisor_raises_like_onnxruntime_refuses(op, attrs):
    data = onnx_model(op, **attrs)
    a, good, bad = (np.array(v, dtype=np.int64) for v in ([7, 8], [2, 3], [2, 0]))
    with pytest.raises(Exception, match="by zero"):  # ONNX Runtime: "Integer division by zero"
        run_ort(data, a, bad)
    # Eager: every call runs the node, and the error names it.
    eager = wick.onnx.load(data, compile=False)
    with pytest.raises(RuntimeError, match=rf"node 'my_{op.lower()}' \({op}\): ZeroDivisionError"):
        eager(a, bad)
    assert eager(a, good).numpy().tolist() == run_ort(data, a, good).tolist()
    # Compiled, the first call (the trace) names the node; a replay names the kernel.
    compiled = wick.onnx.load(data)
    with pytest.raises(RuntimeError, match=rf"node 'my_{op.lower()}' \({op}\): ZeroDivisionError"):
        compiled(a, bad)
    assert compiled(a, good).numpy().tolist() == run_ort(data, a, good).tolist()
    with pytest.raises(RuntimeError, match=r"\[(div_trunc|remainder|fmod)\] ZeroDivisionError"):
        compiled(a, bad)
    assert compiled(a, good).numpy().tolist() == run_ort(data, a, good).tolist()


def test_onnx_constant_operands_fold_with_the_same_rules():
    def folded(op, a, b, **attrs):
        # y = op(Constant a, Constant b) + x: the op runs in NumPy at load's first call.
        nodes = [helper.make_node("Constant", [], ["ca"], value=helper.make_tensor(
                     "ca", TensorProto.INT64, [len(a)], a)),
                 helper.make_node("Constant", [], ["cb"], value=helper.make_tensor(
                     "cb", TensorProto.INT64, [len(b)], b)),
                 helper.make_node(op, ["ca", "cb"], ["q"], name="folded", **attrs),
                 helper.make_node("Add", ["q", "x"], ["y"])]
        graph = helper.make_graph(
            nodes, "g", [helper.make_tensor_value_info("x", TensorProto.INT64, [len(a)])],
            [helper.make_tensor_value_info("y", TensorProto.INT64, [len(a)])])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
        model.ir_version = 8
        return wick.onnx.load(model.SerializeToString(), compile=False)(
            np.zeros(len(a), np.int64)).numpy().tolist()
    low = int(np.iinfo(np.int64).min)
    assert folded("Div", [7, -7, 7, -7, low], [2, 2, -2, -2, -1]) == [3, -3, -3, 3, low]
    assert folded("Mod", [7, -7, 7, -7, low], [2, 2, -2, -2, -1]) == [1, 1, -1, -1, 0]
    assert folded("Mod", [7, -7, 7, -7], [2, 2, -2, -2], fmod=1) == [1, -1, 1, -1]
    with pytest.raises(RuntimeError, match=r"node 'folded' \(Div\): ZeroDivisionError"):
        folded("Div", [1, 2], [1, 0])
    with pytest.raises(RuntimeError, match=r"node 'folded' \(Mod\): ZeroDivisionError"):
        folded("Mod", [1, 2], [0, 1])


def test_onnx_float_mod_needs_fmod_and_float_div_is_ieee():
    a, b = np.array([7.0, -7.0], np.float32), np.array([0.0, 2.0], np.float32)
    assert wick.onnx.load(onnx_model("Div", np.float32))(a, b).numpy().tolist() == [np.inf, -3.5]
    out = wick.onnx.load(onnx_model("Mod", np.float32, fmod=1))(a, b).numpy()
    assert np.isnan(out[0]) and out[1] == -1.0
    with pytest.raises(ValueError, match=r"node 'my_mod' \(Mod\): fmod=0"):
        wick.onnx.load(onnx_model("Mod", np.float32), compile=False)(a, b)
    with pytest.raises(ValueError, match=r"fmod=2"):
        wick.onnx.load(onnx_model("Mod", fmod=2))


@pytest.mark.skipif(ort is None, reason="onnxruntime is not installed")
def test_onnx_export_writes_mod_with_the_right_fmod(tmp_path):
    if not wick.onnx.available():
        pytest.skip("this build of wick has no ONNX exporter")

    class Mods(wick.nn.Module):
        def forward(self, x):
            divisor = wick.tensor([3, -3, 3, -3])
            return x % divisor, wick.fmod(x, divisor)

    x = wick.tensor([[7, 7, -7, -7], [9, -9, 10, -10]])
    wick.onnx.export(Mods(), (x,), tmp_path / "mods.onnx")
    data = (tmp_path / "mods.onnx").read_bytes()
    session = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    got = session.run(None, {session.get_inputs()[0].name: x.numpy()})
    for g, w in zip(got, Mods()(x)):  # fmod=1 for fmod: C's sign rule, not Python's
        np.testing.assert_array_equal(g, w.numpy())

    class FloatRemainder(wick.nn.Module):
        def forward(self, x):
            return x % 3.0

    with pytest.raises(RuntimeError, match="'remainder' of floating point has no ONNX export"):
        wick.onnx.export(FloatRemainder(), (wick.randn(2, 3),), tmp_path / "bad.onnx")


@pytest.mark.skipif(not wick.cuda.is_available(), reason="needs a CUDA device")
def test_cuda_eager_raises_and_a_replayed_graph_gives_zero():
    a, good, bad = (wick.tensor(v, device="cuda") for v in ([7, -7, 9], [2, 3, -4], [2, 0, -4]))
    for name, fn in DIVISION.items():
        with pytest.raises(RuntimeError, match=ZERO_MESSAGE):
            fn(wick, a, bad)
        assert fn(wick, a, good).cpu().tolist() == fn(wick, a.cpu(), good.cpu()).tolist(), name
    x = a.clone()
    with pytest.raises(RuntimeError, match=ZERO_MESSAGE):
        x //= bad
    assert x.cpu().tolist() == [7, -7, 9]
    # A kernel cannot raise: a compiled graph's replay writes 0 where the divisor is 0
    # (Note [integer division]); PyTorch's CUDA result there is undefined.
    compiled = wick.compile(lambda a, b: (a // b, a % b))
    compiled(a, good)
    q, r = compiled(a, bad)
    assert q.cpu().tolist() == [3, 0, -3] and r.cpu().tolist() == [1, 0, -3]
    low = int(np.iinfo(np.int64).min)
    m = wick.tensor([low, 7], device="cuda")
    assert (m // -1).cpu().tolist() == [low, -7] and (m % -1).cpu().tolist() == [0, 0]
