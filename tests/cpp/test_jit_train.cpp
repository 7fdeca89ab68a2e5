// A compiled training step: forward, backward (the op table's formulas, recorded as the engine ran
// them) and SGD's fused update in one graph, replayed - against the same steps run eagerly.
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

// Runs `steps` SGD steps (momentum 0.9) on fixed batches, eagerly or compiled; returns the
// parameters afterwards and the losses.
std::pair<std::vector<Tensor>, std::vector<float>> train(Make make, bool compiled, int steps,
                                                         const Shape& shape) {
  manual_seed(11);
  std::shared_ptr<nn::Module> model = make();
  optim::SGD opt(model->parameters(), optim::SGDOptions{0.05, 0.9});
  auto step = [&](const std::vector<Tensor>& xs) {
    opt.zero_grad();
    Tensor loss = nn::F::cross_entropy((*model)(xs[0]), xs[1]);
    loss.backward();
    opt.step();
    return std::vector<Tensor>{loss};
  };
  jit::CompileOptions options;
  options.warmup = 1;  // SGD's first step starts the momentum buffers
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

void expect_same_training(Make make, const Shape& shape) {
  const int steps = 5;  // one eager warm-up step, one traced, three replayed
  auto [eager_params, eager_losses] = train(make, false, steps, shape);
  auto [jit_params, jit_losses] = train(make, true, steps, shape);
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

TEST(JitTrain, AdamIsRefusedWithAReason) {
  auto model = mlp();
  optim::Adam opt(model->parameters(), optim::AdamOptions{1e-3});
  auto step = [&](const std::vector<Tensor>& xs) {
    opt.zero_grad();
    Tensor loss = (*model)(xs[0]).sum();
    loss.backward();
    opt.step();
    return std::vector<Tensor>{loss};
  };
  try {
    jit::trace(step, {randn({2, 1, 28, 28})});
    FAIL() << "expected std::runtime_error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("adam_step"), std::string::npos) << e.what();
  }
}
