// The per-element formulas of the fused optimizer updates (core/kernels.h's adam_step and
// sgd_step), written once for the CPU loop (core/cpu/optim_kernels.cpp) and the CUDA kernel
// (cuda/optim.cu). Both read each element in its storage type, update it here in the compute type
// C (float32 for the 16-bit types) and store it back, so the two devices agree to the rounding of
// their square roots.
#pragma once

#include <cmath>

#include "core/half.h"  // WICK_HOST_DEVICE
#include "core/kernels.h"

namespace wick {

// The count adam_step's `step` holds (core/kernels.h); throws wick::ValueError naming `op` unless
// it is a float64 scalar on the CPU holding a whole number >= 1.
double adam_step_count(const char* op, const Tensor& step);

template <class C>
struct AdamUpdate {
  C b1, b2, eps, wd, decay, step_size, bc2_sqrt;
  bool decoupled;  // AdamW scales the weight; Adam adds wd * w to the gradient

  // `step`: the update's number (1 for the first), which sets the bias corrections 1 - beta^step.
  AdamUpdate(const AdamStepParams& p, double step)
      : b1(C(p.beta1)),
        b2(C(p.beta2)),
        eps(C(p.eps)),
        wd(C(p.weight_decay)),
        decay(C(1.0 - p.lr * p.weight_decay)),
        step_size(C(p.lr / (1.0 - std::pow(p.beta1, step)))),
        bc2_sqrt(C(std::sqrt(1.0 - std::pow(p.beta2, step)))),
        decoupled(p.decoupled_weight_decay) {}

  // w and the moments m, v in place, from the gradient g.
  WICK_HOST_DEVICE void operator()(C& w, C g, C& m, C& v) const {
    if (wd != C(0)) {
      if (decoupled) {
        w *= decay;
      } else {
        g += wd * w;
      }
    }
    m = b1 * m + (C(1) - b1) * g;
    v = b2 * v + (C(1) - b2) * g * g;
    w = w - step_size * m / (std::sqrt(v) / bc2_sqrt + eps);
  }
};

template <class C>
struct SgdUpdate {
  C lr, momentum, keep, wd;
  bool nesterov;  // steps along d + momentum * b instead of b

  explicit SgdUpdate(const SgdStepParams& p)
      : lr(C(p.lr)),
        momentum(C(p.momentum)),
        keep(C(1.0 - p.dampening)),
        wd(C(p.weight_decay)),
        nesterov(p.nesterov) {}

  // Without momentum: w from the gradient g.
  WICK_HOST_DEVICE void operator()(C& w, C g) const { w = w - lr * (g + wd * w); }

  // With momentum: w and the buffer b in place. On the first step the buffer starts as the
  // gradient and its old contents are not read.
  WICK_HOST_DEVICE void operator()(C& w, C g, C& b, bool first_step) const {
    const C d = g + wd * w;
    b = first_step ? d : momentum * b + keep * d;
    w = w - lr * (nesterov ? d + momentum * b : b);
  }
};

}  // namespace wick
