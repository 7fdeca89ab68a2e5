// The autograd state of a tensor, allocated the first time a tensor takes part in autograd.
#pragma once

#include <memory>
#include <vector>

#include "core/tensor.h"

namespace wick {

struct AutogradMeta {
  Tensor grad;                    // accumulated gradient (leaves, and non-leaves that retain it)
  std::shared_ptr<Node> grad_fn;  // the node that produced this tensor; null for leaves
  // A leaf's AccumulateGrad node. Weak: the graph owns it, and it lives as long as some graph
  // still uses the leaf, so every use of the leaf in that graph reaches the same node.
  std::weak_ptr<Node> grad_accumulator;
  bool retains_grad = false;
  std::vector<TensorHook> hooks;  // leaves only; a non-leaf's hooks run on its grad_fn
  std::vector<PostAccumulateGradHook> post_accumulate_grad_hooks;
};

// The tensor's AutogradMeta, created on first use.
AutogradMeta& autograd_meta(const Tensor& t);
// Null when the tensor never took part in autograd.
AutogradMeta* autograd_meta_if_exists(const Tensor& t);

}  // namespace wick
