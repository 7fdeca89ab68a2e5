// Tensor: the handle users hold. Copying a Tensor copies a shared pointer, never data; two handles
// to the same TensorImpl are the same tensor. The methods here mirror PyTorch's Tensor methods and
// forward to the free functions in core/ops/ (`x.exp()` is `wick::exp(x)`).
#pragma once

#include <functional>
#include <initializer_list>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "core/device.h"
#include "core/dtype.h"
#include "core/ops/op_list.h"
#include "core/scalar.h"
#include "core/shape.h"
#include "core/tensor_impl.h"

namespace wick {

class Node;
class Tensor;

using DimList = std::vector<int64_t>;
// A hook sees the gradient flowing into a tensor; returning a defined tensor replaces it.
using TensorHook = std::function<Tensor(const Tensor& grad)>;
// Runs after a leaf's .grad has been updated in backward (DDP launches all-reduces from these).
using PostAccumulateGradHook = std::function<void(const Tensor& leaf)>;

struct ValuesIndices;

class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}

  bool defined() const { return impl_ != nullptr; }
  TensorImpl* impl() const { return impl_.get(); }
  const std::shared_ptr<TensorImpl>& impl_ptr() const { return impl_; }
  bool is_same(const Tensor& other) const { return impl_ == other.impl_; }

  // ---- metadata ----
  const Shape& shape() const { return impl_->shape; }
  const Strides& strides() const { return impl_->strides; }
  int64_t dim() const { return impl_->shape.size(); }
  int64_t size(int64_t dim) const;  // negative dims count from the end
  int64_t stride(int64_t dim) const;
  int64_t numel() const { return wick::numel(impl_->shape); }
  int64_t offset() const { return impl_->offset; }
  DType dtype() const { return impl_->dtype; }
  Device device() const { return impl_->storage->device(); }
  size_t element_size() const { return wick::element_size(impl_->dtype); }
  size_t nbytes() const { return numel() * element_size(); }
  bool is_contiguous() const { return wick::is_contiguous(impl_->shape, impl_->strides); }
  bool is_floating_point() const { return is_floating(impl_->dtype); }
  const std::shared_ptr<Storage>& storage() const { return impl_->storage; }
  uint64_t version() const { return impl_->storage->version(); }
  void bump_version() const { impl_->storage->bump_version(); }

  // Pointer to the first element. data<T>() checks that T matches the dtype.
  void* data_ptr() const { return impl_->data(); }
  template <class T>
  T* data() const {
    check_type(dtype_of<T>::value == dtype(), "data", "tensor has dtype ", dtype(),
               ", not the requested ", dtype_of<T>::value);
    return reinterpret_cast<T*>(impl_->data());
  }

  // The value of a one-element tensor; item<T>() converts it to T.
  Scalar item() const;
  template <class T>
  T item() const {
    return item().to<T>();
  }
  // All elements in row-major order, converted to T.
  template <class T>
  std::vector<T> to_vector() const;

  // ---- autograd ----
  bool requires_grad() const { return impl_->requires_grad; }
  Tensor& requires_grad_(bool requires_grad = true);
  bool is_leaf() const;
  Tensor grad() const;  // undefined when no gradient has been accumulated
  void set_grad(const Tensor& grad) const;
  std::shared_ptr<Node> grad_fn() const;
  void backward(const Tensor& gradient = Tensor(), bool retain_graph = false,
                bool create_graph = false) const;
  Tensor detach() const;  // same storage, no history
  // Makes this tensor (every handle to it) view `source`'s data, keeping its autograd identity:
  // PyTorch's `param.data = ...`, used by Module::to() so optimizers keep their handles.
  void set_data(const Tensor& source) const;
  void retain_grad() const;
  bool retains_grad() const;
  void register_hook(TensorHook hook) const;
  void register_post_accumulate_grad_hook(PostAccumulateGradHook hook) const;

  // ---- conversion and copies ----
  Tensor to(DType dtype) const;
  Tensor to(Device device) const;
  Tensor to(Device device, DType dtype) const;
  Tensor cpu() const { return to(Device(kCPU)); }
  Tensor contiguous() const;
  Tensor clone() const;

  // ---- views and shape ----
  Tensor reshape(const Shape& shape) const;
  Tensor view(const Shape& shape) const;
  Tensor flatten(int64_t start_dim = 0, int64_t end_dim = -1) const;
  Tensor permute(const DimList& dims) const;
  Tensor transpose(int64_t dim0, int64_t dim1) const;
  Tensor t() const;  // transpose of a matrix; a 1-D or 0-D tensor is returned as is
  Tensor squeeze() const;
  Tensor squeeze(int64_t dim) const;
  Tensor unsqueeze(int64_t dim) const;
  Tensor expand(const Shape& shape) const;  // -1 keeps a dimension's size
  Tensor expand_as(const Tensor& other) const;
  Tensor narrow(int64_t dim, int64_t start, int64_t length) const;
  Tensor slice(int64_t dim, int64_t start, int64_t end, int64_t step = 1) const;
  Tensor select(int64_t dim, int64_t index) const;
  Tensor operator[](int64_t index) const { return select(0, index); }
  Tensor as_strided(const Shape& shape, const Strides& strides, int64_t offset) const;
  std::vector<Tensor> split(int64_t split_size, int64_t dim = 0) const;
  std::vector<Tensor> chunk(int64_t chunks, int64_t dim = 0) const;

  // ---- elementwise math: a method per op of the op table (core/ops/op_list.h) ----
  // x.exp() is wick::exp(x) for every plain unary row; x.add(y) is wick::add(x, y) for every
  // binary row, and x.add(2) too where the row's api is `number`.
