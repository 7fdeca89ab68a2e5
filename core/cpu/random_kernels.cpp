// CPU kernels for random fills. Element i depends only on (seed, offset, i) - see core/philox.h -
// so the result is the same for any number of threads.
#include <cmath>

#include "core/cpu/loops.h"
#include "core/cpu/register.h"
#include "core/philox.h"

namespace wick::cpu {

namespace {

// Floating dtypes: uniform in [a, b). Integer dtypes: uniform integers in [a, b) (randint).
void uniform_kernel(Tensor& out, double a, double b, PhiloxState state) {
  visit_dtype(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    T* o = out.data<T>();  // allocated contiguous by the front function
    parallel_for(out.numel(), kParallelGrain, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        double u = uniform_at(state.seed, state.offset, i);
        if constexpr (std::is_floating_point_v<C>) {
          C v = static_cast<C>(a + (b - a) * u);
          o[i] = T(v < C(b) ? v : C(a));  // rounding to float must not reach b
        } else {
          o[i] = T(static_cast<C>(a + std::floor((b - a) * u)));
        }
      }
    });
  });
}

void normal_kernel(Tensor& out, double mean, double stddev, PhiloxState state) {
  visit_floating("normal", out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* o = out.data<T>();
    parallel_for(out.numel(), kParallelGrain, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        o[i] = T(static_cast<compute_t<T>>(mean + stddev * normal_at(state.seed, state.offset, i)));
      }
    });
  });
}

}  // namespace

void register_random_kernels(KernelRegistry& r) {
  r.add<RandomKernel>(OpKey::uniform, kCPU, uniform_kernel);
  r.add<RandomKernel>(OpKey::normal, kCPU, normal_kernel);
}

}  // namespace wick::cpu
