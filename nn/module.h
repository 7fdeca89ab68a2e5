// nn::Module: the base of every layer and model. A module owns named parameters (tensors that
// require grad and that optimizers update), named buffers (state that is saved but not trained,
// like batch norm's running mean) and named submodules, and it walks that tree for everything
// that concerns the whole model: parameters(), train()/eval(), zero_grad(), to(), state_dict()
// and load_state_dict(), and printing. Names compose with dots: "features.0.weight".
//
//   struct Net : nn::Module {
//     std::shared_ptr<nn::Linear> fc1, fc2;
//     Net() : Module("Net") {
//       fc1 = register_module("fc1", std::make_shared<nn::Linear>(784, 256));
//       fc2 = register_module("fc2", std::make_shared<nn::Linear>(256, 10));
//     }
//     Tensor forward(const Tensor& x) override { return (*fc2)(relu((*fc1)(x))); }
//   };
#pragma once

#include <memory>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "core/tensor.h"
#include "nn/state_dict.h"

namespace wick::nn {

class Module;

namespace detail {
extern thread_local std::vector<const Module*>* t_module_calls;
}

// While alive, every Module::operator() on this thread pushes its module onto `stack()` for the
// duration of its forward (outermost first). ONNX export uses it to name the module whose forward
// dispatched an op it cannot translate; without a recorder a call costs one thread-local test.
class ModuleCallRecorder {
 public:
  ModuleCallRecorder();
  ~ModuleCallRecorder();
  ModuleCallRecorder(const ModuleCallRecorder&) = delete;
  ModuleCallRecorder& operator=(const ModuleCallRecorder&) = delete;
  const std::vector<const Module*>& stack() const { return stack_; }

 private:
  std::vector<const Module*> stack_;
  std::vector<const Module*>* previous_;
};

class Module {
 public:
  explicit Module(std::string type_name = "Module");
  virtual ~Module() = default;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  // The forward pass of a module with one input and one output (every layer here). Containers
  // and models override it; the base throws, naming the module.
  virtual Tensor forward(const Tensor& input);
  // forward, noted on this thread's module call stack while a ModuleCallRecorder is alive.
  Tensor operator()(const Tensor& input) {
    if (detail::t_module_calls == nullptr) return forward(input);
    return recorded_forward(input);
  }

  const std::string& type_name() const { return type_name_; }
  // The text inside the parentheses when printed, e.g. "in_features=784, out_features=10".
  virtual std::string extra_repr() const { return ""; }

  // Registration. Names must be non-empty, contain no '.', and be unique within the module.
  Tensor register_parameter(const std::string& name, Tensor tensor, bool requires_grad = true);
  Tensor register_buffer(const std::string& name, Tensor tensor);
  template <class M>
  std::shared_ptr<M> register_module(const std::string& name, std::shared_ptr<M> module) {
    add_child(name, module);
    return module;
  }

  // The tree, in registration order (parameters of a module before those of its children).
  std::vector<Tensor> parameters(bool recurse = true) const;
  std::vector<std::pair<std::string, Tensor>> named_parameters(bool recurse = true) const;
  std::vector<std::pair<std::string, Tensor>> named_buffers(bool recurse = true) const;
  std::vector<std::shared_ptr<Module>> children() const;
  const std::vector<std::pair<std::string, std::shared_ptr<Module>>>& named_children() const {
    return children_;
  }
  // This module ("") and every descendant, depth first.
  std::vector<std::pair<std::string, Module*>> named_modules();
  int64_t num_parameters() const;

  void train(bool mode = true);
  void eval() { train(false); }
  bool is_training() const { return training_; }
  // Clears every parameter's gradient: drops it (set_to_none, PyTorch's default) or zeroes it.
  void zero_grad(bool set_to_none = true);
  // Moves parameters and buffers to a device and/or converts floating ones to a dtype, in place:
  // the tensors keep their identity, so an optimizer built before still holds them.
  void to(Device device);
  void to(DType dtype);

  // Parameters and buffers by dotted name.
  StateDict state_dict() const;
  // Copies matching entries into this module's tensors. A shape mismatch is always an error;
  // with `strict`, so are missing and unexpected names. Returns what was missing / unexpected.
  struct LoadResult {
    std::vector<std::string> missing, unexpected;
  };
  LoadResult load_state_dict(const StateDict& state, bool strict = true);
  // The checks of load_state_dict without loading: throws what it would throw.
  LoadResult check_state_dict(const StateDict& state, bool strict = true) const;

  // PyTorch-style tree: "Net(\n  (fc1): Linear(in_features=784, ...)\n)".
  std::string repr() const;

 protected:
  bool training_ = true;

 private:
  void add_child(const std::string& name, std::shared_ptr<Module> module);
  Tensor recorded_forward(const Tensor& input);
  std::vector<Tensor> tensors() const;  // parameters and buffers
  void check_name(const std::string& kind, const std::string& name) const;
  void collect(const std::string& prefix, bool parameters, bool recurse,
               std::vector<std::pair<std::string, Tensor>>& out) const;

  std::string type_name_;
  std::vector<std::pair<std::string, Tensor>> parameters_;
  std::vector<std::pair<std::string, Tensor>> buffers_;
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> children_;
};

std::ostream& operator<<(std::ostream& os, const Module& module);

// A layer's sizes as Python prints a tuple, for extra_repr: "(3, 3)", and "(3,)" for one.
std::string tuple_repr(const std::vector<int64_t>& values);

}  // namespace wick::nn
