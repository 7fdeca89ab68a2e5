"""The pickle half of wick.save and wick.load: whole objects (a model, anything picklable) that
are not plain containers of tensors (serialization.py handles those without pickle).

The object is pickled with every wick tensor (and Parameter) replaced by a persistent id, so the
pickle holds only Python structure; the tensors themselves go into the same safetensors file as
named tensors, and the pickle bytes, base64-encoded, into its metadata under "wick.pickle".

Loading a pickle imports and calls whatever the file names, so, as PyTorch >= 2.6 does, load
refuses it unless weights_only=False (or WICK_FORCE_NO_WEIGHTS_ONLY_LOAD=1). The refusal reads
the pickle's opcodes without executing them, to name the classes it would import."""

import base64
import binascii
import collections
import io
import os
import pickle
import pickletools
import types

from wick import _C

PICKLE_KEY = "wick.pickle"
_TENSOR = "wick.tensor"
_DEVICE = "wick.device"
# Protocol 4 rather than DEFAULT_PROTOCOL: files stay readable by every Python wick supports.
_PROTOCOL = 4
_FORCE_ENV = "WICK_FORCE_NO_WEIGHTS_ONLY_LOAD"


class _TensorPickler(pickle.Pickler):
    """Pickles tensors by reference into `tensors` ({key: tensor}); devices by name, since
    pybind11's device class does not pickle."""

    def __init__(self, file, tensors):
        super().__init__(file, protocol=_PROTOCOL)
        self._tensors = tensors
        # id -> (object, persistent id). Holding the object keeps its id from being reused by a
        # temporary tensor made while pickling (x.grad is a new Python object on each access).
        self._seen = {}

    def persistent_id(self, obj):
        if isinstance(obj, _C.Tensor):
            seen = self._seen.get(id(obj))
            if seen is None:
                from wick.nn.parameter import Parameter
                key = str(len(self._tensors))
                # The safetensors writer makes its own contiguous CPU copy of each tensor.
                self._tensors[key] = obj.detach()
                kind = "Parameter" if isinstance(obj, Parameter) else "Tensor"
                seen = self._seen[id(obj)] = (obj, (_TENSOR, key, kind, bool(obj.requires_grad)))
            return seen[1]
        if isinstance(obj, _C.device):
            return (_DEVICE, str(obj))
        return None

    def reducer_override(self, obj):
        # A C++ function bound by pybind11 (F.relu, kept as a Transformer layer's activation)
        # is a builtin whose __self__ is a capsule pickle cannot save; it is saved by name, as
        # pickle saves a Python function, when that name leads back to it.
        if isinstance(obj, types.BuiltinFunctionType) and obj.__module__.startswith("wick."):
            name = obj.__qualname__.rpartition(".")[2]
            if _builtin(obj.__module__, name) is obj:
                return (_builtin, (obj.__module__, name))
        return NotImplemented


def _builtin(module, name):
    """The wick builtin function `name` in `module`, which may be a pybind11 submodule such as
    wick._C._nn that is reached by attribute, not by import. None when there is none."""
    import wick
    obj = wick
    for part in module.split(".")[1:] + [name]:
        obj = getattr(obj, part, None)
    return obj


def dumps(obj, tensors):
    """The base64 text of obj's pickle; its tensors are added to `tensors`."""
    buffer = io.BytesIO()
    try:
        _TensorPickler(buffer, tensors).dump(obj)
    except (pickle.PicklingError, TypeError, AttributeError) as e:
        # AttributeError is how pickle refuses a lambda or a class defined inside a function.
        raise TypeError(f"[wick.save] cannot pickle the {type(obj).__name__} object: "
                        f"{e}") from e
    return base64.b64encode(buffer.getvalue()).decode("ascii")


class _BadReference(pickle.UnpicklingError):
    """A persistent id that names no stored tensor; its message already names the file."""


