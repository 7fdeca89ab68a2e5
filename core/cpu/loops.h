// The loops every CPU kernel is built from.
//
// parallel_for splits an index range across OpenMP threads once it is large enough to pay for
// them. ElementwiseLoop walks N tensors of one shape (operand 0 is the output; inputs are
// broadcast to its shape with zero strides) in row-major order and hands the kernel one run of
// elements at a time, with a byte stride per operand, so the kernel's inner loop is a plain
// `for` that the compiler vectorises when the strides say the run is contiguous.
//
// Note [no exceptions in parallel regions]
// An exception escaping an OpenMP region terminates the program. Kernels therefore validate
// everything (index bounds included) before they enter parallel_for, and never throw inside it.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "core/tensor.h"

namespace wick::cpu {

// Below this many elements an elementwise op runs on one thread; thread start-up costs ~1-2 us.
// The OpenMP team size a parallel region would get, and this thread's number in its team (1 and
// 0 in a build without OpenMP): for per-thread scratch buffers.
inline int max_threads() {
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}

inline int thread_slot() {
#ifdef _OPENMP
  return omp_get_thread_num();
#else
  return 0;
#endif
}

constexpr size_t kCacheLine = 64;

// A buffer of this thread's, one per Tag, kept between calls and only grown (Note [reused
// packing buffers] in gemm.cpp: allocated per call, a batch-1 ResNet-18's first layer faulted in
// 7 MB of fresh pages every time). Not zeroed. Take it before a parallel region, which must not
// throw; a thread's slice of it is then written inside. Starts on a cache line: new[] gives 16
// bytes, and a 64-byte vector load or store that straddles two lines costs two.
template <class Tag, class T = float>
T* thread_scratch(size_t elements) {
  static_assert(alignof(T) <= kCacheLine);
  thread_local std::unique_ptr<T[]> buffer;
  thread_local T* aligned = nullptr;
  thread_local size_t capacity = 0;
  if (capacity < elements) {
    constexpr size_t kSlack = kCacheLine / sizeof(T) + 1;
    buffer.reset(new T[elements + kSlack]);
    void* start = buffer.get();
    size_t space = (elements + kSlack) * sizeof(T);
    aligned = static_cast<T*>(std::align(kCacheLine, elements * sizeof(T), start, space));
    capacity = elements;
  }
  return aligned;
}

constexpr int64_t kParallelGrain = 32768;

// Calls f(begin, end) on disjoint chunks covering [0, n), in parallel when n > grain.
template <class F>
void parallel_for(int64_t n, int64_t grain, const F& f) {
#ifdef _OPENMP
  if (n > grain && omp_get_max_threads() > 1 && !omp_in_parallel()) {
    int64_t threads = std::min<int64_t>(omp_get_max_threads(), (n + grain - 1) / grain);
#pragma omp parallel num_threads(threads)
    {
      int64_t t = omp_get_thread_num(), nt = omp_get_num_threads();
      int64_t begin = n * t / nt, end = n * (t + 1) / nt;
      if (begin < end) f(begin, end);
    }
    return;
  }
#endif
  if (n > 0) f(0, n);
}

template <int N>
class ElementwiseLoop {
 public:
  // operands[0] is the output; every input must be broadcastable to its shape.
  explicit ElementwiseLoop(const std::array<const Tensor*, N>& operands) {
    const Shape& out_shape = operands[0]->shape();
    int64_t ndim = out_shape.size();
    numel_ = wick::numel(out_shape);
    for (int k = 0; k < N; ++k) {
      const Tensor& t = *operands[k];
      const Shape& shape = t.shape();
      const Strides& strides = t.strides();
      data_[k] = static_cast<char*>(t.data_ptr());
      int64_t lead = ndim - shape.size();
      int64_t esize = static_cast<int64_t>(t.element_size());
      for (int64_t d = 0; d < ndim; ++d) {
        bool broadcast = d < lead || (shape[d - lead] == 1 && out_shape[d] != 1);
        strides_[k][d] = broadcast ? 0 : strides[d - lead] * esize;
      }
    }
    coalesce(out_shape);
  }

  int64_t numel() const { return numel_; }

  // Calls inner(ptrs, strides, n) for runs of n elements: ptrs[k] points at operand k's first
  // element of the run and strides[k] is its byte stride within the run.
  template <class Inner>
  void run(const Inner& inner, int64_t grain = kParallelGrain) const {
    parallel_for(numel_, grain, [&](int64_t begin, int64_t end) { run_range(begin, end, inner); });
  }

