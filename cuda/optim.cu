// CUDA kernels for the fused optimizer updates (core/kernels.h): one pass over a parameter, its
// gradient and its state, the formulas of core/cpu/optim_kernels.cpp in the compute type.
#include "cuda/kernels.h"
#include "cuda/loops.cuh"

namespace wick::cuda {

namespace {

template <class T>
struct AdamFn {
  using C = compute_t<T>;
  C b1, b2, eps, wd, decay, step_size, bc2_sqrt;
  bool decoupled;

  __device__ void operator()(char** p) const {
    T& param = *reinterpret_cast<T*>(p[0]);
    T& exp_avg = *reinterpret_cast<T*>(p[2]);
    T& exp_avg_sq = *reinterpret_cast<T*>(p[3]);
    C w = C(param), g = C(*reinterpret_cast<const T*>(p[1]));
    if (wd != C(0)) {
      if (decoupled) {
        w *= decay;
      } else {
        g += wd * w;
      }
    }
    C m = b1 * C(exp_avg) + (C(1) - b1) * g;
    C v = b2 * C(exp_avg_sq) + (C(1) - b2) * g * g;
    exp_avg = T(m);
    exp_avg_sq = T(v);
    param = T(w - step_size * m / (d_sqrt(v) / bc2_sqrt + eps));
  }
};

void adam_step(Tensor& param, const Tensor& grad, Tensor& exp_avg, Tensor& exp_avg_sq,
               const AdamStepParams& p) {
  visit_floating("adam_step", param.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    AdamFn<T> f{C(p.beta1),
                C(p.beta2),
                C(p.eps),
                C(p.weight_decay),
                C(1.0 - p.lr * p.weight_decay),
                C(p.lr / p.bias_correction1),
                C(std::sqrt(p.bias_correction2)),
                p.decoupled_weight_decay};
    launch_elementwise<4>({&param, &grad, &exp_avg, &exp_avg_sq}, f);
  });
}

template <class T>
struct SgdFn {
  using C = compute_t<T>;
  C lr, momentum, keep, wd;
  bool nesterov, first_step, with_momentum;

  __device__ void operator()(char** p) const {
    T& param = *reinterpret_cast<T*>(p[0]);
    C w = C(param);
    C d = C(*reinterpret_cast<const T*>(p[1])) + wd * w;
    if (!with_momentum) {
      param = T(w - lr * d);
      return;
    }
    T& buffer = *reinterpret_cast<T*>(p[2]);
    C b = first_step ? d : momentum * C(buffer) + keep * d;
    buffer = T(b);
    param = T(w - lr * (nesterov ? d + momentum * b : b));
  }
};

void sgd_step(Tensor& param, const Tensor& grad, Tensor& buffer, const SgdStepParams& p) {
  visit_floating("sgd_step", param.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    bool with_momentum = p.momentum != 0;
    SgdFn<T> f{C(p.lr),    C(p.momentum), C(1.0 - p.dampening), C(p.weight_decay),
               p.nesterov, p.first_step,  with_momentum};
    if (with_momentum) {
      launch_elementwise<3>({&param, &grad, &buffer}, f);
    } else {
      launch_elementwise<3>({&param, &grad, &grad}, f);  // no buffer: the third slot is unused
    }
  });
}

}  // namespace

void register_optim_kernels(KernelRegistry& r) {
  r.add<AdamStepKernel>(OpKey::adam_step, kCUDA, adam_step);
  r.add<SgdStepKernel>(OpKey::sgd_step, kCUDA, sgd_step);
}

}  // namespace wick::cuda
