// CPU softmax and log_softmax along one dim, computed stably: subtract the maximum before exp, so
// no exponent overflows, and take log_softmax as x - max - log(sum(exp(x - max))) rather than the
// log of a softmax that may have underflowed to zero.
#include <cmath>

#include "core/cpu/loops.h"
#include "core/cpu/register.h"

namespace wick::cpu {

namespace {

// `in` and `out` are contiguous; the dim is viewed as [outer, size, inner].
template <bool kLog>
void softmax_kernel(const Tensor& in, Tensor& out, int64_t dim) {
  int64_t size = in.dim() == 0 ? 1 : in.size(dim), outer = 1, inner = 1;
  for (int64_t d = 0; d < dim; ++d) outer *= in.size(d);
  for (int64_t d = dim + 1; d < in.dim(); ++d) inner *= in.size(d);
  visit_floating(kLog ? "log_softmax" : "softmax", in.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    const T* src = static_cast<const T*>(in.data_ptr());
    T* dst = out.data<T>();
    parallel_for(outer * inner, std::max<int64_t>(1, kParallelGrain / size),
                 [&](int64_t b, int64_t e) {
                   for (int64_t r = b; r < e; ++r) {
                     const T* x = src + (r / inner) * size * inner + r % inner;
                     T* y = dst + (r / inner) * size * inner + r % inner;
                     C max = C(x[0]);
                     for (int64_t i = 1; i < size; ++i) max = std::max(max, C(x[i * inner]));
                     C sum = 0;
                     for (int64_t i = 0; i < size; ++i) sum += std::exp(C(x[i * inner]) - max);
                     if constexpr (kLog) {
                       C log_sum = std::log(sum);
                       for (int64_t i = 0; i < size; ++i)
                         y[i * inner] = T(C(x[i * inner]) - max - log_sum);
                     } else {
                       C scale = C(1) / sum;
                       for (int64_t i = 0; i < size; ++i)
                         y[i * inner] = T(std::exp(C(x[i * inner]) - max) * scale);
                     }
                   }
                 });
  });
}

}  // namespace

void register_softmax_kernels(KernelRegistry& r) {
  r.add<SoftmaxKernel>(OpKey::softmax, kCPU, softmax_kernel<false>);
  r.add<SoftmaxKernel>(OpKey::log_softmax, kCPU, softmax_kernel<true>);
}

}  // namespace wick::cpu
