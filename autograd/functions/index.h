// Backward nodes of the index ops.
#pragma once

#include "autograd/node.h"
#include "core/op_table.h"

namespace wick {

struct IndexSelectBackward : Node {
  SavedTensor index;
  int64_t dim = 0;
  const char* name() const override { return op_info(OpKey::index_select).backward; }
  TensorList apply(const Tensor& grad) override;
  void release_saved() override { index.reset(); }
};

struct GatherBackward : Node {
  SavedTensor index;
  int64_t dim = 0;
  const char* name() const override { return op_info(OpKey::gather).backward; }
  TensorList apply(const Tensor& grad) override;
  void release_saved() override { index.reset(); }
};

struct ScatterAddBackward : Node {  // inputs: x, src
  SavedTensor index;
  int64_t dim = 0;
  const char* name() const override { return op_info(OpKey::scatter_add).backward; }
  TensorList apply(const Tensor& grad) override;
  void release_saved() override { index.reset(); }
};

}  // namespace wick
