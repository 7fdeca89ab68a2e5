#include "distributed/ring_all_reduce.h"

#include <algorithm>
#include <vector>

#include "core/error.h"
#include "core/grad_mode.h"
#include "core/ops.h"
#include "core/ops/factory.h"

namespace wick::distributed {

namespace {

class RingWork : public Work {
 public:
  RingWork(ProcessGroup& group, const Tensor& tensor, ReduceOp op, Seconds timeout,
           std::shared_ptr<GroupHealth> health)
      : Work("all_reduce (ring)", timeout, std::move(health)),
        group_(group),
        flat_(tensor.reshape({tensor.numel()})),  // a view: it keeps the tensor's storage alive
        op_(op),
        tag_(group.next_collective_tag()) {
    int n = group.size();
    int64_t total = tensor.numel();
    for (int i = 0; i <= n; ++i) bounds_.push_back(total * i / n);  // chunk i: [bounds_[i], [i+1])
    int64_t largest = 0;
    for (int i = 0; i < n; ++i) largest = std::max(largest, bounds_[i + 1] - bounds_[i]);
    TensorOptions options(tensor.device());
    received_ = empty({largest}, options.with_dtype(tensor.dtype()));
    post();
  }

 protected:
  bool poll() override {
    if (!step_->is_completed()) return false;
    int n = group_.size(), r = group_.rank();
    if (!gathering_) {
      reduce_into(chunk(r - step_index_ - 1));
      if (++step_index_ == n - 1) {
        gathering_ = true;
        step_index_ = 0;
      }
    } else if (++step_index_ == n - 1) {
      return true;
    }
    post();
    return false;
  }

  void finish() override {
    if (op_ == ReduceOp::Avg) {
      NoGradGuard no_grad;
      flat_.div_(Scalar(static_cast<double>(group_.size())));
    }
    step_.reset();
    received_ = Tensor();
  }

 private:
  Tensor chunk(int index) const {
    int n = group_.size();
    int i = ((index % n) + n) % n;
    return flat_.narrow(0, bounds_[i], bounds_[i + 1] - bounds_[i]);
  }

  // Posts step step_index_ of the current phase (Note [ring all-reduce]).
  void post() {
    int n = group_.size(), r = group_.rank();
    int right = (r + 1) % n, left = (r + n - 1) % n;
    if (!gathering_) {
      Tensor out = chunk(r - step_index_);
      Tensor in = received_.narrow(0, 0, chunk(r - step_index_ - 1).numel());
      step_ = group_.send_recv(out, right, in, left, tag_);
    } else {
      step_ =
          group_.send_recv(chunk(r + 1 - step_index_), right, chunk(r - step_index_), left, tag_);
    }
  }

  void reduce_into(Tensor target) {
    NoGradGuard no_grad;
    Tensor in = received_.narrow(0, 0, target.numel());
    switch (op_) {
      case ReduceOp::Max:
        target.copy_(target.maximum(in));
        break;
      case ReduceOp::Min:
        target.copy_(target.minimum(in));
        break;
      default:
        target.add_(in);
    }
  }

  ProcessGroup& group_;
  Tensor flat_, received_;
  ReduceOp op_;
  int tag_;
  std::vector<int64_t> bounds_;
  bool gathering_ = false;
  int step_index_ = 0;
  std::shared_ptr<Work> step_;
};

}  // namespace

std::shared_ptr<Work> ring_all_reduce(ProcessGroup& group, const Tensor& tensor, ReduceOp op) {
  const char* name = "all_reduce (ring)";
  check_value(tensor.defined(), name, "got an undefined tensor");
  check_value(tensor.is_contiguous(), name, "the tensor must be contiguous; got shape ",
              tensor.shape(), " with strides ", tensor.strides());
  check_type(tensor.dtype() != kBool, name,
             "bool tensors cannot be summed; use max or min of "
             "uint8");
  check_type(op != ReduceOp::Avg || is_floating(tensor.dtype()), name,
             "avg needs a floating-point tensor; got ", tensor.dtype());
  group.health()->check(name);
  if (group.size() == 1 || tensor.numel() == 0) return completed_work(name);
  auto work = std::make_shared<RingWork>(group, tensor, op, group.timeout(), group.health());
  group.progress_in_background(work);
  return work;
}

}  // namespace wick::distributed
