"""wick.onnx.load: an ONNX file runs in wick's executor.

Note [ONNX import]
The file is parsed by the onnx package (its protobuf classes) and checked by onnx.checker, so a
corrupt or malformed file is a ValueError naming the file before wick looks at it. Tensors kept
in external data are read from the .onnx file's folder, so they need a path; bytes, a file object
or a ModelProto that still refers to external data are refused (NotImplementedError). Then
everything wick cannot run is refused at load time, not halfway through a call: an operator
outside OPS (NotImplementedError listing the supported ones), an opset outside
OPSET_RANGE, an attribute value a translation does not handle (ValueError naming the node and
attribute), an input or output dtype wick lacks.

The model is an interpreter over the graph's nodes, in the topological order ONNX requires: each
node's translation (_onnx_ops.py) calls wick ops on the values its inputs name. That interpreter
is not what runs on every call. It is traced by wick.compile (python/wick/jit): the first call
per input signature runs it once under the dispatcher's observer, the jit passes optimise the
kernels it dispatched (conv + batch-norm folding, elementwise fusion, a memory plan), and every
later call replays the graph in C++ without Python between kernels. A new batch size traces
again (counted in `retraces`). Shapes are frozen per trace, which is what makes ONNX's shape
arithmetic (Shape -> Gather -> Concat -> Reshape) sound here: it is computed in NumPy at trace
time (Note [static and dynamic values] in _onnx_ops.py) and the trace is guarded by the input
shapes. load(f, compile=False) runs the interpreter eagerly on every call instead.
"""

import os

import numpy as np
import onnx
from onnx import helper, numpy_helper

import wick

from . import _onnx_layers as layers
from . import _onnx_ops as ops

OPSET_RANGE = (9, 22)  # versions of the default domain (ai.onnx) whose semantics ops follow
_DEFAULT_DOMAINS = ("", "ai.onnx")
OPS = {**ops.OPS, **layers.OPS}  # ONNX op_type -> fn(node, inputs) -> outputs
CHECKS = {**ops.CHECKS, **layers.CHECKS}  # ONNX op_type -> load-time check of its attributes


class Node:
    """One ONNX node as the translations see it: attributes decoded to Python values."""

    __slots__ = ("op", "name", "inputs", "outputs", "attrs", "opset")

    def __init__(self, op, name, inputs, outputs, attrs, opset):
        self.op, self.name, self.inputs, self.outputs = op, name, inputs, outputs
        self.attrs, self.opset = attrs, opset


def _reason(e):
    """Another library's exception as one line for a wick.onnx message: onnx.checker quotes the
    offending node over several lines, and an error must read as one (docs/bad_input.md)."""
    return " ".join(str(e).split()) or f"{type(e).__name__} (no reason given)"


def _array(tensor, what):
    try:
        return numpy_helper.to_array(tensor)
    except Exception as e:  # a tensor whose data does not match its dims or type
        raise ValueError(f"wick.onnx.load: {what} holds invalid tensor data: {_reason(e)}") from e


def _attributes(proto, name):
    attrs = {}
    for a in proto.attribute:
        if a.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS):
            raise NotImplementedError(f"wick.onnx.load: node '{name}' ({proto.op_type}) has a "
                                      f"subgraph attribute '{a.name}'; control flow is not "
                                      "supported")
        value = helper.get_attribute_value(a)
        if isinstance(value, bytes):
            value = value.decode("utf-8", "replace")
        elif isinstance(value, onnx.TensorProto):
            value = _array(value, f"attribute '{a.name}' of node '{name}'")
        elif isinstance(value, list) and value and isinstance(value[0], bytes):
            value = [v.decode("utf-8", "replace") for v in value]
        attrs[a.name] = value
    if proto.op_type == "Constant":  # the one value a Constant holds, as a NumPy array
        for key, dtype in (("value", None), ("value_float", np.float32),
                           ("value_floats", np.float32), ("value_int", np.int64),
                           ("value_ints", np.int64)):
            if key in attrs:
                value = attrs[key]
                attrs["__value__"] = value if dtype is None else np.array(value, dtype=dtype)
    return attrs


