// Each graph pass on a small traced function: the graph before and after (printed, so a failing
// run shows them), what changed, and the replay against eager.
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>

#include "core/cpu/conv_direct.h"
#include "jit/compile.h"
#include "jit/executor.h"
#include "jit/passes/memory_plan.h"
#include "jit/passes/passes.h"
#include "nn/containers.h"
#include "nn/layers.h"
#include "nn/layers/normalization.h"
#include "wick.h"

using namespace wick;

namespace {

int count_op(const jit::Graph& g, const std::string& name) {
  int n = 0;
  for (const jit::Node& node : g.nodes) n += node.name() == name;
  return n;
}

void show(const char* pass, const jit::Graph& before, const jit::Graph& after) {
  std::cout << "---- before " << pass << "\n" << before << "---- after " << pass << "\n" << after;
}

void expect_same(const Tensor& got, const Tensor& want, double rtol = 1e-6, double atol = 0) {
  ASSERT_EQ(got.shape(), want.shape());
  std::vector<float> g = got.contiguous().to_vector<float>(),
                     w = want.contiguous().to_vector<float>();
  for (size_t i = 0; i < g.size(); ++i) ASSERT_NEAR(g[i], w[i], atol + rtol * std::fabs(w[i])) << i;
}

Tensor run(const jit::Graph& g, const std::vector<Tensor>& xs, const jit::NamedTensors& p = {}) {
  auto copy = std::make_shared<jit::Graph>(g);
  return jit::Executor(copy, p).run(xs)[0];
}

}  // namespace

TEST(JitPasses, DeadCodeElimination) {
  auto f = [](const std::vector<Tensor>& xs) {
    Tensor unused = xs[0].exp().sum();
    return std::vector<Tensor>{xs[0].relu()};
  };
  Tensor x = randn({3, 4});
  auto g = jit::trace(f, {x});
  jit::Graph before = *g;
  EXPECT_EQ(jit::eliminate_dead_code(*g), 2);
  show("dead code", before, *g);
  g->check();
  EXPECT_EQ(count_op(*g, "exp"), 0);
  EXPECT_EQ(count_op(*g, "relu"), 1);
  expect_same(run(*g, {x}), x.relu(), 0);
}

TEST(JitPasses, DeadCodeKeepsUpdatesOfLeaves) {
  Tensor state = zeros({3});
  auto f = [&](const std::vector<Tensor>& xs) {
    state.add_(xs[0]);  // an effect the caller sees
    return std::vector<Tensor>{xs[0] * 2};
  };
  Tensor x = ones({3});
  auto g = jit::trace(f, {x}, {{"state", state}});
  EXPECT_EQ(jit::eliminate_dead_code(*g), 0);
  EXPECT_EQ(count_op(*g, "add"), 1);
}

TEST(JitPasses, CommonSubexpressionElimination) {
  auto f = [](const std::vector<Tensor>& xs) {
    Tensor a = xs[0].exp(), b = xs[0].exp();
    return std::vector<Tensor>{a * b + xs[0].t().exp().t()};
  };
  Tensor x = randn({4, 4});
  auto g = jit::trace(f, {x});
  jit::Graph before = *g;
  EXPECT_EQ(jit::eliminate_common_subexpressions(*g), 1);
  show("common subexpressions", before, *g);
  g->check();
  EXPECT_EQ(count_op(*g, "exp"), 2);  // the exp of the transposed view is another computation
  expect_same(run(*g, {x}), f({x})[0], 0);
}

TEST(JitPasses, CommonSubexpressionsKeepsInPlaceWritesApart) {
  auto f = [](const std::vector<Tensor>& xs) {
    Tensor a = xs[0].exp(), b = xs[0].exp();
    a.add_(1);  // a and b must stay two buffers
    return std::vector<Tensor>{a - b};
  };
  Tensor x = randn({5});
  auto g = jit::trace(f, {x});
  EXPECT_EQ(jit::eliminate_common_subexpressions(*g), 0);
  std::cout << *g;
  expect_same(run(*g, {x}), f({x})[0], 0);
}

