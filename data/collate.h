// Collation: turning the examples of one batch into one Batch of tensors.
#pragma once

#include <functional>
#include <vector>

#include "core/tensor.h"
#include "data/dataset.h"

namespace wick::data {

// One batch: inputs [B, ...] and targets [B, ...], B examples stacked along a new first dim.
struct Batch {
  Tensor input;
  Tensor target;
};

// Builds a Batch from a batch's examples (in sampler order). Runs on worker threads, so it must be
// safe to call from several threads at once.
using CollateFn = std::function<Batch(const std::vector<Example>& examples)>;

// stack()s the inputs and the targets; every example must have the input shape and dtype of the
// first (and likewise its target), else std::invalid_argument naming the example.
Batch default_collate(const std::vector<Example>& examples);

}  // namespace wick::data
