"""wick.save and wick.load: state dicts (and nested containers of tensors and numbers, such as an
optimizer's state_dict) in the safetensors format, written atomically by nn/serialization.h.

Tensors are stored under their path in the container ("state.0.exp_avg"); the container's shape
and its non-tensor values go into the file's metadata as JSON, under "wick.tree". A flat
{name: tensor} dict is a plain safetensors file that other tools read as is."""

import json
import os
import tempfile
from collections import OrderedDict

from wick import _C

_TREE_KEY = "wick.tree"


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
    raise TypeError(f"wick.save can store tensors, numbers, strings, None and dicts, lists and "
                    f"tuples of them; got {type(obj).__name__}")


def _key(k):
    if isinstance(k, (str, int)) and not isinstance(k, bool):
        return [type(k).__name__, k]
    raise TypeError(f"wick.save: dict keys must be str or int; got {type(k).__name__}")


def _unflatten(node, tensors):
    if "t" in node:
        return tensors[node["t"]]
    if "d" in node:
        items = [(k[1] if k[0] == "str" else int(k[1]), _unflatten(v, tensors))
                 for k, v in node["d"]]
        return OrderedDict(items) if node.get("o") else dict(items)
    if "l" in node:
        return [_unflatten(v, tensors) for v in node["l"]]
    if "u" in node:
        return tuple(_unflatten(v, tensors) for v in node["u"])
    return node["v"]


def save(obj, f):
    """Saves a state dict (or a nested container of tensors) to a path or a binary file."""
    tensors = {}
    tree = _flatten(obj, "", tensors)
    metadata = {_TREE_KEY: json.dumps(tree)}
    if isinstance(f, (str, os.PathLike)):
        _C._nn.save_safetensors(os.fspath(f), tensors, metadata)
        return
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "wick.safetensors")
        _C._nn.save_safetensors(path, tensors, metadata)
        with open(path, "rb") as src:
            f.write(src.read())


def load(f, map_location=None, weights_only=None):
    """Loads what save() wrote (or any safetensors file, as a {name: tensor} dict)."""
    if isinstance(f, (str, os.PathLike)):
        tensors, metadata = _C._nn.load_safetensors(os.fspath(f))
    elif not hasattr(f, "read"):
        raise TypeError(f"wick.load expects a path or a binary file; got {type(f).__name__}")
    else:
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "wick.safetensors")
            with open(path, "wb") as dst:
                dst.write(f.read())
            tensors, metadata = _C._nn.load_safetensors(path)
    if map_location is not None:
        device = map_location if not callable(map_location) else None
        tensors = {k: (map_location(v, "cpu") if device is None else v.to(device))
                   for k, v in tensors.items()}
    if _TREE_KEY not in metadata:
        return OrderedDict(sorted(tensors.items()))
    return _unflatten(json.loads(metadata[_TREE_KEY]), tensors)
