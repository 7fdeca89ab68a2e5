"""How a DataLoader worker process hands a batch to the main process: through shared memory.

A batch's tensors are copied into one multiprocessing.shared_memory segment per batch; only a
small skeleton (the batch's structure, with each tensor replaced by its offset, shape and dtype)
travels through the result queue as a pickle. The main process copies each tensor out into a
wick tensor of its own and unlinks the segment at once, so a segment lives from the worker's
pack() to the main process's unpack() or discard(), never longer: a batch that is never delivered
(an early break, a stale epoch, an error) is discarded by the main process when it shuts the
workers down. The copy out costs one memcpy per tensor; wrapping the segment without copying
would tie the segment's lifetime to the tensors' and leave it to the garbage collector.

Pickling through multiprocessing (ForkingPickler, not plain pickle) also learns wick tensors here,
by value, so that a dataset holding tensors (a TensorDataset) can be sent to a "spawn" worker.
"""

import collections.abc
import itertools
import os
from multiprocessing import shared_memory
from multiprocessing.reduction import ForkingPickler

import numpy

from wick import _C

_ALIGN = 64  # each tensor starts on a cache line of the segment
_names = itertools.count()


class _Slot:
    """Where a batch's tensor went: its position in the segment's list of tensors."""

    __slots__ = ("index",)

    def __init__(self, index):
        self.index = index


def _strip(obj, tensors):
    """obj with each wick tensor replaced by a _Slot; the tensors are appended to `tensors`."""
    if isinstance(obj, _C.Tensor):
        tensors.append(obj)
        return _Slot(len(tensors) - 1)
    if isinstance(obj, (str, bytes)):
        return obj
    if isinstance(obj, collections.abc.Mapping):
        return _same_mapping(obj, {k: _strip(v, tensors) for k, v in obj.items()})
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):  # namedtuple
        return type(obj)(*(_strip(v, tensors) for v in obj))
    if isinstance(obj, (tuple, list)):
        return type(obj)(_strip(v, tensors) for v in obj)
    return obj


def _same_mapping(original, items):
    # An OrderedDict stays one; a mapping whose constructor takes other arguments (defaultdict)
    # comes back as a dict, as in PyTorch's pin_memory.
    if type(original) is dict:
        return items
    try:
        return type(original)(items)
    except TypeError:
        return items


def _refill(obj, tensors):
    if isinstance(obj, _Slot):
        return tensors[obj.index]
    if isinstance(obj, (str, bytes)):
        return obj
    if isinstance(obj, collections.abc.Mapping):
        return _same_mapping(obj, {k: _refill(v, tensors) for k, v in obj.items()})
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):
        return type(obj)(*(_refill(v, tensors) for v in obj))
    if isinstance(obj, (tuple, list)):
        return type(obj)(_refill(v, tensors) for v in obj)
    return obj


def _as_array(tensor):
    # NumPy has no bfloat16; float32 holds every bfloat16 value exactly, so it travels as that.
    tensor = tensor.detach()
    if tensor.dtype == _C.bfloat16:
        return tensor.float().numpy(), "bfloat16"
    return tensor.numpy(), None


def _view(buf, offset, shape, dtype):
    return numpy.ndarray(shape, dtype, buffer=buf, offset=offset)


def pack(batch):
    """(skeleton, segment name or None, tensor layouts): what the worker puts on the queue."""
    tensors = []
    skeleton = _strip(batch, tensors)
    if not tensors:
        return skeleton, None, ()
    arrays, layouts, size = [], [], 0
    for t in tensors:
        array, wick_dtype = _as_array(t)
        size = -(-size // _ALIGN) * _ALIGN
        arrays.append(array)
        layouts.append((size, array.shape, array.dtype.str, wick_dtype, t.requires_grad))
        size += array.nbytes
    # Our own prefix, so that a leak is easy to see (and to test for) in /dev/shm.
    name = f"wick_{os.getpid()}_{next(_names)}_{os.urandom(4).hex()}"
    segment = shared_memory.SharedMemory(name=name, create=True, size=max(size, 1))
    try:
        for array, (offset, shape, dtype, _, _) in zip(arrays, layouts):
            numpy.copyto(_view(segment.buf, offset, shape, dtype), array)
    except BaseException:
        segment.unlink()
        raise
    finally:
        segment.close()
    return skeleton, name, tuple(layouts)


def unpack(packed):
    """The batch, its tensors copied out of the segment, which is then unlinked."""
    skeleton, name, layouts = packed
    if name is None:
        return skeleton
    segment = shared_memory.SharedMemory(name=name)
    try:
        tensors = [_copy_out(segment.buf, layout) for layout in layouts]
    finally:
        segment.unlink()  # first: a close() that fails must not leave the name behind
        segment.close()
    return _refill(skeleton, tensors)


def _copy_out(buf, layout):
    offset, shape, dtype, wick_dtype, requires_grad = layout
    tensor = _C.from_numpy(_view(buf, offset, shape, dtype).copy())
    if wick_dtype is not None:
        tensor = tensor.to(getattr(_C, wick_dtype))
    if requires_grad:
        tensor.requires_grad_(True)
    return tensor


def discard(packed):
    """Unlinks the segment of a batch that will not be delivered."""
    name = packed[1]
    if name is None:
        return
    try:
        segment = shared_memory.SharedMemory(name=name)
    except FileNotFoundError:
        return
    segment.unlink()
    segment.close()


def _rebuild_tensor(array, wick_dtype, requires_grad):
    tensor = _C.from_numpy(array)
    if wick_dtype is not None:
        tensor = tensor.to(getattr(_C, wick_dtype))
    return tensor.requires_grad_(True) if requires_grad else tensor


def _reduce_tensor(tensor):
    array, wick_dtype = _as_array(tensor)
    return _rebuild_tensor, (array.copy(), wick_dtype, tensor.requires_grad)


ForkingPickler.register(_C.Tensor, _reduce_tensor)
