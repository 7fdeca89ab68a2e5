// Padding and resampling (nn/layers/resample.h): float64 gradcheck, hand-computed cases,
// pixel_unshuffle inverting pixel_shuffle, the modules' output shapes, and bad input.
#include "nn/layers/resample.h"
#include "tests/cpp/test_util.h"

namespace wick::nn {
namespace {

namespace F = functional;
using wick::testing::expect_close;
using wick::testing::expect_error;
using wick::testing::expect_values;
using wick::testing::input;

// The modules' parameters are float32, as PyTorch's.
Tensor x32(const Shape& shape, uint64_t seed = 1) {
  return input(shape, seed).detach().to(kFloat32);
}

TEST(Resample, Gradcheck) {
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
}

TEST(Resample, ShufflesInvert) {
  Tensor p = input({2, 3, 8, 4, 6}).detach();
  expect_close(F::pixel_shuffle(F::pixel_unshuffle(p, 2), 2), p, 0.0);
  EXPECT_EQ(F::pixel_shuffle(p, 2).shape(), (Shape{2, 3, 2, 8, 12}));
}

TEST(Resample, SmallCasesByHand) {
  Tensor r = arange(0.0, 4.0).reshape({1, 1, 4});
  expect_values(F::pad(r, {2, 1}, "reflect"), {2, 1, 0, 1, 2, 3, 2});
  expect_values(F::pad(r, {2, 1}, "replicate"), {0, 0, 0, 1, 2, 3, 3});
  expect_values(F::pad(r, {2, 1}, "circular"), {2, 3, 0, 1, 2, 3, 0});
  expect_values(F::pad(r, {-1, 2}, "constant", 9), {1, 2, 3, 9, 9});
  expect_values(F::interpolate(r, {8}, {}, "nearest"), {0, 0, 1, 1, 2, 2, 3, 3});
  expect_values(F::interpolate(r, {7}, {}, "linear", true), {0, 0.5, 1, 1.5, 2, 2.5, 3});
  expect_values(F::interpolate(r, {2}, {}, "linear", false), {0.5, 2.5});
}

TEST(Resample, ModulesOutputShapes) {
  EXPECT_EQ(Upsample({}, {2.0}, "bilinear")(x32({1, 2, 3, 4})).shape(), (Shape{1, 2, 6, 8}));
  EXPECT_EQ(ReflectionPad2d({1})(x32({1, 2, 3, 4})).shape(), (Shape{1, 2, 5, 6}));
}

TEST(Resample, BadInputsNameTheFunctionAndValues) {
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
  expect_error<std::invalid_argument>(
      [] {
        F::interpolate(input({1, 2, 3, 4}), {}, {});
      },
      "either size or scale_factor should be defined");
}

}  // namespace
}  // namespace wick::nn
