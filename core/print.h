// How Tensor::str() prints (PyTorch's torch.set_printoptions): digits after the point, when to
// summarize with "...", how many entries to keep at each edge, the line width, and whether
// floats use scientific notation. Process-wide, as in PyTorch; set it before printing, not while
// other threads print.
#pragma once

#include <cstdint>
#include <optional>

namespace wick {

struct PrintOptions {
  int precision = 4;
  int64_t threshold = 1000;  // summarize tensors with more elements than this
  int64_t edgeitems = 3;
  int64_t linewidth = 80;
  std::optional<bool> sci_mode;  // nullopt: chosen from the values, as PyTorch does
};

const PrintOptions& get_print_options();
// Checks every field (ValueError naming the field otherwise) and replaces the options.
void set_print_options(const PrintOptions& options);

}  // namespace wick
