// DistributedDataParallel: a module wrapper that keeps N replicas of a model, one per rank, equal
// - PyTorch's torch.nn.parallel.DistributedDataParallel, with its names and defaults (the Python
// package exposes it as wick.nn.parallel.DistributedDataParallel).
//
//   distributed::init_process_group("mpi");
//   auto model = std::make_shared<Net>();
//   auto ddp = std::make_shared<distributed::DistributedDataParallel>(model);
//   optim::Adam optimizer(ddp->parameters(), ...);
//   for (auto& batch : loader) {                   // a DistributedSampler gives each rank a shard
//     Tensor loss = F::cross_entropy((*ddp)(batch.input), batch.target);
//     optimizer.zero_grad();
//     loss.backward();                             // gradients are averaged across ranks here
//     optimizer.step();                            // so every replica takes the same step
//   }
//
// At construction it checks that every rank built the same parameters and copies rank 0's
// parameters and buffers to every rank (Note [construction broadcast]); each forward (with grad
// mode on) prepares the Reducer for the backward that follows (distributed/reducer.h has the
// design: buckets, hooks, overlap). The wrapped model is the child "module", so parameter names
// and state_dict keys start with "module.", as in PyTorch.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "distributed/process_group.h"
#include "distributed/reducer.h"
#include "nn/module.h"

namespace wick::distributed {

struct DDPOptions {
  double bucket_cap_mb = 25.0;
  // PyTorch keeps this a module constant (_DEFAULT_FIRST_BUCKET_BYTES); here tests and labs may
  // change it.
  double first_bucket_cap_mb = 1.0;
  bool find_unused_parameters = false;
  // Re-broadcast buffers (e.g. batch-norm running statistics) from rank 0 before every forward.
  bool broadcast_buffers = true;
  // Every gradient in one bucket, reduced after backward (no overlap; for comparisons).
  bool single_bucket = false;
};

class DistributedDataParallel : public nn::Module {
 public:
  // group null: the default group (init_process_group).
  explicit DistributedDataParallel(std::shared_ptr<nn::Module> module,
                                   std::shared_ptr<ProcessGroup> group = nullptr,
                                   DDPOptions options = {});

  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;

  nn::Module& module() { return *module_; }
  std::shared_ptr<nn::Module> module_ptr() { return module_; }
  Reducer& reducer() { return *reducer_; }
  ProcessGroup& process_group() { return *group_; }

  // Inside its scope, forwards prepare a backward that only accumulates gradients locally; the
  // first synchronised backward after it reduces the accumulated sum (PyTorch's no_sync()):
  //   { auto guard = ddp.no_sync(); for (k micro-batches but the last) { fwd; bwd; } }
  //   fwd; bwd;  // reduces the sum over all micro-batches
  class NoSyncGuard {
   public:
    explicit NoSyncGuard(DistributedDataParallel* ddp)
        : ddp_(ddp), previous_(ddp->require_backward_grad_sync_) {
      ddp_->require_backward_grad_sync_ = false;
    }
    ~NoSyncGuard() { ddp_->require_backward_grad_sync_ = previous_; }
    NoSyncGuard(const NoSyncGuard&) = delete;
    NoSyncGuard& operator=(const NoSyncGuard&) = delete;

   private:
    DistributedDataParallel* ddp_;
    bool previous_;
  };
  NoSyncGuard no_sync() { return NoSyncGuard(this); }
  bool require_backward_grad_sync() const { return require_backward_grad_sync_; }
  void set_require_backward_grad_sync(bool sync) { require_backward_grad_sync_ = sync; }

 private:
  std::shared_ptr<nn::Module> module_;
  std::shared_ptr<ProcessGroup> group_;
  DDPOptions options_;
  std::shared_ptr<Reducer> reducer_;
  std::vector<Tensor> buffers_;
  bool require_backward_grad_sync_ = true;
};

// Collective: throws on every rank unless all ranks hold tensors of the same number, shapes and
// dtypes (PyTorch's _verify_param_shape_across_processes). `what` names them in the message.
void verify_same_shapes(ProcessGroup& group, const std::vector<Tensor>& tensors,
                        const std::string& what);
// Collective: copies `root`'s tensors into every rank's, packing them into flat buffers of at
// most `buffer_bytes` per dtype and device first, so many small tensors cost few broadcasts
// (PyTorch's _broadcast_coalesced, 250 MiB buffers).
void broadcast_coalesced(ProcessGroup& group, const std::vector<Tensor>& tensors, int root = 0,
                         size_t buffer_bytes = size_t{250} << 20);

}  // namespace wick::distributed
