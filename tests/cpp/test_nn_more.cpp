// nn::functional part two (conv_more.h, norm_more.h, resample.h) and the modules of
// layers_more.h: float64 gradcheck of every function, identities that pin the values (the
// transposed convolution is the adjoint of the convolution, fold is the adjoint of unfold,
// pixel_unshuffle inverts pixel_shuffle), hand-computed small cases, parameter shapes and
// names, and bad input. The comparisons with PyTorch are in tests/python.
#include "nn/conv_more.h"
#include "nn/layers_more.h"
#include "nn/norm_more.h"
#include "nn/resample.h"
#include "tests/cpp/test_util.h"

namespace wick::nn {
namespace {

namespace F = functional;
using wick::testing::expect_close;
using wick::testing::expect_error;
using wick::testing::input;
using wick::testing::noncontiguous_input;

double inner_product(const Tensor& a, const Tensor& b) { return (a * b).sum().item<double>(); }

// The values of t in order, whatever its shape.
void expect_values(const Tensor& t, const std::vector<double>& expected) {
  expect_close(t.reshape({-1}), expected, Shape{int64_t(expected.size())});
}

TEST(NnMore, GradcheckConvolutionAndPooling) {
  EXPECT_TRUE(gradcheck([](const TensorList& t) { return F::conv1d(t[0], t[1], t[2], 2, 1, 1, 2); },
                        {input({2, 4, 7}), input({4, 2, 3}, 2), input({4}, 3)}));
  EXPECT_TRUE(gradcheck(
      [](const TensorList& t) {
        return F::conv_transpose2d(t[0], t[1], t[2], {2, 1}, 1, {1, 0}, 2, {1, 2});
      },
      {input({1, 4, 3, 3}), input({4, 1, 2, 3}, 2), input({2}, 3)}));
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
  EXPECT_TRUE(gradcheck([](const TensorList& t) { return F::unfold(t[0], 2, 1, 1, 2); },
                        {input({1, 2, 3, 4})}));
  EXPECT_TRUE(gradcheck(
      [](const TensorList& t) {
        return F::fold(t[0], {3, 4}, 2, 1, 1, 2);
      },
      {input({1, 8, 6})}));
}

TEST(NnMore, GradgradcheckOfTheConvolutions) {
  // Both reuse conv2d's differentiable backward, so second derivatives come for free.
  EXPECT_TRUE(gradgradcheck([](const TensorList& t) { return F::conv1d(t[0], t[1], {}, 2, 1); },
                            {input({1, 2, 5}), input({3, 2, 2}, 2)}));
  EXPECT_TRUE(gradgradcheck(
      [](const TensorList& t) { return F::conv_transpose2d(t[0], t[1], {}, 2, 1, 1); },
      {input({1, 2, 2, 3}), input({2, 3, 3, 2}, 2)}));
}

TEST(NnMore, GradcheckNormalizationResamplingDistances) {
  EXPECT_TRUE(gradcheck([](const TensorList& t) { return F::group_norm(t[0], 2, t[1], t[2]); },
                        {input({2, 4, 3}), input({4}, 2), input({4}, 3)}));
  EXPECT_TRUE(
      gradcheck([](const TensorList& t) { return F::instance_norm(t[0], {}, {}, t[1], t[2]); },
                {noncontiguous_input({2, 3, 4}), input({3}, 2), input({3}, 3)}));
  for (const char* mode : {"constant", "reflect", "replicate", "circular"}) {
    EXPECT_TRUE(gradcheck(
        [&](const TensorList& t) {
          return F::pad(t[0], {2, 1, 1, -1}, mode);
        },
        {input({1, 2, 3, 4})}))
        << mode;
  }
  EXPECT_TRUE(gradcheck(
      [](const TensorList& t) {
        return F::interpolate(t[0], {5, 3}, {}, "bilinear", true);
      },
      {input({1, 2, 3, 4})}));
  EXPECT_TRUE(
      gradcheck([](const TensorList& t) { return F::interpolate(t[0], {}, {2.5}, "linear"); },
                {input({1, 2, 3})}));
  EXPECT_TRUE(gradcheck([](const TensorList& t) { return F::pixel_shuffle(t[0], 2); },
                        {input({1, 8, 2, 3})}));
  EXPECT_TRUE(gradcheck([](const TensorList& t) { return F::normalize(t[0]); }, {input({3, 4})}));
  EXPECT_TRUE(gradcheck([](const TensorList& t) { return F::cosine_similarity(t[0], t[1]); },
                        {input({3, 4}), input({3, 4}, 2)}));
  EXPECT_TRUE(gradcheck([](const TensorList& t) { return F::pairwise_distance(t[0], t[1]); },
                        {input({3, 4}), input({1, 4}, 2)}));
  Tensor idx = tensor({1, 2, 0, 3, 3}), offsets = tensor({0, 2});
  for (const char* mode : {"sum", "mean", "max"}) {
    EXPECT_TRUE(
        gradcheck([&](const TensorList& t) { return F::embedding_bag(idx, t[0], offsets, mode); },
                  {input({4, 3})}))
        << mode;
  }
}

TEST(NnMore, TransposedConvolutionIsTheAdjointOfConvolution) {
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

TEST(NnMore, FoldIsTheAdjointOfUnfoldAndShufflesInvert) {
  Tensor x = input({2, 3, 5, 6}).detach();
  Tensor cols = F::unfold(x, {2, 3}, {1, 1}, {1, 1}, {2, 1});
  Tensor c = input(cols.shape(), 2).detach();
  EXPECT_NEAR(inner_product(cols, c),
              inner_product(x, F::fold(c, {5, 6}, {2, 3}, {1, 1}, {1, 1}, {2, 1})), 1e-9);
  Tensor p = input({2, 3, 8, 4, 6}).detach();
  expect_close(F::pixel_shuffle(F::pixel_unshuffle(p, 2), 2), p, 0.0);
  EXPECT_EQ(F::pixel_shuffle(p, 2).shape(), (Shape{2, 3, 2, 8, 12}));
}

TEST(NnMore, SmallCasesByHand) {
  Tensor r = arange(0.0, 4.0).reshape({1, 1, 4});
  expect_values(F::pad(r, {2, 1}, "reflect"), {2, 1, 0, 1, 2, 3, 2});
  expect_values(F::pad(r, {2, 1}, "replicate"), {0, 0, 0, 1, 2, 3, 3});
  expect_values(F::pad(r, {2, 1}, "circular"), {2, 3, 0, 1, 2, 3, 0});
  expect_values(F::pad(r, {-1, 2}, "constant", 9), {1, 2, 3, 9, 9});
  expect_values(F::interpolate(r, {8}, {}, "nearest"), {0, 0, 1, 1, 2, 2, 3, 3});
  expect_values(F::interpolate(r, {7}, {}, "linear", true), {0, 0.5, 1, 1.5, 2, 2.5, 3});
  expect_values(F::interpolate(r, {2}, {}, "linear", false), {0.5, 2.5});
  expect_values(
      F::adaptive_max_pool2d(tensor({{1., 5., 2.}, {4., 0., 3.}}).reshape({1, 2, 3}), {1, 2}),
      {5, 5});
  // Bags: [1, 2] and [3] of rows i -> (i, 10 i).
  Tensor w = tensor({{0., 0.}, {1., 10.}, {2., 20.}, {3., 30.}});
  Tensor bags = tensor({1, 2, 3}), offsets = tensor({0, 2});
  expect_values(F::embedding_bag(bags, w, offsets, "sum"), {3, 30, 3, 30});
  expect_values(F::embedding_bag(bags, w, offsets, "mean"), {1.5, 15, 3, 30});
  expect_values(F::embedding_bag(bags, w, offsets, "max", {}, false, 3), {2, 20, 0, 0});
  expect_values(F::group_norm(tensor({{1., 3., 5., 7.}}).reshape({1, 2, 2}), 1).reshape({4}),
                {-1.3416394, -0.4472131, 0.4472131, 1.3416394});
}

TEST(NnMore, InstanceNormUpdatesRunningStatistics) {
  Tensor x = tensor({{1., 3.}, {2., 6.}}).reshape({1, 2, 2});
  Tensor mean = zeros({2}), var = ones({2});
  F::instance_norm(x, mean, var, {}, {}, true, 0.5);
  expect_values(mean, {1.0, 2.0});  // 0.5 * 0 + 0.5 * (2, 4)
  expect_values(var, {1.5, 4.5});   // 0.5 * 1 + 0.5 * unbiased (2, 8)
}

TEST(NnMore, ModulesHavePyTorchsParametersAndNames) {
  // The modules' parameters are float32, as PyTorch's.
  auto x32 = [](const Shape& shape, uint64_t seed = 1) {
    return input(shape, seed).detach().to(kFloat32);
  };
  ConvTranspose2d up(4, 6, 3, 2, 1, 1, 2);
  EXPECT_EQ(up.weight.shape(), (Shape{4, 3, 3, 3}));
  EXPECT_EQ(up(x32({1, 4, 5, 5})).shape(), (Shape{1, 6, 10, 10}));
  Conv1d conv(4, 6, 3, 1, 1);
  EXPECT_EQ(conv(x32({2, 4, 9})).shape(), (Shape{2, 6, 9}));
  EXPECT_EQ(conv.extra_repr(), "4, 6, kernel_size=(3,), stride=(1,), padding=(1,)");
  InstanceNorm2d in(3, 1e-5, 0.1, true, true);
  std::vector<std::string> names;
  for (auto& [name, t] : in.state_dict()) names.push_back(name);
  EXPECT_EQ(names, (std::vector<std::string>{"bias", "num_batches_tracked", "running_mean",
                                             "running_var", "weight"}));  // a sorted map
  GroupNorm gn(2, 4);
  expect_values(gn.weight, {1, 1, 1, 1});
  EXPECT_EQ(Upsample({}, {2.0}, "bilinear")(x32({1, 2, 3, 4})).shape(), (Shape{1, 2, 6, 8}));
  EXPECT_EQ(ReflectionPad2d({1})(x32({1, 2, 3, 4})).shape(), (Shape{1, 2, 5, 6}));
  EXPECT_EQ(MaxPool1d(2)(x32({1, 2, 9})).shape(), (Shape{1, 2, 4}));
  EXPECT_EQ(AdaptiveMaxPool2d({2, 3})(x32({1, 2, 5, 5})).shape(), (Shape{1, 2, 2, 3}));
  EXPECT_EQ(Fold({4, 5}, 2)(Unfold(2)(x32({1, 2, 4, 5}))).shape(), (Shape{1, 2, 4, 5}));
  EXPECT_EQ(CosineSimilarity().forward(x32({3, 4}), x32({3, 4}, 2)).shape(), (Shape{3}));
  EmbeddingBag bag(5, 3, "max", false, 1);
  expect_values(bag.weight.select(0, 1), {0, 0, 0});
  EXPECT_EQ(bag(tensor(std::vector<int64_t>{1, 2, 3, 4}, Shape{2, 2})).shape(), (Shape{2, 3}));
}

TEST(NnMore, BadInputsNameTheFunctionAndValues) {
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
  expect_error<std::runtime_error>([] { F::group_norm(input({1, 6, 3}), 4); }, "num_groups=4");
  expect_error<std::runtime_error>(
      [] {
        F::pad(input({1, 2, 3}), {3, 3}, "reflect");
      },
      "padding (3, 3) at dimension 2");
  expect_error<std::runtime_error>(
      [] {
        F::pixel_shuffle(input({1, 5, 2, 2}), 2);
      },
      "input.size(-3)=5 is not divisible by 4");
  expect_error<std::runtime_error>(
      [] {
        F::fold(input({1, 12, 5}), {3, 3}, 2);
      },
      "sliding blocks 4, but got input.size(2)=5");
  expect_error<std::invalid_argument>(
      [] {
        F::interpolate(input({1, 2, 3, 4}), {}, {});
      },
      "either size or scale_factor should be defined");
  expect_error<std::invalid_argument>([] { GroupNorm(4, 6); }, "num_groups=4, num_channels=6");
  expect_error<std::out_of_range>(
      [] {
        F::embedding_bag(tensor({1, 7}), input({3, 4}), tensor({0}));
      },
      "[embedding_bag] index out of range in self: 7");
}

}  // namespace
}  // namespace wick::nn
