#include "nn/optim/adaptive.h"

#include "core/host_read.h"
#include "core/ops.h"

namespace wick::optim {

namespace {

void check_common(const char* name, const std::string& where, const Options& o) {
  check_non_negative(name, where, o, "lr", "learning rate");
  check_non_negative(name, where, o, "eps", "epsilon");
  check_non_negative(name, where, o, "weight_decay", "weight_decay");
}

void check_rmsprop_options(const char* name, const std::string& where, const Options& o) {
  check_common(name, where, o);
  check_non_negative(name, where, o, "alpha", "alpha");
  check_non_negative(name, where, o, "momentum", "momentum");
  check_flag(name, where, o, "centered");
}

void check_adagrad_options(const char* name, const std::string& where, const Options& o) {
  check_common(name, where, o);
  check_non_negative(name, where, o, "lr_decay", "lr_decay");
  check_non_negative(name, where, o, "initial_accumulator_value", "initial_accumulator_value");
}

void check_adadelta_options(const char* name, const std::string& where, const Options& o) {
  check_common(name, where, o);
  double rho = o.at("rho");
  check_value(rho >= 0 && rho <= 1, name, where, "rho must be in [0, 1]; got ", rho);
}

std::vector<ParamGroup> one_group(std::vector<Tensor> params) {
  return {ParamGroup{std::move(params), {}}};
}

}  // namespace

// ---- RMSprop ----

RMSprop::RMSprop(std::vector<Tensor> params, RMSpropOptions options)
    : RMSprop(one_group(std::move(params)), options) {}

RMSprop::RMSprop(std::vector<ParamGroup> groups, RMSpropOptions o)
    : Optimizer("RMSprop", std::move(groups),
                {{"lr", o.lr},
                 {"alpha", o.alpha},
                 {"eps", o.eps},
                 {"weight_decay", o.weight_decay},
                 {"momentum", o.momentum},
                 {"centered", o.centered ? 1.0 : 0.0}},
                check_rmsprop_options,
                {{"step", true},
                 {"square_avg", false},
                 {"momentum_buffer", false, true},
                 {"grad_avg", false, true}},
                WeightDecay::kAddedToGradient) {}

void RMSprop::init_state(const ParamGroup&, const Tensor& param, State& state) const {
  state["step"] = zeros({}, kFloat64);
  state["square_avg"] = zeros_like(param);
}

void RMSprop::update(const ParamGroup& group, ParamStep& p) {
  double lr = option(group, "lr"), alpha = option(group, "alpha"), eps = option(group, "eps");
  double momentum = option(group, "momentum");
  bool centered = option(group, "centered") != 0;
  // PyTorch creates these with the state; a group switched to momentum or centered later
  // starts them from zero here rather than failing.
  if (momentum > 0 && !p.state.count("momentum_buffer")) {
    p.state["momentum_buffer"] = zeros_like(p.param);
  }
  if (centered && !p.state.count("grad_avg")) p.state["grad_avg"] = zeros_like(p.param);
  const Tensor& grad = p.grad;
  Tensor& square_avg = p.state.at("square_avg");
  ema_(square_avg, grad * grad, alpha);
  Tensor avg;
  if (centered) {
    Tensor& grad_avg = p.state.at("grad_avg");
    ema_(grad_avg, grad, alpha);
    avg = (square_avg - grad_avg * grad_avg).sqrt() + eps;
  } else {
    avg = square_avg.sqrt() + eps;
  }
  if (momentum > 0) {
    Tensor& buffer = p.state.at("momentum_buffer");
    buffer.mul_(momentum).add_(grad / avg);
    p.param.add_(buffer * -lr);
  } else {
    p.param.add_(grad / avg * -lr);
  }
}

// ---- Adagrad ----

Adagrad::Adagrad(std::vector<Tensor> params, AdagradOptions options)
    : Adagrad(one_group(std::move(params)), options) {}

Adagrad::Adagrad(std::vector<ParamGroup> groups, AdagradOptions o)
    : Optimizer("Adagrad", std::move(groups),
                {{"lr", o.lr},
                 {"lr_decay", o.lr_decay},
                 {"weight_decay", o.weight_decay},
                 {"initial_accumulator_value", o.initial_accumulator_value},
                 {"eps", o.eps}},
                check_adagrad_options, {{"step", true}, {"sum", false}},
                WeightDecay::kAddedToGradient) {
  // PyTorch fills the accumulators when the optimizer is built, so its state dict has them
  // before the first step; so does this one. A group added later gets them at its first step.
  for (ParamGroup& group : param_groups()) {
    for (Tensor& param : group.params) init_state(group, param, state_of(param));
  }
}

void Adagrad::init_state(const ParamGroup& group, const Tensor& param, State& state) const {
  state["step"] = zeros({}, kFloat64);
  state["sum"] = full_like(param, option(group, "initial_accumulator_value"));
}

void Adagrad::update(const ParamGroup& group, ParamStep& p) {
  double lr = option(group, "lr"), lr_decay = option(group, "lr_decay");
  double eps = option(group, "eps");
  note_host_read("Adagrad's step count");  // Note [host reads]
  double step = p.state.at("step").item<double>();
  double clr = lr / (1 + (step - 1) * lr_decay);
  Tensor& sum = p.state.at("sum");
  sum.add_(p.grad * p.grad);
  p.param.add_(p.grad / (sum.sqrt() + eps) * -clr);
}

// ---- Adadelta ----

Adadelta::Adadelta(std::vector<Tensor> params, AdadeltaOptions options)
    : Adadelta(one_group(std::move(params)), options) {}

Adadelta::Adadelta(std::vector<ParamGroup> groups, AdadeltaOptions o)
    : Optimizer("Adadelta", std::move(groups),
                {{"lr", o.lr}, {"rho", o.rho}, {"eps", o.eps}, {"weight_decay", o.weight_decay}},
                check_adadelta_options,
                {{"step", true}, {"square_avg", false}, {"acc_delta", false}},
                WeightDecay::kAddedToGradient) {}

void Adadelta::init_state(const ParamGroup&, const Tensor& param, State& state) const {
  state["step"] = zeros({}, kFloat64);
  state["square_avg"] = zeros_like(param);
  state["acc_delta"] = zeros_like(param);
}

void Adadelta::update(const ParamGroup& group, ParamStep& p) {
  double lr = option(group, "lr"), rho = option(group, "rho"), eps = option(group, "eps");
  Tensor& square_avg = p.state.at("square_avg");
  Tensor& acc_delta = p.state.at("acc_delta");
  ema_(square_avg, p.grad * p.grad, rho);
  // The step is scaled by the RMS of past steps over the RMS of gradients, so it carries the
  // parameter's units and lr can stay 1.
  Tensor delta = (acc_delta + eps).sqrt() / (square_avg + eps).sqrt() * p.grad;
  ema_(acc_delta, delta * delta, rho);
  p.param.add_(delta * -lr);
}

}  // namespace wick::optim
