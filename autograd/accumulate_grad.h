// AccumulateGrad: the node at the end of the graph for a leaf that requires grad. It runs the
// leaf's hooks, adds the gradient into leaf.grad, then runs post-accumulate-grad hooks.
#pragma once

#include <cstdint>
#include <limits>

#include "autograd/node.h"

namespace wick {

class AccumulateGrad : public Node {
 public:
  explicit AccumulateGrad(Tensor leaf);
  const char* name() const override { return "AccumulateGrad"; }
  TensorList apply(const Tensor& grad_output) override;
  const Tensor& leaf() const { return leaf_; }

  // Runs before any other ready node, so a parameter's gradient is final (and its DDP bucket can
  // start reducing) as soon as the last contribution arrives.
  static constexpr uint64_t kPriority = std::numeric_limits<uint64_t>::max();

 private:
  Tensor leaf_;
};

}  // namespace wick
