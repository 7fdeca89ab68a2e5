#include "nn/optim/adam.h"

#include <cmath>

#include "core/dispatch.h"
#include "core/host_read.h"
#include "core/ops.h"

namespace wick::optim {

namespace {

void check_adam_options(const char* name, const std::string& where, const Options& o) {
  check_non_negative(name, where, o, "lr", "learning rate");
  check_non_negative(name, where, o, "eps", "epsilon");
  check_non_negative(name, where, o, "weight_decay", "weight_decay");
  check_betas(name, where, o);
  if (o.count("momentum_decay")) {
    check_non_negative(name, where, o, "momentum_decay", "momentum_decay");
  }
}

Options adam_defaults(double lr, double beta1, double beta2, double eps, double weight_decay) {
  return {
      {"lr", lr}, {"beta1", beta1}, {"beta2", beta2}, {"eps", eps}, {"weight_decay", weight_decay}};
}

template <class O>
Options adam_defaults(const O& o) {
  return adam_defaults(o.lr, o.beta1, o.beta2, o.eps, o.weight_decay);
}

std::vector<ParamGroup> one_group(std::vector<Tensor> params) {
  return {ParamGroup{std::move(params), {}}};
}

// The state Adam, RAdam and (with exp_inf for exp_avg_sq) Adamax keep: a step count and two
// moments, zero before the first step.
void init_moments(const Tensor& param, State& state, const char* second) {
  state["step"] = zeros({}, kFloat64);
  state["exp_avg"] = zeros_like(param);
  state[second] = zeros_like(param);
}

// Adamax, NAdam and RAdam compute their corrections on the host (Adam's kernel reads the
// count itself), so a traced step of theirs breaks the graph (Note [host reads]).
double step_count(const State& state) {
  note_host_read("the optimizer's step count");
  return state.at("step").item<double>();
}

}  // namespace

// ---- Adam and AdamW ----

Adam::Adam(const char* name, std::vector<ParamGroup> groups, AdamOptions options, bool decoupled)
    : Optimizer(name, std::move(groups), adam_defaults(options), check_adam_options,
                {{"step", true}, {"exp_avg", false}, {"exp_avg_sq", false}},
                WeightDecay::kInUpdate),
      decoupled_weight_decay_(decoupled) {}

Adam::Adam(std::vector<Tensor> params, AdamOptions options)
    : Adam("Adam", one_group(std::move(params)), options, false) {}

Adam::Adam(std::vector<ParamGroup> groups, AdamOptions options)
    : Adam("Adam", std::move(groups), options, false) {}

AdamW::AdamW(std::vector<Tensor> params, AdamOptions options)
    : Adam("AdamW", one_group(std::move(params)), options, true) {}

AdamW::AdamW(std::vector<ParamGroup> groups, AdamOptions options)
    : Adam("AdamW", std::move(groups), options, true) {}

void Adam::init_state(const ParamGroup&, const Tensor& param, State& state) const {
  init_moments(param, state, "exp_avg_sq");
}

void Adam::update(const ParamGroup& group, ParamStep& p) {
  AdamStepParams s{option(group, "lr"),  option(group, "beta1"),        option(group, "beta2"),
                   option(group, "eps"), option(group, "weight_decay"), decoupled_weight_decay_};
  // The kernel reads the step count from its tensor (Note [the step skeleton]).
  dispatch<AdamStepKernel>(OpKey::adam_step, p.param.device(), p.param, p.grad,
                           p.state.at("exp_avg"), p.state.at("exp_avg_sq"), p.state.at("step"), s);
  p.param.bump_version();  // the kernel writes the parameter's memory without an op
}

// ---- Adamax ----

Adamax::Adamax(std::vector<Tensor> params, AdamaxOptions options)
    : Adamax(one_group(std::move(params)), options) {}

Adamax::Adamax(std::vector<ParamGroup> groups, AdamaxOptions o)
    : Optimizer("Adamax", std::move(groups), adam_defaults(o), check_adam_options,
                {{"step", true}, {"exp_avg", false}, {"exp_inf", false}},
                WeightDecay::kAddedToGradient) {}

void Adamax::init_state(const ParamGroup&, const Tensor& param, State& state) const {
  init_moments(param, state, "exp_inf");
}

void Adamax::update(const ParamGroup& group, ParamStep& p) {
  double lr = option(group, "lr"), beta1 = option(group, "beta1");
  double beta2 = option(group, "beta2"), eps = option(group, "eps");
  double step = step_count(p.state);
  Tensor& exp_avg = p.state.at("exp_avg");
  Tensor& exp_inf = p.state.at("exp_inf");
  ema_(exp_avg, p.grad, beta1);
  exp_inf.copy_(maximum(exp_inf * beta2, p.grad.abs() + eps));
  double clr = lr / (1 - std::pow(beta1, step));
  p.param.add_(exp_avg / exp_inf * -clr);
}

// ---- NAdam ----

NAdam::NAdam(std::vector<Tensor> params, NAdamOptions options)
    : NAdam(one_group(std::move(params)), options) {}

NAdam::NAdam(std::vector<ParamGroup> groups, NAdamOptions o)
    : Optimizer(
          "NAdam", std::move(groups),
          [&] {
            Options d = adam_defaults(o);
            d["momentum_decay"] = o.momentum_decay;
            return d;
          }(),
          check_adam_options,
          {{"step", true},
           {"mu_product", true, false, false},
           {"exp_avg", false},
           {"exp_avg_sq", false}},
          WeightDecay::kAddedToGradient) {}

void NAdam::init_state(const ParamGroup&, const Tensor& param, State& state) const {
  init_moments(param, state, "exp_avg_sq");
  state["mu_product"] = ones({}, kFloat64);
}

void NAdam::update(const ParamGroup& group, ParamStep& p) {
  double lr = option(group, "lr"), beta1 = option(group, "beta1");
  double beta2 = option(group, "beta2"), eps = option(group, "eps");
  double momentum_decay = option(group, "momentum_decay");
  double step = step_count(p.state);
  double bias_correction2 = 1 - std::pow(beta2, step);
  double mu = beta1 * (1 - 0.5 * std::pow(0.96, step * momentum_decay));
  double mu_next = beta1 * (1 - 0.5 * std::pow(0.96, (step + 1) * momentum_decay));
  double mu_product = p.state.at("mu_product").mul_(mu).item<double>();
  // PyTorch 1.13 multiplies by mu twice here (later versions use mu_product * mu_next); kept,
  // so that wick's NAdam takes 1.13's steps.
  double mu_product_next = mu_product * mu * mu_next;
  Tensor& exp_avg = p.state.at("exp_avg");
  Tensor& exp_avg_sq = p.state.at("exp_avg_sq");
  ema_(exp_avg, p.grad, beta1);
  ema_(exp_avg_sq, p.grad * p.grad, beta2);
  Tensor denom = (exp_avg_sq / bias_correction2).sqrt() + eps;
  p.param.add_(p.grad / denom * (-lr * (1 - mu) / (1 - mu_product)));
  p.param.add_(exp_avg / denom * (-lr * mu_next / (1 - mu_product_next)));
}

// ---- RAdam ----

RAdam::RAdam(std::vector<Tensor> params, RAdamOptions options)
    : RAdam(one_group(std::move(params)), options) {}

RAdam::RAdam(std::vector<ParamGroup> groups, RAdamOptions o)
    : Optimizer("RAdam", std::move(groups), adam_defaults(o), check_adam_options,
                {{"step", true}, {"exp_avg", false}, {"exp_avg_sq", false}},
                WeightDecay::kAddedToGradient) {}

void RAdam::init_state(const ParamGroup&, const Tensor& param, State& state) const {
  init_moments(param, state, "exp_avg_sq");
}

void RAdam::update(const ParamGroup& group, ParamStep& p) {
  double lr = option(group, "lr"), beta1 = option(group, "beta1");
  double beta2 = option(group, "beta2"), eps = option(group, "eps");
  double step = step_count(p.state);
  double bias_correction1 = 1 - std::pow(beta1, step);
  double bias_correction2 = 1 - std::pow(beta2, step);
  Tensor& exp_avg = p.state.at("exp_avg");
  Tensor& exp_avg_sq = p.state.at("exp_avg_sq");
  ema_(exp_avg, p.grad, beta1);
  ema_(exp_avg_sq, p.grad * p.grad, beta2);
  Tensor corrected = exp_avg / bias_correction1;
  // rho_t approximates the length of the simple moving average the adaptive rate stands for;
  // below 5 its variance is unbounded, so the step is plain momentum.
  double rho_inf = 2 / (1 - beta2) - 1;
  double rho_t = rho_inf - 2 * step * std::pow(beta2, step) / bias_correction2;
  if (rho_t > 5) {
    double rect =
        std::sqrt((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t));
    Tensor adaptive_lr = std::sqrt(bias_correction2) / (exp_avg_sq.sqrt() + eps);
    p.param.add_(corrected * lr * adaptive_lr * rect * -1.0);
  } else {
    p.param.add_(corrected * lr * -1.0);
  }
}

}  // namespace wick::optim
