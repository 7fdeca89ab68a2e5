"""wick.onnx.export(model, args, f): the model's traced graph as an ONNX file.

A thin face over wick's one exporter, the C++ one (jit/onnx_export.h, Note [one ONNX exporter] in
jit/onnx_export.cpp): this file checks the arguments as PyTorch's torch.onnx.export does, puts the
model in eval mode, and hands its forward to wick._C._onnx, which traces it, runs the inference
passes and writes the file (Note [ONNX export], Note [views in ONNX], Note [dynamic batch in ONNX],
Note [QDQ export] in jit/onnx_*.cpp). What Python adds is the module path in an error: the C++
side asks _module_path which module's forward dispatches the op it refuses.
"""

import os

import wick

OPSET = 17


def available():
    """Whether this build of wick can export (it was built with libonnx-dev and libprotobuf-dev)."""
    return wick._C._onnx.available()


def _as_inputs(args):
    if isinstance(args, wick.Tensor):
        args = (args,)
    if not isinstance(args, (tuple, list)) or not args:
        raise TypeError("wick.onnx.export: args must be a Tensor or a non-empty tuple of Tensors; "
                        f"got {type(args).__name__}")
    for i, a in enumerate(args):
        if not isinstance(a, wick.Tensor):
            raise TypeError(f"wick.onnx.export: args[{i}] is {type(a).__name__}, not a Tensor")
    return list(args)


def _outputs(result):
    if isinstance(result, wick.Tensor):
        return [result]
    if isinstance(result, (tuple, list)) and all(isinstance(r, wick.Tensor) for r in result):
        return list(result)
    raise TypeError("wick.onnx.export: the model must return a Tensor or a tuple of Tensors; got "
                    f"{type(result).__name__}")


def _module_path(model, inputs, op):
    """The module(s) whose forward dispatches `op`: run eagerly once, counting dispatches per leaf
    module (only on the error path, so the trace itself stays cheap)."""
    found = []
    counters = {}

    def pre(name):
        def hook(module, args):
            counters[name] = wick.jit.DispatchCounter()
            counters[name].__enter__()
        return hook

    def post(name):
        def hook(module, args, output):
            counters[name].__exit__(None, None, None)
            if op in counters[name].by_op and name not in found:
                found.append(name)
        return hook
    handles = []
    for name, m in model.named_modules():
        if name and not list(m.children()):
            handles += [m.register_forward_pre_hook(pre(name)), m.register_forward_hook(post(name))]
    try:
        with wick.no_grad():
            model(*inputs)
    finally:
        for h in handles:
            h.remove()
    return ", ".join(found) if found else f"{type(model).__name__}.forward"


def export(model, args, f, *, input_names=None, output_names=None, opset_version=OPSET,
           dynamic_batch=True, do_constant_folding=True, verbose=False):
    """Writes `model` (called on `args`) to `f` (a path) as an ONNX model (PyTorch's
    torch.onnx.export, without dynamic_axes: the batch dimension is dynamic unless
    dynamic_batch=False). Returns the onnx.ModelProto it wrote when the onnx package is
    installed, else None: writing needs no package. Raises RuntimeError when this build of wick
    has no exporter (available() is False)."""
    inputs = _as_inputs(args)
    folder = os.path.dirname(os.path.abspath(str(f)))
    if not os.path.isdir(folder):
        raise FileNotFoundError(f"wick.onnx.export: no such directory '{folder}' for '{f}'")
    params = [(n, t) for n, t in list(model.named_parameters()) + list(model.named_buffers())
              if t is not None]
    was_training = getattr(model, "training", False)
    if hasattr(model, "eval"):
        model.eval()
    try:
        wick._C._onnx.export(lambda xs: _outputs(model(*xs)), inputs, params, str(f),
                             opset_version, dynamic_batch, do_constant_folding,
                             list(input_names or []), list(output_names or []),
                             f"wick_{type(model).__name__}",
                             lambda op: _module_path(model, inputs, op))
    finally:
        if was_training and hasattr(model, "train"):
            model.train()
    try:
        import onnx
    except ImportError:
        if verbose:
            print(f"wick.onnx.export: wrote {f} (install the onnx package to print its graph)")
        return None
    proto = onnx.load(str(f))
    if verbose:
        print(onnx.helper.printable_graph(proto.graph))
    return proto
