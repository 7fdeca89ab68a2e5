"""Static graphs: capture a model as a graph of op-table ops, optimise it, replay it.

wick.jit.trace(model, example_inputs) records every kernel the model dispatches while it runs
once (torch.jit.trace's approach); wick.compile(model) traces on the first call, runs the passes
and replays the graph from C++ on every later call, tracing again for a new shape or dtype
(counted in ``retraces``, torch.compile's recompiles). docs/static_graphs.md has the design.

What a trace cannot see is frozen at the traced values: Python control flow, numbers read with
``.item()``, shapes computed in Python. ``trace`` warns (TracerWarning) when the traced run read
a tensor's value into Python; ``compile`` guards against it instead: such a call runs eagerly (a
graph break, listed in ``graph_breaks``) or, with ``fullgraph=True``, raises. Compiled graphs are
also guarded by grad mode, autocast, every module's training flag and the identity of every
parameter and buffer (Note [guards and retracing] in jit/compile.h).
"""
import warnings

from wick import _C
from wick.nn.modules import module as _module_tree

_jit = _C._jit

Graph = _jit.Graph
DispatchCounter = _jit.DispatchCounter

_OPTIONS = ("dead_code", "common_subexpressions", "constant_folding", "freeze", "fold_conv_bn",
            "fuse", "conv_epilogue", "plan_memory", "prepack_weights", "winograd",
            "cuda_graph")


class TracerWarning(Warning):
    """A trace that may not generalise: it read a tensor's value into Python (torch.jit's name)."""


def _as_list(inputs):
    if isinstance(inputs, _C.Tensor):
        return [inputs]
    inputs = list(inputs)
    for i, x in enumerate(inputs):
        if not isinstance(x, _C.Tensor):
            raise TypeError(f"wick.jit: example input {i} is {type(x).__name__}, not a Tensor")
    return inputs


def _outputs(result):
    if isinstance(result, _C.Tensor):
        return [result], True
    if isinstance(result, (tuple, list)) and all(isinstance(r, _C.Tensor) for r in result):
        return list(result), False
    raise TypeError("wick.jit: the traced function must return a Tensor or a tuple of Tensors; "
                    f"got {type(result).__name__}")


def _module_state(model):
    """The module's part of the guard key (Note [guards and retracing] in jit/compile.h): every
    module's training flag and the identity of every parameter and buffer, as "name=value;"
    entries, walked again only when a module changed (Note [the module-state epoch])."""
    seen = {"epoch": None, "state": ""}

    def state():
        epoch = _module_tree._state_epoch
        if epoch != seen["epoch"]:
            flags = "".join(f"training of module '{name or '(root)'}'="
                            f"{'on' if m.training else 'off'};" for name, m in model.named_modules())
            ids = "".join(f"parameter {name}={id(t):#x};" for name, t in _named_tensors(model))
            seen["epoch"], seen["state"] = epoch, flags + ids
        return seen["state"]

    return state


def _named_tensors(model):
    if not hasattr(model, "named_parameters"):
        return []
    named = list(model.named_parameters()) + list(model.named_buffers())
    return [(name, t) for name, t in named if t is not None]


class _Call:
    """Calls model(*inputs) for the tracer and remembers whether it returned one tensor."""

    def __init__(self, model):
        self.model = model
        self.single = True

    def __call__(self, inputs):
        outputs, self.single = _outputs(self.model(*inputs))
        return outputs


class TracedModule:
    """A traced graph and its executor: call it like the model (torch.jit.trace's result).

    ``graph`` prints as text, ``graph.dot()`` is Graphviz; ``code`` is the text form."""

    def __init__(self, model, graph, params, single, plan_memory=True):
        self.model = model
        self.graph = graph
        self._params = params
        self._single = single
        self._executor = _jit.Executor(graph, params, plan_memory)

    @property
    def code(self):
        return str(self.graph)

    def __call__(self, *inputs):
        out = self._executor.run(_as_list(inputs))
        return out[0] if self._single else tuple(out)


def trace(model, example_inputs):
    """wick.jit.trace(model, example_inputs): run the model once and record its graph."""
    if not callable(model):
        raise TypeError(f"wick.jit.trace: expected a module or function, got {type(model).__name__}")
    inputs = _as_list(example_inputs)
    call = _Call(model)
    params = _named_tensors(model)
    graph = _jit.trace(call, inputs, params)
    for read in graph.host_reads:
        warnings.warn(f"wick.jit.trace: the traced run read a tensor's value into Python ({read}); "
                      "the trace replays this run's use of it for every input",
                      TracerWarning, stacklevel=2)
    return TracedModule(model, graph, params, call.single)


