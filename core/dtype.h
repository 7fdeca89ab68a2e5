// Element types, their sizes and names, and PyTorch's type-promotion rules.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <ostream>
#include <type_traits>

#include "core/error.h"
#include "core/half.h"

namespace wick {

// Ordered from the narrowest category to the widest; promotion relies on the table, not the order.
enum class DType : uint8_t { Bool, UInt8, Int8, Int32, Int64, Float16, BFloat16, Float32, Float64 };
constexpr int kNumDTypes = 9;

constexpr DType kFloat32 = DType::Float32;
constexpr DType kFloat64 = DType::Float64;
constexpr DType kFloat16 = DType::Float16;
constexpr DType kBFloat16 = DType::BFloat16;
constexpr DType kInt64 = DType::Int64;
constexpr DType kInt32 = DType::Int32;
constexpr DType kUInt8 = DType::UInt8;
constexpr DType kInt8 = DType::Int8;  // torch.int8: quantized weights (core/ops/quantized.h)
constexpr DType kBool = DType::Bool;

size_t element_size(DType dtype);
const char* dtype_name(DType dtype);  // "float32", "int64", ...
DType dtype_from_name(const char* op, const std::string& name);
std::ostream& operator<<(std::ostream& os, DType dtype);

inline bool is_floating(DType d) {
  return d == kFloat32 || d == kFloat64 || d == kFloat16 || d == kBFloat16;
}
inline bool is_reduced_float(DType d) { return d == kFloat16 || d == kBFloat16; }
inline bool is_integral(DType d) { return d == kUInt8 || d == kInt8 || d == kInt32 || d == kInt64; }

// The dtype of a binary op's result: PyTorch's table (bool < integers < floats; float16 with
// bfloat16 gives float32; uint8 with int32 gives int32). uint8 with int8 gives int16 in PyTorch;
// wick has no int16, so it gives the next wider integer, int32.
DType promote_types(DType a, DType b);

// The dtype floating-point factories and Python floats use when no dtype is given (PyTorch's
// torch.get_default_dtype / set_default_dtype): float32 unless changed. Only float32 and float64
// are accepted, as in PyTorch; anything else throws TypeError. Process-wide, like PyTorch's.
DType get_default_dtype();
void set_default_dtype(DType dtype);

// Scalars that come from C++ or Python literals take part in promotion only by category: a float
// scalar with an integer tensor gives the default float dtype, an integer scalar with a bool tensor
// gives int64; otherwise the tensor's dtype wins (PyTorch: `int_tensor * 2.5` is float32).
enum class ScalarKind : uint8_t { Bool, Integer, Floating };
DType promote_with_scalar(DType tensor_dtype, ScalarKind scalar);

// C++ type for each dtype, and back.
template <class T>
struct dtype_of;
template <>
struct dtype_of<bool> {
  static constexpr DType value = kBool;
};
template <>
struct dtype_of<uint8_t> {
  static constexpr DType value = kUInt8;
};
template <>
struct dtype_of<int8_t> {
  static constexpr DType value = kInt8;
};
template <>
struct dtype_of<int32_t> {
  static constexpr DType value = kInt32;
};
template <>
struct dtype_of<int64_t> {
  static constexpr DType value = kInt64;
};
template <>
struct dtype_of<Half> {
  static constexpr DType value = kFloat16;
};
template <>
struct dtype_of<BFloat16> {
  static constexpr DType value = kBFloat16;
};
template <>
struct dtype_of<float> {
  static constexpr DType value = kFloat32;
};
template <>
struct dtype_of<double> {
  static constexpr DType value = kFloat64;
};

// Arithmetic on Half and BFloat16 happens in float; everything else computes in its own type.
template <class T>
using compute_t =
    std::conditional_t<std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>, float, T>;

// Reductions accumulate in a wider type: doubles for floats, int64 for integers.
template <class T>
using accumulate_t = std::conditional_t<std::is_floating_point_v<compute_t<T>>, double, int64_t>;

// Converts one element between dtypes the way a cast does: through the compute types, and to bool
// as "is not zero".
// The same on the host and in CUDA kernels, so a value converted on the GPU has the CPU's bits.
// A floating value as the integer type Int, saturating: NaN, infinities and values outside Int's
// range are undefined behaviour for a plain cast (UBSan; the checkpoint fuzzer found it). NaN
// becomes 0 and the rest clamp to Int's limits, which is what CUDA's conversion instructions do,
// so the CPU and the GPU agree.
template <class Int, class Float>
WICK_HOST_DEVICE inline Int saturating_cast(Float x) {
  // Int's limits as doubles: max + 1 is a power of two, exactly representable.
  constexpr double kMaxPlusOne = 2.0 * static_cast<double>(Int(1) << (sizeof(Int) * 8 - 2)) *
                                 (std::is_signed_v<Int> ? 1.0 : 2.0);
  constexpr double kMin = std::is_signed_v<Int> ? -kMaxPlusOne : 0.0;
  double d = static_cast<double>(x);
  if (d != d) return Int(0);
  if (d >= kMaxPlusOne) return std::numeric_limits<Int>::max();
  if (d <= kMin) return std::numeric_limits<Int>::min();
  return static_cast<Int>(d);
}

template <class To, class From>
WICK_HOST_DEVICE inline To convert(From x) {
  if constexpr (std::is_same_v<To, From>) {
    return x;
  } else if constexpr (std::is_same_v<To, bool>) {
    return static_cast<compute_t<From>>(x) != compute_t<From>(0);
  } else if constexpr (std::is_integral_v<To> && std::is_floating_point_v<compute_t<From>>) {
    return saturating_cast<To>(static_cast<compute_t<From>>(x));
  } else {
    return To(static_cast<compute_t<To>>(static_cast<compute_t<From>>(x)));
  }
}

template <class T>
struct TypeTag {
  using type = T;
};

// Calls fn(TypeTag<T>{}) with T the C++ type of `dtype`. The type-switch every kernel needs:
//   visit_dtype(t.dtype(), [&](auto tag) { using T = typename decltype(tag)::type; ... });
template <class Fn>
decltype(auto) visit_dtype(DType dtype, Fn&& fn) {
  switch (dtype) {
    case kBool:
      return fn(TypeTag<bool>{});
    case kUInt8:
      return fn(TypeTag<uint8_t>{});
    case kInt8:
      return fn(TypeTag<int8_t>{});
    case kInt32:
      return fn(TypeTag<int32_t>{});
    case kInt64:
      return fn(TypeTag<int64_t>{});
    case kFloat16:
      return fn(TypeTag<Half>{});
    case kBFloat16:
      return fn(TypeTag<BFloat16>{});
    case kFloat32:
      return fn(TypeTag<float>{});
    case kFloat64:
      return fn(TypeTag<double>{});
  }
  throw TypeError("[visit_dtype] unknown dtype");
}

// The same for floating dtypes only; `op` names the caller in the error for other dtypes.
template <class Fn>
decltype(auto) visit_floating(const char* op, DType dtype, Fn&& fn) {
  switch (dtype) {
    case kFloat16:
      return fn(TypeTag<Half>{});
    case kBFloat16:
      return fn(TypeTag<BFloat16>{});
    case kFloat32:
      return fn(TypeTag<float>{});
    case kFloat64:
      return fn(TypeTag<double>{});
    default:
      break;
  }
  throw TypeError(error_message(op, "expected a floating-point tensor; got ", dtype_name(dtype)));
}

}  // namespace wick
