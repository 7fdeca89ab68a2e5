// Dataset: something with a size and an example at each index, as in PyTorch's map-style
// datasets. TensorDataset serves examples from two tensors held in memory; data/mnist.h and
// data/cifar10.h read the standard files.
#pragma once

#include <cstdint>

#include "core/tensor.h"
#include "data/transforms.h"

namespace wick::data {

// One example: an input (an image, a feature vector) and its target (usually an int64 scalar
// label).
struct Example {
  Tensor input;
  Tensor target;
};

class Dataset {
 public:
  virtual ~Dataset() = default;

  virtual int64_t size() const = 0;
  // The example at `index`, 0 <= index < size(); std::out_of_range otherwise. DataLoader workers
  // call this from several threads at once, so it must not change shared state (reading members
  // set up by the constructor is fine).
  virtual Example get(int64_t index) const = 0;
  // What the DataLoader calls: the example as loaded in the epoch and with the seed `s` names.
  // Datasets with random transforms override it to seed them from `s` (Note [reproducible
  // transforms]); get(index) is then get_seeded(index, {0, 0, index}). The default ignores `s`.
  virtual Example get_seeded(int64_t index, const SampleSeed& s) const {
    (void)s;
    return get(index);
  }
};

// Examples i = (inputs[i], targets[i]) from two tensors that share their first dim, with an
// optional transform applied to each input. The examples are views into the two tensors.
class TensorDataset : public Dataset {
 public:
  TensorDataset(Tensor inputs, Tensor targets, Transform transform = {});

  int64_t size() const override { return inputs_.size(0); }
  Example get(int64_t index) const override;
  Example get_seeded(int64_t index, const SampleSeed& s) const override;

 private:
  Tensor inputs_, targets_;
  Transform transform_;
};

// Throws std::out_of_range naming `op` unless 0 <= index < size; for Dataset::get implementations.
void check_example_index(const char* op, int64_t index, int64_t size);

}  // namespace wick::data
