// CPU kernels for the ops that run along one dim, each line on its own: cumsum and cumprod (an
// inclusive scan) and sort. The front functions hand them contiguous tensors, so a line is
// `length` elements `inner` apart, and lines are independent: they are split across threads.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "core/cpu/loops.h"
#include "core/cpu/register.h"
#include "core/op_table.h"

namespace wick::cpu {

namespace {

// The [outer, length, inner] view of a contiguous tensor around `dim`.
struct Lines {
  int64_t outer = 1, length = 1, inner = 1;
  Lines(const Tensor& t, int64_t dim) {
    for (int64_t d = 0; d < t.dim(); ++d) {
      (d < dim ? outer : d == dim ? length : inner) *= t.size(d);
    }
  }
  int64_t count() const { return outer * inner; }
  int64_t start(int64_t line) const { return (line / inner) * length * inner + line % inner; }
};

template <bool kProduct>
void scan_kernel(const Tensor& in, Tensor& out, int64_t dim) {
  Lines lines(in, dim);
  visit_dtype(in.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    const T* src = static_cast<const T*>(in.data_ptr());
    T* dst = out.data<T>();
    parallel_for(lines.count(),
                 std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, lines.length)),
                 [&](int64_t begin, int64_t end) {
                   for (int64_t line = begin; line < end; ++line) {
                     int64_t base = lines.start(line);
                     C acc = kProduct ? C(1) : C(0);
                     for (int64_t i = 0; i < lines.length; ++i) {
                       int64_t at = base + i * lines.inner;
                       if constexpr (kProduct) {
                         acc = C(acc * C(src[at]));
                       } else {
                         acc = C(acc + C(src[at]));
                       }
                       dst[at] = T(acc);
                     }
                   }
                 });
  });
}

// a before b in ascending order, NaN above everything (PyTorch's order).
template <class C>
bool ascending(C a, C b) {
  if constexpr (std::is_floating_point_v<C>) {
    if (std::isnan(a)) return false;
    if (std::isnan(b)) return true;
  }
  return a < b;
}

void sort_kernel(const Tensor& in, Tensor& values, Tensor& indices, int64_t dim, bool descending) {
  Lines lines(in, dim);
  visit_dtype(in.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    const T* src = static_cast<const T*>(in.data_ptr());
    T* out_values = values.data<T>();
    int64_t* out_indices = indices.data<int64_t>();
    parallel_for(lines.count(), 1, [&](int64_t begin, int64_t end) {
      std::vector<int64_t> order(lines.length);
      for (int64_t line = begin; line < end; ++line) {
        int64_t base = lines.start(line);
        auto at = [&](int64_t i) { return C(src[base + i * lines.inner]); };
        std::iota(order.begin(), order.end(), int64_t(0));
        // Stable either way: equal elements keep their order, so stable=True holds too.
        if (descending) {
          std::stable_sort(order.begin(), order.end(),
                           [&](int64_t a, int64_t b) { return ascending(at(b), at(a)); });
        } else {
          std::stable_sort(order.begin(), order.end(),
                           [&](int64_t a, int64_t b) { return ascending(at(a), at(b)); });
        }
        for (int64_t i = 0; i < lines.length; ++i) {
          out_values[base + i * lines.inner] = src[base + order[i] * lines.inner];
          out_indices[base + i * lines.inner] = order[i];
        }
      }
    });
  });
}

}  // namespace

void register_scan_kernels(KernelRegistry& r) {
  r.add<ScanKernel>(OpKey::cumsum, kCPU, scan_kernel<false>);
  r.add<ScanKernel>(OpKey::cumprod, kCPU, scan_kernel<true>);
  r.add<SortKernel>(OpKey::sort, kCPU, sort_kernel);
}

}  // namespace wick::cpu
