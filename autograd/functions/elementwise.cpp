#include "autograd/functions/elementwise.h"

#include "core/ops.h"

namespace wick {

namespace {
// 1 where mask is true, else 0, in the dtype of `like`.
Tensor as_float_mask(const Tensor& mask, const Tensor& like) { return mask.to(like.dtype()); }

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

TensorList AddBackward::apply(const Tensor& grad) {
  return {sum_to(grad, input_meta[0].shape), sum_to(grad, input_meta[1].shape)};
}

TensorList SubBackward::apply(const Tensor& grad) {
  return {sum_to(grad, input_meta[0].shape),
          needs(*this, 1) ? sum_to(-grad, input_meta[1].shape) : Tensor()};
}

TensorList MulBackward::apply(const Tensor& grad) {
  return {needs(*this, 0) ? sum_to(grad * b.unpack(*this), input_meta[0].shape) : Tensor(),
          needs(*this, 1) ? sum_to(grad * a.unpack(*this), input_meta[1].shape) : Tensor()};
}

TensorList DivBackward::apply(const Tensor& grad) {
  Tensor bv = b.unpack(*this);
  Tensor ga = needs(*this, 0) ? sum_to(grad / bv, input_meta[0].shape) : Tensor();
  Tensor gb;
  if (needs(*this, 1)) gb = sum_to(-(grad * a.unpack(*this)) / (bv * bv), input_meta[1].shape);
  return {ga, gb};
}

TensorList PowBackward::apply(const Tensor& grad) {
  Tensor x = base.unpack(*this), e = exponent.unpack(*this);
  Tensor gx, ge;
  if (needs(*this, 0)) gx = sum_to(grad * e * pow(x, e - 1.0), input_meta[0].shape);
  if (needs(*this, 1)) {
    // d/de x^e = x^e log x; taken as 0 where x == 0 (PyTorch's convention, avoiding 0 * -inf).
    Tensor y = result.unpack(*this);
    Tensor term = where(x == 0, zeros_like(y), y * log(x));
    ge = sum_to(grad * term, input_meta[1].shape);
  }
  return {gx, ge};
}

TensorList MaximumBackward::apply(const Tensor& grad) {
  Tensor x = a.unpack(*this), y = b.unpack(*this);
  Tensor x_wins = is_max ? x > y : x < y;
  Tensor ties = as_float_mask(x == y, grad) * 0.5;
  Tensor share_a = as_float_mask(x_wins, grad) + ties;
  Tensor share_b = as_float_mask(logical_not(x_wins), grad) - ties;
  return {sum_to(grad * share_a, input_meta[0].shape), sum_to(grad * share_b, input_meta[1].shape)};
}

TensorList BinaryMathBackward::apply(const Tensor& grad) {
  Tensor x = a.unpack(*this), y = b.unpack(*this);
  Tensor gx, gy;
  switch (op) {
    case OpKey::remainder:  // a - b floor(a / b)
      gx = grad;
      gy = -(grad * floor(x / y));
      break;
    case OpKey::fmod:  // a - b trunc(a / b)
      gx = grad;
      gy = -(grad * trunc(x / y));
      break;
    case OpKey::atan2: {  // d atan(y/x): (x dy - y dx) / (x^2 + y^2); here a is y and b is x
      Tensor r2 = x * x + y * y;
      gx = grad * y / r2;
      gy = -(grad * x) / r2;
      break;
    }
    case OpKey::hypot: {
      Tensor h = result.unpack(*this);
      gx = grad * x / h;
      gy = grad * y / h;
      break;
    }
    default:  // logaddexp: the softmax weights of a and b
      gx = grad * sigmoid(x - y);
      gy = grad * sigmoid(y - x);
  }
  return {needs(*this, 0) ? sum_to(gx, input_meta[0].shape) : Tensor(),
          needs(*this, 1) ? sum_to(gy, input_meta[1].shape) : Tensor()};
}

TensorList WhereBackward::apply(const Tensor& grad) {
  Tensor c = cond.unpack(*this);
  Tensor zero = zeros_like(grad);
  return {needs(*this, 0) ? sum_to(where(c, grad, zero), input_meta[0].shape) : Tensor(),
          needs(*this, 1) ? sum_to(where(c, zero, grad), input_meta[1].shape) : Tensor()};
}

}  // namespace wick
