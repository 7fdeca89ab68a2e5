// Views share storage and only change metadata; joins and splits; contiguous and clone.
#include "tests/cpp/test_util.h"

namespace wick {
namespace {

using testing::expect_close;

Tensor grid() { return arange(6).reshape({2, 3}).to(kFloat32); }  // [[0, 1, 2], [3, 4, 5]]

TEST(Views, ShareStorage) {
  Tensor x = grid();
  for (const Tensor& v :
       {x.reshape({3, 2}), x.t(), x.permute({1, 0}), x.unsqueeze(0), x.narrow(1, 1, 2),
        x.select(0, 1), x.slice(1, 0, 3, 2), x.view({6}), x.flatten(), x.expand({4, 2, 3})}) {
    EXPECT_EQ(v.storage(), x.storage());
  }
  x.t().select(0, 2).fill_(9);  // writing through a view shows in the base
  expect_close(x, {0, 1, 9, 3, 4, 9}, {2, 3});
}

TEST(Views, Values) {
  Tensor x = grid();
  expect_close(x.t(), {0, 3, 1, 4, 2, 5}, {3, 2});
  expect_close(x.permute({1, 0}).reshape({6}), {0, 3, 1, 4, 2, 5}, {6});  // copies: not viewable
  EXPECT_NE(x.t().reshape({6}).storage(), x.storage());
  expect_close(x.reshape({-1, 2}), {0, 1, 2, 3, 4, 5}, {3, 2});
  expect_close(x.unsqueeze(1), {0, 1, 2, 3, 4, 5}, {2, 1, 3});
  expect_close(x.unsqueeze(-1).squeeze(), {0, 1, 2, 3, 4, 5}, {2, 3});
  expect_close(x.reshape({1, 2, 1, 3}).squeeze(2), {0, 1, 2, 3, 4, 5}, {1, 2, 3});
  expect_close(x.narrow(1, 1, 2), {1, 2, 4, 5}, {2, 2});
  expect_close(x.slice(1, 0, 3, 2), {0, 2, 3, 5}, {2, 2});
  expect_close(x.slice(1, -2, 100), {1, 2, 4, 5}, {2, 2});  // clamped like Python slices
  expect_close(x.select(1, -1), {2, 5}, {2});
  expect_close(x[1], {3, 4, 5}, {3});
  expect_close(tensor({1., 2.}).reshape({2, 1}).expand({2, 3}), {1, 1, 1, 2, 2, 2}, {2, 3});
  expect_close(tensor({1., 2.}).expand({2, -1}), {1, 2, 1, 2}, {2, 2});
  expect_close(x.as_strided({2, 2}, {1, 2}, 1), {1, 3, 2, 4}, {2, 2});
  expect_close(arange(24).reshape({2, 3, 4}).flatten(1), arange(24).reshape({2, 12}));
  expect_close(arange(24).reshape({2, 3, 4}).transpose(0, 2).contiguous().flatten(0, 1),
               arange(24).reshape({2, 3, 4}).permute({2, 1, 0}).reshape({12, 2}));
}

TEST(Views, ViewOfNonContiguousWhenLayoutAllows) {
  Tensor x = arange(24).reshape({2, 3, 4}).permute({1, 0, 2});  // (3, 2, 4), strides (4, 12, 1)
  Tensor v = x.view({3, 2, 2, 2});  // splitting the contiguous last dim works
  EXPECT_EQ(v.storage(), x.storage());
  expect_close(v.reshape({-1}), x.contiguous().reshape({-1}));
  EXPECT_THROW(x.view({6, 4}), std::invalid_argument);  // merging dims 0 and 1 does not
}

TEST(Contiguous, AndClone) {
  Tensor x = grid();
  EXPECT_TRUE(x.contiguous().is_same(x));
  Tensor t = x.t().contiguous();
  EXPECT_TRUE(t.is_contiguous());
  expect_close(t, {0, 3, 1, 4, 2, 5}, {3, 2});
  Tensor c = x.clone();
  EXPECT_NE(c.storage(), x.storage());
  c.fill_(1);
  expect_close(x, {0, 1, 2, 3, 4, 5}, {2, 3});
}

TEST(Join, CatStackSplitChunk) {
  Tensor a = grid(), b = grid() + 10;
  expect_close(cat({a, b}), {0, 1, 2, 3, 4, 5, 10, 11, 12, 13, 14, 15}, {4, 3});
  expect_close(cat({a, b}, 1), {0, 1, 2, 10, 11, 12, 3, 4, 5, 13, 14, 15}, {2, 6});
  expect_close(cat({a.t(), b.t()}, -1), cat({a, b}, 0).t());
  EXPECT_EQ(cat({tensor({1, 2}), tensor({1.5})}).dtype(), kFloat32);  // promoted
  expect_close(stack({tensor({1., 2.}), tensor({3., 4.})}), {1, 2, 3, 4}, {2, 2});
  expect_close(stack({tensor({1., 2.}), tensor({3., 4.})}, 1), {1, 3, 2, 4}, {2, 2});
  std::vector<Tensor> parts = arange(7).split(3);
  ASSERT_EQ(parts.size(), 3u);
  expect_close(parts[2], {6}, {1});
  std::vector<Tensor> chunks = arange(10).reshape({2, 5}).chunk(2, 1);
  ASSERT_EQ(chunks.size(), 2u);
  expect_close(chunks[0], {0, 1, 2, 5, 6, 7}, {2, 3});
  expect_close(chunks[1], {3, 4, 8, 9}, {2, 2});
}

}  // namespace
}  // namespace wick
