#include "data/dataset.h"

#include <utility>

#include "core/error.h"

namespace wick::data {

void check_example_index(const char* op, int64_t index, int64_t size) {
  check_index(index >= 0 && index < size, op, "index ", index, " is out of range for a dataset of ",
              size, " examples");
}

TensorDataset::TensorDataset(Tensor inputs, Tensor targets, Transform transform)
    : inputs_(std::move(inputs)), targets_(std::move(targets)), transform_(std::move(transform)) {
  check_value(inputs_.defined() && targets_.defined(), "TensorDataset",
              "inputs and targets must be defined tensors");
  check_value(inputs_.dim() >= 1 && targets_.dim() >= 1, "TensorDataset",
              "inputs and targets need a first dim to index; got shapes ", inputs_.shape(), " and ",
              targets_.shape());
  check_value(inputs_.size(0) == targets_.size(0), "TensorDataset",
              "inputs and targets must have the same size in dim 0; got shapes ", inputs_.shape(),
              " and ", targets_.shape());
  // Workers read these from several threads; detached, no read can reach autograd state.
  inputs_ = inputs_.detach();
  targets_ = targets_.detach();
}

Example TensorDataset::get(int64_t index) const { return get_seeded(index, {0, 0, index}); }

Example TensorDataset::get_seeded(int64_t index, const SampleSeed& s) const {
  check_example_index("TensorDataset", index, size());
  return {apply_transform(transform_, inputs_.select(0, index), s), targets_.select(0, index)};
}

}  // namespace wick::data
