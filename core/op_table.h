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

// What a binary op's gradient for one input reads (the reads_a and reads_b columns): a set of
// the two operands and the result. The backward node saves the union for the inputs that need a
// gradient, and nothing else.
namespace reads {
constexpr uint8_t None = 0, A = 1, B = 2, Out = 4;
constexpr uint8_t AB = A | B, AOut = A | Out, BOut = B | Out;
}  // namespace reads

// What a binary formula is given: the incoming gradient, the operands and result its row reads
// (undefined when not saved), and which inputs need a gradient.
struct BinaryGradArgs {
  Tensor grad, a, b, out;
  bool needs_a = false, needs_b = false;
};
// d(a) and d(b) in the broadcast shape (the node sums them back to each input's shape), each
// undefined when that input needs no gradient.
struct BinaryGrads {
  Tensor a, b;
};
using BinaryGrad = BinaryGrads (*)(const BinaryGradArgs& args);

// A binary row's own refusal, checked by binary_op after autocast and promotion, before the
// kernel runs (its messages are PyTorch's).
enum class BinaryCheck : uint8_t {
  NoCheck,
  NotBool,      // bool operands are refused (after promotion)
  NotBothBool,  // sub of two bools: PyTorch points to logical_xor instead
  IntPower,     // integers to a negative integer power have no integer value
  IntDivisor,   // bool refused; a zero integer divisor raises (CPU kernel; front fn elsewhere)
};

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
  // Binary ops only: what each input's gradient reads, the formula and the row's refusal.
  uint8_t reads_a = reads::None, reads_b = reads::None;
  BinaryGrad binary_grad = nullptr;
  BinaryCheck check = BinaryCheck::NoCheck;
  // The C++ function and the Python function and method are generated from the row (unary:
  // `Tensor name(const Tensor&)`; binary: `Tensor name(const Tensor&, const Tensor&)`).
  bool generated_api = false;
  const char* export_name;  // the ONNX operator ("" until the exporter needs one)
};

const OpInfo& op_info(OpKey op);
const std::vector<OpInfo>& op_table();
// The op called `name`, or nullptr.
const OpInfo* find_op(const std::string& name);

}  // namespace wick
