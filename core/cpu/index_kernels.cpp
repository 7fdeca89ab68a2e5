// CPU kernels that read or write through an index tensor: index_select, gather, scatter_add.
// Index values are checked before any work starts (Note [no exceptions in parallel regions]).
#include <cstring>

#include "core/cpu/loops.h"
#include "core/cpu/register.h"

namespace wick::cpu {

namespace {

void check_indices(const char* op, const Tensor& index, int64_t dim, int64_t size) {
  const int64_t* idx = index.data<int64_t>();  // contiguous int64, by the front function
  for (int64_t i = 0; i < index.numel(); ++i) {
    check_index(index_in_range(idx[i], size), op, "index ", idx[i],
                " is out of bounds for dimension ", dim, " with size ", size);
  }
}

// Checked indices are never negative (Note [index bounds]), so they are used as they are.
inline int64_t wrap(int64_t i, int64_t) { return i; }

// out = in.index_select(dim, index); `in` and `out` are contiguous.
void index_select_kernel(const Tensor& in, int64_t dim, const Tensor& index, Tensor& out) {
  int64_t size = in.size(dim);
  check_indices("index_select", index, dim, size);
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < dim; ++d) outer *= in.size(d);
  for (int64_t d = dim + 1; d < in.dim(); ++d) inner *= in.size(d);
  int64_t count = index.numel();
  if (outer * count * inner == 0) return;  // nothing to copy (and no grain to divide by)
  size_t row_bytes = inner * in.element_size();
  const char* src = static_cast<const char*>(in.data_ptr());
  char* dst = static_cast<char*>(out.data_ptr());
  const int64_t* idx = index.data<int64_t>();
  parallel_for(outer * count, std::max<int64_t>(1, kParallelGrain / inner),
               [&](int64_t b, int64_t e) {
                 for (int64_t r = b; r < e; ++r) {
                   int64_t o = r / count, j = r % count;
                   std::memcpy(dst + r * row_bytes,
                               src + (o * size + wrap(idx[j], size)) * row_bytes, row_bytes);
                 }
               });
}

// Offset (in elements) of the element of a tensor with `strides` at the row-major position `i`
// of `shape`, with coordinate `dim` replaced by `at`.
inline int64_t offset_with(const Shape& shape, const Strides& strides, int64_t i, int64_t dim,
                           int64_t at) {
  int64_t off = 0;
  for (int64_t d = shape.size() - 1; d >= 0; --d) {
    int64_t coord = i % shape[d];
    i /= shape[d];
    off += (d == dim ? at : coord) * strides[d];
  }
  return off;
}

// out[i..] = in[i.. with coordinate dim = index[i..]]; index and out are contiguous.
void gather_kernel(const Tensor& in, int64_t dim, const Tensor& index, Tensor& out) {
  int64_t size = in.size(dim);
  check_indices("gather", index, dim, size);
  const int64_t* idx = index.data<int64_t>();
  const Shape& shape = index.shape();
  visit_dtype(in.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* src = static_cast<const T*>(in.data_ptr());
    T* dst = out.data<T>();
    parallel_for(index.numel(), kParallelGrain, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        dst[i] = src[offset_with(shape, in.strides(), i, dim, wrap(idx[i], size))];
      }
    });
  });
}

// self[i.. with coordinate dim = index[i..]] += src[i..]; index is contiguous. Serial: two
// entries of index may name the same element of self.
void scatter_add_kernel(Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  int64_t size = self.size(dim);
  check_indices("scatter_add", index, dim, size);
  const int64_t* idx = index.data<int64_t>();
  const Shape& shape = index.shape();
  visit_dtype(self.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    T* dst = static_cast<T*>(self.data_ptr());
    const T* s = static_cast<const T*>(src.data_ptr());
    for (int64_t i = 0; i < index.numel(); ++i) {
      T& target = dst[offset_with(shape, self.strides(), i, dim, wrap(idx[i], size))];
      target = T(C(target) + C(s[offset_with(shape, src.strides(), i, -1, 0)]));
    }
  });
}

}  // namespace

void register_index_kernels(KernelRegistry& r) {
  r.add<IndexKernel>(OpKey::index_select, kCPU, index_select_kernel);
  r.add<IndexKernel>(OpKey::gather, kCPU, gather_kernel);
  r.add<ScatterAddKernel>(OpKey::scatter_add, kCPU, scatter_add_kernel);
}

}  // namespace wick::cpu
