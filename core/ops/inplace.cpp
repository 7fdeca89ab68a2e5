// In-place ops: add_, sub_, mul_, div_, zero_, fill_, copy_.
//
// Note [in-place and autograd]
// Outside autograd (grad mode off, as in optimizer steps, or no input requires grad) an in-place
// op runs its kernel with the output aliasing the input and bumps the version counter.
// When autograd must track it, wick computes the op out of place on a clone of the old value, then
// copies the result into the tensor and makes the result's node the tensor's grad_fn (PyTorch
// calls this rebasing history). The clone keeps the old value for any backward that needs it,
// so `a.mul_(b)` gives correct gradients for both. Two cases are refused with an error rather
// than risking a wrong gradient: an in-place op on a leaf that requires grad (it would change
// the parameter autograd differentiates against), and an in-place op on a view while recording
// (PyTorch rewrites the base's history in that case; wick does not).
#include "autograd/meta.h"
#include "autograd/node.h"
#include "core/grad_mode.h"
#include "core/op_table.h"
#include "core/ops.h"
#include "core/ops/op_utils.h"

namespace wick {

namespace {

bool can_cast(DType from, DType to) {
  if (is_floating(from) && !is_floating(to)) return false;
  if (from != kBool && to == kBool) return false;
  return true;
}

// Validates an in-place write into `self`; returns whether autograd must record it.
bool check_inplace(const char* op, const Tensor& self, const Tensor* other) {
  detail::check_defined(op, self);
  detail::check_no_internal_overlap(op, self);
  if (other != nullptr) {
    detail::check_defined(op, *other);
    detail::check_no_partial_overlap(op, self, *other);  // Note [partial overlap]
    check_value(broadcast_shapes(op, self.shape(), other->shape()) == self.shape(), op,
                "the result of shape ", broadcast_shapes(op, self.shape(), other->shape()),
                " does not fit the tensor being updated, of shape ", self.shape());
  }
  if (!needs_grad(self, other ? *other : Tensor())) return false;
  check_state(!(self.is_leaf() && self.requires_grad()), op,
              "a leaf tensor that requires grad is used in an in-place operation; run it under "
              "NoGradGuard (as optimizers do) or use the out-of-place op");
  check_state(!self.impl()->is_view, op,
              "in-place ops on views are not recorded by autograd; use the out-of-place op "
              "(see Note [in-place and autograd])");
  return true;
}

// Makes `self` hold `result` (same shape), with result's history (Note [in-place and autograd]).
Tensor& rebase(Tensor& self, const Tensor& result) {
  dispatch<CopyKernel>(OpKey::copy, self.device(), result.detach(), self);
  self.bump_version();
  if (result.requires_grad()) {
    set_history(self, result.grad_fn());
  } else {
    self.impl()->requires_grad = false;
    autograd_meta(self).grad_fn = nullptr;
  }
  return self;
}

using OutOfPlace = Tensor (*)(const Tensor&, const Tensor&);

Tensor& binary_inplace(const char* name, OpKey op, OutOfPlace out_of_place, Tensor& self,
                       const Tensor& other) {
  if (check_inplace(name, self, &other)) return rebase(self, out_of_place(self.clone(), other));
  DType result = op_info(op).dtype == DTypeRule::PromoteFloating && !is_floating(self.dtype())
                     ? kFloat32
                     : promote_types(self.dtype(), other.dtype());
  check_type(can_cast(result, self.dtype()), name, "the result type ", result,
             " cannot be stored in a tensor of dtype ", self.dtype());
  detail::check_same_device(name, self, other);
  dispatch<BinaryKernel>(op, self.device(), self, detail::cast(other, self.dtype()), self);
  self.bump_version();
  return self;
}

Tensor wrap(const Tensor& self, const Scalar& s) {
  detail::check_defined("in-place op", self);
  return detail::wrap_scalar(s, self.dtype(), self.device());
}

}  // namespace

Tensor& Tensor::add_(const Tensor& other) {
  return binary_inplace("add_", OpKey::add, wick::add, *this, other);
}
Tensor& Tensor::add_(const Scalar& other) { return add_(wrap(*this, other)); }

Tensor& Tensor::sub_(const Tensor& other) {
  return binary_inplace("sub_", OpKey::sub, wick::sub, *this, other);
}

Tensor& Tensor::mul_(const Tensor& other) {
  return binary_inplace("mul_", OpKey::mul, wick::mul, *this, other);
}
Tensor& Tensor::mul_(const Scalar& other) { return mul_(wrap(*this, other)); }

Tensor& Tensor::div_(const Scalar& other) {
  return binary_inplace("div_", OpKey::div, wick::div, *this, wrap(*this, other));
}

Tensor& Tensor::zero_() { return fill_(0); }

Tensor& Tensor::fill_(const Scalar& value) {
  if (check_inplace("fill_", *this, nullptr)) return rebase(*this, full_like(*this, value));
  dispatch<FillKernel>(OpKey::fill, device(), *this, value);
  bump_version();
  return *this;
}

Tensor& Tensor::copy_(const Tensor& src) {
  if (check_inplace("copy_", *this, &src)) {
    return rebase(*this, src.to(device(), dtype()).expand(shape()));
  }
  // A copy between devices runs on the device side (see copy_to in view.cpp).
  Device runner = device().is_cpu() ? src.device() : device();
  dispatch<CopyKernel>(OpKey::copy, runner, src, *this);
  bump_version();
  return *this;
}

}  // namespace wick