#define WICK_UNARY_METHOD(name, api, ...) WICK_IF_##api(Tensor name() const;)
  WICK_UNARY_OPS(WICK_UNARY_METHOD)
#undef WICK_UNARY_METHOD
#define WICK_BINARY_METHOD(name, api, ...)                      \
  WICK_IF_TENSOR_##api(Tensor name(const Tensor& other) const;) \
      WICK_IF_SCALAR_##api(Tensor name(const Scalar& other) const;)
  WICK_BINARY_OPS(WICK_BINARY_METHOD)
#undef WICK_BINARY_METHOD
  Tensor pow(const Scalar& exponent) const;
  Tensor clamp(const Scalar& min, const Scalar& max) const;
  Tensor masked_fill(const Tensor& mask, const Scalar& value) const;

  // ---- reductions ----
  Tensor sum(const DimList& dims = {}, bool keepdim = false) const;
  Tensor mean(const DimList& dims = {}, bool keepdim = false) const;
  Tensor max() const;
  Tensor min() const;
  ValuesIndices max(int64_t dim, bool keepdim = false) const;
  ValuesIndices min(int64_t dim, bool keepdim = false) const;
  Tensor argmax(int64_t dim, bool keepdim = false) const;
  Tensor argmin(int64_t dim, bool keepdim = false) const;
  Tensor var(const DimList& dims = {}, int64_t correction = 1, bool keepdim = false) const;
  Tensor std(const DimList& dims = {}, int64_t correction = 1, bool keepdim = false) const;
  Tensor logsumexp(const DimList& dims, bool keepdim = false) const;

  // ---- linear algebra, softmax, indexing ----
  Tensor matmul(const Tensor& other) const;
  Tensor softmax(int64_t dim) const;
  Tensor log_softmax(int64_t dim) const;
  Tensor index_select(int64_t dim, const Tensor& index) const;
  Tensor gather(int64_t dim, const Tensor& index) const;
  Tensor scatter_add(int64_t dim, const Tensor& index, const Tensor& src) const;

  // ---- in place (bump the version counter; see Note [version counter]) ----
  Tensor& add_(const Tensor& other);
  Tensor& add_(const Scalar& other);
  Tensor& sub_(const Tensor& other);
  Tensor& mul_(const Tensor& other);
  Tensor& mul_(const Scalar& other);
  Tensor& div_(const Scalar& other);
  Tensor& zero_();
  Tensor& fill_(const Scalar& value);
  Tensor& copy_(const Tensor& src);

  std::string str() const;  // what operator<< prints

 private:
  std::shared_ptr<TensorImpl> impl_;
};

// max(dim) and min(dim) return both, like PyTorch's named tuple: auto [values, indices] = ...
struct ValuesIndices {
  Tensor values;
  Tensor indices;
};

std::ostream& operator<<(std::ostream& os, const Tensor& t);

}  // namespace wick
