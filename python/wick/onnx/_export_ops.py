"""How each node of a traced wick graph becomes ONNX nodes (opset 17): the op table's export name
(core/ops/op_list.h) picks the ONNX operator, and this file maps the typed attributes.

Note [ONNX views]
A wick view is a new (shape, strides, offset) over its source's storage; ONNX has no strides, so a
view must be said as operators on the source's *logical* values. Every view in the models wick
exports is a reshape, a permutation, an inserted axis or a broadcast, or a composition of these,
over a contiguous source. Such a view, with its size-1 dimensions dropped, reads the whole source
in some order: its strides, sorted from largest to smallest, are those of a contiguous tensor of
the same sizes. Then the view is
    Reshape(source, sizes in stride order) -> Transpose(back to the view's order)
    -> Reshape(the view's shape, broadcast dimensions as 1) -> Expand(the view's shape)
with every step that changes nothing left out. Slices (an offset, or strides that skip elements)
and views of non-contiguous values raise: the exporter says which node and why.
"""

import numpy as np
from onnx import TensorProto, helper

DTYPES = {
    "float32": TensorProto.FLOAT, "float64": TensorProto.DOUBLE, "float16": TensorProto.FLOAT16,
    "bfloat16": TensorProto.BFLOAT16, "int64": TensorProto.INT64, "int32": TensorProto.INT32,
    "uint8": TensorProto.UINT8, "int8": TensorProto.INT8, "bool": TensorProto.BOOL,
}

# Ops whose ONNX form is one operator with the same inputs and no attributes.
SIMPLE = {
    "neg": "Neg", "abs": "Abs", "exp": "Exp", "log": "Log", "sqrt": "Sqrt",
    "reciprocal": "Reciprocal", "sin": "Sin", "cos": "Cos", "tanh": "Tanh", "sigmoid": "Sigmoid",
    "relu": "Relu", "erf": "Erf", "tan": "Tan", "sinh": "Sinh", "cosh": "Cosh", "floor": "Floor",
    "ceil": "Ceil", "round": "Round", "sign": "Sign", "selu": "Selu",
    "add": "Add", "sub": "Sub", "mul": "Mul", "div": "Div", "pow": "Pow", "maximum": "Max",
    "minimum": "Min", "eq": "Equal", "lt": "Less", "le": "LessOrEqual", "gt": "Greater",
    "ge": "GreaterOrEqual", "logical_and": "And", "logical_or": "Or", "where": "Where",
    "bmm": "MatMul",
}


def contiguous_strides(shape):
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step *= size
    return list(reversed(strides))


def is_contiguous(shape, strides):
    return all(size == 1 or st == cs
               for size, st, cs in zip(shape, strides, contiguous_strides(shape)))


def view_plan(source, view_shape, view_strides, view_offset):
    """The steps of Note [ONNX views] for one view node, as a list of (op, target): ("reshape",
    shape), ("transpose", perm), ("expand", shape). Raises ValueError(reason) otherwise."""
    if not is_contiguous(source["shape"], source["strides"]):
        raise ValueError("its source is itself a strided (non-contiguous) view")
    try:
        return reorder_plan(source, view_shape, view_strides, view_offset)
    except ValueError:
        if len(view_shape) != len(source["shape"]):
            raise
        return slice_plan(source, view_shape, view_strides, view_offset)


def reorder_plan(source, view_shape, view_strides, view_offset):
    """A view that reads every element of its source once: reshape, transpose, reshape, expand."""
    if view_offset != 0:
        raise ValueError(f"it starts at element {view_offset} of its source")
    numel = int(np.prod(source["shape"], dtype=np.int64))
    core = [d for d, (n, st) in enumerate(zip(view_shape, view_strides)) if n > 1 and st != 0]
    broadcast = [d for d, (n, st) in enumerate(zip(view_shape, view_strides)) if n > 1 and st == 0]
    order = sorted(core, key=lambda d: -view_strides[d])
    sizes = [view_shape[d] for d in order]
    if int(np.prod(sizes, dtype=np.int64)) != numel or \
            [view_strides[d] for d in order] != contiguous_strides(sizes):
        raise ValueError(f"shape {list(view_shape)} with strides {list(view_strides)} skips or "
                         "repeats elements of its source (a slice or an overlapping view)")
    steps = []
    if sizes != list(source["shape"]):
        steps.append(("reshape", sizes))
    perm = sorted(range(len(order)), key=lambda k: order[k])
    if perm != list(range(len(order))):
        steps.append(("transpose", perm))
        sizes = [sizes[k] for k in perm]
    unbroadcast = [1 if d in broadcast else n for d, n in enumerate(view_shape)]
    if unbroadcast != sizes:
        steps.append(("reshape", unbroadcast))
    if broadcast:
        steps.append(("expand", list(view_shape)))
    return steps


