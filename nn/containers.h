// Containers: Sequential runs its modules in order; ModuleList only holds them (its owner
// decides how to call them). Both name their children "0", "1", ... as PyTorch does.
#pragma once

#include <memory>
#include <vector>

#include "nn/module.h"

namespace wick::nn {

class Sequential : public Module {
 public:
  Sequential() : Module("Sequential") {}
  explicit Sequential(std::vector<std::shared_ptr<Module>> modules);
  Sequential& push_back(std::shared_ptr<Module> module);
  Tensor forward(const Tensor& input) override;
  size_t size() const { return modules_.size(); }
  std::shared_ptr<Module> operator[](int64_t index) const;

 private:
  std::vector<std::shared_ptr<Module>> modules_;
};

class ModuleList : public Module {
 public:
  ModuleList() : Module("ModuleList") {}
  explicit ModuleList(std::vector<std::shared_ptr<Module>> modules);
  ModuleList& push_back(std::shared_ptr<Module> module);
  size_t size() const { return modules_.size(); }
  std::shared_ptr<Module> operator[](int64_t index) const;
  auto begin() const { return modules_.begin(); }
  auto end() const { return modules_.end(); }

 private:
  std::vector<std::shared_ptr<Module>> modules_;
};

}  // namespace wick::nn
