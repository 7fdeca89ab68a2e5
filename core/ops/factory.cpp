#include "core/ops/factory.h"

#include <cmath>

#include "core/backend.h"
#include "core/dispatch.h"
#include "core/ops.h"

namespace wick {

namespace {

Tensor finish(Tensor t, const TensorOptions& options) {
  if (options.requires_grad) t.requires_grad_(true);
  return t;
}

template <class T>
Tensor from_values(const T* values, int64_t count, const Shape& shape, DType default_dtype,
                   const TensorOptions& options) {
  check_value(numel(shape) == count, "tensor", "shape ", shape, " holds ", numel(shape),
              " elements but ", count, " values were given");
  Tensor host = empty(shape, TensorOptions(dtype_of<T>::value));
  std::copy(values, values + count, host.data<T>());
  return finish(host.to(options.device, options.dtype.value_or(default_dtype)), options);
}

}  // namespace

TensorOptions options_of(const Tensor& t) {
  return TensorOptions(t.dtype()).with_device(t.device());
}

Tensor empty(const Shape& shape, const TensorOptions& options) {
  DType dtype = options.dtype.value_or(get_default_dtype());
  size_t nbytes = checked_nbytes("empty", shape, element_size(dtype));
  // Note [allocating on the requested GPU]: the CUDA allocator serves the current device, so a
  // tensor for "cuda:N" is allocated with device N made current for the call. "cuda" and
  // "cuda:0" (the same Device) keep meaning the current device, which a DDP rank sets to its
  // own GPU (distributed/nccl_process_group.cpp).
  BackendDeviceGuard on_device(options.device);
  auto storage = std::make_shared<Storage>(nbytes, get_allocator(options.device.type));
  auto impl =
      std::make_shared<TensorImpl>(std::move(storage), 0, shape, contiguous_strides(shape), dtype);
  return finish(Tensor(std::move(impl)), options);
}

Tensor full(const Shape& shape, const Scalar& value, const TensorOptions& options) {
  TensorOptions o = options;
  if (!o.dtype) o.dtype = value.default_dtype();
  o.requires_grad = false;
  checked_nbytes("full", shape, element_size(*o.dtype));
  Tensor t = empty(shape, o);
  dispatch<FillKernel>(OpKey::fill, t.device(), t, value);
  return finish(t, options);
}

Tensor zeros(const Shape& shape, const TensorOptions& options) {
  TensorOptions o = options;
  o.dtype = options.dtype.value_or(get_default_dtype());
  return full(shape, 0, o);
}

Tensor ones(const Shape& shape, const TensorOptions& options) {
  TensorOptions o = options;
  o.dtype = options.dtype.value_or(get_default_dtype());
  return full(shape, 1, o);
}

Tensor scalar_tensor(const Scalar& value, const TensorOptions& options) {
  return full(Shape{}, value, options);
}

Tensor arange(const Scalar& end, const TensorOptions& options) {
  return arange(0, end, 1, options);
}

Tensor arange(const Scalar& start, const Scalar& end, const Scalar& step,
              const TensorOptions& options) {
  double s = start.to_double(), e = end.to_double(), d = step.to_double();
  check_value(d != 0, "arange", "step must be nonzero");
  check_value(std::isfinite(s) && std::isfinite(e), "arange", "start and end must be finite; got ",
              s, " and ", e);
  check_value((d > 0 && e >= s) || (d < 0 && e <= s), "arange", "upper bound and step sign are ",
              "inconsistent: start=", s, ", end=", e, ", step=", d);
  bool integral = !start.is_floating() && !end.is_floating() && !step.is_floating();
  DType dtype = options.dtype.value_or(integral ? kInt64 : get_default_dtype());
  // The count is computed in double; one that does not fit in int64 (or in memory, for which
  // empty() checks) is "too many elements", not a wrapped negative size.
  double count = std::ceil((e - s) / d);
  check_state(count < 9.2e18, "arange", "too many elements: start=", s, ", end=", e, ", step=", d,
              " give ", count, " elements (invalid size, possible overflow)");
  int64_t n = static_cast<int64_t>(count);
  checked_nbytes("arange", Shape{n}, element_size(dtype));
  TensorOptions o = options;
  o.dtype = dtype;
  o.requires_grad = false;
  Tensor t = empty(Shape{n}, o);
  dispatch<ArangeKernel>(OpKey::arange, t.device(), t, s, d);
  return finish(t, options);
}

Tensor linspace(double start, double end, int64_t steps, const TensorOptions& options) {
  check_value(steps >= 0, "linspace", "number of steps must be non-negative; got ", steps);
  TensorOptions o = options;
  o.dtype = options.dtype.value_or(get_default_dtype());
  o.requires_grad = false;
  checked_nbytes("linspace", Shape{steps}, element_size(*o.dtype));
  Tensor t = empty(Shape{steps}, o);
  double step = steps > 1 ? (end - start) / static_cast<double>(steps - 1) : 0.0;
  dispatch<ArangeKernel>(OpKey::arange, t.device(), t, start, step);
  return finish(t, options);
}

Tensor eye(int64_t n, int64_t m, const TensorOptions& options) {
  if (m < 0) m = n;
  check_value(n >= 0, "eye", "n must be non-negative; got ", n);
  checked_nbytes("eye", Shape{n, m}, element_size(options.dtype.value_or(get_default_dtype())));
  TensorOptions o = options;
  o.requires_grad = false;
  Tensor t = zeros(Shape{n, m}, o);
  // The diagonal is a strided view with stride m + 1; fill it in place.
  t.as_strided(Shape{std::min(n, m)}, Strides{m + 1}, 0).fill_(1);
  return finish(t, options);
}

Tensor rand(const Shape& shape, const TensorOptions& options, Generator& generator) {
  TensorOptions o = options;
  o.dtype = options.dtype.value_or(get_default_dtype());
  o.requires_grad = false;
  check_type(is_floating(*o.dtype), "rand", "expected a floating-point dtype; got ", *o.dtype);
  Tensor t = empty(shape, o);
  dispatch<RandomKernel>(OpKey::uniform, t.device(), t, 0.0, 1.0, generator.reserve(t.numel()));
  return finish(t, options);
}

Tensor randn(const Shape& shape, const TensorOptions& options, Generator& generator) {
  TensorOptions o = options;
  o.dtype = options.dtype.value_or(get_default_dtype());
  o.requires_grad = false;
  check_type(is_floating(*o.dtype), "randn", "expected a floating-point dtype; got ", *o.dtype);
  Tensor t = empty(shape, o);
  dispatch<RandomKernel>(OpKey::normal, t.device(), t, 0.0, 1.0, generator.reserve(t.numel()));
  return finish(t, options);
}

Tensor randint(int64_t low, int64_t high, const Shape& shape, const TensorOptions& options,
               Generator& generator) {
  check_value(low < high, "randint", "low must be less than high; got low=", low, ", high=", high);
  TensorOptions o = options;
  o.dtype = options.dtype.value_or(kInt64);
  o.requires_grad = false;
  Tensor t = empty(shape, o);
  dispatch<RandomKernel>(OpKey::uniform, t.device(), t, static_cast<double>(low),
                         static_cast<double>(high), generator.reserve(t.numel()));
  return finish(t, options);
}

Tensor empty_like(const Tensor& t, const TensorOptions& options) {
  return empty(t.shape(), options);
}
Tensor empty_like(const Tensor& t) { return empty(t.shape(), options_of(t)); }
Tensor zeros_like(const Tensor& t) { return zeros(t.shape(), options_of(t)); }
Tensor ones_like(const Tensor& t) { return ones(t.shape(), options_of(t)); }
Tensor full_like(const Tensor& t, const Scalar& value) {
  return full(t.shape(), value, options_of(t));
}
Tensor rand_like(const Tensor& t) { return rand(t.shape(), options_of(t)); }
Tensor randn_like(const Tensor& t) { return randn(t.shape(), options_of(t)); }
Tensor randint_like(const Tensor& t, int64_t low, int64_t high) {
  return randint(low, high, t.shape(), options_of(t));
}

template <class T>
Tensor tensor(const std::vector<T>& values, const Shape& shape, const TensorOptions& options) {
  return from_values(values.data(), static_cast<int64_t>(values.size()), shape, dtype_of<T>::value,
                     options);
}
template Tensor tensor(const std::vector<float>&, const Shape&, const TensorOptions&);
template Tensor tensor(const std::vector<double>&, const Shape&, const TensorOptions&);
template Tensor tensor(const std::vector<int64_t>&, const Shape&, const TensorOptions&);
template Tensor tensor(const std::vector<int32_t>&, const Shape&, const TensorOptions&);
template Tensor tensor(const std::vector<uint8_t>&, const Shape&, const TensorOptions&);
template Tensor tensor(const std::vector<int8_t>&, const Shape&, const TensorOptions&);

Tensor tensor(std::initializer_list<double> values, const TensorOptions& options) {
  return from_values(values.begin(), values.size(), Shape{static_cast<int64_t>(values.size())},
                     get_default_dtype(), options);
}

Tensor tensor(std::initializer_list<int> values, const TensorOptions& options) {
  std::vector<int64_t> wide(values.begin(), values.end());
  return from_values(wide.data(), wide.size(), Shape{static_cast<int64_t>(wide.size())}, kInt64,
                     options);
}

Tensor tensor(std::initializer_list<bool> values, const TensorOptions& options) {
  std::vector<uint8_t> bytes(values.begin(), values.end());
  TensorOptions o = options;
  o.dtype = options.dtype.value_or(kBool);
  return from_values(bytes.data(), bytes.size(), Shape{static_cast<int64_t>(bytes.size())}, kBool,
                     o);
}

Tensor tensor(std::initializer_list<std::initializer_list<double>> rows,
              const TensorOptions& options) {
  std::vector<double> flat;
  int64_t cols = rows.size() ? static_cast<int64_t>(rows.begin()->size()) : 0;
  for (const auto& row : rows) {
    check_value(static_cast<int64_t>(row.size()) == cols, "tensor",
                "rows have different lengths: ", cols, " and ", row.size());
    flat.insert(flat.end(), row.begin(), row.end());
  }
  return from_values(flat.data(), flat.size(), Shape{static_cast<int64_t>(rows.size()), cols},
                     get_default_dtype(), options);
}

}  // namespace wick
