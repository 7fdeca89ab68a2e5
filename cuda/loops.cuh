// The loops every elementwise CUDA kernel is built from: the GPU twin of core/cpu/loops.h.
//
// An OffsetCalculator maps a linear element index of the output to the byte offset of that
// element in each operand, for any strides (broadcast inputs have stride 0). Its dimensions are
// coalesced on the host the way the CPU loop does it, so a contiguous tensor becomes one dimension
// and the per-element cost is one multiply; a transposed one pays a division per dimension.
//
// launch_elementwise<N>(operands, f) runs f(ptrs) for every element with a grid-stride loop, where
// ptrs[k] points at operand k's element (operand 0 is the output). The functor does the typed
// loads, the math in the compute type, and the store.
//
// Note [GPU compile time]
// Every (op, dtype) pair is its own kernel, compiled once per GPU architecture, and nvcc is slow:
// what is templated is kept small. Copies are typed by element size (a float copy and an int32
// copy are the same kernel); casts between dtypes are one kernel that switches on the dtypes at
// run time; only arithmetic is typed by dtype.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "core/dtype.h"
#include "core/half.h"
#include "core/tensor.h"
#include "cuda/runtime.h"

namespace wick::cuda {

constexpr int kThreads = 256;

// Note [32-bit index division]
// Splitting a linear index into per-dimension indices costs a division and a remainder per
// dimension, and a 64-bit division is a long software routine on the GPU. Below 2**31 elements
// (nearly always) the index fits in 32 bits, and a division by a divisor known on the host is a
// multiply-high, an add and a shift (PyTorch's IntDivider; Granlund and Montgomery): for
// 0 <= n, d < 2**31, with s = ceil(log2 d) and m = floor(2**32 * (2**s - d) / d) + 1,
// n / d = (umulhi(n, m) + n) >> s. Larger tensors take the 64-bit path; the choice is one
// uniform branch per element, and no kernel is compiled twice (Note [GPU compile time]).
struct FastDivider {
  uint32_t divisor = 1, multiplier = 1, shift = 0;

  FastDivider() = default;
  explicit FastDivider(uint32_t d) : divisor(d) {
    while ((uint32_t{1} << shift) < d) ++shift;
    uint64_t one = 1;
    multiplier = static_cast<uint32_t>(((one << 32) * ((one << shift) - d)) / d + 1);
  }
  __host__ __device__ __forceinline__ uint32_t div(uint32_t n) const {
#ifdef __CUDA_ARCH__
    uint32_t high = __umulhi(n, multiplier);
#else
    uint32_t high = static_cast<uint32_t>((uint64_t{n} * multiplier) >> 32);
#endif
    return (high + n) >> shift;
  }
};

template <int N>
struct OffsetCalculator {
  int ndim = 0;
  bool narrow = false;  // every linear index fits in 32 bits: use the dividers
  int64_t sizes[kMaxDims];
  FastDivider dividers[kMaxDims];  // of sizes, when narrow
  int64_t strides[N][kMaxDims];    // bytes

