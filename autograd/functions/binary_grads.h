// The backward formulas of the binary ops: for each differentiable row `name` of WICK_BINARY_OPS
// (core/ops/op_list.h), `name_grad(args)` is d(a) and d(b) in the broadcast shape, computed from
// what the row's reads_a and reads_b columns name (BinaryGradArgs, core/op_table.h). They are
// declared here from the table, so a row without its formula does not link, and written in
// binary_grads.cpp with wick ops, so they run on any device and can themselves be differentiated.
#pragma once

#include "core/op_table.h"

namespace wick {

#define WICK_DECLARE_GRAD(name, api, rule, policy, check, grad, ...) \
  WICK_IF_##grad(BinaryGrads name##_grad(const BinaryGradArgs& args);)
WICK_BINARY_OPS(WICK_DECLARE_GRAD)
#undef WICK_DECLARE_GRAD

}  // namespace wick
