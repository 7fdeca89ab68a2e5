// The layers on the GPU against the CPU, forward and backward: cuDNN convolution (heuristic and
// benchmark algorithm selection, TF32 off and on), pooling, batch norm, and a whole CNN training
// step through nn modules and an optimizer.
#include "nn/containers.h"
#include "nn/functional.h"
#include "nn/layers.h"
#include "nn/optim.h"
#include "tests/gpu/gpu_test_util.h"

namespace wick {
namespace {

using gpu_testing::gpu;
using gpu_testing::GpuTest;
using gpu_testing::Tolerance;

Tensor floats(const Shape& shape, DType dtype = kFloat32, uint64_t seed = 1) {
  Generator g(seed);
  return randn(shape, kFloat64, g).to(dtype);
}

// The outputs and input gradients of `f` on the CPU and the GPU; `f` gets leaves requiring grad
// and returns one tensor whose sum of squares is backpropagated.
using Layer = std::function<Tensor(const std::vector<Tensor>&)>;

void expect_layer_matches(const std::string& what, const Layer& f,
                          const std::vector<Tensor>& inputs, Tolerance tol) {
  SCOPED_TRACE(what);
  auto run = [&](Device device) {
    std::vector<Tensor> leaves;
    for (const Tensor& t : inputs) {
      leaves.push_back(t.defined() ? t.to(device).detach().requires_grad_() : Tensor());
    }
    Tensor out = f(leaves);
    (out * out).sum().backward();
    std::vector<Tensor> results = {out.detach().cpu()};
    for (const Tensor& l : leaves) {
      if (l.defined()) results.push_back(l.grad().cpu());
    }
    return results;
  };
  std::vector<Tensor> expected = run(Device(kCPU)), actual = run(gpu());
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    SCOPED_TRACE(i == 0 ? std::string("output") : "gradient of input " + std::to_string(i - 1));
    testing::expect_close(actual[i], expected[i], tol.atol, tol.rtol);
  }
}

struct ConvCase {
  const char* name;
  Shape input, weight;
  Pair2 stride, padding, dilation;
  int64_t groups;
  bool bias;
};

const ConvCase kConvCases[] = {
    {"3x3", {2, 3, 9, 9}, {4, 3, 3, 3}, 1, 0, 1, 1, true},
    {"padded, strided", {2, 4, 10, 11}, {6, 4, 3, 3}, 2, 1, 1, 1, true},
    {"dilated, no bias", {1, 2, 12, 12}, {3, 2, 3, 3}, 1, 2, 2, 1, false},
    {"grouped", {2, 6, 8, 8}, {9, 2, 3, 3}, 1, 1, 1, 3, true},
    {"depthwise 5x1", {2, 4, 8, 7}, {4, 1, 5, 1}, {1, 2}, {2, 0}, 1, 4, false},
    {"1x1", {4, 16, 5, 5}, {8, 16, 1, 1}, 1, 0, 1, 1, true},
};

TEST_F(GpuTest, Conv2dForwardAndBackward) {
  cuda::set_cudnn_allow_tf32(false);  // exact float32, to compare with the CPU
  for (bool benchmark : {false, true}) {
    cuda::set_cudnn_benchmark(benchmark);
    for (const ConvCase& c : kConvCases) {
      expect_layer_matches(std::string(c.name) + (benchmark ? " (benchmark mode)" : ""),
                           [&](const std::vector<Tensor>& in) {
                             return conv2d(in[0], in[1], in[2], c.stride, c.padding, c.dilation,
                                           c.groups);
                           },
                           {floats(c.input, kFloat32, 1), floats(c.weight, kFloat32, 2),
                            c.bias ? floats({c.weight[0]}, kFloat32, 3) : Tensor()},
                           {1e-4, 1e-4});
    }
  }
  cuda::set_cudnn_benchmark(false);
  cuda::set_cudnn_allow_tf32(true);
}

TEST_F(GpuTest, Conv2dReducedPrecision) {
  for (DType d : {kFloat16, kBFloat16}) {
    for (const ConvCase& c : kConvCases) {
      Tensor x = floats(c.input, d, 1), w = floats(c.weight, d, 2);
      Tensor expected = conv2d(x.to(kFloat32), w.to(kFloat32), Tensor(), c.stride, c.padding,
                               c.dilation, c.groups);
      Tensor actual =
          conv2d(x.to(gpu()), w.to(gpu()), Tensor(), c.stride, c.padding, c.dilation, c.groups);
      SCOPED_TRACE(std::string(c.name) + " " + dtype_name(d));
      EXPECT_EQ(actual.dtype(), d);
      testing::expect_close(actual.cpu(), expected, 0.1, 3e-2);
    }
  }
  // TF32 (the default for float32 convolutions, as in PyTorch) is close, not exact.
  Tensor x = floats({2, 16, 12, 12}), w = floats({8, 16, 3, 3}, kFloat32, 2);
  testing::expect_close(conv2d(x.to(gpu()), w.to(gpu())).cpu(), conv2d(x, w), 0.1, 2e-2);
}

TEST_F(GpuTest, Pooling) {
  Tensor x = floats({2, 3, 11, 10});
  Tolerance exact{1e-6, 1e-6};
  expect_layer_matches(
      "max 2x2", [](const auto& in) { return max_pool2d(in[0], 2); }, {x}, exact);
  expect_layer_matches(
      "max 3x3 s2 p1 ceil", [](const auto& in) { return max_pool2d(in[0], 3, 2, 1, 1, true); }, {x},
      exact);
  expect_layer_matches(
      "max dilated",
      [](const auto& in) {
        return max_pool2d(in[0], {3, 2}, 1, {1, 0}, 2);
      },
      {x}, exact);
  expect_layer_matches(
      "max on a view", [](const auto& in) { return max_pool2d(in[0].transpose(2, 3), 2); }, {x},
      exact);
  Tensor xi = floats({1, 2, 6, 6});
  auto [v_cpu, i_cpu] = max_pool2d_with_indices(xi, 3, 2, 1);
  auto [v_gpu, i_gpu] = max_pool2d_with_indices(xi.to(gpu()), 3, 2, 1);
  testing::expect_close(i_gpu.cpu(), i_cpu, 0, 0);
  expect_layer_matches(
      "avg 2x2", [](const auto& in) { return avg_pool2d(in[0], 2); }, {x}, exact);
  expect_layer_matches(
      "avg 3x3 s2 p1 ceil, pad excluded",
      [](const auto& in) { return avg_pool2d(in[0], 3, 2, 1, true, false); }, {x}, exact);
  expect_layer_matches(
      "avg 3x3 s1 p1, pad included",
      [](const auto& in) { return avg_pool2d(in[0], 3, 1, 1, false, true); }, {x}, exact);
  for (Pair2 size : {Pair2(1), Pair2(3, 4), Pair2(7), Pair2(13, 20)}) {
    expect_layer_matches(
        "adaptive " + std::to_string(size.h) + "x" + std::to_string(size.w),
        [&](const auto& in) { return adaptive_avg_pool2d(in[0], size); }, {x}, exact);
  }
  expect_layer_matches("half max pool",
                       [](const auto& in) { return max_pool2d(in[0], 2).to(kFloat32); },
                       {x.to(kFloat16)}, {1e-3, 1e-3});
}

TEST_F(GpuTest, BatchNormTrainingAndEvaluation) {
  for (const Shape& shape : {Shape{8, 5, 6, 7}, Shape{16, 4}}) {
    int64_t c = shape[1];
    Tensor x = floats(shape) * 3 + 1, w = floats({c}, kFloat32, 2), b = floats({c}, kFloat32, 3);
    expect_layer_matches(
        "training " + to_string(shape),
        [&](const auto& in) { return batch_norm(in[0], Tensor(), Tensor(), in[1], in[2], true); },
        {x, w, b}, {1e-4, 1e-4});
    expect_layer_matches("training without affine",
                         [&](const auto& in) {
                           return batch_norm(in[0], Tensor(), Tensor(), Tensor(), Tensor(), true);
                         },
                         {x}, {1e-4, 1e-4});
    // Running statistics are updated in place on the device, like on the CPU.
    Tensor rm = floats({c}, kFloat32, 4), rv = abs(floats({c}, kFloat32, 5)) + 0.5;
    Tensor rm_gpu = rm.to(gpu()), rv_gpu = rv.to(gpu());
    Tensor rm_cpu = rm.clone(), rv_cpu = rv.clone();
    batch_norm(x, rm_cpu, rv_cpu, w, b, true, 0.3);
    batch_norm(x.to(gpu()), rm_gpu, rv_gpu, w.to(gpu()), b.to(gpu()), true, 0.3);
    testing::expect_close(rm_gpu.cpu(), rm_cpu, 1e-5, 1e-5);
    testing::expect_close(rv_gpu.cpu(), rv_cpu, 1e-5, 1e-5);
    testing::expect_close(
        batch_norm(x.to(gpu()), rm_gpu, rv_gpu, w.to(gpu()), b.to(gpu()), false).cpu(),
        batch_norm(x, rm_cpu, rv_cpu, w, b, false), 1e-5, 1e-5);
  }
  Tensor x64 = floats({4, 3, 5}, kFloat64);
  expect_layer_matches("float64",
                       [](const auto& in) {
                         return batch_norm(in[0], Tensor(), Tensor(), Tensor(), Tensor(), true);
                       },
                       {x64}, {1e-10, 1e-10});
}

// One training step of a small CNN with identical weights on both devices: same loss, same
// gradients, same updated weights.
TEST_F(GpuTest, CnnTrainingStepMatchesTheCpu) {
  cuda::set_cudnn_allow_tf32(false);
  auto make = [] {
    manual_seed(7);
    using std::make_shared;
    return make_shared<nn::Sequential>(std::vector<std::shared_ptr<nn::Module>>{
        make_shared<nn::Conv2d>(1, 8, 3), make_shared<nn::ReLU>(), make_shared<nn::MaxPool2d>(2),
        make_shared<nn::Conv2d>(8, 16, 3, 1, 1), make_shared<nn::ReLU>(),
        make_shared<nn::Flatten>(), make_shared<nn::Linear>(16 * 6 * 6, 10)});
  };
  auto cpu_model = make(), gpu_model = make();
  gpu_model->to(gpu());
  Tensor images = floats({16, 1, 14, 14});
  Generator g(3);
  Tensor labels = randint(0, 10, {16}, kInt64, g);
  optim::SGD cpu_opt(cpu_model->parameters(), optim::SGDOptions{0.1, 0.9});
  optim::SGD gpu_opt(gpu_model->parameters(), optim::SGDOptions{0.1, 0.9});
  for (int step = 0; step < 3; ++step) {
    Tensor cpu_loss = nn::functional::cross_entropy((*cpu_model)(images), labels);
    Tensor gpu_loss =
        nn::functional::cross_entropy((*gpu_model)(images.to(gpu())), labels.to(gpu()));
    EXPECT_NEAR(gpu_loss.item<double>(), cpu_loss.item<double>(), 1e-4) << "step " << step;
    cpu_opt.zero_grad();
    gpu_opt.zero_grad();
    cpu_loss.backward();
    gpu_loss.backward();
    cpu_opt.step();
    gpu_opt.step();
  }
  auto cpu_params = cpu_model->parameters(), gpu_params = gpu_model->parameters();
  for (size_t i = 0; i < cpu_params.size(); ++i) {
    EXPECT_TRUE(gpu_params[i].device().is_cuda());
    testing::expect_close(gpu_params[i].cpu(), cpu_params[i], 1e-4, 1e-3);
  }
  cuda::set_cudnn_allow_tf32(true);
}

}  // namespace
}  // namespace wick
