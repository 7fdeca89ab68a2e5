// Backward nodes of the elementwise ops. Each formula is written with wick ops, so it runs on any
// device; binary formulas end in sum_to() to undo broadcasting.
#pragma once

#include "autograd/node.h"
#include "core/op_table.h"

namespace wick {

// The backward of a unary op: its row in the op table (core/op_table.h) says what to save and
// gives the formula (autograd/functions/unary_grads.cpp).
class UnaryBackward : public Node {
 public:
  void init(const OpInfo& op, const Tensor& saved, const UnaryAttrs& attrs);
  const char* name() const override { return op_->backward; }
  TensorList apply(const Tensor& grad) override;
  void release_saved() override { saved_.reset(); }

 private:
  const OpInfo* op_ = nullptr;
  SavedTensor saved_;
  UnaryAttrs attrs_;
};

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

// remainder, fmod, atan2, hypot and logaddexp: one node, the formula chosen by the op.
struct BinaryMathBackward : Node {
  OpKey op = OpKey::remainder;
  SavedTensor a, b, result;
  const char* name() const override { return op_info(op).backward; }
  TensorList apply(const Tensor& grad) override;
  void release_saved() override { a.reset(), b.reset(), result.reset(); }
};

struct WhereBackward : Node {  // inputs: a, b (cond has no gradient)
  SavedTensor cond;
  const char* name() const override { return "WhereBackward"; }
  TensorList apply(const Tensor& grad) override;
  void release_saved() override { cond.reset(); }
};

}  // namespace wick