TEST(JitPasses, ConstantFolding) {
  Tensor w = randn({4, 3});
  auto f = [&](const std::vector<Tensor>& xs) {
    Tensor scale = full({4}, 2.0) + 1.0;  // fill, fill, add: all constant
    return std::vector<Tensor>{xs[0].matmul(w.t() * scale)};
  };
  Tensor x = randn({2, 3});
  auto g = jit::trace(f, {x}, {{"w", w}});
  jit::Graph before = *g;
  EXPECT_EQ(jit::fold_constants(*g), 0 + count_op(before, "fill") + count_op(before, "add"));
  EXPECT_EQ(count_op(*g, "fill"), 0);
  EXPECT_EQ(count_op(*g, "mul"), 1);  // w is a parameter: not constant until frozen
  jit::Graph unfrozen = *g;
  EXPECT_EQ(jit::freeze_parameters(*g, {{"w", w}}), 1);
  EXPECT_GT(jit::fold_constants(*g), 0);
  show("constant folding (frozen)", before, *g);
  g->check();
  EXPECT_EQ(count_op(*g, "mul"), 0);
  EXPECT_EQ(g->num_kernels(), 1);  // only the product with the input is left
  expect_same(run(*g, {x}), f({x})[0], 0);
  expect_same(run(unfrozen, {x}, {{"w", w}}), f({x})[0], 0);
}

TEST(JitPasses, ConvBatchNormFolding) {
  manual_seed(7);
  auto model = std::make_shared<nn::Sequential>(std::vector<std::shared_ptr<nn::Module>>{
      std::make_shared<nn::Conv2d>(3, 6, 3, 1, 1), std::make_shared<nn::BatchNorm2d>(6),
      std::make_shared<nn::ReLU>()});
  {  // non-trivial statistics, as after training
    NoGradGuard no_grad;
    for (auto& [name, b] : model->named_buffers()) {
      if (name.find("running") != std::string::npos) b.copy_(rand(b.shape()) + 0.5);
    }
    for (auto& [name, p] : model->named_parameters()) p.copy_(randn(p.shape()));
  }
  model->eval();
  Tensor x = randn({2, 3, 8, 8});
  jit::NamedTensors params = model->named_parameters();
  for (auto& b : model->named_buffers()) params.push_back(b);
  auto g = jit::trace(*model, {x});
  jit::Graph before = *g;
  EXPECT_EQ(jit::fold_conv_batchnorm(*g), 0);  // statistics are not constants yet
  jit::freeze_parameters(*g, params);
  EXPECT_EQ(jit::fold_conv_batchnorm(*g), 1);
  show("conv+bn folding", before, *g);
  g->check();
  EXPECT_EQ(count_op(*g, "batch_norm"), 0);
  EXPECT_EQ(count_op(*g, "conv2d"), 1);
  expect_same(run(*g, {x}), (*model)(x), 1e-5, 1e-5);
}

TEST(JitPasses, ElementwiseFusion) {
  Tensor bias = randn({8});
  auto f = [&](const std::vector<Tensor>& xs) {
    Tensor y = (xs[0] + bias).relu();  // a broadcast operand
    return std::vector<Tensor>{(y * 0.5).exp().neg()};
  };
  Tensor x = randn({64, 8});
  auto g = jit::trace(f, {x}, {{"bias", bias}});
  jit::fold_constants(*g);
  jit::Graph before = *g;
  int kernels = static_cast<int>(g->num_kernels());
  EXPECT_EQ(jit::fuse_elementwise(*g), 1);
  show("elementwise fusion", before, *g);
  g->check();
  EXPECT_EQ(kernels, 5);
  EXPECT_EQ(g->num_kernels(), 1);
  EXPECT_EQ(count_op(*g, "fused[add, relu, mul, exp, neg]"), 1);
  expect_same(run(*g, {x}, {{"bias", bias}}), f({x})[0], 0);  // the same functors, in order
  Tensor big = randn({300, 8});                               // several blocks of the fused loop
  auto g2 = jit::trace(f, {big}, {{"bias", bias}});
  jit::fuse_elementwise(*g2);
  expect_same(run(*g2, {big}, {{"bias", bias}}), f({big})[0], 0);
}

