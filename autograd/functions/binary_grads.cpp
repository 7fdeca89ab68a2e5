#include "autograd/functions/binary_grads.h"

#include "core/ops.h"

namespace wick {

namespace {

// 1 where mask is true, else 0, in the dtype of `like`.
Tensor as_mask(const Tensor& mask, const Tensor& like) { return mask.to(like.dtype()); }

// maximum and minimum: the gradient goes to the input that was chosen, split evenly on ties.
BinaryGrads extremum_grad(const BinaryGradArgs& s, bool is_max) {
  Tensor a_wins = is_max ? s.a > s.b : s.a < s.b;
  Tensor ties = as_mask(s.a == s.b, s.grad) * 0.5;
  Tensor share_a = as_mask(a_wins, s.grad) + ties;
  Tensor share_b = as_mask(logical_not(a_wins), s.grad) - ties;
  return {s.needs_a ? s.grad * share_a : Tensor(), s.needs_b ? s.grad * share_b : Tensor()};
}

}  // namespace

BinaryGrads add_grad(const BinaryGradArgs& s) {
  return {s.needs_a ? s.grad : Tensor(), s.needs_b ? s.grad : Tensor()};
}

BinaryGrads sub_grad(const BinaryGradArgs& s) {
  return {s.needs_a ? s.grad : Tensor(), s.needs_b ? -s.grad : Tensor()};
}

BinaryGrads mul_grad(const BinaryGradArgs& s) {
  return {s.needs_a ? s.grad * s.b : Tensor(), s.needs_b ? s.grad * s.a : Tensor()};
}

BinaryGrads div_grad(const BinaryGradArgs& s) {
  return {s.needs_a ? s.grad / s.b : Tensor(),
          s.needs_b ? -(s.grad * s.a) / (s.b * s.b) : Tensor()};
}

BinaryGrads pow_grad(const BinaryGradArgs& s) {
  BinaryGrads g;
  if (s.needs_a) g.a = s.grad * s.b * pow(s.a, s.b - 1.0);
  // d/de x^e = x^e log x; taken as 0 where x == 0 (PyTorch's convention, avoiding 0 * -inf).
  if (s.needs_b) g.b = s.grad * where(s.a == 0, zeros_like(s.out), s.out * log(s.a));
  return g;
}

BinaryGrads maximum_grad(const BinaryGradArgs& s) { return extremum_grad(s, true); }
BinaryGrads minimum_grad(const BinaryGradArgs& s) { return extremum_grad(s, false); }

BinaryGrads remainder_grad(const BinaryGradArgs& s) {  // a - b floor(a / b)
  return {s.needs_a ? s.grad : Tensor(), s.needs_b ? -(s.grad * floor(s.a / s.b)) : Tensor()};
}

BinaryGrads fmod_grad(const BinaryGradArgs& s) {  // a - b trunc(a / b)
  return {s.needs_a ? s.grad : Tensor(), s.needs_b ? -(s.grad * trunc(s.a / s.b)) : Tensor()};
}

// A rounded quotient is a step function of both operands: its gradient is zero wherever it
// exists, which is what PyTorch's div(rounding_mode=...) returns (PyTorch 1.13's floor_divide,
// the same quotient, raises "not implemented" in backward instead; wick's // follows div).
BinaryGrads div_floor_grad(const BinaryGradArgs& s) {
  return {s.needs_a ? zeros_like(s.grad) : Tensor(), s.needs_b ? zeros_like(s.grad) : Tensor()};
}
BinaryGrads div_trunc_grad(const BinaryGradArgs& s) { return div_floor_grad(s); }

// atan2(a, b) = atan(a / b): d = (b da - a db) / (a^2 + b^2).
BinaryGrads atan2_grad(const BinaryGradArgs& s) {
  Tensor r2 = s.a * s.a + s.b * s.b;
  return {s.needs_a ? s.grad * s.b / r2 : Tensor(), s.needs_b ? -(s.grad * s.a) / r2 : Tensor()};
}

BinaryGrads hypot_grad(const BinaryGradArgs& s) {
  return {s.needs_a ? s.grad * s.a / s.out : Tensor(), s.needs_b ? s.grad * s.b / s.out : Tensor()};
}

// The softmax weights of a and b.
BinaryGrads logaddexp_grad(const BinaryGradArgs& s) {
  return {s.needs_a ? s.grad * sigmoid(s.a - s.b) : Tensor(),
          s.needs_b ? s.grad * sigmoid(s.b - s.a) : Tensor()};
}

}  // namespace wick
