// Adam and its relatives (torch.optim 1.13's update rules and defaults): Adam and AdamW run one
// fused kernel per parameter (core/kernels.h, adam_step); Adamax, NAdam and RAdam are written as
// compositions of wick tensor ops, so they run on every device without kernels of their own, at
// the cost of a few temporaries per parameter.
#pragma once

#include "nn/optim/optimizer.h"

namespace wick::optim {

struct AdamOptions {
  double lr = 1e-3;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0.0;  // Adam: L2 added to the gradient; AdamW: decoupled (default 0.01)
};

class Adam : public Optimizer {
 public:
  Adam(std::vector<Tensor> params, AdamOptions options);
  Adam(std::vector<ParamGroup> groups, AdamOptions options);

 protected:
  Adam(const char* name, std::vector<ParamGroup> groups, AdamOptions options, bool decoupled);
  void init_state(const ParamGroup& group, const Tensor& param, State& state) const override;
  void update(const ParamGroup& group, ParamStep& p) override;

 private:
  bool decoupled_weight_decay_;
};

// Adam with decoupled weight decay (Loshchilov & Hutter): p <- p (1 - lr wd) before the update.
class AdamW : public Adam {
 public:
  AdamW(std::vector<Tensor> params, AdamOptions options = default_options());
  AdamW(std::vector<ParamGroup> groups, AdamOptions options = default_options());
  static AdamOptions default_options() {
    AdamOptions o;
    o.weight_decay = 1e-2;
    return o;
  }
};

// Adamax, NAdam and RAdam share Adam's betas; their defaults differ (lr 2e-3 for Adamax and
// NAdam), so each has its own options type.
struct AdamaxOptions {
  double lr = 2e-3;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0.0;
};

// Adam with the infinity norm: the second moment becomes a running maximum of |grad|.
class Adamax : public Optimizer {
 public:
  Adamax(std::vector<Tensor> params, AdamaxOptions options = {});
  Adamax(std::vector<ParamGroup> groups, AdamaxOptions options = {});

 protected:
  void init_state(const ParamGroup& group, const Tensor& param, State& state) const override;
  void update(const ParamGroup& group, ParamStep& p) override;
};

struct NAdamOptions {
  double lr = 2e-3;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0.0;
  double momentum_decay = 4e-3;
};

// Adam with Nesterov momentum (Dozat 2016), with its momentum warm-up schedule.
class NAdam : public Optimizer {
 public:
  NAdam(std::vector<Tensor> params, NAdamOptions options = {});
  NAdam(std::vector<ParamGroup> groups, NAdamOptions options = {});

 protected:
  void init_state(const ParamGroup& group, const Tensor& param, State& state) const override;
  void update(const ParamGroup& group, ParamStep& p) override;
};

struct RAdamOptions {
  double lr = 1e-3;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0.0;
};

// Rectified Adam (Liu et al. 2019): plain momentum SGD while the variance estimate is too young
// to trust (rho_t <= 5), then Adam scaled by the rectification term.
class RAdam : public Optimizer {
 public:
  RAdam(std::vector<Tensor> params, RAdamOptions options = {});
  RAdam(std::vector<ParamGroup> groups, RAdamOptions options = {});

 protected:
  void init_state(const ParamGroup& group, const Tensor& param, State& state) const override;
  void update(const ParamGroup& group, ParamStep& p) override;
};

}  // namespace wick::optim
