// The convolutions and unfold/fold (nn/layers/conv.h): float64 gradcheck and gradgradcheck,
// identities that pin the values (the transposed convolution is the adjoint of the convolution,
// fold the adjoint of unfold), parameter shapes and names, and bad input. conv2d's kernels are
// tested in test_nn_ops.cpp; the comparisons with PyTorch are in tests/python.
#include "nn/layers/conv.h"
#include "nn/layers/resample.h"
#include "tests/cpp/test_util.h"

namespace wick::nn {
namespace {

namespace F = functional;
using wick::testing::expect_close;
using wick::testing::expect_error;
using wick::testing::input;

// The modules' parameters are float32, as PyTorch's.
Tensor x32(const Shape& shape, uint64_t seed = 1) {
  return input(shape, seed).detach().to(kFloat32);
}

double inner_product(const Tensor& a, const Tensor& b) { return (a * b).sum().item<double>(); }

TEST(Conv, Gradcheck) {
  EXPECT_TRUE(gradcheck([](const TensorList& t) { return F::conv1d(t[0], t[1], t[2], 2, 1, 1, 2); },
                        {input({2, 4, 7}), input({4, 2, 3}, 2), input({4}, 3)}));
  EXPECT_TRUE(gradcheck(
      [](const TensorList& t) {
        return F::conv_transpose2d(t[0], t[1], t[2], {2, 1}, 1, {1, 0}, 2, {1, 2});
      },
      {input({1, 4, 3, 3}), input({4, 1, 2, 3}, 2), input({2}, 3)}));
  EXPECT_TRUE(gradcheck([](const TensorList& t) { return F::unfold(t[0], 2, 1, 1, 2); },
                        {input({1, 2, 3, 4})}));
  EXPECT_TRUE(gradcheck(
      [](const TensorList& t) {
        return F::fold(t[0], {3, 4}, 2, 1, 1, 2);
      },
      {input({1, 8, 6})}));
}

TEST(Conv, GradgradcheckOfTheConvolutions) {
  // Both reuse conv2d's differentiable backward, so second derivatives come for free.
  EXPECT_TRUE(gradgradcheck([](const TensorList& t) { return F::conv1d(t[0], t[1], {}, 2, 1); },
                            {input({1, 2, 5}), input({3, 2, 2}, 2)}));
  EXPECT_TRUE(gradgradcheck(
      [](const TensorList& t) { return F::conv_transpose2d(t[0], t[1], {}, 2, 1, 1); },
      {input({1, 2, 2, 3}), input({2, 3, 3, 2}, 2)}));
}

TEST(Conv, TransposedConvolutionIsTheAdjointOfConvolution) {
  // <conv2d(x, w), y> == <x, conv_transpose2d(y, w)> for the same stride, padding, dilation.
  Tensor x = input({2, 4, 8, 6}).detach(), w = input({6, 2, 3, 2}, 2).detach();
  Tensor y = conv2d(x, w, {}, {2, 1}, {1, 0}, {1, 2}, 2);
  Tensor u = input(y.shape(), 3).detach();
  Tensor xt = F::conv_transpose2d(u, w, {}, {2, 1}, {1, 0}, {0, 0}, 2, {1, 2});
  ASSERT_EQ(xt.shape(), (Shape{2, 4, 7, 6}));  // conv2d never reads row 8 at stride 2
  Tensor xt_full = F::conv_transpose2d(u, w, {}, {2, 1}, {1, 0}, {1, 0}, 2, {1, 2});
  ASSERT_EQ(xt_full.shape(), x.shape());
  EXPECT_NEAR(inner_product(y, u), inner_product(x, xt_full), 1e-9);
  // conv1d is conv2d on a height-1 image.
  Tensor a = input({2, 4, 9}).detach(), k = input({3, 4, 2}, 2).detach();
  expect_close(F::conv1d(a, k, {}, 2),
               conv2d(a.unsqueeze(2), k.unsqueeze(2), {}, {1, 2}).squeeze(2), 1e-12);
}

TEST(Conv, FoldIsTheAdjointOfUnfold) {
  Tensor x = input({2, 3, 5, 6}).detach();
  Tensor cols = F::unfold(x, {2, 3}, {1, 1}, {1, 1}, {2, 1});
  Tensor c = input(cols.shape(), 2).detach();
  EXPECT_NEAR(inner_product(cols, c),
              inner_product(x, F::fold(c, {5, 6}, {2, 3}, {1, 1}, {1, 1}, {2, 1})), 1e-9);
}

TEST(Conv, SamePaddingKeepsTheSizeAndPadsTheOddZeroAfter) {
  // Kernel 4, dilation 1: 3 zeros, 1 before and 2 after (Note [same padding]).
  Tensor x = input({1, 2, 7}).detach(), w = input({3, 2, 4}, 2).detach();
  expect_close(F::conv1d(x, w, {}, 1, F::PaddingMode::Same), F::conv1d(F::pad(x, {1, 2}), w),
               1e-12);
  Tensor image = input({1, 2, 5, 6}).detach(), k = input({3, 2, 2, 4}, 2).detach();
  Tensor y = F::conv2d(image, k, {}, 1, F::PaddingMode::Same);
  EXPECT_EQ(y.shape(), (Shape{1, 3, 5, 6}));
  expect_close(y, conv2d(F::pad(image, {1, 2, 0, 1}), k), 1e-12);
  expect_error<std::invalid_argument>([&] { F::conv1d(x, w, {}, 2, F::PaddingMode::Same); },
                                      "not supported for strided convolutions");
}

TEST(Conv, ModulesHavePyTorchsParametersAndNames) {
  ConvTranspose2d up(4, 6, 3, 2, 1, 1, 2);
  EXPECT_EQ(up.weight.shape(), (Shape{4, 3, 3, 3}));
  EXPECT_EQ(up(x32({1, 4, 5, 5})).shape(), (Shape{1, 6, 10, 10}));
  Conv1d conv(4, 6, 3, 1, 1);
  EXPECT_EQ(conv(x32({2, 4, 9})).shape(), (Shape{2, 6, 9}));
  EXPECT_EQ(conv.extra_repr(), "4, 6, kernel_size=(3,), stride=(1,), padding=(1,)");
  EXPECT_EQ(Fold({4, 5}, 2)(Unfold(2)(x32({1, 2, 4, 5}))).shape(), (Shape{1, 2, 4, 5}));
}

TEST(Conv, BadInputsNameTheFunctionAndValues) {
  expect_error<std::runtime_error>(
      [] {
        F::conv1d(input({1, 4, 3, 3}), input({4, 2, 3}));
      },
      "[conv1d] expected 2-D (unbatched) or 3-D (batched) input");
  expect_error<std::runtime_error>(
      [] {
        F::conv_transpose2d(input({1, 4, 3, 3}), input({4, 2, 3, 3}), {}, 2, 0, 2);
      },
      "[conv_transpose2d] output padding must be smaller than either stride or dilation");
  expect_error<std::runtime_error>(
      [] {
        F::fold(input({1, 12, 5}), {3, 3}, 2);
      },
      "sliding blocks 4, but got input.size(2)=5");
}

}  // namespace
}  // namespace wick::nn
