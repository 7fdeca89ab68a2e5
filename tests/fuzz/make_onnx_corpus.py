#!/usr/bin/env python3
"""The seed models of the ONNX importer's fuzzer (fuzz_onnx_import.py): small valid models that
between them use every operator wick.onnx.load runs, in the opsets whose forms differ (attributes
before opset 10/11/13/18, inputs after). The harness imports seed_models() and mutates these;
run as a script, this writes each one, serialized behind the raw-bytes marker, to
tests/fuzz/corpus/fuzz_onnx_import/seed-<name>, so that libFuzzer's byte mutations start from
valid files too, and the models of the bugs it found to finding-<name>.

usage: make_onnx_corpus.py
"""
import os

import numpy as np
from onnx import TensorProto, helper, numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CORPUS = os.path.join(ROOT, "tests", "fuzz", "corpus", "fuzz_onnx_import")
# The harness's first byte: 0 mod 4 feeds the rest to wick.onnx.load as bytes, bit 2 compiles too.
RAW = b"\x04"

F, I64, BOOL, U8 = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL, TensorProto.UINT8


def _model(nodes, inputs, outputs, inits=(), opset=17):
    inputs = [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs]
    outputs = [helper.make_tensor_value_info(n, t, s) for n, t, s in outputs]
    graph = helper.make_graph(nodes, "seed", inputs, outputs, list(inits))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)


def _init(name, array):
    return numpy_helper.from_array(np.asarray(array), name)


