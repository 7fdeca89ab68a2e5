// The adaptive-rate optimizers outside Adam's family: RMSprop, Adagrad and Adadelta, with
// torch.optim 1.13's defaults and update rules (tests compare against PyTorch step by step).
//
// Unlike SGD and Adam, which run one fused kernel per parameter, these updates are written as
// compositions of wick tensor ops under no-grad: they run on every device without kernels of
// their own, at the cost of a few temporaries per parameter - the trade a course wants for
// optimizers that are read more often than they are the bottleneck.
#pragma once

#include "nn/optim/optimizer.h"

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

 protected:
  void init_state(const ParamGroup& group, const Tensor& param, State& state) const override;
  void update(const ParamGroup& group, ParamStep& p) override;
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

 protected:
  void init_state(const ParamGroup& group, const Tensor& param, State& state) const override;
  void update(const ParamGroup& group, ParamStep& p) override;
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

 protected:
  void init_state(const ParamGroup& group, const Tensor& param, State& state) const override;
  void update(const ParamGroup& group, ParamStep& p) override;
};

}  // namespace wick::optim
