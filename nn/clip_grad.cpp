#include "nn/clip_grad.h"

#include <cmath>

#include "core/grad_mode.h"
#include "core/host_read.h"
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
  // Note [clipping without a host read]
  // The total norm and the coefficient stay tensors and every gradient is multiplied by
  // min(coefficient, 1), as PyTorch's foreach path does: no value crosses to the host, so a GPU
  // step does not wait for it and a traced training step replays the clipping with each step's
  // own norm (a number read here would freeze the first step's coefficient). Multiplying by 1 is
  // exact. The total is accumulated in float64 so that many small gradients do not lose
  // precision; the common orders (2, inf) take each gradient's norm in its own dtype, as PyTorch
  // does: a float64 copy of a large gradient would cost more than the whole optimizer step.
  std::vector<Tensor> parts;
  for (const Tensor& g : grads) {
    if (g.numel() == 0) continue;
    if (std::isinf(norm_type)) {
      parts.push_back(amax(abs(g)).to(kFloat64));
    } else if (norm_type == 2.0) {
      // A 16-bit norm overflows at 65504; a float32 copy is half the size of a float64 one.
      bool low = g.dtype() == kFloat16 || g.dtype() == kBFloat16;
      Tensor n = norm(low ? g.to(kFloat32) : g).to(kFloat64);
      parts.push_back(n * n);
    } else {
      parts.push_back(pow(abs(g.to(kFloat64)), norm_type).sum());
    }
  }
  Tensor total = zeros({}, TensorOptions(kFloat64).with_device(grads.front().device()));
  if (!parts.empty()) {
    Tensor all = stack(parts);
    total = std::isinf(norm_type) ? amax(all) : pow(all.sum(), 1.0 / norm_type);
  }
  if (error_if_nonfinite) {
    note_host_read("clip_grad_norm_(error_if_nonfinite=True)");  // Note [host reads]
    double value = total.item<double>();
    check_state(std::isfinite(value), "clip_grad_norm_", "the total norm of order ", norm_type,
                " of the gradients is ", value,
                ", so they cannot be clipped; set error_if_nonfinite=False to scale them by the "
                "non-finite norm anyway");
  }
  // PyTorch's rule: every gradient is scaled by the same min(coefficient, 1). A NaN total gives
  // a NaN coefficient and an infinite one gives 0, and both reach every gradient.
  Tensor coefficient = clamp_max(max_norm / (total + 1e-6), 1.0);
  for (Tensor& g : grads) g.mul_(coefficient.to(g.dtype()));
  return total.to(grads.front().dtype());
}

}  // namespace wick::nn::utils
