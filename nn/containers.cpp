#include "nn/containers.h"

namespace wick::nn {

namespace {
std::shared_ptr<Module> at(const std::vector<std::shared_ptr<Module>>& modules, int64_t index,
                           const char* owner) {
  int64_t n = static_cast<int64_t>(modules.size());
  check_index(index >= -n && index < n, owner, "index ", index, " is out of range for ", n,
              " modules");
  return modules[index < 0 ? index + n : index];
}
}  // namespace

Sequential::Sequential(std::vector<std::shared_ptr<Module>> modules) : Sequential() {
  for (auto& m : modules) push_back(std::move(m));
}

Sequential& Sequential::push_back(std::shared_ptr<Module> module) {
  register_module(std::to_string(modules_.size()), module);
  modules_.push_back(std::move(module));
  return *this;
}

Tensor Sequential::forward(const Tensor& input) {
  Tensor x = input;
  for (auto& m : modules_) x = (*m)(x);
  return x;
}

std::shared_ptr<Module> Sequential::operator[](int64_t index) const {
  return at(modules_, index, "Sequential");
}

ModuleList::ModuleList(std::vector<std::shared_ptr<Module>> modules) : ModuleList() {
  for (auto& m : modules) push_back(std::move(m));
}

ModuleList& ModuleList::push_back(std::shared_ptr<Module> module) {
  register_module(std::to_string(modules_.size()), module);
  modules_.push_back(std::move(module));
  return *this;
}

std::shared_ptr<Module> ModuleList::operator[](int64_t index) const {
  return at(modules_, index, "ModuleList");
}

}  // namespace wick::nn
