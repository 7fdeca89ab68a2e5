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

// The backward of a binary op: its row saves what the formula for each input that needs a
// gradient reads (reads_a, reads_b) and gives the formula (autograd/functions/binary_grads.cpp).
class BinaryBackward : public Node {
 public:
  void init(const OpInfo& op, const Tensor& a, const Tensor& b, const Tensor& out);
  const char* name() const override { return op_->backward; }
  TensorList apply(const Tensor& grad) override;
  void release_saved() override { a_.reset(), b_.reset(), out_.reset(); }

 private:
  const OpInfo* op_ = nullptr;
  uint8_t saved_ = reads::None;  // which of a_, b_, out_ hold a tensor
  SavedTensor a_, b_, out_;
};

struct WhereBackward : Node {  // inputs: a, b (cond has no gradient)
  SavedTensor cond;
  const char* name() const override { return op_info(OpKey::where).backward; }
  TensorList apply(const Tensor& grad) override;
  void release_saved() override { cond.reset(); }
};

}  // namespace wick
