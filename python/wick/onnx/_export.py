"""wick.onnx.export(model, args, f): the model's traced graph as an ONNX file.

Note [ONNX export]
The exporter does not look at the model's Python code: it traces the model (wick.jit's tracer
records every kernel the forward dispatches), runs the inference passes - functionalization, dead
code, and with do_constant_folding freezing the parameters, constant folding and conv + batch-norm
folding, the same passes wick.compile runs - and writes what is left, node by node, with the onnx
package's own protobuf classes (onnx.helper). Each kernel node becomes the ONNX operator named in
the op table's export column (core/ops/op_list.h; _export_ops.py maps the attributes); each view
node becomes Reshape/Transpose/Expand (Note [ONNX views]); constants and parameters become
initializers, parameters under their state_dict names.

A trace fixes every shape, but a deployed model takes any batch size. So the model is traced
twice, at the example's batch N and at N + 1: the two graphs must have the same nodes (a model
whose graph depends on the batch size cannot be exported), and a reshape target whose size
differs between them is the batch dimension and is written as -1. The inputs' and outputs' first
dimension is named "batch". torch.onnx.export records shape arithmetic symbolically instead; two
traces are simpler and enough for models whose only varying size is the batch.
"""

import os

import numpy as np
import onnx
from onnx import helper, numpy_helper

import wick

from . import _export_ops as ops
from . import _export_qdq as qdq

OPSET = 17


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


def _trace(model, inputs, fold):
    jit = wick.jit._jit
    params = [(n, t) for n, t in list(model.named_parameters()) + list(model.named_buffers())
              if t is not None]
    with wick.no_grad():
        graph = jit.trace(lambda xs: _outputs(model(*xs)), inputs, params)
    jit.optimize(graph, params, {"freeze": fold, "constant_folding": fold, "fold_conv_bn": fold,
                                 "fuse": False, "plan_memory": False})
    return graph, dict(params)


def _outputs(result):
    if isinstance(result, wick.Tensor):
        return [result]
    if isinstance(result, (tuple, list)) and all(isinstance(r, wick.Tensor) for r in result):
        return list(result)
    raise TypeError("wick.onnx.export: the model must return a Tensor or a tuple of Tensors; got "
                    f"{type(result).__name__}")


def _grow_batch(x):
    """x with one more row: the second trace's input."""
    if x.dim() == 0:
        raise ValueError("wick.onnx.export: dynamic_batch needs inputs with a batch dimension; "
                         "got a 0-d tensor (pass dynamic_batch=False)")
    return wick.cat([x, x[:1]], 0)


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


