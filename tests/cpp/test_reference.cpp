// Layers, losses, optimizers and LR schedules against PyTorch: forward values and gradients
// recorded by tests/fixtures/make_nn_fixtures.py (PyTorch 1.13, float64) in
// tests/fixtures/nn_reference.safetensors. Each case below repeats the script's configuration.
#include <functional>

#include "nn/functional.h"
#include "nn/layers/transformer.h"
#include "nn/optim.h"
#include "nn/serialization.h"
#include "tests/cpp/test_util.h"

namespace wick {
namespace {

using testing::expect_close;
namespace F = nn::functional;

const StateDict& fixtures() {
  static const StateDict tensors =
      load_safetensors(testing::source_path("tests/fixtures/nn_reference.safetensors")).tensors;
  return tensors;
}

Tensor fixture(const std::string& key) {
  auto it = fixtures().find(key);
  if (it == fixtures().end()) throw std::runtime_error("no fixture " + key);
  return it->second;
}

bool has_fixture(const std::string& key) { return fixtures().count(key) > 0; }

// Runs `fn` on the case's recorded inputs and compares the output and every input's gradient.
void check(const std::string& name, int inputs, const std::function<Tensor(const TensorList&)>& fn,
           double tolerance = 1e-10) {
  SCOPED_TRACE(name);
  TensorList args;
  for (int i = 0; i < inputs; ++i) {
    Tensor t = fixture(name + ".in" + std::to_string(i)).clone();
    if (t.is_floating_point()) t.requires_grad_();
    args.push_back(t);
  }
  Tensor out = fn(args);
  expect_close(out, fixture(name + ".out"), tolerance, tolerance);
  (out * fixture(name + ".upstream")).sum().backward();
  for (int i = 0; i < inputs; ++i) {
    std::string key = name + ".grad" + std::to_string(i);
    if (!has_fixture(key)) continue;
    ASSERT_TRUE(args[i].grad().defined()) << "no gradient for input " << i;
    expect_close(args[i].grad(), fixture(key), tolerance, tolerance);
  }
}

TEST(Reference, Layers) {
  check("linear", 3, [](const TensorList& t) { return F::linear(t[0], t[1], t[2]); });
  check("conv_plain", 3, [](const TensorList& t) { return F::conv2d(t[0], t[1], t[2]); });
  check("conv_stride_pad", 3,
        [](const TensorList& t) { return F::conv2d(t[0], t[1], t[2], 2, 1); });
  check("conv_dilation_groups", 2, [](const TensorList& t) {
    return F::conv2d(t[0], t[1], Tensor(), 1, {1, 0}, {2, 1}, 2);
  });
  check("max_pool", 1,
        [](const TensorList& t) { return F::max_pool2d(t[0], 3, 2, 1, 1, /*ceil_mode=*/true); });
  check("max_pool_dilated", 1, [](const TensorList& t) { return F::max_pool2d(t[0], 2, 1, 0, 2); });
  check("avg_pool", 1, [](const TensorList& t) { return F::avg_pool2d(t[0], 3, 2, 1); });
  check("avg_pool_exclude_pad", 1,
        [](const TensorList& t) { return F::avg_pool2d(t[0], 3, 2, 1, true, false); });
  check("adaptive_avg_pool", 1, [](const TensorList& t) {
    return F::adaptive_avg_pool2d(t[0], {3, 2});
  });
  check("layer_norm", 3, [](const TensorList& t) {
    return F::layer_norm(t[0], {6, 5}, t[1], t[2]);
  });
  check("embedding", 2, [](const TensorList& t) { return F::embedding(t[0], t[1], 1); });
  check("softmax", 1, [](const TensorList& t) { return F::softmax(t[0], 1); });
  check("log_softmax", 1, [](const TensorList& t) { return F::log_softmax(t[0], 0); });
  check("gelu_tanh", 1, [](const TensorList& t) { return F::gelu(t[0], "tanh"); });
}

TEST(Reference, BatchNormTrainingAndEval) {
  for (const char* name : {"batch_norm2d", "batch_norm1d"}) {
    Tensor running_mean = fixture(std::string(name) + ".running_mean_before").clone();
    Tensor running_var = fixture(std::string(name) + ".running_var_before").clone();
    check(name, 3, [&](const TensorList& t) {
      return F::batch_norm(t[0], running_mean, running_var, t[1], t[2], true, 0.1, 1e-5);
    });
    expect_close(running_mean, fixture(std::string(name) + ".running_mean_after"), 1e-10, 1e-10);
    expect_close(running_var, fixture(std::string(name) + ".running_var_after"), 1e-10, 1e-10);
  }
  check("batch_norm_eval", 3, [](const TensorList& t) {
    return F::batch_norm(t[0], arange(3).to(kFloat64), arange(1, 4).to(kFloat64), t[1], t[2],
                         false);
  });
}

TEST(Reference, Losses) {
  Tensor labels = tensor({2, 0, 4, 4, 1, 3});
  check("cross_entropy", 1, [&](const TensorList& t) { return F::cross_entropy(t[0], labels); });
  F::CrossEntropyOptions smooth;
  smooth.ignore_index = 4;
  smooth.label_smoothing = 0.15;
  check("cross_entropy_smooth_ignore", 1,
        [&](const TensorList& t) { return F::cross_entropy(t[0], labels, smooth); });
  F::CrossEntropyOptions sum;
  sum.reduction = F::Reduction::Sum;
  check("cross_entropy_sum", 1,
        [&](const TensorList& t) { return F::cross_entropy(t[0], labels, sum); });
  F::CrossEntropyOptions none;
  none.reduction = F::Reduction::None;
  Tensor pixels = fixture("cross_entropy_spatial.target");
  check("cross_entropy_spatial", 1,
        [&](const TensorList& t) { return F::cross_entropy(t[0], pixels, none); });
  check("nll_loss", 1,
        [&](const TensorList& t) { return F::nll_loss(F::log_softmax(t[0], 1), labels); });
  check("mse_loss", 2, [](const TensorList& t) { return F::mse_loss(t[0], t[1]); });
  check("l1_loss", 2,
        [](const TensorList& t) { return F::l1_loss(t[0], t[1], F::Reduction::Sum); });
  Tensor binary = fixture("bce_with_logits.target");
  check("bce_with_logits", 1,
        [&](const TensorList& t) { return F::binary_cross_entropy_with_logits(t[0], binary); });
  Tensor pos_weight = fixture("bce_with_logits_pos_weight.pos_weight");
  check("bce_with_logits_pos_weight", 1, [&](const TensorList& t) {
    return F::binary_cross_entropy_with_logits(t[0], binary, F::Reduction::Mean, pos_weight);
  });
}

std::unique_ptr<optim::Optimizer> make_optimizer(const std::string& name, TensorList params) {
  using namespace optim;
  if (name == "sgd") return std::make_unique<SGD>(params, SGDOptions{0.1});
  if (name == "sgd_momentum")
    return std::make_unique<SGD>(params, SGDOptions{0.05, 0.9, 0.1, 0.01});
  if (name == "sgd_nesterov") {
    return std::make_unique<SGD>(params, SGDOptions{0.05, 0.8, 0.0, 0.0, true});
  }
  if (name == "adam") return std::make_unique<Adam>(params, AdamOptions{0.01});
  if (name == "adam_weight_decay") {
    return std::make_unique<Adam>(params, AdamOptions{0.01, 0.8, 0.95, 1e-6, 0.1});
  }
  return std::make_unique<AdamW>(params, AdamOptions{0.01, 0.9, 0.999, 1e-8, 0.1});
}

TEST(Reference, OptimizersMatchPyTorchStepByStep) {
  Tensor x = fixture("optim.x"), y = fixture("optim.y");
  for (const char* name :
       {"sgd", "sgd_momentum", "sgd_nesterov", "adam", "adam_weight_decay", "adamw"}) {
    SCOPED_TRACE(name);
    Tensor w = fixture("optim.w0").clone().requires_grad_();
    Tensor b = fixture("optim.b0").clone().requires_grad_();
    auto optimizer = make_optimizer(name, {w, b});
    for (int step = 0; step < 5; ++step) {
      optimizer->zero_grad();
      F::mse_loss(matmul(x, w) + b, y).backward();
      optimizer->step();
      std::string prefix = "optim_" + std::string(name) + ".";
      expect_close(w, fixture(prefix + "w" + std::to_string(step)), 1e-6, 1e-6);
      expect_close(b, fixture(prefix + "b" + std::to_string(step)), 1e-6, 1e-6);
    }
  }
}

TEST(Reference, SchedulesMatchPyTorch) {
  using namespace optim;
  using Make = std::function<std::unique_ptr<LRScheduler>(Optimizer&)>;
  std::vector<std::pair<std::string, Make>> schedules = {
      {"step", [](Optimizer& o) { return std::make_unique<StepLR>(o, 5, 0.5); }},
      {"multistep",
       [](Optimizer& o) {
         return std::make_unique<MultiStepLR>(o, std::vector<int64_t>{3, 7, 12}, 0.3);
       }},
      {"cosine", [](Optimizer& o) { return std::make_unique<CosineAnnealingLR>(o, 10, 0.001); }},
      {"linear", [](Optimizer& o) { return std::make_unique<LinearLR>(o, 0.25, 1.0, 6); }},
      {"onecycle", [](Optimizer& o) { return std::make_unique<OneCycleLR>(o, 1.0, 20); }},
      {"onecycle_linear_three_phase", [](Optimizer& o) {
         OneCycleOptions options;
         options.pct_start = 0.25;
         options.cos_anneal = false;
         options.three_phase = true;
         return std::make_unique<OneCycleLR>(o, 0.5, 20, options);
       }}};
  for (auto& [name, make] : schedules) {
    SCOPED_TRACE(name);
    SGD sgd({zeros({1}).requires_grad_()}, SGDOptions{0.1, 0.9});
    auto schedule = make(sgd);
    std::vector<double> lrs = {sgd.param_groups()[0].options["lr"]};
    std::vector<double> momenta = {sgd.param_groups()[0].options["momentum"]};
    for (int i = 0; i < 19; ++i) {
      schedule->step();
      lrs.push_back(sgd.param_groups()[0].options["lr"]);
      momenta.push_back(sgd.param_groups()[0].options["momentum"]);
    }
    expect_close(tensor(lrs), fixture("schedule_" + name + ".lr"), 1e-9, 1e-9);
    expect_close(tensor(momenta), fixture("schedule_" + name + ".momentum"), 1e-9, 1e-9);
  }
}

// A module case: load the recorded parameters, run `call` on the recorded inputs, compare the
// output and the gradients of the inputs and of every parameter.
void check_module(const std::string& name, nn::Module& module, int inputs,
                  const std::function<Tensor(const TensorList&)>& call) {
  SCOPED_TRACE(name);
  module.to(kFloat64);
  StateDict state;
  for (const auto& [key, value] : module.state_dict()) state[key] = fixture(name + ".param." + key);
  module.load_state_dict(state);
  check(name, inputs, call, 1e-9);
  for (const auto& [key, p] : module.named_parameters()) {
    SCOPED_TRACE(key);
    ASSERT_TRUE(p.grad().defined());
    expect_close(p.grad(), fixture(name + ".pgrad." + key), 1e-9, 1e-9);
  }
}

TEST(Reference, TransformerDecoderAndEncoderDecoder) {
  Tensor causal = fixture("decoder_layer.tgt_mask");
  nn::TransformerDecoderLayer layer(8, 2, 12, 0.0, "relu", 1e-5, /*batch_first=*/true);
  check_module("decoder_layer", layer, 2,
               [&](const TensorList& t) { return layer.forward(t[0], t[1], causal); });
  nn::TransformerDecoderLayer norm_first(8, 2, 12, 0.0, "gelu", 1e-5, false, /*norm_first=*/true);
  check_module("decoder_layer_norm_first_gelu", norm_first, 2,
               [&](const TensorList& t) { return norm_first.forward(t[0], t[1]); });
  nn::Transformer transformer(8, 2, 2, 2, 12, 0.0);
  check_module("transformer", transformer, 2, [&](const TensorList& t) {
    return transformer.forward(t[0], t[1], Tensor(), causal);
  });
}

}  // namespace
}  // namespace wick
