#include "nn/optim/lr_scheduler.h"

#include <algorithm>
#include <cmath>

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

LRScheduler::LRScheduler(Optimizer& optimizer) : optimizer_(optimizer) {
  // PyTorch's initial_lr: a second schedule on the same optimizer (say, the later stages of a
  // SequentialLR) starts from the rate the user set, not from where the first one moved it.
  for (size_t g = 0; g < optimizer.param_groups().size(); ++g) {
    base_lrs_.push_back(optimizer.initial_lr(g));
  }
}

void LRScheduler::initialize() { step(); }

void LRScheduler::step() {
  ++last_epoch_;
  last_lr_.clear();
  auto& groups = optimizer_.param_groups();
  for (size_t g = 0; g < groups.size(); ++g) {
    double lr = lr_at(last_epoch_, g, base_lrs_[g]);
    groups[g].options["lr"] = lr;
    last_lr_.push_back(lr);
  }
  apply_extra(last_epoch_);
}

StateDict LRScheduler::state_dict() const {
  return {{"last_epoch", scalar_tensor(last_epoch_)}, {"base_lrs", tensor(base_lrs_)}};
}

void LRScheduler::check_state_dict(const StateDict& state) const {
  auto epoch = state.find("last_epoch"), bases = state.find("base_lrs");
  check_value(epoch != state.end() && bases != state.end(), "LRScheduler",
              "load_state_dict: expected 'last_epoch' and 'base_lrs'");
  check_value(epoch->second.defined() && epoch->second.numel() == 1, "LRScheduler",
              "load_state_dict: 'last_epoch' must hold one number");
  double last = epoch->second.to(kCPU, kFloat64).reshape({}).item<double>();
  check_value(last >= 0 && last == std::floor(last) && last < 9.2e18, "LRScheduler",
              "load_state_dict: 'last_epoch' must be an integer >= 0; got ", last);
  check_value(bases->second.defined() && bases->second.dim() == 1 &&
                  bases->second.numel() == static_cast<int64_t>(base_lrs_.size()),
              "LRScheduler", "load_state_dict: 'base_lrs' of shape ",
              bases->second.defined() ? bases->second.shape() : Shape{}, " for ", base_lrs_.size(),
              " parameter groups");
  for (double lr : bases->second.to(kCPU, kFloat64).to_vector<double>()) {
    check_value(std::isfinite(lr) && lr >= 0, "LRScheduler",
                "load_state_dict: invalid base learning rate ", lr,
                " (it must be a finite number >= 0)");
  }
}

void LRScheduler::load_state_dict(const StateDict& state) {
  check_state_dict(state);  // all of it, before anything changes
  // A schedule can still refuse the position itself (OneCycleLR past total_steps) once step()
  // re-derives the rates; then everything it touched goes back as it was.
  std::vector<double> old_bases = base_lrs_, old_last_lr = last_lr_;
  int64_t old_epoch = last_epoch_;
  std::vector<Options> old_options;
  for (const ParamGroup& g : optimizer_.param_groups()) old_options.push_back(g.options);
  base_lrs_ = state.at("base_lrs").to(kCPU, kFloat64).to_vector<double>();
  last_epoch_ = static_cast<int64_t>(state.at("last_epoch").to(kCPU, kFloat64).item<double>()) - 1;
  try {
    step();  // re-derives the optimizer's current rates from the restored position
  } catch (...) {
    base_lrs_ = std::move(old_bases);
    last_lr_ = std::move(old_last_lr);
    last_epoch_ = old_epoch;
    for (size_t g = 0; g < old_options.size(); ++g) {
      optimizer_.param_groups()[g].options = std::move(old_options[g]);
    }
    throw;
  }
}

StepLR::StepLR(Optimizer& optimizer, int64_t step_size, double gamma)
    : LRScheduler(optimizer), step_size_(step_size), gamma_(gamma) {
  check_value(step_size > 0, "StepLR", "step_size must be positive; got ", step_size);
  initialize();
}

double StepLR::lr_at(int64_t epoch, size_t, double base_lr) const {
  return base_lr * std::pow(gamma_, static_cast<double>(epoch / step_size_));
}

MultiStepLR::MultiStepLR(Optimizer& optimizer, std::vector<int64_t> milestones, double gamma)
    : LRScheduler(optimizer), milestones_(std::move(milestones)), gamma_(gamma) {
  std::sort(milestones_.begin(), milestones_.end());
  initialize();
}

