"""Lab 10's graded tests: checked sizes against wick's own refusals, the overlap rule against
wick's in-place ops, the IDX parser against the committed MNIST digits and a table of broken
headers, and the fuzzer against a parser with known bugs."""

import gzip
import os
import random
import struct

import numpy as np
import pytest
import wick
from labkit import ROOT, figure, impl

L = impl(__file__, "robust")
DIGITS = os.path.join(ROOT, "assets", "mnist", "t10k-images-idx3-ubyte.gz")


def digits_bytes():
    with gzip.open(DIGITS, "rb") as f:
        return f.read()


@pytest.mark.parametrize("shape,itemsize,expected", [
    ((2, 3, 4), 4, 96),
    ((), 8, 8),
    ((5, 0, 2**62), 4, 0),
    ((2**31, 2**31), 2, 2**63),   # fits in uint64 but not int64: still an overflow
    ((2**62,), 4, None),
    ((2**32, 2**32), 1, None),
    ((3, 2**61), 1, 3 * 2**61),
])
def test_checked_numel(shape, itemsize, expected):
    if expected is None or expected > L.INT64_MAX:
        with pytest.raises(L.SizeOverflow, match="overflow"):
            L.checked_numel(shape, itemsize)
    else:
        assert L.checked_numel(shape, itemsize) == expected
    with pytest.raises(ValueError, match="-3"):
        L.checked_numel((4, -3))


def test_checked_numel_agrees_with_wick():
    """Shapes your rule calls overflowing are exactly those wick refuses to allocate (as float32)."""
    rng = random.Random(3)
    agreed = 0
    for _ in range(40):
        shape = tuple(rng.choice([1, 3, 2**20, 2**31, 2**40, 2**61]) for _ in range(rng.randint(1, 3)))
        try:
            L.checked_numel(shape, 4)
            overflows = False
        except L.SizeOverflow:
            overflows = True
        if overflows:
            with pytest.raises(RuntimeError):
                wick.empty(shape)
            agreed += 1
    assert agreed >= 10
    figure("overflowing shapes refused by both your rule and wick", agreed)


def test_storage_span_of_views():
    x = wick.zeros(4, 6)
    for view in [x, x[1:3], x[:, 2:5], x.t(), x[::2, ::3], x[2:2]]:
        span = L.storage_span(tuple(view.shape), view.stride(), view.storage_offset(), 4)
        if view.numel() == 0:
            assert span is None
            continue
        touched = [view.storage_offset() + sum(i * s for i, s in zip(idx, view.stride()))
                   for idx in np.ndindex(*view.shape)]
        assert span == (min(touched) * 4, (max(touched) + 1) * 4)


def test_overlap_status_matches_wicks_in_place_rule():
    x = wick.arange(12.0)
    cases = {
        "full": (x, x),
        "none": (x[:6], x[6:]),
        "partial": (x[1:], x[:-1]),
    }
    for expected, (out, inp) in cases.items():
        assert L.overlap_status(L.describe(out), L.describe(inp)) == expected
    m = wick.arange(16.0).reshape(4, 4)
    assert L.overlap_status(L.describe(m), L.describe(m.t())) == "partial"
    assert L.overlap_status(L.describe(m[0]), L.describe(m[1])) == "none"
    # wick refuses exactly the partial case, as PyTorch does
    y = wick.arange(12.0)
    y.add_(y)
    y[:6].add_(y[6:])
    with pytest.raises(RuntimeError, match="memory location"):
        y[1:].add_(y[:-1])


def test_parse_idx_reads_the_digits_as_wick_does():
    code, shape, payload = L.parse_idx(digits_bytes())
    assert code == 0x08 and shape == (2000, 28, 28)
    images = np.frombuffer(payload, dtype=np.uint8).reshape(shape)
    expected = wick.datasets.MNIST(train=False).data.numpy()
    np.testing.assert_array_equal(images, expected)
    figure("digits parsed", shape[0])


def header(code, sizes):
    return bytes([0, 0, code, len(sizes)]) + struct.pack(f">{len(sizes)}I", *sizes)


BROKEN = {
    "empty": b"",
    "short magic": b"\x00\x00\x08",
    "bad magic": b"\x01\x00\x08\x01" + struct.pack(">I", 1) + b"\x00",
    "unknown type": header(0x0A, [1]) + b"\x00",
    "no dimensions": bytes([0, 0, 8, 0]),
    "truncated header": bytes([0, 0, 8, 3]) + struct.pack(">I", 2),
    "payload short": header(0x08, [2, 3]) + b"\x00" * 5,
    "payload long": header(0x08, [2, 3]) + b"\x00" * 7,
    "float payload short": header(0x0D, [2]) + b"\x00" * 7,
    "huge sizes": header(0x0E, [2**32 - 1] * 4),
    "size product overflow": header(0x08, [2**32 - 1, 2**32 - 1, 2**32 - 1]),
}


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_parse_idx_rejects_broken_files(name):
    with pytest.raises(ValueError, match=r"\[idx\]"):
        L.parse_idx(BROKEN[name])


def test_mutate_changes_its_input():
    rng = random.Random(0)
    data = digits_bytes()[:64]
    outputs = {L.mutate(data, rng) for _ in range(300)}
    assert data not in outputs
    lengths = {len(o) for o in outputs}
    assert {63, 64, 65} <= lengths and min(lengths) < 63, "bit flips, inserts, deletes and truncation"


def test_fuzzer_finds_the_naive_parsers_bugs():
    seed = header(0x08, [2, 3]) + bytes(range(6))
    findings = L.fuzz(L.naive_parse_idx, [seed], 2000, seed=1)
    kinds = sorted({type(e).__name__ for _, e in findings})
    assert len(findings) > 0 and len(kinds) >= 2, kinds
    figure("naive parser: findings in 2000 mutants", f"{len(findings)} ({', '.join(kinds)})")


def test_fuzzer_finds_nothing_in_your_parser():
    seeds = [digits_bytes()[:16 + 28 * 28 * 2], header(0x0E, [3]) + b"\x00" * 24]
    seeds[0] = header(0x08, [2, 28, 28]) + seeds[0][16:]
    findings = L.fuzz(L.parse_idx, seeds, 3000, seed=2)
    assert findings == [], [repr(e) for _, e in findings[:3]]
    figure("your parser: findings in 3000 mutants", 0)
