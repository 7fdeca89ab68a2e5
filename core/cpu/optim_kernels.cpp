// CPU kernels for the fused optimizer updates (core/kernels.h): one pass over a parameter, its
// gradient and its state, instead of the eight or so elementwise ops (and temporaries) the
// update takes when written with tensor ops. Parameters may have any strides.
#include <cmath>

#include "core/cpu/loops.h"
#include "core/cpu/register.h"

namespace wick::cpu {

namespace {

template <class T>
T& at(char* base, int64_t stride, int64_t i) {
  return *reinterpret_cast<T*>(base + i * stride);
}

void adam_step_kernel(Tensor& param, const Tensor& grad, Tensor& exp_avg, Tensor& exp_avg_sq,
                      const AdamStepParams& p) {
  visit_floating("adam_step", param.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    const C b1 = C(p.beta1), b2 = C(p.beta2), eps = C(p.eps);
    const C wd = C(p.weight_decay), decay = C(1.0 - p.lr * p.weight_decay);
    const C step_size = C(p.lr / p.bias_correction1);
    const C bc2_sqrt = C(std::sqrt(p.bias_correction2));
    const bool decoupled = p.decoupled_weight_decay;
    ElementwiseLoop<4> loop({&param, &grad, &exp_avg, &exp_avg_sq});
    loop.run([&](char** ptr, const int64_t* s, int64_t n) {
      for (int64_t i = 0; i < n; ++i) {
        C w = C(at<T>(ptr[0], s[0], i)), g = C(at<T>(ptr[1], s[1], i));
        if (wd != C(0)) {
          if (decoupled) {
            w *= decay;
          } else {
            g += wd * w;
          }
        }
        C m = b1 * C(at<T>(ptr[2], s[2], i)) + (C(1) - b1) * g;
        C v = b2 * C(at<T>(ptr[3], s[3], i)) + (C(1) - b2) * g * g;
        at<T>(ptr[2], s[2], i) = T(m);
        at<T>(ptr[3], s[3], i) = T(v);
        at<T>(ptr[0], s[0], i) = T(w - step_size * m / (std::sqrt(v) / bc2_sqrt + eps));
      }
    });
  });
}

void sgd_step_kernel(Tensor& param, const Tensor& grad, Tensor& buffer, const SgdStepParams& p) {
  visit_floating("sgd_step", param.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    const C lr = C(p.lr), momentum = C(p.momentum), keep = C(1.0 - p.dampening);
    const C wd = C(p.weight_decay);
    if (p.momentum == 0) {
      ElementwiseLoop<2> loop({&param, &grad});
      loop.run([&](char** ptr, const int64_t* s, int64_t n) {
        for (int64_t i = 0; i < n; ++i) {
          C w = C(at<T>(ptr[0], s[0], i));
          at<T>(ptr[0], s[0], i) = T(w - lr * (C(at<T>(ptr[1], s[1], i)) + wd * w));
        }
      });
      return;
    }
    ElementwiseLoop<3> loop({&param, &grad, &buffer});
    loop.run([&](char** ptr, const int64_t* s, int64_t n) {
      for (int64_t i = 0; i < n; ++i) {
        C w = C(at<T>(ptr[0], s[0], i));
        C d = C(at<T>(ptr[1], s[1], i)) + wd * w;
        C b = p.first_step ? d : momentum * C(at<T>(ptr[2], s[2], i)) + keep * d;
        at<T>(ptr[2], s[2], i) = T(b);
        at<T>(ptr[0], s[0], i) = T(w - lr * (p.nesterov ? d + momentum * b : b));
      }
    });
  });
}

}  // namespace

void register_optim_kernels(KernelRegistry& r) {
  r.add<AdamStepKernel>(OpKey::adam_step, kCPU, adam_step_kernel);
  r.add<SgdStepKernel>(OpKey::sgd_step, kCPU, sgd_step_kernel);
}

}  // namespace wick::cpu
