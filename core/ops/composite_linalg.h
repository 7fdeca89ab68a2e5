// Linear algebra that is a composition of other ops: dot, outer, addmm, baddbmm, tensordot, kron,
// einsum, cross, cdist, diag, diagonal, trace.
//
// Note [compositions]
// The functions of the composite_*.h headers are written entirely with existing wick ops (views,
// elementwise math, reductions, bmm, index_select, scatter_add, where). They add no row to the op
// table, no kernel and no backward node, so:
//   - they run on every device that runs the ops they are made of (and the CPU fallback covers
//     the rest), with nothing to port;
//   - their gradients, and the gradients of those gradients, come from the ops' own backward
//     formulas (docs/architecture.md, "Higher-order gradients").
// The price is speed: an einsum is a few permutes, reshapes and bmm calls rather than one fused
// kernel, and ops whose output size depends on the data (unique, bincount, repeat_interleave with
// a tensor) read a small tensor on the host first, as PyTorch does before launching a kernel.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace wick {

// The inner product of two 1-D tensors of one size and dtype (a 0-d result).
Tensor dot(const Tensor& a, const Tensor& b);
// a [n] and b [m] -> [n, m] with a[i] * b[j].
Tensor outer(const Tensor& a, const Tensor& b);
// beta * input + alpha * (m1 @ m2); input broadcasts to the product's shape. With beta == 0 the
// input is ignored (its NaNs do not propagate), as in PyTorch.
Tensor addmm(const Tensor& input, const Tensor& m1, const Tensor& m2, const Scalar& beta = 1,
             const Scalar& alpha = 1);
// The same with batches: b1 [B, n, m] @ b2 [B, m, p].
Tensor baddbmm(const Tensor& input, const Tensor& b1, const Tensor& b2, const Scalar& beta = 1,
               const Scalar& alpha = 1);
// Sums the products over a's last `dims` dims and b's first `dims` dims.
Tensor tensordot(const Tensor& a, const Tensor& b, int64_t dims = 2);
// Sums the products over a's dims_a[i] paired with b's dims_b[i].
Tensor tensordot(const Tensor& a, const Tensor& b, const DimList& dims_a, const DimList& dims_b);
// The Kronecker product: the block matrix of a[i, j] * b (any number of dims).
Tensor kron(const Tensor& a, const Tensor& b);
// Einstein summation in PyTorch's syntax: "ij,jk->ik", "bij,bjk", "ii", "...ij->...ji", with
// the implicit output (the subscripts used once, sorted) when there is no "->".
Tensor einsum(const std::string& equation, const std::vector<Tensor>& operands);
// The cross product of 3-vectors along dim (a and b broadcast); dim -1 as PyTorch's default of
// None means the first dim of size 3.
Tensor cross(const Tensor& a, const Tensor& b, std::optional<int64_t> dim = {});
// Pairwise p-norm distances between the rows of x1 [..., P, M] and x2 [..., R, M] -> [..., P, R].
// compute_mode as PyTorch's: "use_mm_for_euclid_dist_if_necessary" (the matmul identity for p = 2
// when P or R > 25), "use_mm_for_euclid_dist" or "donot_use_mm_for_euclid_dist".
Tensor cdist(const Tensor& x1, const Tensor& x2, double p = 2.0,
             const std::string& compute_mode = "use_mm_for_euclid_dist_if_necessary");
// 1-D x: a square matrix with x on its `diagonal`-th diagonal. 2-D x: that diagonal, as 1-D.
Tensor diag(const Tensor& x, int64_t diagonal = 0);
// The diagonal of the dims (dim1, dim2), appended as the last dim: a view of x.
Tensor diagonal(const Tensor& x, int64_t offset = 0, int64_t dim1 = 0, int64_t dim2 = 1);
// The sum of a matrix's main diagonal.
Tensor trace(const Tensor& x);

}  // namespace wick
