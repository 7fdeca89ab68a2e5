#include "nn/grad_scaler.h"

#include <cmath>

#include "core/grad_mode.h"
#include "core/host_read.h"
#include "core/ops.h"

namespace wick::amp {

namespace {

// The ranges of the constructor, shared with load_state_dict so a saved state cannot bring back
// what the constructor refuses. `op` names the caller.
void check_options(const char* op, const GradScalerOptions& o, double scale) {
  check_value(scale > 0 && std::isfinite(scale), op, "scale must be positive and finite; got ",
              scale);
  check_value(o.growth_factor > 1.0 && std::isfinite(o.growth_factor), op,
              "growth_factor must be > 1 and finite; got ", o.growth_factor);
  check_value(o.backoff_factor > 0.0 && o.backoff_factor < 1.0, op,
              "backoff_factor must be in (0, 1); got ", o.backoff_factor);
  check_value(o.growth_interval > 0, op, "growth_interval must be positive; got ",
              o.growth_interval);
}

}  // namespace

GradScaler::GradScaler(GradScalerOptions options) : options_(options), scale_(options.init_scale) {
  check_options("GradScaler", options, options.init_scale);
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
      if (!state.found_inf) {
        note_host_read("GradScaler's check for inf and NaN");  // Note [host reads]
        state.found_inf = !std::isfinite(g.sum().item<double>());
      }
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
  constexpr const char* op = "GradScaler.load_state_dict";
  // Read and check every entry before changing anything.
  auto number = [&](const char* key) {
    auto it = state.find(key);
    check_value(it != state.end(), op, "missing entry '", key, "'");
    check_value(it->second.defined() && it->second.numel() == 1, op, "entry '", key,
                "' must hold one number");
    return it->second.to(kCPU, kFloat64).reshape({}).item<double>();
  };
  auto integer = [&](const char* key) {
    double v = number(key);
    check_value(v == std::floor(v) && std::abs(v) < 9.2e18, op, "entry '", key,
                "' must be an integer; got ", v);
    return static_cast<int64_t>(v);
  };
  GradScalerOptions options = options_;
  double scale = number("scale");
  options.growth_factor = number("growth_factor");
  options.backoff_factor = number("backoff_factor");
  options.growth_interval = integer("growth_interval");
  int64_t tracker = integer("_growth_tracker");
  check_options(op, options, scale);
  check_value(tracker >= 0 && tracker < options.growth_interval, op,
              "_growth_tracker must be in "
              "[0, growth_interval); got ",
              tracker);
  options_ = options;
  scale_ = scale;
  growth_tracker_ = tracker;
}

}  // namespace wick::amp
