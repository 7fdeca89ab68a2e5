// The backward formulas of the unary ops: for each differentiable row `name` of WICK_UNARY_OPS
// (core/ops/op_list.h), `name_grad(grad, saved, attrs)` is d(input), where `saved` is what the
// row's `saves` column names (the input, or the output when the derivative is cheaper in it).
// They are declared here from the table and written in unary_grads.cpp with wick ops, so they run
// on any device and can themselves be differentiated.
#pragma once

#include "core/kernels.h"
#include "core/ops/op_list.h"

namespace wick {

#define WICK_DECLARE_GRAD(name, api, rule, policy, grad, ...) \
  WICK_IF_##grad(                                             \
      Tensor name##_grad(const Tensor& grad, const Tensor& saved, const UnaryAttrs& attrs);)
WICK_UNARY_OPS(WICK_DECLARE_GRAD)
#undef WICK_DECLARE_GRAD

}  // namespace wick
