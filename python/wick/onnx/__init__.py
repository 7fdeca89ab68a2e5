"""ONNX: wick models leave as ONNX files (export), and ONNX files run in wick (load).

wick.onnx.export(model, args, path) is a thin face over wick's one exporter, the C++ one
(jit/onnx_export.h, which C++ programs call as wick::jit::export_onnx): it traces the model
(wick.jit's tracer), runs the inference passes and writes the graph with the ONNX project's C++
protobuf classes, int8 models in QDQ form. Exporting needs no onnx package; a build of wick
without libonnx-dev cannot export, and export then raises RuntimeError (available() says which).
wick.onnx.load(path) reads an ONNX file with the onnx package (imported when load is first
called) and runs it in wick's executor. docs/deployment.md has the design and the measurements.
"""
from ._export import available, export

__all__ = ["ImportedModel", "available", "export", "load"]


def _importer():
    try:
        import onnx  # noqa: F401
    except ImportError:
        raise ImportError("wick.onnx.load reads ONNX files with the onnx package, which is not "
                          "installed (pip install onnx); wick.onnx.export does not need it") \
            from None
    from . import _import
    return _import


def load(f, compile=True):
    """wick.onnx.load(f, compile=True): an ONNX model (a path, bytes, a file object or an
    onnx.ModelProto) as an ImportedModel, callable on wick Tensors or NumPy arrays. Needs the
    onnx package; python/wick/onnx/_import.py has the rest (Note [ONNX import])."""
    return _importer().load(f, compile=compile)


def __getattr__(name):
    if name == "ImportedModel":
        return _importer().ImportedModel
    raise AttributeError(f"module 'wick.onnx' has no attribute '{name}'")
