// CPU kernels for random fills. Element i depends only on (seed, offset, i) - see core/philox.h -
// so the result is the same for any number of threads.
#include <cmath>

#include "core/cpu/loops.h"
#include "core/cpu/register.h"
#include "core/philox.h"

namespace wick::cpu {

namespace {

// Calls f(i, u) for every i in [begin, end) with u = uniform_at(seed, offset, i), computing each
// Philox block once for its four elements.
template <class F>
void for_each_uniform(const PhiloxState& state, int64_t begin, int64_t end, const F& f) {
  for (int64_t block = begin / 4; block * 4 < end; ++block) {
    Philox4 r = philox4x32(state.seed, state.offset + static_cast<uint64_t>(block));
    for (int k = 0; k < 4; ++k) {
      int64_t i = block * 4 + k;
      if (i >= begin && i < end) f(i, uniform_from_bits(r.x[k]));
    }
  }
}

// Floating dtypes: uniform in [a, b). Integer dtypes: uniform integers in [a, b) (randint).
void uniform_kernel(Tensor& out, double a, double b, PhiloxState state) {
  visit_dtype(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    T* o = out.data<T>();  // allocated contiguous by the front function
    // Threads start on multiples of 4 so that no Philox block is split between two of them.
    parallel_for((out.numel() + 3) / 4, kParallelGrain / 4, [&](int64_t b4, int64_t e4) {
      for_each_uniform(state, b4 * 4, std::min(e4 * 4, out.numel()), [&](int64_t i, double u) {
        if constexpr (std::is_floating_point_v<C>) {
          // Rounded to T first: in float16 and bfloat16 a value just below b can round up to b
          // (the bound is checked after rounding, or [a, b) is broken about once in 2**9 draws).
          T v = T(static_cast<C>(a + (b - a) * u));
          o[i] = C(v) < C(b) ? v : T(static_cast<C>(a));
        } else {
          o[i] = T(static_cast<C>(a + std::floor((b - a) * u)));
        }
      });
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
