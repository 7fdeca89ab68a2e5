#include "core/shape.h"

#include <algorithm>
#include <sstream>

#include "core/error.h"

namespace wick {

namespace {
bool numel_has_zero(const DimVec& shape) {
  return std::find(shape.begin(), shape.end(), 0) != shape.end();
}

void check_rank(int64_t n) {
  check_value(n <= kMaxDims, "shape", "at most ", kMaxDims, " dimensions are supported; got ", n,
              " (see Note [fixed-capacity shapes])");
}
}  // namespace

DimVec::DimVec(std::initializer_list<int64_t> dims) : DimVec(dims.begin(), dims.size()) {}

DimVec::DimVec(const std::vector<int64_t>& dims) : DimVec(dims.data(), dims.size()) {}

DimVec::DimVec(const int64_t* data, int64_t size) {
  check_rank(size);
  std::copy(data, data + size, dims_);
  size_ = size;
}

DimVec DimVec::filled(int64_t size, int64_t value) {
  DimVec v;
  v.resize(size, value);
  return v;
}

void DimVec::push_back(int64_t d) {
  check_rank(size_ + 1);
  dims_[size_++] = d;
}

void DimVec::insert(int64_t pos, int64_t d) {
  check_rank(size_ + 1);
  std::copy_backward(dims_ + pos, dims_ + size_, dims_ + size_ + 1);
  dims_[pos] = d;
  ++size_;
}

void DimVec::erase(int64_t pos) {
  std::copy(dims_ + pos + 1, dims_ + size_, dims_ + pos);
  --size_;
}

void DimVec::resize(int64_t n, int64_t value) {
  check_rank(n);
  for (int64_t i = size_; i < n; ++i) dims_[i] = value;
  size_ = n;
}

bool DimVec::operator==(const DimVec& o) const {
  return size_ == o.size_ && std::equal(begin(), end(), o.begin());
}

std::ostream& operator<<(std::ostream& os, const DimVec& v) {
  os << '(';
  for (int64_t i = 0; i < v.size(); ++i) os << (i ? ", " : "") << v[i];
  if (v.size() == 1) os << ',';  // Python's one-tuple, so "(3,)" reads as a shape
  return os << ')';
}

std::string to_string(const DimVec& v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

int64_t numel(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

int64_t checked_mul(const char* op, int64_t a, int64_t b) {
  int64_t out = 0;
  check_state(!__builtin_mul_overflow(a, b, &out), op, "integer multiplication overflow: ", a,
              " * ", b, " does not fit in 64 bits");
  return out;
}

int64_t checked_add(const char* op, int64_t a, int64_t b) {
  int64_t out = 0;
  check_state(!__builtin_add_overflow(a, b, &out), op, "integer addition overflow: ", a, " + ", b,
              " does not fit in 64 bits");
  return out;
}

int64_t checked_numel(const char* op, const Shape& shape) {
  int64_t n = 1;
  bool overflow = false;
  for (int64_t d : shape) {
    check_value(d >= 0, op, "negative dimension ", d, " in shape ", shape);
    // Keep scanning after an overflow: a later 0 makes the shape empty, which is valid.
    overflow = overflow || __builtin_mul_overflow(n, d, &n);
  }
  if (numel_has_zero(shape)) return 0;
  check_state(!overflow, op, "the shape ", shape,
              " has too many elements: numel: integer multiplication overflow");
  return n;
}

size_t checked_nbytes(const char* op, const Shape& shape, size_t element_size) {
  int64_t n = checked_numel(op, shape);
  int64_t bytes = 0;
  check_state(!__builtin_mul_overflow(n, static_cast<int64_t>(element_size), &bytes), op,
              "Storage size calculation overflowed with sizes=", shape, " and itemsize ",
              element_size);
  return static_cast<size_t>(bytes);
}

int64_t checked_extent(const char* op, const Shape& shape, const Strides& strides, int64_t offset) {
  check_value(shape.size() == strides.size(), op, "shape ", shape, " and strides ", strides,
              " have different lengths");
  check_value(offset >= 0, op, "negative storage offset ", offset);
  if (checked_numel(op, shape) == 0) return offset;
  int64_t last = offset;  // the furthest element, then one past it
  bool overflow = false;
  for (int64_t d = 0; d < shape.size(); ++d) {
    check_value(strides[d] >= 0, op, "negative strides are not supported; got strides ", strides);
    int64_t step = 0;
    overflow = overflow || __builtin_mul_overflow(shape[d] - 1, strides[d], &step) ||
               __builtin_add_overflow(last, step, &last);
  }
  overflow = overflow || __builtin_add_overflow(last, int64_t{1}, &last);
  check_state(!overflow, op, "Storage size calculation overflowed with sizes=", shape,
              " and strides=", strides, " (offset ", offset, ")");
  return last;
}

Strides contiguous_strides(const Shape& shape) {
  Strides strides = Strides::filled(shape.size(), 1);
  for (int64_t i = shape.size() - 2; i >= 0; --i) {
    strides[i] = strides[i + 1] * std::max<int64_t>(shape[i + 1], 1);
  }
  return strides;
}

bool is_contiguous(const Shape& shape, const Strides& strides) {
  if (numel(shape) == 0) return true;  // no element to misplace (PyTorch agrees)
  int64_t expected = 1;
  for (int64_t i = shape.size() - 1; i >= 0; --i) {
    if (shape[i] == 1) continue;  // a size-1 dim's stride never matters
    if (strides[i] != expected) return false;
    expected *= shape[i];
  }
  return true;
}

Shape broadcast_shapes(const char* op, const Shape& a, const Shape& b) {
  if (a == b) return a;
  int64_t n = std::max(a.size(), b.size());
  Shape out = Shape::filled(n, 1);
  for (int64_t i = 0; i < n; ++i) {
    int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    check_value(da == db || da == 1 || db == 1, op, "shapes ", a, " and ", b,
                " cannot be broadcast together (dimension ", i, ": ", da, " vs ", db, ")");
    out[i] = da == 1 ? db : da;
  }
  checked_numel(op, out);  // two expanded tensors can broadcast to more elements than fit
  return out;
}

int64_t wrap_dim(const char* op, int64_t dim, int64_t ndim) {
  int64_t n = std::max<int64_t>(ndim, 1);  // a 0-d tensor accepts dim 0 and -1, like PyTorch
  check_index(dim >= -n && dim < n, op, "dimension out of range (expected to be in [", -n, ", ",
              n - 1, "]); got ", dim);
  return dim < 0 ? dim + n : dim;
}

DimVec reduction_dims(const char* op, const std::vector<int64_t>& dims, int64_t ndim) {
  DimVec out;
  for (int64_t d : dims) {
    int64_t w = wrap_dim(op, d, ndim);
    check_value(std::find(out.begin(), out.end(), w) == out.end(), op, "dimension ", d,
                " appears more than once in the list of dims");
    out.push_back(w);
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace wick
