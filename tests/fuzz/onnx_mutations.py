"""The structure-aware edits of fuzz_onnx_import.py: mutate(model, fdp) changes a seed ModelProto
in place, one to four edits, each chosen and parameterised by the fuzzer's bytes through an
atheris.FuzzedDataProvider. The edits stay mostly within what onnx.checker accepts (names that
exist, types the schema allows) so that most models reach wick's translations; the rest test the
checks in front of them."""
import math

import numpy as np
from onnx import AttributeProto, TensorProto, helper, numpy_helper

# Integers that break size arithmetic: signs, zero, the int32 and int64 edges.
INTS = [0, 1, 2, 3, -1, -2, 4, 5, 7, 255, 256, 1 << 16, (1 << 31) - 1, 1 << 31, 1 << 32,
        (1 << 62), (1 << 63) - 1, -(1 << 31), -(1 << 63)]
FLOATS = [0.0, -0.0, 1.0, -1.0, 0.5, 2.0, 1e-30, 1e30, 3.4e38, math.inf, -math.inf, math.nan]
# The attributes wick's translations read (and a few they do not).
ATTRS = ["axis", "axes", "perm", "kernel_shape", "pads", "strides", "dilations", "group",
         "transA", "transB", "alpha", "beta", "epsilon", "keepdims", "allowzero", "to",
         "auto_pad", "ceil_mode", "count_include_pad", "mode", "start", "end", "value",
         "noop_with_empty_axes", "training_mode", "storage_order", "min", "max", "starts",
         "ends", "output_dtype", "block_size", "value_float", "value_floats", "value_int",
         "value_ints", "momentum", "seed", "ratio"]
STRINGS = ["NOTSET", "VALID", "SAME_UPPER", "SAME_LOWER", "constant", "reflect", "edge", "wrap",
           "", "x"]
ELEM_TYPES = [1, 1, 1, 7, 7, 2, 3, 5, 6, 9, 10, 11, 16, 4, 8, 12, 13, 14, 0]
NP_TYPES = [np.float32, np.float32, np.int64, np.int64, np.int32, np.uint8, np.int8, np.bool_,
            np.float16, np.float64, np.int16]
OPS = ["Add", "Sub", "Mul", "Div", "Pow", "Relu", "Sigmoid", "Neg", "Abs", "Sqrt", "Exp", "Log",
       "Reciprocal", "Not", "Equal", "Less", "Max", "Min", "Where", "Clip", "LeakyRelu", "Softmax",
       "LogSoftmax", "Identity", "Dropout", "Shape", "Cast", "Reshape", "Flatten", "Unsqueeze",
       "Squeeze", "Transpose", "Concat", "Gather", "Slice", "Expand", "Constant",
       "ConstantOfShape", "ReduceMean", "Conv", "MaxPool", "AveragePool", "Pad",
       "GlobalAveragePool", "GlobalMaxPool", "BatchNormalization", "MatMul", "Gemm",
       "QuantizeLinear", "DequantizeLinear", "Round", "Floor", "Erf", "And", "Greater",
       "Hardmax", "Tile", "Resize", "If"]  # the last four: ONNX ops wick does not run


KINDS = [AttributeProto.INT, AttributeProto.INTS, AttributeProto.FLOAT, AttributeProto.FLOATS,
         AttributeProto.STRING, AttributeProto.TENSOR]


def _int(fdp):
    return fdp.ConsumeIntInRange(-3, 8) if fdp.ConsumeBool() else fdp.PickValueInList(INTS)


def _ints(fdp):
    return [_int(fdp) for _ in range(fdp.ConsumeIntInRange(0, 6))]


def _float(fdp):
    return fdp.ConsumeFloatInRange(-4.0, 4.0) if fdp.ConsumeBool() else fdp.PickValueInList(FLOATS)


def _array(fdp):
    """A small array of a dtype ONNX has, its values partly from the fuzzer's bytes."""
    dtype = np.dtype(fdp.PickValueInList(NP_TYPES))
    shape = [fdp.ConsumeIntInRange(0, 5) for _ in range(fdp.ConsumeIntInRange(0, 4))]
    n = int(np.prod(shape))
    if dtype.kind == "f":
        values = [_float(fdp) for _ in range(min(n, 8))]
    else:
        values = [_int(fdp) for _ in range(min(n, 8))]
    flat = np.resize(np.array(values or [0], np.float64 if dtype.kind == "f" else object), n)
    if dtype.kind in "iub":  # wrap into range, as a corrupt file would hold
        info = np.iinfo(dtype) if dtype.kind != "b" else None
        flat = np.array([(int(v) - info.min) % (info.max - info.min + 1) + info.min if info
                         else bool(v) for v in flat], dtype)
    return flat.astype(dtype).reshape(shape)


def _names(model):
    names = {i.name for i in model.graph.input} | {t.name for t in model.graph.initializer}
    for node in model.graph.node:
        names |= set(node.input) | set(node.output)
    return sorted(names - {""}) + ["", "nowhere"]


