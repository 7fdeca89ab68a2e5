#include "nn/clip_grad.h"

#include <cmath>

#include "core/grad_mode.h"
#include "core/ops.h"

namespace wick::nn::utils {

Tensor clip_grad_norm_(const std::vector<Tensor>& parameters, double max_norm, double norm_type,
                       bool error_if_nonfinite) {
  check_value(max_norm >= 0, "clip_grad_norm_", "max_norm must be non-negative; got ", max_norm);
  check_value(norm_type > 0, "clip_grad_norm_", "norm_type must be positive; got ", norm_type);
  NoGradGuard no_grad;
  std::vector<Tensor> grads;
  for (const Tensor& p : parameters) {
    if (p.grad().defined()) grads.push_back(p.grad());
  }
  if (grads.empty()) return zeros({});
  // Accumulate the total in float64 so that many small gradients do not lose precision. The
  // common orders (2, inf) take each gradient's norm in its own dtype, as PyTorch does: a
  // float64 copy of a large gradient would cost more than the whole optimizer step.
  double total = 0;
  for (const Tensor& g : grads) {
    if (g.numel() == 0) continue;
    if (std::isinf(norm_type)) {
      total = std::max(total, amax(abs(g)).item<double>());
    } else if (norm_type == 2.0) {
      // A 16-bit norm overflows at 65504; a float32 copy is half the size of a float64 one.
      bool low = g.dtype() == kFloat16 || g.dtype() == kBFloat16;
      double n = norm(low ? g.to(kFloat32) : g).item<double>();
      total += n * n;
    } else {
      total += pow(abs(g.to(kFloat64)), norm_type).sum().item<double>();
    }
  }
  if (!std::isinf(norm_type)) total = std::pow(total, 1.0 / norm_type);
  check_state(!error_if_nonfinite || std::isfinite(total), "clip_grad_norm_",
              "the total norm of order ", norm_type, " of the gradients is ", total,
              ", so they cannot be clipped; set error_if_nonfinite=False to scale them by the "
              "non-finite norm anyway");
  // PyTorch's rule: every gradient is scaled by the same min(coefficient, 1). A NaN total gives
  // a NaN coefficient and an infinite one gives 0, and both still reach every gradient (NaN
  // fails `coefficient < 1`, which once left all gradients unscaled beside a NaN one).
  double coefficient = max_norm / (total + 1e-6);
  if (!(coefficient >= 1.0)) {
    for (Tensor& g : grads) g.mul_(coefficient);
  }
  return scalar_tensor(total, grads.front().dtype());
}

}  // namespace wick::nn::utils
