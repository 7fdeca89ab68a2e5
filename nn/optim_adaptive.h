// The adaptive optimizers beyond Adam: RMSprop, Adagrad, Adadelta, Adamax, NAdam and RAdam, with
// torch.optim 1.13's defaults and update rules (tests compare against PyTorch step by step).
//
// Unlike SGD and Adam, which run one fused kernel per parameter, these updates are written as
// compositions of wick tensor ops under no-grad: they run on every device without kernels of
// their own, at the cost of a few temporaries per parameter - the trade a course wants for
// optimizers that are read more often than they are the bottleneck.
#pragma once

#include "nn/optim.h"

namespace wick::optim {

struct RMSpropOptions {
  double lr = 1e-2;
  double alpha = 0.99;  // smoothing of the squared-gradient average
  double eps = 1e-8;
  double weight_decay = 0.0;
  double momentum = 0.0;
  bool centered = false;  // divide by the estimated variance instead of the second moment
};

class RMSprop : public Optimizer {
 public:
  RMSprop(std::vector<Tensor> params, RMSpropOptions options = {});
  RMSprop(std::vector<ParamGroup> groups, RMSpropOptions options = {});
  void step() override;
};

struct AdagradOptions {
  double lr = 1e-2;
  double lr_decay = 0.0;
  double weight_decay = 0.0;
  double initial_accumulator_value = 0.0;
  double eps = 1e-10;
};

class Adagrad : public Optimizer {
 public:
  Adagrad(std::vector<Tensor> params, AdagradOptions options = {});
  Adagrad(std::vector<ParamGroup> groups, AdagradOptions options = {});
  void step() override;
};

struct AdadeltaOptions {
  double lr = 1.0;
  double rho = 0.9;
  double eps = 1e-6;
  double weight_decay = 0.0;
};

class Adadelta : public Optimizer {
 public:
  Adadelta(std::vector<Tensor> params, AdadeltaOptions options = {});
  Adadelta(std::vector<ParamGroup> groups, AdadeltaOptions options = {});
  void step() override;
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
  void step() override;
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
  void step() override;
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
  void step() override;
};

}  // namespace wick::optim
