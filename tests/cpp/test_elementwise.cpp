// Elementwise ops: values against scalar reference formulas, on contiguous, strided and broadcast
// inputs, in several dtypes.
#include <cmath>
#include <functional>

#include "tests/cpp/test_util.h"

namespace wick {
namespace {

using testing::expect_close;

const std::vector<double> kValues = {-2.5, -1.0, -0.3, 0.0, 0.2, 0.7, 1.0, 3.0};

std::vector<double> map_values(const std::vector<double>& xs,
                               const std::function<double(double)>& f) {
  std::vector<double> out;
  for (double x : xs) out.push_back(f(x));
  return out;
}

struct UnaryCase {
  const char* name;
  std::function<Tensor(const Tensor&)> op;
  std::function<double(double)> reference;
  bool positive_only;  // log, sqrt, rsqrt
};

std::vector<UnaryCase> unary_cases() {
  const double s2 = std::sqrt(2.0), k = std::sqrt(2.0 / M_PI);
  return {
      {"neg", [](const Tensor& x) { return -x; }, [](double x) { return -x; }, false},
      {"abs", [](const Tensor& x) { return abs(x); }, [](double x) { return std::fabs(x); }, false},
      {"exp", [](const Tensor& x) { return exp(x); }, [](double x) { return std::exp(x); }, false},
      {"log", [](const Tensor& x) { return log(x); }, [](double x) { return std::log(x); }, true},
      {"sqrt", [](const Tensor& x) { return sqrt(x); }, [](double x) { return std::sqrt(x); },
       true},
      {"rsqrt", [](const Tensor& x) { return rsqrt(x); }, [](double x) { return 1 / std::sqrt(x); },
       true},
      {"sin", [](const Tensor& x) { return sin(x); }, [](double x) { return std::sin(x); }, false},
      {"cos", [](const Tensor& x) { return cos(x); }, [](double x) { return std::cos(x); }, false},
      {"tanh", [](const Tensor& x) { return tanh(x); }, [](double x) { return std::tanh(x); },
       false},
      {"sigmoid", [](const Tensor& x) { return sigmoid(x); },
       [](double x) { return 1 / (1 + std::exp(-x)); }, false},
      {"relu", [](const Tensor& x) { return relu(x); }, [](double x) { return x > 0 ? x : 0; },
       false},
      {"gelu", [](const Tensor& x) { return gelu(x); },
       [s2](double x) { return 0.5 * x * (1 + std::erf(x / s2)); }, false},
      {"gelu_tanh", [](const Tensor& x) { return gelu(x, "tanh"); },
       [k](double x) { return 0.5 * x * (1 + std::tanh(k * (x + 0.044715 * x * x * x))); }, false},
      {"silu", [](const Tensor& x) { return silu(x); },
       [](double x) { return x / (1 + std::exp(-x)); }, false},
      {"leaky_relu", [](const Tensor& x) { return leaky_relu(x, 0.1); },
       [](double x) { return x > 0 ? x : 0.1 * x; }, false},
      {"clamp", [](const Tensor& x) { return clamp(x, -1.0, 0.5); },
       [](double x) { return std::min(std::max(x, -1.0), 0.5); }, false},
      {"pow", [](const Tensor& x) { return pow(x, 3); }, [](double x) { return x * x * x; }, false},
      {"square", [](const Tensor& x) { return pow(x, 2.0); }, [](double x) { return x * x; },
       false},
  };
}

TEST(Unary, MatchesReferenceInFloat32AndFloat64) {
  for (const UnaryCase& c : unary_cases()) {
    SCOPED_TRACE(c.name);
    std::vector<double> xs = kValues;
    if (c.positive_only) xs = map_values(xs, [](double x) { return std::fabs(x) + 0.1; });
    std::vector<double> expected = map_values(xs, c.reference);
    Shape shape{2, 4};
    expect_close(c.op(tensor(xs, shape, kFloat64)), expected, shape, 1e-12, 1e-12);
    expect_close(c.op(tensor(xs, shape, kFloat32)), expected, shape, 1e-6, 1e-6);
    expect_close(c.op(tensor(xs, shape, kBFloat16)), expected, shape, 2e-2, 2e-2);
    // Transposed (strided) input gives the transposed result.
    Tensor strided = tensor(xs, Shape{4, 2}, kFloat64).t();
    Tensor expected_t = tensor(expected, Shape{4, 2}, kFloat64).t();
    expect_close(c.op(strided), expected_t, 1e-12, 1e-12);
  }
}

TEST(Unary, IntegerInputsBecomeFloat) {
  Tensor x = tensor({0, 1, 2});
  EXPECT_EQ(exp(x).dtype(), kFloat32);
  expect_close(exp(x), {1, std::exp(1.0), std::exp(2.0)}, {3});
  EXPECT_EQ(abs(tensor({-3, 4})).dtype(), kInt64);
  expect_close(abs(tensor({-3, 4})), {3, 4}, {2});
  EXPECT_EQ(relu(tensor({-3, 4})).dtype(), kInt64);
}

TEST(Unary, NanPropagates) {
  double nan = std::nan("");
  Tensor x = tensor({nan, 1.0});
  EXPECT_TRUE(std::isnan(relu(x).to_vector<float>()[0]));
  EXPECT_TRUE(std::isnan(clamp(x, 0, 1).to_vector<float>()[0]));
  EXPECT_TRUE(std::isnan(maximum(x, tensor({0.0, 0.0})).to_vector<float>()[0]));
}

TEST(Binary, ArithmeticMatchesReference) {
  std::vector<double> a = {1, -2, 3.5, 4, 0.5, -6};
  std::vector<double> b = {2, 4, -1, 0.5, 3, 2};
  Shape s{2, 3};
  auto each = [&](std::function<double(double, double)> f) {
    std::vector<double> out;
    for (size_t i = 0; i < a.size(); ++i) out.push_back(f(a[i], b[i]));
    return out;
  };
  for (DType dtype : {kFloat32, kFloat64}) {
    Tensor ta = tensor(a, s, dtype), tb = tensor(b, s, dtype);
    expect_close(ta + tb, each([](double x, double y) { return x + y; }), s);
    expect_close(ta - tb, each([](double x, double y) { return x - y; }), s);
    expect_close(ta * tb, each([](double x, double y) { return x * y; }), s);
    expect_close(ta / tb, each([](double x, double y) { return x / y; }), s);
    expect_close(maximum(ta, tb), each([](double x, double y) { return std::max(x, y); }), s);
    expect_close(minimum(ta, tb), each([](double x, double y) { return std::min(x, y); }), s);
    expect_close(pow(abs(ta), tb),
                 each([](double x, double y) { return std::pow(std::fabs(x), y); }), s, 1e-5, 1e-6);
  }
  expect_close(tensor({7, -7}) * tensor({3, 3}), {21, -21}, {2});
  expect_close(tensor({7, 9}) / 2, {3.5, 4.5}, {2});
  expect_close(3.0 - tensor({1.0, 2.0}), {2, 1}, {2});
  expect_close(1.0 / tensor({4.0, 2.0}), {0.25, 0.5}, {2});
}

TEST(Binary, Broadcasting) {
  Tensor col = tensor({1., 2., 3.}).reshape({3, 1});
  Tensor row = tensor({10., 20.});
  expect_close(col + row, {11, 21, 12, 22, 13, 23}, {3, 2});
  expect_close(col * tensor({2.0}).reshape({}), {2, 4, 6}, {3, 1});
  // Broadcast with a 3-D tensor and a strided operand.
  Tensor cube = arange(24).reshape({2, 3, 4}).to(kFloat32);
  Tensor strided = arange(8).to(kFloat32).slice(0, 0, 8, 2);  // 0, 2, 4, 6
  Tensor sum = cube + strided;
  std::vector<double> expected;
  for (int i = 0; i < 24; ++i) expected.push_back(i + 2 * (i % 4));
  expect_close(sum, expected, {2, 3, 4});
}

TEST(Binary, LargeTensorsUseEveryThreadAndStayCorrect) {
  Tensor a = arange(300000).to(kFloat64);
  Tensor b = a.reshape({600, 500}).t().contiguous().reshape({-1});  // a permutation of a
  Tensor c = (a.reshape({600, 500}) + a.reshape({600, 500}).t().t()).sum();
  EXPECT_DOUBLE_EQ(c.item<double>(), 2.0 * (299999.0 * 300000.0 / 2));
  EXPECT_DOUBLE_EQ((b * 1.0).sum().item<double>(), 299999.0 * 300000.0 / 2);
}

TEST(Compare, AndLogic) {
  Tensor a = tensor({1., 2., 3.}), b = tensor({3., 2., 1.});
  expect_close(a == b, {0, 1, 0}, {3});
  expect_close(a != b, {1, 0, 1}, {3});
  expect_close(a < b, {1, 0, 0}, {3});
  expect_close(a <= b, {1, 1, 0}, {3});
  expect_close(a > b, {0, 0, 1}, {3});
  expect_close(a >= b, {0, 1, 1}, {3});
  expect_close(a > 1.5, {0, 1, 1}, {3});
  EXPECT_EQ((a < b).dtype(), kBool);
  expect_close(logical_and(a > 1, b > 1), {0, 1, 0}, {3});
  expect_close(logical_or(a > 2, b > 2), {1, 0, 1}, {3});
  expect_close(logical_not(a > 2), {1, 1, 0}, {3});
  expect_close(tensor({1, 2}) == tensor({1.0, 2.5}), {1, 0}, {2});  // compared in float32
}

TEST(Where, AndMaskedFill) {
  Tensor cond = tensor({true, false, true});
  expect_close(where(cond, tensor({1., 2., 3.}), tensor({-1., -2., -3.})), {1, -2, 3}, {3});
  expect_close(where(cond.reshape({3, 1}), tensor({1., 2.}), 0.0), {1, 2, 0, 0, 1, 2}, {3, 2});
  Tensor x = arange(6).reshape({2, 3}).to(kFloat32);
  expect_close(x.masked_fill(x > 3, -1.0), {0, 1, 2, 3, -1, -1}, {2, 3});
  expect_close(x.masked_fill(tensor({true, false, false}), 9.0), {9, 1, 2, 9, 4, 5}, {2, 3});
}

TEST(InPlace, UpdatesAndBumpsVersion) {
  Tensor x = ones({2, 3});
  uint64_t v = x.version();
  x.add_(tensor({1., 2., 3.}));
  expect_close(x, {2, 3, 4, 2, 3, 4}, {2, 3});
  x.mul_(2.0);
  expect_close(x, {4, 6, 8, 4, 6, 8}, {2, 3});
  x.sub_(ones({2, 3}));
  x.div_(2.0);
  expect_close(x, {1.5, 2.5, 3.5, 1.5, 2.5, 3.5}, {2, 3});
  x.t().select(0, 1).fill_(0.0);  // write through a strided view
  expect_close(x, {1.5, 0, 3.5, 1.5, 0, 3.5}, {2, 3});
  x.zero_();
  expect_close(x, {0, 0, 0, 0, 0, 0}, {2, 3});
  x.copy_(tensor({1, 2, 3}));  // broadcast and convert
  expect_close(x, {1, 2, 3, 1, 2, 3}, {2, 3});
  EXPECT_EQ(x.version(), v + 7);
  Tensor ints = tensor({1, 2});
  ints.add_(tensor({1, 1}));
  expect_close(ints, {2, 3}, {2});
}

TEST(Half, ArithmeticComputesInFloat) {
  Tensor a = tensor({1.0, 2.0, 3.0}, kFloat16);
  Tensor b = (a * 0.5 + 1.0);
  EXPECT_EQ(b.dtype(), kFloat16);
  expect_close(b, {1.5, 2.0, 2.5}, {3}, 0, 0);
  EXPECT_EQ((tensor({1.0}, kFloat16) + tensor({1.0}, kBFloat16)).dtype(), kFloat32);
}

}  // namespace
}  // namespace wick
