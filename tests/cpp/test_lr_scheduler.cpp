// The learning-rate schedules of nn/optim/lr_scheduler.h and nn/optim/plateau.h: each one's rates
// over 30 epochs against its formula. PyTorch comparisons are in tests/python/test_lr_scheduler.py.
#include <cmath>
#include <functional>

#include "nn/optim.h"
#include "tests/cpp/test_util.h"

namespace wick::optim {
namespace {

using wick::testing::expect_error;

// Steps `s` 30 times, expecting the rate `expected(epoch)` in the optimizer at every epoch.
void expect_sequence(LRScheduler& s, Optimizer& opt, const std::function<double(int)>& expected) {
  for (int epoch = 0; epoch < 30; ++epoch) {
    double lr = opt.param_groups()[0].options.at("lr");
    EXPECT_NEAR(lr, expected(epoch), 1e-12) << "epoch " << epoch;
    EXPECT_EQ(s.get_last_lr()[0], lr);
    EXPECT_EQ(s.last_epoch(), epoch);
    s.step();
  }
}

TEST(LRScheduler, ExponentialAndLambdaSchedules) {
  Tensor p = full({2}, 1.0).requires_grad_();
  SGD opt({p}, SGDOptions{0.1, 0.9});
  ExponentialLR exponential(opt, 0.9);
  expect_sequence(exponential, opt, [](int e) { return 0.1 * std::pow(0.9, e); });
  SGD opt2({p}, SGDOptions{0.1});
  LambdaLR lambda(opt2, {[](int64_t e) { return 1.0 / (1 + e); }});
  expect_sequence(lambda, opt2, [](int e) { return 0.1 / (1 + e); });
  expect_error<std::invalid_argument>(
      [&] {
        LambdaLR(opt2, {[](int64_t) { return 1.0; }, [](int64_t) { return 1.0; }});
      },
      "[LambdaLR] Expected 1 lr_lambdas, but got 2");
}

TEST(LRScheduler, CosineAnnealingWarmRestarts) {
  Tensor p = full({2}, 1.0).requires_grad_();
  SGD opt({p}, SGDOptions{0.1});
  CosineAnnealingWarmRestarts s(opt, 3, 2, 0.01);
  // periods 3, 6, 12, 24: restarts at epochs 0, 3, 9, 21
  expect_sequence(s, opt, [](int e) {
    int start = e < 3 ? 0 : e < 9 ? 3 : e < 21 ? 9 : 21;
    int period = e < 3 ? 3 : e < 9 ? 6 : e < 21 ? 12 : 24;
    return 0.01 + 0.09 * (1 + std::cos(M_PI * (e - start) / period)) / 2;
  });
  expect_error<std::invalid_argument>([&] { CosineAnnealingWarmRestarts(opt, 0); },
                                      "Expected positive integer T_0, but got 0");
}

TEST(LRScheduler, CyclicLRCyclesRateAndMomentum) {
  Tensor p = full({2}, 1.0).requires_grad_();
  SGD opt({p}, SGDOptions{0.5, 0.9});
  CyclicOptions o;
  o.step_size_up = 4;
  o.step_size_down = 2;
  o.mode = "triangular2";
  CyclicLR s(opt, {0.01}, {0.1}, o);
  // up over 4 steps, down over 2; the amplitude halves every cycle of 6
  auto height = [](int e) {
    int x = e % 6;
    return x <= 4 ? x / 4.0 : (6 - x) / 2.0;
  };
  for (int e = 0; e < 30; ++e) {
    double scale = std::pow(0.5, e / 6);
    EXPECT_NEAR(opt.param_groups()[0].options.at("lr"), 0.01 + 0.09 * height(e) * scale, 1e-12);
    EXPECT_NEAR(opt.param_groups()[0].options.at("momentum"), 0.9 - 0.1 * height(e) * scale, 1e-12);
    s.step();
  }
  Adam adam({p}, AdamOptions{});
  CyclicLR on_adam(adam, {0.01}, {0.1});  // Adam's beta1 cycles instead
  EXPECT_EQ(adam.param_groups()[0].options.at("beta1"), 0.9);
  Adagrad adagrad({p});
  expect_error<std::invalid_argument>([&] { CyclicLR(adagrad, {0.01}, {0.1}); },
                                      "optimizer must support momentum");
}

TEST(LRScheduler, SequentialLRSwitchesAtMilestones) {
  Tensor p = full({2}, 1.0).requires_grad_();
  SGD opt({p}, SGDOptions{0.1});
  LinearLR warmup(opt, 0.1, 1.0, 4);
  ExponentialLR decay(opt, 0.5);
  SequentialLR s(opt, {&warmup, &decay}, {5});
  // the second schedule starts from the user's rate, not where the warm-up left it
  expect_sequence(s, opt, [](int e) {
    return e < 5 ? 0.1 * (0.1 + 0.9 * std::min(e, 4) / 4.0) : 0.1 * std::pow(0.5, e - 5);
  });
  expect_error<std::invalid_argument>(
      [&] {
        SequentialLR(opt, {&warmup, &decay}, {});
      },
      "one more than the number of milestone points");
}

TEST(LRScheduler, ReduceLROnPlateau) {
  Tensor p = full({2}, 1.0).requires_grad_();
  SGD opt({p}, SGDOptions{1.0});
  PlateauOptions o;
  o.patience = 2;
  o.factor = 0.5;
  o.cooldown = 1;
  o.min_lr = {0.2};
  ReduceLROnPlateau s(opt, o);
  // improvements at epochs 1-2, then a plateau: drops after 3 bad epochs, one epoch of cooldown
  std::vector<double> losses = {1.0, 0.9, 0.8, 0.8, 0.8, 0.8, 0.8, 0.8, 0.8, 0.8, 0.8, 0.8, 0.8};
  std::vector<double> lrs = {1, 1, 1, 1, 1, 0.5, 0.5, 0.5, 0.5, 0.25, 0.25, 0.25, 0.25};
  for (size_t e = 0; e < losses.size(); ++e) {
    s.step(losses[e]);
    EXPECT_NEAR(opt.param_groups()[0].options.at("lr"), lrs[e], 1e-12) << "epoch " << e;
  }
  for (int e = 0; e < 10; ++e) s.step(1.0);
  EXPECT_EQ(opt.param_groups()[0].options.at("lr"), 0.2);  // min_lr
  EXPECT_EQ(s.best(), 0.8);
  StateDict sd = s.state_dict();
  ReduceLROnPlateau restored(opt, o);
  restored.load_state_dict(sd);
  EXPECT_EQ(restored.best(), 0.8);
  EXPECT_EQ(restored.num_bad_epochs(), s.num_bad_epochs());
  EXPECT_EQ(restored.last_epoch(), 23);
  o.factor = 1.0;
  expect_error<std::invalid_argument>([&] { ReduceLROnPlateau(opt, o); },
                                      "Factor should be < 1.0.");
}

}  // namespace
}  // namespace wick::optim
