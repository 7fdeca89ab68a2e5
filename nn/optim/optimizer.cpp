#include "nn/optim/optimizer.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "core/grad_mode.h"
#include "core/ops.h"

namespace wick::optim {

Optimizer::Optimizer(const char* name, std::vector<ParamGroup> groups, Options defaults,
                     OptionCheck check_options, std::vector<StateField> fields,
                     WeightDecay weight_decay)
    : name_(name),
      defaults_(std::move(defaults)),
      check_options_(check_options),
      fields_(std::move(fields)),
      weight_decay_(weight_decay) {
  check_options_(name_, "", defaults_);
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
  check_options_(name_, "group " + std::to_string(groups_.size()) + ": ", group.options);
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

State& Optimizer::state_of(const Tensor& param) { return state_[param.impl()]; }

// Note [the step skeleton]
// Every optimizer but L-BFGS steps through this one loop, PyTorch's `_init_group` idea: the base
// walks the groups and their parameters, skips those without a gradient, creates a parameter's
// state on its first step (the optimizer's init_state), counts its "step", adds the L2 penalty
// to the gradient where the optimizer asks for it, and hands the parameter to the optimizer's
// update. An optimizer is then its options, its state entries, init_state and update. PyTorch's
// skeleton also refuses sparse and complex gradients; wick has neither kind of tensor.
// The step count is advanced by an op (add_), not on the host: a traced step replays it, and
// each replay's update reads its own count (Adam's kernel reads the tensor).
void Optimizer::step() {
  NoGradGuard no_grad;
  check_step();  // all parameters first, so a mismatch leaves every one of them unchanged
  for (ParamGroup& group : groups_) {
    double weight_decay = 0;
    if (weight_decay_ == WeightDecay::kAddedToGradient) {
      weight_decay = option(group, "weight_decay");
    }
    for (Tensor& param : group.params) {
      Tensor grad = param.grad();
      if (!grad.defined()) continue;
      State& state = state_[param.impl()];
      bool first_step = state.empty();
      if (first_step) init_state(group, param, state);
      auto count = state.find("step");
      if (count != state.end()) count->second.add_(1.0);
      if (weight_decay != 0) grad = grad + param * weight_decay;
      ParamStep p{param, std::move(grad), state, first_step};
      update(group, p);
    }
  }
}

void Optimizer::init_state(const ParamGroup&, const Tensor&, State&) const {}

double Optimizer::initial_lr(size_t index) {
  if (initial_lrs_.size() < groups_.size()) initial_lrs_.resize(groups_.size());
  std::optional<double>& lr = initial_lrs_.at(index);
  if (!lr) lr = option(groups_.at(index), "lr");
  return *lr;
}

double Optimizer::option(const ParamGroup& group, const std::string& key) const {
  return group.options.at(key);  // every group holds every default (add_param_group)
}

// Note [optimizer state agreement]
// A parameter's gradient and state are separate tensors that the fused kernels walk in lockstep
// with it, element by element. Anything that changes one of them alone - `p.data = bigger`,
// a `.grad` assigned before the resize, a state dict of another model - would make the kernel
// read or write past the end of the smaller one. So every step() checks, per parameter, that all
// of them have the parameter's shape, dtype and device, and that the state is complete. These are
// a few comparisons per parameter, against kernels that touch every element.
void Optimizer::check_step() const {
  size_t index = 0;
  for (const ParamGroup& g : groups_) {
    for (const Tensor& p : g.params) {
      Tensor grad = p.grad();
      if (grad.defined()) check_step(index, p, grad);
      ++index;
    }
  }
}

void Optimizer::check_step(size_t index, const Tensor& param, const Tensor& grad) const {
  check_state(grad.shape() == param.shape(), name_, "step: parameter ", index, " has shape ",
              param.shape(), " but its gradient has shape ", grad.shape());
  check_state(grad.dtype() == param.dtype(), name_, "step: parameter ", index, " is ",
              param.dtype(), " but its gradient is ", grad.dtype());
  check_state(grad.device() == param.device(), name_, "step: parameter ", index, " is on ",
              param.device(), " but its gradient is on ", grad.device());
  auto it = state_.find(param.impl());
  if (it == state_.end() || it->second.empty()) return;
  for (const StateField& f : fields_) {
    auto entry = it->second.find(f.name);
    if (f.optional && entry == it->second.end()) continue;
    check_state(entry != it->second.end(), name_, "step: the state of parameter ", index,
                " has no '", f.name, "'");
    if (f.scalar) continue;
    const Tensor& t = entry->second;
    check_state(t.shape() == param.shape(), name_, "step: parameter ", index, " has shape ",
                param.shape(), " but its state '", f.name, "' has shape ", t.shape(),
                " (was the parameter resized after the optimizer saw it?)");
    check_state(t.dtype() == param.dtype() && t.device() == param.device(), name_,
                "step: parameter ", index, " is ", param.dtype(), " on ", param.device(),
                " but its state '", f.name, "' is ", t.dtype(), " on ", t.device());
  }
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

// What a state dict restores, fully checked: the state per parameter and each group's options.
struct Optimizer::Loaded {
  std::unordered_map<const TensorImpl*, State> state;
  std::vector<Options> options;
};

Optimizer::Loaded Optimizer::parse_state_dict(const StateDict& state) const {
  const std::string op = "load_state_dict: ";
  std::vector<const Tensor*> params;
  for (const ParamGroup& g : groups_) {
    for (const Tensor& p : g.params) params.push_back(&p);
  }
  Loaded loaded;
  for (size_t g = 0; g < groups_.size(); ++g) {
    auto it = state.find("param_groups." + std::to_string(g) + ".params");
    check_value(it != state.end(), name_, op, "the state dict has no group ", g,
                " (the optimizer has ", groups_.size(), ")");
    check_value(it->second.defined() &&
                    it->second.numel() == static_cast<int64_t>(groups_[g].params.size()),
                name_, op, "group ", g, " has ", groups_[g].params.size(),
                " parameters but the state dict has ",
                it->second.defined() ? it->second.numel() : 0);
    loaded.options.push_back(groups_[g].options);
  }
  std::map<size_t, State> by_index;
  for (const auto& [key, t] : state) {
    check_value(t.defined(), name_, op, "entry '", key, "' is undefined");
    size_t dot1 = key.find('.'), dot2 = key.find('.', dot1 + 1);
    check_value(dot1 != std::string::npos && dot2 != std::string::npos, name_, op,
                "unexpected key '", key, "'");
    std::string kind = key.substr(0, dot1), field = key.substr(dot2 + 1);
    std::string number = key.substr(dot1 + 1, dot2 - dot1 - 1);
    check_value(!number.empty() && number.size() < 10 &&
                    number.find_first_not_of("0123456789") == std::string::npos,
                name_, op, "unexpected key '", key, "'");
    size_t index = std::stoul(number);
    if (kind == "state") {
      check_value(index < params.size(), name_, op, "state for parameter ", index,
                  " but the optimizer has ", params.size(), " parameters");
      auto known = std::find_if(fields_.begin(), fields_.end(),
                                [&](const StateField& f) { return f.name == field; });
      check_value(known != fields_.end(), name_, op, "unknown state entry '", key, "'");
      const Tensor& p = *params[index];
      if (known->scalar) {
        check_value(t.numel() == 1, name_, op, "'", key, "' must hold one number; it has shape ",
                    t.shape());
        double v = t.to(kCPU, kFloat64).reshape({}).item<double>();
        check_value(!known->integer || (std::isfinite(v) && v >= 0 && v == std::floor(v) &&
                                        v < 9.007199254740992e15),
                    name_, op, "'", key, "' is ", v, "; a step count is an integer >= 0");
        check_value(std::isfinite(v), name_, op, "'", key, "' is ", v);
        by_index[index][field] = scalar_tensor(v, kFloat64);
      } else {
        check_value(t.shape() == p.shape(), name_, op, "'", key, "' has shape ", t.shape(),
                    " but parameter ", index, " has shape ", p.shape());
        check_type(is_floating(t.dtype()), name_, op, "'", key, "' is ", t.dtype(),
                   "; optimizer state is floating point");
        by_index[index][field] = t.to(p.device(), p.dtype()).clone();
      }
    } else if (kind == "param_groups" && field != "params") {
      check_value(index < groups_.size(), name_, op, "options for group ", index,
                  " but the optimizer has ", groups_.size(), " groups");
      check_value(defaults_.count(field) > 0, name_, op, "unknown option '", field, "'");
      check_value(t.numel() == 1, name_, op, "option '", key,
                  "' must hold one number; it has shape ", t.shape());
      loaded.options[index][field] = t.to(kCPU, kFloat64).reshape({}).item<double>();
    } else {
      check_value(kind == "param_groups" && index < groups_.size(), name_, op, "unexpected key '",
                  key, "'");
    }
  }
  for (size_t g = 0; g < loaded.options.size(); ++g) {
    check_options_(name_, op + "group " + std::to_string(g) + ": ", loaded.options[g]);
  }
  // A parameter's state is all there or absent: a step with half of it would read memory the
  // missing entry never had (Note [optimizer state agreement]).
  for (auto& [index, entries] : by_index) {
    for (const StateField& f : fields_) {
      check_value(f.optional || entries.count(f.name) > 0, name_, op, "the state of parameter ",
                  index, " has no '", f.name, "' (it has ", entries.size(), " of the ",
                  fields_.size(), " entries ", name_, " keeps)");
    }
    loaded.state[params[index]->impl()] = std::move(entries);
  }
  return loaded;
}

void Optimizer::check_state_dict(const StateDict& state) const { parse_state_dict(state); }

void Optimizer::load_state_dict(const StateDict& state) {
  // Everything is checked and converted first; only then is anything replaced.
  Loaded loaded = parse_state_dict(state);
  state_ = std::move(loaded.state);
  for (size_t g = 0; g < groups_.size(); ++g) groups_[g].options = std::move(loaded.options[g]);
}

// ---- helpers for the optimizers' option checks and updates ----

void check_non_negative(const char* name, const std::string& where, const Options& o,
                        const char* key, const char* what) {
  double v = o.at(key);
  check_value(std::isfinite(v) && v >= 0, name, where, "invalid ", what, " ", v,
              " (it must be a finite number >= 0)");
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

void ema_(Tensor& avg, const Tensor& value, double rate) {
  avg.mul_(rate).add_(value * (1 - rate));
}

}  // namespace wick::optim
