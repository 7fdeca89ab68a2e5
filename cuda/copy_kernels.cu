// CUDA kernels that move or create data on one device: strided copy and dtype casts, fill,
// arange, and the random fills. The random fills compute element i from (seed, offset, i) with
// the same Philox functions as the CPU (core/philox.h), so a tensor drawn on the GPU equals the
// one drawn on the CPU from the same generator state.
#include <cstring>

#include "core/philox.h"
#include "cuda/kernels.h"
#include "cuda/loops.cuh"

namespace wick::cuda {

namespace {

template <class S>
struct CopyFn {
  __device__ void operator()(char** p) const {
    *reinterpret_cast<S*>(p[0]) = *reinterpret_cast<const S*>(p[1]);
  }
};

// One kernel for every pair of dtypes: the two switches are on values that are the same for
// every thread, so they cost a few instructions, not divergence (Note [GPU compile time]).
struct CastFn {
  DType from, to;

  template <class From>
  __device__ void store(char* dst, From x) const {
    switch (to) {
      case DType::Bool:
        *reinterpret_cast<bool*>(dst) = convert<bool>(x);
        break;
      case DType::UInt8:
        *reinterpret_cast<uint8_t*>(dst) = convert<uint8_t>(x);
        break;
      case DType::Int8:
        *reinterpret_cast<int8_t*>(dst) = convert<int8_t>(x);
        break;
      case DType::Int32:
        *reinterpret_cast<int32_t*>(dst) = convert<int32_t>(x);
        break;
      case DType::Int64:
        *reinterpret_cast<int64_t*>(dst) = convert<int64_t>(x);
        break;
      case DType::Float16:
        *reinterpret_cast<Half*>(dst) = convert<Half>(x);
        break;
      case DType::BFloat16:
        *reinterpret_cast<BFloat16*>(dst) = convert<BFloat16>(x);
        break;
      case DType::Float32:
        *reinterpret_cast<float*>(dst) = convert<float>(x);
        break;
      case DType::Float64:
        *reinterpret_cast<double*>(dst) = convert<double>(x);
        break;
    }
  }

  __device__ void operator()(char** p) const {
    const char* src = p[1];
    switch (from) {
      case DType::Bool:
        store(p[0], *reinterpret_cast<const bool*>(src));
        break;
      case DType::UInt8:
        store(p[0], *reinterpret_cast<const uint8_t*>(src));
        break;
      case DType::Int8:
        store(p[0], *reinterpret_cast<const int8_t*>(src));
        break;
      case DType::Int32:
        store(p[0], *reinterpret_cast<const int32_t*>(src));
        break;
      case DType::Int64:
        store(p[0], *reinterpret_cast<const int64_t*>(src));
        break;
      case DType::Float16:
        store(p[0], *reinterpret_cast<const Half*>(src));
        break;
      case DType::BFloat16:
        store(p[0], *reinterpret_cast<const BFloat16*>(src));
        break;
      case DType::Float32:
        store(p[0], *reinterpret_cast<const float*>(src));
        break;
      case DType::Float64:
        store(p[0], *reinterpret_cast<const double*>(src));
        break;
    }
  }
};

template <class S>
struct FillFn {
  S value;
  __device__ void operator()(char** p) const { *reinterpret_cast<S*>(p[0]) = value; }
};

void fill(Tensor& out, Scalar value) {
  // The value is converted once on the host; the kernel only stores its bytes.
  uint64_t bits = 0;
  visit_dtype(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T v = T(value.to<compute_t<T>>());
    std::memcpy(&bits, &v, sizeof(T));
  });
  visit_size(out.dtype(), [&](auto tag) {
    using S = typename decltype(tag)::type;
    S v;
    std::memcpy(&v, &bits, sizeof(S));
    launch_elementwise<1>({&out}, FillFn<S>{v});
  });
}

template <class T>
__global__ void arange_kernel(T* out, int64_t n, double start, double step) {
  for (int64_t i = thread_index(); i < n; i += grid_stride()) {
    out[i] = T(static_cast<compute_t<T>>(start + static_cast<double>(i) * step));
  }
}

void arange(Tensor& out, double start, double step) {
  int64_t n = out.numel();
  if (n == 0) return;
  LaunchContext ctx(out);
  visit_dtype(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    arange_kernel<T><<<ctx.blocks_for(n), kThreads, 0, ctx.stream()>>>(
        static_cast<T*>(out.data_ptr()), n, start, step);
  });
  WICK_KERNEL_CHECK();
}

