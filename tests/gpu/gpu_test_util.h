// Helpers shared by the GPU tests: a fixture that skips (with the reason) when there is no CUDA
// device, and a comparison of an op on the GPU against the same op on the CPU.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "cuda/api.h"
#include "tests/cpp/test_util.h"

namespace wick::gpu_testing {

// Every GPU test derives from this: without a device it is skipped, saying why.
class GpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (cuda::is_available()) return;
    std::string why = "no CUDA device";
    try {
      cuda::current_device();
    } catch (const std::exception& e) {
      why = e.what();
    }
    GTEST_SKIP() << "needs a CUDA device: " << why;
  }
};

inline Device gpu() { return Device(kCUDA, 0); }

struct Tolerance {
  double atol, rtol;
};

// How closely a GPU result must match the CPU's, by dtype: the GPU's transcendental functions
// differ from glibc's by an ulp or two, and reductions add in another order.
inline Tolerance tolerance(DType dtype) {
  switch (dtype) {
    case kFloat64:
      return {1e-10, 1e-10};
    case kFloat32:
      return {1e-5, 1e-5};
    case kFloat16:
      return {1e-3, 2e-3};
    case kBFloat16:
      return {1e-2, 1.6e-2};
    default:
      return {0, 0};
  }
}

using Op = std::function<Tensor(const std::vector<Tensor>&)>;

// Runs `op` on `inputs` on the CPU and on copies of them on the GPU, and compares.
inline void expect_gpu_matches_cpu(const std::string& what, const Op& op,
                                   const std::vector<Tensor>& inputs, Tolerance tol) {
  SCOPED_TRACE(what);
  std::vector<Tensor> on_gpu;
  for (const Tensor& t : inputs) on_gpu.push_back(t.to(gpu()));
  Tensor expected = op(inputs);
  Tensor actual = op(on_gpu);
  ASSERT_TRUE(actual.device().is_cuda()) << what << " ran on " << actual.device().str();
  EXPECT_EQ(actual.dtype(), expected.dtype());
  testing::expect_close(actual.cpu(), expected, tol.atol, tol.rtol);
}

inline void expect_gpu_matches_cpu(const std::string& what, const Op& op,
                                   const std::vector<Tensor>& inputs) {
  expect_gpu_matches_cpu(what, op, inputs, tolerance(inputs.at(0).dtype()));
}

}  // namespace wick::gpu_testing
