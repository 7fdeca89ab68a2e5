"""Bad inputs to wick.jit.trace, the traced module, wick.compile and the compiled module:
example inputs and outputs that are not tensors, calls that do not match the traced signature,
compile options, and op errors raised while tracing or retracing.

How the types were checked: each trace row was run against torch.jit.trace 1.13 (Debian's
torch, /work/main/.venv). TorchScript raises RuntimeError for every mistake here, its
interpreter's catch-all; wick follows its documented rule instead (core/error.h): a wrong type is
a TypeError, a bad value or shape a ValueError, as test_ops.py does for the same op errors.
PyTorch 1.13 has no torch.compile, so the compile rows use Python's convention. Zero-size inputs,
guards and graph breaks are tested elsewhere (tests/python/test_jit*.py)."""

import wick as W
import wick.jit as jit
import wick.nn as nn

from bad_inputs.corpus import Bad, check, parametrize


def _linear():
    W.manual_seed(0)
    return nn.Linear(3, 2)


def _traced():
    return jit.trace(_linear(), W.ones(1, 3))


def _compiled_after_one_call():
    c = W.compile(_linear())
    c(W.ones(1, 3))
    return c


TRACE = [
    Bad("trace-example-str", lambda: jit.trace(_linear(), "x"), TypeError, "wick.jit",
        ["input 0", "str"]),
    Bad("trace-example-int-among-tensors",
        lambda: jit.trace(lambda a, b: a, [W.ones(1, 3), 3]), TypeError, "wick.jit",
        ["input 1", "int"]),
    Bad("trace-example-none", lambda: jit.trace(_linear(), [None]), TypeError, "wick.jit",
        ["NoneType"]),
    Bad("trace-returns-int", lambda: jit.trace(lambda x: 3, W.ones(2)), TypeError, "wick.jit",
        ["got int"]),
    Bad("trace-returns-dict", lambda: jit.trace(lambda x: {"a": x}, W.ones(2)), TypeError,
        "wick.jit", ["got dict"]),
    Bad("trace-returns-none", lambda: jit.trace(lambda x: None, W.ones(2)), TypeError,
        "wick.jit", ["NoneType"]),
    Bad("trace-returns-tuple-with-int", lambda: jit.trace(lambda x: (x, 3), W.ones(2)),
        TypeError, "wick.jit", ["got tuple"]),
    Bad("trace-returns-item", lambda: jit.trace(lambda x: x.sum().item(), W.ones(2)), TypeError,
        "wick.jit", ["got float"]),
    Bad("trace-model-wrong-shape", lambda: jit.trace(_linear(), W.ones(1, 4)), ValueError,
        "linear", ["(1, 4)", "(2, 3)"]),
    Bad("trace-model-wrong-arity", lambda: jit.trace(_linear(), [W.ones(1, 3), W.ones(1, 3)]),
        TypeError, "forward", ["3 were given"]),
    # ---- calling the traced module: the graph's inputs are fixed by the trace ----
    Bad("traced-call-wider", lambda: _traced()(W.ones(1, 4)), ValueError, "jit.Executor",
        ["(1, 3)", "(1, 4)"]),
    Bad("traced-call-rank", lambda: _traced()(W.ones(3)), ValueError, "jit.Executor",
        ["(1, 3)", "got shape (3,)"]),
    Bad("traced-call-batch", lambda: _traced()(W.ones(5, 3)), ValueError, "jit.Executor",
        ["got shape (5, 3)"]),
    Bad("traced-call-dtype", lambda: _traced()(W.ones(1, 3, dtype=W.float64)), TypeError,
        "jit.Executor", ["float32", "float64"]),
    Bad("traced-call-two-inputs", lambda: _traced()(W.ones(1, 3), W.ones(1, 3)), ValueError,
        "jit.Executor", ["1 inputs", "got 2"]),
    Bad("traced-call-no-input", lambda: _traced()(), ValueError, "jit.Executor", ["got 0"]),
    Bad("traced-call-str", lambda: _traced()("x"), TypeError, "wick.jit", ["str"]),
    Bad("traced-call-keyword", lambda: _traced()(input=W.ones(1, 3)), TypeError,
        "TracedModule.__call__", ["'input'"]),
]

COMPILE = [
    Bad("compile-warmup-negative", lambda: W.compile(_linear(), warmup=-1), ValueError,
        "wick.compile", ["warmup", "-1"]),
    Bad("compile-unknown-option", lambda: W.compile(_linear(), mode="max-autotune"), TypeError,
        "wick.compile", ["'mode'"]),
    Bad("compile-not-callable", lambda: W.compile(3), TypeError, "wick.compile", ["int"]),
    Bad("compiled-call-str", lambda: W.compile(_linear())("x"), TypeError, "wick.jit", ["str"]),
    Bad("compiled-call-none", lambda: W.compile(_linear())(None), TypeError, "wick.jit",
        ["NoneType"]),
    Bad("compiled-call-keyword", lambda: W.compile(_linear())(x=W.ones(1, 3)), TypeError,
        "CompiledModule.__call__", ["'x'"]),
    Bad("compiled-returns-int", lambda: W.compile(lambda x: 3)(W.ones(2)), TypeError,
        "wick.jit", ["got int"]),
    Bad("compiled-returns-item", lambda: W.compile(lambda x: x.item())(W.ones(1)), TypeError,
        "wick.jit", ["got float"]),
    Bad("compiled-returns-list", lambda: W.compile(lambda x: x.tolist())(W.ones(2)), TypeError,
        "wick.jit", ["got list"]),
    Bad("compiled-returns-generator", lambda: W.compile(lambda x: (y for y in [x]))(W.ones(2)),
        TypeError, "wick.jit", ["generator"]),
    Bad("compiled-model-wrong-shape", lambda: W.compile(_linear())(W.ones(1, 4)), ValueError,
        "linear", ["(1, 4)"]),
    Bad("compiled-broadcast", lambda: W.compile(lambda x, y: x + y)(W.ones(2), W.ones(3)),
        ValueError, "add", ["(2,)", "(3,)"]),
    Bad("compiled-matmul", lambda: W.compile(lambda x: x @ W.ones(4, 2))(W.ones(2, 3)),
        ValueError, "matmul", ["(2, 3)", "(4, 2)"]),
    # A new shape traces again: the retrace runs the model eagerly and meets the same checks.
    Bad("compiled-retrace-wrong-shape", lambda: _compiled_after_one_call()(W.ones(2, 5)),
        ValueError, "linear", ["(2, 5)"]),
    Bad("compiled-retrace-int-input", lambda: _compiled_after_one_call()(
        W.ones(1, 3, dtype=W.int64)), TypeError, "matmul", ["int64", "float32"]),
    Bad("compiled-graph-before-call", lambda: W.compile(_linear()).graph, RuntimeError,
        "jit.CompiledFunction", ["call it first"]),
    Bad("compiled-kernels-before-call", lambda: W.compile(_linear()).kernels_per_run,
        RuntimeError, "jit.CompiledFunction", ["nothing was compiled"]),
]

CASES = TRACE + COMPILE


@parametrize(CASES)
def test_bad_input(case):
    check(case)