class _Writer:
    """Turns one optimised graph (and its twin at batch N + 1) into ONNX nodes and initializers."""

    def __init__(self, graph, twin, params, fold):
        self.values, self.nodes = graph.values, graph.node_info
        self.twin_values = twin.values if twin is not None else None
        self.twin_nodes = twin.node_info if twin is not None else None
        self.param_names = {}
        if not fold:
            self.param_names = {id(t): n for n, t in params.items()}
        self.params = params
        self.onnx_nodes, self.initializers, self.names = [], [], {}
        # Note [assembled storages]: a buffer that no node writes whole (F.pad's output: zeros
        # copied into two channel ranges and the input into the middle) has no ONNX value until
        # it is read whole; its pieces are remembered and read back as one Concat.
        self.assembled = {v["id"] for v in self.values
                          if v["kind"] == "internal" and v["base"] == v["id"]
                          and int(np.prod(v["shape"], dtype=np.int64)) < v["storage_numel"]}
        self.pieces = {}
        self.batch = None  # the ONNX name of the input's batch size, once needed

    def name(self, vid):
        if vid < 0:
            return ""
        if vid not in self.names:
            v = self.values[vid]
            if v["kind"] == "param":
                self.names[vid] = v["name"]
                self.initializers.append(numpy_helper.from_array(
                    self.param_tensor(v["name"]), v["name"]))
            elif v["kind"] == "constant":
                self.names[vid] = self.graph_constant(vid, v)
            elif v["base"] in self.assembled:
                return self.read_assembled(vid)
            else:
                self.names[vid] = f"v{vid}"
        return self.names[vid]

    def graph_constant(self, vid, v):
        array = v["constant"].detach().contiguous().numpy()
        there = self.twin_values[vid]["shape"] if self.twin_values is not None else v["shape"]
        if there == v["shape"]:
            return self.constant(array, f"const_{vid}")
        # A constant that follows the batch size (a folded fill): one value broadcast to
        # [batch, rest...], the batch read from the input's shape at run time.
        if array.size == 0 or not np.all(array == array.flat[0]) or there[1:] != v["shape"][1:]:
            raise ValueError(f"wick.onnx.export: constant %{vid} {v['shape']} changes with the "
                             "batch size and is not one repeated value: export with "
                             "dynamic_batch=False")
        return self.batch_sized(vid, np.array(array.flat[0], array.dtype), v["shape"])

    def batch_sized(self, vid, scalar, shape):
        """`scalar` broadcast to [batch, shape[1:]...], the batch read from the input at run time."""
        if self.batch is None:
            self.batch = "input_batch_size"
            self.emit("Shape", [self.names[self.input_ids[0]]], [self.batch], start=0, end=1)
        target = f"v{vid}_shape"
        self.emit("Concat", [self.batch, self.constant(np.array(shape[1:], np.int64))], [target],
                  axis=0)
        out = f"v{vid}_expanded"
        self.emit("Expand", [self.constant(scalar), target], [out])
        return out

    def read_assembled(self, vid):
        """An assembled storage read: one piece as written, or the whole buffer (a Concat)."""
        v = self.values[vid]
        pieces = self.pieces.get(v["base"], [])
        for offset, shape, name in reversed(pieces):
            if offset == v["offset"] and shape == v["shape"]:
                return name
        full = v["shape"]
        if v["offset"] != 0 or int(np.prod(full, dtype=np.int64)) != v["storage_numel"] or \
                not ops.is_contiguous(full, v["strides"]):
            raise ValueError(f"wick.onnx.export: %{vid} reads part of a buffer written piece by "
                             "piece (Note [assembled storages]); only whole reads are exported")
        strides = ops.contiguous_strides(full)
        parts = []
        for offset, shape, name in pieces:
            axes = [d for d in range(len(full)) if shape[d] != full[d]]
            axis = axes[0] if len(axes) == 1 else None
            if axis is None or offset % strides[axis] or \
                    (axis > 0 and offset >= strides[axis - 1]):
                raise ValueError(f"wick.onnx.export: buffer %{v['base']} is written in pieces "
                                 "that are not ranges of one dimension")
            parts.append((axis, offset // strides[axis], shape[axis], name))
        parts.sort()
        axis = parts[0][0]
        covered = 0
        for a, start, size, _ in parts:
            if a != axis or start != covered:
                raise ValueError(f"wick.onnx.export: buffer %{v['base']} is not written whole "
                                 "by its pieces")
            covered += size
        if covered != full[axis]:
            raise ValueError(f"wick.onnx.export: buffer %{v['base']} is not written whole")
        out = f"v{vid}"
        self.emit("Concat", [p[3] for p in parts], [out], axis=axis)
        self.names[vid] = out
        return out

    def param_tensor(self, name):
        return self.params[name].detach().contiguous().numpy()

    def array(self, vid):
        """The values of a weight (a parameter or a folded constant), for exports that rewrite
        them (Note [QDQ export])."""
        v = self.values[vid]
        if v["kind"] == "param":
            return self.param_tensor(v["name"])
        if v["kind"] == "constant":
            return v["constant"].detach().contiguous().numpy()
        raise ValueError(f"wick.onnx.export: %{vid} is computed inside the graph; a quantized "
                         "layer's weight_scale and bias must be fixed tensors")

    def constant(self, array, name=None):
        name = name or f"const_{len(self.initializers)}_{len(self.onnx_nodes)}"
        self.initializers.append(numpy_helper.from_array(np.ascontiguousarray(array), name))
        return name

    def emit(self, op_type, inputs, outputs, **attrs):
        self.onnx_nodes.append(ops.make_node(op_type, inputs, outputs,
                                             f"{op_type}_{len(self.onnx_nodes)}", **attrs))

    def shape_target(self, k, step_index, here, there):
        """A reshape target with the batch-dependent dimension (if any) written as -1."""
        if there is None or here == there:
            return here
        differ = [d for d, (a, b) in enumerate(zip(here, there)) if a != b]
        if len(here) != len(there) or len(differ) > 1:
            raise ValueError(f"wick.onnx.export: node {k} (a view) reshapes to {here} at one batch "
                             f"size and {there} at the next: more than one dimension follows the "
                             "batch, which a dynamic-batch export cannot say")
        out = list(here)
        out[differ[0]] = -1
        return out

    def view(self, k, node):
        src = self.values[node["params"][0]]
        if src["base"] in self.assembled:
            return  # a region of an assembled storage: named when read (read_assembled)
        out = self.name(node["outputs"][0])
        try:
            steps = ops.view_plan(src, node["view_shape"], node["view_strides"],
                                  node["view_offset"])
            twin_steps = None
            if self.twin_nodes is not None:
                t = self.twin_nodes[k]
                twin_steps = ops.view_plan(self.twin_values[t["params"][0]], t["view_shape"],
                                           t["view_strides"], t["view_offset"])
        except ValueError as e:
            raise ValueError(f"wick.onnx.export: view node {k} (value %{node['outputs'][0]}) has "
                             f"no ONNX form: {e}") from None
        current = self.name(node["params"][0])
        if not steps:
            self.emit("Identity", [current], [out])
            return
        for i, (kind, target) in enumerate(steps):
            dest = out if i == len(steps) - 1 else f"{out}_step{i}"
            if kind == "transpose":
                self.emit("Transpose", [current], [dest], perm=target)
            elif kind == "slice":
                self.emit("Slice", [current] + [self.constant(np.array(a, np.int64))
                                                for a in target], [dest])
            else:
                there = twin_steps[i][1] if twin_steps is not None and len(twin_steps) > i else None
                if kind == "expand" and there is not None and there != target:
                    raise ValueError(f"wick.onnx.export: view node {k} broadcasts to a shape that "
                                     "depends on the batch size")
                shape = self.shape_target(k, i, target, there) if kind == "reshape" else target
                self.emit("Reshape" if kind == "reshape" else "Expand",
                          [current, self.constant(np.array(shape, np.int64))], [dest])
            current = dest

    def kernel(self, k, node):
        op, attrs = node["op"], node["attrs"]
        out = self.values[node["outputs"][0]] if node["outputs"] else None
        if op == "copy" and out is not None and out["base"] in self.assembled:
            source = self.name(node["params"][0])
            self.pieces.setdefault(out["base"], []).append((out["offset"], out["shape"], source))
            self.names[out["id"]] = source
            return
        ins = [self.name(p) for p, role in zip(node["params"], node["roles"]) if role == "read"]
        if "update" in node["roles"]:
            raise ops.Unsupported(f"op '{op}' writes a tensor in place (not functional)")
        outs = [self.name(o) for o in node["outputs"]]
        if op == "copy":
            dtype = self.values[node["outputs"][0]]["dtype"]
            same = self.values[node["params"][0]]["dtype"] == dtype
            self.emit("Identity" if same else "Cast", ins[:1], outs,
                      **({} if same else {"to": ops.DTYPES[dtype]}))
        elif op in qdq.OPS:
            qdq.translate(self, op, attrs, node, ins, outs)
        elif op == "fill":
            value = np.array(attrs["value"], _np_dtype(out["dtype"]))
            there = self.twin_values[out["id"]]["shape"] if self.twin_values else out["shape"]
            if there == out["shape"]:
                self.emit("Identity", [self.constant(np.full(out["shape"], value))], outs)
            else:
                self.emit("Identity", [self.batch_sized(out["id"], value, out["shape"])], outs)
        else:
            if op in ("sum", "amax", "amin"):  # the kernel reads keepdim off its output's rank
                rank = len(self.values[node["params"][0]]["shape"])
                attrs = dict(attrs, keepdim=len(out["shape"]) == rank and rank > 0)
            ops.translate(op, attrs, ins, outs, self.emit, self.constant, out["shape"])

    def write(self):
        for k, node in enumerate(self.nodes):
            if node["kind"] == "view":
                self.view(k, node)
            elif node["kind"] == "kernel":
                self.kernel(k, node)
            else:
                raise ops.Unsupported(f"fused node '{node['name']}'")


def _np_dtype(name):
    return {"bfloat16": np.float32}.get(name, np.dtype(name))


def _io_names(graph, inputs, input_names, output_names):
    n_in, n_out = len(graph.inputs), len(graph.outputs)
    in_names = list(input_names or (["input"] if n_in == 1 else [f"input{i}" for i in range(n_in)]))
    out_names = list(output_names or (["output"] if n_out == 1 else
                                      [f"output{i}" for i in range(n_out)]))
    if len(in_names) != n_in or len(out_names) != n_out:
        raise ValueError(f"wick.onnx.export: {len(in_names)} input_names for {n_in} inputs, "
                         f"{len(out_names)} output_names for {n_out} outputs")
    return in_names, out_names


def _value_info(v, name, dynamic):
    dims = list(v["shape"])
    if dynamic and dims:
        dims[0] = "batch"
    return helper.make_tensor_value_info(name, ops.DTYPES[v["dtype"]], dims)


def export(model, args, f, *, input_names=None, output_names=None, opset_version=OPSET,
           dynamic_batch=True, do_constant_folding=True, verbose=False):
    """Writes `model` (called on `args`) to `f` (a path) as an ONNX model (PyTorch's
    torch.onnx.export, without dynamic_axes: the batch dimension is dynamic unless
    dynamic_batch=False). Returns the onnx.ModelProto it wrote."""
    inputs = _as_inputs(args)
    if opset_version < OPSET:
        raise ValueError(f"wick.onnx.export: opset_version must be >= {OPSET}; got {opset_version}")
    folder = os.path.dirname(os.path.abspath(str(f)))
    if not os.path.isdir(folder):
        raise FileNotFoundError(f"wick.onnx.export: no such directory '{folder}' for '{f}'")
    was_training = getattr(model, "training", False)
    if hasattr(model, "eval"):
        model.eval()
    try:
        if dynamic_batch and any(x.dim() > 0 and x.shape[0] == 1 for x in inputs):
            # A batch of one hides the batch axis (size-1 dimensions take any stride): trace at 2.
            inputs = [_grow_batch(x) for x in inputs]
        graph, params = _trace(model, inputs, do_constant_folding)
        twin = None
        if dynamic_batch:
            twin, _ = _trace(model, [_grow_batch(x) for x in inputs], do_constant_folding)
            if [n["op"] for n in twin.node_info] != [n["op"] for n in graph.node_info]:
                raise ValueError("wick.onnx.export: the model's graph depends on the batch size "
                                 "(its traces at two batch sizes differ); pass dynamic_batch=False")
        writer = _Writer(graph, twin, params, do_constant_folding)
        in_names, out_names = _io_names(graph, inputs, input_names, output_names)
        writer.names.update(zip(graph.inputs, in_names))
        writer.input_ids = list(graph.inputs)
        for vid, name in zip(graph.outputs, out_names):  # an output computed here is named so
            if graph.values[vid]["kind"] == "internal" and vid not in writer.names:
                writer.names[vid] = name
        try:
            writer.write()
        except ops.Unsupported as e:
            op = str(e).split("'")[1] if "'" in str(e) else ""
            where = _module_path(model, inputs, op) if op else "?"
            raise RuntimeError(f"wick.onnx.export: {e} (in module '{where}')") from None
    finally:
        if was_training and hasattr(model, "train"):
            model.train()
    out_ids = graph.outputs
    for vid, name in zip(out_ids, out_names):  # an input or a constant returned as it is
        if writer.name(vid) != name:
            writer.emit("Identity", [writer.name(vid)], [name])
    values = graph.values
    proto = helper.make_graph(
        writer.onnx_nodes, f"wick_{type(model).__name__}",
        [_value_info(values[v], n, dynamic_batch) for v, n in zip(graph.inputs, in_names)],
        [_value_info(values[v], n, dynamic_batch) for v, n in zip(out_ids, out_names)],
        initializer=writer.initializers)
    model_proto = helper.make_model(proto, opset_imports=[helper.make_opsetid("", opset_version)],
                                    producer_name="wick", producer_version=wick.__version__)
    model_proto.ir_version = 8  # ONNX Runtime and onnx 1.12+ read IR 8 (opset 17's)
    onnx.checker.check_model(model_proto)
    onnx.save(model_proto, str(f))
    if verbose:
        print(helper.printable_graph(model_proto.graph))
    return model_proto
