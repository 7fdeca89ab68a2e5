#include "nn/lr_scheduler_more.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/ops.h"

namespace wick::optim {

namespace {

// One value for every group, or one per group (PyTorch's _format_param).
std::vector<double> per_group(const char* where, const char* name, std::vector<double> values,
                              size_t groups) {
  if (values.size() == 1) return std::vector<double>(groups, values[0]);
  check_value(values.size() == groups, where, "expected ", groups, " values for ", name, ", got ",
              values.size());
  return values;
}

// SGD's "momentum", else Adam's "beta1" - the momentum a cycling schedule moves.
std::string momentum_key(const Optimizer& optimizer) {
  if (optimizer.defaults().count("momentum")) return "momentum";
  return optimizer.defaults().count("beta1") ? "beta1" : "";
}

}  // namespace

ExponentialLR::ExponentialLR(Optimizer& optimizer, double gamma)
    : LRScheduler(optimizer), gamma_(gamma) {
  initialize();
}

double ExponentialLR::lr_at(int64_t epoch, size_t, double base_lr) const {
  return base_lr * std::pow(gamma_, static_cast<double>(epoch));
}

LambdaLR::LambdaLR(Optimizer& optimizer, std::vector<Lambda> lambdas)
    : LRScheduler(optimizer), lambdas_(std::move(lambdas)) {
  size_t groups = optimizer.param_groups().size();
  if (lambdas_.size() == 1) lambdas_.resize(groups, lambdas_[0]);
  check_value(lambdas_.size() == groups, "LambdaLR", "Expected ", groups, " lr_lambdas, but got ",
              lambdas_.size());
  for (const Lambda& f : lambdas_) check_value(bool(f), "LambdaLR", "an lr_lambda is empty");
  initialize();
}

double LambdaLR::lr_at(int64_t epoch, size_t group, double base_lr) const {
  return base_lr * lambdas_[group](epoch);
}

CosineAnnealingWarmRestarts::CosineAnnealingWarmRestarts(Optimizer& optimizer, int64_t t_0,
                                                         int64_t t_mult, double eta_min)
    : LRScheduler(optimizer), t_0_(t_0), t_mult_(t_mult), eta_min_(eta_min) {
  check_value(t_0 > 0, "CosineAnnealingWarmRestarts", "Expected positive integer T_0, but got ",
              t_0);
  check_value(t_mult >= 1, "CosineAnnealingWarmRestarts", "Expected integer T_mult >= 1, but got ",
              t_mult);
  initialize();
}

double CosineAnnealingWarmRestarts::lr_at(int64_t epoch, size_t, double base_lr) const {
  // The restarts so far, walked in integers: PyTorch's T_cur and T_i after `epoch` steps.
  int64_t t_cur = epoch, t_i = t_0_;
  while (t_cur >= t_i) {
    t_cur -= t_i;
    t_i *= t_mult_;
  }
  return eta_min_ + (base_lr - eta_min_) * (1 + std::cos(M_PI * t_cur / t_i)) / 2;
}

CyclicLR::CyclicLR(Optimizer& optimizer, std::vector<double> base_lr, std::vector<double> max_lr,
                   CyclicOptions options)
    : LRScheduler(optimizer), options_(std::move(options)) {
  size_t groups = optimizer.param_groups().size();
  base_lrs_ = per_group("CyclicLR", "base_lr", std::move(base_lr), groups);
  max_lrs_ = per_group("CyclicLR", "max_lr", std::move(max_lr), groups);
  double up = options_.step_size_up;
  double down = options_.step_size_down < 0 ? up : options_.step_size_down;
  check_value(up > 0 && down >= 0 && std::isfinite(up + down), "CyclicLR",
              "step sizes must be positive; got step_size_up ", up, " and step_size_down ", down);
  total_size_ = up + down;
  step_ratio_ = up / total_size_;
  check_value(options_.scale_fn || options_.mode == "triangular" ||
                  options_.mode == "triangular2" || options_.mode == "exp_range",
              "CyclicLR", "mode is invalid and scale_fn is None (mode '", options_.mode, "')");
  if (!options_.scale_fn) options_.scale_by_cycle = options_.mode != "exp_range";
  if (options_.cycle_momentum) {
    momentum_key_ = momentum_key(optimizer);
    check_value(!momentum_key_.empty(), "CyclicLR",
                "optimizer must support momentum with `cycle_momentum` option enabled");
    base_momentums_ = per_group("CyclicLR", "base_momentum", options_.base_momentum, groups);
    max_momentums_ = per_group("CyclicLR", "max_momentum", options_.max_momentum, groups);
  }
  initialize();
}

std::pair<double, double> CyclicLR::position(int64_t epoch) const {
  double cycle = std::floor(1 + epoch / total_size_);
  double x = 1 + epoch / total_size_ - cycle;
  double height = x <= step_ratio_ ? x / step_ratio_ : (x - 1) / (step_ratio_ - 1);
  double arg = options_.scale_by_cycle ? cycle : static_cast<double>(epoch);
  double scale = 1;
  if (options_.scale_fn) {
    scale = options_.scale_fn(arg);
  } else if (options_.mode == "triangular2") {
    scale = 1 / std::pow(2.0, arg - 1);
  } else if (options_.mode == "exp_range") {
    scale = std::pow(options_.gamma, arg);
  }
  return {height, scale};
}

double CyclicLR::lr_at(int64_t epoch, size_t group, double base_lr) const {
  auto [height, scale] = position(epoch);
  return base_lr + (max_lrs_[group] - base_lr) * height * scale;
}

void CyclicLR::apply_extra(int64_t epoch) {
  if (!options_.cycle_momentum) return;
  auto [height, scale] = position(epoch);
  auto& groups = optimizer_.param_groups();
  for (size_t g = 0; g < groups.size(); ++g) {
    double hi = max_momentums_[g], lo = base_momentums_[g];
    groups[g].options[momentum_key_] = hi - (hi - lo) * height * scale;
  }
}

SequentialLR::SequentialLR(Optimizer& optimizer, std::vector<LRScheduler*> schedulers,
                           std::vector<int64_t> milestones)
    : LRScheduler(optimizer),
      schedulers_(std::move(schedulers)),
      milestones_(std::move(milestones)) {
  check_value(!schedulers_.empty(), "SequentialLR", "expects at least one scheduler");
  for (size_t i = 0; i < schedulers_.size(); ++i) {
    check_value(schedulers_[i] != nullptr && &schedulers_[i]->optimizer_ == &optimizer,
                "SequentialLR",
                "Sequential Schedulers expects all schedulers to belong to the same optimizer, "
                "but got schedulers at index ",
                i, " to be different than the optimizer passed in.");
  }
  check_value(milestones_.size() + 1 == schedulers_.size(), "SequentialLR",
              "Sequential Schedulers expects number of schedulers provided to be one more than "
              "the number of milestone points, but got number of schedulers ",
              schedulers_.size(), " and the number of milestones to be equal to ",
              milestones_.size());
  // As in PyTorch, the later schedules wait for their milestone: their counts start again.
  for (LRScheduler* s : schedulers_) s->last_epoch_ = -1;
  initialize();
}

std::pair<LRScheduler*, int64_t> SequentialLR::active(int64_t epoch) const {
  size_t idx =
      std::upper_bound(milestones_.begin(), milestones_.end(), epoch) - milestones_.begin();
  return {schedulers_[idx], idx == 0 ? epoch : epoch - milestones_[idx - 1]};
}

double SequentialLR::lr_at(int64_t epoch, size_t group, double) const {
  auto [scheduler, own_epoch] = active(epoch);
  return scheduler->lr_at(own_epoch, group, scheduler->base_lrs_[group]);
}

void SequentialLR::apply_extra(int64_t epoch) {
  auto [scheduler, own_epoch] = active(epoch);
  scheduler->apply_extra(own_epoch);
  // The active schedule's own count and last rates follow, as they do in PyTorch.
  scheduler->last_epoch_ = own_epoch;
  scheduler->last_lr_ = get_last_lr();
}

ReduceLROnPlateau::ReduceLROnPlateau(Optimizer& optimizer, PlateauOptions options)
    : optimizer_(optimizer), options_(std::move(options)) {
  check_value(options_.factor < 1.0, "ReduceLROnPlateau", "Factor should be < 1.0. (got ",
              options_.factor, ")");
  check_value(options_.mode == "min" || options_.mode == "max", "ReduceLROnPlateau", "mode ",
              options_.mode, " is unknown!");
  check_value(options_.threshold_mode == "rel" || options_.threshold_mode == "abs",
              "ReduceLROnPlateau", "threshold mode ", options_.threshold_mode, " is unknown!");
  size_t groups = optimizer.param_groups().size();
  if (options_.min_lr.size() == 1) options_.min_lr.resize(groups, options_.min_lr[0]);
  check_value(options_.min_lr.size() == groups, "ReduceLROnPlateau", "expected ", groups,
              " min_lrs, got ", options_.min_lr.size());
  best_ = options_.mode == "min" ? std::numeric_limits<double>::infinity()
                                 : -std::numeric_limits<double>::infinity();
}

bool ReduceLROnPlateau::is_better(double a) const {
  bool rel = options_.threshold_mode == "rel";
  if (options_.mode == "min") {
    return rel ? a < best_ * (1 - options_.threshold) : a < best_ - options_.threshold;
  }
  return rel ? a > best_ * (1 + options_.threshold) : a > best_ + options_.threshold;
}

void ReduceLROnPlateau::step(double metric) {
  ++last_epoch_;
  if (is_better(metric)) {
    best_ = metric;
    num_bad_epochs_ = 0;
  } else {
    ++num_bad_epochs_;
  }
  if (cooldown_counter_ > 0) {
    --cooldown_counter_;
    num_bad_epochs_ = 0;  // bad epochs in cooldown don't count
  }
  if (num_bad_epochs_ > options_.patience) {
    auto& groups = optimizer_.param_groups();
    for (size_t g = 0; g < groups.size(); ++g) {
      double old_lr = groups[g].options.at("lr");
      double new_lr = std::max(old_lr * options_.factor, options_.min_lr[g]);
      if (old_lr - new_lr > options_.eps) groups[g].options["lr"] = new_lr;
    }
    cooldown_counter_ = options_.cooldown;
    num_bad_epochs_ = 0;
  }
}

std::vector<double> ReduceLROnPlateau::get_last_lr() const {
  std::vector<double> lrs;
  for (const ParamGroup& g : optimizer_.param_groups()) lrs.push_back(g.options.at("lr"));
  return lrs;
}

StateDict ReduceLROnPlateau::state_dict() const {
  return {{"best", scalar_tensor(best_, kFloat64)},
          {"num_bad_epochs", scalar_tensor(static_cast<double>(num_bad_epochs_), kFloat64)},
          {"cooldown_counter", scalar_tensor(static_cast<double>(cooldown_counter_), kFloat64)},
          {"last_epoch", scalar_tensor(static_cast<double>(last_epoch_), kFloat64)}};
}

void ReduceLROnPlateau::load_state_dict(const StateDict& state) {
  // Everything read and checked first, so that a bad state dict changes nothing.
  double values[4];
  const char* keys[4] = {"best", "num_bad_epochs", "cooldown_counter", "last_epoch"};
  for (int i = 0; i < 4; ++i) {
    auto it = state.find(keys[i]);
    check_value(it != state.end() && it->second.defined() && it->second.numel() == 1,
                "ReduceLROnPlateau", "load_state_dict: expected one number for '", keys[i], "'");
    values[i] = it->second.to(kCPU, kFloat64).reshape({}).item<double>();
    check_value(i == 0 || (values[i] >= 0 && values[i] == std::floor(values[i])),
                "ReduceLROnPlateau", "load_state_dict: '", keys[i],
                "' must be an integer >= 0; got ", values[i]);
  }
  best_ = values[0];
  num_bad_epochs_ = static_cast<int64_t>(values[1]);
  cooldown_counter_ = static_cast<int64_t>(values[2]);
  last_epoch_ = static_cast<int64_t>(values[3]);
}

}  // namespace wick::optim
