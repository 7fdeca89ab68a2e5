// Shape ops that are compositions of others (Note [compositions] in composite_linalg.h): tril,
// triu, flip, roll, tile, repeat_interleave, broadcast_to, movedim, unflatten, take. They have no
// kernel and no backward node of their own, so they run on every device and differentiate (twice)
// through the ops they are made of.
#pragma once

#include <optional>

#include "core/tensor.h"

namespace wick {

// The lower / upper triangle of the last two dims; `diagonal` shifts the boundary (0 is the main
// diagonal, > 0 above it, < 0 below it). The rest is zero.
Tensor tril(const Tensor& x, int64_t diagonal = 0);
Tensor triu(const Tensor& x, int64_t diagonal = 0);
// x with the order of elements reversed along each of `dims` (a copy, as in PyTorch).
Tensor flip(const Tensor& x, const DimList& dims);
// Elements shifted by shifts[i] along dims[i], wrapping around; with no dims, x is rolled as if
// flattened (one shift).
Tensor roll(const Tensor& x, const DimList& shifts, const DimList& dims = {});
// x repeated reps[i] times along each dim; reps shorter than x.dim() are padded with 1s in front
// (unlike Tensor.repeat, which needs at least x.dim() of them).
Tensor tile(const Tensor& x, const DimList& reps);
// Each element repeated `repeats` times along dim (no dim: x flattened first).
Tensor repeat_interleave(const Tensor& x, int64_t repeats, std::optional<int64_t> dim = {});
// Element i (along dim) repeated repeats[i] times; repeats is a 1-D int64 tensor or one element.
Tensor repeat_interleave(const Tensor& x, const Tensor& repeats, std::optional<int64_t> dim = {});
// repeat_interleave(repeats) alone: index i repeated repeats[i] times, [0, 0, 1, 2, 2, ...].
Tensor repeat_interleave(const Tensor& repeats);
Tensor broadcast_to(const Tensor& x, const Shape& shape);  // expand, -1 keeps a size
// The dims `source` moved to positions `destination`; the others keep their order.
Tensor movedim(const Tensor& x, const DimList& source, const DimList& destination);
// dim split into `sizes` (one may be -1).
Tensor unflatten(const Tensor& x, int64_t dim, const Shape& sizes);
// x treated as 1-D, read at `index` (any shape; negative positions count from the end).
Tensor take(const Tensor& x, const Tensor& index);

}  // namespace wick
