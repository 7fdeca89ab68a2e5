// Mixed precision, measured: training throughput and peak tensor memory of float32 against
// autocast with bfloat16 and with float16 (plus loss scaling), for the MNIST CNN and a wide MLP,
// on the CPU or a GPU. Same model, data and optimizer in each column; only the precision policy
// changes.
//
//   ./build/benchmarks/bench_amp [--device cpu|cuda] [--steps 30] [--batch-size 64]
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>

#include "cuda/api.h"
#include "examples/common/cli.h"
#include "examples/mnist_models.h"
#include "nn/grad_scaler.h"
#include "wick.h"

using namespace wick;

namespace {

struct Result {
  double samples_per_second;
  double peak_mib;
};

std::shared_ptr<nn::Module> make_model(const std::string& name) {
  if (name == "wide_mlp") {
    return std::make_shared<nn::Sequential>(std::vector<std::shared_ptr<nn::Module>>{
        std::make_shared<nn::Flatten>(), std::make_shared<nn::Linear>(784, 2048),
        std::make_shared<nn::ReLU>(), std::make_shared<nn::Linear>(2048, 2048),
        std::make_shared<nn::ReLU>(), std::make_shared<nn::Linear>(2048, 10)});
  }
  return examples::make_mnist_model(name);
}

void reset_peak(Device device) {
  if (device.is_cuda()) {
    cuda::synchronize();
    cuda::reset_peak_memory_stats();
  } else {
    cpu_allocator()->reset_peak();
  }
}

double peak_mib(Device device) {
  if (device.is_cuda()) return cuda::max_memory_allocated() / 1048576.0;
  return cpu_allocator()->stats().peak_allocated_bytes / 1048576.0;
}

Result run(const std::string& model_name, const std::string& precision, Device device, int steps,
           int64_t batch) {
  manual_seed(0);
  auto model = make_model(model_name);
  model->to(device);
  optim::Adam adam(model->parameters(), optim::AdamOptions{1e-3});
  amp::GradScalerOptions scaler_options;
  scaler_options.enabled = precision == "fp16";
  amp::GradScaler scaler(scaler_options);
  bool autocast = precision != "fp32";
  DType dtype = precision == "fp16" ? kFloat16 : kBFloat16;
  Tensor x = randn({batch, 1, 28, 28}).to(device), y = randint(0, 10, {batch}).to(device);
  auto step = [&] {
    Tensor loss;
    {
      AutocastGuard guard(device.type, dtype, autocast);
      loss = nn::F::cross_entropy((*model)(x), y);
    }
    adam.zero_grad();
    scaler.scale(loss).backward();
    scaler.step(adam);
    scaler.update();
    return loss;
  };
  step().item<double>();  // warm-up: allocations, cuDNN plans, first-touch of pages
  reset_peak(device);
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < steps; ++i) step();
  if (device.is_cuda()) cuda::synchronize();
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return {steps * batch / seconds, peak_mib(device)};
}

}  // namespace

int main(int argc, char** argv) try {
  examples::Flags flags("bench_amp", "float32 against mixed precision: samples/s and memory.");
  flags.add("device", "cpu", "cpu or cuda")
      .add("steps", "20", "timed training steps per configuration")
      .add("batch-size", "64", "examples per step");
  if (!flags.parse(argc, argv)) return 0;
  Device device(flags.str("device"));
  int steps = static_cast<int>(flags.integer("steps", 1, 1000000));
  int64_t batch = flags.integer("batch-size", 1, 1 << 20);
  std::printf("training steps on %s, batch %lld, Adam; peak = tensor memory the allocator held\n",
              device.str().c_str(), static_cast<long long>(batch));
  std::printf("%-9s %-6s %12s %10s %14s %12s\n", "model", "mode", "samples/s", "vs fp32",
              "peak MiB", "vs fp32");
  for (const std::string model : {"cnn", "wide_mlp"}) {
    Result fp32{};
    for (const std::string mode : {"fp32", "bf16", "fp16"}) {
      Result r = run(model, mode, device, steps, batch);
      if (mode == "fp32") fp32 = r;
      std::printf("%-9s %-6s %12.0f %9.2fx %14.1f %11.2fx\n", model.c_str(), mode.c_str(),
                  r.samples_per_second, r.samples_per_second / fp32.samples_per_second, r.peak_mib,
                  r.peak_mib / fp32.peak_mib);
      std::fflush(stdout);
    }
  }
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "%s\n", e.what());
  return examples::exit_status(e);
}
