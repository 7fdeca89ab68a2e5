// Matrix products. matmul follows NumPy/PyTorch: 1-D operands are promoted to matrices and the
// added dim removed afterwards; leading (batch) dims broadcast.
#pragma once

#include "core/tensor.h"

namespace wick {

Tensor matmul(const Tensor& a, const Tensor& b);
// a [n, m] @ b [m, p] -> [n, p]; both must be 2-D (no broadcasting, as torch.mm).
Tensor mm(const Tensor& a, const Tensor& b);
// a [batch, n, m] @ b [batch, m, p] -> [batch, n, p]
Tensor bmm(const Tensor& a, const Tensor& b);
// x @ weight^T + bias, with weight [out_features, in_features] as in nn.Linear.
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias = Tensor());

}  // namespace wick
