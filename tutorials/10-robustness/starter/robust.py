"""Lab 10: bad input handled by class - checked sizes, the partial-overlap rule, a parser that
checks everything it reads, and a fuzzer that finds the parser that does not.

Every gap is a rule a framework applies in one place so that no op or file format can forget it."""

import random
import struct

INT64_MAX = 2**63 - 1


class SizeOverflow(RuntimeError):
    """What wick and PyTorch raise when a shape's element or byte count does not fit in int64."""


# ---------------------------------------------------------------------------------------------
# 1. Checked size arithmetic: one function every allocation and shape computation goes through.
# ---------------------------------------------------------------------------------------------

def checked_numel(shape, itemsize=1):
    """The element count of `shape` times `itemsize`, or SizeOverflow naming the shape when the
    product (or any partial product) exceeds INT64_MAX; a negative size is a ValueError.

    Python's integers never overflow, so the check is explicit: C++ must test before multiplying
    (`a > INT64_MAX / b`), which is what core/shape.h does."""
    # TODO(10): checked_numel: multiply the sizes one at a time, checking each product against INT64_MAX
    raise NotImplementedError("checked_numel: multiply the sizes one at a time, checking each product against INT64_MAX")


def storage_span(shape, strides, offset, itemsize):
    """The byte range [first, last + itemsize) a strided view touches, relative to its storage's
    start, or None for a view with no elements. Negative strides do not exist in PyTorch or wick."""
    # TODO(10): storage_span: the last element sits at offset + sum((size - 1) * stride)
    raise NotImplementedError("storage_span: the last element sits at offset + sum((size - 1) * stride)")


# ---------------------------------------------------------------------------------------------
# 2. The partial-overlap rule of in-place and out= ops.
# ---------------------------------------------------------------------------------------------

def overlap_status(a, b):
    """'none', 'full' or 'partial' for two views (dicts with data_ptr in bytes, shape, strides,
    itemsize) - PyTorch's get_overlap_status for dense views: the same memory viewed the same
    way is 'full' (x.add_(x) is fine), disjoint byte ranges are 'none', anything else is
    'partial' and an in-place op must refuse it, because it would read elements it already wrote."""
    # TODO(10): overlap_status: compare the byte ranges of the two views; equal pointer, shape and strides is full
    raise NotImplementedError("overlap_status: compare the byte ranges of the two views; equal pointer, shape and strides is full")


def describe(tensor):
    """A wick (or PyTorch) tensor as the dict overlap_status reads."""
    return {"data_ptr": tensor.data_ptr(), "shape": tuple(tensor.shape),
            "strides": tuple(tensor.stride()), "itemsize": tensor.element_size()}


# ---------------------------------------------------------------------------------------------
# 3. A parser that checks everything it reads: IDX, the format of MNIST.
# ---------------------------------------------------------------------------------------------

# IDX type codes -> (struct format of one element, bytes per element). Big-endian throughout.
IDX_TYPES = {0x08: ("B", 1), 0x09: ("b", 1), 0x0B: (">h", 2), 0x0C: (">i", 4), 0x0D: (">f", 4),
             0x0E: (">d", 8)}


class IdxError(ValueError):
    """A malformed IDX file: the message says which field is wrong and its value."""


def parse_idx(data):
    """(type code, shape, payload bytes) of an IDX file's bytes, or IdxError.

    Layout: two zero bytes, a type code, the number of dimensions n, n big-endian uint32 sizes,
    then exactly prod(sizes) * itemsize bytes. Every field a file can lie about is checked
    before it is used: the magic, the type, n against the header's length, each size, the
    product's overflow, and the payload length - too short and too long are both errors."""
    # TODO(10): parse_idx: check magic, type code, ndim, header length, checked size, payload length - in that order
    raise NotImplementedError("parse_idx: check magic, type code, ndim, header length, checked size, payload length - in that order")


def naive_parse_idx(data):
    """The parser as first written: trusts the header. Lab step 4's fuzzer must catch it."""
    code, ndim = data[2], data[3]
    shape = struct.unpack(f">{ndim}I", data[4:4 + 4 * ndim])
    fmt, itemsize = IDX_TYPES[code]
    count = 1
    for size in shape:
        count *= size
    payload = data[4 + 4 * ndim:]
    first = struct.unpack(fmt, payload[:itemsize])[0] if count else None
    return code, shape, payload[:count * itemsize], first


# ---------------------------------------------------------------------------------------------
# 4. A mutation fuzzer: libFuzzer's idea in twenty lines, without the coverage feedback.
# ---------------------------------------------------------------------------------------------

INTERESTING = [0, 1, 0x7F, 0x80, 0xFF]


def mutate(data, rng):
    """One random mutation of `data` (bytes): flip a bit, set a byte to an interesting value,
    insert or delete a byte, or truncate - the moves libFuzzer's default mutators make."""
    # TODO(10): mutate: pick one of five moves with rng; never return the input unchanged when it has bytes
    raise NotImplementedError("mutate: pick one of five moves with rng; never return the input unchanged when it has bytes")


def fuzz(parser, seeds, iterations, seed=0, allowed=(ValueError,)):
    """Feeds `iterations` mutants (each mutated 1-4 times from a random seed input or an earlier
    mutant) to `parser` and returns the inputs that raised anything not in `allowed`, as
    (input, exception) pairs. Accepted mutants join the pool, so later ones go deeper."""
    # TODO(10): fuzz: keep a pool of inputs; mutate, run, collect the exceptions outside `allowed`
    raise NotImplementedError("fuzz: keep a pool of inputs; mutate, run, collect the exceptions outside `allowed`")
