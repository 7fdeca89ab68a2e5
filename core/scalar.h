// Scalar: a number from C++ or Python code (fill values, `x * 0.5`), remembering whether it was a
// bool, an integer or a floating-point literal because type promotion depends on that.
#pragma once

#include <cstdint>
#include <ostream>
#include <type_traits>

#include "core/dtype.h"

namespace wick {

class Scalar {
 public:
  Scalar() : Scalar(int64_t{0}) {}
  template <class T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>
  Scalar(T v) {  // NOLINT: implicit so that `x + 1` and `full(shape, 2.5)` read naturally
    if constexpr (std::is_same_v<T, bool>) {
      kind_ = ScalarKind::Bool;
      i_ = v;
      d_ = v;
    } else if constexpr (std::is_integral_v<T>) {
      kind_ = ScalarKind::Integer;
      i_ = static_cast<int64_t>(v);
      d_ = static_cast<double>(v);
    } else {
      kind_ = ScalarKind::Floating;
      d_ = static_cast<double>(v);
      i_ = saturating_cast<int64_t>(d_);  // NaN, infinities and huge values are UB for a cast
    }
  }

  ScalarKind kind() const { return kind_; }
  bool is_floating() const { return kind_ == ScalarKind::Floating; }
  double to_double() const { return d_; }
  int64_t to_int() const { return i_; }

  // The value as the C++ type T (integers are taken exactly, not through a double).
  template <class T>
  T to() const {
    if constexpr (std::is_same_v<T, bool>) {
      return kind_ == ScalarKind::Floating ? d_ != 0.0 : i_ != 0;
    } else if constexpr (std::is_integral_v<T>) {
      return kind_ == ScalarKind::Floating ? saturating_cast<T>(d_) : static_cast<T>(i_);
    } else {
      return static_cast<T>(kind_ == ScalarKind::Floating ? d_ : static_cast<double>(i_));
    }
  }

  // The dtype a tensor made from this scalar alone would have (PyTorch: the default float
  // dtype, int64 or bool).
  DType default_dtype() const {
    return kind_ == ScalarKind::Floating ? get_default_dtype()
                                         : (kind_ == ScalarKind::Integer ? kInt64 : kBool);
  }

 private:
  double d_ = 0;
  int64_t i_ = 0;
  ScalarKind kind_ = ScalarKind::Integer;
};

inline std::ostream& operator<<(std::ostream& os, const Scalar& s) {
  if (s.is_floating()) return os << s.to_double();
  if (s.kind() == ScalarKind::Bool) return os << (s.to_int() ? "True" : "False");
  return os << s.to_int();
}

}  // namespace wick
