// The autograd state of a tensor, allocated the first time a tensor takes part in autograd.
#pragma once

#include <memory>
#include <mutex>
#include <vector>

#include "core/tensor.h"

namespace wick {

struct AutogradMeta {
  AutogradMeta() = default;
  ~AutogradMeta();                // releases grad_fn without recursion (Note [iterative teardown])
  Tensor grad;                    // accumulated gradient (leaves, and non-leaves that retain it)
  std::shared_ptr<Node> grad_fn;  // the node that produced this tensor; null for leaves
  // A leaf's AccumulateGrad node. Weak: the graph owns it, and it lives as long as some graph
  // still uses the leaf, so every use of the leaf in that graph reaches the same node.
  std::weak_ptr<Node> grad_accumulator;
  bool retains_grad = false;
  std::vector<TensorHook> hooks;  // leaves only; a non-leaf's hooks run on its grad_fn
  std::vector<PostAccumulateGradHook> post_accumulate_grad_hooks;
  // Serializes gradient accumulation into `grad`: backward calls running on several threads into
  // one shared leaf must lose no update.
  std::mutex mutex;
  // Serializes the lookup of grad_accumulator by threads recording ops on one leaf. Separate from
  // `mutex`, which is held while hooks run (a Python hook takes the GIL; a forward pass holding
  // the GIL must still be able to record).
  std::mutex accumulator_mutex;
};

// The tensor's AutogradMeta, created on first use.
AutogradMeta& autograd_meta(const Tensor& t);
// Null when the tensor never took part in autograd.
AutogradMeta* autograd_meta_if_exists(const Tensor& t);

}  // namespace wick
