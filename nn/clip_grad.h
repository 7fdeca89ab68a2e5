// Gradient clipping (torch.nn.utils.clip_grad_norm_): rescales the gradients of `parameters` so
// that their joint norm is at most max_norm, and returns the norm they had before.
#pragma once

#include <limits>
#include <vector>

#include "core/tensor.h"

namespace wick::nn::utils {

constexpr double kInfNorm = std::numeric_limits<double>::infinity();

// norm_type 2 is the Euclidean norm of all gradients concatenated; kInfNorm is their largest
// absolute value. With error_if_nonfinite, a nan or inf norm raises std::runtime_error (PyTorch's
// RuntimeError); without, every gradient is scaled by the same non-finite coefficient.
Tensor clip_grad_norm_(const std::vector<Tensor>& parameters, double max_norm,
                       double norm_type = 2.0, bool error_if_nonfinite = false);

}  // namespace wick::nn::utils
