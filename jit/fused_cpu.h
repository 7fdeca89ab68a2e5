// The CPU kernel of a fused elementwise node (jit/passes/fuse_elementwise.cpp).
//
// Note [fused elementwise loop]
// A chain like add -> relu run op by op writes the sum to memory and reads it back. The fused
// loop walks the output in blocks of a few thousand elements: it loads each input's block once
// (a contiguous slice, one broadcast number, or a strided gather for broadcasts such as a bias
// row), applies every step of the chain to the block while it sits in L1, and stores only the
// last step's result. Each step calls the same functor (core/ops/scalar_math.h) as the op's own
// kernel, in the same precision and order, so the result is bit-for-bit the unfused one. This is
// the CPU counterpart of a generated GPU kernel (TensorRT's pointwise fusion, XLA's loop fusion);
// it interprets the steps per block instead of compiling them, which costs a switch per step per
// block, not per element.
#pragma once

#include "jit/graph.h"

namespace wick::jit {

// Whether `op` may join a fused chain: a unary or binary elementwise row whose output has its
// input's floating dtype (comparisons and bool ops do not).
bool fusible_op(OpKey op);

// Runs `node` (NodeKind::Fused): args[0..n-2] are its inputs, args[n-1] its (contiguous float32)
// output, n = node.params.size().
void run_fused(const Node& node, Tensor* const* args);

}  // namespace wick::jit
