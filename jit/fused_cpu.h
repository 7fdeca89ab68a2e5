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

#include <vector>

#include "jit/graph.h"

namespace wick::jit {

// Whether `op` may join a fused chain: a unary or binary elementwise row whose output has its
// input's floating dtype (comparisons and bool ops do not).
bool fusible_op(OpKey op);

// A fused chain over one output with its operands resolved: run() applies the chain to the
// output's flat elements [begin, end), in blocks, and may be called from several threads at once
// on disjoint ranges. An input may be the output itself (the chain then runs in place: each
// element is read before it is written), which is how a convolution's epilogue runs
// (Note [conv epilogue fusion] in jit/passes/fuse_conv_epilogue.cpp).
class FusedLoop {
 public:
  // `inputs`: the operands the steps' refs >= 0 name; `out`: contiguous float32. Throws
  // std::runtime_error for another output dtype or layout, a non-float32 input or a step whose op
  // is not fusible (before any thread runs).
  FusedLoop(const std::vector<FusedStep>& steps, const std::vector<const Tensor*>& inputs,
            Tensor& out);
  void run(int64_t begin, int64_t end) const;
  void run_parallel() const;  // every element, the blocks split over the threads
  int64_t numel() const { return numel_; }

  struct Operand {  // how a block of one input is read
    const float* data;
    bool contiguous;  // the output's own layout: read data + i
    bool scalar;      // one element for every output element
    Shape shape;      // the output's shape, and the input's strides broadcast to it
    Strides strides;
  };

 private:
  std::vector<FusedStep> steps_;
  std::vector<Operand> operands_;
  float* out_;
  int64_t numel_;
};

// The input's strides broadcast to `out`'s shape: 0 for a missing leading dim or a size-1 one.
Strides broadcast_strides(const Tensor& input, const Shape& out);

// Runs `node` (NodeKind::Fused): args[0..n-2] are its inputs, args[n-1] its (contiguous float32)
// output, n = node.params.size().
void run_fused(const Node& node, Tensor* const* args);

}  // namespace wick::jit
