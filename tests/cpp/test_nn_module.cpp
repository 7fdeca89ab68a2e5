// nn::Module's tree, state dicts and printing; the layers' behaviour; gradcheck of the composite
// layers and losses; bad input.
#include <cmath>

#include "nn/containers.h"
#include "nn/functional.h"
#include "nn/init.h"
#include "nn/layers.h"
#include "nn/layers/normalization.h"
#include "tests/cpp/test_util.h"

namespace wick::nn {
namespace {

using wick::testing::expect_close;
using wick::testing::expect_error;
using wick::testing::input;

struct Net : Module {
  std::shared_ptr<Conv2d> conv;
  std::shared_ptr<BatchNorm2d> bn;
  std::shared_ptr<Linear> fc;
  Net() : Module("Net") {
    conv = register_module("conv", std::make_shared<Conv2d>(1, 4, 3, 1, 1));
    bn = register_module("bn", std::make_shared<BatchNorm2d>(4));
    fc = register_module("fc", std::make_shared<Linear>(4 * 5 * 5, 3));
  }
  Tensor forward(const Tensor& x) override { return (*fc)(F::flatten(F::relu((*bn)((*conv)(x))))); }
};

TEST(Module, TreeNamesAndCounts) {
  Net net;
  std::vector<std::string> names;
  for (auto& [name, p] : net.named_parameters()) names.push_back(name);
  EXPECT_EQ(names, (std::vector<std::string>{"conv.weight", "conv.bias", "bn.weight", "bn.bias",
                                             "fc.weight", "fc.bias"}));
  std::vector<std::string> buffers;
  for (auto& [name, b] : net.named_buffers()) buffers.push_back(name);
  EXPECT_EQ(buffers, (std::vector<std::string>{"bn.running_mean", "bn.running_var",
                                               "bn.num_batches_tracked"}));
  EXPECT_EQ(net.num_parameters(), 4 * 9 + 4 + 4 + 4 + 100 * 3 + 3);
  EXPECT_EQ(net.named_modules().size(), 4u);
  EXPECT_EQ(net.children().size(), 3u);
  EXPECT_THROW(net.register_parameter("fc", ones({1})), std::invalid_argument);  // name taken
  EXPECT_THROW(net.register_buffer("a.b", ones({1})), std::invalid_argument);
}

TEST(Module, PrintsLikePyTorch) {
  Net net;
  EXPECT_EQ(
      net.repr(),
      "Net(\n"
      "  (conv): Conv2d(1, 4, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1))\n"
      "  (bn): BatchNorm2d(4, eps=1e-05, momentum=0.1, affine=True, track_running_stats=True)\n"
      "  (fc): Linear(in_features=100, out_features=3, bias=True)\n"
      ")");
  Sequential seq({std::make_shared<Linear>(2, 2, false), std::make_shared<ReLU>(),
                  std::make_shared<Dropout>(0.25)});
  EXPECT_EQ(seq.repr(),
            "Sequential(\n"
            "  (0): Linear(in_features=2, out_features=2, bias=False)\n"
            "  (1): ReLU()\n"
            "  (2): Dropout(p=0.25, inplace=False)\n"
            ")");
}

TEST(Module, TrainEvalZeroGradAndTo) {
  Net net;
  net.eval();
  EXPECT_FALSE(net.bn->is_training());
  net.train();
  EXPECT_TRUE(net.conv->is_training());
  Tensor out = net(randn({2, 1, 5, 5})).sum();
  out.backward();
  EXPECT_TRUE(net.fc->weight.grad().defined());
  net.zero_grad(/*set_to_none=*/false);
  expect_close(net.fc->weight.grad().abs().sum(), {0.0}, {});
  net.zero_grad();
  EXPECT_FALSE(net.fc->weight.grad().defined());
  Tensor handle = net.fc->weight;  // an optimizer would hold this
  net.to(kFloat64);
  EXPECT_EQ(handle.dtype(), kFloat64);                     // same tensor, new data
  EXPECT_EQ(net.bn->num_batches_tracked.dtype(), kInt64);  // integer buffers keep their dtype
  EXPECT_EQ(net(randn({1, 1, 5, 5}, kFloat64)).dtype(), kFloat64);
}

TEST(Module, StateDictRoundTripAndErrors) {
  manual_seed(1);
  Net a;
  manual_seed(2);
  Net b;
  b.load_state_dict(a.state_dict());
  Tensor x = randn({2, 1, 5, 5});
  a.eval(), b.eval();
  expect_close(a(x), b(x), 0, 0);

  StateDict missing = a.state_dict();
  missing.erase("fc.bias");
  expect_error<std::invalid_argument>([&] { b.load_state_dict(missing); },
                                      "missing keys: 'fc.bias'");
  StateDict extra = a.state_dict();
  extra["head.weight"] = ones({1});
  expect_error<std::invalid_argument>([&] { b.load_state_dict(extra); },
                                      "unexpected keys: 'head.weight'");
  auto result = b.load_state_dict(extra, /*strict=*/false);
  EXPECT_EQ(result.unexpected, (std::vector<std::string>{"head.weight"}));
  StateDict wrong = a.state_dict();
  wrong["fc.weight"] = ones({3, 99});
  Tensor before = b.fc->weight.clone();
  expect_error<std::invalid_argument>([&] { b.load_state_dict(wrong); },
                                      "size mismatch for fc.weight: the checkpoint has shape (3, "
                                      "99), the model has shape (3, 100)");
  expect_close(b.fc->weight, before, 0, 0);  // nothing was changed by the failed load
}

TEST(Layers, InitialisationLikePyTorch) {
  Linear fc(400, 10);
  double bound = 1 / std::sqrt(400.0);
  EXPECT_LE(fc.weight.abs().max().item<double>(), bound);
  EXPECT_GT(fc.weight.abs().max().item<double>(), 0.9 * bound);
  EXPECT_LE(fc.bias.abs().max().item<double>(), bound);
  // Uniform(-b, b) has variance b^2 / 3.
  EXPECT_NEAR(fc.weight.var().item<double>(), bound * bound / 3, 0.1 * bound * bound / 3);
  Tensor w = empty({256, 128});
  init::kaiming_normal_(w, 0.0, init::FanMode::FanIn, "relu");
  EXPECT_NEAR(w.std().item<double>(), std::sqrt(2.0 / 128), 0.01);
  init::xavier_uniform_(w);
  EXPECT_NEAR(w.std().item<double>(), std::sqrt(2.0 / (128 + 256)), 0.005);
  EXPECT_NEAR(init::calculate_gain("leaky_relu", 0.2), std::sqrt(2.0 / 1.04), 1e-12);
}

// No padding_idx means no padding row: every row is drawn from N(0, 1). A negative padding_idx
// counts from the end, as in PyTorch (an earlier default of -1 zeroed the last row silently).
TEST(Layers, EmbeddingPaddingRow) {
  auto row_is_zero = [](const Embedding& e, int64_t row) {
    return e.weight.select(0, row).abs().sum().item<double>() == 0.0;
  };
  Embedding plain(5, 3);
  for (int64_t row = 0; row < 5; ++row) EXPECT_FALSE(row_is_zero(plain, row)) << row;
  Embedding last(5, 3, -1);
  EXPECT_TRUE(row_is_zero(last, 4));
  EXPECT_FALSE(row_is_zero(last, 0));
  Embedding first(5, 3, 0);
  EXPECT_TRUE(row_is_zero(first, 0));
  EXPECT_THROW(Embedding(5, 3, 5), std::out_of_range);
  EXPECT_THROW(Embedding(5, 3, -6), std::out_of_range);
}

TEST(Layers, BatchNormTracksStatistics) {
  BatchNorm2d bn(3);
  Tensor x = randn({8, 3, 4, 4}) * 2.0 + 5.0;
  Tensor y = bn(x);
  expect_close(y.mean({0, 2, 3}), {0, 0, 0}, {3}, 1e-5);
  expect_close(bn.running_mean, x.mean({0, 2, 3}) * 0.1, 1e-5, 1e-5);
  EXPECT_EQ(bn.num_batches_tracked.item<int64_t>(), 1);
  bn.eval();
  Tensor z = bn(x);  // running stats, not the batch's
  EXPECT_GT(z.mean().item<double>(), 1.0);
  EXPECT_EQ(bn.num_batches_tracked.item<int64_t>(), 1);
}

TEST(Layers, DropoutScalesAndTurnsOff) {
  Dropout drop(0.25);
  Tensor x = ones({100000});
  Tensor y = drop(x);
  double kept = (y > 0).to(kFloat32).mean().item<double>();
  EXPECT_NEAR(kept, 0.75, 0.01);
  EXPECT_NEAR(y.max().item<double>(), 1 / 0.75, 1e-6);
  EXPECT_NEAR(y.mean().item<double>(), 1.0, 0.02);
  drop.eval();
  EXPECT_TRUE(drop(x).is_same(x));
  expect_close(F::dropout(ones({3}), 1.0), {0, 0, 0}, {3});
}

TEST(Layers, EmbeddingAndPadding) {
  Embedding emb(5, 3, /*padding_idx=*/0);
  expect_close(emb.weight[0], {0, 0, 0}, {3});
  Tensor idx = tensor({0, 2, 2, 4}).reshape({2, 2});
  Tensor out = emb(idx);
  EXPECT_EQ(out.shape(), (Shape{2, 2, 3}));
  expect_close(out[0][1], emb.weight[2], 0, 0);
  out.sum().backward();
  expect_close(emb.weight.grad().sum({1}), {0, 0, 6, 0, 3}, {5});  // padding row gets nothing
}

TEST(Layers, SequentialAndModuleList) {
  Sequential seq;
  seq.push_back(std::make_shared<Linear>(4, 8)).push_back(std::make_shared<GELU>());
  seq.push_back(std::make_shared<Linear>(8, 2));
  EXPECT_EQ(seq(randn({3, 4})).shape(), (Shape{3, 2}));
  EXPECT_EQ(seq.named_parameters()[2].first, "2.weight");
  EXPECT_THROW(seq[5], std::out_of_range);
  ModuleList list({std::make_shared<Tanh>(), std::make_shared<Sigmoid>()});
  EXPECT_EQ(list.size(), 2u);
  expect_close((*list[1])(zeros({1})), {0.5}, {1});
}

TEST(Functional, GradcheckCompositeLayersAndLosses) {
  Tensor x = input({4, 5}), w = input({5}, 2), b = input({5}, 3);
  EXPECT_TRUE(gradcheck([](const TensorList& t) { return F::layer_norm(t[0], {5}, t[1], t[2]); },
                        {x, w, b}));
  EXPECT_TRUE(gradcheck(
      [](const TensorList& t) {
        manual_seed(0);  // the same mask on every evaluation
        return F::dropout(t[0], 0.3);
      },
      {x}));
  Tensor table = input({6, 3});
  EXPECT_TRUE(gradcheck(
      [](const TensorList& t) {
        return F::embedding(tensor({5, 0, 5, 1}), t[0], 2);
      },
      {table}));
  Tensor labels = tensor({1, 4, 0, 4});
  EXPECT_TRUE(gradcheck([&](const TensorList& t) { return F::cross_entropy(t[0], labels); }, {x}));
  F::CrossEntropyOptions smoothed;
  smoothed.label_smoothing = 0.2;
  smoothed.ignore_index = 0;
  EXPECT_TRUE(gradcheck(
      [&](const TensorList& t) { return F::cross_entropy(t[0], labels, smoothed); }, {x}));
  Tensor image_logits = input({2, 3, 2, 2});
  Tensor pixel_labels = tensor({0, 1, 2, 1, 2, 2, 0, 0}).reshape({2, 2, 2});
  EXPECT_TRUE(gradcheck([&](const TensorList& t) { return F::cross_entropy(t[0], pixel_labels); },
                        {image_logits}));
  EXPECT_TRUE(gradcheck(
      [&](const TensorList& t) {
        return F::nll_loss(log_softmax(t[0], 1), labels, -100, F::Reduction::Sum);
      },
      {x}));
  Tensor target = input({4, 5}, 9).detach();
  EXPECT_TRUE(gradcheck([&](const TensorList& t) { return F::mse_loss(t[0], target); }, {x}));
  EXPECT_TRUE(gradcheck([&](const TensorList& t) { return F::l1_loss(t[0], target); }, {x}));
  Tensor binary = (rand({4, 5}, kFloat64) > 0.5).to(kFloat64);
  EXPECT_TRUE(gradcheck(
      [&](const TensorList& t) { return F::binary_cross_entropy_with_logits(t[0], binary); }, {x}));
  Tensor pos_weight = rand({5}, kFloat64) + 0.5;
  EXPECT_TRUE(gradcheck(
      [&](const TensorList& t) {
        return F::binary_cross_entropy_with_logits(t[0], binary, F::Reduction::Mean, pos_weight);
      },
      {x}));
}

TEST(Functional, LossValues) {
  Tensor logits = tensor({{2.0, 0.5, -1.0}, {0.1, 0.2, 3.0}}, kFloat64);
  Tensor labels = tensor({0, 2});
  auto lse = [](double a, double b, double c) {
    return std::log(std::exp(a) + std::exp(b) + std::exp(c));
  };
  double l0 = lse(2.0, 0.5, -1.0) - 2.0, l1 = lse(0.1, 0.2, 3.0) - 3.0;
  expect_close(F::cross_entropy(logits, labels), {(l0 + l1) / 2}, {}, 1e-12);
  F::CrossEntropyOptions none;
  none.reduction = F::Reduction::None;
  expect_close(F::cross_entropy(logits, labels, none), {l0, l1}, {2}, 1e-12);
  F::CrossEntropyOptions ignore;
  ignore.ignore_index = 2;
  expect_close(F::cross_entropy(logits, labels, ignore), {l0}, {}, 1e-12);
  expect_close(F::mse_loss(tensor({1.0, 2.0}), tensor({3.0, 2.0})), {2.0}, {});
  expect_close(F::l1_loss(tensor({1.0, 2.0}), tensor({3.0, 2.0}), F::Reduction::Sum), {2.0}, {});
  // log(1 + e^-x) for label 1, x + log(1 + e^-x) for label 0; stable at +-100.
  expect_close(
      F::binary_cross_entropy_with_logits(tensor({100.0, -100.0}, kFloat64),
                                          tensor({1.0, 1.0}, kFloat64), F::Reduction::None),
      {0.0, 100.0}, {2}, 1e-12);
}

TEST(Functional, BadInput) {
  Tensor logits = randn({2, 3});
  expect_error<std::out_of_range>(
      [&] {
        F::cross_entropy(logits, tensor({0, 3}));
      },
      "[cross_entropy] target 3 is out of bounds for 3 classes");
  expect_error<TypeError>(
      [&] {
        F::cross_entropy(logits, tensor({0.0, 1.0}));
      },
      "[cross_entropy] target must hold class indices");
  expect_error<std::invalid_argument>(
      [&] {
        F::cross_entropy(logits, tensor({0, 1, 2}));
      },
      "input of shape (2, 3) needs a target of shape (2,)");
  expect_error<std::invalid_argument>(
      [] {
        F::mse_loss(ones({4, 1}), ones({4}));
      },
      "[mse_loss] input shape (4, 1) and target shape (4,) differ");
  expect_error<std::invalid_argument>(
      [] {
        F::layer_norm(ones({2, 3}), {4});
      },
      "[layer_norm] normalized_shape (4,) does not match");
  expect_error<std::invalid_argument>([] { F::dropout(ones({2}), 1.5); },
                                      "[dropout] probability must be in [0, 1]; got 1.5");
  expect_error<std::invalid_argument>([] { Linear(-1, 3); },
                                      "[Linear] in_features and out_features");
  expect_error<std::invalid_argument>(
      [] {
        BatchNorm2d(3)(ones({2, 3}));
      },
      "[BatchNorm2d] expected 4-D input");
  expect_error<std::invalid_argument>(
      [] {
        Linear(4, 2)(ones({3, 5}));
      },
      "[linear] input of shape (3, 5) does not match weight");
  expect_error<std::runtime_error>([] { Module("Plain")(ones({1})); },
                                   "[Plain] this module has no single-input forward");
}

}  // namespace
}  // namespace wick::nn
