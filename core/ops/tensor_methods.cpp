// Tensor methods that forward to the free functions of core/ops (x.exp() is wick::exp(x)).
#include "core/ops.h"

namespace wick {

Tensor Tensor::to(DType dtype) const { return wick::to(*this, device(), dtype); }
Tensor Tensor::to(Device device) const { return wick::to(*this, device, dtype()); }
Tensor Tensor::to(Device device, DType dtype) const { return wick::to(*this, device, dtype); }
Tensor Tensor::contiguous() const { return wick::contiguous(*this); }
Tensor Tensor::clone() const { return wick::clone(*this); }

Tensor Tensor::reshape(const Shape& shape) const { return wick::reshape(*this, shape); }
Tensor Tensor::view(const Shape& shape) const { return wick::view(*this, shape); }
Tensor Tensor::flatten(int64_t start, int64_t end) const {
  return wick::flatten(*this, start, end);
}
Tensor Tensor::permute(const DimList& dims) const { return wick::permute(*this, dims); }
Tensor Tensor::transpose(int64_t d0, int64_t d1) const { return wick::transpose(*this, d0, d1); }
Tensor Tensor::t() const { return dim() < 2 ? *this : wick::transpose(*this, 0, 1); }
Tensor Tensor::squeeze() const { return wick::squeeze(*this); }
Tensor Tensor::squeeze(int64_t dim) const { return wick::squeeze(*this, dim); }
Tensor Tensor::unsqueeze(int64_t dim) const { return wick::unsqueeze(*this, dim); }
Tensor Tensor::expand(const Shape& shape) const { return wick::expand(*this, shape); }
Tensor Tensor::expand_as(const Tensor& other) const { return wick::expand(*this, other.shape()); }
Tensor Tensor::narrow(int64_t dim, int64_t start, int64_t length) const {
  return wick::narrow(*this, dim, start, length);
}
Tensor Tensor::slice(int64_t dim, int64_t start, int64_t end, int64_t step) const {
  return wick::slice(*this, dim, start, end, step);
}
Tensor Tensor::select(int64_t dim, int64_t index) const { return wick::select(*this, dim, index); }
Tensor Tensor::as_strided(const Shape& shape, const Strides& strides, int64_t offset) const {
  return wick::as_strided(*this, shape, strides, offset);
}
std::vector<Tensor> Tensor::split(int64_t size, int64_t dim) const {
  return wick::split(*this, size, dim);
}
std::vector<Tensor> Tensor::chunk(int64_t chunks, int64_t dim) const {
  return wick::chunk(*this, chunks, dim);
}

#define WICK_UNARY_METHOD(name, api, ...) \
  WICK_IF_##api(Tensor Tensor::name() const { return wick::name(*this); })
WICK_UNARY_OPS(WICK_UNARY_METHOD)
#undef WICK_UNARY_METHOD
#define WICK_BINARY_METHOD(name, api, ...)                              \
  WICK_IF_TENSOR_##api(Tensor Tensor::name(const Tensor& other) const { \
    return wick::name(*this, other);                                    \
  }) WICK_IF_SCALAR_##api(Tensor Tensor::name(const Scalar& other)      \
                              const { return wick::name(*this, other); })
WICK_BINARY_OPS(WICK_BINARY_METHOD)
#undef WICK_BINARY_METHOD
Tensor Tensor::pow(const Scalar& exponent) const { return wick::pow(*this, exponent); }
Tensor Tensor::clamp(const Scalar& min, const Scalar& max) const {
  return wick::clamp(*this, min, max);
}
Tensor Tensor::masked_fill(const Tensor& mask, const Scalar& value) const {
  return wick::masked_fill(*this, mask, value);
}

Tensor Tensor::sum(const DimList& dims, bool keepdim) const {
  return wick::sum(*this, dims, keepdim);
}
Tensor Tensor::mean(const DimList& dims, bool keepdim) const {
  return wick::mean(*this, dims, keepdim);
}
Tensor Tensor::max() const { return wick::max(*this); }
Tensor Tensor::min() const { return wick::min(*this); }
ValuesIndices Tensor::max(int64_t dim, bool keepdim) const {
  return wick::max(*this, dim, keepdim);
}
ValuesIndices Tensor::min(int64_t dim, bool keepdim) const {
  return wick::min(*this, dim, keepdim);
}
Tensor Tensor::argmax(int64_t dim, bool keepdim) const { return wick::argmax(*this, dim, keepdim); }
Tensor Tensor::argmin(int64_t dim, bool keepdim) const { return wick::argmin(*this, dim, keepdim); }
Tensor Tensor::var(const DimList& dims, int64_t correction, bool keepdim) const {
  return wick::var(*this, dims, correction, keepdim);
}
Tensor Tensor::std(const DimList& dims, int64_t correction, bool keepdim) const {
  return wick::std(*this, dims, correction, keepdim);
}
Tensor Tensor::logsumexp(const DimList& dims, bool keepdim) const {
  return wick::logsumexp(*this, dims, keepdim);
}

Tensor Tensor::matmul(const Tensor& other) const { return wick::matmul(*this, other); }
Tensor Tensor::softmax(int64_t dim) const { return wick::softmax(*this, dim); }
Tensor Tensor::log_softmax(int64_t dim) const { return wick::log_softmax(*this, dim); }
Tensor Tensor::index_select(int64_t dim, const Tensor& index) const {
  return wick::index_select(*this, dim, index);
}
Tensor Tensor::gather(int64_t dim, const Tensor& index) const {
  return wick::gather(*this, dim, index);
}
Tensor Tensor::scatter_add(int64_t dim, const Tensor& index, const Tensor& src) const {
  return wick::scatter_add(*this, dim, index, src);
}

}  // namespace wick
