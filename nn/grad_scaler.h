// GradScaler: dynamic loss scaling for float16 training (torch.amp.GradScaler).
//
// Float16 has 5 exponent bits: gradients smaller than about 6e-8 underflow to zero. Multiplying
// the loss by a large scale S before backward multiplies every gradient by S too, lifting them
// into range; the optimizer then divides them by S again (unscale_) before stepping. If a
// gradient overflowed (inf or nan), the step is skipped and S halves; after growth_interval
// clean steps in a row S doubles, so S settles near the largest value that does not overflow.
// bfloat16 keeps float32's exponent range and needs no scaler.
//
//   amp::GradScaler scaler;
//   scaler.scale(loss).backward();
//   scaler.unscale_(optimizer);              // optional: to clip the true gradients
//   nn::utils::clip_grad_norm_(params, 1.0);
//   scaler.step(optimizer);                  // skipped when a gradient is inf or nan
//   scaler.update();
#pragma once

#include <map>

#include "nn/optim.h"

namespace wick::amp {

struct GradScalerOptions {
  double init_scale = 65536.0;  // 2^16
  double growth_factor = 2.0;
  double backoff_factor = 0.5;
  int64_t growth_interval = 2000;
  bool enabled = true;  // disabled: every method is a pass-through, for one code path
};

class GradScaler {
 public:
  explicit GradScaler(GradScalerOptions options = {});

  Tensor scale(const Tensor& loss) const;
  // Divides the optimizer's gradients by the scale and notes whether any is inf or nan. At
  // most once per optimizer between update() calls.
  void unscale_(optim::Optimizer& optimizer);
  // Unscales if not done yet, then steps unless a gradient was inf or nan; returns whether it
  // stepped.
  bool step(optim::Optimizer& optimizer);
  // step() without the optimizer step: unscales if needed, marks the optimizer stepped, and
  // says whether its step should run (for callers that step it themselves, like Python's).
  bool prepare_step(optim::Optimizer& optimizer);
  // Backs off after an overflow, grows after growth_interval clean steps; resets per-step state.
  void update();

  double get_scale() const { return scale_; }
  bool is_enabled() const { return options_.enabled; }
  int64_t growth_tracker() const { return growth_tracker_; }
  int64_t skipped_steps() const { return skipped_steps_; }  // over the scaler's life

  // "scale", "growth_factor", "backoff_factor", "growth_interval", "_growth_tracker".
  StateDict state_dict() const;
  void load_state_dict(const StateDict& state);

 private:
  enum class Stage { Ready, Unscaled, Stepped };
  struct PerOptimizer {
    Stage stage = Stage::Ready;
    bool found_inf = false;
  };
  GradScalerOptions options_;
  double scale_;
  int64_t growth_tracker_ = 0;
  int64_t skipped_steps_ = 0;
  std::map<const optim::Optimizer*, PerOptimizer> per_optimizer_;
};

}  // namespace wick::amp
