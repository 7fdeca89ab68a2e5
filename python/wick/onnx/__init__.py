"""ONNX: wick models leave as ONNX files (export), and ONNX files run in wick (load).

wick.onnx.export(model, args, path) traces the model (wick.jit.trace), runs the inference passes
and writes the graph with the onnx package's protobuf definitions (onnx.helper). wick.onnx.load(path)
reads an ONNX file with the onnx package and runs it in wick's executor. wick.onnx.export_cpp writes
the same file with the C++ twin (wick::jit::export_onnx), where the build has it. docs/deployment.md has the
design and the measurements.
"""
from ._export import export
from ._export_cpp import export_cpp
from ._import import ImportedModel, load

__all__ = ["ImportedModel", "export", "export_cpp", "load"]
