// Static graphs on the GPU: fused elementwise chains run as kernels NVRTC compiled (Note [fused
// chains compiled at run time] in jit/fused_cuda.h), against the unfused CUDA kernels and the
// CPU; CUDA Graphs (Note [capturing a graph] in cuda/graph.cpp) by hand and as the executor's
// replay; and a compiled training step on the GPU, captured as a CUDA Graph, against eager.
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>

#include "jit/compile.h"
#include "jit/executor.h"
#include "jit/fused_cuda.h"
#include "jit/passes/passes.h"
#include "nn/containers.h"
#include "nn/functional.h"
#include "nn/layers.h"
#include "nn/optim.h"
#include "tests/gpu/gpu_test_util.h"
#include "wick.h"

using namespace wick;
using wick::gpu_testing::gpu;
using wick::gpu_testing::GpuTest;

namespace {

int fused_nodes(const jit::Graph& g) {
  int n = 0;
  for (const jit::Node& node : g.nodes) n += node.kind == jit::NodeKind::Fused;
  return n;
}

void expect_close(const Tensor& got, const Tensor& want, double rtol, const char* what) {
  ASSERT_EQ(got.shape(), want.shape()) << what;
  std::vector<float> g = got.cpu().contiguous().to_vector<float>();
  std::vector<float> w = want.cpu().contiguous().to_vector<float>();
  for (size_t i = 0; i < g.size(); ++i) {
    ASSERT_NEAR(g[i], w[i], 1e-7 + rtol * std::fabs(w[i])) << what << " element " << i;
  }
}

}  // namespace

TEST_F(GpuTest, FusedChainsRunAsGeneratedKernels) {
  ASSERT_TRUE(jit::cuda_fusion_available());
  manual_seed(3);
  // A contiguous input, a broadcast bias row, a scalar, a transposed input; more elements than
  // one grid covers, so the grid-stride loop runs more than once.
  Tensor bias = randn({96}).to(gpu());
  Tensor scale = randn({1}).to(gpu());
  Tensor other = randn({96, 5000}).to(gpu());
  auto f = [&](const std::vector<Tensor>& xs) {
    Tensor y = ((xs[0] + bias).relu() * scale).sigmoid();
    return std::vector<Tensor>{(y - other.t()).tanh().neg()};
  };
  Tensor x = randn({5000, 96}).to(gpu());
  auto g = jit::trace(f, {x}, {{"bias", bias}, {"scale", scale}, {"other", other}});
  const int64_t kernels = g->num_kernels();
  EXPECT_EQ(jit::fuse_elementwise(*g), 1);
  std::cout << *g;
  EXPECT_EQ(fused_nodes(*g), 1);
  EXPECT_LT(g->num_kernels(), kernels);
  jit::Executor run(g, {{"bias", bias}, {"scale", scale}, {"other", other}});
  Tensor got = run.run({x})[0];
  EXPECT_TRUE(got.device().is_cuda());
  Tensor eager = f({x})[0];
  // The same functors, each step rounded to float: what the unfused kernels compute, up to the
  // CUDA math library's last bit.
  expect_close(got, eager, 2e-6, "fused against unfused on the GPU");
  Tensor cpu = ((x.cpu() + bias.cpu()).relu() * scale.cpu()).sigmoid();
  expect_close(got, (cpu - other.cpu().t()).tanh().neg(), 1e-5, "fused on the GPU against the CPU");
  Tensor x2 = randn({5000, 96}).to(gpu());  // a replay reads its new input
  expect_close(run.run({x2})[0], f({x2})[0], 2e-6, "second run");
}

TEST_F(GpuTest, CompiledTrainingStepEqualsEagerOnTheGpu) {
  auto train = [](bool compiled) {
    manual_seed(5);
    auto model = std::make_shared<nn::Sequential>(std::vector<std::shared_ptr<nn::Module>>{
        std::make_shared<nn::Flatten>(), std::make_shared<nn::Linear>(784, 64),
        std::make_shared<nn::ReLU>(), std::make_shared<nn::Linear>(64, 10)});
    model->to(gpu());
    optim::SGD opt(model->parameters(), optim::SGDOptions{0.05, 0.9});
    auto step = [&](const std::vector<Tensor>& xs) {
      opt.zero_grad();
      Tensor loss = nn::F::cross_entropy((*model)(xs[0]), xs[1]);
      loss.backward();
      opt.step();
      return std::vector<Tensor>{loss};
    };
    jit::CompileOptions options;
    options.warmup = 1;
    jit::CompiledFunction f(step, nullptr, options);
    for (int i = 0; i < 5; ++i) {
      manual_seed(100 + i);
      Tensor x = randn({32, 1, 28, 28}).to(gpu()), y = randint(0, 10, {32}).to(gpu());
      compiled ? f({x, y}) : step({x, y});
    }
    if (compiled) {
      std::cout << f.log() << "cuda graph: " << f.executor().cuda_graph_status() << "\n";
      // Step 1 eager (warmup), 2 traced (an eager call), 3 replayed op by op (the executor's
      // warm-up), 4 captured and launched, 5 launched.
      EXPECT_TRUE(f.executor().cuda_graph_captured()) << f.executor().cuda_graph_status();
      EXPECT_EQ(f.executor().graph_launches(), 2);
    }
    std::vector<Tensor> params;
    for (const Tensor& p : model->parameters()) params.push_back(p.detach().cpu());
    return params;
  };
  std::vector<Tensor> eager = train(false), compiled = train(true);
  ASSERT_EQ(eager.size(), compiled.size());
  for (size_t k = 0; k < eager.size(); ++k) {
    expect_close(compiled[k], eager[k], 1e-5, "parameter after 5 steps");
  }
}