class _TensorUnpickler(pickle.Unpickler):
    """Resolves the persistent ids _TensorPickler wrote against the file's tensors. Nothing in
    an id is trusted: a malformed one or a key the file lacks raises UnpicklingError."""

    def __init__(self, file, tensors, path):
        super().__init__(file)
        self._tensors, self._path = tensors, path
        self._loaded = {}  # key -> object, so a tensor referenced twice comes back as one object

    def persistent_load(self, pid):
        if (isinstance(pid, tuple) and len(pid) == 4 and pid[0] == _TENSOR
                and isinstance(pid[1], str) and pid[2] in ("Tensor", "Parameter")
                and isinstance(pid[3], bool)):
            return self._tensor(*pid[1:])
        if isinstance(pid, tuple) and len(pid) == 2 and pid[0] == _DEVICE:
            return _C.device(pid[1])
        raise _BadReference(f"[wick.load] {self._path}: the pickle refers to {_short(pid)}, "
                            f"which is not a stored tensor or device")

    def _tensor(self, key, kind, requires_grad):
        if key in self._loaded:
            return self._loaded[key]
        if key not in self._tensors:
            raise _BadReference(f"[wick.load] {self._path}: the pickle refers to tensor "
                                f"{_short(key)}, which the file does not hold")
        tensor = self._tensors[key]
        if kind == "Parameter":
            from wick.nn.parameter import Parameter
            tensor = Parameter(tensor, requires_grad)
        elif requires_grad:
            tensor.requires_grad_(True)
        self._loaded[key] = tensor
        return tensor


def _short(value):
    text = repr(value)
    return text if len(text) <= 60 else text[:60] + "..."


def _decode(text, path):
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError) as e:
        raise ValueError(f"[wick.load] {path}: its '{PICKLE_KEY}' metadata is not valid base64 "
                         f"({e})") from None


# Opcodes that push a string: the module and name STACK_GLOBAL pops are pushed by these, or
# fetched from the memo when the pickle has used them before.
_STRING_OPS = {"SHORT_BINUNICODE", "BINUNICODE", "BINUNICODE8", "UNICODE", "STRING",
               "BINSTRING", "SHORT_BINSTRING"}


def _imported_names(data, path):
    """The module.name of every global the pickle would import, in order, read from its opcodes
    without running them. A pickle that pickletools cannot walk is corrupt."""
    names, recent, memo = [], collections.deque([None, None], maxlen=2), {}
    try:
        for op, arg, _ in pickletools.genops(data):
            if op.name in ("GLOBAL", "INST"):
                names.append(arg.replace(" ", "."))
            elif op.name == "STACK_GLOBAL":
                module, name = recent
                names.append(f"{module}.{name}" if isinstance(module, str)
                             and isinstance(name, str) else "<a computed name>")
                recent.append(None)
            elif op.name in _STRING_OPS:
                recent.append(arg)
            elif op.name == "MEMOIZE":
                memo[len(memo)] = recent[-1]
            elif op.name in ("PUT", "BINPUT", "LONG_BINPUT"):
                memo[arg] = recent[-1]
            elif op.name in ("GET", "BINGET", "LONG_BINGET"):
                recent.append(memo.get(arg))
            elif op.stack_after:
                recent.append(None)
    except Exception as e:  # genops on corrupt bytes raises ValueError and, rarely, others
        raise pickle.UnpicklingError(f"[wick.load] {path}: its '{PICKLE_KEY}' metadata is not a "
                                     f"valid pickle ({type(e).__name__}: {e})") from None
    return list(dict.fromkeys(names))


def _weights_only_default():
    return os.environ.get(_FORCE_ENV, "").strip().lower() not in ("1", "y", "yes", "true")


def loads(text, tensors, path, weights_only):
    """The object whose pickle (base64 `text`) load() found in the file at `path`."""
    data = _decode(text, path)
    names = _imported_names(data, path)
    if weights_only is None:
        weights_only = _weights_only_default()
    if weights_only:
        shown = ", ".join(names[:8]) + (f" and {len(names) - 8} more" if len(names) > 8 else "")
        raise pickle.UnpicklingError(
            f"[wick.load] {path}: this file holds pickled Python objects (it would import "
            f"{shown or 'nothing'}), and unpickling them runs whatever code the file names. "
            f"weights_only=True (the default, as in PyTorch >= 2.6) loads only tensors and "
            f"plain containers. If you trust the file's source, load it with "
            f"weights_only=False (or set {_FORCE_ENV}=1); to avoid the question, save "
            f"model.state_dict() instead of the model.")
    try:
        return _TensorUnpickler(io.BytesIO(data), tensors, path).load()
    except _BadReference:
        raise
    # What a corrupt pickle makes the unpickler raise; OverflowError and MemoryError come from
    # a corrupt frame or string length that pickletools does not check.
    except (pickle.UnpicklingError, EOFError, ValueError, KeyError, IndexError, TypeError,
            AttributeError, ImportError, RecursionError, OverflowError, MemoryError) as e:
        # ImportError and AttributeError are also the honest, uncorrupted case of a class that
        # is no longer importable under the name it was saved with (a script's __main__).
        raise pickle.UnpicklingError(f"[wick.load] {path}: cannot unpickle its object "
                                     f"({type(e).__name__}: {e})") from e
