#include "autograd/accumulate_grad.h"

#include "autograd/meta.h"
#include "core/grad_mode.h"
#include "core/ops.h"

namespace wick {

AccumulateGrad::AccumulateGrad(Tensor leaf) : leaf_(std::move(leaf)) { sequence_nr = kPriority; }

TensorList AccumulateGrad::apply(const Tensor& grad_output) {
  AutogradMeta& meta = autograd_meta(leaf_);
  // Backward calls on several threads may reach one leaf at once; without the lock two of them
  // read the same old .grad and one update is lost (or both allocate it).
  std::lock_guard<std::mutex> lock(meta.mutex);
  Tensor grad = grad_output;
  for (const TensorHook& hook : meta.hooks) {
    Tensor replaced = hook(grad);
    if (replaced.defined()) grad = replaced;
  }
  if (GradMode::is_enabled() && grad.requires_grad()) {
    // create_graph: .grad keeps the gradient's graph, so accumulate out of place.
    meta.grad = meta.grad.defined() ? meta.grad + grad : grad;
    for (const PostAccumulateGradHook& hook : meta.post_accumulate_grad_hooks) hook(leaf_);
    return {};
  }
  NoGradGuard no_grad;
  if (!meta.grad.defined()) {
    // Take the incoming buffer when nothing else can see it; otherwise copy, so that later
    // in-place accumulation never writes into another tensor's memory.
    bool exclusive = grad.is_contiguous() && grad.storage().use_count() == 1 &&
                     grad.impl_ptr().use_count() <= 2 && grad.dtype() == leaf_.dtype();
    meta.grad = exclusive ? grad.detach() : grad.to(leaf_.dtype()).clone();
  } else {
    check_state(meta.grad.shape() == leaf_.shape(), "AccumulateGrad",
                "the existing .grad of shape ", meta.grad.shape(),
                " does not match its tensor's shape ", leaf_.shape(), "; set .grad to None first");
    meta.grad.add_(grad);
  }
  for (const PostAccumulateGradHook& hook : meta.post_accumulate_grad_hooks) hook(leaf_);
  return {};
}

}  // namespace wick
