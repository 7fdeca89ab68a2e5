// The op table: one OpInfo per op with a kernel, built from the rows of core/ops/op_list.h. It is
// what the dispatcher names ops by, what the unary front functions read their rules from, and what
// tools enumerate (the docs, the table-driven tests, `wick._C._ops()` in Python, and the coming
// graph compiler and exporter): each op is described once, here, and nowhere else.
#pragma once

#include <string>
#include <typeinfo>
#include <vector>

#include "core/autocast.h"
#include "core/kernels.h"

namespace wick {

// Which input dtypes an op accepts and which dtype it produces.
enum class DTypeRule : uint8_t {
  Numeric,          // any dtype but bool; the output has the input's dtype
  Floating,         // floating point; integer inputs are computed in float32
  Bool,             // any dtype; the output is bool
  Promote,          // inputs promoted to one dtype (PyTorch's rules), the output has it
  PromoteFloating,  // like Promote, but integers promote to float32 (true division)
  Compare,          // inputs promoted to one dtype; the output is bool
  SumLike,          // the input's dtype, but integers and bool accumulate into int64
  Same,             // the output has the input's dtype
  Any,              // the caller names the output dtype (copies, fills, factories)
};
const char* dtype_rule_name(DTypeRule rule);

// What a unary op's backward keeps alive from the forward pass.
enum class Saves : uint8_t { Nothing, Input, Output };
const char* saves_name(Saves saves);

// d(input) of a unary op, from the incoming gradient and the saved input or output.
using UnaryGrad = Tensor (*)(const Tensor& grad, const Tensor& saved, const UnaryAttrs& attrs);

struct OpAttr {
  std::string name;
  std::string type;  // "float", "int", "int[2]", "int[]", "bool", "scalar", "dtype"
};

struct OpInfo {
  OpKey key;
  const char* name;
  const char* family;            // "unary", "binary", or the kernel signature of the others
  const std::type_info* kernel;  // the kernel signature every device registers for it
  std::vector<std::string> inputs;
  std::vector<OpAttr> attrs;
  DTypeRule dtype;
  AutocastPolicy autocast;
  bool differentiable;
  const char* backward;  // the autograd node's name ("" when not differentiable)
  // Unary ops only: what the backward saves and its formula.
  Saves saves = Saves::Nothing;
  UnaryGrad unary_grad = nullptr;
  bool generated_api = false;  // unary ops whose `Tensor name(const Tensor&)` is generated
  const char* export_name;     // the ONNX operator ("" until the exporter needs one)
};

const OpInfo& op_info(OpKey op);
const std::vector<OpInfo>& op_table();
// The op called `name`, or nullptr.
const OpInfo* find_op(const std::string& name);

}  // namespace wick
