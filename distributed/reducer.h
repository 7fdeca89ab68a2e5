// Reducer: averages gradients across ranks during backward, in buckets, overlapping
// communication with the rest of backward. It is the engine of DistributedDataParallel
// (distributed/ddp.h) and works on a plain list of parameters, so any training loop - or the
// Python package - can use it:
//
//   auto reducer = Reducer::create(params, names, group);
//   for (...) {
//     Tensor loss = ...;
//     reducer->prepare_for_backward({loss});  // DDP's forward does this
//     loss.backward();                        // buckets reduce as their gradients become ready
//     optimizer.step();                       // .grad holds the mean over ranks
//   }
//
// Note [DDP in one page]
// Every rank holds the same parameters and runs forward and backward on its own slice of the
// batch; if every rank then applies the *mean* of all ranks' gradients, all replicas stay equal
// and training equals one process on the whole batch. Reducing each gradient separately costs one
// collective's latency per parameter; reducing all of them after backward leaves the network idle
// during backward and the processors idle during the reduction. PyTorch's reducer (reducer.cpp,
// design-facts 3), which this follows, does neither:
//  1. Buckets (compute_bucket_assignment_by_size): parameters are grouped, in reverse order,
//     into flat buffers of about 25 MiB (the first one 1 MiB), one group per dtype and device.
//  2. Hooks: a post-accumulate-grad hook on every parameter runs the moment its gradient is final
//     (Note [engine order] in autograd/engine.cpp). It copies the gradient into its slot of the
//     bucket; when a bucket's last slot is filled, the bucket is divided by the world size and
//     its all-reduce is launched - while backward goes on computing earlier layers' gradients.
//  3. Order: buckets launch strictly in index order (Note [launch order]).
//  4. Finalize: when the last bucket is launched, the reducer waits for all of them and copies
//     the averaged values back into each parameter's .grad (Note [finalize in the last hook]).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "distributed/process_group.h"
#include "distributed/timeline.h"

namespace wick::distributed {

struct ReducerOptions {
  double bucket_cap_mb = 25.0;       // PyTorch's kDefaultBucketBytesCap (bucket_cap_mb)
  double first_bucket_cap_mb = 1.0;  // PyTorch's kDefaultFirstBucketBytes
  // Parameters may receive no gradient in an iteration (Note [unused parameters]).
  bool find_unused_parameters = false;
  // Every gradient in one bucket per dtype and device, reduced when backward has produced them
  // all: no overlap. For comparison (train_mnist --ddp-single-bucket), not for training.
  bool single_bucket = false;
};

// Groups tensors into buckets: visits them in `order`, adds each to the open bucket of its
// (dtype, device), and closes that bucket once it holds at least its limit in bytes. A key's
// first bucket has limit bytes_limits[0], the next bytes_limits[1], and so on, the last limit
// repeating. A tensor is never split, so a bucket may exceed its limit by up to one tensor.
// Buckets are listed in the order their first tensor was visited.
std::vector<std::vector<size_t>> compute_bucket_assignment_by_size(
    const std::vector<Tensor>& tensors, const std::vector<size_t>& bytes_limits,
    const std::vector<size_t>& order);

// Note [DDP counters]
// What a student measures: how much was sent, in how many collectives, and how long the training
// thread sat waiting for communication at the end of backward. If comm_wait_seconds is a small
// share of the step, the all-reduces were hidden behind backward; if it is large, communication
// is the bottleneck (or did not overlap: compare ReducerOptions::single_bucket).
struct ReducerStats {
  int64_t iterations = 0;        // backward passes whose gradients were reduced
  int64_t buckets_launched = 0;  // all-reduces started
  int64_t bytes_reduced = 0;     // bytes of bucket contents all-reduced, on this rank
  double comm_wait_seconds = 0;  // time spent waiting for all-reduces after backward
  int64_t local_backwards = 0;   // backward passes under no_sync (gradients kept local)
  std::string str() const;
};

class Reducer : public std::enable_shared_from_this<Reducer> {
 public:
  // params: leaves that require grad, the same shapes in the same order on every rank. names: one
  // per parameter, for error messages (empty: "parameter 3"). Registers the hooks.
  static std::shared_ptr<Reducer> create(std::vector<Tensor> params, std::vector<std::string> names,
                                         std::shared_ptr<ProcessGroup> group,
                                         ReducerOptions options = {});
  Reducer(const Reducer&) = delete;
  Reducer& operator=(const Reducer&) = delete;

  // Call before each backward, with the forward's outputs. sync false: the coming backward only
  // accumulates gradients locally (no_sync). Throws if the previous backward did not finish
  // reducing (Note [unused parameters]).
  void prepare_for_backward(const std::vector<Tensor>& outputs, bool sync = true);

  // The buckets as parameter indices, in launch order, and each bucket's size in bytes.
  std::vector<std::vector<size_t>> bucket_indices() const;
  std::vector<int64_t> bucket_bytes() const;
  // From the last synchronised backward: bucket indices in launch order, and parameter indices
  // in the order their gradients became ready.
  const std::vector<size_t>& launch_order() const { return launch_order_; }
  const std::vector<size_t>& ready_order() const { return ready_order_; }
  // A table of the buckets: sizes, dtype and device, parameter names.
  std::string explain() const;

  const ReducerStats& stats() const { return stats_; }
  void reset_stats() { stats_ = {}; }
  // Records buckets and gradient-ready marks into `timeline` (null: stop). Not owned.
  void set_timeline(Timeline* timeline) { timeline_ = timeline; }
  ProcessGroup& group() const { return *group_; }
  const ReducerOptions& options() const { return options_; }

 private:
  struct Bucket {
    std::vector<size_t> params;   // parameter indices, in bucket order
    std::vector<int64_t> offset;  // each parameter's first element in `contents`
    Tensor contents;              // one flat buffer, the all-reduce's input and output
    size_t pending = 0;           // parameters whose gradient has not arrived this iteration
    std::shared_ptr<Work> work;   // the all-reduce, once launched
    Clock::time_point ready_at, launched_at;
  };

  Reducer(std::vector<Tensor> params, std::vector<std::string> names,
          std::shared_ptr<ProcessGroup> group, ReducerOptions options);
  void build_buckets();
  void install_hooks();
  void autograd_hook(size_t index);
  void mark_variable_ready(size_t index);
  void mark_bucket_ready(size_t bucket);
  void launch(size_t bucket);
  void finalize_backward();
  void find_unused(const std::vector<Tensor>& outputs);
  void launch_used_map();
  void reset_iteration();
  void check_previous_iteration_finished();
  Tensor view_of(size_t index) const;

  std::vector<Tensor> params_;
  std::vector<std::string> names_;
  std::shared_ptr<ProcessGroup> group_;
  ReducerOptions options_;
  std::vector<Bucket> buckets_;
  std::vector<size_t> bucket_of_;  // parameter -> bucket
  std::vector<size_t> slot_of_;    // parameter -> position in its bucket

  // Per iteration (reset by prepare_for_backward).
  bool expect_hooks_ = false;  // a synchronised backward is under way
  bool hooks_fired_ = false;
  size_t next_bucket_ = 0;  // the next bucket to launch (Note [launch order])
  std::vector<bool> ready_;
  std::vector<bool> locally_unused_;
  Tensor used_map_;  // find_unused_parameters: 1 where a rank used the parameter
  std::shared_ptr<Work> used_map_work_;
  std::vector<size_t> launch_order_, ready_order_;

  ReducerStats stats_;
  Timeline* timeline_ = nullptr;
};

}  // namespace wick::distributed