def _value_infos(model):
    return list(model.graph.input) + list(model.graph.output) + list(model.graph.value_info)


def _pick(fdp, items):
    return items[fdp.ConsumeIntInRange(0, len(items) - 1)] if len(items) else None


def edit_dim(model, fdp):
    info = _pick(fdp, _value_infos(model))
    if info is None:
        return
    shape = info.type.tensor_type.shape
    choice = fdp.ConsumeIntInRange(0, 5)
    if choice == 0 or not shape.dim:
        shape.dim.add().dim_value = fdp.ConsumeIntInRange(0, 6)
    elif choice == 1:
        del shape.dim[fdp.ConsumeIntInRange(0, len(shape.dim) - 1)]
    elif choice == 2:
        shape.dim[fdp.ConsumeIntInRange(0, len(shape.dim) - 1)].dim_param = \
            fdp.PickValueInList(["n", "m", "k"])
    elif choice == 3:
        info.type.tensor_type.ClearField("shape")
    else:
        value = _int(fdp)
        if value >= 0:  # protobuf takes any int64; the checker takes non-negative dims
            shape.dim[fdp.ConsumeIntInRange(0, len(shape.dim) - 1)].dim_value = value


def edit_elem_type(model, fdp):
    info = _pick(fdp, _value_infos(model))
    if info is not None:
        info.type.tensor_type.elem_type = fdp.PickValueInList(ELEM_TYPES)


def _attribute_value(fdp, kind):
    if kind == AttributeProto.INT:
        return _int(fdp)
    if kind == AttributeProto.INTS:
        return _ints(fdp)
    if kind == AttributeProto.FLOAT:
        return _float(fdp)
    if kind == AttributeProto.FLOATS:
        return [_float(fdp) for _ in range(fdp.ConsumeIntInRange(0, 4))]
    if kind == AttributeProto.STRING:
        return fdp.PickValueInList(STRINGS)
    return numpy_helper.from_array(_array(fdp))


def edit_attribute(model, fdp):
    node = _pick(fdp, model.graph.node)
    if node is None:
        return
    choice = fdp.ConsumeIntInRange(0, 3)
    if choice == 0 and node.attribute:  # remove one
        del node.attribute[fdp.ConsumeIntInRange(0, len(node.attribute) - 1)]
        return
    if choice == 1 or not node.attribute:  # add (or replace) one of any type
        name = fdp.PickValueInList(ATTRS)
        kind = fdp.PickValueInList(KINDS)
    else:  # a new value of the same type
        attr = node.attribute[fdp.ConsumeIntInRange(0, len(node.attribute) - 1)]
        name, kind = attr.name, attr.type
        if kind not in KINDS:  # a subgraph (edit_exotic's)
            return
    for i, a in enumerate(node.attribute):
        if a.name == name:
            del node.attribute[i]
            break
    node.attribute.append(helper.make_attribute(name, _attribute_value(fdp, kind),
                                                attr_type=kind))


def edit_initializer(model, fdp):
    inits = model.graph.initializer
    t = _pick(fdp, inits)
    if t is None:
        return
    choice = fdp.ConsumeIntInRange(0, 4)
    if choice <= 1:  # new contents: another dtype, shape and values
        t.CopyFrom(numpy_helper.from_array(_array(fdp), t.name))
    elif choice == 2:  # dims that disagree with the data
        t.dims[:] = [fdp.ConsumeIntInRange(0, 6) for _ in range(fdp.ConsumeIntInRange(0, 3))]
    elif choice == 3:  # the type field alone: the bytes read as another type
        t.data_type = fdp.PickValueInList(ELEM_TYPES)
    else:
        inits.remove(t)


def edit_node_io(model, fdp):
    node = _pick(fdp, model.graph.node)
    if node is None:
        return
    names = _names(model)
    choice = fdp.ConsumeIntInRange(0, 4)
    if choice == 0 and node.input:
        node.input[fdp.ConsumeIntInRange(0, len(node.input) - 1)] = _pick(fdp, names)
    elif choice == 1:
        node.input.append(_pick(fdp, names))
    elif choice == 2 and node.input:
        del node.input[-1]
    elif choice == 3 and node.output:
        node.output[fdp.ConsumeIntInRange(0, len(node.output) - 1)] = _pick(fdp, names)
    else:
        node.output.append(fdp.PickValueInList(["", "extra"]))


def edit_opset(model, fdp):
    model.opset_import[0].version = fdp.ConsumeIntInRange(1, 25)


