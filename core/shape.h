// Shapes and strides, and the arithmetic on them that every op shares: element counts, contiguous
// strides, broadcasting, and wrapping negative dimensions.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <ostream>
#include <string>
#include <vector>

#include "core/half.h"  // WICK_HOST_DEVICE

namespace wick {

// Note [fixed-capacity shapes]
// A shape lives inline in the tensor (no heap allocation), because a small op allocates a shape and
// strides for its output on every call and two mallocs would cost more than the arithmetic. Eight
// dimensions cover every model in this repository (PyTorch's inline capacity is five); asking for
// more raises a clear error.
constexpr int kMaxDims = 8;

class DimVec {
 public:
  DimVec() = default;
  DimVec(std::initializer_list<int64_t> dims);
  explicit DimVec(const std::vector<int64_t>& dims);
  DimVec(const int64_t* data, int64_t size);
  static DimVec filled(int64_t size, int64_t value);

  int64_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  int64_t& operator[](int64_t i) { return dims_[i]; }
  int64_t operator[](int64_t i) const { return dims_[i]; }
  int64_t back() const { return dims_[size_ - 1]; }
  const int64_t* begin() const { return dims_; }
  const int64_t* end() const { return dims_ + size_; }
  int64_t* begin() { return dims_; }
  int64_t* end() { return dims_ + size_; }
  const int64_t* data() const { return dims_; }

  void push_back(int64_t d);
  void insert(int64_t pos, int64_t d);
  void erase(int64_t pos);
  void resize(int64_t n, int64_t value = 0);
  std::vector<int64_t> vec() const { return std::vector<int64_t>(begin(), end()); }

  bool operator==(const DimVec& o) const;
  bool operator!=(const DimVec& o) const { return !(*this == o); }

 private:
  int64_t dims_[kMaxDims] = {};
  int64_t size_ = 0;
};

using Shape = DimVec;
using Strides = DimVec;

std::ostream& operator<<(std::ostream& os, const DimVec& v);  // "(2, 3)"
std::string to_string(const DimVec& v);

// The element count of a shape. Unchecked: every tensor's shape has passed checked_numel (the
// TensorImpl constructor checks), so for a tensor's shape the product cannot overflow.
int64_t numel(const Shape& shape);

// Note [checked sizes]
// Sizes are int64_t and a product or sum of user-given sizes can overflow it; an overflow wraps to
// 0, to a small number or to a negative one, and a too-small allocation or an empty tensor follows
// silently (`empty(2**62, 4)` had numel() == 0). Every size computation on values a user controls
// goes through these helpers, which raise std::runtime_error naming `op` and the operands (PyTorch
// raises RuntimeError "... overflow" too). The TensorImpl constructor checks every tensor again
// (checked_numel and checked_extent), so no op can create a tensor whose size or view overflowed,
// even if it forgot its own check.
int64_t checked_mul(const char* op, int64_t a, int64_t b);
int64_t checked_add(const char* op, int64_t a, int64_t b);
// The element count; negative dims are a ValueError, an overflowing product a RuntimeError.
int64_t checked_numel(const char* op, const Shape& shape);
// numel * element_size in bytes; "Storage size calculation overflowed" when that does not fit.
size_t checked_nbytes(const char* op, const Shape& shape, size_t element_size);
// One past the furthest element a view (shape, strides, offset) reaches, in elements, or `offset`
// when the view is empty; an overflow is a RuntimeError. The view fits a storage of n elements
// exactly when this is <= n.
int64_t checked_extent(const char* op, const Shape& shape, const Strides& strides, int64_t offset);
Strides contiguous_strides(const Shape& shape);
bool is_contiguous(const Shape& shape, const Strides& strides);

// The broadcast shape of two shapes (NumPy rules), or an error naming `op` and both shapes.
Shape broadcast_shapes(const char* op, const Shape& a, const Shape& b);

// Note [index bounds]
// One rule for every op that reads or writes through index values (index_select, gather,
// scatter_add, embedding, one_hot, the losses' class targets): an index must lie in [0, size),
// as in PyTorch. Negative indices count from the end only where PyTorch accepts them - select(),
// narrow() and advanced indexing x[idx], which wrap them before calling index_select - so an
// embedding index of -1 raises instead of silently returning the last row. The CPU and CUDA
// kernels both check with this function.
WICK_HOST_DEVICE inline bool index_in_range(int64_t index, int64_t size) {
  return index >= 0 && index < size;
}

// Wraps a possibly negative dimension into [0, ndim); throws std::out_of_range naming `op`.
int64_t wrap_dim(const char* op, int64_t dim, int64_t ndim);

// The dims to reduce over as a sorted, wrapped, duplicate-free list; an empty list means all.
DimVec reduction_dims(const char* op, const std::vector<int64_t>& dims, int64_t ndim);

}  // namespace wick