// The CPU formulas of core/cpu/random_kernels.cpp, element for element: element i uses word
// i % 4 of philox(seed, offset + i / 4) (core/philox.h). A thread takes one Philox block of four
// elements, so the generator runs once per four elements, as on the CPU.
template <class T>
__global__ void uniform_kernel(T* out, int64_t n, double a, double b, PhiloxState state) {
  using C = compute_t<T>;
  for (int64_t block = thread_index(); block * 4 < n; block += grid_stride()) {
    Philox4 r = philox4x32(state.seed, state.offset + static_cast<uint64_t>(block));
    for (int k = 0; k < 4 && block * 4 + k < n; ++k) {
      double u = uniform_from_bits(r.x[k]);
      if constexpr (std::is_floating_point_v<C>) {
        T v = T(static_cast<C>(a + (b - a) * u));  // checked after rounding to T (float16 too)
        out[block * 4 + k] = C(v) < C(b) ? v : T(static_cast<C>(a));
      } else {
        out[block * 4 + k] = T(static_cast<C>(a + floor((b - a) * u)));
      }
    }
  }
}

// Box-Muller on the word pairs (0, 1) and (2, 3): elements 4b and 4b + 1 are the cosine and sine
// of the first pair, 4b + 2 and 4b + 3 of the second (normal_at in core/philox.h). The device's
// double-precision log, sin and cos may differ from glibc's in the last bit.
template <class T>
__global__ void normal_kernel(T* out, int64_t n, double mean, double stddev, PhiloxState state) {
  for (int64_t block = thread_index(); block * 4 < n; block += grid_stride()) {
    Philox4 r = philox4x32(state.seed, state.offset + static_cast<uint64_t>(block));
    for (int pair = 0; pair < 2; ++pair) {
      double radius = sqrt(-2.0 * log(uniform_open_double(r.x[2 * pair])));
      double angle = 6.283185307179586476925 * uniform_open_double(r.x[2 * pair + 1]);
      double values[2] = {radius * cos(angle), radius * sin(angle)};
      for (int k = 0; k < 2; ++k) {
        int64_t i = block * 4 + 2 * pair + k;
        if (i < n) out[i] = T(static_cast<compute_t<T>>(mean + stddev * values[k]));
      }
    }
  }
}

void uniform(Tensor& out, double a, double b, PhiloxState state) {
  int64_t n = out.numel();
  if (n == 0) return;
  LaunchContext ctx(out);
  visit_dtype(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    uniform_kernel<T><<<ctx.blocks_for((n + 3) / 4), kThreads, 0, ctx.stream()>>>(
        static_cast<T*>(out.data_ptr()), n, a, b, state);
  });
  WICK_KERNEL_CHECK();
}

void normal(Tensor& out, double mean, double stddev, PhiloxState state) {
  int64_t n = out.numel();
  if (n == 0) return;
  LaunchContext ctx(out);
  visit_floating("normal", out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    normal_kernel<T><<<ctx.blocks_for((n + 3) / 4), kThreads, 0, ctx.stream()>>>(
        static_cast<T*>(out.data_ptr()), n, mean, stddev, state);
  });
  WICK_KERNEL_CHECK();
}

__global__ void spin_kernel(int64_t cycles) {
  int64_t start = clock64();
  while (clock64() - start < cycles) {
  }
}

}  // namespace

void spin(int64_t cycles) {
  LaunchContext ctx(current_device());
  spin_kernel<<<1, 1, 0, ctx.stream()>>>(cycles);
  WICK_KERNEL_CHECK();
}

void launch_copy(const Tensor& src, Tensor& dst) {
  if (dst.numel() == 0) return;
  if (src.dtype() == dst.dtype() && src.shape() == dst.shape() && src.is_contiguous() &&
      dst.is_contiguous()) {
    LaunchContext ctx(dst);
    WICK_CUDA_CHECK(cudaMemcpyAsync(dst.data_ptr(), src.data_ptr(), dst.nbytes(),
                                    cudaMemcpyDeviceToDevice, ctx.stream()));
    return;
  }
  if (src.dtype() == dst.dtype()) {
    visit_size(dst.dtype(), [&](auto tag) {
      using S = typename decltype(tag)::type;
      launch_elementwise<2>({&dst, &src}, CopyFn<S>{});
    });
    return;
  }
  launch_elementwise<2>({&dst, &src}, CastFn{src.dtype(), dst.dtype()});
}

void register_random_and_fill_kernels(KernelRegistry& r) {
  r.add<FillKernel>(OpKey::fill, kCUDA, fill);
  r.add<ArangeKernel>(OpKey::arange, kCUDA, arange);
  r.add<RandomKernel>(OpKey::uniform, kCUDA, uniform);
  r.add<RandomKernel>(OpKey::normal, kCUDA, normal);
}

}  // namespace wick::cuda
