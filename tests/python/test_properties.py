"""Property tests (hypothesis) against NumPy: binary ops on random broadcastable shapes, basic and
advanced indexing (slices with steps, negative indices, integer arrays), and reductions over random
dims with and without keepdim. The examples come from a fixed, derandomized profile with a bounded
count, so every run checks the same cases and CI stays fast; a failure prints the shrunk example.
"""

import numpy as np
import pytest

hypothesis = pytest.importorskip(
    "hypothesis", reason="hypothesis is not installed (scripts/setup.sh puts it in .venv)")
from hypothesis import given, settings, strategies as st  # noqa: E402
from hypothesis.extra import numpy as hnp  # noqa: E402

import wick  # noqa: E402

settings.register_profile("wick-ci", max_examples=50, derandomize=True, deadline=None,
                          database=None, print_blob=True)
settings.load_profile("wick-ci")

FLOATS = st.floats(-100, 100, allow_nan=False, width=32)


def arrays(shape):
    return hnp.arrays(np.float32, shape, elements=FLOATS)


def to_wick(a):
    return wick.tensor(a.tolist(), dtype=wick.float32) if a.ndim else wick.tensor(float(a))


def check_equal(got, expected, rtol=1e-5, atol=1e-5):
    expected = np.asarray(expected, dtype=np.float64)
    # The shape from the tensor itself: tolist() of an empty tensor loses its trailing dims.
    assert tuple(got.shape) == expected.shape, (tuple(got.shape), expected.shape)
    got = np.asarray(got.tolist(), dtype=np.float64).reshape(expected.shape)
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol)


# ---- broadcasting ---------------------------------------------------------------------------------

BINARY = {
    "add": (lambda a, b: a + b, np.add),
    "sub": (lambda a, b: a - b, np.subtract),
    "mul": (lambda a, b: a * b, np.multiply),
    "maximum": (wick.maximum, np.maximum),
    "minimum": (wick.minimum, np.minimum),
}


@pytest.mark.parametrize("op", sorted(BINARY))
@given(data=st.data())
def test_broadcast_binary_matches_numpy(op, data):
    shapes = data.draw(hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=4,
                                                         max_side=4))
    a = data.draw(arrays(shapes.input_shapes[0]))
    b = data.draw(arrays(shapes.input_shapes[1]))
    ours, theirs = BINARY[op]
    check_equal(ours(to_wick(a), to_wick(b)), theirs(a, b))


@given(data=st.data())
def test_broadcast_division_matches_numpy(data):
    shapes = data.draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=4, max_side=4))
    a = data.draw(arrays(shapes.input_shapes[0]))
    b = data.draw(hnp.arrays(np.float32, shapes.input_shapes[1],
                             elements=st.floats(0.5, 50, width=32)))
    check_equal(to_wick(a) / to_wick(b), a / b, rtol=1e-5)


@given(data=st.data())
def test_broadcast_in_place_matches_numpy(data):
    # In place, only the right-hand side broadcasts: its shape broadcasts to the left's.
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=4, max_side=4))
    drop = data.draw(st.integers(0, len(shape)))
    ones = data.draw(st.lists(st.booleans(), min_size=len(shape), max_size=len(shape)))
    other = tuple(1 if one else n for n, one in zip(shape, ones))[drop:]
    a, b = data.draw(arrays(shape)), data.draw(arrays(other))
    x = to_wick(a)
    x.add_(to_wick(b))
    check_equal(x, a + b)


# ---- indexing -------------------------------------------------------------------------------------

@given(data=st.data())
def test_basic_indexing_matches_numpy(data):
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=4, min_side=1, max_side=5))
    # Steps stay positive (PyTorch and wick refuse negative steps); starts and stops may be
    # negative or out of range, which slices clip; integers index from either end.
    index = data.draw(hnp.basic_indices(shape, min_dims=0, allow_newaxis=True,
                                        allow_ellipsis=True).filter(
        lambda ix: all(not isinstance(k, slice) or k.step is None or k.step > 0
                       for k in (ix if isinstance(ix, tuple) else (ix,)))))
    a = data.draw(arrays(shape))
    check_equal(to_wick(a)[index], a[index])


@given(data=st.data())
def test_advanced_indexing_matches_numpy(data):
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=5))
    a = data.draw(arrays(shape))
    dim = data.draw(st.integers(0, len(shape) - 1))
    n = shape[dim]
    idx = data.draw(hnp.arrays(np.int64, hnp.array_shapes(min_dims=1, max_dims=2, max_side=4),
                               elements=st.integers(-n, n - 1)))
    key = (slice(None),) * dim + (idx,)
    check_equal(to_wick(a)[tuple(key[:-1]) + (wick.tensor(idx.tolist()),)], a[key])
    # A list index and a stepped slice beside it.
    if len(shape) > 1 and dim == 0:
        step = data.draw(st.integers(1, 3))
        check_equal(to_wick(a)[idx.reshape(-1).tolist(), ::step], a[idx.reshape(-1), ::step])


@given(data=st.data())
def test_two_index_tensors_broadcast_together(data):
    shape = data.draw(hnp.array_shapes(min_dims=2, max_dims=3, min_side=1, max_side=5))
    a = data.draw(arrays(shape))
    shapes = data.draw(hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=1, max_dims=2,
                                                         max_side=3))
    i = data.draw(hnp.arrays(np.int64, shapes.input_shapes[0],
                             elements=st.integers(-shape[0], shape[0] - 1)))
    j = data.draw(hnp.arrays(np.int64, shapes.input_shapes[1],
                             elements=st.integers(-shape[1], shape[1] - 1)))
    check_equal(to_wick(a)[wick.tensor(i.tolist()), wick.tensor(j.tolist())], a[i, j])


# ---- reductions -----------------------------------------------------------------------------------

REDUCTIONS = {
    "sum": (lambda x, d, k: x.sum(d, keepdim=k), np.sum),
    "mean": (lambda x, d, k: x.mean(d, keepdim=k), np.mean),
    "amax": (lambda x, d, k: x.amax(d, keepdim=k), np.amax),
    "amin": (lambda x, d, k: x.amin(d, keepdim=k), np.amin),
}


@pytest.mark.parametrize("op", sorted(REDUCTIONS))
@given(data=st.data())
def test_reductions_match_numpy(op, data):
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=4, min_side=1, max_side=5))
    a = data.draw(arrays(shape))
    # One dim or a set of distinct dims, each either counted from the end or from the start.
    dims = data.draw(st.lists(st.integers(0, len(shape) - 1), min_size=1, max_size=len(shape),
                              unique=True))
    dims = [d - len(shape) if data.draw(st.booleans()) else d for d in dims]
    keepdim = data.draw(st.booleans())
    ours, theirs = REDUCTIONS[op]
    dim = dims[0] if len(dims) == 1 else tuple(dims)
    expected = theirs(a.astype(np.float64), axis=dim, keepdims=keepdim)
    check_equal(ours(to_wick(a), dim, keepdim), expected, rtol=1e-4, atol=1e-3)


@given(a=hnp.arrays(np.float32, hnp.array_shapes(min_dims=0, max_dims=4, max_side=5),
                    elements=FLOATS))
def test_full_reductions_match_numpy(a):
    x = to_wick(a)
    check_equal(x.sum(), np.sum(a, dtype=np.float64), rtol=1e-4, atol=1e-3)
    if a.size:
        check_equal(x.amax(), np.amax(a))
        check_equal(x.amin(), np.amin(a))
