"""Lab 01: a tensor is storage + offset + shape + strides. These functions do the arithmetic that
wick's views do (core/shape.cpp, core/ops/ on views), on plain tuples, so the tests can compare
every answer with wick's own tensors.

A tensor's element at index (i0, i1, ...) lives at storage[offset + i0*s0 + i1*s1 + ...]."""


def contiguous_strides(shape):
    """Row-major strides: the last dim has stride 1, each earlier one the product of the sizes
    after it. contiguous_strides((2, 3, 4)) == (12, 4, 1)."""
    # BEGIN SOLUTION: walk the shape from the right, multiplying sizes
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step *= max(size, 1)
    return tuple(reversed(strides))
    # END SOLUTION


def is_contiguous(shape, strides):
    """True if the strides are row-major for this shape; dims of size 1 may have any stride."""
    # BEGIN SOLUTION: compare with contiguous_strides, skipping size-1 dims
    expected = contiguous_strides(shape)
    return all(size == 1 or s == e for size, s, e in zip(shape, strides, expected))
    # END SOLUTION


def element_offset(index, strides, offset=0):
    """Where element `index` lives in storage (as_strided's rule)."""
    # BEGIN SOLUTION: offset plus the dot product of index and strides
    return offset + sum(i * s for i, s in zip(index, strides))
    # END SOLUTION


def permute(shape, strides, dims):
    """The view with its dims reordered: dim k of the result is dim dims[k] of the input.
    No data moves; returns (shape, strides)."""
    # BEGIN SOLUTION: pick shape[d] and strides[d] for d in dims
    return tuple(shape[d] for d in dims), tuple(strides[d] for d in dims)
    # END SOLUTION


def broadcast_shapes(a, b):
    """NumPy's rule: align on the right; sizes must be equal or one of them 1."""
    # BEGIN SOLUTION: pad the shorter with leading 1s, then take the non-1 size per dim
    n = max(len(a), len(b))
    a, b = (1,) * (n - len(a)) + tuple(a), (1,) * (n - len(b)) + tuple(b)
    out = []
    for x, y in zip(a, b):
        if x != y and 1 not in (x, y):
            raise ValueError(f"shapes {a} and {b} cannot broadcast: {x} vs {y}")
        out.append(y if x == 1 else x)
    return tuple(out)
    # END SOLUTION


def expand(shape, strides, new_shape):
    """Broadcast a view to new_shape without copying: new leading dims and expanded size-1 dims
    get stride 0. Raises ValueError if a size other than 1 would change."""
    # BEGIN SOLUTION: right-align; leading dims and 1 -> n dims get stride 0
    lead = len(new_shape) - len(shape)
    if lead < 0:
        raise ValueError("expand cannot drop dims")
    out = [0] * lead
    for size, stride, new in zip(shape, strides, new_shape[lead:]):
        if size == new:
            out.append(stride)
        elif size == 1:
            out.append(0)
        else:
            raise ValueError(f"cannot expand size {size} to {new}")
    return tuple(new_shape), tuple(out)
    # END SOLUTION


def view_strides(shape, strides, new_shape):
    """Strides for viewing the same storage with new_shape, or None when no strides exist (then
    view() must fail and reshape() copies). PyTorch's computeStride: the new dims must split or
    merge only old dims that are contiguous with each other. Example: a (2, 3) tensor permuted
    to (3, 2) with strides (1, 3) cannot be viewed as (6,)."""
    # BEGIN SOLUTION: group old dims into contiguous chunks; each chunk maps to a run of new dims
    numel = 1
    for s in shape:
        numel *= s
    if numel == 0 or len(shape) == 0:
        return contiguous_strides(new_shape)
    new_strides = [0] * len(new_shape)
    view_d = len(new_shape) - 1
    chunk_base_stride = strides[-1]
    tensor_numel, view_numel = 1, 1
    for d in range(len(shape) - 1, -1, -1):
        tensor_numel *= shape[d]
        # a chunk ends at d if d is the first dim or dim d-1 is not contiguous with dim d
        if d == 0 or (shape[d - 1] != 1 and strides[d - 1] != tensor_numel * chunk_base_stride):
            while view_d >= 0 and (view_numel < tensor_numel or new_shape[view_d] == 1):
                new_strides[view_d] = view_numel * chunk_base_stride
                view_numel *= new_shape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if d > 0:
                chunk_base_stride = strides[d - 1]
                tensor_numel, view_numel = 1, 1
    if view_d != -1:
        return None
    return tuple(new_strides)
    # END SOLUTION


def contiguous(storage, shape, strides, offset=0):
    """The elements of the view in row-major order, as a list: what .contiguous() copies."""
    # BEGIN SOLUTION: iterate every index in row-major order and read storage[element_offset(...)]
    out = []

    def walk(dim, index):
        if dim == len(shape):
            out.append(storage[element_offset(index, strides, offset)])
            return
        for i in range(shape[dim]):
            walk(dim + 1, index + [i])

    walk(0, [])
    return out
    # END SOLUTION
