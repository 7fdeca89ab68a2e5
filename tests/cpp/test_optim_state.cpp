// Optimizer state agreement and state-dict validation: a parameter resized after the optimizer has
// state, a gradient of another dtype, a state dict with an entry missing or a hyperparameter out of
// range - each raises a clear error and changes nothing, where it once overflowed the heap or
// resumed into NaN losses.
#include <cmath>

#include "nn/clip_grad.h"
#include "nn/grad_scaler.h"
#include "nn/layers.h"
#include "nn/optim.h"
#include "tests/cpp/test_util.h"

namespace wick::optim {
namespace {

using wick::testing::expect_close;
using wick::testing::expect_error;

Tensor param(const Shape& shape, double value = 1.0) { return full(shape, value).requires_grad_(); }

// One step of each optimizer over `p` with gradient 1, so that each has state.
void take_a_step(Optimizer& opt, Tensor& p) {
  p.set_grad(ones_like(p));
  opt.step();
}

TEST(OptimizerState, ResizedParameterIsRefusedByEveryOptimizer) {
  for (int kind = 0; kind < 3; ++kind) {
    for (int64_t new_size : {5, 2}) {  // larger (heap overflow) and smaller (stale read)
      Tensor p = param({3});
      std::unique_ptr<Optimizer> opt;
      if (kind == 0) opt = std::make_unique<SGD>(std::vector<Tensor>{p}, SGDOptions{0.1, 0.9});
      if (kind == 1) opt = std::make_unique<Adam>(std::vector<Tensor>{p}, AdamOptions{});
      if (kind == 2) opt = std::make_unique<AdamW>(std::vector<Tensor>{p});
      take_a_step(*opt, p);
      p.set_data(full({new_size}, 2.0));
      p.set_grad(ones({new_size}));
      std::string name = opt->name();
      expect_error<std::runtime_error>([&] { opt->step(); },
                                       "[" + name + "] step: parameter 0 has shape (" +
                                           std::to_string(new_size) + ",) but its state");
      expect_close(p, full({new_size}, 2.0), 0, 0);  // not updated
    }
  }
}

TEST(OptimizerState, MismatchLeavesEveryParameterUnchanged) {
  Tensor a = param({2}), b = param({3});
  SGD opt({a, b}, SGDOptions{0.1, 0.9});
  a.set_grad(ones({2}));
  b.set_grad(ones({3}));
  opt.step();
  b.set_data(zeros({4}));
  b.set_grad(ones({4}));
  Tensor a_before = a.detach().clone();
  expect_error<std::runtime_error>([&] { opt.step(); }, "parameter 1 has shape (4,)");
  expect_close(a, a_before, 0, 0);  // checked before any update, not half-way
}

TEST(OptimizerState, GradientMustMatchItsParameter) {
  Tensor p = param({3});
  expect_error<std::runtime_error>([&] { p.set_grad(ones({3}, kFloat64)); },
                                   "assigned grad has data of a different type");
  expect_error<std::runtime_error>([&] { p.set_grad(ones({4})); },
                                   "assigned grad has data of a different size");
  EXPECT_FALSE(p.grad().defined());
}

TEST(OptimizerState, LoadStateDictIsValidatedWholeAndChangesNothing) {
  Tensor a = param({2}), b = param({3});
  Adam opt({a, b}, AdamOptions{0.01});
  take_a_step(opt, a);
  b.set_grad(ones({3}));
  opt.step();
  const StateDict good = opt.state_dict();
  struct Case {
    const char* fragment;
    std::function<void(StateDict&)> edit;
  };
  auto number = [](double v) { return scalar_tensor(v, kFloat64); };
  std::vector<Case> cases = {
      {"the state of parameter 1 has no 'exp_avg_sq'",
       [](StateDict& s) { s.erase("state.1.exp_avg_sq"); }},
      {"the state of parameter 0 has no 'step'", [](StateDict& s) { s.erase("state.0.step"); }},
      {"'state.0.exp_avg' has shape (3,) but parameter 0 has shape (2,)",
       [](StateDict& s) { s["state.0.exp_avg"] = zeros({3}); }},
      {"'state.0.exp_avg' has shape ()", [](StateDict& s) { s["state.0.exp_avg"] = zeros({}); }},
      {"'state.0.step' is -5", [&](StateDict& s) { s["state.0.step"] = number(-5); }},
      {"'state.0.step' is 1.5", [&](StateDict& s) { s["state.0.step"] = number(1.5); }},
      {"unknown state entry 'state.0.momentum_buffer'",
       [](StateDict& s) { s["state.0.momentum_buffer"] = zeros({2}); }},
      {"state for parameter 2 but the optimizer has 2",
       [](StateDict& s) { s["state.2.exp_avg"] = zeros({2}); }},
      {"invalid learning rate nan", [&](StateDict& s) { s["param_groups.0.lr"] = number(NAN); }},
      {"invalid weight_decay -1",
       [&](StateDict& s) { s["param_groups.0.weight_decay"] = number(-1); }},
      {"betas must be in [0, 1); got (1,",
       [&](StateDict& s) { s["param_groups.0.beta1"] = number(1); }},
      {"group 0 has 2 parameters but the state dict has 3",
       [](StateDict& s) {
         s["param_groups.0.params"] = tensor(std::vector<int64_t>{0, 1, 2});
       }},
      {"unexpected key 'param_groups.1.params'",
       [](StateDict& s) { s["param_groups.1.params"] = tensor(std::vector<int64_t>{2}); }},
      {"the state dict has no group 0", [](StateDict& s) { s.erase("param_groups.0.params"); }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.fragment);
    StateDict bad = good;
    c.edit(bad);
    expect_error<std::invalid_argument>([&] { opt.load_state_dict(bad); }, c.fragment);
    StateDict now = opt.state_dict();
    ASSERT_EQ(now.size(), good.size());
    for (const auto& [name, t] : good) EXPECT_TRUE(equal(now.at(name), t)) << name;
  }
  opt.load_state_dict(good);
  opt.step();  // and it still trains
}

TEST(OptimizerState, ConstructorsAndGroupsShareTheRanges) {
  Tensor p = param({2});
  expect_error<std::invalid_argument>([&] { SGD({p}, SGDOptions{NAN}); },
                                      "[SGD] invalid learning rate nan");
  expect_error<std::invalid_argument>(
      [&] {
        SGD({p}, SGDOptions{0.1, -1});
      },
      "invalid momentum -1");
  expect_error<std::invalid_argument>(
      [&] {
        Adam({p}, AdamOptions{0.1, 0.9, 1.5});
      },
      "betas must be in [0, 1); got (0.9, 1.5)");
  expect_error<std::invalid_argument>(
      [&] {
        AdamW({p}, AdamOptions{0.1, 0.9, 0.99, -1});
      },
      "[AdamW] invalid epsilon -1");
  SGD opt({p}, SGDOptions{0.1});
  expect_error<std::invalid_argument>(
      [&] {
        opt.add_param_group({{param({1})}, {{"lr", -2}}});
      },
      "[SGD] group 1: invalid learning rate -2");
  EXPECT_EQ(opt.param_groups().size(), 1u);
}

TEST(OptimizerState, SchedulerAndScalerStateIsChecked) {
  Tensor p = param({2});
  SGD opt({p}, SGDOptions{0.1});
  StepLR sched(opt, 1, 0.5);
  StateDict s = sched.state_dict();
  s["last_epoch"] = scalar_tensor(int64_t(-2));
  expect_error<std::invalid_argument>([&] { sched.load_state_dict(s); }, "got -2");
  s = sched.state_dict();
  s["base_lrs"] = tensor({0.1, 0.2});
  expect_error<std::invalid_argument>([&] { sched.load_state_dict(s); }, "for 1 parameter groups");
  EXPECT_EQ(sched.last_epoch(), 0);

  amp::GradScaler scaler;
  StateDict ss = scaler.state_dict();
  ss["scale"] = scalar_tensor(-1.0, kFloat64);
  expect_error<std::invalid_argument>([&] { scaler.load_state_dict(ss); },
                                      "scale must be positive and finite; got -1");
  ss = scaler.state_dict();
  ss["backoff_factor"] = scalar_tensor(2.0, kFloat64);
  expect_error<std::invalid_argument>([&] { scaler.load_state_dict(ss); },
                                      "backoff_factor must be in (0, 1); got 2");
  EXPECT_EQ(scaler.get_scale(), amp::GradScalerOptions{}.init_scale);
}

TEST(ClipGradNorm, NonFiniteNormScalesEveryGradientAlike) {
  Tensor a = param({2}), b = param({2});
  a.set_grad(tensor({NAN, 1.0f}));
  b.set_grad(ones({2}));
  Tensor norm = nn::utils::clip_grad_norm_({a, b}, 1.0);
  EXPECT_TRUE(std::isnan(norm.item<double>()));
  EXPECT_TRUE(std::isnan(b.grad().to_vector<float>()[0]));  // PyTorch: NaN reaches every one
  a.set_grad(tensor({INFINITY, 1.0f}));
  b.set_grad(ones({2}));
  nn::utils::clip_grad_norm_({a, b}, 1.0);
  expect_close(b.grad(), zeros({2}), 0, 0);  // scaled by max_norm / inf = 0
  expect_error<std::runtime_error>(
      [&] {
        nn::utils::clip_grad_norm_({a, b}, 1.0, 2.0, true);
      },
      "[clip_grad_norm_]");
}

TEST(ModuleStateDict, EveryProblemIsReportedInOneError) {
  nn::Linear fc(2, 3);
  StateDict s = {{"weight", zeros({3, 3})}, {"extra", zeros({1})}};
  StateDict before = fc.state_dict();
  expect_error<std::invalid_argument>(
      [&] { fc.load_state_dict(s); },
      "missing keys: 'bias'; unexpected keys: 'extra'; size mismatch for weight");
  for (const auto& [name, t] : fc.state_dict()) EXPECT_TRUE(equal(t, before.at(name)));
}

}  // namespace
}  // namespace wick::optim
