// Every CUDA kernel against its CPU twin: copies and casts, elementwise ops on strided and
// broadcast inputs in every dtype, reductions, softmax, indexing, random fills, GEMM, and the
// fused optimizer updates. Without a device each test is skipped, saying why.
#include <cmath>
#include <limits>

#include "tests/gpu/gpu_test_util.h"

namespace wick {
namespace {

using gpu_testing::expect_gpu_matches_cpu;
using gpu_testing::gpu;
using gpu_testing::GpuTest;
using gpu_testing::tolerance;
using gpu_testing::Tolerance;
using Inputs = std::vector<Tensor>;

const DType kFloats[] = {kFloat32, kFloat64, kFloat16, kBFloat16};
const DType kAll[] = {kFloat32, kFloat64, kFloat16, kBFloat16, kInt64, kInt32, kUInt8, kBool};

// Values that are exact in every dtype: small integers, some negative (except for uint8, bool).
Tensor sample(const Shape& shape, DType dtype, uint64_t seed = 1) {
  Generator g(seed);
  Tensor t = randint(-5, 6, shape, kInt64, g);
  if (dtype == kUInt8) t = randint(0, 11, shape, kInt64, g);
  if (dtype == kBool) t = randint(0, 2, shape, kInt64, g);
  return t.to(dtype);
}

Tensor floats(const Shape& shape, DType dtype, uint64_t seed = 1) {
  Generator g(seed);
  return randn(shape, kFloat64, g).to(dtype);
}

// ---- build-level checks (these run without a device too) ----

TEST(GpuBuild, EveryOpHasACudaKernel) {
  std::vector<std::string> missing = missing_kernels(kCUDA);
  std::string list;
  for (const auto& m : missing) list += m + " ";
  EXPECT_TRUE(missing.empty()) << "ops without a CUDA kernel: " << list;
}

TEST(GpuBuild, WithoutADeviceCudaTensorsFailClearly) {
  if (cuda::is_available()) GTEST_SKIP() << "a device is present";
  testing::expect_error<std::runtime_error>([] { empty({2}, gpu()); },
                                            "no CUDA device is available");
  testing::expect_error<std::runtime_error>([] { ones({2}).to(gpu()); },
                                            "no CUDA device is available");
  testing::expect_error<std::runtime_error>([] { cuda::memory_allocated(); },
                                            "no CUDA device is available");
  EXPECT_EQ(cuda::device_count(), 0);
}

// ---- copies ----

TEST_F(GpuTest, RoundTripEveryDtype) {
  for (DType d : kAll) {
    Tensor x = sample({3, 5}, d);
    Tensor back = x.to(gpu()).cpu();
    EXPECT_EQ(back.dtype(), d);
    testing::expect_close(back, x, 0, 0);
  }
}

TEST_F(GpuTest, CastsBetweenEveryPairOfDtypes) {
  for (DType from : kAll) {
    for (DType to : kAll) {
      Tensor x = sample({4, 6}, from);
      expect_gpu_matches_cpu(std::string(dtype_name(from)) + " -> " + dtype_name(to),
                             [to](const Inputs& in) { return in[0].t().to(to); }, {x}, {0, 0});
    }
  }
}

TEST_F(GpuTest, StridedCopiesInEveryDirection) {
  Tensor x = floats({6, 8}, kFloat32);
  // Host strided -> device, device strided -> host, device -> device strided.
  testing::expect_close(x.t().to(gpu()).cpu(), x.t(), 0, 0);
  testing::expect_close(x.to(gpu()).t().cpu(), x.t(), 0, 0);
  testing::expect_close(x.to(gpu()).slice(1, 1, 7, 2).contiguous().cpu(), x.slice(1, 1, 7, 2), 0,
                        0);
  Tensor target = zeros({8, 6}, gpu());
  target.copy_(x.t());  // host -> device into an existing tensor
  testing::expect_close(target.cpu(), x.t(), 0, 0);
  Tensor host = zeros({8, 6});
  host.t().copy_(x.to(gpu()));  // device -> strided host view
  testing::expect_close(host.t(), x, 0, 0);
  Tensor row = floats({1, 6}, kFloat32, 3);
  Tensor broadcast = zeros({4, 6}, gpu());
  broadcast.copy_(row.to(gpu()));
  testing::expect_close(broadcast.cpu(), row.expand({4, 6}), 0, 0);
}

TEST_F(GpuTest, PinnedMemoryCopiesAsynchronously) {
  Tensor x = floats({1000, 100}, kFloat32);
  Tensor pinned = cuda::pin_memory(x);
  EXPECT_TRUE(cuda::is_pinned(pinned));
  EXPECT_FALSE(cuda::is_pinned(x));
  Tensor on_gpu = pinned.to(gpu());
  testing::expect_close(on_gpu.cpu(), x, 0, 0);
  pinned = Tensor();  // freed while the copy may still be queued: the block waits for it
  Tensor again = cuda::pin_memory(floats({1000, 100}, kFloat32, 2));
  testing::expect_close(on_gpu.cpu(), x, 0, 0);
}

// ---- elementwise ----

TEST_F(GpuTest, UnaryOpsOnStridedInputs) {
  struct Case {
    const char* name;
    std::function<Tensor(const Tensor&)> f;
    bool positive;  // defined only for positive inputs
  };
  const Case cases[] = {
      {"neg", [](const Tensor& x) { return neg(x); }, false},
      {"abs", [](const Tensor& x) { return abs(x); }, false},
      {"exp", [](const Tensor& x) { return exp(x); }, false},
      {"log", [](const Tensor& x) { return log(x); }, true},
      {"sqrt", [](const Tensor& x) { return sqrt(x); }, true},
      {"rsqrt", [](const Tensor& x) { return rsqrt(x); }, true},
      {"sin", [](const Tensor& x) { return sin(x); }, false},
      {"cos", [](const Tensor& x) { return cos(x); }, false},
      {"tanh", [](const Tensor& x) { return tanh(x); }, false},
      {"sigmoid", [](const Tensor& x) { return sigmoid(x); }, false},
      {"relu", [](const Tensor& x) { return relu(x); }, false},
      {"gelu", [](const Tensor& x) { return gelu(x); }, false},
      {"gelu_tanh", [](const Tensor& x) { return gelu(x, "tanh"); }, false},
      {"silu", [](const Tensor& x) { return silu(x); }, false},
      {"leaky_relu", [](const Tensor& x) { return leaky_relu(x, 0.1); }, false},
      {"clamp", [](const Tensor& x) { return clamp(x, -0.5, 0.7); }, false},
      {"pow_scalar", [](const Tensor& x) { return pow(x, 3); }, false},
      {"logical_not", [](const Tensor& x) { return logical_not(x); }, false},
  };
  for (DType d : kFloats) {
    for (const Case& c : cases) {
      Tensor x = floats({7, 9}, d);
      if (c.positive) x = abs(x) + 0.1;
      expect_gpu_matches_cpu(std::string(c.name) + " " + dtype_name(d),
                             [&](const Inputs& in) { return c.f(in[0].t()); }, {x});
    }
  }
  for (DType d : {kInt64, kInt32, kUInt8}) {
    for (const char* name : {"neg", "abs", "relu", "clamp", "pow_scalar"}) {
      for (const Case& c : cases) {
        if (std::string(c.name) != name || (d == kUInt8 && std::string(name) == "neg")) continue;
        expect_gpu_matches_cpu(std::string(name) + " " + dtype_name(d),
                               [&](const Inputs& in) { return c.f(in[0].t()); },
                               {sample({5, 4}, d)});
      }
    }
  }
}

TEST_F(GpuTest, BinaryOpsWithBroadcasting) {
  struct Case {
    const char* name;
    std::function<Tensor(const Tensor&, const Tensor&)> f;
  };
  const Case arithmetic[] = {
      {"add", [](const Tensor& a, const Tensor& b) { return add(a, b); }},
      {"sub", [](const Tensor& a, const Tensor& b) { return sub(a, b); }},
      {"mul", [](const Tensor& a, const Tensor& b) { return mul(a, b); }},
      {"maximum", [](const Tensor& a, const Tensor& b) { return maximum(a, b); }},
      {"minimum", [](const Tensor& a, const Tensor& b) { return minimum(a, b); }},
      {"eq", [](const Tensor& a, const Tensor& b) { return eq(a, b); }},
      {"ne", [](const Tensor& a, const Tensor& b) { return ne(a, b); }},
      {"lt", [](const Tensor& a, const Tensor& b) { return lt(a, b); }},
      {"le", [](const Tensor& a, const Tensor& b) { return le(a, b); }},
      {"gt", [](const Tensor& a, const Tensor& b) { return gt(a, b); }},
      {"ge", [](const Tensor& a, const Tensor& b) { return ge(a, b); }},
      {"logical_and", [](const Tensor& a, const Tensor& b) { return logical_and(a, b); }},
      {"logical_or", [](const Tensor& a, const Tensor& b) { return logical_or(a, b); }},
  };
  for (DType d : kAll) {
    for (const Case& c : arithmetic) {
      if (d == kBool && (std::string(c.name) == "sub")) continue;  // PyTorch refuses bool sub
      // [3, 1, 5] with [4, 5] (as a transposed view): broadcasting and strides at once.
      expect_gpu_matches_cpu(
          std::string(c.name) + " " + dtype_name(d),
          [&](const Inputs& in) { return c.f(in[0], in[1].t()); },
          {sample({3, 1, 5}, d, 1), sample({5, 4}, d, 2)}, tolerance(d));
    }
  }
  for (DType d : kFloats) {
    Tensor a = floats({6, 5}, d, 1), b = abs(floats({6, 5}, d, 2)) + 0.5;
    expect_gpu_matches_cpu(std::string("div ") + dtype_name(d),
                           [](const Inputs& in) { return div(in[0], in[1]); }, {a, b});
    expect_gpu_matches_cpu(std::string("pow ") + dtype_name(d),
                           [](const Inputs& in) { return pow(abs(in[0]) + 0.1, in[1]); }, {a, b});
    expect_gpu_matches_cpu(std::string("scalar ops ") + dtype_name(d),
                           [](const Inputs& in) { return (in[0] * 2.5 + 1) / 3 - in[0] * in[0]; },
                           {a});
  }
  Tensor nan = full({3}, std::numeric_limits<double>::quiet_NaN());
  expect_gpu_matches_cpu("maximum with NaN", [](const Inputs& in) { return maximum(in[0], in[1]); },
                         {nan, ones({3})});
}

TEST_F(GpuTest, WhereAndMaskedFill) {
  for (DType d : kAll) {
    Tensor cond = sample({4, 5}, kBool, 3);
    expect_gpu_matches_cpu(std::string("where ") + dtype_name(d),
                           [](const Inputs& in) { return where(in[0], in[1], in[2].t()); },
                           {cond, sample({4, 5}, d, 1), sample({5, 4}, d, 2)}, {0, 0});
  }
  expect_gpu_matches_cpu("masked_fill",
                         [](const Inputs& in) { return masked_fill(in[0], in[1], -7.0); },
                         {floats({4, 5}, kFloat32), sample({4, 5}, kBool)});
}

TEST_F(GpuTest, ActivationBackwardsThroughAutograd) {
  for (DType d : {kFloat32, kFloat64}) {
    for (const char* name : {"relu", "sigmoid", "tanh", "silu", "gelu", "gelu_tanh"}) {
      std::string n = name;
      auto grad_of = [&](const Tensor& base) {
        Tensor x = base.detach().requires_grad_();
        Tensor y = n == "relu"      ? relu(x)
                   : n == "sigmoid" ? sigmoid(x)
                   : n == "tanh"    ? tanh(x)
                   : n == "silu"    ? silu(x)
                   : n == "gelu"    ? gelu(x)
                                    : gelu(x, "tanh");
        (y * y).sum().backward();
        return x.grad();
      };
      Tensor x = floats({5, 7}, d);
      SCOPED_TRACE(n + " " + dtype_name(d));
      testing::expect_close(grad_of(x.to(gpu())).cpu(), grad_of(x), tolerance(d).atol,
                            tolerance(d).rtol);
    }
  }
}

// ---- reductions, softmax ----

TEST_F(GpuTest, Sums) {
  for (DType d : {kFloat32, kFloat64, kInt64, kInt32, kBool}) {
    Tensor x = d == kBool ? sample({6, 7, 8}, d) : sample({6, 7, 8}, d);
    for (const DimList& dims : std::vector<DimList>{{}, {0}, {1}, {2}, {0, 2}, {1, 2}}) {
      expect_gpu_matches_cpu(std::string("sum ") + dtype_name(d),
                             [&](const Inputs& in) {
                               return sum(in[0].permute({2, 0, 1}), dims);
                             },
                             {x}, {1e-4, 1e-5});
    }
  }
  // A full sum large enough to be split across blocks (two passes).
  Tensor big = floats({3 << 20}, kFloat32);
  expect_gpu_matches_cpu("sum of 3M floats", [](const Inputs& in) { return sum(in[0]); }, {big},
                         {1e-2, 1e-5});
  expect_gpu_matches_cpu("mean/var", [](const Inputs& in) { return var(in[0], {1}) + mean(in[0]); },
                         {floats({50, 3000}, kFloat32)}, {1e-4, 1e-4});
  expect_gpu_matches_cpu("half sum", [](const Inputs& in) { return sum(in[0], {1}); },
                         {floats({8, 100}, kFloat16)}, {2e-2, 2e-2});
}

TEST_F(GpuTest, MaxMinWithIndices) {
  for (DType d : {kFloat32, kFloat64, kFloat16, kInt64, kInt32, kUInt8}) {
    // Small integers: plenty of ties, so the first-index rule is tested.
    Tensor x = sample({5, 300}, d);
    for (int64_t dim : {0, 1}) {
      expect_gpu_matches_cpu("max values", [&](const Inputs& in) { return max(in[0], dim).values; },
                             {x}, {0, 0});
      expect_gpu_matches_cpu(
          "max indices", [&](const Inputs& in) { return max(in[0], dim).indices; }, {x}, {0, 0});
      expect_gpu_matches_cpu("min indices",
                             [&](const Inputs& in) { return min(in[0].t(), dim).indices; }, {x},
                             {0, 0});
    }
  }
  Tensor with_nan = floats({4, 50}, kFloat32);
  with_nan.select(0, 1).narrow(0, 7, 1).fill_(std::numeric_limits<double>::quiet_NaN());
  with_nan.select(0, 1).narrow(0, 30, 1).fill_(std::numeric_limits<double>::quiet_NaN());
  expect_gpu_matches_cpu("argmax with NaN", [](const Inputs& in) { return argmax(in[0], 1); },
                         {with_nan}, {0, 0});
  expect_gpu_matches_cpu("global max", [](const Inputs& in) { return max(in[0]); },
                         {floats({1 << 20}, kFloat32)}, {0, 0});
}

TEST_F(GpuTest, SoftmaxAndLogSoftmax) {
  for (DType d : kFloats) {
    Tensor x = floats({4, 33, 5}, d) * 10;
    for (int64_t dim : {0, 1, 2}) {
      expect_gpu_matches_cpu(std::string("softmax ") + dtype_name(d),
                             [&](const Inputs& in) { return softmax(in[0], dim); }, {x});
      expect_gpu_matches_cpu(std::string("log_softmax ") + dtype_name(d),
                             [&](const Inputs& in) { return log_softmax(in[0], dim); }, {x},
                             {tolerance(d).atol * 10, tolerance(d).rtol * 10});
    }
  }
  expect_gpu_matches_cpu("softmax over 5000", [](const Inputs& in) { return softmax(in[0], 1); },
                         {floats({3, 5000}, kFloat32)});
}

// ---- indexing ----

TEST_F(GpuTest, IndexSelectGatherScatterAdd) {
  Tensor index = tensor(std::vector<int64_t>{2, 0, 1, 2});  // repeats; negatives are refused
  for (DType d : kAll) {
    Tensor x = sample({3, 4, 5}, d);
    for (int64_t dim : {0, 1, 2}) {
      expect_gpu_matches_cpu(std::string("index_select ") + dtype_name(d),
                             [&](const Inputs& in) { return index_select(in[0], dim, in[1]); },
                             {x, index}, {0, 0});
    }
  }
  Generator g(5);
  // gather: index no larger than the input outside `dim` (PyTorch's rule), any length along it.
  Tensor gather_idx = randint(0, 5, {3, 4, 6}, kInt64, g);
  expect_gpu_matches_cpu("gather",
                         [](const Inputs& in) { return gather(in[0].transpose(1, 2), 2, in[1]); },
                         {floats({3, 5, 4}, kFloat32), gather_idx}, {0, 0});
  Tensor gidx = randint(0, 4, {3, 6, 5}, kInt64, g);
  for (DType d : {kFloat32, kFloat64, kFloat16, kInt64, kInt32, kUInt8}) {
    Tensor self = sample({3, 4, 5}, d), src = sample({3, 6, 5}, d, 2);
    expect_gpu_matches_cpu(
        std::string("scatter_add ") + dtype_name(d),
        [](const Inputs& in) { return scatter_add(in[0], 1, in[1], in[2]); }, {self, gidx, src},
        tolerance(d));
  }
  Tensor bad = tensor(std::vector<int64_t>{0, 7}).to(gpu());
  testing::expect_error<std::out_of_range>(
      [&] {
        index_select(ones({3, 4}, gpu()), 0, bad);
      },
      "index 7 is out of bounds for dimension 0 with size 3");
  // index_select does not count from the end (PyTorch's rule), on the GPU as on the CPU.
  Tensor negative = tensor(std::vector<int64_t>{0, -1}).to(gpu());
  testing::expect_error<std::out_of_range>(
      [&] {
        index_select(ones({3, 4}, gpu()), 0, negative);
      },
      "index -1 is out of bounds for dimension 0 with size 3");
  // The device is still usable after the error (no poisoned CUDA context).
  testing::expect_close((ones({2}, gpu()) * 2).cpu(), full({2}, 2.0), 0, 0);
}

// ---- creation and random ----

TEST_F(GpuTest, FillArangeAndFactories) {
  for (DType d : kAll) {
    testing::expect_close(full({3, 4}, 3, TensorOptions(d).with_device(gpu())).cpu(),
                          full({3, 4}, 3, d), 0, 0);
  }
  testing::expect_close(arange(0, 10, 0.5, gpu()).cpu(), arange(0, 10, 0.5), 0, 0);
  testing::expect_close(arange(7, TensorOptions(kInt32).with_device(gpu())).cpu(),
                        arange(7, kInt32), 0, 0);
  Tensor t = zeros({4, 6}, gpu());
  t.t().slice(0, 1, 5, 2).fill_(9);  // fill through a strided view
  Tensor expected = zeros({4, 6});
  expected.t().slice(0, 1, 5, 2).fill_(9);
  testing::expect_close(t.cpu(), expected, 0, 0);
}

TEST_F(GpuTest, RandomNumbersEqualTheCpuOnes) {
  for (DType d : {kFloat32, kFloat64, kFloat16, kBFloat16}) {
    Generator a(123), b(123);
    testing::expect_close(rand({1001}, TensorOptions(d).with_device(gpu()), a).cpu(),
                          rand({1001}, d, b), 0, 0);
    testing::expect_close(randn({1001}, TensorOptions(d).with_device(gpu()), a).cpu(),
                          randn({1001}, d, b), 1e-12, d == kFloat64 ? 1e-14 : 1e-6);
  }
  Generator a(9), b(9);
  testing::expect_close(randint(-3, 17, {513}, TensorOptions(kInt64).with_device(gpu()), a).cpu(),
                        randint(-3, 17, {513}, kInt64, b), 0, 0);
}

// ---- matmul ----

TEST_F(GpuTest, MatmulEveryDtypeAndLayout) {
  cuda::set_allow_tf32(false);
  for (DType d : kFloats) {
    Tolerance tol = d == kFloat32   ? Tolerance{1e-4, 1e-4}
                    : d == kFloat64 ? Tolerance{1e-10, 1e-10}
                                    : Tolerance{5e-2, 2e-2};
    Tensor a = floats({4, 33, 65}, d, 1), b = floats({4, 65, 17}, d, 2);
    expect_gpu_matches_cpu(
        std::string("bmm ") + dtype_name(d), [](const Inputs& in) { return bmm(in[0], in[1]); },
        {a, b}, tol);
    // Transposed operands need no copy (op T); a sliced one with no unit stride does.
    expect_gpu_matches_cpu(
        std::string("bmm transposed ") + dtype_name(d),
        [](const Inputs& in) { return bmm(in[1].transpose(1, 2), in[0].transpose(1, 2)); }, {a, b},
        tol);
    expect_gpu_matches_cpu(
        std::string("matmul broadcast ") + dtype_name(d),
        [](const Inputs& in) { return matmul(in[0], in[1].select(0, 0)); }, {a, b}, tol);
    expect_gpu_matches_cpu(
        std::string("matmul sliced ") + dtype_name(d),
        [](const Inputs& in) { return matmul(in[0].slice(2, 0, 64, 2), in[1].slice(1, 0, 64, 2)); },
        {a, b}, tol);
  }
  expect_gpu_matches_cpu("int64 matmul", [](const Inputs& in) { return matmul(in[0], in[1]); },
                         {sample({5, 7}, kInt64), sample({7, 3}, kInt64)}, {0, 0});
  expect_gpu_matches_cpu("k = 0", [](const Inputs& in) { return matmul(in[0], in[1]); },
                         {zeros({3, 0}), zeros({0, 4})}, {0, 0});
  expect_gpu_matches_cpu(
      "linear", [](const Inputs& in) { return linear(in[0], in[1], in[2]); },
      {floats({8, 20}, kFloat32), floats({6, 20}, kFloat32, 2), floats({6}, kFloat32, 3)},
      {1e-4, 1e-4});
  cuda::set_allow_tf32(true);
  expect_gpu_matches_cpu("tf32", [](const Inputs& in) { return matmul(in[0], in[1]); },
                         {floats({64, 256}, kFloat32), floats({256, 32}, kFloat32, 2)},
                         {5e-2, 1e-2});
  cuda::set_allow_tf32(false);
}

// ---- fused optimizer steps ----

TEST_F(GpuTest, OptimizerStepsMatchTheCpu) {
  AdamStepParams adam{1e-2, 0.9, 0.999, 1e-8, 0.01, true};
  Tensor step = scalar_tensor(3.0, kFloat64);  // the third update: corrections 1 - beta^3
  SgdStepParams sgd{0.1, 0.9, 0.0, 1e-4, true, false};
  for (DType d : {kFloat32, kFloat64}) {
    Tensor p = floats({30, 7}, d, 1), g = floats({30, 7}, d, 2), m = floats({30, 7}, d, 3),
           v = abs(floats({30, 7}, d, 4));
    std::vector<Tensor> cpu = {p.clone(), m.clone(), v.clone()};
    std::vector<Tensor> dev = {p.to(gpu()), m.to(gpu()), v.to(gpu())};
    Tensor g_dev = g.to(gpu());
    dispatch<AdamStepKernel>(OpKey::adam_step, Device(kCPU), cpu[0], g, cpu[1], cpu[2], step, adam);
    dispatch<AdamStepKernel>(OpKey::adam_step, gpu(), dev[0], g_dev, dev[1], dev[2], step, adam);
    for (int i = 0; i < 3; ++i) testing::expect_close(dev[i].cpu(), cpu[i], 1e-6, 1e-5);
    dispatch<SgdStepKernel>(OpKey::sgd_step, Device(kCPU), cpu[0], g, cpu[1], sgd);
    dispatch<SgdStepKernel>(OpKey::sgd_step, gpu(), dev[0], g_dev, dev[1], sgd);
    for (int i = 0; i < 2; ++i) testing::expect_close(dev[i].cpu(), cpu[i], 1e-6, 1e-5);
  }
}

TEST_F(GpuTest, JoinsAndViewsComposeOnTheGpu) {
  expect_gpu_matches_cpu(
      "cat/stack",
      [](const Inputs& in) {
        return stack({cat({in[0], in[1].t()}, 0), cat({in[1].t(), in[0]}, 0)}, 1);
      },
      {floats({3, 4}, kFloat32), floats({4, 3}, kFloat32, 2)}, {0, 0});
  expect_gpu_matches_cpu("one_hot", [](const Inputs& in) { return one_hot(in[0], 5); },
                         {tensor(std::vector<int64_t>{0, 3, 4, 1})}, {0, 0});
}

}  // namespace
}  // namespace wick
