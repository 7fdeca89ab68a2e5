// The op table, expanded from the rows of core/ops/op_list.h.
#include "core/op_table.h"

#include <sstream>

#include "autograd/functions/binary_grads.h"
#include "autograd/functions/unary_grads.h"
#include "core/error.h"

namespace wick {

namespace {

std::vector<std::string> split_list(const char* text) {
  std::vector<std::string> items;
  std::stringstream stream(text);
  std::string item;
  while (std::getline(stream, item, ',')) {
    size_t begin = item.find_first_not_of(' ');
    if (begin != std::string::npos) items.push_back(item.substr(begin));
  }
  return items;
}

std::vector<OpAttr> parse_attrs(const char* text) {
  std::vector<OpAttr> attrs;
  for (const std::string& item : split_list(text)) {
    size_t colon = item.find(':');
    attrs.push_back({item.substr(0, colon), item.substr(item.find_first_not_of(' ', colon + 1))});
  }
  return attrs;
}

#define WICK_GRAD_diff(name) &name##_grad
#define WICK_GRAD_nodiff(name) nullptr

std::vector<OpInfo> build_table() {
  std::vector<OpInfo> table;
#define WICK_UNARY_ROW(name, api, rule, policy, grad, saved, node, attrs, onnx) \
  table.push_back(OpInfo{OpKey::name,                                           \
                         #name,                                                 \
                         "unary",                                               \
                         &typeid(UnaryKernel),                                  \
                         {"input"},                                             \
                         parse_attrs(attrs),                                    \
                         DTypeRule::rule,                                       \
                         AutocastPolicy::policy,                                \
                         WICK_GRAD_##grad(name) != nullptr,                     \
                         node,                                                  \
                         Saves::saved,                                          \
                         WICK_GRAD_##grad(name),                                \
                         reads::None,                                           \
                         reads::None,                                           \
                         nullptr,                                               \
                         BinaryCheck::NoCheck,                                  \
                         #api[0] == 'p',                                        \
                         onnx});
  WICK_UNARY_OPS(WICK_UNARY_ROW)
#undef WICK_UNARY_ROW
#define WICK_BINARY_ROW(name, api, rule, policy, row_check, grad, for_a, for_b, node, onnx) \
  table.push_back(OpInfo{OpKey::name,                                                       \
                         #name,                                                             \
                         "binary",                                                          \
                         &typeid(BinaryKernel),                                             \
                         {"input", "other"},                                                \
                         {},                                                                \
                         DTypeRule::rule,                                                   \
                         AutocastPolicy::policy,                                            \
                         WICK_GRAD_##grad(name) != nullptr,                                 \
                         node,                                                              \
                         Saves::Nothing,                                                    \
                         nullptr,                                                           \
                         reads::for_a,                                                      \
                         reads::for_b,                                                      \
                         WICK_GRAD_##grad(name),                                            \
                         BinaryCheck::row_check,                                            \
                         std::string(#api) == "plain",                                      \
                         onnx});
  WICK_BINARY_OPS(WICK_BINARY_ROW)
#undef WICK_BINARY_ROW
#define WICK_KERNEL_ROW(name, kernel, inputs, attrs, rule, policy, node, onnx)                     \
  table.push_back(OpInfo{OpKey::name, #name, #kernel, &typeid(kernel), split_list(inputs),         \
                         parse_attrs(attrs), DTypeRule::rule, AutocastPolicy::policy,              \
                         node[0] != '\0', node, Saves::Nothing, nullptr, reads::None, reads::None, \
                         nullptr, BinaryCheck::NoCheck, false, onnx});
  WICK_KERNEL_OPS(WICK_KERNEL_ROW)
#undef WICK_KERNEL_ROW
  for (size_t i = 0; i < table.size(); ++i) {
    check_state(static_cast<size_t>(table[i].key) == i, "op table", "row ", table[i].name,
                " is out of order");
  }
  return table;
}

// The names alone, as a constant array: op_name() is on every op's error path and in its
// argument lists, so it is a load, not a walk through the table.
#define WICK_OP_NAME(name, ...) #name,
constexpr const char* kOpNames[] = {WICK_UNARY_OPS(WICK_OP_NAME) WICK_BINARY_OPS(WICK_OP_NAME)
                                        WICK_KERNEL_OPS(WICK_OP_NAME)};
#undef WICK_OP_NAME
static_assert(sizeof(kOpNames) / sizeof(kOpNames[0]) == kNumOps);

}  // namespace

const char* op_name(OpKey op) { return kOpNames[static_cast<int>(op)]; }

const std::vector<OpInfo>& op_table() {
  static const std::vector<OpInfo>* table = new std::vector<OpInfo>(build_table());
  return *table;
}

const OpInfo& op_info(OpKey op) { return op_table()[static_cast<size_t>(op)]; }

const OpInfo* find_op(const std::string& name) {
  for (const OpInfo& info : op_table()) {
    if (name == info.name) return &info;
  }
  return nullptr;
}

const char* dtype_rule_name(DTypeRule rule) {
  switch (rule) {
    case DTypeRule::Numeric:
      return "numeric";
    case DTypeRule::Floating:
      return "floating";
    case DTypeRule::Bool:
      return "bool";
    case DTypeRule::Promote:
      return "promote";
    case DTypeRule::PromoteFloating:
      return "promote_floating";
    case DTypeRule::Compare:
      return "compare";
    case DTypeRule::SumLike:
      return "sum_like";
    case DTypeRule::Same:
      return "same";
    case DTypeRule::Any:
      break;
  }
  return "any";
}

const char* saves_name(Saves saves) {
  switch (saves) {
    case Saves::Input:
      return "input";
    case Saves::Output:
      return "output";
    case Saves::Nothing:
      break;
  }
  return "nothing";
}

}  // namespace wick
