#include "nn/optim/sgd.h"

#include <cmath>

#include "core/dispatch.h"
#include "core/ops.h"

namespace wick::optim {

namespace {

void check_sgd_options(const char* name, const std::string& where, const Options& o) {
  check_non_negative(name, where, o, "lr", "learning rate");
  check_non_negative(name, where, o, "momentum", "momentum");
  check_non_negative(name, where, o, "weight_decay", "weight_decay");
  double dampening = o.at("dampening"), nesterov = o.at("nesterov");
  check_value(std::isfinite(dampening), name, where, "invalid dampening ", dampening);
  check_flag(name, where, o, "nesterov");
  check_value(nesterov == 0 || (o.at("momentum") > 0 && dampening == 0), name, where,
              "Nesterov momentum needs momentum > 0 and zero dampening; got momentum ",
              o.at("momentum"), " and dampening ", dampening);
}

Options sgd_defaults(const SGDOptions& o) {
  return {{"lr", o.lr},
          {"momentum", o.momentum},
          {"dampening", o.dampening},
          {"weight_decay", o.weight_decay},
          {"nesterov", o.nesterov ? 1.0 : 0.0}};
}

}  // namespace

SGD::SGD(std::vector<Tensor> params, SGDOptions options)
    : SGD(std::vector<ParamGroup>{{std::move(params), {}}}, options) {}

SGD::SGD(std::vector<ParamGroup> groups, SGDOptions options)
    : Optimizer("SGD", std::move(groups), sgd_defaults(options), check_sgd_options,
                {{"momentum_buffer", false}}, WeightDecay::kInUpdate) {}

// Plain SGD keeps no state. The buffer is left unfilled: the kernel's first step copies the
// gradient into it (PyTorch's `buf = clone(grad)`), so its memory is never read.
void SGD::init_state(const ParamGroup& group, const Tensor& param, State& state) const {
  if (option(group, "momentum") != 0) state["momentum_buffer"] = empty_like(param);
}

void SGD::update(const ParamGroup& group, ParamStep& p) {
  SgdStepParams s{
      option(group, "lr"),           option(group, "momentum"),      option(group, "dampening"),
      option(group, "weight_decay"), option(group, "nesterov") != 0, p.first_step};
  Tensor buffer;
  if (s.momentum != 0) buffer = p.state.at("momentum_buffer");
  dispatch<SgdStepKernel>(OpKey::sgd_step, p.param.device(), p.param, p.grad, buffer, s);
  p.param.bump_version();  // the kernel writes the parameter's memory without an op
}

}  // namespace wick::optim
