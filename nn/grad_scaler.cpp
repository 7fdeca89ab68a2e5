#include "nn/grad_scaler.h"

#include <cmath>

#include "autograd/grad_mode.h"
#include "core/ops.h"

namespace wick::amp {

GradScaler::GradScaler(GradScalerOptions options) : options_(options), scale_(options.init_scale) {
  check_value(options.init_scale > 0 && std::isfinite(options.init_scale), "GradScaler",
              "init_scale must be positive and finite; got ", options.init_scale);
  check_value(options.growth_factor > 1.0, "GradScaler", "growth_factor must be > 1; got ",
              options.growth_factor);
  check_value(options.backoff_factor > 0.0 && options.backoff_factor < 1.0, "GradScaler",
              "backoff_factor must be in (0, 1); got ", options.backoff_factor);
  check_value(options.growth_interval > 0, "GradScaler", "growth_interval must be positive; got ",
              options.growth_interval);
}

Tensor GradScaler::scale(const Tensor& loss) const {
  if (!options_.enabled) return loss;
  check_value(loss.defined(), "GradScaler.scale", "got an undefined tensor");
  return loss * scale_;
}

void GradScaler::unscale_(optim::Optimizer& optimizer) {
  if (!options_.enabled) return;
  PerOptimizer& state = per_optimizer_[&optimizer];
  check_state(state.stage == Stage::Ready, "GradScaler.unscale_",
              state.stage == Stage::Unscaled
                  ? "unscale_() was already called on this optimizer since the last update()"
                  : "unscale_() is being called after step()");
  NoGradGuard no_grad;
  double inverse = 1.0 / scale_;  // in float64, as PyTorch computes it
  for (optim::ParamGroup& group : optimizer.param_groups()) {
    for (Tensor& p : group.params) {
      Tensor g = p.grad();
      if (!g.defined()) continue;
      check_type(g.dtype() != kFloat16, "GradScaler.unscale_",
                 "attempting to unscale float16 gradients; parameters must stay float32 (the "
                 "master weights) under autocast");
      // The sum (accumulated in float64, so finite float32 values cannot overflow it) is finite
      // exactly when every element is: one pass, and no temporary the size of the gradient.
      if (!state.found_inf) state.found_inf = !std::isfinite(g.sum().item<double>());
      g.mul_(inverse);
    }
  }
  state.stage = Stage::Unscaled;
}

bool GradScaler::step(optim::Optimizer& optimizer) {
  bool run = prepare_step(optimizer);
  if (run) optimizer.step();
  return run;
}

bool GradScaler::prepare_step(optim::Optimizer& optimizer) {
  if (!options_.enabled) return true;
  PerOptimizer& state = per_optimizer_[&optimizer];
  check_state(state.stage != Stage::Stepped, "GradScaler.step",
              "step() was already called on this optimizer since the last update()");
  if (state.stage == Stage::Ready) unscale_(optimizer);
  state.stage = Stage::Stepped;
  if (state.found_inf) ++skipped_steps_;
  return !state.found_inf;
}

void GradScaler::update() {
  if (!options_.enabled) return;
  bool found_inf = false;
  for (auto& [optimizer, state] : per_optimizer_) found_inf = found_inf || state.found_inf;
  if (found_inf) {
    scale_ *= options_.backoff_factor;
    growth_tracker_ = 0;
  } else if (++growth_tracker_ == options_.growth_interval) {
    double grown = scale_ * options_.growth_factor;
    if (std::isfinite(grown)) scale_ = grown;
    growth_tracker_ = 0;
  }
  per_optimizer_.clear();
}

StateDict GradScaler::state_dict() const {
  return {{"scale", scalar_tensor(scale_, kFloat64)},
          {"growth_factor", scalar_tensor(options_.growth_factor, kFloat64)},
          {"backoff_factor", scalar_tensor(options_.backoff_factor, kFloat64)},
          {"growth_interval", scalar_tensor(options_.growth_interval)},
          {"_growth_tracker", scalar_tensor(growth_tracker_)}};
}

void GradScaler::load_state_dict(const StateDict& state) {
  for (const char* key :
       {"scale", "growth_factor", "backoff_factor", "growth_interval", "_growth_tracker"}) {
    check_value(state.count(key) > 0, "GradScaler.load_state_dict", "missing entry '", key, "'");
  }
  scale_ = state.at("scale").item<double>();
  options_.growth_factor = state.at("growth_factor").item<double>();
  options_.backoff_factor = state.at("backoff_factor").item<double>();
  options_.growth_interval = state.at("growth_interval").item<int64_t>();
  growth_tracker_ = state.at("_growth_tracker").item<int64_t>();
}

}  // namespace wick::amp
