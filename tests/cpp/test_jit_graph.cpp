// Static graphs: tracing, the IR's printouts, the executor against eager, guards and bad input.
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>

#include "jit/compile.h"
#include "jit/executor.h"
#include "jit/trace.h"
#include "nn/containers.h"
#include "nn/layers.h"
#include "nn/layers/normalization.h"
#include "nn/models/resnet.h"
#include "wick.h"

using namespace wick;

namespace {

std::shared_ptr<nn::Sequential> mlp() {
  return std::make_shared<nn::Sequential>(std::vector<std::shared_ptr<nn::Module>>{
      std::make_shared<nn::Flatten>(), std::make_shared<nn::Linear>(784, 64),
      std::make_shared<nn::ReLU>(), std::make_shared<nn::Linear>(64, 10)});
}

std::shared_ptr<nn::Sequential> cnn() {
  return std::make_shared<nn::Sequential>(std::vector<std::shared_ptr<nn::Module>>{
      std::make_shared<nn::Conv2d>(1, 8, 3, 1, 1), std::make_shared<nn::BatchNorm2d>(8),
      std::make_shared<nn::ReLU>(), std::make_shared<nn::MaxPool2d>(2),
      std::make_shared<nn::Flatten>(), std::make_shared<nn::Linear>(8 * 14 * 14, 10)});
}

// fp32 results equal to 1e-6 relative (the unfused, unfolded replay is in fact bit-identical).
void expect_equal(const Tensor& got, const Tensor& want, double rtol = 1e-6, double atol = 0) {
  ASSERT_EQ(got.shape(), want.shape());
  std::vector<float> g = got.contiguous().to_vector<float>(),
                     w = want.contiguous().to_vector<float>();
  for (size_t i = 0; i < g.size(); ++i) {
    ASSERT_NEAR(g[i], w[i], atol + rtol * std::fabs(w[i])) << "element " << i;
  }
}

}  // namespace

TEST(JitTrace, MlpGraphPrintsOpsWithShapes) {
  manual_seed(0);
  auto model = mlp();
  Tensor x = randn({4, 1, 28, 28});
  auto g = jit::trace(*model, {x});
  std::string text = g->str();
  std::cout << text;
  EXPECT_NE(text.find("graph(%x0: f32[4, 1, 28, 28])"), std::string::npos);
  EXPECT_NE(text.find("%1.weight: f32[64, 784] = parameter"), std::string::npos);
  EXPECT_NE(text.find("= bmm("), std::string::npos);
  EXPECT_NE(text.find("= relu("), std::string::npos);
  EXPECT_NE(text.find("return %"), std::string::npos);
  EXPECT_EQ(g->inputs.size(), 1u);
  EXPECT_EQ(g->outputs.size(), 1u);
  std::string dot = g->dot("mlp");
  EXPECT_EQ(dot.rfind("digraph \"mlp\" {", 0), 0u);
  EXPECT_NE(dot.find("label=\"relu\""), std::string::npos);
}

TEST(JitExecutor, ReplayEqualsEager) {
  manual_seed(1);
  for (auto model :
       {std::static_pointer_cast<nn::Module>(mlp()), std::static_pointer_cast<nn::Module>(cnn())}) {
    model->eval();
    Tensor x = randn({3, 1, 28, 28});
    NoGradGuard no_grad;
    Tensor want = (*model)(x);
    auto g = jit::trace(*model, {x});
    for (bool plan : {false, true}) {
      jit::NamedTensors params = model->named_parameters();
      for (auto& b : model->named_buffers()) params.push_back(b);
      jit::Executor exec(g, params, {plan});
      Tensor x2 = randn({3, 1, 28, 28});
      expect_equal(exec.run({x})[0], want, 0);  // bit-identical
      expect_equal(exec.run({x2})[0], (*model)(x2), 0);
      EXPECT_EQ(exec.kernels_per_run(), g->num_kernels());
    }
  }
}

TEST(JitExecutor, SeesInPlaceParameterUpdates) {
  manual_seed(2);
  auto model = mlp();
  Tensor x = randn({2, 1, 28, 28});
  jit::CompiledFunction f = jit::compile(model);
  f({x});
  {
    NoGradGuard no_grad;
    for (auto& [name, p] : model->named_parameters()) p.mul_(0.5);
  }
  expect_equal(f({x})[0], (*model)(x));
}

