// The activations with attributes (elu, softplus, hardtanh, ...). Their rows are in the op table
// (core/ops/op_list.h) like every kernel op's; these are the front functions of the rows whose api
// column is `custom`. Plain rows (floor, tan, isnan, ...) and the binary rows (remainder, atan2,
// ...) get their functions generated in elementwise.h.
#pragma once

#include "core/tensor.h"

namespace wick {

Tensor elu(const Tensor& x, double alpha = 1.0);
Tensor softplus(const Tensor& x, double beta = 1.0, double threshold = 20.0);
Tensor mish(const Tensor& x);
Tensor hardtanh(const Tensor& x, double min_val = -1.0, double max_val = 1.0);
Tensor relu6(const Tensor& x);  // hardtanh(x, 0, 6), as PyTorch computes it
Tensor hardswish(const Tensor& x);
Tensor hardsigmoid(const Tensor& x);

}  // namespace wick
