// Learning-rate schedules (torch.optim.lr_scheduler) that follow the step count: StepLR,
// MultiStepLR, ExponentialLR, LambdaLR, CosineAnnealingLR, CosineAnnealingWarmRestarts,
// LinearLR, OneCycleLR, CyclicLR and SequentialLR. Each computes the rate of every parameter
// group for an epoch (or step) number in closed form from the group's base rate, and step()
// advances the count and writes the rate into the optimizer. As in PyTorch, constructing a
// schedule sets the rate for step 0. ReduceLROnPlateau, which follows a metric, is in plateau.h.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "nn/optim/optimizer.h"

namespace wick::optim {

class LRScheduler {
 public:
  virtual ~LRScheduler() = default;
  void step();
  std::vector<double> get_last_lr() const { return last_lr_; }
  int64_t last_epoch() const { return last_epoch_; }
  // "last_epoch" and "base_lrs" (as tensors) - enough to resume exactly.
  StateDict state_dict() const;
  // Checks the whole state dict first (a last_epoch >= 0, one finite base rate >= 0 per group),
  // so a bad one throws std::invalid_argument and changes nothing.
  void load_state_dict(const StateDict& state);
  void check_state_dict(const StateDict& state) const;

 protected:
  explicit LRScheduler(Optimizer& optimizer);
  // Must be called by the most-derived constructor: sets the rate for step 0.
  void initialize();
  // The rate of group `group` at step `epoch`, given its base rate.
  virtual double lr_at(int64_t epoch, size_t group, double base_lr) const = 0;
  // Schedules that also cycle momentum (OneCycleLR) override this; called after lr is set.
  virtual void apply_extra(int64_t /*epoch*/) {}
  Optimizer& optimizer_;
  std::vector<double> base_lrs_;

 private:
  friend class SequentialLR;  // steps its schedules through their own lr_at
  int64_t last_epoch_ = -1;
  std::vector<double> last_lr_;
};

// lr = base * gamma ^ floor(epoch / step_size)
class StepLR : public LRScheduler {
 public:
  StepLR(Optimizer& optimizer, int64_t step_size, double gamma = 0.1);

 protected:
  double lr_at(int64_t epoch, size_t group, double base_lr) const override;

 private:
  int64_t step_size_;
  double gamma_;
};

// lr = base * gamma ^ (number of milestones <= epoch)
class MultiStepLR : public LRScheduler {
 public:
  MultiStepLR(Optimizer& optimizer, std::vector<int64_t> milestones, double gamma = 0.1);

 protected:
  double lr_at(int64_t epoch, size_t group, double base_lr) const override;

 private:
  std::vector<int64_t> milestones_;
  double gamma_;
};

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

// lr = eta_min + (base - eta_min) (1 + cos(pi epoch / T_max)) / 2
class CosineAnnealingLR : public LRScheduler {
 public:
  CosineAnnealingLR(Optimizer& optimizer, int64_t t_max, double eta_min = 0.0);

 protected:
  double lr_at(int64_t epoch, size_t group, double base_lr) const override;

 private:
  int64_t t_max_;
  double eta_min_;
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

// Linear warm-up: the factor goes from start_factor to end_factor over total_iters steps.
class LinearLR : public LRScheduler {
 public:
  LinearLR(Optimizer& optimizer, double start_factor = 1.0 / 3, double end_factor = 1.0,
           int64_t total_iters = 5);

 protected:
  double lr_at(int64_t epoch, size_t group, double base_lr) const override;

 private:
  double start_factor_, end_factor_;
  int64_t total_iters_;
};

// The 1cycle policy (Smith & Topin 2017): warm up from max_lr / div_factor to max_lr over
// pct_start of the steps, then anneal to max_lr / (div_factor * final_div_factor), with
// momentum (SGD's "momentum" or Adam's "beta1") cycled the opposite way.
struct OneCycleOptions {
  double pct_start = 0.3;
  bool cos_anneal = true;  // false: linear
  bool cycle_momentum = true;
  double base_momentum = 0.85;
  double max_momentum = 0.95;
  double div_factor = 25.0;
  double final_div_factor = 1e4;
  bool three_phase = false;
};

class OneCycleLR : public LRScheduler {
 public:
  OneCycleLR(Optimizer& optimizer, double max_lr, int64_t total_steps,
             OneCycleOptions options = {});

 protected:
  double lr_at(int64_t epoch, size_t group, double base_lr) const override;
  void apply_extra(int64_t epoch) override;

 private:
  struct Phase {
    double end_step, start_lr, end_lr, start_momentum, end_momentum;
  };
  // Interpolation along the current phase: {lr, momentum}.
  std::pair<double, double> at(int64_t step) const;
  std::vector<Phase> phases_;
  int64_t total_steps_;
  OneCycleOptions options_;
  std::string momentum_key_;
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

}  // namespace wick::optim