  __device__ __forceinline__ void get(int64_t linear, int64_t (&offsets)[N]) const {
    if (ndim == 1) {
#pragma unroll
      for (int k = 0; k < N; ++k) offsets[k] = linear * strides[k][0];
      return;
    }
#pragma unroll
    for (int k = 0; k < N; ++k) offsets[k] = 0;
    if (narrow) {  // Note [32-bit index division]
      uint32_t rest = static_cast<uint32_t>(linear);
      for (int d = ndim - 1; d >= 0; --d) {
        uint32_t quotient = dividers[d].div(rest);
        uint32_t index = rest - quotient * dividers[d].divisor;
        rest = quotient;
#pragma unroll
        for (int k = 0; k < N; ++k) offsets[k] += static_cast<int64_t>(index) * strides[k][d];
      }
      return;
    }
    for (int d = ndim - 1; d >= 0; --d) {
      int64_t index = linear % sizes[d];
      linear /= sizes[d];
#pragma unroll
      for (int k = 0; k < N; ++k) offsets[k] += index * strides[k][d];
    }
  }
};

// Operand 0 fixes the shape; the others broadcast to it. Dimensions of size 1 are dropped and
// neighbours that every operand walks with one stride are merged (as ElementwiseLoop does).
template <int N>
OffsetCalculator<N> make_offset_calculator(const std::array<const Tensor*, N>& operands) {
  const Shape& shape = operands[0]->shape();
  int64_t ndim = shape.size();
  int64_t strides[N][kMaxDims];
  for (int k = 0; k < N; ++k) {
    const Tensor& t = *operands[k];
    int64_t lead = ndim - t.dim();
    int64_t esize = static_cast<int64_t>(t.element_size());
    for (int64_t d = 0; d < ndim; ++d) {
      bool broadcast = d < lead || (t.size(d - lead) == 1 && shape[d] != 1);
      strides[k][d] = broadcast ? 0 : t.stride(d - lead) * esize;
    }
  }
  OffsetCalculator<N> calc;
  for (int64_t d = 0; d < ndim; ++d) {
    if (shape[d] == 1) continue;
    bool mergeable = calc.ndim > 0;
    for (int k = 0; k < N && mergeable; ++k) {
      mergeable = calc.strides[k][calc.ndim - 1] == strides[k][d] * shape[d];
    }
    if (mergeable) {
      calc.sizes[calc.ndim - 1] *= shape[d];
      for (int k = 0; k < N; ++k) calc.strides[k][calc.ndim - 1] = strides[k][d];
    } else {
      calc.sizes[calc.ndim] = shape[d];
      for (int k = 0; k < N; ++k) calc.strides[k][calc.ndim] = strides[k][d];
      ++calc.ndim;
    }
  }
  if (calc.ndim == 0) {  // one element
    calc.ndim = 1;
    calc.sizes[0] = 1;
    for (int k = 0; k < N; ++k) calc.strides[k][0] = 0;
  }
  int64_t total = 1;
  for (int d = 0; d < calc.ndim; ++d) total *= calc.sizes[d];
  calc.narrow = total <= (int64_t{1} << 31);  // indices 0 .. total - 1 below 2**31
  if (calc.narrow) {
    for (int d = 0; d < calc.ndim; ++d) {
      calc.dividers[d] = FastDivider(static_cast<uint32_t>(calc.sizes[d]));
    }
  }
  return calc;
}

// Grid-stride loops: for (int64_t i = thread_index(); i < n; i += grid_stride()).
__device__ __forceinline__ int64_t thread_index() {
  return blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
}
__device__ __forceinline__ int64_t grid_stride() {
  return static_cast<int64_t>(gridDim.x) * blockDim.x;
}

template <int N>
struct Pointers {
  char* p[N];
};

template <int N, class F>
__global__ void elementwise_kernel(int64_t n, Pointers<N> base, OffsetCalculator<N> calc, F f) {
  for (int64_t i = thread_index(); i < n; i += grid_stride()) {
    int64_t offsets[N];
    calc.get(i, offsets);
    char* ptrs[N];
#pragma unroll
    for (int k = 0; k < N; ++k) ptrs[k] = base.p[k] + offsets[k];
    f(ptrs);
  }
}

// Runs f over every element of operands[0] (the output), on its device's current stream.
template <int N, class F>
void launch_elementwise(const std::array<const Tensor*, N>& operands, const F& f) {
  int64_t n = operands[0]->numel();
  if (n == 0) return;
  LaunchContext ctx(*operands[0]);
  Pointers<N> base;
  for (int k = 0; k < N; ++k) base.p[k] = static_cast<char*>(operands[k]->data_ptr());
  elementwise_kernel<N, F><<<ctx.blocks_for(n, kThreads), kThreads, 0, ctx.stream()>>>(
      n, base, make_offset_calculator<N>(operands), f);
  WICK_KERNEL_CHECK();
}

// ---- element types on the device -------------------------------------------------------------

// Storage types by element size, for kernels that only move bytes.
template <int Size>
struct Bytes;
template <>
struct Bytes<1> {
  using type = uint8_t;
};
template <>
struct Bytes<2> {
  using type = uint16_t;
};
template <>
struct Bytes<4> {
  using type = uint32_t;
};
template <>
struct Bytes<8> {
  using type = uint64_t;
};

// Calls fn(TypeTag<T>{}) with T an unsigned integer of the dtype's size.
template <class Fn>
void visit_size(DType dtype, Fn&& fn) {
  switch (element_size(dtype)) {
    case 1:
      return fn(TypeTag<uint8_t>{});
    case 2:
      return fn(TypeTag<uint16_t>{});
    case 4:
      return fn(TypeTag<uint32_t>{});
    default:
      return fn(TypeTag<uint64_t>{});
  }
}

// Device math in the compute type (float or double).
__device__ __forceinline__ float d_exp(float x) { return expf(x); }
__device__ __forceinline__ double d_exp(double x) { return exp(x); }
__device__ __forceinline__ float d_log(float x) { return logf(x); }
__device__ __forceinline__ double d_log(double x) { return log(x); }
__device__ __forceinline__ float d_sqrt(float x) { return sqrtf(x); }
__device__ __forceinline__ double d_sqrt(double x) { return sqrt(x); }
__device__ __forceinline__ float d_sin(float x) { return sinf(x); }
__device__ __forceinline__ double d_sin(double x) { return sin(x); }
__device__ __forceinline__ float d_cos(float x) { return cosf(x); }
__device__ __forceinline__ double d_cos(double x) { return cos(x); }
__device__ __forceinline__ float d_tanh(float x) { return tanhf(x); }
__device__ __forceinline__ double d_tanh(double x) { return tanh(x); }
__device__ __forceinline__ float d_erf(float x) { return erff(x); }
__device__ __forceinline__ double d_erf(double x) { return erf(x); }

template <class C>
__device__ __forceinline__ bool d_isnan(C x) {
  if constexpr (std::is_floating_point_v<C>) {
    return x != x;
  } else {
    return false;
  }
}

// Accumulation type of reductions on the GPU: float for 16- and 32-bit floats (as PyTorch's CUDA
// kernels do; the CPU uses double), double for double, int64 for integers and bool.
template <class T>
using gpu_acc_t =
    std::conditional_t<std::is_same_v<compute_t<T>, double>, double,
                       std::conditional_t<std::is_floating_point_v<compute_t<T>>, float, int64_t>>;

}  // namespace wick::cuda
