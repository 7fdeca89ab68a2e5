// More elementwise math: the remainder and rounding family, atan2, hypot, logaddexp, and the
// activations with attributes (elu, softplus, hardtanh, ...). Their rows are in the op table
// (core/ops/op_list.h) like every kernel op's; these are the front functions of the rows whose api
// column is `custom` and of the new binary rows. Plain rows (floor, tan, isnan, ...) get their
// functions generated in elementwise.h.
#pragma once

#include "core/tensor.h"

namespace wick {

// remainder has the divisor's sign (Python's %, floor division); fmod the dividend's (C's fmod,
// truncated division). Integer division by zero raises, as in PyTorch.
Tensor remainder(const Tensor& a, const Tensor& b);
Tensor remainder(const Tensor& a, const Scalar& b);
Tensor fmod(const Tensor& a, const Tensor& b);
Tensor fmod(const Tensor& a, const Scalar& b);
// Integer inputs are computed in float32.
Tensor atan2(const Tensor& y, const Tensor& x);
Tensor hypot(const Tensor& a, const Tensor& b);
Tensor logaddexp(const Tensor& a, const Tensor& b);  // log(e^a + e^b), without overflow

Tensor elu(const Tensor& x, double alpha = 1.0);
Tensor softplus(const Tensor& x, double beta = 1.0, double threshold = 20.0);
Tensor mish(const Tensor& x);
Tensor hardtanh(const Tensor& x, double min_val = -1.0, double max_val = 1.0);
Tensor relu6(const Tensor& x);  // hardtanh(x, 0, 6), as PyTorch computes it
Tensor hardswish(const Tensor& x);
Tensor hardsigmoid(const Tensor& x);

}  // namespace wick
