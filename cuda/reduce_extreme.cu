// amax and amin over any dims on CUDA: one block per output, each thread takes a strided share of
// the reduced range and the block combines the shares in shared memory (Note [GPU reductions] in
// reduce.cu). NaN propagates, as in PyTorch.
#include "core/ops/scalar_math.h"
#include "core/reduce_dims.h"
#include "cuda/kernels.h"
#include "cuda/loops.cuh"

namespace wick::cuda {

namespace {

constexpr int kThreads = 256;

template <bool kMax, class C>
__device__ C better(C a, C b) {
  if (math::isnan(a)) return a;
  if (math::isnan(b)) return b;
  return (kMax ? b > a : b < a) ? b : a;
}

template <bool kMax, class T>
__global__ void extreme_kernel(const T* in, T* out, ReduceDims kept, ReduceDims reduced,
                               int64_t length) {
  using C = compute_t<T>;
  __shared__ C shared[kThreads];
  const T* base = in + kept.offset_of(blockIdx.x);
  C best = C(base[0]);
  for (int64_t r = threadIdx.x; r < length; r += blockDim.x) {
    best = better<kMax>(best, C(base[reduced.offset_of(r)]));
  }
  shared[threadIdx.x] = best;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s)
      shared[threadIdx.x] = better<kMax>(shared[threadIdx.x], shared[threadIdx.x + s]);
    __syncthreads();
  }
  if (threadIdx.x == 0) out[blockIdx.x] = T(shared[0]);
}

template <bool kMax>
void extreme(const Tensor& in, Tensor& out, const DimVec& dims) {
  ReduceDims kept, reduced;
  split_dims(in, dims, kept, reduced);
  int64_t outputs = kept.numel(), length = reduced.numel();
  if (outputs == 0) return;
  check_value(outputs < (int64_t(1) << 31), kMax ? "amax" : "amin", "too many outputs: ", outputs);
  LaunchContext ctx(out);
  visit_dtype(in.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    extreme_kernel<kMax, T><<<static_cast<unsigned>(outputs), kThreads, 0, ctx.stream()>>>(
        static_cast<const T*>(in.data_ptr()), static_cast<T*>(out.data_ptr()), kept, reduced,
        length);
    WICK_KERNEL_CHECK();
  });
}

}  // namespace

void register_extreme_kernels(KernelRegistry& r) {
  r.add<ReduceKernel>(OpKey::amax, kCUDA, extreme<true>);
  r.add<ReduceKernel>(OpKey::amin, kCUDA, extreme<false>);
}

}  // namespace wick::cuda
