"""wick.onnx.export_cpp: the C++ twin of wick.onnx.export (jit/onnx_export.h), for Python models.

Both trace the model the same way and run the same inference passes; the C++ exporter writes
the graph with the ONNX project's C++ protobuf classes (Debian's libonnx-dev) and translates views
through frames of strides (Note [views in ONNX] in jit/onnx_emit.cpp) where the Python one plans
Reshape/Transpose/Slice steps (Note [ONNX views]). The tests run both on the same models, so the two
stay interchangeable; a C++ program calls wick::jit::export_onnx directly.
"""

import os

import wick

from ._export import OPSET, _as_inputs, _module_path, _outputs


def available():
    """Whether this build of wick has the C++ exporter (libonnx-dev and libprotobuf-dev)."""
    return wick._C._onnx.available()


def export_cpp(model, args, f, *, input_names=None, output_names=None, opset_version=OPSET,
               dynamic_batch=True, do_constant_folding=True):
    """wick.onnx.export's signature and file, written by the C++ exporter. Returns the
    onnx.ModelProto it wrote when the onnx package is installed, else None."""
    if not available():
        raise RuntimeError("wick.onnx.export_cpp: this build of wick has no C++ ONNX exporter "
                           "(install libonnx-dev and libprotobuf-dev: scripts/setup.sh, then rebuild)")
    inputs = _as_inputs(args)
    folder = os.path.dirname(os.path.abspath(str(f)))
    if not os.path.isdir(folder):
        raise FileNotFoundError(f"wick.onnx.export_cpp: no such directory '{folder}' for '{f}'")
    params = [(n, t) for n, t in list(model.named_parameters()) + list(model.named_buffers())
              if t is not None]
    was_training = getattr(model, "training", False)
    model.eval()
    try:
        wick._C._onnx.export(lambda xs: _outputs(model(*xs)), inputs, params, str(f),
                             opset_version, dynamic_batch, do_constant_folding,
                             list(input_names or []), list(output_names or []),
                             lambda op: _module_path(model, inputs, op))
    finally:
        if was_training:
            model.train()
    try:
        import onnx
    except ImportError:
        return None
    return onnx.load(str(f))
