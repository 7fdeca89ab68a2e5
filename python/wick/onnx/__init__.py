"""ONNX: wick models leave as ONNX files (export), and ONNX files run in wick (load).

wick.onnx.export(model, args, path) traces the model (wick.jit.trace), runs the inference passes
and writes the graph with ONNX's own protobuf definitions, from C++ (jit/onnx_export.h, the C++
twin). wick.onnx.load(path) reads an ONNX file with the onnx package and runs it in wick's
executor. docs/deployment.md has the design and the measurements.
"""
from ._export import export
from ._import import load

__all__ = ["export", "load"]
