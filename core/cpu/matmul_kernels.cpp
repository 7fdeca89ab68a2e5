// The CPU batched matmul kernel: one GEMM per batch entry, chosen by dtype (cpu/gemm.h).
#include <vector>

#include "core/cpu/gemm.h"
#include "core/cpu/loops.h"
#include "core/cpu/register.h"

namespace wick::cpu {

namespace {

MatrixRef matrix(const Tensor& t, int64_t batch, size_t esize) {
  const char* base = static_cast<const char*>(t.data_ptr()) + batch * t.stride(0) * esize;
  return {base, t.stride(1), t.stride(2)};
}

template <class T>
void bmm_naive(const Tensor& a, const Tensor& b, Tensor& out) {  // integer dtypes
  int64_t batches = a.size(0), m = a.size(1), k = a.size(2), n = b.size(2);
  const T* pa = static_cast<const T*>(a.data_ptr());
  const T* pb = static_cast<const T*>(b.data_ptr());
  T* o = out.data<T>();
  for (int64_t i = 0; i < batches; ++i)
    for (int64_t r = 0; r < m; ++r)
      for (int64_t c = 0; c < n; ++c) {
        accumulate_t<T> acc = 0;
        for (int64_t p = 0; p < k; ++p) {
          acc += accumulate_t<T>(pa[i * a.stride(0) + r * a.stride(1) + p * a.stride(2)]) *
                 accumulate_t<T>(pb[i * b.stride(0) + p * b.stride(1) + c * b.stride(2)]);
        }
        o[(i * m + r) * n + c] = static_cast<T>(acc);
      }
}

void bmm_kernel(const Tensor& a, const Tensor& b, Tensor& out) {
  int64_t batches = a.size(0), m = a.size(1), k = a.size(2), n = b.size(2);
  size_t esize = a.element_size();
  auto c_matrix = [&](int64_t i) {
    return MutableMatrixRef{static_cast<char*>(out.data_ptr()) + i * m * n * esize, n, 1};
  };
  auto run = [&](auto tag) {
    using T = typename decltype(tag)::type;
    for (int64_t i = 0; i < batches; ++i) {
      gemm<T>(m, n, k, 1.0, matrix(a, i, esize), matrix(b, i, esize), 0.0, c_matrix(i));
    }
  };
  switch (a.dtype()) {
    case kFloat32:
      return run(TypeTag<float>{});
    case kFloat64:
      return run(TypeTag<double>{});
    // 16-bit inputs are converted while packing and accumulated in float32 (cpu/gemm.h).
    case kFloat16:
      return run(TypeTag<Half>{});
    case kBFloat16:
      return run(TypeTag<BFloat16>{});
    case kInt64:
      return bmm_naive<int64_t>(a, b, out);
    case kInt32:
      return bmm_naive<int32_t>(a, b, out);
    case kUInt8:
      return bmm_naive<uint8_t>(a, b, out);
    case kInt8:
      return bmm_naive<int8_t>(a, b, out);
    case kBool:
      break;
  }
  throw TypeError(error_message("matmul", "not implemented for ", a.dtype()));
}

}  // namespace

void register_matmul_kernels(KernelRegistry& r) { r.add<BmmKernel>(OpKey::bmm, kCPU, bmm_kernel); }

}  // namespace wick::cpu
