// Creating tensors: empty, zeros, ones, full, arange, linspace, eye, rand, randn, randint, the
// *_like forms, and tensors from C++ values.
#pragma once

#include <initializer_list>
#include <optional>
#include <vector>

#include "core/generator.h"
#include "core/tensor.h"

namespace wick {

// Options for a new tensor. An unset dtype means the op's default (get_default_dtype(), float32
// unless changed, for most; PyTorch's inference from the values for full, arange and tensor).
struct TensorOptions {
  std::optional<DType> dtype;
  Device device;
  bool requires_grad = false;

  TensorOptions() = default;
  TensorOptions(DType d) : dtype(d) {}        // NOLINT: zeros({2}, kFloat64)
  TensorOptions(Device d) : device(d) {}      // NOLINT: zeros({2}, Device(kCUDA))
  TensorOptions(DeviceType d) : device(d) {}  // NOLINT
  TensorOptions& with_dtype(DType d) {
    dtype = d;
    return *this;
  }
  TensorOptions& with_device(Device d) {
    device = d;
    return *this;
  }
  TensorOptions& with_requires_grad(bool r = true) {
    requires_grad = r;
    return *this;
  }
};

// The options of an existing tensor (dtype and device), for the *_like functions.
TensorOptions options_of(const Tensor& t);

Tensor empty(const Shape& shape, const TensorOptions& options = {});
Tensor zeros(const Shape& shape, const TensorOptions& options = {});
Tensor ones(const Shape& shape, const TensorOptions& options = {});
Tensor full(const Shape& shape, const Scalar& value, const TensorOptions& options = {});
Tensor scalar_tensor(const Scalar& value, const TensorOptions& options = {});  // 0-d
// [0, end) or [start, end) in steps; int64 when every argument is an integer, else float32.
Tensor arange(const Scalar& end, const TensorOptions& options = {});
Tensor arange(const Scalar& start, const Scalar& end, const Scalar& step = 1,
              const TensorOptions& options = {});
Tensor linspace(double start, double end, int64_t steps, const TensorOptions& options = {});
Tensor eye(int64_t n, int64_t m = -1, const TensorOptions& options = {});
// Uniform in [0, 1), standard normal, and uniform integers in [low, high) (int64 by default).
Tensor rand(const Shape& shape, const TensorOptions& options = {},
            Generator& generator = default_generator());
Tensor randn(const Shape& shape, const TensorOptions& options = {},
             Generator& generator = default_generator());
Tensor randint(int64_t low, int64_t high, const Shape& shape, const TensorOptions& options = {},
               Generator& generator = default_generator());

Tensor empty_like(const Tensor& t, const TensorOptions& options);
Tensor empty_like(const Tensor& t);
Tensor zeros_like(const Tensor& t);
Tensor ones_like(const Tensor& t);
Tensor full_like(const Tensor& t, const Scalar& value);
Tensor rand_like(const Tensor& t);
Tensor randn_like(const Tensor& t);
Tensor randint_like(const Tensor& t, int64_t low, int64_t high);

// From C++ values (copied). The shape defaults to 1-D; its element count must match.
template <class T>
Tensor tensor(const std::vector<T>& values, const Shape& shape, const TensorOptions& options = {});
template <class T>
Tensor tensor(const std::vector<T>& values, const TensorOptions& options = {}) {
  return tensor(values, Shape{static_cast<int64_t>(values.size())}, options);
}
// tensor({1.0, 2.0}) is float32 and tensor({1, 2}) int64, as in PyTorch.
Tensor tensor(std::initializer_list<double> values, const TensorOptions& options = {});
Tensor tensor(std::initializer_list<int> values, const TensorOptions& options = {});
Tensor tensor(std::initializer_list<bool> values, const TensorOptions& options = {});
// Nested lists make 2-D tensors: tensor({{1., 2.}, {3., 4.}}).
Tensor tensor(std::initializer_list<std::initializer_list<double>> rows,
              const TensorOptions& options = {});

}  // namespace wick
