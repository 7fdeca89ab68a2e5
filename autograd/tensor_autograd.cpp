// Tensor's autograd methods (declared in core/tensor.h): requires_grad, grad, grad_fn,
// backward, retain_grad and hooks. They live here, beside the engine and AutogradMeta they use,
// so that core/tensor.cpp stays free of autograd includes (docs/architecture.md).
#include "autograd/engine.h"
#include "autograd/meta.h"
#include "core/ops.h"
#include "core/tensor.h"

namespace wick {

// TensorImpl owns its AutogradMeta through a unique_ptr, so it is made and destroyed where that
// type is complete (its constructor must be able to destroy the member if a later one throws).
TensorImpl::TensorImpl(std::shared_ptr<Storage> storage_, int64_t offset_, const Shape& shape_,
                       const Strides& strides_, DType dtype_)
    : storage(std::move(storage_)),
      offset(offset_),
      shape(shape_),
      strides(strides_),
      dtype(dtype_) {
  // The backstop of Note [checked sizes]: whatever op made this view, its elements must lie
  // inside the storage and its size must not overflow, or a kernel would read or write out of
  // bounds. Ops check first with their own names; this catches any that did not.
  int64_t extent = checked_extent("tensor", shape, strides, offset);
  int64_t capacity = static_cast<int64_t>(storage->nbytes() / element_size(dtype));
  check_state(checked_numel("tensor", shape) == 0 || extent <= capacity, "tensor",
              "a view of shape ", shape, " with strides ", strides, " and offset ", offset,
              " reaches outside its storage of ", capacity, " elements");
}

TensorImpl::~TensorImpl() = default;

// ---- autograd state ----

Tensor& Tensor::requires_grad_(bool requires_grad) {
  check_value(defined(), "requires_grad_", "got an undefined tensor");
  check_type(!requires_grad || is_floating(dtype()), "requires_grad_",
             "only floating-point tensors can require gradients; this one is ", dtype());
  check_state(is_leaf(), "requires_grad_",
              "requires_grad can only be changed on leaf tensors; use detach() to get a leaf");
  impl_->requires_grad = requires_grad;
  return *this;
}

bool Tensor::is_leaf() const {
  AutogradMeta* meta = autograd_meta_if_exists(*this);
  return meta == nullptr || meta->grad_fn == nullptr;
}

Tensor Tensor::grad() const {
  AutogradMeta* meta = autograd_meta_if_exists(*this);
  return meta ? meta->grad : Tensor();
}

void Tensor::set_grad(const Tensor& grad) const {
  // PyTorch's rule and exception type (RuntimeError): a gradient must match its tensor in
  // dtype, shape and device, or an optimizer would walk the two in lockstep over different
  // element types or counts (Note [optimizer state agreement] in nn/optim/optimizer.cpp).
  if (grad.defined()) {
    check_state(grad.dtype() == dtype(), "set_grad",
                "assigned grad has data of a different type: ", grad.dtype(),
                " assigned to a tensor of ", dtype());
    check_state(grad.shape() == shape(), "set_grad",
                "assigned grad has data of a different size: ", grad.shape(),
                " assigned to a tensor of shape ", shape());
    check_state(grad.device() == device(), "set_grad",
                "assigned grad is on a different device: ", grad.device(),
                " assigned to a tensor on ", device());
  }
  autograd_meta(*this).grad = grad;
}

std::shared_ptr<Node> Tensor::grad_fn() const {
  AutogradMeta* meta = autograd_meta_if_exists(*this);
  return meta ? meta->grad_fn : nullptr;
}

void Tensor::backward(const Tensor& gradient, bool retain_graph, bool create_graph) const {
  autograd::backward({*this}, {gradient}, retain_graph, create_graph);
}

Tensor Tensor::detach() const { return wick::detach(*this); }

void Tensor::set_data(const Tensor& source) const {
  check_value(defined() && source.defined(), "set_data", "got an undefined tensor");
  check_type(!requires_grad() || is_floating(source.dtype()), "set_data",
             "a tensor that requires grad cannot hold ", source.dtype(), " data");
  impl_->storage = source.storage();
  impl_->offset = source.offset();
  impl_->shape = source.shape();
  impl_->strides = source.strides();
  impl_->dtype = source.dtype();
  if (AutogradMeta* meta = autograd_meta_if_exists(*this)) {
    // A gradient of the old dtype, device or shape no longer fits.
    if (meta->grad.defined() && (meta->grad.shape() != shape() || meta->grad.dtype() != dtype() ||
                                 meta->grad.device() != device())) {
      meta->grad = Tensor();
    }
  }
}

void Tensor::retain_grad() const {
  check_state(requires_grad(), "retain_grad", "the tensor does not require grad");
  if (is_leaf()) return;  // leaves keep their gradient anyway
  AutogradMeta& meta = autograd_meta(*this);
  if (meta.retains_grad) return;
  meta.retains_grad = true;
  // Weak, so the graph does not keep the tensor alive.
  std::weak_ptr<TensorImpl> weak = impl_;
  meta.grad_fn->pre_hooks.push_back([weak](const Tensor& grad) {
    if (auto impl = weak.lock()) {
      Tensor self(impl);
      AutogradMeta& m = autograd_meta(self);
      m.grad = m.grad.defined() ? m.grad + grad : grad.clone();
    }
    return Tensor();
  });
}

bool Tensor::retains_grad() const {
  AutogradMeta* meta = autograd_meta_if_exists(*this);
  return meta != nullptr && meta->retains_grad;
}

void Tensor::register_hook(TensorHook hook) const {
  check_state(requires_grad(), "register_hook",
              "cannot register a hook on a tensor that does not require grad");
  AutogradMeta& meta = autograd_meta(*this);
  if (meta.grad_fn) {
    meta.grad_fn->pre_hooks.push_back(std::move(hook));
  } else {
    meta.hooks.push_back(std::move(hook));
  }
}

void Tensor::register_post_accumulate_grad_hook(PostAccumulateGradHook hook) const {
  check_state(requires_grad() && is_leaf(), "register_post_accumulate_grad_hook",
              "post-accumulate-grad hooks can only be registered on leaf tensors that require "
              "grad");
  autograd_meta(*this).post_accumulate_grad_hooks.push_back(std::move(hook));
}

}  // namespace wick