def slice_plan(source, view_shape, view_strides, view_offset):
    """A view that keeps the source's dimensions and takes every step-th element from a start in
    some of them, then maybe broadcasts (stride 0): [("slice", (starts, ends, axes, steps)),
    ("expand", shape)]. Whole dimensions are left out, so a dynamic batch dimension stays whole."""
    shape, strides = source["shape"], source["strides"]
    starts, ends, axes, steps = [], [], [], []
    rest = view_offset
    for d in sorted(range(len(shape)), key=lambda d: -strides[d]):
        if shape[d] == 1:
            continue
        start, rest = divmod(rest, strides[d])
        size = 1 if view_strides[d] == 0 else view_shape[d]  # a broadcast reads one element
        step = 1 if size == 1 else view_strides[d] // strides[d]
        if size > 1 and (view_strides[d] % strides[d] or step < 1):
            raise ValueError(f"dimension {d} has stride {view_strides[d]} over a source stride "
                             f"{strides[d]} (not a whole step)")
        last = start + (size - 1) * step
        if last >= shape[d]:
            raise ValueError(f"dimension {d} reads past its source's {shape[d]} elements")
        if start == 0 and step == 1 and size == shape[d]:
            continue
        axes.append(d), starts.append(start), ends.append(last + 1), steps.append(step)
    if rest:
        raise ValueError(f"offset {view_offset} is not a start in the source's dimensions")
    plan = [("slice", (starts, ends, axes, steps))] if axes else []
    if any(n > 1 and st == 0 for n, st in zip(view_shape, view_strides)):
        plan.append(("expand", list(view_shape)))
    return plan


def conv_attrs(a):
    ph, pw = a["padding"]
    return dict(strides=a["stride"], pads=[ph, pw, ph, pw], dilations=a["dilation"],
                group=a["groups"], kernel_shape=None)


def pool_attrs(a, with_dilation):
    ph, pw = a["padding"]
    out = dict(kernel_shape=a["kernel"], strides=a["stride"], pads=[ph, pw, ph, pw],
               ceil_mode=int(a["ceil_mode"]))
    if with_dilation:
        out["dilations"] = a["dilation"]
    return out


class Unsupported(Exception):
    """A node the exporter has no ONNX form for (the caller adds the module path)."""


def translate(op, attrs, inputs, outputs, emit, constant, out_shape):
    """Appends the ONNX nodes of one wick kernel node through emit(op_type, inputs, outputs,
    **attrs); constant(array) returns the name of a new initializer. inputs are ONNX value names
    ("" for an undefined optional tensor); out_shape is the first output's shape."""
    if op in SIMPLE:
        emit(SIMPLE[op], inputs, outputs)
    elif op == "conv2d":
        a = conv_attrs(attrs)
        a.pop("kernel_shape")
        emit("Conv", inputs if inputs[2] else inputs[:2], outputs, **a)
    elif op == "max_pool2d":
        emit("MaxPool", inputs, outputs[:1], **pool_attrs(attrs, True))
    elif op == "avg_pool2d":
        a = pool_attrs(attrs, False)
        a["count_include_pad"] = int(attrs["count_include_pad"])
        emit("AveragePool", inputs, outputs, **a)
    elif op == "adaptive_avg_pool2d":
        if list(out_shape[-2:]) != [1, 1]:
            raise Unsupported(f"op 'adaptive_avg_pool2d' to {list(out_shape[-2:])} (only [1, 1], "
                              "GlobalAveragePool, is exported)")
        emit("GlobalAveragePool", inputs, outputs)
    elif op in ("softmax", "log_softmax"):
        emit("Softmax" if op == "softmax" else "LogSoftmax", inputs, outputs, axis=attrs["dim"])
    elif op == "rsqrt":
        root = outputs[0] + "_sqrt"
        emit("Sqrt", inputs, [root])
        emit("Reciprocal", [root], outputs)
    elif op == "leaky_relu":
        emit("LeakyRelu", inputs, outputs, alpha=attrs["negative_slope"])
    elif op == "elu":
        emit("Elu", inputs, outputs, alpha=attrs["alpha"])
    elif op == "clamp":
        lo = constant(np.array(attrs["min"], np.float32))
        hi = constant(np.array(attrs["max"], np.float32))
        emit("Clip", [inputs[0], lo, hi], outputs)
    elif op == "pow_scalar":
        emit("Pow", [inputs[0], constant(np.array(attrs["exponent"], np.float32))], outputs)
    elif op in ("sum", "amax", "amin"):
        dims = list(attrs["dims"])
        keep = int(attrs["keepdim"])
        if op == "sum":
            axes = [constant(np.array(dims, np.int64))] if dims else []
            emit("ReduceSum", inputs + axes, outputs, keepdims=keep)
        else:
            emit("ReduceMax" if op == "amax" else "ReduceMin", inputs, outputs, keepdims=keep,
                 **({"axes": dims} if dims else {}))
    elif op == "batch_norm":
        if attrs["training"]:
            raise Unsupported("batch_norm in training mode (export in eval mode)")
        if attrs.get("relu") or any(inputs[5:]):  # a fused ReLU or residual
            raise Unsupported("batch_norm with a fused residual or relu (export in eval mode)")
        emit("BatchNormalization", inputs[:5], outputs[:1], epsilon=attrs["eps"])
    else:
        raise Unsupported(f"op '{op}' has no ONNX export")


def make_node(op_type, inputs, outputs, name, **attrs):
    attrs = {k: v for k, v in attrs.items() if v is not None}
    return helper.make_node(op_type, inputs, outputs, name=name, **attrs)