def _parse(f):
    """The ModelProto in f (a path, bytes, a file object or a ModelProto), a label for it, and
    its path (None when f is not one)."""
    path = None
    if isinstance(f, onnx.ModelProto):
        model, label = f, "the ModelProto"
    else:
        if isinstance(f, (bytes, bytearray, memoryview)):
            data, label = bytes(f), f"the {len(f)} bytes given"
        elif isinstance(f, (str, os.PathLike)):
            path = os.fspath(f)
            with open(path, "rb") as file:  # FileNotFoundError as Python raises it
                data, label = file.read(), f"'{path}'"
        elif hasattr(f, "read"):
            data, label = f.read(), "the file object"
        else:
            raise TypeError("wick.onnx.load: expected a path, bytes, a file object or an "
                            f"onnx.ModelProto; got {type(f).__name__}")
        try:
            model = onnx.load_from_string(data)
        except Exception as e:  # protobuf's DecodeError and whatever a truncated message raises
            raise ValueError(f"wick.onnx.load: {label} is not an ONNX model; protobuf could not "
                             f"decode it ({type(e).__name__}: {_reason(e)})") from e
    external = _external_files(model.graph) if path is None else None
    if external:  # locations are relative to the .onnx file's folder, which only a path gives
        raise NotImplementedError(f"wick.onnx.load: {label} keeps tensors in external data "
                                  f"({', '.join(external)}); external data needs a path: pass "
                                  "the .onnx file's path")
    return model, label, path


def _external_files(graph):
    """The locations of the tensors in graph (and its subgraphs) stored outside the model."""
    files = set()
    tensors = list(graph.initializer)
    for node in graph.node:
        for a in node.attribute:
            tensors += ([a.t] if a.HasField("t") else []) + list(a.tensors)
            for g in ([a.g] if a.HasField("g") else []) + list(a.graphs):
                files.update(_external_files(g))  # it returns a sorted list
    for t in tensors:
        if t.data_location == onnx.TensorProto.EXTERNAL:
            files.add(next((e.value for e in t.external_data if e.key == "location"), "?"))
    return sorted(files)


def _check(model, label, path):
    """onnx.checker on the model, then its external data read from the file's folder."""
    try:  # given the path, the checker also checks the external data files' locations
        onnx.checker.check_model(model if path is None else path)
    except Exception as e:
        raise ValueError(f"wick.onnx.load: {label} is not a valid ONNX model: {_reason(e)}") \
            from e
    if path is not None and _external_files(model.graph):
        try:  # what onnx.load(path) does, on the bytes already read and decoded
            onnx.load_external_data_for_model(model, os.path.dirname(os.path.abspath(path)))
        except Exception as e:
            raise ValueError(f"wick.onnx.load: {label}: its external data could not be read "
                             f"({type(e).__name__}: {_reason(e)})") from e


def _opset(model, label):
    versions = [o.version for o in model.opset_import if o.domain in _DEFAULT_DOMAINS]
    if not versions:
        raise ValueError(f"wick.onnx.load: {label} imports no version of the default ONNX "
                         "domain (ai.onnx)")
    version = versions[0]
    if not OPSET_RANGE[0] <= version <= OPSET_RANGE[1]:
        raise NotImplementedError(f"wick.onnx.load: {label} uses opset {version}; wick supports "
                                  f"opsets {OPSET_RANGE[0]} to {OPSET_RANGE[1]}")
    return version


def _value_info(info, label, what):
    kind = info.type.WhichOneof("value")
    if kind != "tensor_type":
        raise NotImplementedError(f"wick.onnx.load: {label}: {what} '{info.name}' is a {kind}, "
                                  "not a tensor")
    elem = info.type.tensor_type.elem_type
    if elem not in ops.WICK_DTYPES:
        name = onnx.TensorProto.DataType.Name(elem) if elem in onnx.TensorProto.DataType.values() \
            else elem
        raise NotImplementedError(f"wick.onnx.load: {label}: {what} '{info.name}' has element "
                                  f"type {name}, which wick has no dtype for")
    dims = None
    if info.type.tensor_type.HasField("shape"):
        dims = [d.dim_value if d.HasField("dim_value") else (d.dim_param or None)
                for d in info.type.tensor_type.shape.dim]
    return info.name, elem, dims


