// The pools of nn/layers/pooling.h beyond the 2-D kernels (tested in test_nn_ops.cpp): float64
// gradcheck, a hand-computed case and the modules' output shapes.
#include "nn/layers/pooling.h"
#include "tests/cpp/test_util.h"

namespace wick::nn {
namespace {

namespace F = functional;
using wick::testing::expect_values;
using wick::testing::input;
using wick::testing::noncontiguous_input;

// The modules' parameters are float32, as PyTorch's.
Tensor x32(const Shape& shape, uint64_t seed = 1) {
  return input(shape, seed).detach().to(kFloat32);
}

TEST(Pooling, Gradcheck) {
  EXPECT_TRUE(gradcheck([](const TensorList& t) { return F::max_pool1d(t[0], 3, 2, 1); },
                        {noncontiguous_input({2, 3, 8})}));
  EXPECT_TRUE(gradcheck([](const TensorList& t) { return F::avg_pool1d(t[0], 3, 2, 1, true); },
                        {input({2, 3, 8})}));
  EXPECT_TRUE(gradcheck([](const TensorList& t) { return F::adaptive_avg_pool1d(t[0], 3); },
                        {input({2, 3, 8})}));
  EXPECT_TRUE(gradcheck(
      [](const TensorList& t) {
        return F::adaptive_max_pool2d(t[0], {2, 3});
      },
      {noncontiguous_input({2, 2, 5, 7})}));
}

TEST(Pooling, SmallCaseByHand) {
  expect_values(
      F::adaptive_max_pool2d(tensor({{1., 5., 2.}, {4., 0., 3.}}).reshape({1, 2, 3}), {1, 2}),
      {5, 5});
}

TEST(Pooling, ModulesOutputShapes) {
  EXPECT_EQ(MaxPool1d(2)(x32({1, 2, 9})).shape(), (Shape{1, 2, 4}));
  EXPECT_EQ(AdaptiveMaxPool2d({2, 3})(x32({1, 2, 5, 5})).shape(), (Shape{1, 2, 2, 3}));
}

}  // namespace
}  // namespace wick::nn