double MultiStepLR::lr_at(int64_t epoch, size_t, double base_lr) const {
  auto passed =
      std::upper_bound(milestones_.begin(), milestones_.end(), epoch) - milestones_.begin();
  return base_lr * std::pow(gamma_, static_cast<double>(passed));
}

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

CosineAnnealingLR::CosineAnnealingLR(Optimizer& optimizer, int64_t t_max, double eta_min)
    : LRScheduler(optimizer), t_max_(t_max), eta_min_(eta_min) {
  check_value(t_max > 0, "CosineAnnealingLR", "T_max must be positive; got ", t_max);
  initialize();
}

double CosineAnnealingLR::lr_at(int64_t epoch, size_t, double base_lr) const {
  return eta_min_ + (base_lr - eta_min_) * (1 + std::cos(M_PI * epoch / t_max_)) / 2;
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

LinearLR::LinearLR(Optimizer& optimizer, double start_factor, double end_factor,
                   int64_t total_iters)
    : LRScheduler(optimizer),
      start_factor_(start_factor),
      end_factor_(end_factor),
      total_iters_(total_iters) {
  check_value(start_factor > 0 && start_factor <= 1 && end_factor >= 0 && end_factor <= 1,
              "LinearLR", "factors must be in (0, 1] and [0, 1]; got ", start_factor, " and ",
              end_factor);
  check_value(total_iters > 0, "LinearLR", "total_iters must be positive; got ", total_iters);
  initialize();
}

double LinearLR::lr_at(int64_t epoch, size_t, double base_lr) const {
  double progress = static_cast<double>(std::min(epoch, total_iters_)) / total_iters_;
  return base_lr * (start_factor_ + (end_factor_ - start_factor_) * progress);
}

OneCycleLR::OneCycleLR(Optimizer& optimizer, double max_lr, int64_t total_steps,
                       OneCycleOptions options)
    : LRScheduler(optimizer), total_steps_(total_steps), options_(options) {
  check_value(total_steps > 0, "OneCycleLR", "total_steps must be positive; got ", total_steps);
  check_value(options.pct_start >= 0 && options.pct_start <= 1, "OneCycleLR",
              "pct_start must be in [0, 1]; got ", options.pct_start);
  double initial = max_lr / options.div_factor;
  double min_lr = initial / options.final_div_factor;
  double up_end = options.pct_start * static_cast<double>(total_steps) - 1;
  double last = static_cast<double>(total_steps) - 1;
  double lo = options.base_momentum, hi = options.max_momentum;
  if (options.three_phase) {
    phases_ = {{up_end, initial, max_lr, hi, lo},
               {2 * options.pct_start * total_steps - 2, max_lr, initial, lo, hi},
               {last, initial, min_lr, hi, hi}};
  } else {
    phases_ = {{up_end, initial, max_lr, hi, lo}, {last, max_lr, min_lr, lo, hi}};
  }
  const Options& defaults = optimizer.defaults();
  momentum_key_ = defaults.count("momentum") ? "momentum" : "beta1";
  check_value(!options.cycle_momentum || defaults.count(momentum_key_), "OneCycleLR",
              "cycle_momentum needs an optimizer with momentum or beta1");
  initialize();
}

std::pair<double, double> OneCycleLR::at(int64_t step) const {
  check_value(step <= total_steps_, "OneCycleLR", "stepped ", step, " times but total_steps is ",
              total_steps_);
  double start = 0;
  for (size_t i = 0; i < phases_.size(); ++i) {
    const Phase& p = phases_[i];
    if (step <= p.end_step || i + 1 == phases_.size()) {
      double pct = (step - start) / (p.end_step - start);
      auto anneal = [&](double from, double to) {
        return options_.cos_anneal ? to + (from - to) / 2 * (std::cos(M_PI * pct) + 1)
                                   : (to - from) * pct + from;
      };
      return {anneal(p.start_lr, p.end_lr), anneal(p.start_momentum, p.end_momentum)};
    }
    start = p.end_step;
  }
  return {0, 0};
}

double OneCycleLR::lr_at(int64_t epoch, size_t, double) const { return at(epoch).first; }

void OneCycleLR::apply_extra(int64_t epoch) {
  if (!options_.cycle_momentum) return;
  double momentum = at(epoch).second;
  for (ParamGroup& g : optimizer_.param_groups()) g.options[momentum_key_] = momentum;
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

}  // namespace wick::optim