class CompiledModule:
    """wick.compile's result: traces on the first call and on each new input signature."""

    def __init__(self, model, options):
        self.model = model
        self._call = _Call(model)
        state = _module_state(model) if isinstance(model, _module_tree.Module) else None
        self._compiled = _jit.CompiledFunction(self._call, lambda: _named_tensors(model), options,
                                               state)
        self._traces_seen = 0
        self._breaks_reported = 0

    def __call__(self, *inputs):
        out = self._compiled(_as_list(inputs))
        if self._compiled.traces != self._traces_seen:  # a trace may have found a graph break
            self._traces_seen = self._compiled.traces
            self._report_breaks()
        return out[0] if self._call.single else tuple(out)

    def _report_breaks(self):
        breaks = self._compiled.graph_breaks
        for read in breaks[self._breaks_reported:]:
            warnings.warn(f"wick.compile: graph break: the traced call read a tensor's value into "
                          f"Python ({read}); calls with these inputs run eagerly",
                          stacklevel=3)
        self._breaks_reported = len(breaks)

    @property
    def graph_breaks(self):
        """Why calls run eagerly: each trace that read a tensor's value into Python, with the line
        (Note [graph breaks] in jit/compile.cpp)."""
        return list(self._compiled.graph_breaks)

    @property
    def eager_calls(self):
        """Calls that ran eagerly after a graph break or with the cache full."""
        return self._compiled.eager_calls

    @property
    def traces(self):
        return self._compiled.traces

    @property
    def retraces(self):
        """How many times a call traced again because a guard failed: a new shape, stride, dtype
        or device, grad mode, autocast, a module's training flag, a replaced parameter or buffer
        (``log`` names the guard)."""
        return self._compiled.retraces

    @property
    def graph(self):
        """The optimised graph of the latest call's signature."""
        return self._compiled.graph

    @property
    def log(self):
        """What each trace's passes did, one line per pass."""
        return self._compiled.log

    @property
    def kernels_per_run(self):
        return self._compiled.kernels_per_run

    @property
    def memory_plan(self):
        return self._compiled.memory_plan

    @property
    def cuda_graph(self):
        """{'status': str, 'captured': bool, 'launches': n}: whether the latest graph replays as
        one CUDA Graph, and if not, why (it runs on the CPU, draws random numbers, ...)."""
        return self._compiled.cuda_graph

    @property
    def convolutions(self):
        """{'prepacked': n, 'winograd': m, 'direct': d}: the float32 CPU convolutions of the
        latest graph whose weight was packed ahead of time (frozen graphs), and how many of those
        run Winograd and the direct convolution (the rest run im2col + GEMM)."""
        return self._compiled.convolutions


def compile(model, *, freeze=False, fuse=True, plan_memory=True, warmup=0, fullgraph=False,
            cache_size_limit=8, **passes):
    """wick.compile(model): a callable that runs model's graph, traced and optimised.

    freeze=True (inference) turns parameters into constants so that constant folding and
    conv + batch-norm folding can use them; later changes to the parameters are not seen.
    Frozen float32 convolutions on the CPU also get their weights packed for the GEMM once, when
    the graph is built, and 3x3 stride-1 ones run Winograd's F(2x2, 3x3) where it is faster.
    fuse=True also lets a convolution run its only consumer, an elementwise op or chain (a ReLU,
    a residual add + ReLU), as an epilogue on each block of its output while it is in cache.
    The other passes (dead_code, common_subexpressions, constant_folding, fold_conv_bn,
    conv_epilogue, prepack_weights, winograd) are on unless passed as False. A replay records
    nothing for autograd: its outputs have no grad_fn, so backward() through a compiled forward
    is not possible; compile the whole training step.

    On a GPU, a graph that runs wholly there becomes one CUDA Graph, as with
    torch.compile(mode="reduce-overhead"): the call that traces runs eagerly, the next replays
    op by op (a warm-up), the one after captures the replay, and from then on each call is one
    launch. cuda_graph=False turns that off; ``compiled.cuda_graph`` says what happened.

    A training step compiles too: a function that runs the forward, ``loss.backward()`` and
    ``optimizer.step()`` (SGD, Adam, AdamW) is traced whole and replayed without autograd or
    Python; pass warmup=1 so that the first step (which creates the optimizer's state) runs
    eagerly and the second is traced. Adam's step count is a tensor that the replay increments,
    so each step gets its own bias correction, as with PyTorch's ``capturable=True``. The learning
    rate is fixed at its traced value and a replay does not assign ``.grad``.

    Guards: a call traces again when its inputs' shapes, strides, dtypes or devices, grad mode,
    autocast, a module's training flag (``model.eval()``) or a parameter or buffer object differ
    from every earlier trace's; ``retraces`` counts it and ``log`` names the guard. Up to
    cache_size_limit traces are kept; later new guards run eagerly. A traced call that reads a
    tensor's value into Python (``if t.sum() > 0``, ``.item()``, ``float(t)``) would freeze that
    choice: its inputs run eagerly from then on, with a warning naming the line
    (``graph_breaks``), or, with ``fullgraph=True``, it raises RuntimeError."""
    for name, value in (("warmup", warmup), ("cache_size_limit", cache_size_limit)):
        if not isinstance(value, int) or isinstance(value, bool):
            raise TypeError(f"wick.compile: {name} must be an int; got {value!r}")
    if warmup < 0:
        raise ValueError(f"wick.compile: warmup must be an int >= 0; got {warmup!r}")
    if cache_size_limit < 1:
        raise ValueError(f"wick.compile: cache_size_limit must be an int >= 1; "
                         f"got {cache_size_limit!r}")
    flags = dict(passes, freeze=freeze, fuse=fuse, plan_memory=plan_memory, fullgraph=fullgraph)
    for name, value in flags.items():
        if name not in _OPTIONS and name != "fullgraph":
            raise TypeError(f"wick.compile() got an unexpected keyword argument '{name}'")
        if not isinstance(value, bool):
            raise TypeError(f"wick.compile: {name} must be a bool; got {value!r}")
    options = dict(flags, warmup=warmup, cache_size_limit=cache_size_limit)
    if not callable(model):
        raise TypeError(f"wick.compile: expected a module or function, got {type(model).__name__}")
    return CompiledModule(model, options)


__all__ = ["trace", "compile", "TracedModule", "CompiledModule", "Graph", "DispatchCounter",
           "TracerWarning"]
