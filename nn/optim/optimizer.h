// The optimizer base: parameter groups, per-parameter state, state dicts, and the one step
// skeleton every optimizer runs on (Note [the step skeleton]). The optimizers themselves are in
// sgd.h, adam.h (Adam and its relatives), adaptive.h (RMSprop, Adagrad, Adadelta) and lbfgs.h;
// they follow torch.optim's update rules exactly (tests compare against PyTorch step by step).
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

// A parameter's state by entry name.
using State = std::map<std::string, Tensor>;

// Who applies an optimizer's weight_decay: the step skeleton, as PyTorch's L2 penalty added to
// the gradient before the update (the adaptive optimizers), or the update itself (the fused
// kernels of SGD and Adam, which fold it into their one pass; AdamW's decoupled decay).
enum class WeightDecay { kAddedToGradient, kInUpdate };

// One parameter as the step skeleton hands it to an optimizer's update.
struct ParamStep {
  Tensor& param;
  Tensor grad;      // with the L2 penalty added, for WeightDecay::kAddedToGradient
  State& state;     // initialised, and "step" already counted, by the skeleton
  bool first_step;  // the state was created by this step (SGD's buffer then starts as grad)
};

struct ParamGroup {
  std::vector<Tensor> params;
  Options options;  // may override any default; filled in from the defaults when added
};

// A finite option value >= 0 (NaN fails every comparison, so it is refused too); for the
// OptionCheck functions of every optimizer.
void check_non_negative(const char* name, const std::string& where, const Options& o,
                        const char* key, const char* what);

// Shared option checks of the optimizers' OptionCheck functions: a flag is 0 or 1; betas
// ("beta1", "beta2") lie in [0, 1).
void check_flag(const char* name, const std::string& where, const Options& o, const char* key);
void check_betas(const char* name, const std::string& where, const Options& o);

// An exponential moving average in place, the building block of the adaptive updates:
// avg <- rate avg + (1 - rate) value.
void ema_(Tensor& avg, const Tensor& value, double rate);

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  // Updates every parameter that has a gradient, from that gradient (Note [the step skeleton]).
  // Throws std::runtime_error, changing nothing, when a parameter, its gradient and its state
  // disagree in shape, dtype or device (a parameter resized through .data after the optimizer
  // saw it). Virtual only for L-BFGS, which needs a closure and replaces it.
  virtual void step();
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
            OptionCheck check_options, std::vector<StateField> fields, WeightDecay weight_decay);

  // The two hooks of the step skeleton. init_state fills a parameter's empty state on its first
  // step (a "step" entry is then counted by the skeleton); update changes the parameter in place.
  virtual void init_state(const ParamGroup& group, const Tensor& param, State& state) const;
  virtual void update(const ParamGroup& group, ParamStep& p) = 0;

  // Per-parameter state by name, created empty on first use.
  State& state_of(const Tensor& param);
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
  WeightDecay weight_decay_;
  std::vector<ParamGroup> groups_;
  std::vector<std::optional<double>> initial_lrs_;  // per group, set by initial_lr()
  std::unordered_map<const TensorImpl*, State> state_;
};

}  // namespace wick::optim
