// Index ops, one_hot, and softmax / log_softmax.
#include <cmath>

#include "tests/cpp/test_util.h"

namespace wick {
namespace {

using testing::expect_close;

TEST(Index, IndexSelect) {
  Tensor x = arange(12).reshape({3, 4}).to(kFloat32);
  expect_close(x.index_select(0, tensor({2, 0, 2})), {8, 9, 10, 11, 0, 1, 2, 3, 8, 9, 10, 11},
               {3, 4});
  expect_close(x.index_select(1, tensor({3, 3})), {3, 3, 7, 7, 11, 11}, {3, 2});
  // Negative indices are out of range here, as in PyTorch (Note [index bounds]).
  EXPECT_THROW(x.index_select(1, tensor({-1})), std::out_of_range);
  expect_close(x.t().index_select(0, tensor({1})), {1, 5, 9}, {1, 3});
}

TEST(Index, GatherAndScatterAdd) {
  Tensor x = tensor({{1., 2.}, {3., 4.}});
  // torch.gather(x, 1, [[0, 0], [1, 0]]) = [[1, 1], [4, 3]]
  expect_close(x.gather(1, tensor({0, 0, 1, 0}).reshape({2, 2})), {1, 1, 4, 3}, {2, 2});
  expect_close(x.t().gather(0, tensor({1, 0}).reshape({1, 2})), {2, 3}, {1, 2});
  // torch.zeros(3, 2).scatter_add(0, [[0, 1], [0, 2]], [[1, 2], [3, 4]]) = [[4, 0], [0, 2], [0, 4]]
  Tensor out = zeros({3, 2}).scatter_add(0, tensor({0, 1, 0, 2}).reshape({2, 2}),
                                         tensor({{1., 2.}, {3., 4.}}));
  expect_close(out, {4, 0, 0, 2, 0, 4}, {3, 2});
  // Repeated indices add up (the cross-entropy and embedding backward rely on it).
  Tensor counts = zeros({3}).scatter_add(0, tensor({1, 1, 1, 2}), ones({4}));
  expect_close(counts, {0, 3, 1}, {3});
}

TEST(Index, OneHot) {
  Tensor h = one_hot(tensor({0, 2, 1}), 4);
  EXPECT_EQ(h.dtype(), kInt64);
  expect_close(h, {1, 0, 0, 0, 0, 0, 1, 0, 0, 1, 0, 0}, {3, 4});
  EXPECT_EQ(one_hot(tensor({3, 1})).shape(), (Shape{2, 4}));
}

TEST(Softmax, MatchesReferenceAndIsStable) {
  Tensor x = tensor({{1., 2., 3.}, {1000., 1001., 1002.}}, kFloat64);
  double e1 = std::exp(-2.0), e2 = std::exp(-1.0), z = e1 + e2 + 1;
  std::vector<double> row = {e1 / z, e2 / z, 1 / z};
  expect_close(x.softmax(1), {row[0], row[1], row[2], row[0], row[1], row[2]}, {2, 3}, 1e-12);
  std::vector<double> log_row = {std::log(row[0]), std::log(row[1]), std::log(row[2])};
  expect_close(x.log_softmax(-1),
               {log_row[0], log_row[1], log_row[2], log_row[0], log_row[1], log_row[2]}, {2, 3},
               1e-12);
  // Along dim 0 of a transposed input.
  expect_close(x.t().softmax(0), x.softmax(1).t(), 1e-12);
  // Rows sum to one; float32 too.
  Tensor y = randn({5, 7}).softmax(1).sum({1});
  expect_close(y, {1, 1, 1, 1, 1}, {5}, 1e-6);
  EXPECT_EQ(tensor({1, 2}).softmax(0).dtype(), kFloat32);
}

}  // namespace
}  // namespace wick
