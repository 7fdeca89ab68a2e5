// CPU reductions: sum, amax and amin over any set of dims, and max/min with indices along one
// dim.
//
// A reduction splits the input's dims into kept dims (one output element per index) and reduced
// dims (summed for each output). With many outputs, threads split the outputs; with few outputs
// and much to reduce (a full sum), threads split the reduced range and partial sums are added at
// the end. Sums accumulate in double (int64 for integers), so float32 sums of millions of
// elements keep their precision.
#include <cmath>
#include <vector>

#include "core/cpu/loops.h"
#include "core/cpu/register.h"
#include "core/reduce_dims.h"

namespace wick::cpu {

namespace {

using Dims = ReduceDims;

// Sum of in[base + offset(r)] for r in [begin, end) of the reduced index space, walking the
// innermost reduced dim as a strided run.
template <class T, class Acc>
Acc sum_range(const T* in, const Dims& reduced, int64_t begin, int64_t end) {
  Acc acc[4] = {0, 0, 0, 0};  // four partial sums let the CPU overlap the additions
  int64_t inner = reduced.n ? reduced.shape[reduced.n - 1] : 1;
  int64_t stride = reduced.n ? reduced.stride[reduced.n - 1] : 0;
  for (int64_t r = begin; r < end;) {
    const T* p = in + reduced.offset_of(r);
    int64_t n = std::min(inner - r % inner, end - r);
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
      acc[0] += Acc(compute_t<T>(p[(i + 0) * stride]));
      acc[1] += Acc(compute_t<T>(p[(i + 1) * stride]));
      acc[2] += Acc(compute_t<T>(p[(i + 2) * stride]));
      acc[3] += Acc(compute_t<T>(p[(i + 3) * stride]));
    }
    for (; i < n; ++i) acc[0] += Acc(compute_t<T>(p[i * stride]));
    r += n;
  }
  return (acc[0] + acc[1]) + (acc[2] + acc[3]);
}

// Reduces each output of `in` over `dims` into `out` (contiguous, numbered in the kept dims'
// row-major order): range(base, begin, end) reduces part of one output's range to an R, and
// combine(a, b) merges two such parts. With many outputs, threads split the outputs; with few
// outputs and much to reduce (a full reduction), threads split each output's range.
template <class T, class R, class Range, class Combine>
void reduce_outputs(const Tensor& in, Tensor& out, const DimVec& dims, const Range& range,
                    const Combine& combine) {
  Dims kept, reduced;
  split_dims(in, dims, kept, reduced);
  const T* src = static_cast<const T*>(in.data_ptr());
  T* dst = out.data<T>();
  int64_t outputs = kept.numel(), per_output = reduced.numel();
  if (per_output == 0) {  // an empty input has no data pointer to offset: each output is empty
    for (int64_t m = 0; m < outputs; ++m)
      dst[m] = T(static_cast<compute_t<T>>(range(src, reduced, 0, 0)));
    return;
  }
  int threads = 1;
#ifdef _OPENMP
  threads = omp_get_max_threads();
#endif
  if (outputs >= threads || per_output < kParallelGrain) {
    parallel_for(outputs, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(per_output, 1)),
                 [&](int64_t begin, int64_t end) {
                   for (int64_t m = begin; m < end; ++m) {
                     R r = range(src + kept.offset_of(m), reduced, 0, per_output);
                     dst[m] = T(static_cast<compute_t<T>>(r));
                   }
                 });
    return;
  }
  for (int64_t m = 0; m < outputs; ++m) {
    const T* base = src + kept.offset_of(m);
    std::vector<R> partial(threads);
    std::vector<char> done(threads, 0);
    parallel_for(per_output, kParallelGrain, [&](int64_t begin, int64_t end) {
      int t = 0;
#ifdef _OPENMP
      t = omp_get_thread_num();
#endif
      partial[t] = range(base, reduced, begin, end);
      done[t] = 1;
    });
    R total{};
    bool first = true;
    for (int t = 0; t < threads; ++t) {
      if (!done[t]) continue;
      total = first ? partial[t] : combine(total, partial[t]);
      first = false;
    }
    dst[m] = T(static_cast<compute_t<T>>(total));
  }
}

