// SGD with momentum, dampening, Nesterov and weight decay (torch.optim.SGD): one fused kernel
// per parameter (core/kernels.h, sgd_step).
#pragma once

#include "nn/optim/optimizer.h"

namespace wick::optim {

// lr is required; momentum, dampening, weight_decay default to 0; nesterov to false.
struct SGDOptions {
  double lr = 0.01;
  double momentum = 0.0;
  double dampening = 0.0;
  double weight_decay = 0.0;
  bool nesterov = false;
};

class SGD : public Optimizer {
 public:
  SGD(std::vector<Tensor> params, SGDOptions options);
  SGD(std::vector<ParamGroup> groups, SGDOptions options);

 protected:
  void init_state(const ParamGroup& group, const Tensor& param, State& state) const override;
  void update(const ParamGroup& group, ParamStep& p) override;
};

}  // namespace wick::optim
