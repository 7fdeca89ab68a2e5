// The scan and sort rows of the op table, from C++: cumsum, cumprod, prod, sort, topk,
// median; remainder, fmod, atan2, hypot, logaddexp; rounding; the attribute activations; the
// pointwise losses. Expected values by hand (PyTorch's agreement is tested from Python).
#include "nn/functional.h"
#include "tests/cpp/test_util.h"

namespace wick {
namespace {

using testing::expect_close;

TEST(Scan, CumsumAndCumprodAlongEachDim) {
  Tensor x = tensor({1.0, 2.0, 3.0, 4.0, 5.0, 6.0}).reshape({2, 3});
  expect_close(cumsum(x, 1), {1, 3, 6, 4, 9, 15}, {2, 3});
  expect_close(cumsum(x, 0), {1, 2, 3, 5, 7, 9}, {2, 3});
  expect_close(cumprod(x, 1), {1, 2, 6, 4, 20, 120}, {2, 3});
  expect_close(cumprod(x.t(), 0), {1, 4, 2, 20, 6, 120}, {3, 2});  // a transposed input
  EXPECT_EQ(cumsum(tensor({1, 2, 3}), 0).dtype(), kInt64);
  EXPECT_EQ(cumsum(tensor({true, true}), 0).dtype(), kInt64);
  expect_close(prod(x), {720}, {});
  expect_close(prod(x, 1, /*keepdim=*/true), {6, 120}, {2, 1});
  EXPECT_THROW(cumsum(x, 2), std::out_of_range);
}

TEST(Scan, GradientsOfCumsumAndCumprod) {
  Tensor x = tensor({2.0, 0.0, 3.0}).requires_grad_(true);
  cumsum(x, 0).sum().backward();
  expect_close(x.grad(), {3, 2, 1}, {3});
  Tensor y = tensor({2.0, 0.0, 3.0}).requires_grad_(true);
  prod(y).backward();  // d/dx_k of x0 x1 x2 with x1 = 0: only the zero's gradient survives
  expect_close(y.grad(), {0, 6, 0}, {3});
}

TEST(Sort, ValuesIndicesNanAndStability) {
  Tensor x = tensor({3.0, NAN, 1.0, 3.0, -1.0});
  ValuesIndices up = sort(x, 0);
  expect_close(up.values.narrow(0, 0, 4), {-1, 1, 3, 3}, {4});
  EXPECT_TRUE(std::isnan(up.values[4].item<double>()));
  std::vector<int64_t> order = {4, 2, 0, 3, 1};  // equal 3s keep their order
  for (int64_t i = 0; i < 5; ++i) EXPECT_EQ(up.indices[i].item<int64_t>(), order[i]);
  ValuesIndices down = sort(x, 0, /*descending=*/true);
  EXPECT_TRUE(std::isnan(down.values[0].item<double>()));
  EXPECT_EQ(down.indices[1].item<int64_t>(), 0);
  ValuesIndices top = topk(tensor({5.0, 1.0, 4.0, 2.0}), 2);
  expect_close(top.values, {5, 4}, {2});
  EXPECT_EQ(top.indices[1].item<int64_t>(), 2);
  EXPECT_THROW(topk(x, 6), std::out_of_range);
  expect_close(median(tensor({4.0, 1.0, 3.0, 2.0})), {2}, {});  // the lower median
}

TEST(Math, RemainderFmodAndFriends) {
  Tensor a = tensor({5.5, -5.5, 5.5, -5.5}), b = tensor({2.0, 2.0, -2.0, -2.0});
  expect_close(remainder(a, b), {1.5, 0.5, -0.5, -1.5}, {4});
  expect_close(fmod(a, b), {1.5, -1.5, 1.5, -1.5}, {4});
  EXPECT_THROW(remainder(tensor({1, 2}), tensor({1, 0})), std::runtime_error);
  expect_close(atan2(tensor({1.0}), tensor({-1.0})), {2.356194490192345}, {1});
  expect_close(hypot(tensor({3.0}), tensor({4.0})), {5}, {1});
  expect_close(logaddexp(tensor({1000.0}), tensor({1000.0})), {1000.6931471805599}, {1});
  expect_close(round(tensor({0.5, 1.5, 2.5, -0.5})), {0, 2, 2, -0}, {4});  // half to even
  expect_close(sign(tensor({-2.0, 0.0, 3.0})), {-1, 0, 1}, {3});
  EXPECT_TRUE(isnan(tensor({NAN}))[0].item<bool>());
}

TEST(Activations, AttributeActivationsAndLosses) {
  Tensor x = tensor({-2.0, 0.5, 7.0});
  expect_close(hardtanh(x, -1.0, 1.0), {-1, 0.5, 1}, {3});
  expect_close(relu6(x), {0, 0.5, 6}, {3});
  expect_close(elu(tensor({0.0, 1.0})), {0, 1}, {2});
  expect_close(softplus(tensor({30.0})), {30}, {1});  // above the threshold: x itself
  EXPECT_THROW(hardtanh(x, 1.0, -1.0), std::invalid_argument);
  namespace F = nn::functional;
  expect_close(F::huber_loss(tensor({0.0, 3.0}), tensor({0.5, 0.0})), {(0.125 + 2.5) / 2}, {});
  expect_close(F::smooth_l1_loss(tensor({0.0, 3.0}), tensor({0.5, 0.0}), F::Reduction::Sum, 1.0),
               {0.125 + 2.5}, {});
  expect_close(F::binary_cross_entropy(tensor({0.0}), tensor({1.0})), {100}, {});
  EXPECT_THROW(F::binary_cross_entropy(tensor({1.5}), tensor({1.0})), std::runtime_error);
}

}  // namespace
}  // namespace wick
