// Tensor's own methods: metadata and values. The math and view methods are thin forwards to the
// free functions (tensor_methods.cpp); the autograd methods live with the engine
// (autograd/tensor_autograd.cpp), so core's tensor code needs no autograd include.
#include "core/tensor.h"

#include "core/ops.h"

namespace wick {

int64_t Tensor::size(int64_t dim) const {
  return impl_->shape[wrap_dim("size", dim, impl_->shape.size())];
}

int64_t Tensor::stride(int64_t dim) const {
  return impl_->strides[wrap_dim("stride", dim, impl_->strides.size())];
}

Scalar Tensor::item() const {
  check_value(defined(), "item", "got an undefined tensor");
  check_value(numel() == 1, "item", "only a tensor with one element can be converted to a scalar; ",
              "this one has shape ", shape());
  Tensor host = device().is_cpu() ? *this : cpu();
  return visit_dtype(dtype(), [&](auto tag) -> Scalar {
    using T = typename decltype(tag)::type;
    return Scalar(static_cast<compute_t<T>>(*static_cast<const T*>(host.data_ptr())));
  });
}

template <class T>
std::vector<T> Tensor::to_vector() const {
  check_value(defined(), "to_vector", "got an undefined tensor");
  Tensor host = wick::to(*this, Device(kCPU), dtype_of<T>::value).contiguous();
  const T* data = static_cast<const T*>(host.data_ptr());
  return std::vector<T>(data, data + host.numel());
}
template std::vector<float> Tensor::to_vector() const;
template std::vector<double> Tensor::to_vector() const;
template std::vector<int64_t> Tensor::to_vector() const;
template std::vector<int32_t> Tensor::to_vector() const;
template std::vector<uint8_t> Tensor::to_vector() const;
template std::vector<int8_t> Tensor::to_vector() const;

}  // namespace wick