TEST_F(GpuTest, CUDAGraphReplaysCapturedWorkOnNewData) {
  Tensor x = randn({4096}).to(gpu());
  const int64_t before = cuda::memory_allocated();
  {
    cuda::CUDAGraph graph;
    Tensor y;
    {
      cuda::StreamGuard side(cuda::Stream::create());
      graph.capture_begin();
      y = (x * 2.0 + 1.0).relu();  // x * 2 is freed during the capture: kept by the pool
      graph.capture_end();
    }
    EXPECT_TRUE(graph.captured());
    EXPECT_GE(graph.num_nodes(), 2);
    EXPECT_GT(graph.pool_bytes(), 0);
    for (int round = 0; round < 3; ++round) {
      Tensor fresh = randn({4096});
      x.copy_(fresh.to(gpu()));  // new data where the captured kernels read it
      graph.replay();
      expect_close(y, (fresh * 2.0 + 1.0).relu(), 1e-6, "replayed graph");
    }
  }
  // The graph and its pool are gone, and so is `y`: nothing it allocated is left.
  EXPECT_EQ(cuda::memory_allocated(), before);
}

TEST_F(GpuTest, CUDAGraphRefusesTheDefaultStreamAndSurvivesAFailedCapture) {
  cuda::CUDAGraph graph;
  EXPECT_THROW(graph.capture_begin(), std::runtime_error);  // the default stream
  Tensor x = randn({256}).to(gpu());
  cuda::StreamGuard side(cuda::Stream::create());
  graph.capture_begin();
  // Reading a value back to the host synchronises with the stream, which a capture cannot hold.
  EXPECT_ANY_THROW(x.sum().item<float>());
  graph.reset();  // abandons the capture
  EXPECT_FALSE(graph.captured());
  graph.capture_begin();
  Tensor y = x.neg();
  graph.capture_end();
  graph.replay();
  expect_close(y, x.neg(), 0, "capture after a failed one");
}

TEST_F(GpuTest, CompiledInferenceIsOneGraphLaunchAndKeepsEachRunsOutput) {
  manual_seed(7);
  auto model = std::make_shared<nn::Sequential>(std::vector<std::shared_ptr<nn::Module>>{
      std::make_shared<nn::Linear>(64, 128), std::make_shared<nn::ReLU>(),
      std::make_shared<nn::Linear>(128, 10)});
  model->to(gpu());
  model->eval();
  jit::CompileOptions options;
  options.freeze = true;
  jit::CompiledFunction f = jit::compile(model, options);
  std::vector<Tensor> inputs, outputs;
  for (int i = 0; i < 4; ++i) {
    inputs.push_back(randn({32, 64}).to(gpu()));
    outputs.push_back(f({inputs.back()})[0]);
  }
  const jit::Executor& e = f.executor();
  std::cout << "cuda graph: " << e.cuda_graph_status() << "\n";
  EXPECT_TRUE(e.cuda_graph_captured()) << e.cuda_graph_status();
  // Call 1 traces, 2 replays op by op (the warm-up), 3 captures and launches, 4 launches.
  EXPECT_EQ(e.graph_launches(), 2);
  NoGradGuard no_grad;
  for (int i = 0; i < 4; ++i) {
    // Each output is the caller's own: later launches did not overwrite it.
    expect_close(outputs[i], (*model)(inputs[i]), 1e-5, "compiled run against eager");
  }
}

TEST_F(GpuTest, DropoutGraphsAreNotCaptured) {
  auto model = std::make_shared<nn::Sequential>(std::vector<std::shared_ptr<nn::Module>>{
      std::make_shared<nn::Linear>(16, 16), std::make_shared<nn::Dropout>(0.5)});
  model->to(gpu());
  jit::CompiledFunction f = jit::compile(model);
  Tensor x = randn({8, 16}).to(gpu());
  Tensor a = f({x})[0], b = f({x})[0], c = f({x})[0];
  EXPECT_FALSE(f.executor().cuda_graph_captured());
  EXPECT_NE(f.executor().cuda_graph_status().find("random"), std::string::npos)
      << f.executor().cuda_graph_status();
  EXPECT_GT((b - c).abs().sum().item<float>(), 0.0f) << "each run must draw a new mask";
}

TEST_F(GpuTest, IndexChecksInACapturedGraphStillRaise) {
  // Note [index checks in a captured graph]: the launcher's read-back moves to after the replay.
  Tensor table = randn({10, 4}).to(gpu());
  auto f = [&](const std::vector<Tensor>& xs) {
    return std::vector<Tensor>{table.index_select(0, xs[0]).relu()};
  };
  Tensor good = tensor(std::vector<int64_t>{1, 2, 9}).to(gpu());
  jit::Executor run(jit::trace(f, {good}, {{"table", table}}), {{"table", table}});
  for (int i = 0; i < 3; ++i) {
    Tensor index = tensor(std::vector<int64_t>{9 - i, i, 3}).to(gpu());
    expect_close(run.run({index})[0], f({index})[0], 0, "captured index_select");
  }
  EXPECT_TRUE(run.cuda_graph_captured()) << run.cuda_graph_status();
  Tensor bad = tensor(std::vector<int64_t>{1, 12, 3}).to(gpu());
  EXPECT_THROW(run.run({bad}), std::out_of_range);
  Tensor again = tensor(std::vector<int64_t>{0, 1, 2}).to(gpu());  // the record was cleared
  expect_close(run.run({again})[0], f({again})[0], 0, "replay after an index error");
}