def load(f, compile=True):
    """wick.onnx.load(f, compile=True): an ONNX model (a path, bytes, a file object or an
    onnx.ModelProto) as an ImportedModel, callable on wick Tensors or NumPy arrays.

    Raises ValueError for a file that is not a valid ONNX model, NotImplementedError for an
    operator, opset or dtype wick does not run, or for external data given without a path.
    compile=False runs the graph eagerly, op by op, instead of tracing it into wick's executor
    (Note [ONNX import])."""
    model, label, path = _parse(f)
    _check(model, label, path)
    opset = _opset(model, label)
    graph = model.graph
    if graph.sparse_initializer:
        raise NotImplementedError(f"wick.onnx.load: {label} has sparse initializers")
    initializers = {t.name: _array(t, f"initializer '{t.name}'").view(ops.Initializer)
                    for t in graph.initializer}
    inputs = [_value_info(i, label, "input") for i in graph.input if i.name not in initializers]
    outputs = [_value_info(o, label, "output") for o in graph.output]
    nodes = []
    for index, proto in enumerate(graph.node):
        name = proto.name or f"{proto.op_type}_{index}"
        if proto.domain not in _DEFAULT_DOMAINS or proto.op_type not in OPS:
            op = proto.op_type if proto.domain in _DEFAULT_DOMAINS else \
                f"{proto.domain}::{proto.op_type}"
            raise NotImplementedError(f"wick.onnx.load: op '{op}' (node '{name}') is not "
                                      f"supported; supported: {', '.join(sorted(OPS))}")
        node = Node(proto.op_type, name, list(proto.input), list(proto.output),
                    _attributes(proto, name), opset)
        if node.op in CHECKS:
            CHECKS[node.op](node)
        nodes.append(node)
    return ImportedModel(nodes, initializers, inputs, outputs, compile, label)


def _error_kind(e):
    """The type a node's failure is raised as: the kinds callers tell apart keep their type (an
    index out of range is IndexError, as in PyTorch); any other failure is a bad value."""
    if isinstance(e, (wick.OutOfMemoryError, MemoryError)):  # NumPy's MemoryError too: one type
        return wick.OutOfMemoryError
    return next((k for k in (TypeError, NotImplementedError, IndexError) if isinstance(e, k)),
                ValueError)


