#include "nn/module.h"

#include <algorithm>
#include <set>
#include <sstream>

#include "core/grad_mode.h"
#include "core/ops.h"

namespace wick::nn {

namespace detail {
thread_local std::vector<const Module*>* t_module_calls = nullptr;
}

ModuleCallRecorder::ModuleCallRecorder() : previous_(detail::t_module_calls) {
  detail::t_module_calls = &stack_;
}
ModuleCallRecorder::~ModuleCallRecorder() { detail::t_module_calls = previous_; }

Tensor Module::recorded_forward(const Tensor& input) {
  std::vector<const Module*>* stack = detail::t_module_calls;
  stack->push_back(this);
  struct Pop {
    std::vector<const Module*>* stack;
    ~Pop() { stack->pop_back(); }
  } pop{stack};
  return forward(input);
}

Module::Module(std::string type_name) : type_name_(std::move(type_name)) {}

Tensor Module::forward(const Tensor&) {
  throw std::runtime_error(error_message(type_name_.c_str(),
                                         "this module has no single-input forward; call the "
                                         "module's own methods instead"));
}

void Module::check_name(const std::string& kind, const std::string& name) const {
  check_value(!name.empty() && name.find('.') == std::string::npos, type_name_.c_str(), kind,
              " name '", name, "' must be non-empty and contain no '.'");
  auto taken = [&](const auto& list) {
    return std::any_of(list.begin(), list.end(), [&](const auto& e) { return e.first == name; });
  };
  check_value(!taken(parameters_) && !taken(buffers_) && !taken(children_), type_name_.c_str(),
              "the name '", name, "' is already registered");
}

Tensor Module::register_parameter(const std::string& name, Tensor tensor, bool requires_grad) {
  check_name("parameter", name);
  check_value(tensor.defined(), type_name_.c_str(), "parameter '", name, "' is undefined");
  check_state(tensor.is_leaf(), type_name_.c_str(), "parameter '", name,
              "' must be a leaf tensor (detach() it first)");
  tensor.requires_grad_(requires_grad);
  parameters_.emplace_back(name, tensor);
  return tensor;
}

Tensor Module::register_buffer(const std::string& name, Tensor tensor) {
  check_name("buffer", name);
  check_value(tensor.defined(), type_name_.c_str(), "buffer '", name, "' is undefined");
  buffers_.emplace_back(name, tensor);
  return tensor;
}

void Module::add_child(const std::string& name, std::shared_ptr<Module> module) {
  check_name("submodule", name);
  check_value(module != nullptr, type_name_.c_str(), "submodule '", name, "' is null");
  children_.emplace_back(name, std::move(module));
}

void Module::collect(const std::string& prefix, bool parameters, bool recurse,
                     std::vector<std::pair<std::string, Tensor>>& out) const {
  for (const auto& [name, tensor] : parameters ? parameters_ : buffers_) {
    out.emplace_back(prefix + name, tensor);
  }
  if (!recurse) return;
  for (const auto& [name, child] : children_)
    child->collect(prefix + name + ".", parameters, true, out);
}

std::vector<std::pair<std::string, Tensor>> Module::named_parameters(bool recurse) const {
  std::vector<std::pair<std::string, Tensor>> out;
  collect("", true, recurse, out);
  return out;
}

std::vector<std::pair<std::string, Tensor>> Module::named_buffers(bool recurse) const {
  std::vector<std::pair<std::string, Tensor>> out;
  collect("", false, recurse, out);
  return out;
}

std::vector<Tensor> Module::parameters(bool recurse) const {
  std::vector<Tensor> out;
  for (auto& named : named_parameters(recurse)) out.push_back(named.second);
  return out;
}

std::vector<std::shared_ptr<Module>> Module::children() const {
  std::vector<std::shared_ptr<Module>> out;
  for (const auto& child : children_) out.push_back(child.second);
  return out;
}

std::vector<std::pair<std::string, Module*>> Module::named_modules() {
  std::vector<std::pair<std::string, Module*>> out = {{"", this}};
  for (const auto& [name, child] : children_) {
    for (auto& [sub, module] : child->named_modules()) {
      out.emplace_back(sub.empty() ? name : name + "." + sub, module);
    }
  }
  return out;
}

std::vector<Tensor> Module::tensors() const {
  std::vector<Tensor> out = parameters();
  for (auto& named : named_buffers()) out.push_back(named.second);
  return out;
}

int64_t Module::num_parameters() const {
  int64_t n = 0;
  for (const Tensor& p : parameters()) n += p.numel();
  return n;
}

void Module::train(bool mode) {
  training_ = mode;
  for (const auto& child : children_) child.second->train(mode);
}

void Module::zero_grad(bool set_to_none) {
  NoGradGuard no_grad;
  for (const Tensor& p : parameters()) {
    if (!p.grad().defined()) continue;
    if (set_to_none) {
      p.set_grad(Tensor());
    } else {
      p.grad().zero_();
    }
  }
}

void Module::to(Device device) {
  NoGradGuard no_grad;
  for (const Tensor& t : tensors()) {
    if (t.device() != device) t.set_data(t.to(device));
  }
}

void Module::to(DType dtype) {
  check_type(is_floating(dtype), type_name_.c_str(),
             "modules convert to floating dtypes only; got ", dtype);
  NoGradGuard no_grad;
  for (const Tensor& t : tensors()) {
    // Integer buffers (counters, indices) keep their dtype, as in PyTorch.
    if (t.is_floating_point() && t.dtype() != dtype) t.set_data(t.to(dtype));
  }
}

StateDict Module::state_dict() const {
  StateDict out;
  for (auto& [name, t] : named_parameters()) out[name] = t.detach();
  for (auto& [name, t] : named_buffers()) out[name] = t.detach();
  return out;
}

// PyTorch's rule: every problem is collected and reported in one error - missing and unexpected
// keys (with strict), and size mismatches and undefined entries (always) - so a user fixing a
// checkpoint sees all of it at once, and nothing is loaded unless everything fits.
Module::LoadResult Module::check_state_dict(const StateDict& state, bool strict) const {
  LoadResult result;
  std::vector<std::string> problems;
  std::set<std::string> known;
  for (auto& [name, t] : state_dict()) {
    known.insert(name);
    auto it = state.find(name);
    if (it == state.end()) {
      result.missing.push_back(name);
    } else if (!it->second.defined()) {
      problems.push_back("entry '" + name + "' is undefined");
    } else if (it->second.shape() != t.shape()) {
      std::ostringstream os;
      os << "size mismatch for " << name << ": the checkpoint has shape " << it->second.shape()
         << ", the model has shape " << t.shape();
      problems.push_back(os.str());
    }
  }
  for (auto& [name, t] : state) {
    if (!known.count(name)) result.unexpected.push_back(name);
  }
  auto list = [](const char* what, const std::vector<std::string>& keys) {
    std::string s = what;
    for (size_t i = 0; i < keys.size(); ++i) s += (i ? ", '" : " '") + keys[i] + "'";
    return s;
  };
  if (strict && !result.unexpected.empty()) {
    problems.insert(problems.begin(), list("unexpected keys:", result.unexpected));
  }
  if (strict && !result.missing.empty()) {
    problems.insert(problems.begin(), list("missing keys:", result.missing));
  }
  if (!problems.empty()) {
    std::ostringstream os;
    os << "error(s) loading the state dict of " << type_name_ << ":";
    for (size_t i = 0; i < problems.size(); ++i) os << (i ? "; " : " ") << problems[i];
    throw std::invalid_argument(error_message("load_state_dict", os.str()));
  }
  return result;
}

Module::LoadResult Module::load_state_dict(const StateDict& state, bool strict) {
  // Check everything before changing anything, so a failed load leaves the module untouched.
  LoadResult result = check_state_dict(state, strict);
  NoGradGuard no_grad;
  for (auto& [name, t] : state_dict()) {
    auto it = state.find(name);
    if (it != state.end()) t.copy_(it->second);
  }
  return result;
}

namespace {
void render(const Module& m, int indent, std::ostringstream& os) {
  os << m.type_name() << '(' << m.extra_repr();
  if (m.named_children().empty()) {
    os << ')';
    return;
  }
  os << '\n';
  std::string pad(indent + 2, ' ');
  for (const auto& [name, child] : m.named_children()) {
    os << pad << '(' << name << "): ";
    render(*child, indent + 2, os);
    os << '\n';
  }
  os << std::string(indent, ' ') << ')';
}
}  // namespace

std::string Module::repr() const {
  std::ostringstream os;
  render(*this, 0, os);
  return os.str();
}

std::ostream& operator<<(std::ostream& os, const Module& module) { return os << module.repr(); }

std::string tuple_repr(const std::vector<int64_t>& values) {
  std::ostringstream os;
  os << '(';
  for (size_t i = 0; i < values.size(); ++i) os << (i ? ", " : "") << values[i];
  os << (values.size() == 1 ? ",)" : ")");
  return os.str();
}

}  // namespace wick::nn
