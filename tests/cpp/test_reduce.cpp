// Reductions: sum, mean, max/min with indices, argmax/argmin, var/std, logsumexp.
// Expected values computed by hand (and with NumPy for var/std/logsumexp).
#include "tests/cpp/test_util.h"

namespace wick {
namespace {

using testing::expect_close;

// [[[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]], [[12, ...], ...]]
Tensor cube() { return arange(24).reshape({2, 3, 4}).to(kFloat64); }

TEST(Sum, AllAndDims) {
  Tensor x = cube();
  expect_close(x.sum(), {276}, {});
  expect_close(x.sum({0}), {12, 14, 16, 18, 20, 22, 24, 26, 28, 30, 32, 34}, {3, 4});
  expect_close(x.sum({1}), {12, 15, 18, 21, 48, 51, 54, 57}, {2, 4});
  expect_close(x.sum({2}), {6, 22, 38, 54, 70, 86}, {2, 3});
  expect_close(x.sum({0, 2}), {60, 92, 124}, {3});
  expect_close(x.sum({-1}, true), {6, 22, 38, 54, 70, 86}, {2, 3, 1});
  expect_close(x.sum({0, 1, 2}, true), {276}, {1, 1, 1});
  // A permuted (non-contiguous) input.
  expect_close(x.permute({2, 0, 1}).sum({2}), {12, 48, 15, 51, 18, 54, 21, 57}, {4, 2});
  EXPECT_EQ(tensor({1, 2, 3}).sum().dtype(), kInt64);
  EXPECT_EQ(tensor({true, true, false}).sum().item<int64_t>(), 2);
  expect_close(zeros({0, 3}).sum({0}), {0, 0, 0}, {3});
}

TEST(Sum, LargeReductionsKeepPrecision) {
  // 4M float32 values of 0.1: a float32 running sum would drift by percent; ours is exact to
  // float32 rounding of the result.
  Tensor x = full({1 << 22}, 0.1f);
  EXPECT_NEAR(x.sum().item<double>(), 0.1f * (1 << 22), 1.0);
  Tensor y = ones({3, 100000}, kFloat64);
  expect_close(y.sum({1}), {100000, 100000, 100000}, {3});
  expect_close(y.sum({0}).sum(), {300000}, {});
}

TEST(Mean, AllAndDims) {
  Tensor x = cube();
  expect_close(x.mean(), {11.5}, {});
  expect_close(x.mean({0, 2}), {7.5, 11.5, 15.5}, {3});
  expect_close(x.mean({1}, true), {4, 5, 6, 7, 16, 17, 18, 19}, {2, 1, 4});
  EXPECT_THROW(tensor({1, 2}).mean(), TypeError);
}

TEST(MaxMin, ValuesAndIndices) {
  Tensor x = tensor({{3., 7., 7.}, {-1., -5., 2.}});
  expect_close(x.max(), {7}, {});
  expect_close(x.min(), {-5}, {});
  auto [values, indices] = x.max(1);
  expect_close(values, {7, 2}, {2});
  EXPECT_EQ(indices.to_vector<int64_t>(), (std::vector<int64_t>{1, 2}));  // first of ties
  auto m = x.min(0, true);
  expect_close(m.values, {-1, -5, 2}, {1, 3});
  EXPECT_EQ(m.indices.to_vector<int64_t>(), (std::vector<int64_t>{1, 1, 1}));
  EXPECT_EQ(argmax(x).item<int64_t>(), 1);
  EXPECT_EQ(argmin(x).item<int64_t>(), 4);
  EXPECT_EQ(x.argmax(0).to_vector<int64_t>(), (std::vector<int64_t>{0, 0, 0}));
  EXPECT_EQ(x.t().argmin(1).to_vector<int64_t>(), (std::vector<int64_t>{1, 1, 1}));
  expect_close(amax(cube(), {0, 2}), {15, 19, 23}, {3});
  expect_close(tensor({4, 9, 2}).max(), {9}, {});
}

TEST(VarStd, CorrectionAndDims) {
  Tensor x = tensor({{1., 2., 3., 4.}, {2., 4., 6., 9.}}, kFloat64);
  // numpy: x.var(ddof=1) = 6.696428571428571; x.var(axis=1, ddof=1) = [1.6667, 8.9167]
  expect_close(x.var(), {6.696428571428571}, {}, 1e-12);
  expect_close(x.var({1}), {1.6666666666666667, 8.916666666666666}, {2}, 1e-12);
  expect_close(x.var({1}, 0), {1.25, 6.6875}, {2}, 1e-12);
  expect_close(x.std({0}),
               {0.7071067811865476, 1.4142135623730951, 2.1213203435596424, 3.5355339059327378},
               {4}, 1e-12);
  expect_close(x.var({1}, 1, true), {1.6666666666666667, 8.916666666666666}, {2, 1}, 1e-12);
}

TEST(LogSumExp, StableForLargeInputs) {
  Tensor x = tensor({{1., 2., 3.}, {1000., 1000., 1000.}}, kFloat64);
  // numpy: logaddexp.reduce([1, 2, 3]) = 3.40760596444438; 1000 + log(3) = 1001.0986122886682
  expect_close(x.logsumexp({1}), {3.40760596444438, 1001.0986122886682}, {2}, 1e-12);
  Tensor neg_inf = full({2}, -std::numeric_limits<double>::infinity(), kFloat64);
  expect_close(neg_inf.logsumexp({0}), {-std::numeric_limits<double>::infinity()}, {});
}

}  // namespace
}  // namespace wick
