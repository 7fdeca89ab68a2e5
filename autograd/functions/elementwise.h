// Backward nodes of the elementwise ops. Each formula is written with wick ops, so it runs on any
// device; binary formulas end in sum_to() to undo broadcasting.
#pragma once

#include "autograd/node.h"
#include "core/kernels.h"

namespace wick {

// The backward of a one-input op: d(input) = formula(grad, saved, params), where `saved` is the
// op's input or its output, whichever the derivative is cheaper in (exp saves its output).
class UnaryBackward : public Node {
 public:
  using Formula = Tensor (*)(const Tensor& grad, const Tensor& saved, const UnaryParams& params);
  UnaryBackward() = default;
  void init(const char* name, Formula formula, const Tensor& saved, bool saved_is_output,
            UnaryParams params = {});
  const char* name() const override { return name_; }
  TensorList apply(const Tensor& grad) override;
  void release_saved() override { saved_.reset(); }

 private:
  const char* name_ = "UnaryBackward";
  Formula formula_ = nullptr;
  SavedTensor saved_;
  UnaryParams params_;
};

// Derivative formulas for UnaryBackward.
Tensor neg_backward(const Tensor& grad, const Tensor& input, const UnaryParams&);
Tensor abs_backward(const Tensor& grad, const Tensor& input, const UnaryParams&);
Tensor exp_backward(const Tensor& grad, const Tensor& result, const UnaryParams&);
Tensor log_backward(const Tensor& grad, const Tensor& input, const UnaryParams&);
Tensor sqrt_backward(const Tensor& grad, const Tensor& result, const UnaryParams&);
Tensor rsqrt_backward(const Tensor& grad, const Tensor& result, const UnaryParams&);
Tensor sin_backward(const Tensor& grad, const Tensor& input, const UnaryParams&);
Tensor cos_backward(const Tensor& grad, const Tensor& input, const UnaryParams&);
Tensor tanh_backward_formula(const Tensor& grad, const Tensor& result, const UnaryParams&);
Tensor sigmoid_backward_formula(const Tensor& grad, const Tensor& result, const UnaryParams&);
Tensor relu_backward_formula(const Tensor& grad, const Tensor& result, const UnaryParams&);
Tensor gelu_backward_formula(const Tensor& grad, const Tensor& input, const UnaryParams& p);
Tensor silu_backward_formula(const Tensor& grad, const Tensor& input, const UnaryParams&);
Tensor leaky_relu_backward(const Tensor& grad, const Tensor& input, const UnaryParams& p);
Tensor clamp_backward(const Tensor& grad, const Tensor& input, const UnaryParams& p);
Tensor pow_scalar_backward(const Tensor& grad, const Tensor& input, const UnaryParams& p);

struct AddBackward : Node {
  const char* name() const override { return "AddBackward"; }
  TensorList apply(const Tensor& grad) override;
};

struct SubBackward : Node {
  const char* name() const override { return "SubBackward"; }
  TensorList apply(const Tensor& grad) override;
};

struct MulBackward : Node {
  SavedTensor a, b;  // each saved only if the other input needs its gradient
  const char* name() const override { return "MulBackward"; }
  TensorList apply(const Tensor& grad) override;
  void release_saved() override { a.reset(), b.reset(); }
};

struct DivBackward : Node {
  SavedTensor a, b;
  const char* name() const override { return "DivBackward"; }
  TensorList apply(const Tensor& grad) override;
  void release_saved() override { a.reset(), b.reset(); }
};

struct PowBackward : Node {
  SavedTensor base, exponent, result;
  const char* name() const override { return "PowBackward"; }
  TensorList apply(const Tensor& grad) override;
  void release_saved() override { base.reset(), exponent.reset(), result.reset(); }
};

// maximum and minimum: the gradient goes to the input that was chosen, split evenly on ties.
struct MaximumBackward : Node {
  SavedTensor a, b;
  bool is_max = true;
  const char* name() const override { return is_max ? "MaximumBackward" : "MinimumBackward"; }
  TensorList apply(const Tensor& grad) override;
  void release_saved() override { a.reset(), b.reset(); }
};

struct WhereBackward : Node {  // inputs: a, b (cond has no gradient)
  SavedTensor cond;
  const char* name() const override { return "WhereBackward"; }
  TensorList apply(const Tensor& grad) override;
  void release_saved() override { cond.reset(); }
};

}  // namespace wick
