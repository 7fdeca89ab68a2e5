"""How ONNX's elementwise and shape operators run as wick ops (wick.onnx.load's interpreter; the
loader is _import.py, the layers - Conv, pools, Pad, BatchNormalization, Gemm, QDQ -
_onnx_layers.py).

Note [static and dynamic values]
A value in the interpreter is either a NumPy array or a wick Tensor. Initializers, Constant nodes
and Shape's results are NumPy arrays ("static"): they are known without running the model. An op
whose inputs are all static runs in NumPy (constant folding, as ONNX Runtime does), so the small
integer programs PyTorch exports around a reshape (Shape -> Gather -> Unsqueeze -> Concat ->
Reshape) never become kernels. An op with a dynamic input runs wick ops, converting its static
inputs with to_wick. An argument that wick needs as Python numbers (Reshape's shape, Unsqueeze's
axes, Clip's bounds) must be static: under wick.compile that is exactly what a trace may freeze,
because the trace is guarded by the input shapes; a value computed from the input's data is not,
and is refused with the node's name instead of being frozen silently.

Each translation is fn(node, inputs) -> list of outputs; `node` is an _import.Node (op, name,
attrs, opset, inputs, outputs); inputs hold None for an omitted optional input. CHECKS hold the
load-time checks of attribute values, so that a model wick cannot run fails when it is loaded.
"""

import functools
import math
import os

import numpy as np

import wick
import wick.nn.functional as F

# ONNX TensorProto element types that wick has (onnx.TensorProto.FLOAT = 1, ...).
WICK_DTYPES = {1: wick.float32, 2: wick.uint8, 6: wick.int32, 7: wick.int64, 9: wick.bool,
               10: wick.float16, 11: wick.float64, 16: wick.bfloat16}
if hasattr(wick, "int8"):
    WICK_DTYPES[3] = wick.int8
NP_DTYPES = {1: np.float32, 2: np.uint8, 3: np.int8, 5: np.int16, 6: np.int32, 7: np.int64,
             9: np.bool_, 10: np.float16, 11: np.float64}
# NumPy dtypes wick.from_numpy takes; others are widened (int8 -> int32) on the way.
_FROM_NUMPY = (np.float64, np.float32, np.float16, np.int64, np.int32, np.uint8, np.bool_)
# Sizes computed from values (pads, Expand's shape, ...) are refused above element_bound() before
# wick or NumPy allocates: a corrupt constant must be an error, not an OOM kill.
_ELEMENT_CAP = 1 << 32
# A static value is materialised in NumPy and copied once more into wick, so it gets less.
_STATIC_ELEMENT_CAP = 1 << 28


@functools.lru_cache(maxsize=None)
def _physical_memory():
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, OSError, ValueError):  # no sysconf (Windows): only the fixed cap
        return None


