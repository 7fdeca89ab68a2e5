#include "core/dtype.h"

#include <atomic>
#include <string>

namespace wick {

namespace {

struct DTypeInfo {
  const char* name;
  size_t size;
};

constexpr DTypeInfo kInfo[kNumDTypes] = {
    {"bool", 1},    {"uint8", 1},    {"int8", 1},    {"int32", 4},   {"int64", 8},
    {"float16", 2}, {"bfloat16", 2}, {"float32", 4}, {"float64", 8},
};

// PyTorch's promotion table restricted to wick's dtypes. Rows and columns follow the enum order:
// b1 = bool, u8 = uint8, s8 = int8, i4 = int32, i8 = int64, f2 = float16, bf = bfloat16, f4, f8.
// uint8 with int8 is int16 in PyTorch; wick has no int16 and gives int32.
constexpr DType b1 = kBool, u8 = kUInt8, s8 = kInt8, i4 = kInt32, i8 = kInt64, f2 = kFloat16,
                bf = kBFloat16, f4 = kFloat32, f8 = kFloat64;
constexpr DType kPromote[kNumDTypes][kNumDTypes] = {
    /*        b1  u8  s8  i4  i8  f2  bf  f4  f8 */
    /* b1 */ {b1, u8, s8, i4, i8, f2, bf, f4, f8},
    /* u8 */ {u8, u8, i4, i4, i8, f2, bf, f4, f8},
    /* s8 */ {s8, i4, s8, i4, i8, f2, bf, f4, f8},
    /* i4 */ {i4, i4, i4, i4, i8, f2, bf, f4, f8},
    /* i8 */ {i8, i8, i8, i8, i8, f2, bf, f4, f8},
    /* f2 */ {f2, f2, f2, f2, f2, f2, f4, f4, f8},
    /* bf */ {bf, bf, bf, bf, bf, f4, bf, f4, f8},
    /* f4 */ {f4, f4, f4, f4, f4, f4, f4, f4, f8},
    /* f8 */ {f8, f8, f8, f8, f8, f8, f8, f8, f8},
};

}  // namespace

size_t element_size(DType dtype) { return kInfo[static_cast<int>(dtype)].size; }

const char* dtype_name(DType dtype) { return kInfo[static_cast<int>(dtype)].name; }

std::ostream& operator<<(std::ostream& os, DType dtype) { return os << dtype_name(dtype); }

DType dtype_from_name(const char* op, const std::string& name) {
  for (int i = 0; i < kNumDTypes; ++i) {
    if (name == kInfo[i].name) return static_cast<DType>(i);
  }
  if (name == "float") return kFloat32;
  if (name == "double") return kFloat64;
  if (name == "half") return kFloat16;
  if (name == "long") return kInt64;
  if (name == "int") return kInt32;
  throw TypeError(error_message(op, "unknown dtype '", name, "'"));
}

namespace {
// Atomic so that a set_default_dtype on one thread is seen whole by DataLoader workers and
// autograd threads; the setting itself is meant to happen once, at start-up.
std::atomic<DType> g_default_dtype{kFloat32};
}  // namespace

DType get_default_dtype() { return g_default_dtype.load(std::memory_order_relaxed); }

void set_default_dtype(DType dtype) {
  if (dtype != kFloat32 && dtype != kFloat64) {
    throw TypeError(error_message("set_default_dtype",
                                  "only floating-point types are supported as the default type; "
                                  "got ",
                                  dtype_name(dtype), " (float32 and float64 are accepted)"));
  }
  g_default_dtype.store(dtype, std::memory_order_relaxed);
}

DType promote_types(DType a, DType b) { return kPromote[static_cast<int>(a)][static_cast<int>(b)]; }

DType promote_with_scalar(DType tensor_dtype, ScalarKind scalar) {
  if (scalar == ScalarKind::Floating && !is_floating(tensor_dtype)) return get_default_dtype();
  if (scalar == ScalarKind::Integer && tensor_dtype == kBool) return kInt64;
  return tensor_dtype;
}

}  // namespace wick
