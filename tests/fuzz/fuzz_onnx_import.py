#!/usr/bin/env python3
"""The ONNX importer's fuzzer: wick.onnx.load (python/wick/onnx/) under atheris, Google's
libFuzzer for Python (the same engine, flags and corpus layout as the C++ harnesses beside it).

An input's first byte picks the kind of model. A quarter are raw bytes: the rest of the input is
handed to wick.onnx.load as a file (the committed seeds are valid models in this form, so
libFuzzer's byte mutations start from real files). The others are structure-aware: the rest of the
input drives an atheris.FuzzedDataProvider that picks one of the seed models
(make_onnx_corpus.py) and edits it - dims and element types of the graph's inputs and outputs,
attribute values (set, added, removed), initializers' contents, dtypes and sizes, the names a
node reads and writes, the opset, nodes dropped, duplicated, swapped or turned into another op -
so that most models pass onnx.checker and reach wick's translations. Each model is loaded and run
eagerly (compile=False), and for half the inputs compiled (compile=True) and run too, on inputs
of its declared shapes, a symbolic dim drawn from 0 to 3 (0: an empty batch).

A finding (an uncaught exception: atheris writes the reproducer) is a crash, a hang, or an error
that is not a clear one: only ValueError, TypeError, RuntimeError (wick.OutOfMemoryError
included), NotImplementedError and IndexError with a message naming wick.onnx are answers, and
not when the failure underneath (a node's __cause__) is a Python or NumPy slip - KeyError,
AttributeError, ZeroDivisionError, NumPy's AxisError, a comparison of a string with an int - that
the importer should have turned into a message naming the node (Note [what the fuzzer accepts]).

    WICK_BUILD_DIR=build python tests/fuzz/fuzz_onnx_import.py -runs=100000 \
        tests/fuzz/corpus/fuzz_onnx_import        # tests/fuzz/run.sh passes its usual flags
"""
import math
import os
import sys
import warnings

import atheris
import numpy as np

# One thread: OpenMP's workers spin while they wait, and on a machine whose cores are busy with
# other work that made the tiny convolutions and batch norms of these models ten times slower.
os.environ.setdefault("OMP_NUM_THREADS", "1")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.path.abspath(os.environ.get("WICK_BUILD_DIR", os.path.join(ROOT, "build")))
sys.path[:0] = [os.path.join(ROOT, "python"), os.path.join(BUILD, "python"),
                os.path.dirname(os.path.abspath(__file__))]

import onnx  # noqa: E402
import wick  # noqa: E402

with atheris.instrument_imports(include=["wick.onnx"]):
    import wick.onnx  # noqa: E402
    from wick.onnx import _onnx_ops  # noqa: E402

from make_onnx_corpus import seed_models  # noqa: E402
from onnx_mutations import mutate  # noqa: E402

# Sizes computed from values are bounded by element_bound() (2**32 elements, or a quarter of
# memory); the harness lowers the bound so that a corrupt size is refused long before a 10 s
# timeout or the 2 GiB memory limit, and an allocation the bound misses still shows as one.
_onnx_ops._ELEMENT_CAP = 1 << 22
_onnx_ops._STATIC_ELEMENT_CAP = 1 << 20
INPUT_ELEMENTS = 1 << 14  # a declared input shape larger than this is loaded, not run

SEEDS = list(seed_models().values())
_NORMAL = np.random.default_rng(0).standard_normal(INPUT_ELEMENTS)
_SMALL = np.random.default_rng(1).integers(0, 1 << 16, INPUT_ELEMENTS)
ALLOWED = (ValueError, TypeError, RuntimeError, NotImplementedError, IndexError)
# Note [what the fuzzer accepts]
# The interpreter wraps whatever a node's translation raises as "wick.onnx: node 'n' (Op) failed
# on inputs ...: KeyError: ...", naming the node. That is the right answer for a wick op refusing
# its arguments, but a Python or NumPy error underneath means a translation trusted a value it
# should have checked, so under that catch-all the cause chain is judged too. (Messages the
# importer words itself, "initializer 'w' holds invalid tensor data: ...", quote their cause.)
# Integer Div and Mod by zero are answered by their own check (a RuntimeError or
# ZeroDivisionError naming the node, as PyTorch's "ZeroDivisionError"); any other
# ZeroDivisionError is Python arithmetic on an unchecked value.
SLIPS = (KeyError, AttributeError, ZeroDivisionError, NameError, AssertionError, RecursionError,
         OverflowError, FloatingPointError, getattr(np, "exceptions", np).AxisError)
SLIP_MESSAGES = ("not supported between instances of", "object is not iterable",
                 "object is not subscriptable", "unhashable type", "cannot be interpreted as an",
                 "cannot convert float", "object has no attribute", "invalid literal for",
                 "could not be broadcast", "cannot reshape array", "out of bounds for axis",
                 "argument must be", "unsupported operand type")
