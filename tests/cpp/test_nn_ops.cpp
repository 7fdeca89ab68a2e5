// Convolution, pooling and batch normalization: hand-checked forward values, gradcheck over
// strides, padding, dilation, groups and ceil_mode, and bad arguments.
#include "core/cpu/conv_direct.h"
#include "tests/cpp/test_util.h"

namespace wick {
namespace {

using testing::expect_close;
using testing::expect_error;
using testing::input;

// The direct 3x3 convolution (Note [direct convolution over padded rows]) and Winograd over
// tiles against im2col + GEMM in float32 and against float64, forward and both gradients. Run
// here, the sanitizer builds check their reads past the padded planes, the phase planes for
// stride 2 (and the output phases of its input gradient) and the tile rows.
TEST(Conv2d, DirectEqualsIm2col) {
  struct Case {
    Shape x;
    int64_t out, stride, padding;
    double atol = 1e-5;  // Winograd's transforms round sums of 144+ products a little more
  };
  struct Im2colOnly {  // restores the default even when a check throws
    Im2colOnly() { cpu::set_direct_conv_enabled(false); }
    ~Im2colOnly() { cpu::set_direct_conv_enabled(true); }
  };
  const Case cases[] = {{{1, 1, 8, 8}, 1, 1, 1},
                        {{3, 16, 13, 21}, 12, 1, 1},
                        {{2, 5, 10, 40}, 3, 1, 0},
                        {{2, 7, 9, 17}, 9, 1, 2},
                        {{3, 16, 32, 32}, 32, 2, 1},
                        {{2, 6, 17, 23}, 5, 2, 1},
                        {{1, 9, 16, 21}, 7, 2, 1},  // dX by phases, one image: blocks split
                        {{1, 4, 21, 20}, 8, 2, 0},
                        // Winograd over blocks of 16 tiles (Note [Winograd over blocks of 16
                        // tiles]) where it is chosen: 16+ channels, widths 8, 16 and 32k.
                        {{4, 16, 32, 32}, 16, 1, 1, 5e-5},
                        {{5, 16, 8, 8}, 20, 1, 1, 5e-5},
                        {{4, 32, 16, 16}, 24, 1, 1, 5e-5},
                        {{2, 17, 2, 64}, 16, 1, 1, 5e-5},
                        {{3, 24, 8, 16}, 80, 1, 1, 5e-5}};  // weight gradient: 64 + 16
  for (const Case& c : cases) {
    SCOPED_TRACE("input " + to_string(c.x) + ", stride " + std::to_string(c.stride));
    Generator g(7);
    Tensor x64 = randn(c.x, kFloat64, g), w64 = randn({c.out, c.x[1], 3, 3}, kFloat64, g);
    Tensor b64 = randn({c.out}, kFloat64, g);
    Tensor want = conv2d(x64, w64, b64, c.stride, c.padding);
    Tensor grad = randn(want.shape(), kFloat32, g);  // dY differs at every output
    auto run = [&]() {
      Tensor x = x64.to(kFloat32).requires_grad_(), w = w64.to(kFloat32).requires_grad_();
      Tensor y = conv2d(x, w, b64.to(kFloat32), c.stride, c.padding);
      (y * grad).sum().backward();
      return std::make_tuple(y.detach(), x.grad(), w.grad());
    };
    auto [direct, direct_dx, direct_dw] = run();
    std::tuple<Tensor, Tensor, Tensor> reference;
    {
      Im2colOnly im2col;
      reference = run();
    }
    Tensor w64_leaf = w64.clone().requires_grad_();
    (conv2d(x64, w64_leaf, b64, c.stride, c.padding) * grad.to(kFloat64)).sum().backward();
    expect_close(direct, want, 1e-4, 1e-5);
    expect_close(direct, std::get<0>(reference), c.atol, 1e-5);
    expect_close(direct_dx, std::get<1>(reference), c.atol, 1e-5);
    expect_close(direct_dw, std::get<2>(reference), 1e-4, 1e-4);
    expect_close(direct_dw, w64_leaf.grad(), 1e-4, 1e-4);
  }
  EXPECT_TRUE(cpu::direct_conv_enabled());
}

TEST(Conv2d, HandComputed) {
  // A 1x1x3x3 image of 1..9 and a 2x2 kernel of ones: each output sums a 2x2 patch.
  Tensor x = arange(1, 10).to(kFloat32).reshape({1, 1, 3, 3});
  Tensor w = ones({1, 1, 2, 2});
  expect_close(conv2d(x, w), {12, 16, 24, 28}, {1, 1, 2, 2});
  expect_close(conv2d(x, w, tensor({1.0})), {13, 17, 25, 29}, {1, 1, 2, 2});
  // Padding 1, stride 2: corners of the padded image.
  expect_close(conv2d(x, w, Tensor(), 2, 1), {1, 5, 11, 28}, {1, 1, 2, 2});
  // Dilation 2 on a 3x3 input with a 2x2 kernel reads the four corners.
  expect_close(conv2d(x, w, Tensor(), 1, 0, 2), {1 + 3 + 7 + 9}, {1, 1, 1, 1});
  // Unbatched input keeps no batch dim.
  EXPECT_EQ(conv2d(x[0], w).shape(), (Shape{1, 2, 2}));
}

TEST(Conv2d, GroupsEqualSeparateConvolutions) {
  Tensor x = randn({2, 4, 5, 5}, kFloat64), w = randn({6, 2, 3, 3}, kFloat64);
  Tensor b = randn({6}, kFloat64);
  Tensor grouped = conv2d(x, w, b, 1, 1, 1, 2);
  Tensor first = conv2d(x.narrow(1, 0, 2), w.narrow(0, 0, 3), b.narrow(0, 0, 3), 1, 1);
  Tensor second = conv2d(x.narrow(1, 2, 2), w.narrow(0, 3, 3), b.narrow(0, 3, 3), 1, 1);
  expect_close(grouped, cat({first, second}, 1), 1e-12, 1e-12);
}

TEST(Conv2d, MatchesUnfoldedMatmul) {
  // A convolution is a matrix product with the unfolded input; check with a naive loop.
  Tensor x = randn({2, 3, 6, 5}, kFloat64), w = randn({4, 3, 3, 2}, kFloat64);
  Tensor out = conv2d(x, w, Tensor(), {2, 1}, {1, 0});
  ASSERT_EQ(out.shape(), (Shape{2, 4, 3, 4}));
  auto xv = x.to_vector<double>(), wv = w.to_vector<double>(), ov = out.to_vector<double>();
  for (int n = 0; n < 2; ++n)
    for (int o = 0; o < 4; ++o)
      for (int y = 0; y < 3; ++y)
        for (int z = 0; z < 4; ++z) {
          double acc = 0;
          for (int c = 0; c < 3; ++c)
            for (int i = 0; i < 3; ++i)
              for (int j = 0; j < 2; ++j) {
                int iy = y * 2 - 1 + i, ix = z + j;
                if (iy < 0 || iy >= 6 || ix >= 5) continue;
                acc += xv[((n * 3 + c) * 6 + iy) * 5 + ix] * wv[((o * 3 + c) * 3 + i) * 2 + j];
              }
          EXPECT_NEAR(ov[((n * 4 + o) * 3 + y) * 4 + z], acc, 1e-12);
        }
}

TEST(Conv2d, Gradcheck) {
  struct Config {
    Pair2 stride, padding, dilation;
    int64_t groups;
  };
  for (Config c : {Config{1, 0, 1, 1}, Config{2, 1, 1, 1}, Config{{1, 2}, {0, 1}, {2, 1}, 1},
                   Config{1, 1, 1, 2}}) {
    Tensor x = input({2, 4, 5, 6}, 1), w = input({4, 4 / c.groups, 3, 2}, 2), b = input({4}, 3);
    EXPECT_TRUE(gradcheck(
        [&](const TensorList& t) {
          return conv2d(t[0], t[1], t[2], c.stride, c.padding, c.dilation, c.groups);
        },
        {x, w, b}));
  }
  // Non-contiguous input and no bias.
  Tensor xt = testing::noncontiguous_input({1, 2, 4, 4}), w = input({3, 2, 2, 2}, 4);
  EXPECT_TRUE(gradcheck([](const TensorList& t) { return conv2d(t[0], t[1]); }, {xt, w}));
}

TEST(Conv2d, SixteenBitInputsAccumulateInFloat32) {
  // Against float32 on the same (rounded) inputs: the only error left is the output's rounding.
  for (DType dtype : {kBFloat16, kFloat16}) {
    SCOPED_TRACE(dtype_name(dtype));
    double tolerance = dtype == kBFloat16 ? 1e-2 : 2e-3;
    Tensor x = randn({3, 4, 9, 9}).to(dtype), w = randn({6, 4, 3, 3}).to(dtype);
    Tensor xr = x.to(kFloat32).requires_grad_(), wr = w.to(kFloat32).requires_grad_();
    Tensor xh = x.clone().requires_grad_(), wh = w.clone().requires_grad_();
    Tensor reference = conv2d(xr, wr, Tensor(), 1, 1);
    Tensor result = conv2d(xh, wh, Tensor(), 1, 1);
    EXPECT_EQ(result.dtype(), dtype);
    double scale = reference.abs().max().item<double>();
    expect_close(result.to(kFloat32), reference, tolerance * scale, 0);
    reference.sum().backward();
    result.sum().backward();
    expect_close(xh.grad().to(kFloat32), xr.grad(),
                 tolerance * xr.grad().abs().max().item<double>(), 0);
    expect_close(wh.grad().to(kFloat32), wr.grad(),
                 tolerance * wr.grad().abs().max().item<double>(), 0);
    Tensor a = randn({37, 500}).to(dtype), b = randn({500, 29}).to(dtype);
    Tensor product = matmul(a, b).to(kFloat32), exact = matmul(a.to(kFloat32), b.to(kFloat32));
    expect_close(product, exact, tolerance * exact.abs().max().item<double>(), 0);
  }
}

TEST(Pool, MaxPoolValuesAndIndices) {
  Tensor x = tensor({1., 5., 2., 0., 3., 4., 9., 8., 7., 6., 2., 1., 0., 1., 2., 3.})
                 .reshape({1, 1, 4, 4});
  auto [values, indices] = max_pool2d_with_indices(x, 2);
  expect_close(values, {5, 9, 7, 3}, {1, 1, 2, 2});
  EXPECT_EQ(indices.to_vector<int64_t>(), (std::vector<int64_t>{1, 6, 8, 15}));
  expect_close(max_pool2d(x, 3, 1), {9, 9, 9, 9}, {1, 1, 2, 2});
  expect_close(max_pool2d(x, 2, 2, 1), {1, 5, 0, 7, 9, 8, 0, 2, 3}, {1, 1, 3, 3});
  EXPECT_EQ(max_pool2d(ones({1, 1, 5, 5}), 2, 2, 0, 1, /*ceil_mode=*/true).shape(),
            (Shape{1, 1, 3, 3}));
}

TEST(Pool, AvgAndAdaptive) {
  Tensor x = arange(16).to(kFloat32).reshape({1, 1, 4, 4});
  expect_close(avg_pool2d(x, 2), {2.5, 4.5, 10.5, 12.5}, {1, 1, 2, 2});
  // Padding 1, count_include_pad: the corner window holds x[0,0] and three zeros.
  expect_close(avg_pool2d(x, 2, 2, 1).select(2, 0), {0.0 / 4, (1 + 2) / 4.0, 3.0 / 4}, {1, 1, 3});
  expect_close(avg_pool2d(x, 2, 2, 1, false, false).select(2, 0), {0, 1.5, 3}, {1, 1, 3});
  expect_close(adaptive_avg_pool2d(x, 1), {7.5}, {1, 1, 1, 1});
  // 4 -> 3 cells: windows [0,2), [1,3), [2,4) along each axis.
  Tensor a = adaptive_avg_pool2d(x, 3);
  expect_close(a.select(2, 0), {2.5, 3.5, 4.5}, {1, 1, 3});
}

TEST(Pool, Gradcheck) {
  Tensor x = input({2, 3, 6, 5});
  // Distinct values so no max ties (where the derivative is undefined).
  {
    NoGradGuard no_grad;
    x.detach().copy_(arange(x.numel()).to(kFloat64).reshape(x.shape()) * 0.37 +
                     randn(x.shape(), kFloat64) * 0.01);
  }
  EXPECT_TRUE(gradcheck([](const TensorList& t) { return max_pool2d(t[0], 2); }, {x}));
  EXPECT_TRUE(
      gradcheck([](const TensorList& t) { return max_pool2d(t[0], 3, 2, 1, 1, true); }, {x}));
  EXPECT_TRUE(gradcheck([](const TensorList& t) { return avg_pool2d(t[0], 2); }, {x}));
  EXPECT_TRUE(
      gradcheck([](const TensorList& t) { return avg_pool2d(t[0], 3, 2, 1, true, false); }, {x}));
  EXPECT_TRUE(gradcheck(
      [](const TensorList& t) {
        return adaptive_avg_pool2d(t[0], {4, 3});
      },
      {x}));
}

TEST(BatchNorm, TrainingNormalizesAndUpdatesRunningStats) {
  Tensor x = tensor({1., 2., 3., 4., 10., 20., 30., 40.}, kFloat64).reshape({2, 2, 2});
  // channel 0: 1, 2, 10, 20; channel 1: 3, 4, 30, 40
  Tensor rm = zeros({2}, kFloat64), rv = ones({2}, kFloat64);
  Tensor y = batch_norm(x, rm, rv, Tensor(), Tensor(), true, 0.1, 0.0);
  expect_close(y.mean({0, 2}), {0, 0}, {2}, 1e-12);
  expect_close(y.var({0, 2}, 0), {1, 1}, {2}, 1e-9);
  expect_close(rm, {0.1 * 8.25, 0.1 * 19.25}, {2}, 1e-12);
  double var0 = x.select(1, 0).var().item<double>();  // unbiased
  expect_close(rv.select(0, 0), {0.9 + 0.1 * var0}, {}, 1e-12);
  // Evaluation uses the running statistics.
  Tensor e = batch_norm(x, rm, rv, tensor({2.0, 1.0}, kFloat64), tensor({0.5, 0.0}, kFloat64),
                        false, 0.1, 1e-5);
  double expected = (1.0 - rm.select(0, 0).item<double>()) /
                        std::sqrt(rv.select(0, 0).item<double>() + 1e-5) * 2.0 +
                    0.5;
  EXPECT_NEAR(e.to_vector<double>()[0], expected, 1e-12);
}

TEST(BatchNorm, Gradcheck) {
  Tensor x = input({4, 3, 2, 2}), w = input({3}, 2), b = input({3}, 3);
  EXPECT_TRUE(gradcheck(
      [](const TensorList& t) { return batch_norm(t[0], Tensor(), Tensor(), t[1], t[2], true); },
      {x, w, b}));
  EXPECT_TRUE(gradcheck(
      [](const TensorList& t) {
        return batch_norm(t[0], Tensor(), Tensor(), Tensor(), Tensor(), true);
      },
      {input({5, 2})}));
  Tensor rm = randn({3}, kFloat64), rv = rand({3}, kFloat64) + 0.5;
  EXPECT_TRUE(gradcheck(
      [&](const TensorList& t) { return batch_norm(t[0], rm, rv, t[1], t[2], false); }, {x, w, b}));
}

// Note [batch norm's fused epilogue]: relu(batch_norm(x) + residual) in one kernel each way.
TEST(BatchNorm, FusedReluAndResidualEqualTheSeparateOps) {
  Tensor x = input({4, 3, 5, 6}), w = input({3}, 2), b = input({3}, 3), r = input({4, 3, 5, 6}, 4);
  EXPECT_TRUE(gradcheck(
      [](const TensorList& t) {
        return batch_norm_relu(t[0], Tensor(), Tensor(), t[1], t[2], true, 0.1, 1e-5, t[3]);
      },
      {x, w, b, r}));
  // float32, as ResNet trains: the fused forward and gradients against the three ops.
  std::vector<Tensor> fused, plain;
  for (Tensor* t : {&x, &w, &b, &r}) {
    fused.push_back(t->detach().to(kFloat32).requires_grad_());
    plain.push_back(t->detach().to(kFloat32).requires_grad_());
  }
  Tensor rm = zeros({3}), rv = ones({3}), rm2 = zeros({3}), rv2 = ones({3});
  Tensor y = batch_norm_relu(fused[0], rm, rv, fused[1], fused[2], true, 0.1, 1e-5, fused[3]);
  Tensor z = relu(batch_norm(plain[0], rm2, rv2, plain[1], plain[2], true, 0.1, 1e-5) + plain[3]);
  EXPECT_TRUE(allclose(y, z, 1e-5, 1e-6));
  EXPECT_TRUE(allclose(rv, rv2, 1e-6, 1e-7));
  Tensor dz = randn({4, 3, 5, 6});
  y.backward(dz);
  z.backward(dz);
  for (size_t i = 0; i < fused.size(); ++i) {
    EXPECT_TRUE(allclose(fused[i].grad(), plain[i].grad(), 1e-4, 1e-5)) << "input " << i;
  }
  expect_error<std::invalid_argument>(
      [&] {
        batch_norm_relu(x, Tensor(), Tensor(), w, b, true, 0.1, 1e-5, ones({4, 3, 5}));
      },
      "[batch_norm_relu] the residual must have the input's shape (4, 3, 5, 6); got (4, 3, 5)");
}

TEST(NnOps, BadArguments) {
  expect_error<std::invalid_argument>(
      [] {
        conv2d(ones({1, 3, 5, 5}), ones({2, 2, 3, 3}));
      },
      "[conv2d] input of shape (1, 3, 5, 5) has 3 channels but "
      "weight of shape (2, 2, 3, 3) expects 2");
  expect_error<std::invalid_argument>(
      [] {
        conv2d(ones({1, 1, 2, 2}), ones({1, 1, 3, 3}));
      },
      "is smaller than the kernel (3, 3)");
  expect_error<std::invalid_argument>(
      [] {
        conv2d(ones({5, 5}), ones({1, 1, 3, 3}));
      },
      "[conv2d] expected a 3-D [C, H, W] or 4-D");
  expect_error<std::invalid_argument>(
      [] {
        conv2d(ones({1, 4, 5, 5}), ones({3, 2, 3, 3}), Tensor(), 1, 0, 1, 2);
      },
      "groups=2 must divide");
  expect_error<TypeError>(
      [] {
        conv2d(ones({1, 1, 5, 5}), ones({1, 1, 3, 3}, kFloat64));
      },
      "[conv2d] input and weight dtypes differ");
  expect_error<std::invalid_argument>(
      [] {
        max_pool2d(ones({1, 1, 4, 4}), 2, 2, 2);
      },
      "[max_pool2d] padding 2 must be at most half");
  expect_error<std::invalid_argument>([] { max_pool2d(ones({1, 1, 1, 1}), 3); }, "too small");
  expect_error<std::invalid_argument>(
      [] {
        batch_norm(ones({1, 3}), Tensor(), Tensor(), Tensor(), Tensor(), true);
      },
      "[batch_norm] expected more than 1 value per channel when training");
  expect_error<std::invalid_argument>(
      [] {
        batch_norm(ones({4, 3}), ones({2}), ones({3}), Tensor(), Tensor(), true);
      },
      "per-channel tensors must have shape (3,)");
}

}  // namespace
}  // namespace wick
