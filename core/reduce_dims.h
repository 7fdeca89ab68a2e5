// How a reduction walks its input, shared by the CPU and CUDA reduction kernels: the input's dims
// split into kept dims (one output element per index) and reduced dims (combined into each
// output). Size-1 dims are dropped, so a (1, N) input reduces like an (N,) one.
#pragma once

#include <cstdint>

#include "core/half.h"
#include "core/shape.h"
#include "core/tensor.h"

namespace wick {

struct ReduceDims {
  int n = 0;
  int64_t shape[kMaxDims];
  int64_t stride[kMaxDims];  // in elements of the input
  int64_t numel() const {
    int64_t p = 1;
    for (int i = 0; i < n; ++i) p *= shape[i];
    return p;
  }
  // Element offset of linear index `i` (row-major over shape).
  WICK_HOST_DEVICE int64_t offset_of(int64_t i) const {
    int64_t off = 0;
    for (int d = n - 1; d >= 0; --d) {
      off += (i % shape[d]) * stride[d];
      i /= shape[d];
    }
    return off;
  }
};

// Splits `in`'s dims into kept and reduced (`dims` sorted). Dims is ReduceDims, or any type
// with the same n, shape and stride (the CUDA reductions add fast dividers to theirs).
template <class Dims>
void split_dims(const Tensor& in, const DimVec& dims, Dims& kept, Dims& reduced) {
  for (int64_t d = 0, next = 0; d < in.dim(); ++d) {
    bool is_reduced = next < static_cast<int64_t>(dims.size()) && dims[next] == d;
    if (is_reduced) ++next;
    if (in.size(d) == 1) continue;
    Dims& target = is_reduced ? reduced : kept;
    target.shape[target.n] = in.size(d);
    target.stride[target.n] = in.stride(d);
    ++target.n;
  }
}

}  // namespace wick
