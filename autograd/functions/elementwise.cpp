#include "autograd/functions/elementwise.h"

#include "core/ops.h"

namespace wick {

namespace {
bool needs(const Node& node, size_t i) { return node.next[i] != nullptr; }
}  // namespace

void UnaryBackward::init(const OpInfo& op, const Tensor& saved, const UnaryAttrs& attrs) {
  op_ = &op;
  if (op.saves != Saves::Nothing) saved_ = SavedTensor(saved, op.saves == Saves::Output);
  attrs_ = attrs;
}

TensorList UnaryBackward::apply(const Tensor& grad) {
  return {op_->unary_grad(grad, saved_.unpack(*this), attrs_)};
}

void BinaryBackward::init(const OpInfo& op, const Tensor& a, const Tensor& b, const Tensor& out) {
  op_ = &op;
  if (needs(*this, 0)) saved_ |= op.reads_a;
  if (needs(*this, 1)) saved_ |= op.reads_b;
  if (saved_ & reads::A) a_ = SavedTensor(a);
  if (saved_ & reads::B) b_ = SavedTensor(b);
  if (saved_ & reads::Out) out_ = SavedTensor(out, /*is_output=*/true);
}

TensorList BinaryBackward::apply(const Tensor& grad) {
  BinaryGradArgs args;
  args.grad = grad;
  // Only what was saved is unpacked: add saves nothing, so backward through it twice is allowed.
  if (saved_ & reads::A) args.a = a_.unpack(*this);
  if (saved_ & reads::B) args.b = b_.unpack(*this);
  if (saved_ & reads::Out) args.out = out_.unpack(*this);
  args.needs_a = needs(*this, 0), args.needs_b = needs(*this, 1);
  BinaryGrads g = op_->binary_grad(args);
  return {args.needs_a ? sum_to(g.a, input_meta[0].shape) : Tensor(),
          args.needs_b ? sum_to(g.b, input_meta[1].shape) : Tensor()};
}

TensorList WhereBackward::apply(const Tensor& grad) {
  Tensor c = cond.unpack(*this);
  Tensor zero = zeros_like(grad);
  return {needs(*this, 0) ? sum_to(where(c, grad, zero), input_meta[0].shape) : Tensor(),
          needs(*this, 1) ? sum_to(where(c, zero, grad), input_meta[1].shape) : Tensor()};
}

}  // namespace wick
