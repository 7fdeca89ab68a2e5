// Optimizers: SGD (momentum, dampening, Nesterov, weight decay), Adam and AdamW, with parameter
// groups and state dicts, following torch.optim's update rules exactly (tests compare against
// PyTorch step by step).
//
// A parameter group is a list of parameters and its hyperparameters by name ("lr", "momentum",
// "beta1", ...); a value missing from a group comes from the optimizer's defaults. LR
// schedules change group options between steps. Per-parameter state (momentum buffers, Adam's
// moments) lives in the optimizer and is exported, with the groups, by state_dict().
#pragma once

#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/tensor.h"
#include "nn/state_dict.h"

namespace wick::optim {

using Options = std::map<std::string, double>;

struct ParamGroup {
  std::vector<Tensor> params;
  Options options;  // may override any default; filled in from the defaults when added
};

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  // Updates every parameter that has a gradient, from that gradient.
  virtual void step() = 0;
  void zero_grad(bool set_to_none = true);
  void add_param_group(ParamGroup group);
  std::vector<ParamGroup>& param_groups() { return groups_; }
  const std::vector<ParamGroup>& param_groups() const { return groups_; }
  const Options& defaults() const { return defaults_; }

  // "state.<i>.<name>" for each parameter i (numbered across groups in order) and
  // "param_groups.<g>.<option>" as 0-d float64 tensors, "param_groups.<g>.params" as int64.
  StateDict state_dict() const;
  // Restores state and options saved by an optimizer of the same type over parameters of the
  // same shapes, in the same group structure.
  void load_state_dict(const StateDict& state);

 protected:
  Optimizer(const char* name, std::vector<ParamGroup> groups, Options defaults);
  // Per-parameter state by name, created empty on first use.
  std::map<std::string, Tensor>& state_of(const Tensor& param);
  double option(const ParamGroup& group, const std::string& key) const;

 private:
  const char* name_;
  Options defaults_;
  std::vector<ParamGroup> groups_;
  std::unordered_map<const TensorImpl*, std::map<std::string, Tensor>> state_;
};

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
  void step() override;
};

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
  void step() override;

 protected:
  Adam(const char* name, std::vector<ParamGroup> groups, AdamOptions options, bool decoupled);

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

}  // namespace wick::optim