NP_FOR_ELEM = {1: np.float32, 2: np.uint8, 3: np.int8, 6: np.int32, 7: np.int64, 9: np.bool_,
               10: np.float16, 11: np.float64}


def _judge(e):
    """Re-raises e when it is not a clear answer to a bad model (Note [what the fuzzer accepts])."""
    text = str(e)
    division = "(Div)" in text or "(Mod)" in text
    if isinstance(e, ZeroDivisionError) and division and "wick.onnx" in text:
        return
    if not isinstance(e, ALLOWED) or "wick.onnx" not in text or "\n" in text.strip():
        raise AssertionError(f"unclear error: {type(e).__name__}: {e}") from e
    if text.startswith("wick.onnx: input '"):  # inputs are made to the declared shapes and types
        raise AssertionError(f"the model refused the inputs it declares: {e}") from e
    if "failed on inputs" not in text:  # a deliberate message, not the interpreter's catch-all
        return
    cause = e.__cause__
    while cause is not None:
        text = str(cause)
        if isinstance(cause, ZeroDivisionError) and division:
            return
        if isinstance(cause, SLIPS) or (isinstance(cause, (TypeError, ValueError)) and any(
                s in text for s in SLIP_MESSAGES)):
            raise AssertionError(f"a slip under a node's error: {type(cause).__name__}: "
                                 f"{text}") from e
        cause = cause.__cause__


def _inputs(model, fdp):
    """Arrays for the model's graph inputs at their declared shapes (symbolic dims 0 to 3), or
    None when a declared shape is too large to run or has no element type wick can be fed."""
    inits = {t.name for t in model.graph.initializer}
    symbols, arrays = {}, []
    for info in model.graph.input:
        if info.name in inits:
            continue
        t = info.type.tensor_type
        shape = [d.dim_value if d.HasField("dim_value") else
                 symbols.setdefault(d.dim_param, fdp.ConsumeIntInRange(0, 3)) for d in t.shape.dim]
        if t.elem_type not in NP_FOR_ELEM or max(shape, default=0) > INPUT_ELEMENTS or \
                math.prod(shape) > INPUT_ELEMENTS:
            return None
        dtype = np.dtype(NP_FOR_ELEM[t.elem_type])
        n = math.prod(shape)
        # Slices of fixed random values (a generator per call would cost more than the model):
        # normal floats, integers from -3 to 5 (0 to 5 unsigned: in and out of an index's range).
        modulus = {"b": 2, "i": 9}.get(dtype.kind, 6)
        a = (_NORMAL[:n] if dtype.kind == "f" else _SMALL[:n] % modulus
             - (3 if dtype.kind == "i" else 0)).astype(dtype).reshape(shape)
        if dtype.kind == "f" and n and fdp.ConsumeIntInRange(0, 7) == 0:
            a.reshape(-1)[0] = fdp.PickValueInList([np.nan, np.inf, -np.inf, 0.0, 1e30])
        arrays.append(a)
    return arrays


def _run(source, fdp, compile_too):
    """source (bytes or a ModelProto) loaded eagerly, and compiled if compile_too, each run once
    on inputs."""
    arrays = None
    for compile in (False, True)[:1 + compile_too]:
        try:
            loaded = wick.onnx.load(source, compile=compile)
        except Exception as e:  # noqa: BLE001 - judged
            _judge(e)
            return  # what the eager load refused the compiled one refuses too
        if not compile:
            model = source if isinstance(source, onnx.ModelProto) else \
                onnx.load_from_string(source)
            arrays = _inputs(model, fdp)
        if arrays is None:
            continue
        try:
            loaded(*arrays)
        except Exception as e:  # noqa: BLE001 - judged
            _judge(e)


def TestOneInput(data):
    if not data:
        return
    # Bit 2 of the first byte: compile too. Tracing, the passes and the memory plan cost as much
    # as the rest together; on half the inputs, a million executions fit in a CI-machine hour.
    compile_too = bool(data[0] & 4)
    if data[0] % 4 == 0:  # raw bytes: a file, as wick.onnx.load(bytes) reads one
        # The input's last bytes pick the symbolic dims; the file itself is all of the rest.
        _run(data[1:], atheris.FuzzedDataProvider(data[-4:]), compile_too)
        return
    fdp = atheris.FuzzedDataProvider(data[1:])
    model = onnx.ModelProto()
    model.CopyFrom(SEEDS[fdp.ConsumeIntInRange(0, len(SEEDS) - 1)])
    mutate(model, fdp)
    _run(model, fdp, compile_too)


def main():
    warnings.simplefilter("ignore")  # NumPy's divide-by-zero and cast warnings: ONNX semantics
    atheris.Setup(sys.argv, TestOneInput)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
