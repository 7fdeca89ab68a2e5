#include "data/collate.h"

#include "core/error.h"
#include "core/ops.h"

namespace wick::data {

namespace {

// stack() would also refuse mismatched shapes; checking here names the example and the field.
Tensor stack_field(const std::vector<Example>& examples, Tensor Example::*field, const char* what) {
  std::vector<Tensor> parts;
  parts.reserve(examples.size());
  const Tensor& first = examples[0].*field;
  for (size_t i = 0; i < examples.size(); ++i) {
    const Tensor& t = examples[i].*field;
    check_value(t.defined(), "collate", "example ", i, " of the batch has no ", what);
    check_value(t.shape() == first.shape() && t.dtype() == first.dtype(), "collate", "example ", i,
                " of the batch has ", what, " shape ", t.shape(), " and dtype ", t.dtype(),
                " but example 0 has ", first.shape(), " and ", first.dtype());
    parts.push_back(t);
  }
  return stack(parts, 0);
}

}  // namespace

Batch default_collate(const std::vector<Example>& examples) {
  check_value(!examples.empty(), "collate", "cannot collate an empty batch");
  return {stack_field(examples, &Example::input, "input"),
          stack_field(examples, &Example::target, "target")};
}

}  // namespace wick::data
