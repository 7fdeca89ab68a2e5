// GPU benchmarks for tests/gpu/run.sh. Each prints a "SUMMARY" line that run.sh collects:
//   - GEMM TFLOP/s through wick's matmul (output allocation and dispatch included) next to
//     cuBLAS called directly on preallocated buffers: cuBLAS's own figure on this GPU.
//   - Allocation: wick's caching allocator next to cudaMalloc + cudaFree (median ns).
//   - Bandwidth of an elementwise add next to a device-to-device memcpy.
//   - A 3x3 convolution with cuDNN's heuristic choice and with benchmark mode.
//   - MNIST CNN (examples/mnist_models.h) training throughput in samples/s.
//
//   ./build-gpu/tests/gpu/bench_gpu [--quick]
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "cuda/api.h"
#include "examples/mnist_models.h"
#include "nn/functional.h"
#include "nn/optim.h"
#include "wick.h"

using namespace wick;

namespace {

const Device kGpu(kCUDA, 0);

// Milliseconds per call of `f`, timed with CUDA events over `iters` calls after a warm-up.
double time_ms(const std::function<void()>& f, int iters) {
  f();
  cuda::synchronize();
  cuda::Event start(true), stop(true);
  start.record();
  for (int i = 0; i < iters; ++i) f();
  stop.record();
  stop.synchronize();
  return start.elapsed_ms(stop) / iters;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void gemm(int n, DType dtype, bool tf32, int iters) {
  Tensor a = randn({n, n}, TensorOptions(dtype).with_device(kGpu));
  Tensor b = randn({n, n}, TensorOptions(dtype).with_device(kGpu));
  cuda::set_allow_tf32(tf32);
  double wick_ms = time_ms([&] { Tensor c = matmul(a, b); }, iters);
  cuda::set_allow_tf32(false);

  // cuBLAS directly, on preallocated buffers, with the same types (C^T = B^T A^T).
  Tensor c = empty({n, n}, TensorOptions(dtype).with_device(kGpu));
  cublasHandle_t handle;
  cublasCreate(&handle);
  cudaDataType type = dtype == kFloat32 ? CUDA_R_32F : dtype == kFloat16 ? CUDA_R_16F : CUDA_R_16BF;
  cublasComputeType_t compute = tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  float alpha = 1, beta = 0;
  double cublas_ms = time_ms(
      [&] {
        cublasStatus_t status = cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha,
                                             b.data_ptr(), type, n, a.data_ptr(), type, n, &beta,
                                             c.data_ptr(), type, n, compute, CUBLAS_GEMM_DEFAULT);
        if (status != CUBLAS_STATUS_SUCCESS) {
          throw std::runtime_error(std::string("cublasGemmEx: ") + cublasGetStatusString(status));
        }
      },
      iters);
  cublasDestroy(handle);
  double flops = 2.0 * n * n * static_cast<double>(n);
  const char* name = tf32 ? "tf32" : dtype_name(dtype);
  std::printf("SUMMARY gemm %-8s n=%-5d wick %7.1f TFLOP/s   cuBLAS %7.1f TFLOP/s   (%.0f%%)\n",
              name, n, flops / wick_ms / 1e9, flops / cublas_ms / 1e9, 100 * cublas_ms / wick_ms);
}

void allocation() {
  Allocator* allocator = get_allocator(kCUDA);
  for (size_t size : {size_t{512}, size_t{1} << 20, size_t{64} << 20}) {
    allocator->deallocate(allocator->allocate(size), size);
    std::vector<double> cached, raw;
    for (int rep = 0; rep < 7; ++rep) {
      auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < 100000; ++i) allocator->deallocate(allocator->allocate(size), size);
      auto t1 = std::chrono::steady_clock::now();
      cached.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() / 100000);
      t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < 200; ++i) {
        void* p = nullptr;
        if (cudaMalloc(&p, size) != cudaSuccess || cudaFree(p) != cudaSuccess) {
          throw std::runtime_error("cudaMalloc/cudaFree failed");
        }
      }
      t1 = std::chrono::steady_clock::now();
      raw.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() / 200);
    }
    std::printf(
        "SUMMARY alloc+free %9zu B: wick caching %8.0f ns   cudaMalloc+cudaFree %10.0f ns\n", size,
        median(cached), median(raw));
  }
}