TEST(JitPasses, FusionStopsAtValuesUsedTwice) {
  auto f = [](const std::vector<Tensor>& xs) {
    Tensor y = xs[0].exp();
    return std::vector<Tensor>{y.relu() + y.sigmoid()};
  };
  Tensor x = randn({16});
  auto g = jit::trace(f, {x});
  jit::fuse_elementwise(*g);
  std::cout << *g;
  EXPECT_EQ(count_op(*g, "exp"), 1);  // y has two uses: it is written to memory
  expect_same(run(*g, {x}), f({x})[0], 0);
}

TEST(JitPasses, MemoryPlanReusesDeadBuffers) {
  auto f = [](const std::vector<Tensor>& xs) {
    Tensor y = xs[0];
    for (int i = 0; i < 6; ++i) y = (y * 1.5).sin();
    return std::vector<Tensor>{y.sum()};
  };
  Tensor x = randn({256, 256});
  auto g = jit::trace(f, {x});
  jit::fold_constants(*g);
  jit::MemoryPlan plan = jit::plan_memory(*g);
  std::cout << *g << plan.str();
  int64_t buffer = 256 * 256 * 4;
  EXPECT_EQ(plan.num_buffers, 12);
  EXPECT_EQ(plan.total_bytes, 12 * buffer);
  EXPECT_EQ(plan.live_peak_bytes, 2 * buffer);  // an op's input and output
  EXPECT_EQ(plan.arena_bytes, 2 * buffer);
  for (size_t i = 0; i < g->values.size(); ++i) {  // no two buffers live at once share bytes
    for (size_t j = i + 1; j < g->values.size(); ++j) {
      if (plan.offset[i] < 0 || plan.offset[j] < 0) continue;
      bool together = plan.first[i] <= plan.last[j] && plan.first[j] <= plan.last[i];
      if (together) {
        EXPECT_NE(plan.offset[i], plan.offset[j]);
      }
    }
  }
  expect_same(run(*g, {x}), f({x})[0], 0);
}

TEST(JitPasses, InPlaceAndSlicesReplay) {
  auto f = [](const std::vector<Tensor>& xs) {
    Tensor y = xs[0].exp();
    y.mul_(2);
    Tensor joined = cat({y, xs[0].relu()}, 0);
    return std::vector<Tensor>{joined.narrow(0, 1, 3) + 1};
  };
  Tensor x = randn({2, 3});
  auto g = jit::trace(f, {x});
  std::cout << *g;
  jit::eliminate_dead_code(*g);
  jit::eliminate_common_subexpressions(*g);
  jit::fuse_elementwise(*g);
  g->check();
  expect_same(run(*g, {x}), f({x})[0], 0);
  Tensor x2 = randn({2, 3});
  expect_same(run(*g, {x2}), f({x2})[0], 0);
}

TEST(JitPasses, FusedLoopReadsBroadcastAndStridedInputs) {
  // A per-channel operand ([C, 1, 1] over N C H W: runs of one repeated number), a transposed one
  // (stride H in the innermost dimension), and a scalar: every way the fused loop gathers.
  Tensor scale = randn({3, 1, 1}), other = randn({2, 3, 5, 7});
  auto f = [&](const std::vector<Tensor>& xs) {
    Tensor y = (xs[0] * scale + other.transpose(2, 3).contiguous().transpose(2, 3)).tanh();
    return std::vector<Tensor>{(y - 0.25).sigmoid()};
  };
  Tensor x = randn({2, 3, 5, 7});
  auto g = jit::trace(f, {x}, {{"scale", scale}, {"other", other}});
  jit::fold_constants(*g);
  EXPECT_EQ(jit::fuse_elementwise(*g), 1);
  std::cout << *g;
  EXPECT_EQ(count_op(*g, "fused[mul, add, tanh, sub, sigmoid]"), 1);
  expect_same(run(*g, {x}, {{"scale", scale}, {"other", other}}), f({x})[0], 0);
}

