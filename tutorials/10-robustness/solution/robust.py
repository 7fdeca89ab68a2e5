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
    # BEGIN SOLUTION: multiply the sizes one at a time, checking each product against INT64_MAX
    for size in shape:
        if size < 0:
            raise ValueError(f"[numel] negative dimension {size} in shape {tuple(shape)}")
    total = itemsize
    for size in shape:
        if size == 0:
            return 0
    for size in shape:
        total *= size
        if total > INT64_MAX:
            raise SizeOverflow(f"[numel] shape {tuple(shape)} x {itemsize} bytes overflows int64")
    return total
    # END SOLUTION


def storage_span(shape, strides, offset, itemsize):
    """The byte range [first, last + itemsize) a strided view touches, relative to its storage's
    start, or None for a view with no elements. Negative strides do not exist in PyTorch or wick."""
    # BEGIN SOLUTION: the last element sits at offset + sum((size - 1) * stride)
    if any(size == 0 for size in shape):
        return None
    last = offset + sum((size - 1) * stride for size, stride in zip(shape, strides))
    return offset * itemsize, (last + 1) * itemsize
    # END SOLUTION


# ---------------------------------------------------------------------------------------------
# 2. The partial-overlap rule of in-place and out= ops.
# ---------------------------------------------------------------------------------------------

def overlap_status(a, b):
    """'none', 'full' or 'partial' for two views (dicts with data_ptr in bytes, shape, strides,
    itemsize) - PyTorch's get_overlap_status for dense views: the same memory viewed the same
    way is 'full' (x.add_(x) is fine), disjoint byte ranges are 'none', anything else is
    'partial' and an in-place op must refuse it, because it would read elements it already wrote."""
    # BEGIN SOLUTION: compare the byte ranges of the two views; equal pointer, shape and strides is full
    span_a = storage_span(a["shape"], a["strides"], 0, a["itemsize"])
    span_b = storage_span(b["shape"], b["strides"], 0, b["itemsize"])
    if span_a is None or span_b is None:
        return "none"
    start_a, end_a = a["data_ptr"] + span_a[0], a["data_ptr"] + span_a[1]
    start_b, end_b = b["data_ptr"] + span_b[0], b["data_ptr"] + span_b[1]
    if end_a <= start_b or end_b <= start_a:
        return "none"
    if (a["data_ptr"], tuple(a["shape"]), tuple(a["strides"])) == \
            (b["data_ptr"], tuple(b["shape"]), tuple(b["strides"])):
        return "full"
    return "partial"
    # END SOLUTION


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
    # BEGIN SOLUTION: check magic, type code, ndim, header length, checked size, payload length - in that order
    if len(data) < 4:
        raise IdxError(f"[idx] file of {len(data)} bytes is shorter than the 4-byte magic")
    if data[0] != 0 or data[1] != 0:
        raise IdxError(f"[idx] magic starts with {data[0]:#04x} {data[1]:#04x}, expected 0x00 0x00")
    code, ndim = data[2], data[3]
    if code not in IDX_TYPES:
        raise IdxError(f"[idx] unknown type code {code:#04x}")
    if ndim == 0:
        raise IdxError("[idx] 0 dimensions")
    header = 4 + 4 * ndim
    if len(data) < header:
        raise IdxError(f"[idx] header needs {header} bytes for {ndim} dimensions, file has {len(data)}")
    shape = struct.unpack(f">{ndim}I", data[4:header])
    itemsize = IDX_TYPES[code][1]
    try:
        nbytes = checked_numel(shape, itemsize)
    except SizeOverflow as e:
        raise IdxError(f"[idx] shape {shape} is too large: {e}") from None
    if len(data) - header != nbytes:
        raise IdxError(f"[idx] shape {shape} needs {nbytes} payload bytes, file has {len(data) - header}")
    return code, shape, bytes(data[header:])
    # END SOLUTION


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
    # BEGIN SOLUTION: pick one of five moves with rng; never return the input unchanged when it has bytes
    out = bytearray(data)
    move = rng.randrange(5)
    if not out:
        return bytes([rng.randrange(256)])
    i = rng.randrange(len(out))
    if move == 0:
        out[i] ^= 1 << rng.randrange(8)
    elif move == 1:
        value = rng.choice(INTERESTING)
        out[i] = value if out[i] != value else value ^ 1
    elif move == 2:
        out.insert(i, rng.randrange(256))
    elif move == 3:
        del out[i]
    else:
        out = out[:i]
    return bytes(out)
    # END SOLUTION


def fuzz(parser, seeds, iterations, seed=0, allowed=(ValueError,)):
    """Feeds `iterations` mutants (each mutated 1-4 times from a random seed input or an earlier
    mutant) to `parser` and returns the inputs that raised anything not in `allowed`, as
    (input, exception) pairs. Accepted mutants join the pool, so later ones go deeper."""
    # BEGIN SOLUTION: keep a pool of inputs; mutate, run, collect the exceptions outside `allowed`
    rng = random.Random(seed)
    pool = [bytes(s) for s in seeds]
    findings = []
    for _ in range(iterations):
        data = rng.choice(pool)
        for _ in range(rng.randint(1, 4)):
            data = mutate(data, rng)
        try:
            parser(data)
        except allowed:
            continue
        except Exception as e:  # noqa: BLE001 - everything else is a finding
            findings.append((data, e))
            continue
        if len(pool) < 256:
            pool.append(data)
    return findings
    # END SOLUTION