def _f32(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def _i64(*values):
    return np.array(values, np.int64)


def _n(op, ins, outs, **attrs):
    return helper.make_node(op, ins, outs, **attrs)


def seed_models():
    """name -> ModelProto, each a few hundred bytes; deterministic."""
    m = {}
    m["mlp"] = _model(
        [_n("Gemm", ["x", "w1", "b1"], ["h"], transB=1), _n("Relu", ["h"], ["r"]),
         _n("Gemm", ["r", "w2"], ["z"], alpha=0.5, beta=1.0), _n("Softmax", ["z"], ["y"], axis=1)],
        [("x", F, ["n", 4])], [("y", F, ["n", 3])],
        [_init("w1", _f32(5, 4)), _init("b1", _f32(5)), _init("w2", _f32(5, 3, seed=1))])
    m["cnn"] = _model(
        [_n("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1], strides=[1, 1]),
         _n("BatchNormalization", ["c", "s", "bb", "mu", "var"], ["bn"], epsilon=1e-5),
         _n("Relu", ["bn"], ["r"]),
         _n("MaxPool", ["r"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
         _n("Flatten", ["p"], ["f"], axis=1), _n("MatMul", ["f", "fw"], ["y"])],
        [("x", F, ["n", 1, 6, 6])], [("y", F, ["n", 2])],
        [_init("w", _f32(2, 1, 3, 3)), _init("b", _f32(2)), _init("s", np.ones(2, np.float32)),
         _init("bb", _f32(2, seed=2)), _init("mu", _f32(2, seed=3)),
         _init("var", np.full(2, 0.5, np.float32)), _init("fw", _f32(18, 2, seed=4))])
    m["shape_program"] = _model(
        [_n("Shape", ["x"], ["s"]), _n("Gather", ["s", "zero"], ["n0"], axis=0),
         _n("Unsqueeze", ["n0", "ax0"], ["n1"]), _n("Concat", ["n1", "minus1"], ["t"], axis=0),
         _n("Reshape", ["x", "t"], ["flat"]), _n("Transpose", ["x"], ["xt"], perm=[0, 2, 1]),
         _n("MatMul", ["xt", "x"], ["g"]), _n("ReduceMean", ["g"], ["y"], axes=[1], keepdims=0)],
        [("x", F, ["n", 2, 3])], [("flat", F, ["n", 6]), ("y", F, ["n", 3])],
        [_init("zero", np.array(0, np.int64)), _init("ax0", _i64(0)), _init("minus1", _i64(-1))],
        opset=13)
    m["norm_math"] = _model(
        [_n("ReduceMean", ["x", "axes"], ["mu"], keepdims=1), _n("Sub", ["x", "mu"], ["d"]),
         _n("Mul", ["d", "d"], ["d2"]), _n("ReduceMean", ["d2", "axes"], ["v"]),
         _n("Add", ["v", "eps"], ["ve"]), _n("Sqrt", ["ve"], ["sd"]), _n("Div", ["d", "sd"], ["z"]),
         _n("Pow", ["z", "two"], ["z2"]), _n("Sigmoid", ["z2"], ["sg"]), _n("Tanh", ["z"], ["th"]),
         _n("Exp", ["th"], ["e"]), _n("Log", ["e"], ["l"]), _n("Clip", ["l", "lo", "hi"], ["c"]),
         _n("Greater", ["c", "lo"], ["m"]), _n("Where", ["m", "c", "sg"], ["w"]),
         _n("Cast", ["w"], ["y"], to=TensorProto.DOUBLE)],
        [("x", F, ["n", 5])], [("y", TensorProto.DOUBLE, ["n", 5])],
        [_init("axes", _i64(-1)), _init("eps", np.float32(1e-5)), _init("two", np.float32(2)),
         _init("lo", np.float32(-0.5)), _init("hi", np.float32(0.5))], opset=18)
    m["pool_pad"] = _model(
        [_n("Pad", ["x", "pads", "cv"], ["p"], mode="constant"),
         _n("AveragePool", ["p"], ["a"], kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1,
            count_include_pad=1),
         _n("Pad", ["a", "pads"], ["ar"], mode="reflect"),
         _n("GlobalAveragePool", ["ar"], ["g"]), _n("GlobalMaxPool", ["a"], ["gm"]),
         _n("Add", ["g", "gm"], ["y"])],
        [("x", F, ["n", 2, 5, 5])], [("y", F, ["n", 2, 1, 1])],
        [_init("pads", _i64(0, 0, 1, 1, 0, 0, 1, 1)), _init("cv", np.float32(0.25))], opset=17)
    m["conv1d_same"] = _model(
        [_n("Conv", ["x", "w"], ["c"], auto_pad="SAME_LOWER", dilations=[1], group=2),
         _n("LeakyRelu", ["c"], ["l"], alpha=0.1),
         _n("MaxPool", ["l"], ["y"], kernel_shape=[2], pads=[1, 0])],
        [("x", F, ["n", 2, 7])], [("y", F, ["n", 4, 7])], [_init("w", _f32(4, 1, 3))], opset=11)
    m["gather_slice"] = _model(
        [_n("Gather", ["x", "idx"], ["g"], axis=1),
         _n("Slice", ["g", "st", "en", "ax", "sp"], ["s"]),
         _n("Squeeze", ["s", "sq"], ["q"]), _n("Unsqueeze", ["q", "sq"], ["u"]),
         _n("ConstantOfShape", ["shp"], ["ones"], value=numpy_helper.from_array(
             np.ones(1, np.float32))),
         _n("Expand", ["u", "shp"], ["e"]), _n("Add", ["e", "ones"], ["a"]),
         _n("Identity", ["a"], ["i"]), _n("Dropout", ["i"], ["d"]),
         _n("LogSoftmax", ["d"], ["y"], axis=-1)],
        [("x", F, ["n", 4, 3]), ("idx", I64, [2])], [("y", F, ["n", 2, 3])],
        [_init("st", _i64(0)), _init("en", _i64(1)), _init("ax", _i64(1)), _init("sp", _i64(1)),
         _init("shp", _i64(1, 2, 3)), _init("sq", _i64(1))], opset=13)
    m["qdq"] = _model(
        [_n("QuantizeLinear", ["x", "sx", "zx"], ["qx"]),
         _n("DequantizeLinear", ["qx", "sx", "zx"], ["dx"]),
         _n("DequantizeLinear", ["qw", "sw"], ["dw"], axis=1),
         _n("MatMul", ["dx", "dw"], ["y"])],
        [("x", F, ["n", 3])], [("y", F, ["n", 2])],
        [_init("sx", np.float32(0.05)), _init("zx", np.uint8(128)),
         _init("qw", np.array([[1, -2], [3, 4], [-5, 6]], np.int8)),
         _init("sw", np.array([0.1, 0.2], np.float32))], opset=13)
    m["logic"] = _model(
        [_n("Less", ["a", "b"], ["lt"]), _n("Equal", ["a", "b"], ["eq"]),
         _n("Or", ["lt", "eq"], ["le"]),
         _n("Not", ["le"], ["gt"]), _n("And", ["gt", "m"], ["k"]),
         _n("Max", ["a", "b", "c0"], ["mx"]), _n("Min", ["a", "b"], ["mn"]),
         _n("Where", ["k", "mx", "mn"], ["w"]), _n("Abs", ["w"], ["ab"]), _n("Neg", ["ab"], ["ng"]),
         _n("Floor", ["ng"], ["fl"]), _n("Ceil", ["fl"], ["ce"]), _n("Round", ["ce"], ["ro"]),
         _n("Sign", ["ro"], ["sn"]), _n("Reciprocal", ["b"], ["rc"]), _n("Erf", ["rc"], ["er"]),
         _n("Sin", ["er"], ["si"]), _n("Cos", ["si"], ["co"]), _n("Add", ["sn", "co"], ["y"]),
         _n("LessOrEqual", ["a", "b"], ["y2"]), _n("GreaterOrEqual", ["a", "b"], ["y3"])],
        [("a", F, ["n", 3]), ("b", F, ["n", 3]), ("m", BOOL, ["n", 3])],
        [("y", F, ["n", 3]), ("y2", BOOL, ["n", 3]), ("y3", BOOL, ["n", 3])],
        [_init("c0", np.float32(0.5))], opset=17)
    m["opset9"] = _model(
        [_n("Unsqueeze", ["x"], ["u"], axes=[1]), _n("Squeeze", ["u"], ["q"], axes=[1]),
         _n("Slice", ["q"], ["s"], starts=[1], ends=[3], axes=[1]),
         _n("Pad", ["s"], ["p"], pads=[0, 1, 0, 1], mode="edge"),
         _n("Clip", ["p"], ["c"], min=-1.0, max=1.0),
         _n("ReduceMean", ["c"], ["r"], axes=[1], keepdims=1), _n("Sub", ["c", "r"], ["d"]),
         _n("Softmax", ["d"], ["y"], axis=1)],
        [("x", F, ["n", 4])], [("y", F, ["n", 4])], opset=9)
    m["constants"] = _model(
        [_n("Constant", [], ["k"], value=numpy_helper.from_array(_f32(2, 3, seed=5))),
         _n("Constant", [], ["f"], value_float=2.0),
         _n("Constant", [], ["ints"], value_ints=[1, 2, 3]),
         _n("Mul", ["k", "f"], ["kf"]), _n("Add", ["x", "kf"], ["a"]),
         _n("Cast", ["ints"], ["fi"], to=F), _n("Mul", ["a", "fi"], ["y"]),
         _n("Concat", ["y", "k"], ["cat"], axis=0), _n("Transpose", ["cat"], ["t"])],
        [("x", F, ["n", 3])], [("t", F, [3, "m"])], opset=21)
    m["uint8_int_div"] = _model(
        [_n("Cast", ["x"], ["xi"], to=I64), _n("Div", ["xi", "d"], ["q"]),
         _n("Cast", ["q"], ["y"], to=F)],
        [("x", U8, ["n", 4])], [("y", F, ["n", 4])], [_init("d", _i64(3, -2, 5, 7))], opset=14)
    return m


def finding_models():
    """name -> ModelProto: the bugs the fuzzer found, each as a small model (the fuzzer's own
    reproducers depend on how the harness reads its bytes; these do not). Written as
    finding-<name> beside the seeds, so that every run of the fuzzer replays them."""
    m = {}
    x = [("x", F, ["n", 3])]
    y = [("y", F, ["n", "m"])]
    m["float-shape"] = _model([_n("Reshape", ["x", "s"], ["y"])], x, y,
                              [_init("s", np.array([np.nan, 3], np.float32))])
    # Static values (initializers) fold in NumPy, whose own error leaked out.
    m["expand-not-broadcastable"] = _model(
        [_n("Expand", ["k", "s"], ["e"]), _n("Add", ["x", "e"], ["y"])], x, y,
        [_init("k", _f32(2, 3)), _init("s", _i64(2, 2))])
    m["dequantize-scale-2d"] = _model(
        [_n("DequantizeLinear", ["k", "s"], ["d"]), _n("Add", ["x", "d"], ["y"])], x, y,
        [_init("k", np.ones((2, 3), np.uint8)), _init("s", np.ones((2, 1), np.float32))])
    # Constant nodes' 0-d arrays: NumPy folds two of them into a NumPy scalar.
    m["folded-numpy-scalar"] = _model(
        [_n("Constant", [], ["qa"], value=numpy_helper.from_array(np.array(3, np.uint8))),
         _n("Constant", [], ["qb"], value=numpy_helper.from_array(np.array(4, np.uint8))),
         _n("Add", ["qa", "qb"], ["q"]), _n("DequantizeLinear", ["q", "s"], ["d"]),
         _n("Mul", ["x", "d"], ["y"])], x, y, [_init("s", np.float32(0.5))])
    m["scalar-input"] = _model([_n("Add", ["x", "x"], ["y"])], [("x", F, [])], [("y", F, [])])
    branch = helper.make_graph([_n("Identity", ["w"], ["o"])], "b", [],
                               [helper.make_tensor_value_info("o", F, [2])],
                               [_init("w", np.ones(2, np.float32))])
    m["subgraph"] = _model([_n("If", ["c"], ["y"], then_branch=branch, else_branch=branch)],
                           [("c", BOOL, [])], [("y", F, [2])])
    m["checker-multiline"] = _model([_n("Relu", ["nowhere"], ["y"])], x, y)
    return m


def main():
    os.makedirs(CORPUS, exist_ok=True)
    for prefix, models in (("seed", seed_models()), ("finding", finding_models())):
        for name, model in models.items():
            with open(os.path.join(CORPUS, f"{prefix}-{name}"), "wb") as f:
                f.write(RAW + model.SerializeToString())


if __name__ == "__main__":
    main()
