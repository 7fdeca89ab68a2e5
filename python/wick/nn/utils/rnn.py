"""Variable-length sequences (torch.nn.utils.rnn): pad_sequence, pack_padded_sequence,
pad_packed_sequence, pack_sequence and PackedSequence.

A PackedSequence stores the steps time-major without padding: the rows of step t are the first
batch_sizes[t] sequences, sorted longest first, so `data` is exactly the packed layout the
recurrent layers compute on (core/ops/rnn.cpp). Packing and unpacking are each ONE index_select
(with one appended padding row for unpacking), so their gradients are one scatter each rather
than one full-size zero tensor per step."""

from collections import namedtuple

import wick

_PackedSequenceBase = namedtuple("PackedSequence",
                                 ["data", "batch_sizes", "sorted_indices", "unsorted_indices"])


def _invert_permutation(permutation):
    if permutation is None:
        return None
    output = wick.empty_like(permutation)
    output[permutation] = wick.arange(permutation.numel(), device=permutation.device)
    return output


class PackedSequence(_PackedSequenceBase):
    """Holds the data and batch_sizes of a packed batch of sequences. Build it with
    pack_padded_sequence or pack_sequence, not directly."""

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None:
            unsorted_indices = _invert_permutation(sorted_indices)
        if batch_sizes is None:
            raise TypeError("PackedSequence(): batch_sizes is required")
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs):
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        indices = [None if t is None else t.to(data.device)
                   for t in (self.sorted_indices, self.unsorted_indices)]
        return type(self)(data, self.batch_sizes, *indices)

    def cpu(self):
        return self.to("cpu")

    def double(self):
        return self.to(dtype=wick.float64)

    def float(self):
        return self.to(dtype=wick.float32)

    @property
    def is_cuda(self):
        return self.data.is_cuda

    def is_pinned(self):
        return self.data.is_pinned()