TEST(JitPasses, Functionalization) {
  // Python's ReLU(inplace=True): relu, then a copy back over its input; then an in-place add.
  auto f = [](const std::vector<Tensor>& xs) {
    Tensor y = xs[0].exp();
    y.copy_(y.relu());
    y.add_(xs[0]);
    return std::vector<Tensor>{y.sigmoid()};
  };
  Tensor x = randn({4, 5});
  auto g = jit::trace(f, {x});
  jit::Graph before = *g;
  EXPECT_EQ(count_op(before, "copy"), 1);
  EXPECT_EQ(jit::functionalize(*g), 2);
  show("functionalization", before, *g);
  g->check();
  EXPECT_EQ(count_op(*g, "copy"), 0);
  EXPECT_TRUE(g->updated_storages() == std::vector<bool>(g->values.size(), false));
  jit::Graph fused = *g;
  EXPECT_EQ(jit::fuse_elementwise(fused), 1);  // out of place, all four ops make one chain
  EXPECT_EQ(fused.num_kernels(), 1);
  expect_same(run(*g, {x}), f({x})[0], 0);
  expect_same(run(fused, {x}), f({x})[0], 0);
}

TEST(JitPasses, FunctionalizationKeepsPartialWrites) {
  auto f = [](const std::vector<Tensor>& xs) {
    Tensor y = xs[0].exp();
    y.narrow(0, 0, 2).mul_(3);  // only part of y: its old contents are still read
    return std::vector<Tensor>{y * 2};
  };
  Tensor x = randn({4, 3});
  auto g = jit::trace(f, {x});
  EXPECT_EQ(jit::functionalize(*g), 0);
  expect_same(run(*g, {x}), f({x})[0], 0);
}

namespace {
// A residual block in the order torchvision's runs it: conv -> relu -> conv, then the shortcut
// (a 1x1 convolution computed after the second one), add, relu; and a channel scale after a
// convolution whose output is also returned.
struct ResidualBlock {
  Tensor w1 = randn({16, 8, 3, 3}) * 0.2, b1 = randn({16}), w2 = randn({16, 16, 3, 3}) * 0.1;
  Tensor ws = randn({16, 8, 1, 1}), scale = randn({16, 1, 1});
  jit::NamedTensors params() const {
    return {{"w1", w1}, {"b1", b1}, {"w2", w2}, {"ws", ws}, {"scale", scale}};
  }
  std::vector<Tensor> operator()(const std::vector<Tensor>& xs) const {
    Tensor y = conv2d(xs[0], w1, b1, 1, 1).relu();
    Tensor z = conv2d(y, w2, Tensor(), 1, 1);
    Tensor out = (z + conv2d(xs[0], ws)).relu();
    Tensor kept = conv2d(out, w2, Tensor(), 1, 1);  // used twice: written to memory
    return {out, (kept * scale).sigmoid(), kept};
  }
};
}  // namespace

TEST(JitPasses, ConvEpilogueFusion) {
  ResidualBlock block;
  Tensor x = randn({3, 8, 12, 12});  // 3 images: threads split images and channel blocks
  auto g = jit::trace(std::ref(block), {x}, block.params());
  jit::fuse_elementwise(*g);
  jit::Graph before = *g;
  EXPECT_EQ(jit::fuse_conv_epilogue(*g), 2);
  show("conv epilogue fusion", before, *g);
  g->check();
  EXPECT_EQ(count_op(*g, "conv2d+[relu]"), 1);
  EXPECT_EQ(count_op(*g, "conv2d+[add, relu]"), 1);
  EXPECT_EQ(count_op(*g, "fused[mul, sigmoid]"), 1);  // its conv's output is also returned
  EXPECT_EQ(g->num_kernels(), before.num_kernels() - 2);
  // The same functors in the same order on the same convolution results: bit for bit, through
  // the kernel table and through weights packed ahead of time (the epilogue block by block).
  std::vector<Tensor> want = block({x});
  auto fused = std::make_shared<jit::Graph>(*g);
  std::vector<Tensor> got = jit::Executor(fused, block.params()).run({x});
  auto frozen = std::make_shared<jit::Graph>(*jit::trace(std::ref(block), {x}, block.params()));
  jit::freeze_parameters(*frozen, block.params());
  auto frozen_plain = std::make_shared<jit::Graph>(*frozen);
  jit::fuse_elementwise(*frozen);
  EXPECT_EQ(jit::fuse_conv_epilogue(*frozen), 2);
  jit::ExecutorOptions packed;
  packed.prepack_weights = true;
  jit::Executor fast(frozen, {}, packed), plain(frozen_plain, {}, packed);
  EXPECT_EQ(fast.prepacked_weights(), 4);
  EXPECT_EQ(fast.direct_convolutions(), 3);  // the 3x3 ones
  std::vector<Tensor> got_packed = fast.run({x}), want_packed = plain.run({x});
  // im2col + GEMM: the epilogue runs over the whole output afterwards.
  cpu::set_direct_conv_enabled(false);
  jit::Executor fast_im2col(frozen, {}, packed), plain_im2col(frozen_plain, {}, packed);
  cpu::set_direct_conv_enabled(true);
  EXPECT_EQ(fast_im2col.direct_convolutions(), 0);
  std::vector<Tensor> got_im2col = fast_im2col.run({x}), want_im2col = plain_im2col.run({x});
  for (size_t i = 0; i < want.size(); ++i) {
    expect_same(got[i], want[i], 0);
    expect_same(got_packed[i], want_packed[i], 0);
    expect_same(got_im2col[i], want_im2col[i], 0);
    expect_same(got_packed[i], want[i], 1e-5, 1e-5);
  }
}

