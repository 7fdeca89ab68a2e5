// The gradient reducer of DistributedDataParallel: buckets, hooks, launch order, finalisation and
// unused parameters. The overview is Note [DDP in one page] in reducer.h.
#include "distributed/reducer.h"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <map>
#include <sstream>
#include <tuple>
#include <unordered_set>

#include "autograd/accumulate_grad.h"
#include "core/error.h"
#include "core/grad_mode.h"
#include "core/ops.h"

namespace wick::distributed {

namespace {

const char* kOp = "DistributedDataParallel";

std::string format_bytes(double bytes) {
  char text[32];
  if (bytes >= 1048576.0) {
    std::snprintf(text, sizeof(text), "%.2f MiB", bytes / 1048576.0);
  } else if (bytes >= 1024.0) {
    std::snprintf(text, sizeof(text), "%.1f KiB", bytes / 1024.0);
  } else {
    std::snprintf(text, sizeof(text), "%.0f B", bytes);
  }
  return text;
}

size_t megabytes_to_bytes(double mb) { return static_cast<size_t>(mb * 1024.0 * 1024.0); }

}  // namespace

std::vector<std::vector<size_t>> compute_bucket_assignment_by_size(
    const std::vector<Tensor>& tensors, const std::vector<size_t>& bytes_limits,
    const std::vector<size_t>& order) {
  const char* op = "compute_bucket_assignment_by_size";
  check_value(!bytes_limits.empty(), op, "needs at least one bucket size limit");
  // Note [bucket keys]
  // One all-reduce moves one dtype on one device, so each (dtype, device) has its own open bucket
  // and its own sequence of limits: float32 and float16 parameters never share a bucket.
  using Key = std::tuple<DType, DeviceType, int>;
  struct Open {
    std::vector<size_t> members;
    size_t bytes = 0;
    size_t first_position = 0;  // where in `order` its first tensor was
    size_t closed = 0;          // buckets of this key closed so far: picks the next limit
  };
  std::map<Key, Open> open;
  std::vector<std::pair<size_t, std::vector<size_t>>> buckets;  // (first position, members)
  for (size_t position = 0; position < order.size(); ++position) {
    size_t i = order[position];
    check_index(i < tensors.size(), op, "index ", i, " in the order is out of range for ",
                tensors.size(), " tensors");
    const Tensor& t = tensors[i];
    Open& bucket = open[Key(t.dtype(), t.device().type, t.device().index)];
    if (bucket.members.empty()) bucket.first_position = position;
    bucket.members.push_back(i);
    bucket.bytes += t.nbytes();
    size_t limit = bytes_limits[std::min(bucket.closed, bytes_limits.size() - 1)];
    if (bucket.bytes >= limit) {
      buckets.emplace_back(bucket.first_position, std::move(bucket.members));
      bucket.members.clear();
      bucket.bytes = 0;
      bucket.closed++;
    }
  }
  for (auto& [key, bucket] : open) {
    if (!bucket.members.empty()) buckets.emplace_back(bucket.first_position, bucket.members);
  }
  std::sort(buckets.begin(), buckets.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::vector<size_t>> result;
  for (auto& bucket : buckets) result.push_back(std::move(bucket.second));
  return result;
}

std::string ReducerStats::str() const {
  std::ostringstream os;
  os << "iterations " << iterations << ", buckets launched " << buckets_launched
     << ", bytes reduced " << format_bytes(static_cast<double>(bytes_reduced))
     << ", waited for communication " << comm_wait_seconds << " s, local (no_sync) backwards "
     << local_backwards;
  return os.str();
}

// ---- construction -------------------------------------------------------------------------------

std::shared_ptr<Reducer> Reducer::create(std::vector<Tensor> params, std::vector<std::string> names,
                                         std::shared_ptr<ProcessGroup> group,
                                         ReducerOptions options) {
  check_value(group != nullptr, kOp, "needs a process group");
  check_value(!params.empty(), kOp, "got no parameters that require grad");
  check_value(names.empty() || names.size() == params.size(), kOp, "got ", names.size(),
              " names for ", params.size(), " parameters");
  check_value(options.bucket_cap_mb > 0 && options.first_bucket_cap_mb > 0, kOp,
              "bucket sizes must be positive; got bucket_cap_mb ", options.bucket_cap_mb,
              " and first_bucket_cap_mb ", options.first_bucket_cap_mb);
  if (names.empty()) {
    for (size_t i = 0; i < params.size(); ++i) names.push_back("parameter " + std::to_string(i));
  }
  std::unordered_set<const TensorImpl*> seen;
  for (size_t i = 0; i < params.size(); ++i) {
    const Tensor& p = params[i];
    check_value(p.defined() && p.requires_grad() && p.is_leaf(), kOp, "'", names[i],
                "' must be a leaf tensor that requires grad");
    check_value(seen.insert(p.impl()).second, kOp, "'", names[i],
                "' appears twice in the parameter list (a shared parameter is listed once)");
    check_value(p.device() == group->device(), kOp, "'", names[i], "' is on ", p.device(),
                " but the ", group->backend(), " process group works on ", group->device(),
                "; move the model there before wrapping it");
  }
  std::shared_ptr<Reducer> reducer(
      new Reducer(std::move(params), std::move(names), std::move(group), options));
  reducer->build_buckets();
  reducer->install_hooks();
  return reducer;
}

Reducer::Reducer(std::vector<Tensor> params, std::vector<std::string> names,
                 std::shared_ptr<ProcessGroup> group, ReducerOptions options)
    : params_(std::move(params)),
      names_(std::move(names)),
      group_(std::move(group)),
      options_(options) {}

void Reducer::build_buckets() {
  // Note [reverse order]
  // Backward produces gradients roughly in reverse order of the forward pass, and modules
  // register parameters in forward order, so visiting the parameters in reverse puts the first
  // gradients to arrive in bucket 0, which can then start reducing while backward goes on. The
  // small first bucket (1 MiB) starts communication as early as possible; later buckets are
  // large (25 MiB) so that each all-reduce's fixed latency is paid rarely. PyTorch v1.9 assigned
  // buckets in forward order and reversed the list (so its 1 MiB bucket came last), then rebuilt
  // the buckets once from the order gradients really arrived in the first iteration; wick's
  // engine makes each gradient final as early as it can in reverse creation order (Note [engine
  // order]), so reverse parameter order is the arrival order for sequential models, and wick
  // skips the rebuild. ready_order() shows the real order for a student to compare.
  std::vector<size_t> order(params_.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = order.size() - 1 - i;
  std::vector<size_t> limits = {megabytes_to_bytes(options_.first_bucket_cap_mb),
                                megabytes_to_bytes(options_.bucket_cap_mb)};
  if (options_.single_bucket) limits = {std::numeric_limits<size_t>::max()};

  bucket_of_.assign(params_.size(), 0);
  slot_of_.assign(params_.size(), 0);
  for (std::vector<size_t>& members : compute_bucket_assignment_by_size(params_, limits, order)) {
    Bucket bucket;
    int64_t total = 0;
    for (size_t i : members) {
      bucket_of_[i] = buckets_.size();
      slot_of_[i] = bucket.params.size();
      bucket.params.push_back(i);
      bucket.offset.push_back(total);
      total += params_[i].numel();
    }
    const Tensor& first = params_[members.front()];
    bucket.contents = zeros({total}, TensorOptions(first.dtype()).with_device(first.device()));
    buckets_.push_back(std::move(bucket));
  }
  reset_iteration();
}

void Reducer::install_hooks() {
  // The hooks hold the reducer weakly: a parameter outlives the DDP wrapper around it, and a
  // hook of a destroyed reducer must do nothing.
  std::weak_ptr<Reducer> weak = weak_from_this();
  for (size_t i = 0; i < params_.size(); ++i) {
    params_[i].register_post_accumulate_grad_hook([weak, i](const Tensor&) {
      if (std::shared_ptr<Reducer> reducer = weak.lock()) reducer->autograd_hook(i);
    });
  }
}

Tensor Reducer::view_of(size_t index) const {
  const Bucket& bucket = buckets_[bucket_of_[index]];
  return bucket.contents.narrow(0, bucket.offset[slot_of_[index]], params_[index].numel());
}

// ---- one iteration ------------------------------------------------------------------------------

void Reducer::reset_iteration() {
  expect_hooks_ = false;
  hooks_fired_ = false;
  next_bucket_ = 0;
  ready_.assign(params_.size(), false);
  locally_unused_.assign(params_.size(), false);
  for (Bucket& bucket : buckets_) {
    bucket.pending = bucket.params.size();
    bucket.work.reset();
  }
  used_map_work_.reset();
  launch_order_.clear();
  ready_order_.clear();
}

void Reducer::prepare_for_backward(const std::vector<Tensor>& outputs, bool sync) {
  check_previous_iteration_finished();
  reset_iteration();
  if (!sync) {  // no_sync: hooks stay quiet, AccumulateGrad keeps summing into .grad
    stats_.local_backwards++;
    return;
  }
  if (options_.find_unused_parameters) find_unused(outputs);
  expect_hooks_ = true;
}

void Reducer::autograd_hook(size_t index) {
  if (!expect_hooks_) return;  // no_sync, or a backward through a forward DDP did not run
  NoGradGuard no_grad;
  if (!hooks_fired_) {
    hooks_fired_ = true;
    if (options_.find_unused_parameters) {
      // Note [unused parameters]: the parameters this rank's graph never reaches will get no
      // hook; mark them ready now (as zeros) so their buckets can complete.
      launch_used_map();
      for (size_t i = 0; i < params_.size(); ++i) {
        if (locally_unused_[i]) mark_variable_ready(i);
      }
    }
  }
  mark_variable_ready(index);
}

void Reducer::mark_variable_ready(size_t index) {
  check_state(!ready_[index], kOp, "'", names_[index],
              "' received its gradient twice in one backward; DDP reduces each parameter once "
              "per iteration (is the parameter used in two graphs, or backward called twice "
              "after one forward?)");
  ready_[index] = true;
  ready_order_.push_back(index);
  Clock::time_point now = Clock::now();
  if (timeline_) timeline_->mark(Lane::Compute, "grad " + names_[index], now);

  Tensor slot = view_of(index);
  Tensor grad = params_[index].grad();
  if (locally_unused_[index] || !grad.defined()) {
    slot.zero_();
  } else {
    slot.copy_(grad.reshape({params_[index].numel()}));
  }
  size_t b = bucket_of_[index];
  if (--buckets_[b].pending == 0) {
    buckets_[b].ready_at = now;
    mark_bucket_ready(b);
  }
}

void Reducer::mark_bucket_ready(size_t /*bucket*/) {
  // Note [launch order]
  // Non-blocking collectives match across ranks by the order they are started, not by a name: if
  // rank 0 launched bucket 1 and then bucket 0 while rank 1 launched them the other way round,
  // rank 0's first all-reduce would meet rank 1's second and sum unrelated data (or deadlock).
  // Gradients may become ready in a different order on different ranks, so a bucket that is
  // ready early waits until every bucket before it has launched, exactly as in PyTorch
  // (next_bucket_). The order of launches is then the same everywhere.
  while (next_bucket_ < buckets_.size() && buckets_[next_bucket_].pending == 0) {
    launch(next_bucket_++);
  }
  if (next_bucket_ == buckets_.size()) finalize_backward();
}

void Reducer::launch(size_t b) {
  Bucket& bucket = buckets_[b];
  // Dividing before the sum keeps float16 buckets in range; after the all-reduce (a sum) each
  // rank holds the mean.
  if (group_->size() > 1) bucket.contents.div_(Scalar(static_cast<double>(group_->size())));
  bucket.launched_at = Clock::now();
  bucket.work = group_->all_reduce(bucket.contents, ReduceOp::Sum);
  launch_order_.push_back(b);
  stats_.buckets_launched++;
  stats_.bytes_reduced += static_cast<int64_t>(bucket.contents.nbytes());
}

void Reducer::finalize_backward() {
  // Note [finalize in the last hook]
  // PyTorch queues finalize_backward on the autograd engine, to run when backward ends. wick's
  // engine has no such queue, so the hook that launches the last bucket finalises: by then every
  // parameter's gradient has arrived, so nothing DDP waits for is still being computed. Only
  // gradients of non-parameters (e.g. an input that requires grad) may still be on their way.
  Clock::time_point wait_start = Clock::now();
  for (Bucket& bucket : buckets_) bucket.work->wait();
  if (used_map_work_) used_map_work_->wait();
  Clock::time_point wait_end = Clock::now();
  stats_.comm_wait_seconds += Seconds(wait_end - wait_start).count();

  std::vector<int32_t> used;
  if (options_.find_unused_parameters) used = used_map_.cpu().to_vector<int32_t>();
  for (size_t i = 0; i < params_.size(); ++i) {
    // A parameter no rank used keeps its gradient untouched (undefined, as in PyTorch).
    if (!used.empty() && used[i] == 0) continue;
    Tensor reduced = view_of(i).view(params_[i].shape());
    Tensor grad = params_[i].grad();
    if (grad.defined()) {
      grad.copy_(reduced);
    } else {
      params_[i].set_grad(reduced.clone());  // used on another rank only
    }
  }
  if (timeline_) {
    for (size_t b : launch_order_) {
      const Bucket& bucket = buckets_[b];
      std::ostringstream detail;
      detail << format_bytes(static_cast<double>(bucket.contents.nbytes())) << ", "
             << bucket.params.size() << " parameters: ";
      for (size_t k = 0; k < bucket.params.size(); ++k) {
        detail << (k ? ", " : "") << names_[bucket.params[k]];
      }
      timeline_->span(Lane::Communication, "all-reduce bucket " + std::to_string(b),
                      bucket.launched_at, bucket.work->completed_at(), detail.str());
    }
    timeline_->span(Lane::Compute, "wait for all-reduces", wait_start, wait_end);
  }
  expect_hooks_ = false;
  stats_.iterations++;
}

// ---- unused parameters --------------------------------------------------------------------------

void Reducer::check_previous_iteration_finished() {
  // Note [unused parameters]
  // A bucket launches only when all its parameters have a gradient. A parameter that took no part
  // in the loss never gets one, so its bucket - and every bucket after it (Note [launch order]) -
  // never launches, and the backward ends with gradients unreduced. Like PyTorch, wick detects
  // this when the next iteration starts and names the parameters. With find_unused_parameters,
  // prepare_for_backward walks the autograd graph from the outputs, and the first hook marks the
  // parameters it did not reach as ready with zero gradients; a "used" map, all-reduced with max,
  // tells which parameters no rank used: those keep an undefined .grad.
  if (!expect_hooks_ || !hooks_fired_) return;  // finished, or a forward without a backward
  // Let the buckets that did launch finish, so the ranks' collectives stay in step.
  for (Bucket& bucket : buckets_) {
    if (!bucket.work) continue;
    try {
      bucket.work->wait();
    } catch (const std::exception&) {
    }
  }
  std::ostringstream missing;
  int count = 0;
  for (size_t i = 0; i < params_.size(); ++i) {
    if (!ready_[i]) missing << (count++ ? ", " : "") << names_[i];
  }
  reset_iteration();
  throw std::runtime_error(error_message(
      kOp,
      "expected to have finished reduction in the prior iteration before starting a new "
      "one, but ",
      count, " parameter", count == 1 ? "" : "s", " received no gradient on rank ", group_->rank(),
      ": ", missing.str(),
      ". A parameter that takes no part in computing the loss gets no gradient: pass "
      "find_unused_parameters=true to reduce such parameters as zeros, or make every parameter "
      "take part in the loss"));
}

void Reducer::find_unused(const std::vector<Tensor>& outputs) {
  check_value(!outputs.empty(), kOp,
              "find_unused_parameters needs the forward's outputs to walk the autograd graph");
  std::unordered_set<const TensorImpl*> reached;
  std::unordered_set<Node*> seen;
  std::vector<Node*> stack;
  std::vector<std::shared_ptr<Node>> keep_alive;
  for (const Tensor& out : outputs) {
    if (!out.defined() || !out.requires_grad()) continue;
    if (std::shared_ptr<Node> node = out.grad_fn()) {
      keep_alive.push_back(node);
      if (seen.insert(node.get()).second) stack.push_back(node.get());
    } else {
      reached.insert(out.impl());  // a parameter returned as it is
    }
  }
  while (!stack.empty()) {
    Node* node = stack.back();
    stack.pop_back();
    if (auto* accumulate = dynamic_cast<AccumulateGrad*>(node)) {
      reached.insert(accumulate->leaf().impl());
    }
    for (const std::shared_ptr<Node>& next : node->next) {
      if (next && seen.insert(next.get()).second) stack.push_back(next.get());
    }
  }
  std::vector<int32_t> used(params_.size());
  for (size_t i = 0; i < params_.size(); ++i) {
    locally_unused_[i] = reached.count(params_[i].impl()) == 0;
    used[i] = locally_unused_[i] ? 0 : 1;
  }
  used_map_ = tensor(used, TensorOptions(kInt32)).to(group_->device());
}

void Reducer::launch_used_map() { used_map_work_ = group_->all_reduce(used_map_, ReduceOp::Max); }

// ---- inspection ---------------------------------------------------------------------------------

std::vector<std::vector<size_t>> Reducer::bucket_indices() const {
  std::vector<std::vector<size_t>> result;
  for (const Bucket& bucket : buckets_) result.push_back(bucket.params);
  return result;
}

std::vector<int64_t> Reducer::bucket_bytes() const {
  std::vector<int64_t> result;
  for (const Bucket& bucket : buckets_) {
    result.push_back(static_cast<int64_t>(bucket.contents.nbytes()));
  }
  return result;
}

std::string Reducer::explain() const {
  std::ostringstream os;
  int64_t total = 0;
  for (const Bucket& bucket : buckets_) total += static_cast<int64_t>(bucket.contents.nbytes());
  os << "Reducer: " << buckets_.size() << " bucket" << (buckets_.size() == 1 ? "" : "s") << " over "
     << params_.size() << " parameters (" << format_bytes(static_cast<double>(total)) << "), "
     << group_->backend() << " backend, world size " << group_->size() << "; ";
  if (options_.single_bucket) {
    os << "one bucket per dtype and device (no overlap)\n";
  } else {
    os << "reverse parameter order, first bucket closed at "
       << format_bytes(static_cast<double>(megabytes_to_bytes(options_.first_bucket_cap_mb)))
       << ", the rest at "
       << format_bytes(static_cast<double>(megabytes_to_bytes(options_.bucket_cap_mb))) << "\n";
  }
  for (size_t b = 0; b < buckets_.size(); ++b) {
    const Bucket& bucket = buckets_[b];
    os << "  bucket " << b << ": " << format_bytes(static_cast<double>(bucket.contents.nbytes()))
       << " " << bucket.contents.dtype() << " " << bucket.contents.device() << ", "
       << bucket.params.size() << " parameter" << (bucket.params.size() == 1 ? "" : "s") << ": ";
    for (size_t k = 0; k < bucket.params.size(); ++k) {
      os << (k ? ", " : "") << names_[bucket.params[k]];
    }
    os << "\n";
  }
  return os.str();
}

}  // namespace wick::distributed
