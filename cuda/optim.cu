// CUDA kernels for the fused optimizer updates (core/kernels.h): one pass over a parameter, its
// gradient and its state, with core/optim_update.h's formulas (shared with the CPU kernels).
#include "core/optim_update.h"
#include "cuda/kernels.h"
#include "cuda/loops.cuh"

namespace wick::cuda {

namespace {

template <class T>
struct AdamFn {
  using C = compute_t<T>;
  AdamUpdate<C> update;

  __device__ void operator()(char** p) const {
    T& param = *reinterpret_cast<T*>(p[0]);
    T& exp_avg = *reinterpret_cast<T*>(p[2]);
    T& exp_avg_sq = *reinterpret_cast<T*>(p[3]);
    C w = C(param), m = C(exp_avg), v = C(exp_avg_sq);
    update(w, C(*reinterpret_cast<const T*>(p[1])), m, v);
    param = T(w);
    exp_avg = T(m);
    exp_avg_sq = T(v);
  }
};

void adam_step(Tensor& param, const Tensor& grad, Tensor& exp_avg, Tensor& exp_avg_sq,
               const Tensor& step, const AdamStepParams& p) {
  // The count lives on the CPU (a host read, no device synchronisation); the corrections it
  // gives travel to the kernel as arguments.
  const double count = adam_step_count("adam_step", step);
  visit_floating("adam_step", param.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    AdamFn<T> f{AdamUpdate<compute_t<T>>(p, count)};
    launch_elementwise<4>({&param, &grad, &exp_avg, &exp_avg_sq}, f);
  });
}

template <class T>
struct SgdFn {
  using C = compute_t<T>;
  SgdUpdate<C> update;
  bool first_step, with_momentum;

  __device__ void operator()(char** p) const {
    T& param = *reinterpret_cast<T*>(p[0]);
    C w = C(param), g = C(*reinterpret_cast<const T*>(p[1]));
    if (!with_momentum) {
      update(w, g);
      param = T(w);
      return;
    }
    T& buffer = *reinterpret_cast<T*>(p[2]);
    C b = first_step ? C(0) : C(buffer);  // the first step does not read the buffer
    update(w, g, b, first_step);
    buffer = T(b);
    param = T(w);
  }
};

void sgd_step(Tensor& param, const Tensor& grad, Tensor& buffer, const SgdStepParams& p) {
  visit_floating("sgd_step", param.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    bool with_momentum = p.momentum != 0;
    SgdFn<T> f{SgdUpdate<compute_t<T>>(p), p.first_step, with_momentum};
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
