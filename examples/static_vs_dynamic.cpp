// The same model eager and compiled (wick::jit), side by side: per step, the kernels launched,
// the dispatcher calls, the peak memory and the time - for the MNIST MLP, the classic CNN and
// ResNet-20, in inference and for an SGD training step. The Python twin is
// examples/static_vs_dynamic.py, whose docstring explains each figure.
//
//   ./build/examples/static_vs_dynamic [--batch 64] [--steps 20]
//
// From C++ eager pays no Python per op, so the gap here is the front functions, the allocator and
// autograd, not the binding: compare with the Python twin's figures to see what Python costs.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "core/allocator.h"
#include "examples/mnist_models.h"
#include "jit/compile.h"
#include "nn/models/resnet.h"
#include "wick.h"

using namespace wick;

namespace {

using Step = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;

double median_seconds(const Step& step, const std::vector<Tensor>& in, int steps) {
  for (int i = 0; i < 2; ++i) step(in);
  std::vector<double> times;
  for (int i = 0; i < steps; ++i) {
    auto start = std::chrono::steady_clock::now();
    step(in);
    times.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

int64_t peak_during(const Step& step, const std::vector<Tensor>& in) {
  Allocator* host = cpu_allocator();
  int64_t before = host->stats().allocated_bytes;
  host->reset_peak();
  std::vector<Tensor> out = step(in);
  return host->stats().peak_allocated_bytes - before;
}

int64_t dispatches(const Step& step, const std::vector<Tensor>& in) {
  jit::DispatchCounter counter;
  step(in);
  return counter.count();
}

struct Row {
  const char* mode;
  int64_t kernels, calls, peak;
  double seconds;
};

void report(const std::string& title, const Row& eager, const Row& compiled) {
  std::printf("\n%s\n  %-10s%9s%12s%10s%10s%10s\n", title.c_str(), "", "kernels", "dispatcher",
              "peak MiB", "ms/step", "steps/s");
  for (const Row& r : {eager, compiled}) {
    std::printf("  %-10s%9lld%12lld%10.2f%10.2f%10.1f\n", r.mode, static_cast<long long>(r.kernels),
                static_cast<long long>(r.calls), r.peak / 1048576.0, r.seconds * 1e3,
                1 / r.seconds);
  }
  std::printf("  speed-up %.2fx\n", eager.seconds / compiled.seconds);
}

std::shared_ptr<nn::Module> make(const std::string& name) {
  return name == "resnet20" ? std::static_pointer_cast<nn::Module>(models::resnet20())
                            : examples::make_mnist_model(name);
}

Shape input_shape(const std::string& name, int64_t batch) {
  return name == "resnet20" ? Shape{batch, 3, 32, 32} : Shape{batch, 1, 28, 28};
}

void inference(const std::string& name, int64_t batch, int steps) {
  manual_seed(0);
  auto model = make(name);
  model->eval();
  std::vector<Tensor> in = {randn(input_shape(name, batch))};
  NoGradGuard no_grad;
  Step eager = [&](const std::vector<Tensor>& xs) { return std::vector<Tensor>{(*model)(xs[0])}; };
  jit::CompileOptions options;
  options.freeze = true;
  jit::CompiledFunction compiled = jit::compile(model, options);
  compiled(in);
  Step replay = [&](const std::vector<Tensor>& xs) { return compiled(xs); };
  int64_t calls = dispatches(eager, in);
  Row e{"eager", calls, calls, peak_during(eager, in), median_seconds(eager, in, steps)};
  Row c{"compiled", compiled.executor().kernels_per_run(), dispatches(replay, in),
        compiled.executor().memory_plan().arena_bytes + peak_during(replay, in),
        median_seconds(replay, in, steps)};
  report(name + ", batch " + std::to_string(batch) + ", inference", e, c);
}

void training(const std::string& name, int64_t batch, int steps) {
  manual_seed(1);
  std::vector<Tensor> in = {randn(input_shape(name, batch)), randint(0, 10, {batch})};
  auto side = [&](bool compile) {
    manual_seed(0);
    auto model = make(name);
    auto opt = std::make_shared<optim::SGD>(model->parameters(), optim::SGDOptions{0.01, 0.9});
    Step step = [model, opt](const std::vector<Tensor>& xs) {
      opt->zero_grad();
      Tensor loss = nn::F::cross_entropy((*model)(xs[0]), xs[1]);
      loss.backward();
      opt->step();
      return std::vector<Tensor>{loss};
    };
    jit::CompileOptions options;
    options.warmup = 1;  // SGD's first step starts its momentum buffers
    auto compiled = std::make_shared<jit::CompiledFunction>(step, nullptr, options);
    Step run = compile ? Step([compiled](const std::vector<Tensor>& xs) { return (*compiled)(xs); })
                       : step;
    manual_seed(7);  // both sides draw the same dropout masks
    run(in);
    run(in);
    int64_t calls = dispatches(run, in);
    if (!compile) opt->zero_grad();  // the last step's gradients are no part of this step's peak
    int64_t peak = peak_during(run, in);
    double seconds = median_seconds(run, in, steps);
    if (!compile) return Row{"eager", calls, calls, peak, seconds};
    return Row{"compiled", compiled->executor().kernels_per_run(), calls,
               compiled->executor().memory_plan().arena_bytes + peak, seconds};
  };
  Row e = side(false), c = side(true);
  report(name + ", batch " + std::to_string(batch) + ", SGD training step", e, c);
}

}  // namespace

int main(int argc, char** argv) {
  int64_t batch = 64;
  int steps = 20;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--batch") == 0 && i + 1 < argc) {
      batch = std::atoll(argv[++i]);
    } else if (std::strcmp(argv[i], "--steps") == 0 && i + 1 < argc) {
      steps = std::atoi(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: %s [--batch 64] [--steps 20]\n", argv[0]);
      return 2;
    }
  }
  if (batch < 1 || steps < 1) {
    std::fprintf(stderr, "static_vs_dynamic: --batch and --steps must be positive\n");
    return 2;
  }
  for (const char* name : {"mlp", "cnn", "resnet20"}) inference(name, batch, steps);
  for (const char* name : {"mlp", "cnn", "resnet20"}) training(name, batch, steps);
  return 0;
}
