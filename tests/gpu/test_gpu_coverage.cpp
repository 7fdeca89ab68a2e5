// What the first GPU run must also prove: the cuDNN and the
// hand-written paths of softmax, average pooling and batch norm against the CPU; the cases no
// other GPU test covered (fp16/bf16 convolution backward, fp64 convolution, non-contiguous
// convolution inputs, bf16 max/min/scatter_add, long softmax rows, eval-mode batch-norm
// backward, half average pooling, optimizers in fp16/bf16, ops on a non-default stream,
// reductions with more than 65,535 outputs, NaN/inf to integer casts, a tensor over 2**31
// elements); tensors on the requested device; synchronous pinned copies; rand's upper bound.
#include <cmath>
#include <limits>

#include "nn/functional.h"
#include "nn/optim.h"
#include "tests/gpu/gpu_test_util.h"

namespace wick {
namespace {

using gpu_testing::expect_gpu_matches_cpu;
using gpu_testing::gpu;
using gpu_testing::GpuTest;
using gpu_testing::tolerance;
using gpu_testing::Tolerance;
using Inputs = std::vector<Tensor>;

Tensor floats(const Shape& shape, DType dtype = kFloat32, uint64_t seed = 1) {
  Generator g(seed);
  return randn(shape, kFloat64, g).to(dtype);
}

// Output and input gradients of `f` (sum of squares backpropagated) on the CPU and the GPU.
void expect_layer_matches(const std::string& what, const std::function<Tensor(const Inputs&)>& f,
                          const Inputs& inputs, Tolerance tol) {
  SCOPED_TRACE(what);
  auto run = [&](Device device) {
    Inputs leaves;
    for (const Tensor& t : inputs) leaves.push_back(t.to(device).detach().requires_grad_());
    Tensor out = f(leaves);
    (out.to(kFloat32) * out.to(kFloat32)).sum().backward();
    Inputs results = {out.detach().cpu()};
    for (const Tensor& l : leaves) results.push_back(l.grad().cpu());
    return results;
  };
  Inputs expected = run(Device(kCPU)), actual = run(gpu());
  for (size_t i = 0; i < expected.size(); ++i) {
    SCOPED_TRACE(i == 0 ? std::string("output") : "gradient " + std::to_string(i - 1));
    testing::expect_close(actual[i], expected[i], tol.atol, tol.rtol);
  }
}

// Runs the body with cuDNN switched on and then off (Note [cuDNN or hand-written]).
template <class F>
void for_both_paths(F body) {
  for (bool enabled : {true, false}) {
    SCOPED_TRACE(enabled ? "cuDNN" : "hand-written");
    cuda::set_cudnn_enabled(enabled);
    body();
  }
  cuda::set_cudnn_enabled(true);
}

TEST_F(GpuTest, SoftmaxBothPathsIncludingLongRowsAndMiddleDims) {
  for_both_paths([] {
    for (DType d : {kFloat32, kFloat64, kFloat16, kBFloat16}) {
      for (const auto& [shape, dim] : std::vector<std::pair<Shape, int64_t>>{
               {{4, 10}, 1}, {{3, 70000}, 1}, {{4, 33, 5}, 1}, {{7, 3, 2}, 0}}) {
        Tensor x = floats(shape, d, 3);
        expect_gpu_matches_cpu("softmax", [&](const Inputs& in) { return softmax(in[0], dim); },
                               {x});
        expect_gpu_matches_cpu("log_softmax",
                               [&](const Inputs& in) { return log_softmax(in[0], dim); }, {x});
      }
    }
  });
}

TEST_F(GpuTest, AveragePoolingBothPathsIncludingHalf) {
  for_both_paths([] {
    for (DType d : {kFloat32, kFloat64, kFloat16}) {
      for (bool include_pad : {true, false}) {
        expect_layer_matches(
            "avg_pool2d 3x3 s2 p1",
            [&](const Inputs& in) { return avg_pool2d(in[0], 3, 2, 1, false, include_pad); },
            {floats({2, 3, 9, 11}, d, 4)}, tolerance(d));
      }
      expect_layer_matches(
          "avg_pool2d ceil_mode (hand-written either way)",
          [&](const Inputs& in) { return avg_pool2d(in[0], 2, 2, 0, true); },
          {floats({2, 3, 9, 9}, d, 5)}, tolerance(d));
    }
  });
}

TEST_F(GpuTest, BatchNormBothPathsTrainingAndEvalBackward) {
  for_both_paths([] {
    for (DType d : {kFloat32, kFloat64}) {
      for (const Shape& shape : {Shape{8, 4, 5, 5}, Shape{16, 6}}) {
        for (bool training : {true, false}) {
          Tensor rm_cpu = zeros({shape[1]}, d), rv_cpu = ones({shape[1]}, d);
          Tensor rm_gpu = rm_cpu.to(gpu()), rv_gpu = rv_cpu.to(gpu());
          expect_layer_matches(
              training ? "batch_norm training" : "batch_norm eval (backward too)",
              [&](const Inputs& in) {
                bool on_gpu = in[0].device().is_cuda();
                return batch_norm(in[0], on_gpu ? rm_gpu : rm_cpu, on_gpu ? rv_gpu : rv_cpu, in[1],
                                  in[2], training, 0.1, 1e-5);
              },
              {floats(shape, d, 6) * 3 + 1, floats({shape[1]}, d, 7), floats({shape[1]}, d, 8)},
              {1e-4, 1e-4});
          testing::expect_close(rm_gpu.cpu(), rm_cpu, 1e-5, 1e-5);
          testing::expect_close(rv_gpu.cpu(), rv_cpu, 1e-5, 1e-5);
        }
      }
    }
  });
}

TEST_F(GpuTest, ConvolutionInHalfBfloatAndDoubleAndOnNonContiguousInputs) {
  cuda::set_cudnn_allow_tf32(false);
  for (DType d : {kFloat64, kFloat16, kBFloat16}) {
    Tolerance tol = d == kFloat64 ? Tolerance{1e-9, 1e-9} : Tolerance{5e-2, 5e-2};
    expect_layer_matches(
        "conv2d", [](const Inputs& in) { return conv2d(in[0], in[1], in[2], 1, 1); },
        {floats({2, 3, 8, 8}, d, 9), floats({4, 3, 3, 3}, d, 10) * 0.3, floats({4}, d, 11)}, tol);
  }
  // A transposed (non-contiguous) input and a size-1 batch with an odd stride.
  expect_layer_matches(
      "conv2d on a transposed input",
      [](const Inputs& in) { return conv2d(in[0].transpose(2, 3), in[1], Tensor(), 1, 1); },
      {floats({2, 3, 7, 9}, kFloat32, 12), floats({5, 3, 3, 3}, kFloat32, 13)}, {1e-4, 1e-4});
  expect_layer_matches(
      "conv2d on a sliced size-1 batch",
      [](const Inputs& in) { return conv2d(in[0].slice(0, 1, 2), in[1], Tensor(), 1, 0); },
      {floats({3, 2, 6, 6}, kFloat32, 14), floats({2, 2, 3, 3}, kFloat32, 15)}, {1e-4, 1e-4});
  cuda::set_cudnn_allow_tf32(true);
}

TEST_F(GpuTest, BfloatMaxMinAndScatterAdd) {
  Tensor x = floats({37, 130}, kBFloat16, 16);
  expect_gpu_matches_cpu("max", [](const Inputs& in) { return max(in[0]); }, {x});
  expect_gpu_matches_cpu("min", [](const Inputs& in) { return min(in[0]); }, {x});
  expect_gpu_matches_cpu("max dim", [](const Inputs& in) { return max(in[0], 1).values; }, {x});
  expect_gpu_matches_cpu("amax", [](const Inputs& in) { return amax(in[0], {0}); }, {x});
  Tensor index = randint(0, 5, {37, 130});
  expect_gpu_matches_cpu("scatter_add",
                         [&](const Inputs& in) {
                           return scatter_add(zeros({5, 130}, kBFloat16).to(in[0].device()), 0,
                                              index.to(in[0].device()), in[0]);
                         },
                         {randint(-3, 4, {37, 130}).to(kBFloat16)},
                         {0, 0});  // sums exact in bfloat16
}

TEST_F(GpuTest, GlobalMaxAndArgmaxOfALargeTensor) {
  Tensor x = floats({3 << 20}, kFloat32, 17);
  expect_gpu_matches_cpu("max", [](const Inputs& in) { return max(in[0]); }, {x});
  expect_gpu_matches_cpu("argmax", [](const Inputs& in) { return argmax(in[0]); }, {x});
}

TEST_F(GpuTest, ReductionsWithMoreThan65535Outputs) {
  Tensor x = floats({70000, 3}, kFloat32, 18), y = floats({3, 70000}, kFloat32, 19);
  expect_gpu_matches_cpu("sum rows", [](const Inputs& in) { return sum(in[0], {1}); }, {x});
  expect_gpu_matches_cpu("sum columns", [](const Inputs& in) { return sum(in[0], {0}); }, {y});
  expect_gpu_matches_cpu("max dim", [](const Inputs& in) { return max(in[0], 1).values; }, {x});
  expect_gpu_matches_cpu("softmax rows", [](const Inputs& in) { return softmax(in[0], 1); }, {x});
}

// Note [column sums] in cuda/reduce.cu: outputs adjacent in memory, leading dims reduced.
TEST_F(GpuTest, ColumnSumsInEveryFloatDtype) {
  for (DType d : {kFloat32, kFloat64, kFloat16, kBFloat16}) {
    Tensor x = floats({257, 100}, d, 24), y = floats({5, 7, 40}, d, 25);
    Tolerance tol = tolerance(d);
    tol.atol *= 20;  // 257 terms, added in another order than on the CPU
    expect_gpu_matches_cpu(
        "bias-gradient shape", [](const Inputs& in) { return sum(in[0], {0}); }, {x}, tol);
    expect_gpu_matches_cpu(
        "two leading dims",
        [](const Inputs& in) {
          return sum(in[0], {0, 1});
        },
        {y}, tol);
  }
  expect_layer_matches(
      "linear (bias gradient)", [](const Inputs& in) { return linear(in[0], in[1], in[2]); },
      {floats({64, 48}, kFloat32, 26), floats({40, 48}, kFloat32, 27), floats({40}, kFloat32, 28)},
      {1e-4, 1e-4});
}

TEST_F(GpuTest, NanAndInfinityToIntegerCastsMatchTheCpu) {
  const double inf = std::numeric_limits<double>::infinity();
  Tensor x = tensor({std::nan(""), inf, -inf, 1e30, -1e30, 2.5, -2.5});
  for (DType to : {kInt64, kInt32, kUInt8, kBool}) {
    // Undefined in C++; wick defines it the same on both devices (the CPU is the reference).
    expect_gpu_matches_cpu(std::string("to ") + dtype_name(to),
                           [&](const Inputs& in) { return in[0].to(to); }, {x}, {0, 0});
  }
}

TEST_F(GpuTest, OptimizersInHalfAndBfloat) {
  for (DType d : {kFloat16, kBFloat16}) {
    auto run = [&](Device device) {
      Tensor p = floats({64}, d, 20).to(device).detach().requires_grad_();
      optim::Adam adam({p}, optim::AdamOptions{1e-2});
      for (int step = 0; step < 3; ++step) {
        p.set_grad(floats({64}, d, 21 + step).to(device));
        adam.step();
      }
      return p.detach().cpu();
    };
    testing::expect_close(run(gpu()), run(Device(kCPU)), 2e-2, 2e-2);
  }
}

TEST_F(GpuTest, OpsOnANonDefaultStream) {
  cuda::Stream side = cuda::Stream::create();
  Tensor a = floats({256, 300}, kFloat32, 22), b = floats({300, 64}, kFloat32, 23);
  Tensor expected = softmax(matmul(a, b), 1).sum({0});
  Tensor result;
  {
    cuda::StreamGuard guard(side);
    Tensor ga = a.to(gpu()), gb = b.to(gpu());  // made, used and read back on the side stream
    result = softmax(matmul(ga, gb), 1).sum({0}).cpu();
  }
  testing::expect_close(result, expected, 1e-3, 1e-3);
}

TEST_F(GpuTest, ATensorOverTwoToTheThirtyOneElements) {
  const int64_t n = (int64_t{1} << 31) + 4096;
  cuda::DeviceProperties props = cuda::get_device_properties(0);
  if (props.total_memory < 16 * n) GTEST_SKIP() << "needs " << 16 * n << " bytes of GPU memory";
  Tensor x = full({n}, 1, TensorOptions(kUInt8).with_device(gpu()));
  x.slice(0, n - 2, n).fill_(3);
  Tensor y = x + x;  // elementwise over the 32-bit boundary
  EXPECT_EQ(y.slice(0, n - 1, n).cpu().item<int64_t>(), 6);
  EXPECT_EQ(y.slice(0, 0, 1).cpu().item<int64_t>(), 2);
  Tensor h = x.to(kFloat16);  // a copy with a cast
  EXPECT_EQ(h.slice(0, n - 1, n).cpu().item<double>(), 3.0);
  EXPECT_EQ(x.to(kInt64).sum().cpu().item<int64_t>(), n + 4);
}

TEST_F(GpuTest, TensorsLandOnTheRequestedDevice) {
  int count = cuda::device_count();
  if (count < 2) GTEST_SKIP() << "needs two GPUs";
  Tensor x = ones({4}).to(Device(kCUDA, 1));
  EXPECT_EQ(x.device(), Device(kCUDA, 1));
  EXPECT_EQ(cuda::current_device(), 0) << "the device guard must restore the current device";
}

TEST_F(GpuTest, PinnedCopiesAreSynchronousUnlessAskedOtherwise) {
  Tensor host = cuda::pin_memory(full({1 << 22}, 1.0f));
  Tensor gpu_copy = host.to(gpu());
  host.fill_(2.0f);  // safe: the copy has finished
  EXPECT_EQ(gpu_copy.sum().cpu().item<double>(), double(1 << 22));
  {
    cuda::NonBlockingCopies non_blocking;
    Tensor again = host.to(gpu());
    cuda::synchronize();
    EXPECT_EQ(again.sum().cpu().item<double>(), 2.0 * (1 << 22));
  }
  // Many non-blocking copies of one pinned block keep a bounded number of events.
  cuda::NonBlockingCopies non_blocking;
  for (int i = 0; i < 500; ++i) Tensor t = host.slice(0, 0, 16).to(gpu());
  cuda::synchronize();
}

TEST_F(GpuTest, RandInHalfPrecisionStaysBelowItsBound) {
  for (DType d : {kFloat16, kBFloat16}) {
    Tensor u = rand({1 << 22}, TensorOptions(d).with_device(gpu())).to(kFloat32);
    EXPECT_LT(u.max().cpu().item<float>(), 1.0f);
  }
}

}  // namespace
}  // namespace wick