def _lengths_list(lengths, fn):
    if isinstance(lengths, wick.Tensor):
        if lengths.dim() != 1:
            raise RuntimeError(f"[{fn}] lengths must be a 1-D tensor; got {lengths.dim()}-D")
        return [int(v) for v in lengths.tolist()]
    try:
        return [int(v) for v in lengths]
    except (TypeError, ValueError):  # not iterable, or int("a")
        raise TypeError(f"[{fn}] lengths must be a list or 1-D tensor of ints; got "
                        f"{lengths!r}") from None


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """Packs a padded batch [T, B, *] ([B, T, *] with batch_first) of sequences of the given
    lengths. With enforce_sorted the lengths must be decreasing; otherwise the batch is sorted
    here and the PackedSequence remembers the permutation."""
    lengths = _lengths_list(lengths, "pack_padded_sequence")
    if not isinstance(input, wick.Tensor):
        raise TypeError(f"pack_padded_sequence(): input must be a Tensor; got "
                        f"{type(input).__name__}")
    if input.dim() < 2:
        raise RuntimeError(f"[pack_padded_sequence] input must have at least 2 dimensions "
                           f"(steps and batch); got {input.dim()}-D")
    batch_dim = 0 if batch_first else 1
    if len(lengths) != input.size(batch_dim):
        raise RuntimeError(f"[pack_padded_sequence] Expected `len(lengths)` to be equal to "
                           f"batch_size, but got "
                           f"{len(lengths)} (batch_size={input.size(batch_dim)})")
    if enforce_sorted:
        if any(a < b for a, b in zip(lengths, lengths[1:])):
            raise RuntimeError("[pack_padded_sequence] `lengths` array must be sorted in "
                               "decreasing order when `enforce_sorted` is True. You can pass "
                               "`enforce_sorted=False` to pack_padded_sequence and/or "
                               "pack_sequence to sidestep this requirement if you do not need "
                               "ONNX exportability.")
        sorted_indices = None
        order = list(range(len(lengths)))
    else:
        order = sorted(range(len(lengths)), key=lambda i: -lengths[i])  # stable, as torch.sort
        sorted_indices = wick.tensor(order, dtype=wick.int64, device=input.device)
    sorted_lengths = [lengths[i] for i in order]
    if not sorted_lengths or input.numel() == 0:
        raise RuntimeError("[pack_padded_sequence] Cannot pack empty tensors.")
    if sorted_lengths[-1] <= 0:
        raise RuntimeError("[pack_padded_sequence] Length of all samples has to be greater than "
                           "0, but found an element in 'lengths' that is <= 0")
    steps = input.size(1 - batch_dim)
    if sorted_lengths[0] > steps:
        raise RuntimeError(f"[pack_padded_sequence] the longest length {sorted_lengths[0]} "
                           f"exceeds the sequence's {steps} steps")
    batch = len(lengths)
    batch_sizes = [sum(1 for n in sorted_lengths if n > t) for t in range(sorted_lengths[0])]
    # Row t * B + b of the time-major input, for each step t and each active sequence b.
    if batch_first:
        rows = [order[b] * steps + t for t, bs in enumerate(batch_sizes) for b in range(bs)]
        flat = input.reshape(batch * steps, *input.shape[2:])
    else:
        rows = [t * batch + order[b] for t, bs in enumerate(batch_sizes) for b in range(bs)]
        flat = input.reshape(steps * batch, *input.shape[2:])
    data = flat.index_select(0, wick.tensor(rows, dtype=wick.int64, device=input.device))
    return PackedSequence(data, wick.tensor(batch_sizes, dtype=wick.int64), sorted_indices, None)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """The inverse of pack_padded_sequence: (padded [T, B, *] or [B, T, *], lengths), in the
    batch's original order."""
    if not isinstance(sequence, PackedSequence):
        raise TypeError(f"pad_packed_sequence(): expected a PackedSequence; got "
                        f"{type(sequence).__name__}")
    data, batch_sizes = sequence.data, [int(b) for b in sequence.batch_sizes.tolist()]
    steps, batch = len(batch_sizes), batch_sizes[0]
    if total_length is not None:
        if total_length < steps:
            raise ValueError("[pad_packed_sequence] Expected total_length to be at least the "
                             "length of the longest sequence in input, but got "
                             f"total_length={total_length} and max sequence length being "
                             f"{steps}")
        steps = total_length
    n = data.size(0)
    # Every padded position reads row n: one extra row holding the padding value.
    pad = wick.full((1, *data.shape[1:]), padding_value, dtype=data.dtype, device=data.device)
    extended = wick.cat([data, pad], 0)
    rows, offset = [], 0
    positions = [[n] * batch for _ in range(steps)]
    for t, bs in enumerate(batch_sizes):
        for b in range(bs):
            positions[t][b] = offset + b
        offset += bs
    if batch_first:
        rows = [positions[t][b] for b in range(batch) for t in range(steps)]
        shape = (batch, steps, *data.shape[1:])
    else:
        rows = [positions[t][b] for t in range(steps) for b in range(batch)]
        shape = (steps, batch, *data.shape[1:])
    padded = extended.index_select(
        0, wick.tensor(rows, dtype=wick.int64, device=data.device)).reshape(shape)
    lengths = [sum(1 for bs in batch_sizes if bs > b) for b in range(batch)]
    lengths = wick.tensor(lengths, dtype=wick.int64)
    if sequence.unsorted_indices is not None:
        unsorted = sequence.unsorted_indices
        padded = padded.index_select(0 if batch_first else 1, unsorted)
        lengths = lengths[unsorted.cpu()]
    return padded, lengths


def pad_sequence(sequences, batch_first=False, padding_value=0.0):
    """Stacks tensors [L_i, *] of different lengths into [max L, B, *] ([B, max L, *] with
    batch_first), padding with padding_value."""
    if isinstance(sequences, wick.Tensor):
        sequences = sequences.unbind(0) if hasattr(sequences, "unbind") else list(sequences)
    sequences = list(sequences)
    if not sequences:
        raise RuntimeError("[pad_sequence] received an empty list of sequences")
    for s in sequences:
        if not isinstance(s, wick.Tensor):
            raise TypeError(f"pad_sequence(): expected a list of Tensors; got "
                            f"{type(s).__name__}")
        if s.dim() < 1 or tuple(s.shape[1:]) != tuple(sequences[0].shape[1:]):
            raise RuntimeError("[pad_sequence] every sequence must have the trailing shape "
                               f"{tuple(sequences[0].shape[1:])}; got {tuple(s.shape)}")
    longest = max(s.size(0) for s in sequences)
    padded = []
    for s in sequences:
        missing = longest - s.size(0)
        if missing:
            fill = wick.full((missing, *s.shape[1:]), padding_value, dtype=s.dtype,
                             device=s.device)
            s = wick.cat([s, fill], 0)
        padded.append(s)
    return wick.stack(padded, 0 if batch_first else 1)


def pack_sequence(sequences, enforce_sorted=True):
    """Packs a list of tensors [L_i, *] of different lengths."""
    lengths = [s.size(0) for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    """The list of tensors [L_i, *] that a PackedSequence holds, in their original order."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return [padded[i][:int(n)] for i, n in enumerate(lengths.tolist())]