class ImportedModel:
    """An ONNX graph that runs on wick: model(*inputs) returns a Tensor, or a tuple for a graph
    with several outputs. Inputs are wick Tensors or NumPy arrays, in the graph's input order.

    ``graph`` is the wick graph the latest call replayed (print it), ``retraces`` counts the
    traces a new input signature caused, ``log`` says what the passes did; all are None under
    compile=False (``graph`` also before the first call)."""

    def __init__(self, nodes, initializers, inputs, outputs, compile, label):
        self.nodes = nodes
        self.input_names = [name for name, _, _ in inputs]
        self.output_names = [name for name, _, _ in outputs]
        self._inputs = inputs
        self._label = label
        for a in initializers.values():
            a.tensor = ops.to_wick(np.asarray(a)) if a.dtype.kind == "f" else None
        self._interpreter = _Interpreter(nodes, initializers, self.input_names, outputs)
        # The initializers are captured as constants, not parameters; freeze=True turns on the
        # inference passes that need constants (conv + batch-norm folding). What is compiled is
        # the interpreter, which does not refer back to this model: the compiled function is held
        # by wick's C++ executor, where Python's garbage collector cannot see a cycle, so a cycle
        # through it (self._compiled -> self._run -> self) would keep every loaded model alive.
        self._compiled = wick.compile(self._interpreter, freeze=True) if compile else None

    def __repr__(self):
        mode = "compiled" if self._compiled is not None else "eager"
        return (f"ImportedModel({self._label}, {len(self.nodes)} nodes, inputs="
                f"{self.input_names}, outputs={self.output_names}, {mode})")

    @property
    def graph(self):
        return None if self._compiled is None or not self._compiled.traces else \
            self._compiled.graph

    @property
    def retraces(self):
        return None if self._compiled is None else self._compiled.retraces

    @property
    def log(self):
        """What each trace's jit passes did (wick.compile's log); None under compile=False."""
        return None if self._compiled is None else self._compiled.log

    def __call__(self, *args):
        """Raises wick.OutOfMemoryError (a RuntimeError) when memory runs out, whether in a node,
        in NumPy's constant folding or in the compiled graph's replay and memory plan."""
        tensors = self._check_inputs(args)
        with wick.no_grad():
            if self._compiled is None:
                return self._interpreter(*tensors)
            try:
                return self._compiled(*tensors)
            except (wick.OutOfMemoryError, MemoryError) as e:
                if str(e).startswith("wick.onnx"):  # a node's, raised while tracing
                    raise
                # The replay and its memory plan run outside the interpreter's node loop.
                shapes = [list(t.shape) for t in tensors]
                raise wick.OutOfMemoryError(
                    f"wick.onnx: {self._label} ran out of memory running its compiled graph on "
                    f"inputs {shapes}: {type(e).__name__}: {_reason(e)}") from e

    def _check_inputs(self, args):
        if len(args) != len(self._inputs):
            raise TypeError(f"wick.onnx: the model takes {len(self._inputs)} input(s) "
                            f"{self.input_names}; got {len(args)}")
        tensors, symbols = [], {}
        for arg, (name, elem, dims) in zip(args, self._inputs):
            if isinstance(arg, np.ndarray):
                try:
                    # np.require keeps a 0-d array 0-d (np.ascontiguousarray makes it 1-D).
                    arg = wick.from_numpy(np.require(arg, requirements="C"))
                except TypeError as e:
                    raise TypeError(f"wick.onnx: input '{name}': {_reason(e)}") from e
            if not isinstance(arg, wick.Tensor):
                raise TypeError(f"wick.onnx: input '{name}' must be a wick Tensor or a NumPy "
                                f"array; got {type(arg).__name__}")
            if arg.dtype != ops.WICK_DTYPES[elem]:
                raise TypeError(f"wick.onnx: input '{name}' must be {ops.WICK_DTYPES[elem]}; got "
                                f"{arg.dtype}")
            shape = list(arg.shape)
            if dims is not None:
                ok = len(shape) == len(dims) and all(
                    d is None or (d == s if isinstance(d, int) else symbols.setdefault(d, s) == s)
                    for d, s in zip(dims, shape))
                if not ok:
                    expected = "[" + ", ".join("?" if d is None else str(d) for d in dims) + "]"
                    raise ValueError(f"wick.onnx: input '{name}' has shape {shape}; the model "
                                     f"expects {expected}")
            tensors.append(arg)
        return tensors


class _Interpreter:
    """The graph's nodes run one by one, each by its translation (what wick.compile traces)."""

    def __init__(self, nodes, initializers, input_names, outputs):
        self.nodes, self.initializers = nodes, initializers
        self.input_names, self.outputs = input_names, outputs

    def __call__(self, *tensors):
        env = dict(self.initializers)
        env.update(zip(self.input_names, tensors))
        for node in self.nodes:
            ins = [_value(env, name, node) for name in node.inputs]
            try:
                outs = OPS[node.op](node, ins)
            except Exception as e:
                if str(e).startswith("wick.onnx"):
                    raise
                shapes = [list(v.shape) if v is not None else None for v in ins]
                raise _error_kind(e)(f"wick.onnx: node '{node.name}' ({node.op}) failed on "
                                     f"inputs {shapes}: {type(e).__name__}: {_reason(e)}") from e
            env.update((name, ops.static_array(v)) for name, v in zip(node.outputs, outs) if name)
        results = []
        for name, elem, _ in self.outputs:
            if name not in env:
                raise ValueError(f"wick.onnx: no node computes the graph output '{name}'")
            v = ops.to_wick(env[name])
            if v.dtype != ops.WICK_DTYPES[elem]:  # a quantized value held in float
                v = v.to(ops.WICK_DTYPES[elem])
            results.append(v)
        return results[0] if len(results) == 1 else tuple(results)


def _value(env, name, node):
    if not name:
        return None
    if name not in env:
        raise ValueError(f"wick.onnx: node '{node.name}' ({node.op}) reads '{name}', which "
                         "no earlier node or initializer defines")
    return env[name]


__all__ = ["load", "ImportedModel"]
