"""wick.save and wick.load (torch.save and torch.load), in the safetensors format, one file
written atomically by nn/serialization.h.

State dicts and nested containers of tensors and numbers (an optimizer's state_dict, a
checkpoint dict) are stored without pickle: tensors under their path in the container
("state.0.exp_avg"), the container's shape and its non-tensor values as JSON in the file's
metadata, under "wick.tree". A flat {name: tensor} dict is a plain safetensors file that other
tools read as is.

Anything else (a whole model, any picklable object) is pickled with its tensors stored as named
safetensors tensors (_pickle_io.py). Such a file loads only with weights_only=False, as in
PyTorch >= 2.6, because unpickling runs code the file names; container files load either way."""

import json
import os
import tempfile
from collections import OrderedDict

from wick import _C, _pickle_io

_TREE_KEY = "wick.tree"


class _NotAContainer(TypeError):
    """obj holds something the JSON tree cannot describe; save() pickles it instead."""


def _flatten(obj, path, tensors):
    """The JSON description of obj; its tensors go into `tensors` by dotted path."""
    if isinstance(obj, _C.Tensor):
        tensors[path] = obj.detach()
        return {"t": path}
    if isinstance(obj, dict):
        return {"d": [[_key(k), _flatten(v, f"{path}.{k}" if path else str(k), tensors)]
                      for k, v in obj.items()],
                "o": isinstance(obj, OrderedDict)}
    if isinstance(obj, (list, tuple)):
        return {"l" if isinstance(obj, list) else "u":
                [_flatten(v, f"{path}.{i}" if path else str(i), tensors)
                 for i, v in enumerate(obj)]}
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return {"v": obj}
    raise _NotAContainer(type(obj).__name__)


def _key(k):
    if isinstance(k, (str, int)) and not isinstance(k, bool):
        return [type(k).__name__, k]
    raise _NotAContainer(f"a {type(k).__name__} dict key")


class _CorruptTree(ValueError):
    """What is wrong with a file's "wick.tree" metadata; load() adds the file's name."""


def _unflatten(node, tensors, where="the root"):
    """Rebuilds the container from its JSON description. Nothing in it is trusted: a node of the
    wrong type, a missing key or a tensor name the file does not hold raises _CorruptTree saying
    where in the tree the problem is, not a bare KeyError from deep inside."""
    if not isinstance(node, dict) or len(node) == 0:
        raise _CorruptTree(f"{where} is {_show(node)}, not a node object")
    if "t" in node:
        name = node["t"]
        if not isinstance(name, str) or name not in tensors:
            raise _CorruptTree(f"{where} names tensor {_show(name)}, which the file does not hold")
        return tensors[name]
    if "d" in node:
        items = node["d"]
        if not isinstance(items, list):
            raise _CorruptTree(f"{where}: dict items are {_show(items)}, not a list")
        out = []
        for i, item in enumerate(items):
            if not (isinstance(item, list) and len(item) == 2 and isinstance(item[0], list)
                    and len(item[0]) == 2 and item[0][0] in ("str", "int")
                    and isinstance(item[0][1], str if item[0][0] == "str" else int)
                    and not isinstance(item[0][1], bool)):
                raise _CorruptTree(f"{where}: dict item {i} is {_show(item)}, not "
                                   f"[[\"str\" or \"int\", key], value]")
            key = item[0][1]
            out.append((key, _unflatten(item[1], tensors, f"{where}[{key!r}]")))
        return OrderedDict(out) if node.get("o") else dict(out)
    for tag, kind in (("l", list), ("u", tuple)):
        if tag in node:
            values = node[tag]
            if not isinstance(values, list):
                raise _CorruptTree(f"{where}: {kind.__name__} values are {_show(values)}, "
                                   f"not a list")
            return kind(_unflatten(v, tensors, f"{where}[{i}]") for i, v in enumerate(values))
    if "v" in node:
        value = node["v"]
        if value is not None and not isinstance(value, (bool, int, float, str)):
            raise _CorruptTree(f"{where} holds {_show(value)}, not a number, string or null")
        return value
    raise _CorruptTree(f"{where} is {_show(node)}, with none of the keys t, d, l, u, v")


def _show(value):
    text = json.dumps(value) if not isinstance(value, str) else repr(value)
    return text if len(text) <= 60 else text[:60] + "..."


def _tree_of(metadata, tensors, path):
    try:
        tree = json.loads(metadata[_TREE_KEY])
    except json.JSONDecodeError as e:
        raise ValueError(f"[wick.load] {path}: its '{_TREE_KEY}' metadata is not valid JSON "
                         f"({e})") from None
    try:
        return _unflatten(tree, tensors)
    except RecursionError:
        raise ValueError(f"[wick.load] {path}: its '{_TREE_KEY}' metadata nests too "
                         f"deeply") from None
    except _CorruptTree as e:
        raise ValueError(f"[wick.load] {path}: its '{_TREE_KEY}' metadata is corrupt: "
                         f"{e}") from None


def save(obj, f):
    """Saves obj to a path or a binary file: a container of tensors as a safetensors file,
    anything else pickled, with its tensors stored in the same file."""
    if not isinstance(f, (str, os.PathLike)) and not hasattr(f, "write"):
        raise TypeError(f"wick.save expects a path or a binary file; got {type(f).__name__}")
    tensors = {}
    try:
        metadata = {_TREE_KEY: json.dumps(_flatten(obj, "", tensors))}
    except _NotAContainer:
        tensors = {}
        metadata = {_pickle_io.PICKLE_KEY: _pickle_io.dumps(obj, tensors)}
    if isinstance(f, (str, os.PathLike)):
        _C._nn.save_safetensors(os.fspath(f), tensors, metadata)
        return
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "wick.safetensors")
        _C._nn.save_safetensors(path, tensors, metadata)
        with open(path, "rb") as src:
            f.write(src.read())


def load(f, map_location=None, weights_only=None):
    """Loads what save() wrote (or any safetensors file, as a {name: tensor} dict). A pickled
    object loads only with weights_only=False (the default is True, as in PyTorch >= 2.6, unless
    WICK_FORCE_NO_WEIGHTS_ONLY_LOAD=1); containers load whatever weights_only says."""
    if isinstance(f, (str, os.PathLike)):
        path = os.fspath(f)
        tensors, metadata = _C._nn.load_safetensors(path)
    elif not hasattr(f, "read"):
        raise TypeError(f"wick.load expects a path or a binary file; got {type(f).__name__}")
    else:
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "wick.safetensors")
            with open(path, "wb") as dst:
                dst.write(f.read())
            tensors, metadata = _C._nn.load_safetensors(path)
        path = getattr(f, "name", None) or repr(f)
    if map_location is not None:
        device = map_location if not callable(map_location) else None
        tensors = {k: (map_location(v, "cpu") if device is None else v.to(device))
                   for k, v in tensors.items()}
    if _pickle_io.PICKLE_KEY in metadata:
        return _pickle_io.loads(metadata[_pickle_io.PICKLE_KEY], tensors, path, weights_only)
    if _TREE_KEY not in metadata:
        return OrderedDict(sorted(tensors.items()))
    return _tree_of(metadata, tensors, path)
