// cumsum and cumprod on CUDA, and sort. A scan's lines are independent, so one thread walks one
// line (in order, accumulating in the compute type): simple, exact in the order the CPU kernel
// adds, and fast when there are many lines; a single very long line would want a parallel
// (Blelloch) scan, which is left for later.
//
// sort copies to the host, sorts there with the CPU kernel and copies back. A GPU sort worth the
// name (a radix or bitonic sort per line) is future work; the round trip keeps every op of the
// table available on the device, correct, and visibly slower (it synchronises the stream).
#include "core/op_table.h"
#include "core/ops/factory.h"
#include "cuda/kernels.h"
#include "cuda/loops.cuh"

namespace wick::cuda {

namespace {

constexpr int kThreads = 256;

template <bool kProduct, class T>
__global__ void scan_kernel(const T* in, T* out, int64_t lines, int64_t length, int64_t inner) {
  using C = compute_t<T>;
  for (int64_t line = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; line < lines;
       line += int64_t(gridDim.x) * blockDim.x) {
    int64_t base = (line / inner) * length * inner + line % inner;
    C acc = kProduct ? C(1) : C(0);
    for (int64_t i = 0; i < length; ++i) {
      int64_t at = base + i * inner;
      acc = kProduct ? C(acc * C(in[at])) : C(acc + C(in[at]));
      out[at] = T(acc);
    }
  }
}

template <bool kProduct>
void scan(const Tensor& in, Tensor& out, int64_t dim) {
  int64_t outer = 1, length = in.size(dim), inner = 1;
  for (int64_t d = 0; d < in.dim(); ++d) {
    if (d < dim) outer *= in.size(d);
    if (d > dim) inner *= in.size(d);
  }
  int64_t lines = outer * inner;
  if (lines == 0 || length == 0) return;
  LaunchContext ctx(out);
  visit_dtype(in.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    scan_kernel<kProduct, T><<<ctx.blocks_for(lines, kThreads), kThreads, 0, ctx.stream()>>>(
        static_cast<const T*>(in.data_ptr()), static_cast<T*>(out.data_ptr()), lines, length,
        inner);
    WICK_KERNEL_CHECK();
  });
}

void sort_on_host(const Tensor& in, Tensor& values, Tensor& indices, int64_t dim, bool descending) {
  Tensor host = in.cpu();
  Tensor host_values = empty_like(host), host_indices = empty_like(host.to(kInt64));
  dispatch<SortKernel>(OpKey::sort, Device(kCPU), host, host_values, host_indices, dim, descending);
  values.copy_(host_values);
  indices.copy_(host_indices);
}

}  // namespace

void register_scan_kernels(KernelRegistry& r) {
  r.add<ScanKernel>(OpKey::cumsum, kCUDA, scan<false>);
  r.add<ScanKernel>(OpKey::cumprod, kCUDA, scan<true>);
  r.add<SortKernel>(OpKey::sort, kCUDA, sort_on_host);
}

}  // namespace wick::cuda
