// Backward nodes of the index ops.
#pragma once

#include "autograd/node.h"

namespace wick {

struct IndexSelectBackward : Node {
  SavedTensor index;
  int64_t dim = 0;
  const char* name() const override { return "IndexSelectBackward"; }
  TensorList apply(const Tensor& grad) override;
  void release_saved() override { index.reset(); }
};

struct GatherBackward : Node {
  SavedTensor index;
  int64_t dim = 0;
  const char* name() const override { return "GatherBackward"; }
  TensorList apply(const Tensor& grad) override;
  void release_saved() override { index.reset(); }
};

struct ScatterAddBackward : Node {  // inputs: x, src
  SavedTensor index;
  int64_t dim = 0;
  const char* name() const override { return "ScatterAddBackward"; }
  TensorList apply(const Tensor& grad) override;
  void release_saved() override { index.reset(); }
};

}  // namespace wick
