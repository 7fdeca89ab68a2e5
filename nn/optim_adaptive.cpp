#include "nn/optim_adaptive.h"

#include <cmath>

#include "autograd/grad_mode.h"
#include "core/ops.h"

namespace wick::optim {

namespace {

// PyTorch's L2 penalty: the gradient of (wd / 2) |p|^2 added to the loss's.
Tensor with_weight_decay(const Tensor& grad, const Tensor& param, double weight_decay) {
  return weight_decay != 0 ? grad + param * weight_decay : grad;
}

// Advances a parameter's 0-d step counter and returns the new count.
double next_step(std::map<std::string, Tensor>& state) {
  return state.at("step").add_(1.0).item<double>();
}

// An exponential moving average in place: avg <- rate avg + (1 - rate) value.
void ema_(Tensor& avg, const Tensor& value, double rate) {
  avg.mul_(rate).add_(value * (1 - rate));
}

void check_flag(const char* name, const std::string& where, const Options& o, const char* key) {
  double v = o.at(key);
  check_value(v == 0 || v == 1, name, where, key, " must be 0 or 1; got ", v);
}

void check_betas(const char* name, const std::string& where, const Options& o) {
  double beta1 = o.at("beta1"), beta2 = o.at("beta2");
  check_value(beta1 >= 0 && beta1 < 1 && beta2 >= 0 && beta2 < 1, name, where,
              "betas must be in [0, 1); got (", beta1, ", ", beta2, ")");
}

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

void check_adam_family_options(const char* name, const std::string& where, const Options& o) {
  check_common(name, where, o);
  check_betas(name, where, o);
  if (o.count("momentum_decay")) {
    check_non_negative(name, where, o, "momentum_decay", "momentum_decay");
  }
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
                 {"grad_avg", false, true}}) {}

void RMSprop::step() {
  NoGradGuard no_grad;
  check_step();  // all parameters first, so a mismatch leaves every one of them unchanged
  for (ParamGroup& group : param_groups()) {
    double lr = option(group, "lr"), alpha = option(group, "alpha"), eps = option(group, "eps");
    double momentum = option(group, "momentum");
    bool centered = option(group, "centered") != 0;
    for (Tensor& param : group.params) {
      if (!param.grad().defined()) continue;
      Tensor grad = with_weight_decay(param.grad(), param, option(group, "weight_decay"));
      auto& state = state_of(param);
      if (state.empty()) {
        state["step"] = zeros({}, kFloat64);
        state["square_avg"] = zeros_like(param);
      }
      // PyTorch creates these with the state; a group switched to momentum or centered later
      // starts them from zero here rather than failing.
      if (momentum > 0 && !state.count("momentum_buffer")) {
        state["momentum_buffer"] = zeros_like(param);
      }
      if (centered && !state.count("grad_avg")) state["grad_avg"] = zeros_like(param);
      next_step(state);
      Tensor& square_avg = state["square_avg"];
      ema_(square_avg, grad * grad, alpha);
      Tensor avg;
      if (centered) {
        Tensor& grad_avg = state["grad_avg"];
        ema_(grad_avg, grad, alpha);
        avg = (square_avg - grad_avg * grad_avg).sqrt() + eps;
      } else {
        avg = square_avg.sqrt() + eps;
      }
      if (momentum > 0) {
        Tensor& buffer = state["momentum_buffer"];
        buffer.mul_(momentum).add_(grad / avg);
        param.add_(buffer * -lr);
      } else {
        param.add_(grad / avg * -lr);
      }
    }
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
                check_adagrad_options, {{"step", true}, {"sum", false}}) {
  // PyTorch fills the accumulators when the optimizer is built, so its state dict has them
  // before the first step; so does this one.
  for (ParamGroup& group : param_groups()) {
    for (Tensor& param : group.params) {
      auto& state = state_of(param);
      state["step"] = zeros({}, kFloat64);
      state["sum"] = full_like(param, option(group, "initial_accumulator_value"));
    }
  }
}

void Adagrad::step() {
  NoGradGuard no_grad;
  check_step();
  for (ParamGroup& group : param_groups()) {
    double lr = option(group, "lr"), lr_decay = option(group, "lr_decay");
    double eps = option(group, "eps");
    for (Tensor& param : group.params) {
      if (!param.grad().defined()) continue;
      Tensor grad = with_weight_decay(param.grad(), param, option(group, "weight_decay"));
      auto& state = state_of(param);
      if (state.empty()) {  // a group added after construction
        state["step"] = zeros({}, kFloat64);
        state["sum"] = full_like(param, option(group, "initial_accumulator_value"));
      }
      double step = next_step(state);
      double clr = lr / (1 + (step - 1) * lr_decay);
      Tensor& sum = state["sum"];
      sum.add_(grad * grad);
      param.add_(grad / (sum.sqrt() + eps) * -clr);
    }
  }
}

// ---- Adadelta ----

Adadelta::Adadelta(std::vector<Tensor> params, AdadeltaOptions options)
    : Adadelta(one_group(std::move(params)), options) {}

Adadelta::Adadelta(std::vector<ParamGroup> groups, AdadeltaOptions o)
    : Optimizer("Adadelta", std::move(groups),
                {{"lr", o.lr}, {"rho", o.rho}, {"eps", o.eps}, {"weight_decay", o.weight_decay}},
                check_adadelta_options,
                {{"step", true}, {"square_avg", false}, {"acc_delta", false}}) {}

void Adadelta::step() {
  NoGradGuard no_grad;
  check_step();
  for (ParamGroup& group : param_groups()) {
    double lr = option(group, "lr"), rho = option(group, "rho"), eps = option(group, "eps");
    for (Tensor& param : group.params) {
      if (!param.grad().defined()) continue;
      Tensor grad = with_weight_decay(param.grad(), param, option(group, "weight_decay"));
      auto& state = state_of(param);
      if (state.empty()) {
        state["step"] = zeros({}, kFloat64);
        state["square_avg"] = zeros_like(param);
        state["acc_delta"] = zeros_like(param);
      }
      next_step(state);
      Tensor& square_avg = state["square_avg"];
      Tensor& acc_delta = state["acc_delta"];
      ema_(square_avg, grad * grad, rho);
      // The step is scaled by the RMS of past steps over the RMS of gradients, so it carries
      // the parameter's units and lr can stay 1.
      Tensor delta = (acc_delta + eps).sqrt() / (square_avg + eps).sqrt() * grad;
      ema_(acc_delta, delta * delta, rho);
      param.add_(delta * -lr);
    }
  }
}

// ---- Adamax ----

Adamax::Adamax(std::vector<Tensor> params, AdamaxOptions options)
    : Adamax(one_group(std::move(params)), options) {}

Adamax::Adamax(std::vector<ParamGroup> groups, AdamaxOptions o)
    : Optimizer("Adamax", std::move(groups),
                {{"lr", o.lr},
                 {"beta1", o.beta1},
                 {"beta2", o.beta2},
                 {"eps", o.eps},
                 {"weight_decay", o.weight_decay}},
                check_adam_family_options,
                {{"step", true}, {"exp_avg", false}, {"exp_inf", false}}) {}

void Adamax::step() {
  NoGradGuard no_grad;
  check_step();
  for (ParamGroup& group : param_groups()) {
    double lr = option(group, "lr"), beta1 = option(group, "beta1");
    double beta2 = option(group, "beta2"), eps = option(group, "eps");
    for (Tensor& param : group.params) {
      if (!param.grad().defined()) continue;
      Tensor grad = with_weight_decay(param.grad(), param, option(group, "weight_decay"));
      auto& state = state_of(param);
      if (state.empty()) {
        state["step"] = zeros({}, kFloat64);
        state["exp_avg"] = zeros_like(param);
        state["exp_inf"] = zeros_like(param);
      }
      double step = next_step(state);
      Tensor& exp_avg = state["exp_avg"];
      Tensor& exp_inf = state["exp_inf"];
      ema_(exp_avg, grad, beta1);
      exp_inf.copy_(maximum(exp_inf * beta2, grad.abs() + eps));
      double clr = lr / (1 - std::pow(beta1, step));
      param.add_(exp_avg / exp_inf * -clr);
    }
  }
}

// ---- NAdam ----

NAdam::NAdam(std::vector<Tensor> params, NAdamOptions options)
    : NAdam(one_group(std::move(params)), options) {}

NAdam::NAdam(std::vector<ParamGroup> groups, NAdamOptions o)
    : Optimizer("NAdam", std::move(groups),
                {{"lr", o.lr},
                 {"beta1", o.beta1},
                 {"beta2", o.beta2},
                 {"eps", o.eps},
                 {"weight_decay", o.weight_decay},
                 {"momentum_decay", o.momentum_decay}},
                check_adam_family_options,
                {{"step", true},
                 {"mu_product", true, false, false},
                 {"exp_avg", false},
                 {"exp_avg_sq", false}}) {}

void NAdam::step() {
  NoGradGuard no_grad;
  check_step();
  for (ParamGroup& group : param_groups()) {
    double lr = option(group, "lr"), beta1 = option(group, "beta1");
    double beta2 = option(group, "beta2"), eps = option(group, "eps");
    double momentum_decay = option(group, "momentum_decay");
    for (Tensor& param : group.params) {
      if (!param.grad().defined()) continue;
      Tensor grad = with_weight_decay(param.grad(), param, option(group, "weight_decay"));
      auto& state = state_of(param);
      if (state.empty()) {
        state["step"] = zeros({}, kFloat64);
        state["mu_product"] = ones({}, kFloat64);
        state["exp_avg"] = zeros_like(param);
        state["exp_avg_sq"] = zeros_like(param);
      }
      double step = next_step(state);
      double bias_correction2 = 1 - std::pow(beta2, step);
      double mu = beta1 * (1 - 0.5 * std::pow(0.96, step * momentum_decay));
      double mu_next = beta1 * (1 - 0.5 * std::pow(0.96, (step + 1) * momentum_decay));
      double mu_product = state["mu_product"].mul_(mu).item<double>();
      // PyTorch 1.13 multiplies by mu twice here (later versions use mu_product * mu_next);
      // kept, so that wick's NAdam takes 1.13's steps.
      double mu_product_next = mu_product * mu * mu_next;
      Tensor& exp_avg = state["exp_avg"];
      Tensor& exp_avg_sq = state["exp_avg_sq"];
      ema_(exp_avg, grad, beta1);
      ema_(exp_avg_sq, grad * grad, beta2);
      Tensor denom = (exp_avg_sq / bias_correction2).sqrt() + eps;
      param.add_(grad / denom * (-lr * (1 - mu) / (1 - mu_product)));
      param.add_(exp_avg / denom * (-lr * mu_next / (1 - mu_product_next)));
    }
  }
}

// ---- RAdam ----

RAdam::RAdam(std::vector<Tensor> params, RAdamOptions options)
    : RAdam(one_group(std::move(params)), options) {}

RAdam::RAdam(std::vector<ParamGroup> groups, RAdamOptions o)
    : Optimizer("RAdam", std::move(groups),
                {{"lr", o.lr},
                 {"beta1", o.beta1},
                 {"beta2", o.beta2},
                 {"eps", o.eps},
                 {"weight_decay", o.weight_decay}},
                check_adam_family_options,
                {{"step", true}, {"exp_avg", false}, {"exp_avg_sq", false}}) {}

void RAdam::step() {
  NoGradGuard no_grad;
  check_step();
  for (ParamGroup& group : param_groups()) {
    double lr = option(group, "lr"), beta1 = option(group, "beta1");
    double beta2 = option(group, "beta2"), eps = option(group, "eps");
    for (Tensor& param : group.params) {
      if (!param.grad().defined()) continue;
      Tensor grad = with_weight_decay(param.grad(), param, option(group, "weight_decay"));
      auto& state = state_of(param);
      if (state.empty()) {
        state["step"] = zeros({}, kFloat64);
        state["exp_avg"] = zeros_like(param);
        state["exp_avg_sq"] = zeros_like(param);
      }
      double step = next_step(state);
      double bias_correction1 = 1 - std::pow(beta1, step);
      double bias_correction2 = 1 - std::pow(beta2, step);
      Tensor& exp_avg = state["exp_avg"];
      Tensor& exp_avg_sq = state["exp_avg_sq"];
      ema_(exp_avg, grad, beta1);
      ema_(exp_avg_sq, grad * grad, beta2);
      Tensor corrected = exp_avg / bias_correction1;
      // rho_t approximates the length of the simple moving average the adaptive rate stands
      // for; below 5 its variance is unbounded, so the step is plain momentum.
      double rho_inf = 2 / (1 - beta2) - 1;
      double rho_t = rho_inf - 2 * step * std::pow(beta2, step) / bias_correction2;
      if (rho_t > 5) {
        double rect = std::sqrt((rho_t - 4) * (rho_t - 2) * rho_inf /
                                ((rho_inf - 4) * (rho_inf - 2) * rho_t));
        Tensor adaptive_lr = std::sqrt(bias_correction2) / (exp_avg_sq.sqrt() + eps);
        param.add_(corrected * lr * adaptive_lr * rect * -1.0);
      } else {
        param.add_(corrected * lr * -1.0);
      }
    }
  }
}

}  // namespace wick::optim