def element_bound(itemsize, static=False):
    """The most elements of `itemsize` bytes one value may have: 2**32, and a quarter of physical
    memory (the one place this bound is set)."""
    bound = _ELEMENT_CAP
    memory = _physical_memory()
    if memory is not None:
        bound = min(bound, memory // max(int(itemsize), 1) // 4)
    return min(bound, _STATIC_ELEMENT_CAP) if static else bound


def is_static(v):
    # NumPy folds 0-d arrays into NumPy scalars (np.add of two 0-d arrays is an np.float32), which
    # are as static; the interpreter stores every static result as an array (static_array).
    return isinstance(v, (np.ndarray, np.generic))


def static_array(v):
    """A translation's result as the interpreter keeps it: a NumPy scalar as a 0-d array."""
    return np.asarray(v) if isinstance(v, np.generic) else v


class Initializer(np.ndarray):
    """An initializer's array with its wick tensor, converted once at load time so that every
    call, and every trace, reads the same tensor. NumPy results computed from it are plain."""

    tensor = None

    def __array_finalize__(self, obj):
        self.tensor = None


def to_wick(v):
    if v is None or isinstance(v, wick.Tensor):
        return v
    if getattr(v, "tensor", None) is not None:  # an Initializer, converted at load time
        return v.tensor
    if v.dtype.type not in _FROM_NUMPY:
        v = v.astype(np.int32 if v.dtype.kind in "iu" and v.itemsize < 4 else np.int64)
    # np.array(..., order="C"), not np.ascontiguousarray: that returns a 0-d array as 1-D.
    return wick.from_numpy(np.array(v, order="C"))


def shape_of(v):
    return list(v.shape)


def check_size(node, shape, itemsize, static=False):
    """shape, unless a dimension is negative or it holds more than element_bound() elements."""
    shape = [int(d) for d in shape]
    bound = element_bound(itemsize, static)
    # A dimension above the bound is refused even in an empty result: it would not fit int64.
    if any(d < 0 or d > bound for d in shape) or math.prod(shape) > bound:
        raise ValueError(f"wick.onnx: node '{node.name}' ({node.op}): the result would have shape "
                         f"{shape}, which is invalid or larger than the bound of {bound} elements "
                         f"of {itemsize} bytes (2**32, and a quarter of physical memory)")
    return shape


def static(node, v, what):
    """A static input as a NumPy array, or a ValueError naming the node (Note [static and
    dynamic values])."""
    if v is None:
        return None
    if not is_static(v):
        raise ValueError(f"wick.onnx: node '{node.name}' ({node.op}): input '{what}' must be a "
                         "constant (an initializer, a Constant node or computed from shapes); it "
                         "is computed from the model's input data, which wick cannot freeze")
    return v


def static_ints(node, v, what):
    """A static input of integers (shapes, axes, pads, starts...) as a list of Python ints. ONNX
    types these inputs int64 (or int32), but the checker does not look at the types of values a
    node reads, so a float tensor arrives here and its NaN or 2.5 must not become a number."""
    v = static(node, v, what)
    if v is None:
        return None
    if v.dtype.kind not in "iu":
        raise ValueError(f"wick.onnx: node '{node.name}' ({node.op}): input '{what}' must hold "
                         f"integers (int64); it holds {v.dtype} values")
    return [int(i) for i in v.reshape(-1)]


def axis_in(node, axis, rank, what="axis"):
    if not -rank <= axis < max(rank, 1):
        raise ValueError(f"wick.onnx: node '{node.name}' ({node.op}): {what} {axis} is out of "
                         f"range for a tensor of rank {rank}")
    return axis % max(rank, 1)


def reshape_to(x, shape):
    return x.reshape(shape) if is_static(x) else x.reshape(list(shape))


# ---- elementwise ----

_UNARY = {
    "Relu": (lambda x: np.maximum(x, 0).astype(x.dtype), wick.relu),
    "Sigmoid": (None, wick.sigmoid), "Tanh": (np.tanh, wick.tanh), "Neg": (np.negative, wick.neg),
    "Abs": (np.abs, wick.abs), "Exp": (np.exp, wick.exp), "Log": (np.log, wick.log),
    "Sqrt": (np.sqrt, wick.sqrt), "Reciprocal": (np.reciprocal, wick.reciprocal),
    "Floor": (np.floor, wick.floor), "Ceil": (np.ceil, wick.ceil), "Erf": (None, wick.erf),
    "Sin": (np.sin, wick.sin), "Cos": (np.cos, wick.cos), "Round": (np.rint, wick.round),
    "Sign": (np.sign, wick.sign), "Not": (np.logical_not, wick.logical_not),
}
_BINARY = {
    "Add": (np.add, wick.add), "Sub": (np.subtract, wick.sub), "Mul": (np.multiply, wick.mul),
    "Pow": (None, wick.pow), "Equal": (np.equal, wick.eq),
    "Less": (np.less, wick.lt), "LessOrEqual": (np.less_equal, wick.le),
    "Greater": (np.greater, wick.gt), "GreaterOrEqual": (np.greater_equal, wick.ge),
    "And": (np.logical_and, wick.logical_and), "Or": (np.logical_or, wick.logical_or),
    "Max": (np.maximum, wick.maximum), "Min": (np.minimum, wick.minimum),
}


def unary(node, ins):
    np_fn, wick_fn = _UNARY[node.op]
    x = ins[0]
    if is_static(x) and np_fn is not None:
        return [np_fn(x).astype(x.dtype) if node.op != "Not" else np_fn(x)]
    return [wick_fn(to_wick(x))]


def binary(node, ins):
    out = ins[0]
    for x in ins[1:]:  # Max and Min are variadic; the others have two inputs
        out = _binary2(node, out, x)
    return [out]


def _binary2(node, a, b):
    np_fn, wick_fn = _BINARY[node.op]
    both = is_static(a) and is_static(b)
    # Broadcasting two small constants ([n, 1] + [1, m]) can ask for n * m elements.
    check_size(node, np.broadcast_shapes(tuple(shape_of(a)), tuple(shape_of(b))),
               a.dtype.itemsize, both)
    if both:
        if node.op == "Pow":
            return np.power(a, b).astype(a.dtype)
        out = np_fn(a, b)
        return out if out.dtype == np.bool_ else out.astype(a.dtype)
    return wick_fn(to_wick(a), to_wick(b))


def div_mod(node, ins):
    """Div and Mod. Integer Div truncates (C's /); Mod has the divisor's sign (Python's %), or the
    dividend's with fmod=1 (C's fmod), which floating point requires (before opset 28, past
    OPSET_RANGE). An integer divisor holding 0 raises RuntimeError("... ZeroDivisionError ...")
    naming the node, on the call that meets it: ONNX Runtime fails that call too ("Integer
    division by zero"), and PyTorch raises ZeroDivisionError (Note [integer division by zero] in
    core/cpu/binary_kernels.cpp). A compiled model's later calls replay the kernel, whose own
    error names the kernel ("[div_trunc] ZeroDivisionError: ...") instead of the node."""
    a, b = ins
    both = is_static(a) and is_static(b)
    check_size(node, np.broadcast_shapes(tuple(shape_of(a)), tuple(shape_of(b))),
               a.dtype.itemsize, both)
    integer = a.dtype.kind in "iu" if is_static(a) else not a.is_floating_point()
    fmod = node.attrs.get("fmod", 0) == 1
    if node.op == "Mod" and not integer and not fmod:
        raise ValueError(f"wick.onnx: node '{node.name}' (Mod): fmod=0 (the divisor's sign) is "
                         "defined for integers only; ONNX requires fmod=1 for floating point")
    if both:
        if integer and not np.all(b):
            raise _zero_division(node)
        with np.errstate(all="ignore"):  # MIN // -1 wraps to MIN, as the kernels do
            if node.op == "Mod":
                return [(np.fmod if fmod else np.remainder)(a, b).astype(a.dtype)]
            if not integer:
                return [np.divide(a, b).astype(a.dtype)]
            q = np.floor_divide(a, b)  # toward -inf; truncation rounds the other way on a rest
            return [(q + ((np.remainder(a, b) != 0) & ((a < 0) != (b < 0)))).astype(a.dtype)]
    a, b = to_wick(a), to_wick(b)
    if not integer:
        return [wick.fmod(a, b) if node.op == "Mod" else wick.div(a, b)]
    try:
        if node.op == "Div":
            return [wick.div(a, b, rounding_mode="trunc")]
        return [wick.fmod(a, b) if fmod else wick.remainder(a, b)]
    except RuntimeError as e:
        if "ZeroDivisionError" not in str(e):
            raise
        raise _zero_division(node) from e


def _zero_division(node):
    return RuntimeError(f"wick.onnx: node '{node.name}' ({node.op}): ZeroDivisionError: integer "
                       "division by zero (a divisor element is 0)")


def where(node, ins):
    c, a, b = ins
    check_size(node, np.broadcast_shapes(*(tuple(shape_of(v)) for v in ins)), a.dtype.itemsize,
               all(is_static(v) for v in ins))
    if all(is_static(v) for v in ins):
        return [np.where(c, a, b)]
    return [wick.where(to_wick(c), to_wick(a), to_wick(b))]


def clip(node, ins):
    x = ins[0]
    if node.opset < 11:
        lo, hi = node.attrs.get("min"), node.attrs.get("max")
    else:
        bounds = [None if v is None else static(node, v, what).reshape(-1)
                  for v, what in zip(list(ins[1:3]) + [None, None], ("min", "max"))]
        if any(b is not None and b.size != 1 for b in bounds):
            raise ValueError(f"wick.onnx: node '{node.name}' (Clip): min and max must be scalars")
        lo, hi = (None if b is None else float(b[0]) for b in bounds)
    if lo is None and hi is None:
        return [x]
    if is_static(x):
        return [np.clip(x, lo, hi).astype(x.dtype)]
    return [to_wick(x).clamp(lo, hi)]


def leaky_relu(node, ins):
    return [F.leaky_relu(to_wick(ins[0]), node.attrs.get("alpha", 0.01))]


def softmax(node, ins):
    x = to_wick(ins[0])
    rank = len(x.shape)
    axis = axis_in(node, node.attrs.get("axis", -1 if node.opset >= 13 else 1), rank)
    fn = x.log_softmax if node.op == "LogSoftmax" else x.softmax
    if node.opset >= 13 or axis == rank - 1:
        return [fn(axis)]
    # Before opset 13 the input is seen as 2-D: [prod(shape[:axis]), prod(shape[axis:])].
    flat = x.reshape([math.prod(x.shape[:axis]), -1])
    out = flat.log_softmax(1) if node.op == "LogSoftmax" else flat.softmax(1)
    return [out.reshape(list(x.shape))]


# ---- shapes ----

def identity(node, ins):
    return [ins[0]] + [None] * (len(node.outputs) - 1)


def dropout(node, ins):
    """Inference: the identity. Opset 12 made training_mode an input; a true one is refused."""
    mode = static(node, ins[2], "training_mode") if len(ins) > 2 else None
    if mode is not None and mode.size and bool(mode.reshape(-1)[0]):
        raise ValueError(f"wick.onnx: node '{node.name}' (Dropout): training_mode is true; "
                         "wick.onnx.load runs inference")
    return identity(node, ins)


def shape(node, ins):
    dims = np.array(list(ins[0].shape), dtype=np.int64)
    start, end = node.attrs.get("start", 0), node.attrs.get("end", None)
    return [dims[start:end]]


def cast(node, ins):
    to = node.attrs["to"]
    x = ins[0]
    check_size(node, shape_of(x), WICK_DTYPES[to].itemsize, is_static(x) and to in NP_DTYPES)
    if is_static(x) and to in NP_DTYPES:
        return [x.astype(NP_DTYPES[to])]
    return [to_wick(x).to(WICK_DTYPES[to])]


def reshape(node, ins):
    x = ins[0]
    target = static_ints(node, ins[1], "shape")
    dims = shape_of(x)
    if not node.attrs.get("allowzero", 0):
        target = [dims[i] if t == 0 and i < len(dims) else t for i, t in enumerate(target)]
    if target.count(-1) > 1 or any(t < -1 for t in target):
        raise ValueError(f"wick.onnx: node '{node.name}' (Reshape): shape {target} is invalid")
    known = math.prod(t for t in target if t != -1)
    total = math.prod(dims)
    if -1 in target:
        if known == 0 or total % known:
            raise ValueError(f"wick.onnx: node '{node.name}' (Reshape): cannot reshape "
                             f"{dims} to {target}")
        target = [total // known if t == -1 else t for t in target]
    if math.prod(target) != total:
        raise ValueError(f"wick.onnx: node '{node.name}' (Reshape): cannot reshape {dims} "
                         f"to {target}")
    check_size(node, target, x.dtype.itemsize)  # an empty result's dimensions must fit int64
    return [reshape_to(x, target)]


def flatten(node, ins):
    x = ins[0]
    dims = shape_of(x)
    axis = node.attrs.get("axis", 1)
    axis = axis + len(dims) if axis < 0 else axis  # in [-rank, rank]
    if not 0 <= axis <= len(dims):
        raise ValueError(f"wick.onnx: node '{node.name}' (Flatten): axis "
                         f"{node.attrs.get('axis')} is out of range for rank {len(dims)}")
    return [reshape_to(x, [math.prod(dims[:axis]), math.prod(dims[axis:])])]


def _axes(node, ins, index):
    if node.opset >= 13:
        return static_ints(node, ins[index] if len(ins) > index else None, "axes")
    return node.attrs.get("axes")


def unsqueeze(node, ins):
    x = ins[0]
    dims = shape_of(x)
    axes = _axes(node, ins, 1)
    if not axes:
        raise ValueError(f"wick.onnx: node '{node.name}' (Unsqueeze): axes are missing")
    rank = len(dims) + len(axes)
    axes = sorted(axis_in(node, a, rank, "axes entry") for a in axes)
    if len(set(axes)) != len(axes):
        raise ValueError(f"wick.onnx: node '{node.name}' (Unsqueeze): repeated axes {axes}")
    for a in axes:
        dims.insert(a, 1)
    return [reshape_to(x, dims)]


def squeeze(node, ins):
    x = ins[0]
    dims = shape_of(x)
    axes = _axes(node, ins, 1)
    if axes is None:
        axes = [i for i, d in enumerate(dims) if d == 1]
    axes = {axis_in(node, a, len(dims), "axes entry") for a in axes}
    for a in axes:
        if dims[a] != 1:
            raise ValueError(f"wick.onnx: node '{node.name}' (Squeeze): dimension {a} of "
                             f"{dims} is not 1")
    return [reshape_to(x, [d for i, d in enumerate(dims) if i not in axes])]


def transpose(node, ins):
    x = ins[0]
    rank = len(shape_of(x))
    perm = node.attrs.get("perm", list(reversed(range(rank))))
    if sorted(perm) != list(range(rank)):
        raise ValueError(f"wick.onnx: node '{node.name}' (Transpose): perm {perm} is not a "
                         f"permutation of {rank} axes")
    return [np.transpose(x, perm) if is_static(x) else x.permute(list(perm))]


def concat(node, ins):
    ins = [v for v in ins if v is not None]
    rank = len(shape_of(ins[0]))
    axis = axis_in(node, node.attrs["axis"], rank)
    if any(len(shape_of(v)) != rank for v in ins):
        raise ValueError(f"wick.onnx: node '{node.name}' (Concat): inputs of shapes "
                         f"{[shape_of(v) for v in ins]} differ in rank")
    out = shape_of(ins[0])
    out[axis] = sum(shape_of(v)[axis] for v in ins)  # one value named 1000 times is 1000 copies
    check_size(node, out, ins[0].dtype.itemsize, all(is_static(v) for v in ins))
    if all(is_static(v) for v in ins):
        return [np.concatenate(ins, axis)]
    return [wick.cat([to_wick(v) for v in ins], axis)]


def gather(node, ins):
    data, indices = ins
    dims = shape_of(data)
    axis = axis_in(node, node.attrs.get("axis", 0), len(dims))
    out_shape = check_size(node, dims[:axis] + shape_of(indices) + dims[axis + 1:],
                           data.dtype.itemsize, is_static(data) and is_static(indices))
    n = dims[axis]
    if is_static(indices):
        if indices.size and not (-n <= indices.min() and indices.max() < n):
            raise IndexError(f"wick.onnx: node '{node.name}' (Gather): indices from "
                             f"{indices.min()} to {indices.max()} are out of range for "
                             f"dimension {axis} of size {n}")
        indices = np.where(indices < 0, indices + n, indices).astype(np.int64)
        if is_static(data):
            return [np.take(data, indices, axis)]
        flat = to_wick(indices.reshape(-1))
    else:
        # ONNX counts a negative index from the end; index_select refuses it, and still refuses
        # (IndexError) one outside [-n, n), which stays negative or >= n after the shift.
        flat = to_wick(indices).reshape([-1])
        flat = wick.where(flat < 0, flat + n, flat)
    out = wick.index_select(to_wick(data), axis, flat)
    return [out.reshape(out_shape)]


def slice_(node, ins):
    x = ins[0]
    dims = shape_of(x)
    if node.opset < 10:
        starts, ends, axes, steps = (node.attrs.get("starts"), node.attrs.get("ends"),
                                     node.attrs.get("axes"), None)
    else:
        starts, ends, axes, steps = (static_ints(node, ins[i] if len(ins) > i else None, what)
                                     for i, what in enumerate(("starts", "ends", "axes",
                                                               "steps"), 1))
    axes = list(range(len(starts))) if axes is None else axes
    steps = [1] * len(starts) if steps is None else steps
    if not len(starts) == len(ends) == len(axes) == len(steps):
        raise ValueError(f"wick.onnx: node '{node.name}' (Slice): starts, ends, axes and steps "
                         "differ in length")
    index = [slice(None)] * len(dims)
    for s, e, a, st in zip(starts, ends, axes, steps):
        a = axis_in(node, a, len(dims), "axes entry")
        if st <= 0:
            raise ValueError(f"wick.onnx: node '{node.name}' (Slice): step {st} is not "
                             "supported (wick slices with positive steps)")
        s, e, _ = slice(s, e, st).indices(dims[a])
        index[a] = slice(s, max(s, e), st)
    return [x[tuple(index)]]


def expand(node, ins):
    x = ins[0]
    target = static_ints(node, ins[1], "shape")
    dims = shape_of(x)
    rank = max(len(dims), len(target))
    dims, target = [1] * (rank - len(dims)) + dims, [1] * (rank - len(target)) + target
    if any(d != t and d != 1 and t != 1 for d, t in zip(dims, target)):
        raise ValueError(f"wick.onnx: node '{node.name}' (Expand): shape {target} does not "
                         f"broadcast with the input's shape {dims}")
    out = check_size(node, [d if t == 1 else t for d, t in zip(dims, target)],
                     x.dtype.itemsize, is_static(x))
    if is_static(x):
        return [np.broadcast_to(x.reshape(dims), out).copy()]
    return [wick.broadcast_to(x.reshape(dims), out)]


def constant(node, ins):
    return [node.attrs["__value__"]]


def constant_of_shape(node, ins):
    value = node.attrs.get("value")
    value = np.zeros(1, np.float32) if value is None else value.reshape(-1)
    if value.size != 1:
        raise ValueError(f"wick.onnx: node '{node.name}' (ConstantOfShape): value must hold one "
                         f"element; it holds {value.size}")
    dims = check_size(node, static_ints(node, ins[0], "input"), value.dtype.itemsize, True)
    return [np.full(dims, value[0], dtype=value.dtype)]


def reduce_mean(node, ins):
    x = to_wick(ins[0])
    if node.opset >= 18:
        axes = static_ints(node, ins[1] if len(ins) > 1 else None, "axes")
    else:
        axes = node.attrs.get("axes")
    rank = len(x.shape)
    if not axes and node.attrs.get("noop_with_empty_axes", 0):
        return [x]
    axes = list(range(rank)) if not axes else [axis_in(node, a, rank) for a in axes]
    return [x.mean(tuple(axes), keepdim=bool(node.attrs.get("keepdims", 1)))]


OPS = {
    **{op: unary for op in _UNARY}, **{op: binary for op in _BINARY}, "Div": div_mod,
    "Mod": div_mod,
    "Where": where, "Clip": clip, "LeakyRelu": leaky_relu, "Softmax": softmax,
    "LogSoftmax": softmax, "Identity": identity, "Dropout": dropout, "Shape": shape,
    "Cast": cast, "Reshape": reshape, "Flatten": flatten, "Unsqueeze": unsqueeze,
    "Squeeze": squeeze, "Transpose": transpose, "Concat": concat, "Gather": gather,
    "Slice": slice_, "Expand": expand, "Constant": constant,
    "ConstantOfShape": constant_of_shape, "ReduceMean": reduce_mean,
}


# ---- load-time checks of attribute values ----

def bad_attribute(node, attr, value, why):
    raise ValueError(f"wick.onnx.load: node '{node.name}' ({node.op}): attribute {attr}="
                     f"{value!r} is not supported; {why}")


def check_flags(node, *names):
    """Flags ONNX defines as 0 or 1: another value is a corrupt file, not a "true"."""
    for name in names:
        if node.attrs.get(name, 0) not in (0, 1):
            bad_attribute(node, name, node.attrs[name], "ONNX defines 0 or 1")


def _check_dropout(node):
    if any(node.outputs[1:]):
        bad_attribute(node, "outputs", node.outputs, "Dropout's mask output is not supported")


def _check_cast(node):
    if node.attrs.get("to") not in WICK_DTYPES:
        bad_attribute(node, "to", node.attrs.get("to"), "wick has no such dtype")


def _check_constant(node):
    if "__value__" not in node.attrs:
        bad_attribute(node, "value", sorted(node.attrs), "only numeric tensor values are supported")


CHECKS = {"Dropout": _check_dropout, "Cast": _check_cast, "Constant": _check_constant,
          "Reshape": lambda node: check_flags(node, "allowzero"),
          "Mod": lambda node: check_flags(node, "fmod"),
          "ReduceMean": lambda node: check_flags(node, "keepdims", "noop_with_empty_axes")}
