// The composite ops from C++ (core/ops/composite_*.h): values against hand-computed results,
// gradcheck and gradgradcheck on contiguous and non-contiguous inputs, seeded random ops and the
// errors of bad input. tests/python/test_composites.py compares them with PyTorch in depth.
#include <algorithm>
#include <functional>
#include <numeric>
#include <vector>

#include "tests/cpp/test_util.h"

namespace wick {
namespace {

using testing::expect_close;
using testing::expect_error;
using testing::input;
using testing::noncontiguous_input;

Tensor matrix(int64_t n, int64_t m) { return arange(n * m, kFloat64).reshape(Shape{n, m}); }

TEST(Composites, TrilTriuFlipRoll) {
  Tensor x = matrix(3, 3);
  expect_close(tril(x), {0, 0, 0, 3, 4, 0, 6, 7, 8}, Shape{3, 3});
  expect_close(triu(x, 1), {0, 1, 2, 0, 0, 5, 0, 0, 0}, Shape{3, 3});
  expect_close(flip(matrix(2, 3), {1}), {2, 1, 0, 5, 4, 3}, Shape{2, 3});
  expect_close(flip(matrix(2, 3), {0, 1}), {5, 4, 3, 2, 1, 0}, Shape{2, 3});
  expect_close(roll(matrix(2, 3), {1}, {1}), {2, 0, 1, 5, 3, 4}, Shape{2, 3});
  expect_close(roll(matrix(2, 3), {-1}), {1, 2, 3, 4, 5, 0}, Shape{2, 3});
}

TEST(Composites, TileRepeatInterleaveTakeMovedim) {
  expect_close(tile(tensor({1.0, 2.0}), {2, 2}), {1, 2, 1, 2, 1, 2, 1, 2}, Shape{2, 4});
  expect_close(repeat_interleave(tensor({1.0, 2.0}), 2), {1, 1, 2, 2}, Shape{4});
  expect_close(repeat_interleave(tensor({1.0, 2.0}), tensor({0, 3})), {2, 2, 2}, Shape{3});
  expect_close(take(matrix(2, 3), tensor({0, 5, -2})), {0, 5, 4}, Shape{3});
  EXPECT_EQ(movedim(zeros(Shape{2, 3, 4}), {0}, {2}).shape(), (Shape{3, 4, 2}));
  EXPECT_EQ(unflatten(zeros(Shape{2, 12}), 1, Shape{3, -1}).shape(), (Shape{2, 3, 4}));
}

TEST(Composites, DiagonalTraceDiag) {
  Tensor x = matrix(3, 4);
  expect_close(diagonal(x), {0, 5, 10}, Shape{3});
  expect_close(diagonal(x, 1), {1, 6, 11}, Shape{3});
  expect_close(diagonal(x, -1), {4, 9}, Shape{2});
  expect_close(diagonal(x.t(), 1), {4, 9}, Shape{2});
  EXPECT_TRUE(diagonal(x).storage() == x.storage());  // a view
  expect_close(trace(x), {15}, Shape{});
  expect_close(diag(tensor({1.0, 2.0}), 1), {0, 1, 0, 0, 0, 2, 0, 0, 0}, Shape{3, 3});
}

TEST(Composites, ProductsAndEinsum) {
  Tensor a = matrix(2, 3), b = matrix(3, 2);
  expect_close(dot(tensor({1.0, 2.0}), tensor({3.0, 4.0})), {11}, Shape{});
  expect_close(outer(tensor({1.0, 2.0}), tensor({3.0, 4.0})), {3, 4, 6, 8}, Shape{2, 2});
  expect_close(addmm(ones(Shape{2, 2}, kFloat64), a, b, 2, 0.5), mm(a, b) * 0.5 + 2.0);
  expect_close(einsum("ij,jk->ik", {a, b}), mm(a, b));
  expect_close(einsum("ij,jk", {a, b}), mm(a, b));
  expect_close(einsum("ii", {matrix(3, 3)}), {12}, Shape{});
  expect_close(einsum("...ij->...ji", {a}), a.t());
  expect_close(tensordot(a, b, 1), mm(a, b));
  expect_close(kron(tensor({1.0, 2.0}), tensor({1.0, 10.0})), {1, 10, 2, 20}, Shape{4});
  expect_close(cross(tensor({1.0, 0.0, 0.0}), tensor({0.0, 1.0, 0.0})), {0, 0, 1}, Shape{3});
  expect_close(cdist(tensor({{0.0, 0.0}}), tensor({{3.0, 4.0}})), {5}, Shape{1, 1});
}

TEST(Composites, GradcheckAndGradgradcheck) {
  using Fn = std::function<Tensor(const TensorList&)>;
  struct Case {
    const char* name;
    Fn fn;
    std::vector<Shape> shapes;
  };
  std::vector<Case> cases = {
      {"tril", [](const TensorList& x) { return tril(x[0], -1); }, {Shape{3, 4}}},
      {"flip",
       [](const TensorList& x) {
         return flip(x[0], {0, 1});
       },
       {Shape{3, 2}}},
      {"roll", [](const TensorList& x) { return roll(x[0], {2}, {1}); }, {Shape{2, 3}}},
      {"diagonal", [](const TensorList& x) { return diagonal(x[0], 1); }, {Shape{3, 4}}},
      {"diag", [](const TensorList& x) { return diag(x[0], -1); }, {Shape{3}}},
      {"einsum",
       [](const TensorList& x) {
         return einsum("bij,bjk->bik", {x[0], x[1]});
       },
       {Shape{2, 2, 3}, Shape{2, 3, 2}}},
      {"baddbmm",
       [](const TensorList& x) { return baddbmm(x[0], x[1], x[2], 0.5, 2); },
       {Shape{2, 1, 2}, Shape{2, 2, 3}, Shape{2, 3, 2}}},
      {"cross",
       [](const TensorList& x) { return cross(x[0], x[1], 1); },
       {Shape{2, 3}, Shape{2, 3}}},
      {"cdist",
       [](const TensorList& x) { return cdist(x[0], x[1], 3.0); },
       {Shape{3, 2}, Shape{2, 2}}},
      {"lerp",
       [](const TensorList& x) { return lerp(x[0], x[1], x[2]); },
       {Shape{2, 3}, Shape{2, 3}, Shape{2, 3}}},
      {"scatter",
       [](const TensorList& x) {
         return scatter(x[0], 1, tensor(std::vector<int64_t>{0, 2}, Shape{1, 2}), x[1]);
       },
       {Shape{2, 3}, Shape{1, 2}}},
  };
  for (const Case& c : cases) {
    for (bool contiguous : {true, false}) {
      TensorList inputs;
      uint64_t seed = 1;
      for (const Shape& s : c.shapes) {
        inputs.push_back(contiguous ? input(s, seed) : noncontiguous_input(s, seed));
        ++seed;
      }
      SCOPED_TRACE(std::string(c.name) + (contiguous ? " contiguous" : " non-contiguous"));
      EXPECT_TRUE(gradcheck(c.fn, inputs));
      EXPECT_TRUE(gradgradcheck(c.fn, inputs));
    }
  }
}

TEST(Composites, CountingAndSearching) {
  Tensor x = tensor({0, 3, 3, 1});
  expect_close(bincount(x), {1, 1, 0, 2}, Shape{4});
  expect_close(count_nonzero(x), {3}, Shape{});
  expect_close(bucketize(tensor({0.5, 1.0, 2.5}), tensor({1.0, 2.0})), {0, 0, 2}, Shape{3});
  expect_close(searchsorted(tensor({1.0, 2.0}), tensor({1.0}), false, true), {1}, Shape{1});
  expect_close(histc(tensor({0.0, 0.5, 1.0, 2.0}), 2, 0, 1), {1, 2}, Shape{2});
  auto [values, inverse, counts] = unique(tensor({3, 1, 3}), true, true, true);
  expect_close(values, {1, 3}, Shape{2});
  expect_close(inverse, {1, 0, 1}, Shape{3});
  expect_close(counts, {1, 2}, Shape{2});
  EXPECT_TRUE(isclose(tensor({1.0}), tensor({1.0 + 1e-9})).item<bool>());
}

TEST(Composites, RandomOpsAreSeededPermutationsAndSamples) {
  Generator g1(5), g2(5);
  std::vector<int64_t> p = randperm(100, {}, g1).to_vector<int64_t>();
  EXPECT_EQ(p, randperm(100, {}, g2).to_vector<int64_t>());
  std::vector<int64_t> sorted = p;
  std::sort(sorted.begin(), sorted.end());
  std::vector<int64_t> expected(100);
  std::iota(expected.begin(), expected.end(), 0);
  EXPECT_EQ(sorted, expected);
  Tensor draws = multinomial(tensor({0.0, 1.0, 0.0}), 50, true, g1);
  EXPECT_EQ(draws.to_vector<int64_t>(), std::vector<int64_t>(50, 1));
  Tensor s = normal(3.0, 2.0, Shape{20000}, kFloat64, g1);
  EXPECT_NEAR(mean(s).item<double>(), 3.0, 0.1);
  EXPECT_NEAR(wick::std(s).item<double>(), 2.0, 0.1);
}

TEST(Composites, BadInputsRaisePyTorchsTypes) {
  expect_error<std::out_of_range>([] { tril(ones(Shape{3})); }, "[tril]");
  expect_error<std::runtime_error>([] { einsum("ij,jk", {ones(Shape{2, 3})}); }, "fewer operands");
  expect_error<std::runtime_error>(
      [] {
        einsum("ij,jk", {ones(Shape{2, 3}), ones(Shape{4, 5})});
      },
      "subscript j has size 4");
  expect_error<std::runtime_error>(
      [] {
        cross(ones(Shape{3, 4}), ones(Shape{3, 4}), 1);
      },
      "must have length 3. Got 4 and 4");
  expect_error<std::runtime_error>([] { bincount(tensor({1, -2})); }, "-2");
  expect_error<std::runtime_error>([] { multinomial(tensor({-1.0, 2.0}), 1); }, "-1");
  expect_error<std::runtime_error>(
      [] {
        multinomial(tensor({1.0, 2.0}), 3);
      },
      "without replacement");
  expect_error<std::runtime_error>(
      [] {
        searchsorted(ones(Shape{2, 3}), ones(Shape{3, 1}));
      },
      "(2, 3)");
}

}  // namespace
}  // namespace wick
