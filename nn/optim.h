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
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/tensor.h"
#include "nn/state_dict.h"

namespace wick::optim {

using Options = std::map<std::string, double>;

// Checks a complete set of options (every default present) against the ranges the optimizer
// accepts; `where` says whose options they are ("" for the constructor's, "group 1: ",
// "load_state_dict: group 0: "). One function per optimizer serves its constructor,
// add_param_group and load_state_dict, so a value refused by one is refused by all.
using OptionCheck = void (*)(const char* optimizer, const std::string& where, const Options&);

// One entry of the per-parameter state: its name, and whether it is a 0-d float64 number
// ("step", NAdam's "mu_product") rather than a tensor of the parameter's shape and dtype. An
// optimizer's entries exist all together or not at all, except optional ones, which exist only
// under some options (RMSprop's "momentum_buffer" with momentum, "grad_avg" when centered), as
// in PyTorch's state dicts. A scalar is a step count (an integer >= 0) unless `integer` is false.
struct StateField {
  std::string name;
  bool scalar;
  bool optional = false;
  bool integer = true;
};

struct ParamGroup {
  std::vector<Tensor> params;
  Options options;  // may override any default; filled in from the defaults when added
};

// A finite option value >= 0 (NaN fails every comparison, so it is refused too); for the
// OptionCheck functions of every optimizer.
void check_non_negative(const char* name, const std::string& where, const Options& o,
                        const char* key, const char* what);

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  // Updates every parameter that has a gradient, from that gradient. Throws std::runtime_error,
  // changing nothing more, when a parameter, its gradient and its state disagree in shape, dtype
  // or device (a parameter resized through .data after the optimizer saw it).
  virtual void step() = 0;
  void zero_grad(bool set_to_none = true);
  void add_param_group(ParamGroup group);
  std::vector<ParamGroup>& param_groups() { return groups_; }
  const std::vector<ParamGroup>& param_groups() const { return groups_; }
  const Options& defaults() const { return defaults_; }
  // PyTorch's group["initial_lr"]: group `index`'s rate when the first LR schedule asked for it.
  // Every later schedule starts from it, not from the rate an earlier one left behind.
  double initial_lr(size_t index);

  // "state.<i>.<name>" for each parameter i (numbered across groups in order) and
  // "param_groups.<g>.<option>" as 0-d float64 tensors, "param_groups.<g>.params" as int64.
  StateDict state_dict() const;
  // Restores state and options saved by an optimizer of the same type over parameters of the
  // same shapes, in the same group structure. The whole state dict is checked first (group
  // count and sizes, option ranges, every state entry present with the parameter's shape), so
  // a bad one throws std::invalid_argument and leaves the optimizer exactly as it was.
  void load_state_dict(const StateDict& state);
  // The checks of load_state_dict without the load (checkpoint resume checks every part first).
  void check_state_dict(const StateDict& state) const;
  const char* name() const { return name_; }

 protected:
  Optimizer(const char* name, std::vector<ParamGroup> groups, Options defaults,
            OptionCheck check_options, std::vector<StateField> fields);
  // Per-parameter state by name, created empty on first use.
  std::map<std::string, Tensor>& state_of(const Tensor& param);
  double option(const ParamGroup& group, const std::string& key) const;
  // Checks, before an update, that every parameter with a gradient, that gradient and its state
  // (if any) agree in shape, dtype and device, and that the state is complete; errors name the
  // parameter by its index across groups.
  void check_step() const;

 private:
  struct Loaded;
  void check_step(size_t index, const Tensor& param, const Tensor& grad) const;
  Loaded parse_state_dict(const StateDict& state) const;

  const char* name_;
  Options defaults_;
  OptionCheck check_options_;
  std::vector<StateField> fields_;
  std::vector<ParamGroup> groups_;
  std::vector<std::optional<double>> initial_lrs_;  // per group, set by initial_lr()
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
