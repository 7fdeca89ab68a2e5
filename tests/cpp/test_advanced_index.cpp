// Advanced indexing (core/ops/advanced_index.h): values against hand-computed NumPy results,
// the placement rule for the index dims, errors, and gradcheck of index and index_put.
#include <vector>

#include "tests/cpp/test_util.h"

namespace wick {
namespace {

using testing::expect_close;
using testing::expect_error;
using testing::input;

Tensor arange_f(const Shape& shape) {
  return arange(numel(shape), TensorOptions(kFloat32)).reshape(shape);
}

Tensor ints(std::vector<int64_t> values, const Shape& shape) {
  return tensor(values, shape, TensorOptions(kInt64));
}

TEST(AdvancedIndex, Nonzero) {
  Tensor x = tensor({{0., 1.}, {2., 0.}});
  Tensor nz = nonzero(x);
  EXPECT_EQ(nz.shape(), (Shape{2, 2}));
  EXPECT_EQ(nz.to_vector<int64_t>(), (std::vector<int64_t>{0, 1, 1, 0}));
  EXPECT_EQ(nonzero(zeros({3})).shape(), (Shape{0, 1}));
}

TEST(AdvancedIndex, IntegerIndexOneDim) {
  Tensor x = arange_f({4, 3});
  Tensor y = index(x, {ints({3, 0, -1}, {3})});  // negative positions wrap
  expect_close(y, {9, 10, 11, 0, 1, 2, 9, 10, 11}, {3, 3});
  // An index on the middle dim keeps the index dims in place: x[:, idx] with idx [2, 2].
  Tensor z = index(arange_f({2, 3, 2}), {Tensor(), ints({0, 2, 1, 1}, {2, 2})});
  EXPECT_EQ(z.shape(), (Shape{2, 2, 2, 2}));
  expect_close(z.select(0, 1).select(0, 0), {6, 7, 10, 11}, {2, 2});
}

TEST(AdvancedIndex, BroadcastAndPlacement) {
  Tensor x = arange_f({3, 4, 5});
  // Adjacent indexed dims 1 and 2: the index shape [2] replaces them in place.
  Tensor a = index(x, {Tensor(), ints({0, 3}, {2}), ints({1, 4}, {2})});
  EXPECT_EQ(a.shape(), (Shape{3, 2}));
  expect_close(a.select(0, 2), {41, 59}, {2});
  // Non-adjacent dims 0 and 2: the index shape goes first.
  Tensor b = index(x, {ints({0, 2}, {2}), Tensor(), ints({1, 1}, {2})});
  EXPECT_EQ(b.shape(), (Shape{2, 4}));
  expect_close(b.select(1, 3), {16, 56}, {2});
  // Index tensors broadcast: [2, 1] with [3] gives [2, 3].
  Tensor c = index(x.select(2, 0), {ints({0, 2}, {2, 1}), ints({0, 1, 3}, {3})});
  expect_close(c, {0, 5, 15, 40, 45, 55}, {2, 3});
}

TEST(AdvancedIndex, BoolMask) {
  Tensor x = arange_f({2, 3});
  Tensor mask = x > 2.5;
  expect_close(index(x, {mask}), {3, 4, 5}, {3});
  expect_close(masked_select(x, x.select(0, 0) >= 1), {1, 2, 4, 5}, {4});
  // A 1-D mask on dim 1.
  expect_close(index(x, {Tensor(), tensor({true, false, true})}), {0, 2, 3, 5}, {2, 2});
}

TEST(AdvancedIndex, Put) {
  Tensor x = zeros({3, 2});
  index_put_(x, {ints({2, 0}, {2})}, tensor({1., 2.}));
  expect_close(x, {1, 2, 0, 0, 1, 2}, {3, 2});
  // Repeated positions: the last write wins; with accumulate they add.
  Tensor y = index_put(zeros({4}), {ints({1, 1, 3}, {3})}, tensor({5., 6., 7.}));
  expect_close(y, {0, 6, 0, 7}, {4});
  Tensor z = index_put(ones({4}), {ints({1, 1, 3}, {3})}, tensor({5., 6., 7.}), true);
  expect_close(z, {1, 12, 1, 8}, {4});
  // A mask with a scalar value; inf in untouched places survives (no multiply by a mask).
  Tensor w = tensor({1., INFINITY, -2.});
  index_put_(w, {w < 0}, scalar_tensor(0.0));
  expect_close(w, {1, INFINITY, 0}, {3});
}

TEST(AdvancedIndex, Errors) {
  Tensor x = zeros({3, 2});
  expect_error<std::out_of_range>([&] { index(x, {ints({3}, {1})}); }, "out of bounds");
  expect_error<std::out_of_range>([&] { index(x, {ints({-4}, {1})}); }, "out of bounds");
  expect_error<std::out_of_range>([&] { index(x, {tensor({true, false})}); }, "mask");
  expect_error<TypeError>([&] { index(x, {tensor({0.5})}); }, "integer or bool");
  expect_error<std::out_of_range>(
      [&] {
        index(x, {Tensor(), Tensor(), ints({0}, {1})});
      },
      "too many indices");
  expect_error<std::invalid_argument>(
      [&] {
        index_put(x, {ints({0, 1}, {2})}, zeros({3}));
      },
      "cannot be broadcast");
  Tensor leaf = zeros({3}).requires_grad_();
  expect_error<std::runtime_error>([&] { index_put_(leaf, {ints({0}, {1})}, scalar_tensor(1.0)); },
                                   "leaf");
}

TEST(AdvancedIndex, Gradcheck) {
  Tensor idx = ints({2, 0, 2, -1}, {2, 2});
  EXPECT_TRUE(gradcheck(
      [&](const TensorList& t) {
        return index(t[0], {Tensor(), idx});
      },
      {input({3, 4, 2})}));
  Tensor mask = tensor({true, false, true});
  EXPECT_TRUE(gradcheck([&](const TensorList& t) { return index(t[0], {mask}); }, {input({3, 2})}));
  // Non-contiguous input, non-adjacent indices.
  Tensor i0 = ints({0, 1, 1}, {3}), i2 = ints({1, 0, 1}, {3});
  EXPECT_TRUE(gradcheck(
      [&](const TensorList& t) {
        return index(t[0].permute({2, 1, 0}), {i0, Tensor(), i2});
      },
      {input({2, 3, 2})}));
  // index_put: gradients for x and for (broadcast) values, with and without accumulate.
  Tensor rep = ints({1, 3, 1}, {3});
  for (bool accumulate : {false, true}) {
    EXPECT_TRUE(
        gradcheck([&](const TensorList& t) { return index_put(t[0], {rep}, t[1], accumulate); },
                  {input({4, 2}), input({3, 1}, 2)}));
  }
  // The in-place form on a non-leaf rebases its history.
  EXPECT_TRUE(gradcheck(
      [&](const TensorList& t) {
        Tensor y = t[0] * 2.0;
        index_put_(y, {y.detach() > 0}, t[1]);
        return y;
      },
      {input({5}), input({1}, 3)}));
}

}  // namespace
}  // namespace wick
