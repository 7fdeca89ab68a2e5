"""Lab 01: a tensor is storage + offset + shape + strides. These functions do the arithmetic that
wick's views do (core/shape.cpp, core/ops/ on views), on plain tuples, so the tests can compare
every answer with wick's own tensors.

A tensor's element at index (i0, i1, ...) lives at storage[offset + i0*s0 + i1*s1 + ...]."""


def contiguous_strides(shape):
    """Row-major strides: the last dim has stride 1, each earlier one the product of the sizes
    after it. contiguous_strides((2, 3, 4)) == (12, 4, 1)."""
    # TODO(01): contiguous_strides: walk the shape from the right, multiplying sizes
    raise NotImplementedError("contiguous_strides: walk the shape from the right, multiplying sizes")


def is_contiguous(shape, strides):
    """True if the strides are row-major for this shape; dims of size 1 may have any stride."""
    # TODO(01): is_contiguous: compare with contiguous_strides, skipping size-1 dims
    raise NotImplementedError("is_contiguous: compare with contiguous_strides, skipping size-1 dims")


def element_offset(index, strides, offset=0):
    """Where element `index` lives in storage (as_strided's rule)."""
    # TODO(01): element_offset: offset plus the dot product of index and strides
    raise NotImplementedError("element_offset: offset plus the dot product of index and strides")


def permute(shape, strides, dims):
    """The view with its dims reordered: dim k of the result is dim dims[k] of the input.
    No data moves; returns (shape, strides)."""
    # TODO(01): permute: pick shape[d] and strides[d] for d in dims
    raise NotImplementedError("permute: pick shape[d] and strides[d] for d in dims")


def broadcast_shapes(a, b):
    """NumPy's rule: align on the right; sizes must be equal or one of them 1."""
    # TODO(01): broadcast_shapes: pad the shorter with leading 1s, then take the non-1 size per dim
    raise NotImplementedError("broadcast_shapes: pad the shorter with leading 1s, then take the non-1 size per dim")


def expand(shape, strides, new_shape):
    """Broadcast a view to new_shape without copying: new leading dims and expanded size-1 dims
    get stride 0. Raises ValueError if a size other than 1 would change."""
    # TODO(01): expand: right-align; leading dims and 1 -> n dims get stride 0
    raise NotImplementedError("expand: right-align; leading dims and 1 -> n dims get stride 0")


def view_strides(shape, strides, new_shape):
    """Strides for viewing the same storage with new_shape, or None when no strides exist (then
    view() must fail and reshape() copies). PyTorch's computeStride: the new dims must split or
    merge only old dims that are contiguous with each other. Example: a (2, 3) tensor permuted
    to (3, 2) with strides (1, 3) cannot be viewed as (6,)."""
    # TODO(01): view_strides: group old dims into contiguous chunks; each chunk maps to a run of new dims
    raise NotImplementedError("view_strides: group old dims into contiguous chunks; each chunk maps to a run of new dims")


def contiguous(storage, shape, strides, offset=0):
    """The elements of the view in row-major order, as a list: what .contiguous() copies."""
    # TODO(01): contiguous: iterate every index in row-major order and read storage[element_offset(...)]
    raise NotImplementedError("contiguous: iterate every index in row-major order and read storage[element_offset(...)]")