def edit_nodes(model, fdp):
    nodes = list(model.graph.node)
    if not nodes:
        return
    i = fdp.ConsumeIntInRange(0, len(nodes) - 1)
    choice = fdp.ConsumeIntInRange(0, 4)
    if choice == 0:
        del nodes[i]
    elif choice == 1:  # duplicated, reading the same values and writing new ones
        copy = type(nodes[i])()
        copy.CopyFrom(nodes[i])
        copy.output[:] = [f"{o}_dup" if o else "" for o in copy.output]
        nodes.insert(i + 1, copy)
    elif choice == 2:
        j = fdp.ConsumeIntInRange(0, len(nodes) - 1)
        nodes[i], nodes[j] = nodes[j], nodes[i]
    else:
        nodes[i].op_type = fdp.PickValueInList(OPS)
    nodes = [_copy(n) for n in nodes]  # copied out before the field is cleared
    del model.graph.node[:]
    model.graph.node.extend(nodes)


def _copy(message):
    out = type(message)()
    out.CopyFrom(message)
    return out


def edit_graph_outputs(model, fdp):
    outputs = model.graph.output
    names = _names(model)
    choice = fdp.ConsumeIntInRange(0, 2)
    if choice == 0 and outputs:
        outputs[fdp.ConsumeIntInRange(0, len(outputs) - 1)].name = _pick(fdp, names)
    elif choice == 1:
        outputs.append(helper.make_tensor_value_info(_pick(fdp, names),
                                                     fdp.PickValueInList(ELEM_TYPES[:4]), None))
    elif len(outputs) > 1:
        del outputs[fdp.ConsumeIntInRange(0, len(outputs) - 1)]


def edit_static(model, fdp):
    """A value moved across Note [static and dynamic values] (_onnx_ops.py): an initializer made a
    graph input (its nodes then run wick ops, or refuse a value they need constant), or a graph
    input made an initializer (the whole model then folds in NumPy)."""
    graph = model.graph
    if fdp.ConsumeBool() and graph.initializer:
        t = _pick(fdp, graph.initializer)
        graph.input.append(helper.make_tensor_value_info(t.name, t.data_type, list(t.dims)))
        graph.initializer.remove(t)
        return
    inits = {t.name for t in graph.initializer}
    info = _pick(fdp, [i for i in graph.input if i.name not in inits])
    if info is None:
        return
    t = info.type.tensor_type
    shape = [d.dim_value if d.HasField("dim_value") else fdp.ConsumeIntInRange(0, 3)
             for d in t.shape.dim]
    if t.elem_type not in (1, 7, 9, 2) or max(shape, default=0) > 4096 or math.prod(shape) > 4096:
        return
    dtype = {1: np.float32, 7: np.int64, 9: np.bool_, 2: np.uint8}[t.elem_type]
    values = np.resize(np.array([_int(fdp) % 7 - 2 for _ in range(4)]), shape)
    graph.initializer.append(numpy_helper.from_array(values.astype(dtype), info.name))
    graph.input.remove(info)


def edit_exotic(model, fdp):
    """What the loader refuses before any translation: other domains, external and sparse data,
    subgraphs, inputs that are not tensors, odd IR versions and opset imports."""
    graph = model.graph
    choice = fdp.ConsumeIntInRange(0, 6)
    node = _pick(fdp, graph.node)
    if choice == 0 and node is not None:
        node.domain = fdp.PickValueInList(["ai.onnx", "com.microsoft", "ai.onnx.ml", "x"])
    elif choice == 1 and graph.initializer:
        t = _pick(fdp, graph.initializer)
        t.data_location = TensorProto.EXTERNAL
        entry = t.external_data.add()
        entry.key, entry.value = "location", fdp.PickValueInList(["w.bin", "../w.bin", ""])
    elif choice == 2:
        sparse = graph.sparse_initializer.add()
        sparse.values.CopyFrom(numpy_helper.from_array(np.ones(2, np.float32), "sp"))
        sparse.indices.CopyFrom(numpy_helper.from_array(np.array([0, 3], np.int64), ""))
        sparse.dims[:] = [4]
    elif choice == 3 and node is not None:
        body = helper.make_graph([helper.make_node("Identity", ["x"], ["o"])], "body", [],
                                 [helper.make_tensor_value_info("o", TensorProto.FLOAT, None)])
        node.attribute.append(helper.make_attribute("then_branch", body))
    elif choice == 4 and graph.input:
        info = _pick(fdp, graph.input)
        info.type.sequence_type.elem_type.tensor_type.elem_type = TensorProto.FLOAT
    elif choice == 5:
        model.ir_version = fdp.ConsumeIntInRange(0, 12)
    else:
        entry = model.opset_import.add()
        entry.domain = fdp.PickValueInList(["", "ai.onnx", "com.microsoft"])
        entry.version = fdp.ConsumeIntInRange(1, 25)
        if fdp.ConsumeBool():
            del model.opset_import[0]


EDITS = [edit_dim, edit_elem_type, edit_attribute, edit_attribute, edit_attribute,
         edit_initializer, edit_initializer, edit_node_io, edit_opset, edit_nodes,
         edit_graph_outputs, edit_static, edit_static, edit_exotic]


def mutate(model, fdp):
    for _ in range(fdp.ConsumeIntInRange(1, 4)):
        fdp.PickValueInList(EDITS)(model, fdp)
