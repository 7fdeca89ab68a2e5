// CPU kernels that move or create data: strided copy with dtype conversion, fill, and arange.
#include <cstring>

#include "core/cpu/loops.h"
#include "core/cpu/register.h"

namespace wick::cpu {

namespace {

void copy_kernel(const Tensor& src, Tensor& dst) {
  if (src.dtype() == dst.dtype() && src.is_contiguous() && dst.is_contiguous() &&
      src.shape() == dst.shape()) {
    char* d = static_cast<char*>(dst.data_ptr());
    const char* s = static_cast<const char*>(src.data_ptr());
    parallel_for(
        static_cast<int64_t>(dst.nbytes()), 4 * kParallelGrain,
        [&](int64_t begin, int64_t end) { std::memcpy(d + begin, s + begin, end - begin); });
    return;
  }
  visit_dtype(dst.dtype(), [&](auto dst_tag) {
    using To = typename decltype(dst_tag)::type;
    visit_dtype(src.dtype(), [&](auto src_tag) {
      using From = typename decltype(src_tag)::type;
      unary_loop<To, From>(src, dst, [](From x) { return convert<To>(x); });
    });
  });
}

void fill_kernel(Tensor& out, Scalar value) {
  visit_dtype(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T v = T(value.to<compute_t<T>>());
    ElementwiseLoop<1> loop({&out});
    loop.run([v](char** p, const int64_t* s, int64_t n) {
      for (int64_t i = 0; i < n; ++i) *reinterpret_cast<T*>(p[0] + i * s[0]) = v;
    });
  });
}

void arange_kernel(Tensor& out, double start, double step) {
  visit_dtype(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* o = out.data<T>();  // the front function allocates it contiguous
    parallel_for(out.numel(), kParallelGrain, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        o[i] = T(static_cast<compute_t<T>>(start + static_cast<double>(i) * step));
      }
    });
  });
}

}  // namespace

void register_copy_kernels(KernelRegistry& r) {
  r.add<CopyKernel>(OpKey::copy, kCPU, copy_kernel);
  r.add<FillKernel>(OpKey::fill, kCPU, fill_kernel);
  r.add<ArangeKernel>(OpKey::arange, kCPU, arange_kernel);
}

}  // namespace wick::cpu
