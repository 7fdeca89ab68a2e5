// ReduceLROnPlateau (torch.optim.lr_scheduler.ReduceLROnPlateau): not an LRScheduler, since it
// follows a metric passed to step() rather than the step count.
#pragma once

#include <string>
#include <vector>

#include "nn/optim/optimizer.h"

namespace wick::optim {

struct PlateauOptions {
  std::string mode = "min";  // "min": lower metrics are better; "max": higher
  double factor = 0.1;
  int64_t patience = 10;  // bad epochs tolerated before the rate drops
  double threshold = 1e-4;
  std::string threshold_mode = "rel";  // "rel": best * (1 -+ threshold); "abs": best -+ threshold
  int64_t cooldown = 0;                // epochs after a drop during which bad epochs don't count
  std::vector<double> min_lr = {0.0};  // one value, or one per group
  double eps = 1e-8;                   // drops smaller than this are skipped
};

// Multiplies the rates by `factor` when the metric passed to step() has not improved for more
// than `patience` epochs.
class ReduceLROnPlateau {
 public:
  explicit ReduceLROnPlateau(Optimizer& optimizer, PlateauOptions options = {});
  void step(double metric);
  std::vector<double> get_last_lr() const;
  int64_t last_epoch() const { return last_epoch_; }
  double best() const { return best_; }
  int64_t num_bad_epochs() const { return num_bad_epochs_; }
  int64_t cooldown_counter() const { return cooldown_counter_; }
  // "best", "num_bad_epochs", "cooldown_counter" and "last_epoch" as 0-d float64 tensors.
  StateDict state_dict() const;
  void load_state_dict(const StateDict& state);

 private:
  bool is_better(double a) const;
  Optimizer& optimizer_;
  PlateauOptions options_;
  double best_;
  int64_t num_bad_epochs_ = 0, cooldown_counter_ = 0, last_epoch_ = 0;
};

}  // namespace wick::optim