void sum_kernel(const Tensor& in, Tensor& out, const DimVec& dims) {
  visit_dtype(in.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using Acc = accumulate_t<T>;
    reduce_outputs<T, Acc>(in, out, dims, sum_range<T, Acc>, [](Acc a, Acc b) { return a + b; });
  });
}

template <bool kMax>
void arg_reduce_kernel(const Tensor& in, Tensor& values, Tensor& indices, int64_t dim) {
  Dims kept, along;
  for (int64_t d = 0; d < in.dim(); ++d) {
    Dims& target = d == dim ? along : kept;
    target.shape[target.n] = in.size(d);
    target.stride[target.n] = in.stride(d);
    ++target.n;
  }
  int64_t length = in.dim() == 0 ? 1 : in.size(dim);
  int64_t stride = in.dim() == 0 ? 0 : in.stride(dim);
  visit_dtype(in.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    const T* src = static_cast<const T*>(in.data_ptr());
    T* out_values = values.data<T>();
    int64_t* out_indices = indices.data<int64_t>();
    parallel_for(kept.numel(), std::max<int64_t>(1, kParallelGrain / length),
                 [&](int64_t begin, int64_t end) {
                   for (int64_t m = begin; m < end; ++m) {
                     const T* p = src + kept.offset_of(m);
                     C best = C(p[0]);
                     int64_t best_index = 0;
                     for (int64_t i = 1; i < length; ++i) {
                       C x = C(p[i * stride]);
                       if constexpr (std::is_floating_point_v<C>) {
                         if (std::isnan(best)) break;  // NaN wins, first one
                         if (std::isnan(x)) {
                           best = x;
                           best_index = i;
                           break;
                         }
                       }
                       if (kMax ? x > best : x < best) {
                         best = x;
                         best_index = i;
                       }
                     }
                     out_values[m] = T(best);
                     out_indices[m] = best_index;
                   }
                 });
  });
}

// The largest (kMax) or smallest of in[base + offset(r)] for r in [begin, end); NaN wins.
template <bool kMax, class T>
compute_t<T> extreme_range(const T* in, const Dims& reduced, int64_t begin, int64_t end) {
  using C = compute_t<T>;
  C best = C(in[reduced.offset_of(begin)]);
  for (int64_t r = begin + 1; r < end; ++r) {
    C x = C(in[reduced.offset_of(r)]);
    if constexpr (std::is_floating_point_v<C>) {
      if (std::isnan(x)) return x;
    }
    if (kMax ? x > best : x < best) best = x;
  }
  return best;
}

// The better of two partial results: NaN wins, then the larger (kMax) or smaller.
template <bool kMax, class C>
C better(C a, C b) {
  if constexpr (std::is_floating_point_v<C>) {
    if (std::isnan(a)) return a;
    if (std::isnan(b)) return b;
  }
  return (kMax ? b > a : b < a) ? b : a;
}

template <bool kMax>
void extreme_kernel(const Tensor& in, Tensor& out, const DimVec& dims) {
  visit_dtype(in.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    reduce_outputs<T, C>(in, out, dims, extreme_range<kMax, T>, better<kMax, C>);
  });
}

}  // namespace

void register_reduce_kernels(KernelRegistry& r) {
  r.add<ReduceKernel>(OpKey::sum, kCPU, sum_kernel);
  r.add<ReduceKernel>(OpKey::amax, kCPU, extreme_kernel<true>);
  r.add<ReduceKernel>(OpKey::amin, kCPU, extreme_kernel<false>);
  r.add<ArgReduceKernel>(OpKey::max_dim, kCPU, arg_reduce_kernel<true>);
  r.add<ArgReduceKernel>(OpKey::min_dim, kCPU, arg_reduce_kernel<false>);
}

}  // namespace wick::cpu
