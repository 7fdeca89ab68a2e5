// More learning-rate schedules (torch.optim.lr_scheduler): ExponentialLR, LambdaLR,
// CosineAnnealingWarmRestarts, CyclicLR, SequentialLR, and ReduceLROnPlateau, which is not an
// LRScheduler: it reacts to a metric instead of following the step count.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "nn/lr_scheduler.h"

namespace wick::optim {

// lr = base * gamma ^ epoch
class ExponentialLR : public LRScheduler {
 public:
  ExponentialLR(Optimizer& optimizer, double gamma);

 protected:
  double lr_at(int64_t epoch, size_t group, double base_lr) const override;

 private:
  double gamma_;
};

// lr = base * lambda(epoch), with one function for every group or one per group.
class LambdaLR : public LRScheduler {
 public:
  using Lambda = std::function<double(int64_t)>;
  LambdaLR(Optimizer& optimizer, std::vector<Lambda> lambdas);

 protected:
  double lr_at(int64_t epoch, size_t group, double base_lr) const override;

 private:
  std::vector<Lambda> lambdas_;
};

// SGDR (Loshchilov & Hutter 2017): cosine annealing from base to eta_min over T_i epochs, then a
// restart at base, with T_i = T_0, T_0 T_mult, T_0 T_mult^2, ...
class CosineAnnealingWarmRestarts : public LRScheduler {
 public:
  CosineAnnealingWarmRestarts(Optimizer& optimizer, int64_t t_0, int64_t t_mult = 1,
                              double eta_min = 0.0);

 protected:
  double lr_at(int64_t epoch, size_t group, double base_lr) const override;

 private:
  int64_t t_0_, t_mult_;
  double eta_min_;
};

// Cyclical learning rates (Smith 2017): the rate goes base -> max over step_size_up steps and
// back over step_size_down, the amplitude scaled per cycle (triangular2: halved; exp_range:
// gamma^step; or a custom scale_fn of the cycle or the step). With cycle_momentum, momentum
// (SGD's "momentum", or Adam's "beta1" as PyTorch 2 does) moves the opposite way.
struct CyclicOptions {
  double step_size_up = 2000;
  double step_size_down = -1;  // < 0: step_size_up
  std::string mode = "triangular";
  double gamma = 1.0;
  std::function<double(double)> scale_fn;  // overrides mode when set
  bool scale_by_cycle = true;              // scale_fn's argument: cycle (true) or step count
  bool cycle_momentum = true;
  std::vector<double> base_momentum = {0.8};  // one value, or one per group
  std::vector<double> max_momentum = {0.9};
};

class CyclicLR : public LRScheduler {
 public:
  // base_lr and max_lr hold one value, or one per group. The groups' rates start at base_lr.
  CyclicLR(Optimizer& optimizer, std::vector<double> base_lr, std::vector<double> max_lr,
           CyclicOptions options = {});

 protected:
  double lr_at(int64_t epoch, size_t group, double base_lr) const override;
  void apply_extra(int64_t epoch) override;

 private:
  // Where `epoch` falls: the fraction of the way up (0 -> 1 -> 0) and the amplitude's scale.
  std::pair<double, double> position(int64_t epoch) const;
  std::vector<double> max_lrs_, base_momentums_, max_momentums_;
  double total_size_, step_ratio_;
  CyclicOptions options_;
  std::string momentum_key_;
};

// Runs `schedulers` one after another, switching at each milestone (epoch counts); each
// schedule counts its epochs from its own milestone. The schedules must be built on `optimizer`
// and must outlive this one.
class SequentialLR : public LRScheduler {
 public:
  SequentialLR(Optimizer& optimizer, std::vector<LRScheduler*> schedulers,
               std::vector<int64_t> milestones);

 protected:
  double lr_at(int64_t epoch, size_t group, double base_lr) const override;
  void apply_extra(int64_t epoch) override;

 private:
  // The schedule in charge at `epoch`, and its own epoch count there.
  std::pair<LRScheduler*, int64_t> active(int64_t epoch) const;
  std::vector<LRScheduler*> schedulers_;
  std::vector<int64_t> milestones_;
};

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