void bandwidth() {
  int64_t n = 64 << 20;
  Tensor a = ones({n}, kGpu), b = ones({n}, kGpu), out = empty({n}, kGpu);
  double add_ms = time_ms([&] { Tensor c = a + b; }, 20);
  double copy_ms = time_ms([&] { out.copy_(a); }, 20);
  std::printf("SUMMARY bandwidth: add %6.0f GB/s   memcpy %6.0f GB/s\n", 3.0 * n * 4 / add_ms / 1e6,
              2.0 * n * 4 / copy_ms / 1e6);
}

void convolution(DType dtype) {
  Tensor x = randn({32, 64, 56, 56}, TensorOptions(dtype).with_device(kGpu));
  Tensor w = randn({64, 64, 3, 3}, TensorOptions(dtype).with_device(kGpu));
  double flops = 2.0 * 32 * 64 * 56 * 56 * 64 * 9;
  cuda::set_cudnn_benchmark(false);
  double heuristic = time_ms([&] { Tensor y = conv2d(x, w, Tensor(), 1, 1); }, 20);
  cuda::set_cudnn_benchmark(true);
  double benchmarked = time_ms([&] { Tensor y = conv2d(x, w, Tensor(), 1, 1); }, 20);
  cuda::set_cudnn_benchmark(false);
  std::printf(
      "SUMMARY conv3x3 64ch 56x56 n=32 %-8s heuristics %6.1f TFLOP/s   benchmark mode "
      "%6.1f TFLOP/s\n",
      dtype_name(dtype), flops / heuristic / 1e9, flops / benchmarked / 1e9);
}

void mnist_cnn(int steps) {
  manual_seed(0);
  auto model = examples::make_mnist_model("cnn");
  model->to(kGpu);
  optim::SGD optimizer(model->parameters(), optim::SGDOptions{0.01, 0.9});
  const int64_t batch = 128;
  Tensor images = randn({batch, 1, 28, 28}, kGpu);
  Tensor labels = randint(0, 10, {batch}, TensorOptions(kInt64).with_device(kGpu));
  auto step = [&] {
    optimizer.zero_grad();
    Tensor loss = nn::functional::cross_entropy((*model)(images), labels);
    loss.backward();
    optimizer.step();
  };
  for (int i = 0; i < 5; ++i) step();  // warm-up: cuDNN plans, cached memory
  cuda::synchronize();
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < steps; ++i) step();
  cuda::synchronize();
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("SUMMARY mnist cnn training (batch %lld): %8.0f samples/s, peak memory %.1f MiB\n",
              static_cast<long long>(batch), steps * batch / seconds,
              cuda::max_memory_allocated() / 1048576.0);
}

}  // namespace

int main(int argc, char** argv) {
  if (!cuda::is_available()) {
    std::printf("bench_gpu: no CUDA device; nothing to measure\n");
    return 0;
  }
  bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  std::printf("bench_gpu on %s\n", cuda::get_device_name().c_str());
  try {
    for (int n : quick ? std::vector<int>{4096} : std::vector<int>{4096, 8192}) {
      gemm(n, kFloat32, false, 10);
      gemm(n, kFloat32, true, 20);
      gemm(n, kFloat16, false, 20);
      gemm(n, kBFloat16, false, 20);
    }
    allocation();
    bandwidth();
    convolution(kFloat32);
    convolution(kFloat16);
    mnist_cnn(quick ? 50 : 200);
  } catch (const std::exception& e) {
    std::printf("bench_gpu: failed: %s\n", e.what());
    return 1;
  }
  return 0;
}