TEST(JitCompile, RetracesOnNewShapeOrDtypeAndCountsIt) {
  manual_seed(3);
  auto model = mlp();
  jit::CompiledFunction f = jit::compile(model);
  f({randn({2, 1, 28, 28})});
  f({randn({2, 1, 28, 28})});
  EXPECT_EQ(f.traces(), 1);
  EXPECT_EQ(f.retraces(), 0);
  Tensor x = randn({5, 1, 28, 28});
  expect_equal(f({x})[0], (*model)(x));
  EXPECT_EQ(f.retraces(), 1);
  f({randn({2, 1, 28, 28})});  // seen before: no retrace
  EXPECT_EQ(f.retraces(), 1);
  std::cout << f.log();
}

TEST(JitCompile, GuardsTheTrainingFlag) {
  manual_seed(5);
  auto drop = std::make_shared<nn::Sequential>(std::vector<std::shared_ptr<nn::Module>>{
      std::make_shared<nn::Linear>(8, 8), std::make_shared<nn::Dropout>(0.5)});
  jit::CompiledFunction f = jit::compile(drop);
  Tensor x = ones({4, 8});
  NoGradGuard no_grad;
  f({x});
  drop->eval();
  expect_equal(f({x})[0], (*drop)(x));  // no dropout mask replayed after eval()
  EXPECT_EQ(f.retraces(), 1);
  EXPECT_NE(f.log().find("training of module '(root)'=off"), std::string::npos) << f.log();
}

TEST(JitCompile, ZeroSizeValuesWithTheMemoryPlan) {
  jit::CompiledFunction f(
      [](const std::vector<Tensor>& xs) { return std::vector<Tensor>{(xs[0] + 1.0).sum()}; }, {});
  for (int i = 0; i < 3; ++i) expect_equal(f({ones({0})})[0], zeros({}));
}

TEST(JitCompile, ResNet20InferenceMatchesEager) {
  manual_seed(4);
  auto model = models::resnet20();
  model->eval();
  Tensor x = randn({2, 3, 32, 32});
  Tensor want;
  {
    NoGradGuard no_grad;  // the trace runs without grad mode, as inference does
    want = (*model)(x);
  }
  // Inference is compiled under no-grad: with grad mode on, batch norm in evaluation is composed
  // of differentiable ops (another rounding), and there is no batch_norm node to fold.
  NoGradGuard no_grad;
  jit::CompileOptions plain;
  plain.fuse = false;
  jit::CompiledFunction exact = jit::compile(model, plain);
  expect_equal(exact({x})[0], want, 0);
  jit::CompileOptions all;
  all.freeze = true;
  jit::CompiledFunction fast = jit::compile(model, all);
  // Folding batch norm into the convolutions rounds at other places: a few ulps of the scale.
  expect_equal(fast({x})[0], want, 1e-4, 1e-4);
  std::cout << fast.log();
  EXPECT_LT(fast.executor().kernels_per_run(), exact.executor().kernels_per_run());
}

TEST(JitErrors, BadInputsNameTheProblem) {
  manual_seed(5);
  auto model = mlp();
  Tensor x = randn({2, 1, 28, 28});
  auto g = jit::trace(*model, {x});
  jit::Executor exec(g, model->named_parameters());
  EXPECT_THROW(exec.run({}), std::invalid_argument);
  EXPECT_THROW(exec.run({randn({3, 1, 28, 28})}), std::invalid_argument);
  EXPECT_THROW(exec.run({randn({2, 1, 28, 28}).to(kFloat64)}), TypeError);
  try {
    exec.run({randn({3, 1, 28, 28})});
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("jit.Executor"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("(2, 1, 28, 28)"), std::string::npos) << e.what();
  }
  EXPECT_THROW(jit::Executor(g, {}), std::invalid_argument);  // parameters missing
  EXPECT_THROW(jit::trace(*model, {Tensor()}), std::invalid_argument);
  EXPECT_THROW(jit::trace(*model, {x, x}), std::invalid_argument);
}

TEST(JitExecutor, RandomOpsDrawFreshNumbersLikeEager) {
  auto dropout = std::make_shared<nn::Sequential>(
      std::vector<std::shared_ptr<nn::Module>>{std::make_shared<nn::Dropout>(0.5)});
  Tensor x = ones({4, 64});
  manual_seed(9);
  Tensor a = (*dropout)(x), b = (*dropout)(x);
  manual_seed(9);
  jit::CompiledFunction f = jit::compile(dropout);
  Tensor c = f({x})[0], d = f({x})[0];  // traced, then replayed with new counters
  expect_equal(c, a, 0);
  expect_equal(d, b, 0);
  EXPECT_FALSE(equal(d, c));
  // A replay cannot advance a generator the graph does not know.
  Generator other(5);
  auto draw = [&](const std::vector<Tensor>& xs) {
    return std::vector<Tensor>{xs[0] * rand({4, 64}, {}, other)};
  };
  EXPECT_THROW(jit::trace(draw, {x}), std::runtime_error);
}
