// A compiled training step: forward, backward (the op table's formulas, recorded as the engine ran
// them) and the optimizer's fused update (SGD, Adam) in one graph, replayed - against the same
// steps run eagerly.
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>

#include "jit/compile.h"
#include "nn/containers.h"
#include "nn/functional.h"
#include "nn/layers.h"
#include "nn/models/resnet.h"
#include "nn/optim.h"
#include "wick.h"

using namespace wick;

namespace {

using Make = std::shared_ptr<nn::Module> (*)();

std::shared_ptr<nn::Module> mlp() {
  return std::make_shared<nn::Sequential>(std::vector<std::shared_ptr<nn::Module>>{
      std::make_shared<nn::Flatten>(), std::make_shared<nn::Linear>(784, 32),
      std::make_shared<nn::ReLU>(), std::make_shared<nn::Linear>(32, 10)});
}
std::shared_ptr<nn::Module> cnn() {
  return std::make_shared<nn::Sequential>(std::vector<std::shared_ptr<nn::Module>>{
      std::make_shared<nn::Conv2d>(1, 4, 3), std::make_shared<nn::ReLU>(),
      std::make_shared<nn::MaxPool2d>(2), std::make_shared<nn::Flatten>(),
      std::make_shared<nn::Linear>(4 * 13 * 13, 10)});
}
std::shared_ptr<nn::Module> resnet() { return models::resnet20(); }

enum class Optimizer { kSgd, kAdam, kAdamW };

std::unique_ptr<optim::Optimizer> make_optimizer(Optimizer kind, std::vector<Tensor> params) {
  switch (kind) {
    case Optimizer::kSgd:
      return std::make_unique<optim::SGD>(params, optim::SGDOptions{0.05, 0.9});
    case Optimizer::kAdam:
      return std::make_unique<optim::Adam>(params, optim::AdamOptions{1e-2});
    case Optimizer::kAdamW: {
      optim::AdamOptions options{1e-2};
      options.weight_decay = 0.1;
      return std::make_unique<optim::AdamW>(params, options);
    }
  }
  return nullptr;
}

// Runs `steps` optimizer steps on fixed batches, eagerly or compiled; returns the parameters
// afterwards and the losses.
std::pair<std::vector<Tensor>, std::vector<float>> train(Make make, bool compiled, int steps,
                                                         const Shape& shape,
                                                         Optimizer kind = Optimizer::kSgd) {
  manual_seed(11);
  std::shared_ptr<nn::Module> model = make();
  std::unique_ptr<optim::Optimizer> opt = make_optimizer(kind, model->parameters());
  auto step = [&](const std::vector<Tensor>& xs) {
    opt->zero_grad();
    Tensor loss = nn::F::cross_entropy((*model)(xs[0]), xs[1]);
    loss.backward();
    opt->step();
    return std::vector<Tensor>{loss};
  };
  jit::CompileOptions options;
  options.warmup = 1;  // the first step creates the optimizer's state (SGD's momentum buffers)
  jit::CompiledFunction f(step, nullptr, options);
  std::vector<float> losses;
  for (int i = 0; i < steps; ++i) {
    manual_seed(100 + i);
    Tensor x = randn(shape), y = randint(0, 10, {shape[0]});
    Tensor loss = compiled ? f({x, y})[0] : step({x, y})[0];
    losses.push_back(loss.item<float>());
  }
  if (compiled) {
    EXPECT_EQ(f.traces(), 1);
    std::cout << f.log();
  }
  std::vector<Tensor> params;
  for (const Tensor& p : model->parameters()) params.push_back(p.detach().clone());
  return {params, losses};
}

void expect_same_training(Make make, const Shape& shape, Optimizer kind = Optimizer::kSgd) {
  const int steps = 5;  // one eager warm-up step, one traced, three replayed
  auto [eager_params, eager_losses] = train(make, false, steps, shape, kind);
  auto [jit_params, jit_losses] = train(make, true, steps, shape, kind);
  ASSERT_EQ(eager_params.size(), jit_params.size());
  for (int i = 0; i < steps; ++i) EXPECT_FLOAT_EQ(jit_losses[i], eager_losses[i]) << "step " << i;
  for (size_t k = 0; k < eager_params.size(); ++k) {
    std::vector<float> a = jit_params[k].to_vector<float>(), b = eager_params[k].to_vector<float>();
    for (size_t i = 0; i < a.size(); ++i) {
      ASSERT_NEAR(a[i], b[i], 1e-6 * std::fabs(b[i])) << "parameter " << k << " element " << i;
    }
  }
}

}  // namespace

TEST(JitTrain, MlpStepsEqualEager) { expect_same_training(mlp, {16, 1, 28, 28}); }
TEST(JitTrain, CnnStepsEqualEager) { expect_same_training(cnn, {8, 1, 28, 28}); }
TEST(JitTrain, ResNet20StepsEqualEager) { expect_same_training(resnet, {4, 3, 32, 32}); }

// Adam's bias corrections change every step: the replay reads the step count the traced add_
// increments, so steps 3-5 (replayed) match eager's too; with AdamW's decoupled weight decay.
TEST(JitTrain, AdamStepsEqualEager) {
  expect_same_training(mlp, {16, 1, 28, 28}, Optimizer::kAdam);
}
TEST(JitTrain, AdamWStepsEqualEager) {
  expect_same_training(cnn, {8, 1, 28, 28}, Optimizer::kAdamW);
}

TEST(JitTrain, AdamRejectsAStepCountThatIsNotACpuFloat64Count) {
  Tensor p = ones({3}), g = ones({3}), m = zeros({3}), v = zeros({3});
  AdamStepParams adam{1e-2, 0.9, 0.999, 1e-8, 0.0, false};
  for (const Tensor& bad : {Tensor(), scalar_tensor(1.0, kFloat32), zeros({2}, kFloat64),
                            scalar_tensor(0.0, kFloat64), scalar_tensor(1.5, kFloat64)}) {
    EXPECT_THROW(dispatch<AdamStepKernel>(OpKey::adam_step, Device(kCPU), p, g, m, v, bad, adam),
                 std::invalid_argument);
  }
  EXPECT_EQ(p.to_vector<float>(), std::vector<float>({1, 1, 1}));  // nothing was updated
}
