#include "nn/optim/plateau.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/ops.h"

namespace wick::optim {

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
