// Integer division at the kernel level: the CPU kernels of the IntDivisor rows (remainder, fmod,
// div_floor, div_trunc) raise ZeroDivisionError themselves, before writing, when called without
// their front function (as a compiled graph's replay calls them), and the element functors never
// divide by zero or overflow (Note [integer division] in core/ops/scalar_math.h).
#include <cstdint>
#include <limits>

#include "core/dispatch.h"
#include "core/ops/scalar_math.h"
#include "tests/cpp/test_util.h"

namespace wick {
namespace {

using testing::expect_error;

const OpKey kDivisionOps[] = {OpKey::remainder, OpKey::fmod, OpKey::div_floor, OpKey::div_trunc};

TEST(IntegerDivision, KernelRaisesBeforeWritingEvenInPlace) {
  for (OpKey op : kDivisionOps) {
    for (DType dtype : {kUInt8, kInt8, kInt32, kInt64}) {
      Tensor a = tensor({50, 60, 70, 80}).to(dtype);
      Tensor b = tensor({3, 4, 0, 5}).to(dtype);
      // out aliases a: a kernel that raised halfway would leave 50 // 3 and 60 // 4 behind.
      expect_error<std::runtime_error>(
          [&] { dispatch<BinaryKernel>(op, kCPU, a, b, a); },
          std::string("[") + op_name(op) + "] ZeroDivisionError: integer division by zero");
      EXPECT_EQ(a.to(kInt64).to_vector<int64_t>(), (std::vector<int64_t>{50, 60, 70, 80}))
          << op_name(op) << " " << dtype;
      // A zero reached only through broadcasting, and a 0-d zero (a number operand).
      Tensor out = empty({2, 4}, TensorOptions(dtype));
      expect_error<std::runtime_error>(
          [&] {
            dispatch<BinaryKernel>(op, kCPU, a, tensor({1, 0}).to(dtype).reshape({2, 1}), out);
          },
          "ZeroDivisionError");
      expect_error<std::runtime_error>(
          [&] { dispatch<BinaryKernel>(op, kCPU, a, scalar_tensor(0, TensorOptions(dtype)), a); },
          "ZeroDivisionError");
    }
  }
}

TEST(IntegerDivision, FrontFunctionsRaiseAndFloatsDoNot) {
  Tensor a = tensor({1, 2}), zero = tensor({0, 1});
  expect_error<std::runtime_error>([&] { div_floor(a, zero); }, "[div_floor] ZeroDivisionError");
  expect_error<std::runtime_error>([&] { div(a, zero, "trunc"); }, "[div_trunc] ZeroDivisionError");
  expect_error<std::runtime_error>([&] { remainder(a, 0); }, "[remainder] ZeroDivisionError");
  expect_error<std::runtime_error>([&] { fmod(a, zero); }, "[fmod] ZeroDivisionError");
  expect_error<std::invalid_argument>([&] { div(a, zero, "round"); }, "rounding_mode");
  // Empty output: nothing is divided, nothing raises (PyTorch agrees).
  EXPECT_EQ(floor_divide(zeros({0, 2}, TensorOptions(kInt64)), zero).numel(), 0);
  // Floating point divides by zero the IEEE way.
  std::vector<double> q = floor_divide(tensor({1.0, -1.0}), 0.0).to_vector<double>();
  EXPECT_EQ(q, (std::vector<double>{INFINITY, -INFINITY}));
  EXPECT_TRUE(std::isnan(remainder(tensor({1.0}), 0.0).item<double>()));
}

TEST(IntegerDivision, FloorAndTruncRoundTheirWays) {
  Tensor a = tensor({7, -7, 7, -7}), b = tensor({2, 2, -2, -2});
  EXPECT_EQ(floor_divide(a, b).to_vector<int64_t>(), (std::vector<int64_t>{3, -4, -4, 3}));
  EXPECT_EQ(div(a, b, "trunc").to_vector<int64_t>(), (std::vector<int64_t>{3, -3, -3, 3}));
  EXPECT_EQ(remainder(a, b).to_vector<int64_t>(), (std::vector<int64_t>{1, 1, -1, -1}));
  EXPECT_EQ(fmod(a, b).to_vector<int64_t>(), (std::vector<int64_t>{1, -1, 1, -1}));
  EXPECT_EQ(div(a, 2, "floor").to_vector<int64_t>(), (std::vector<int64_t>{3, -4, 3, -4}));
  EXPECT_EQ(div(a.to(kFloat32), b, "").dtype(), kFloat32);  // "" is true division
}

template <class T>
void expect_wraps() {
  constexpr T low = std::numeric_limits<T>::min();
  EXPECT_EQ(scalar::div_floor_fn()(low, T(-1)), low);
  EXPECT_EQ(scalar::div_trunc_fn()(low, T(-1)), low);
  EXPECT_EQ(scalar::remainder_fn()(low, T(-1)), T(0));
  EXPECT_EQ(scalar::fmod_fn()(low, T(-1)), T(0));
  EXPECT_EQ(scalar::div_floor_fn()(T(7), T(-1)), T(-7));
  // A zero divisor gives 0: only a CUDA kernel (which cannot raise) ever returns it.
  EXPECT_EQ(scalar::div_floor_fn()(T(7), T(0)), T(0));
  EXPECT_EQ(scalar::div_trunc_fn()(T(7), T(0)), T(0));
  EXPECT_EQ(scalar::remainder_fn()(T(7), T(0)), T(0));
  EXPECT_EQ(scalar::fmod_fn()(T(7), T(0)), T(0));
}

TEST(IntegerDivision, FunctorsWrapMinByMinusOneAndNeverTrap) {
  expect_wraps<int8_t>();
  expect_wraps<int32_t>();
  expect_wraps<int64_t>();
  EXPECT_EQ(scalar::div_floor_fn()(uint8_t(200), uint8_t(0)), uint8_t(0));
  constexpr int64_t low = std::numeric_limits<int64_t>::min();
  Tensor lows = full({2}, Scalar(low), TensorOptions(kInt64));
  EXPECT_EQ(floor_divide(lows, tensor({-1, 1})).to_vector<int64_t>(),
            (std::vector<int64_t>{low, low}));
  EXPECT_EQ(remainder(lows, -1).to_vector<int64_t>(), (std::vector<int64_t>{0, 0}));
}

TEST(IntegerDivision, FloatFloorIsExact) {
  // 1 / 0.1 rounds to 10 in float64; the floor of the exact quotient is 9 (Python: 1 // 0.1).
  EXPECT_EQ(scalar::div_floor_fn()(1.0, 0.1), 9.0);
  EXPECT_EQ(scalar::div_floor_fn()(-7.5, 2.0), -4.0);
  EXPECT_TRUE(std::signbit(scalar::div_floor_fn()(-0.0, 1.0)));
  EXPECT_EQ(scalar::div_floor_fn()(-5.5, double(INFINITY)), -1.0);
}

}  // namespace
}  // namespace wick