TEST(JitPasses, ConvEpilogueNeedsTheWholeOutput) {
  Tensor w = randn({4, 2, 3, 3});
  auto f = [&](const std::vector<Tensor>& xs) {
    Tensor y = conv2d(xs[0], w, Tensor(), 1, 1);  // [1, 4, 5, 5], broadcast against xs[1]
    return std::vector<Tensor>{(y + xs[1]).relu(), conv2d(xs[0], w, Tensor(), 1, 1).exp()};
  };
  Tensor x = randn({1, 2, 5, 5}), other = randn({3, 4, 5, 5});
  auto g = jit::trace(f, {x, other}, {{"w", w}});
  jit::fuse_elementwise(*g);
  EXPECT_EQ(jit::fuse_conv_epilogue(*g), 1);  // only the second: the first output is broadcast
  std::cout << *g;
  EXPECT_EQ(count_op(*g, "conv2d+[exp]"), 1);
  std::vector<Tensor> got = jit::Executor(g, {{"w", w}}).run({x, other}), want = f({x, other});
  expect_same(got[0], want[0], 0);
  expect_same(got[1], want[1], 0);
}

TEST(JitPasses, ConvEpilogueStaysBeforeAnUpdateOfItsInput) {
  Tensor w = randn({3, 3, 3, 3});
  auto f = [&](const std::vector<Tensor>& xs) {
    Tensor buf = xs[0].exp();
    Tensor y = conv2d(buf, w, Tensor(), 1, 1);
    buf.mul_(2);  // the convolution must still read buf before this
    return std::vector<Tensor>{(y + buf).relu()};
  };
  Tensor x = randn({2, 3, 9, 9});
  auto g = jit::trace(f, {x}, {{"w", w}});
  jit::fuse_elementwise(*g);
  EXPECT_EQ(jit::fuse_conv_epilogue(*g), 0);
  std::cout << *g;
  expect_same(jit::Executor(g, {{"w", w}}).run({x})[0], f({x})[0], 0);
  // Updated before the convolution, the same storage does not stop it.
  auto h = [&](const std::vector<Tensor>& xs) {
    Tensor buf = xs[0].exp();
    buf.mul_(2);
    Tensor y = conv2d(buf, w, Tensor(), 1, 1);
    return std::vector<Tensor>{(y + buf).relu()};
  };
  auto gh = jit::trace(h, {x}, {{"w", w}});
  jit::fuse_elementwise(*gh);
  EXPECT_EQ(jit::fuse_conv_epilogue(*gh), 1);
  std::cout << *gh;
  EXPECT_EQ(count_op(*gh, "conv2d+[add, relu]"), 1);
  expect_same(jit::Executor(gh, {{"w", w}}).run({x})[0], h({x})[0], 0);
}
