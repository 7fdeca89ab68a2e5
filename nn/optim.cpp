#include "nn/optim.h"

#include <cmath>
#include <set>

#include "autograd/grad_mode.h"
#include "core/dispatch.h"
#include "core/ops.h"

namespace wick::optim {

Optimizer::Optimizer(const char* name, std::vector<ParamGroup> groups, Options defaults)
    : name_(name), defaults_(std::move(defaults)) {
  check_value(!groups.empty(), name_, "got an empty list of parameter groups");
  for (ParamGroup& g : groups) add_param_group(std::move(g));
}

void Optimizer::add_param_group(ParamGroup group) {
  check_value(!group.params.empty(), name_, "a parameter group must hold at least one parameter");
  std::set<const TensorImpl*> seen;
  for (const ParamGroup& g : groups_) {
    for (const Tensor& p : g.params) seen.insert(p.impl());
  }
  for (const Tensor& p : group.params) {
    check_value(p.defined(), name_, "got an undefined parameter");
    check_value(p.is_leaf(), name_,
                "can only optimize leaf tensors (parameters), not results "
                "of operations");
    check_value(p.requires_grad(), name_, "a parameter of shape ", p.shape(),
                " does not require grad");
    check_value(seen.insert(p.impl()).second, name_,
                "a parameter appears in more than one group (or twice in one)");
  }
  for (const auto& [key, value] : group.options) {
    check_value(defaults_.count(key) > 0, name_, "unknown option '", key, "' in a parameter group");
  }
  for (const auto& [key, value] : defaults_) group.options.emplace(key, value);
  groups_.push_back(std::move(group));
}

void Optimizer::zero_grad(bool set_to_none) {
  NoGradGuard no_grad;
  for (ParamGroup& g : groups_) {
    for (Tensor& p : g.params) {
      if (!p.grad().defined()) continue;
      if (set_to_none) {
        p.set_grad(Tensor());
      } else {
        p.grad().zero_();
      }
    }
  }
}

std::map<std::string, Tensor>& Optimizer::state_of(const Tensor& param) {
  return state_[param.impl()];
}

double Optimizer::option(const ParamGroup& group, const std::string& key) const {
  return group.options.at(key);  // every group holds every default (add_param_group)
}

StateDict Optimizer::state_dict() const {
  StateDict out;
  int64_t index = 0;
  for (size_t g = 0; g < groups_.size(); ++g) {
    std::string prefix = "param_groups." + std::to_string(g) + ".";
    std::vector<int64_t> ids;
    for (const Tensor& p : groups_[g].params) {
      auto it = state_.find(p.impl());
      if (it != state_.end()) {
        for (const auto& [name, t] : it->second) {
          out["state." + std::to_string(index) + "." + name] = t.detach();
        }
      }
      ids.push_back(index++);
    }
    out[prefix + "params"] = tensor(ids);
    for (const auto& [key, value] : groups_[g].options) {
      out[prefix + key] = scalar_tensor(value, kFloat64);
    }
  }
  return out;
}

void Optimizer::load_state_dict(const StateDict& state) {
  // Validate first, then apply, so a bad state dict leaves the optimizer as it was.
  std::vector<const Tensor*> params;
  for (ParamGroup& g : groups_) {
    for (const Tensor& p : g.params) params.push_back(&p);
  }
  for (size_t g = 0; g < groups_.size(); ++g) {
    auto it = state.find("param_groups." + std::to_string(g) + ".params");
    check_value(it != state.end(), name_, "load_state_dict: the state dict has no group ", g);
    check_value(it->second.numel() == static_cast<int64_t>(groups_[g].params.size()), name_,
                "load_state_dict: group ", g, " has ", groups_[g].params.size(),
                " parameters but the state dict has ", it->second.numel());
  }
  check_value(!state.count("param_groups." + std::to_string(groups_.size()) + ".params"), name_,
              "load_state_dict: the state dict has more parameter groups than the optimizer (",
              groups_.size(), ")");
  std::unordered_map<const TensorImpl*, std::map<std::string, Tensor>> restored;
  std::vector<std::pair<size_t, std::pair<std::string, double>>> options;
  for (const auto& [key, t] : state) {
    check_value(t.defined(), name_, "load_state_dict: entry '", key, "' is undefined");
    size_t dot1 = key.find('.'), dot2 = key.find('.', dot1 + 1);
    check_value(dot1 != std::string::npos && dot2 != std::string::npos, name_,
                "load_state_dict: unexpected key '", key, "'");
    std::string kind = key.substr(0, dot1), field = key.substr(dot2 + 1);
    std::string number = key.substr(dot1 + 1, dot2 - dot1 - 1);
    check_value(!number.empty() && number.size() < 10 &&
                    number.find_first_not_of("0123456789") == std::string::npos,
                name_, "load_state_dict: unexpected key '", key, "'");
    size_t index = std::stoul(number);
    if (kind == "state") {
      check_value(index < params.size(), name_, "load_state_dict: state for parameter ", index,
                  " but the optimizer has ", params.size());
      const Tensor& p = *params[index];
      check_value(t.dim() == 0 || t.shape() == p.shape(), name_, "load_state_dict: '", key,
                  "' has shape ", t.shape(), " but the parameter has shape ", p.shape());
      restored[p.impl()][field] = t.to(p.device(), t.dim() == 0 ? t.dtype() : p.dtype()).clone();
    } else if (kind == "param_groups" && field != "params") {
      check_value(defaults_.count(field) > 0, name_, "load_state_dict: unknown option '", field,
                  "'");
      options.push_back({index, {field, t.item<double>()}});
    } else {
      check_value(kind == "param_groups", name_, "load_state_dict: unexpected key '", key, "'");
    }
  }
  state_ = std::move(restored);
  for (auto& [g, option] : options) groups_[g].options[option.first] = option.second;
}

// ---- SGD ----

namespace {
Options sgd_defaults(const SGDOptions& o) {
  check_value(o.lr >= 0, "SGD", "invalid learning rate ", o.lr);
  check_value(o.momentum >= 0, "SGD", "invalid momentum ", o.momentum);
  check_value(o.weight_decay >= 0, "SGD", "invalid weight_decay ", o.weight_decay);
  check_value(!o.nesterov || (o.momentum > 0 && o.dampening == 0), "SGD",
              "Nesterov momentum needs momentum > 0 and zero dampening");
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
    : Optimizer("SGD", std::move(groups), sgd_defaults(options)) {}

void SGD::step() {
  NoGradGuard no_grad;
  for (ParamGroup& group : param_groups()) {
    SgdStepParams p{
        option(group, "lr"),           option(group, "momentum"),      option(group, "dampening"),
        option(group, "weight_decay"), option(group, "nesterov") != 0, false};
    for (Tensor& param : group.params) {
      Tensor grad = param.grad();
      if (!grad.defined()) continue;
      Tensor buffer;
      if (p.momentum != 0) {
        auto& state = state_of(param);
        p.first_step = state.count("momentum_buffer") == 0;
        if (p.first_step) state["momentum_buffer"] = empty_like(param);
        buffer = state["momentum_buffer"];
      }
      dispatch<SgdStepKernel>(OpKey::sgd_step, param.device(), param, grad, buffer, p);
      param.bump_version();
    }
  }
}

// ---- Adam and AdamW ----

namespace {
Options adam_defaults(const char* name, const AdamOptions& o) {
  check_value(o.lr >= 0, name, "invalid learning rate ", o.lr);
  check_value(o.eps >= 0, name, "invalid epsilon ", o.eps);
  check_value(o.beta1 >= 0 && o.beta1 < 1 && o.beta2 >= 0 && o.beta2 < 1, name,
              "betas must be in [0, 1); got (", o.beta1, ", ", o.beta2, ")");
  check_value(o.weight_decay >= 0, name, "invalid weight_decay ", o.weight_decay);
  return {{"lr", o.lr},
          {"beta1", o.beta1},
          {"beta2", o.beta2},
          {"eps", o.eps},
          {"weight_decay", o.weight_decay}};
}
}  // namespace

Adam::Adam(const char* name, std::vector<ParamGroup> groups, AdamOptions options, bool decoupled)
    : Optimizer(name, std::move(groups), adam_defaults(name, options)),
      decoupled_weight_decay_(decoupled) {}

Adam::Adam(std::vector<Tensor> params, AdamOptions options)
    : Adam("Adam", std::vector<ParamGroup>{{std::move(params), {}}}, options, false) {}

Adam::Adam(std::vector<ParamGroup> groups, AdamOptions options)
    : Adam("Adam", std::move(groups), options, false) {}

AdamW::AdamW(std::vector<Tensor> params, AdamOptions options)
    : Adam("AdamW", std::vector<ParamGroup>{{std::move(params), {}}}, options, true) {}

AdamW::AdamW(std::vector<ParamGroup> groups, AdamOptions options)
    : Adam("AdamW", std::move(groups), options, true) {}

void Adam::step() {
  NoGradGuard no_grad;
  for (ParamGroup& group : param_groups()) {
    AdamStepParams p{option(group, "lr"),
                     option(group, "beta1"),
                     option(group, "beta2"),
                     option(group, "eps"),
                     option(group, "weight_decay"),
                     0,
                     0,
                     decoupled_weight_decay_};
    for (Tensor& param : group.params) {
      Tensor grad = param.grad();
      if (!grad.defined()) continue;
      auto& state = state_of(param);
      if (state.empty()) {
        state["step"] = zeros({}, kFloat64);
        state["exp_avg"] = zeros_like(param);
        state["exp_avg_sq"] = zeros_like(param);
      }
      double step = state["step"].add_(1.0).item<double>();
      p.bias_correction1 = 1.0 - std::pow(p.beta1, step);
      p.bias_correction2 = 1.0 - std::pow(p.beta2, step);
      dispatch<AdamStepKernel>(OpKey::adam_step, param.device(), param, grad, state["exp_avg"],
                               state["exp_avg_sq"], p);
      param.bump_version();
    }
  }
}

}  // namespace wick::optim