 private:
  // Merges neighbouring dimensions that every operand walks with one stride (a contiguous tensor
  // becomes 1-D) and drops size-1 dimensions, so the inner runs are as long as possible.
  void coalesce(const Shape& shape) {
    ndim_ = 0;
    for (int64_t d = 0; d < shape.size(); ++d) {
      if (shape[d] == 1) continue;
      bool mergeable = ndim_ > 0;
      for (int k = 0; k < N && mergeable; ++k) {
        mergeable = strides_[k][ndim_ - 1] == strides_[k][d] * shape[d];
      }
      if (mergeable) {
        shape_[ndim_ - 1] *= shape[d];
        for (int k = 0; k < N; ++k) strides_[k][ndim_ - 1] = strides_[k][d];
      } else {
        shape_[ndim_] = shape[d];
        for (int k = 0; k < N; ++k) strides_[k][ndim_] = strides_[k][d];
        ++ndim_;
      }
    }
    if (ndim_ == 0) {  // a single element
      shape_[0] = 1;
      for (int k = 0; k < N; ++k) strides_[k][0] = 0;
      ndim_ = 1;
    }
  }

  template <class Inner>
  void run_range(int64_t begin, int64_t end, const Inner& inner) const {
    int64_t index[kMaxDims];
    int64_t rest = begin;
    for (int64_t d = ndim_ - 1; d >= 0; --d) {
      index[d] = rest % shape_[d];
      rest /= shape_[d];
    }
    const int64_t last = ndim_ - 1;
    std::array<int64_t, N> inner_strides;
    for (int k = 0; k < N; ++k) inner_strides[k] = strides_[k][last];
    for (int64_t i = begin; i < end;) {
      std::array<char*, N> ptrs;
      for (int k = 0; k < N; ++k) {
        ptrs[k] = data_[k];
        for (int64_t d = 0; d < ndim_; ++d) ptrs[k] += index[d] * strides_[k][d];
      }
      int64_t n = std::min(shape_[last] - index[last], end - i);
      inner(ptrs.data(), inner_strides.data(), n);
      i += n;
      index[last] += n;
      for (int64_t d = last; d > 0 && index[d] == shape_[d]; --d) {  // carry
        index[d] = 0;
        ++index[d - 1];
      }
    }
  }

  int64_t numel_ = 0;
  int64_t ndim_ = 0;
  int64_t shape_[kMaxDims];
  int64_t strides_[N][kMaxDims];
  char* data_[N];
};

// out[i] = f(in[i]) with Out and In the element types.
template <class Out, class In, class F>
void unary_loop(const Tensor& in, Tensor& out, const F& f) {
  ElementwiseLoop<2> loop({&out, &in});
  loop.run([&](char** p, const int64_t* s, int64_t n) {
    auto* o = reinterpret_cast<Out*>(p[0]);
    const auto* a = reinterpret_cast<const In*>(p[1]);
    if (s[0] == sizeof(Out) && s[1] == sizeof(In)) {
      for (int64_t i = 0; i < n; ++i) o[i] = f(a[i]);
    } else {
      for (int64_t i = 0; i < n; ++i) {
        *reinterpret_cast<Out*>(p[0] + i * s[0]) = f(*reinterpret_cast<const In*>(p[1] + i * s[1]));
      }
    }
  });
}

// out[i] = f(a[i], b[i]); the contiguous and scalar-operand cases get their own loops so the
// compiler vectorises them.
template <class Out, class In, class F>
void binary_loop(const Tensor& a, const Tensor& b, Tensor& out, const F& f) {
  ElementwiseLoop<3> loop({&out, &a, &b});
  loop.run([&](char** p, const int64_t* s, int64_t n) {
    auto* o = reinterpret_cast<Out*>(p[0]);
    const auto* x = reinterpret_cast<const In*>(p[1]);
    const auto* y = reinterpret_cast<const In*>(p[2]);
    constexpr int64_t kOut = sizeof(Out), kIn = sizeof(In);
    if (s[0] == kOut && s[1] == kIn && s[2] == kIn) {
      for (int64_t i = 0; i < n; ++i) o[i] = f(x[i], y[i]);
    } else if (s[0] == kOut && s[1] == kIn && s[2] == 0) {
      const In y0 = y[0];
      for (int64_t i = 0; i < n; ++i) o[i] = f(x[i], y0);
    } else if (s[0] == kOut && s[1] == 0 && s[2] == kIn) {
      const In x0 = x[0];
      for (int64_t i = 0; i < n; ++i) o[i] = f(x0, y[i]);
    } else {
      for (int64_t i = 0; i < n; ++i) {
        *reinterpret_cast<Out*>(p[0] + i * s[0]) = f(*reinterpret_cast<const In*>(p[1] + i * s[1]),
                                                     *reinterpret_cast<const In*>(p[2] + i * s[2]));
      }
    }
  });
}

}  // namespace wick::cpu
