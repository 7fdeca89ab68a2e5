// The optimizers of nn/optim/ beyond SGD and Adam (which test_reference.cpp compares with
// PyTorch): each one's first step against the formula worked by hand, each one minimising a
// quadratic, their option checks and state dicts, and L-BFGS. PyTorch comparisons, step by step,
// are in tests/python/test_optim_adaptive.py and test_lbfgs.py.
#include <cmath>
#include <functional>

#include "nn/optim.h"
#include "tests/cpp/test_util.h"

namespace wick::optim {
namespace {

using wick::testing::expect_close;
using wick::testing::expect_error;

// p = (1, -2) with gradient g = (2, -0.5): the first step of each optimizer, by hand.
struct FirstStep {
  Tensor p = tensor(std::vector<double>{1.0, -2.0}).requires_grad_();
  void step(Optimizer& opt) {
    p.set_grad(tensor(std::vector<double>{2.0, -0.5}));
    opt.step();
  }
};

const double kG[2] = {2.0, -0.5};
const double kP[2] = {1.0, -2.0};

std::vector<double> expected(const std::function<double(double)>& delta) {
  return {kP[0] + delta(kG[0]), kP[1] + delta(kG[1])};
}

TEST(Optim, RMSpropFirstStep) {
  FirstStep s;
  RMSprop opt({s.p});
  s.step(opt);
  // square_avg = 0.01 g^2, so the step is lr g / (0.1 |g| + eps)
  expect_close(s.p, expected([](double g) { return -0.01 * g / (0.1 * std::fabs(g) + 1e-8); }), {2},
               1e-12);
}

TEST(Optim, RMSpropCenteredMomentumFirstStep) {
  FirstStep s;
  RMSprop opt({s.p}, RMSpropOptions{0.1, 0.5, 1e-8, 0.0, 0.9, true});
  s.step(opt);
  // square_avg = 0.5 g^2, grad_avg = 0.5 g: the variance 0.25 g^2; the buffer starts at g / avg
  expect_close(s.p, expected([](double g) { return -0.1 * g / (0.5 * std::fabs(g) + 1e-8); }), {2},
               1e-12);
}

TEST(Optim, AdagradFirstStep) {
  FirstStep s;
  Adagrad opt({s.p}, AdagradOptions{0.1, 0.0, 0.0, 1.0, 1e-10});
  s.step(opt);
  // sum = 1 + g^2
  expect_close(s.p, expected([](double g) { return -0.1 * g / (std::sqrt(1 + g * g) + 1e-10); }),
               {2}, 1e-12);
}

TEST(Optim, AdadeltaFirstStep) {
  FirstStep s;
  Adadelta opt({s.p});
  s.step(opt);
  // square_avg = 0.1 g^2, acc_delta = 0: delta = sqrt(eps) / sqrt(0.1 g^2 + eps) g
  expect_close(
      s.p, expected([](double g) { return -std::sqrt(1e-6) / std::sqrt(0.1 * g * g + 1e-6) * g; }),
      {2}, 1e-12);
}

TEST(Optim, AdamaxFirstStep) {
  FirstStep s;
  Adamax opt({s.p});
  s.step(opt);
  // exp_avg = 0.1 g, exp_inf = |g| + eps, bias correction 0.1
  expect_close(s.p, expected([](double g) { return -2e-3 * g / (std::fabs(g) + 1e-8); }), {2},
               1e-12);
}

TEST(Optim, NAdamFirstStep) {
  FirstStep s;
  NAdam opt({s.p});
  s.step(opt);
  double mu = 0.9 * (1 - 0.5 * std::pow(0.96, 0.004));
  double mu_next = 0.9 * (1 - 0.5 * std::pow(0.96, 0.008));
  double product_next = mu * mu * mu_next;  // PyTorch 1.13's formula
  expect_close(s.p, expected([&](double g) {
                 double denom = std::fabs(g) + 1e-8;  // sqrt(0.001 g^2 / 0.001) + eps
                 return -2e-3 * g / denom - 2e-3 * mu_next / (1 - product_next) * 0.1 * g / denom;
               }),
               {2}, 1e-12);
}

TEST(Optim, RAdamFirstStepsAreMomentumThenAdaptive) {
  FirstStep s;
  RAdam opt({s.p}, RAdamOptions{0.1});
  s.step(opt);
  // rho_t = 1 at step 1 (<= 5): plain bias-corrected momentum, lr g
  expect_close(s.p, expected([](double g) { return -0.1 * g; }), {2}, 1e-12);
  // with beta2 = 0.5, rho_inf = 3 never passes 5: the update stays momentum SGD
  FirstStep t;
  RAdam short_memory({t.p}, RAdamOptions{0.1, 0.9, 0.5});
  t.step(short_memory);
  t.step(short_memory);
  // exp_avg after two equal gradients: 0.19 g, bias correction 0.19
  expect_close(t.p, expected([](double g) { return -0.2 * g; }), {2}, 1e-12);
}

// Each optimizer drives sum((p - target)^2) from its start to near zero.
void expect_minimises(Optimizer& opt, Tensor& p, int steps, double tolerance) {
  Tensor target = tensor(std::vector<double>{0.5, -1.5, 2.0});
  auto loss_of = [&] {
    Tensor diff = p - target;
    return (diff * diff).sum();
  };
  double start = loss_of().item<double>();
  for (int i = 0; i < steps; ++i) {
    opt.zero_grad();
    Tensor loss = loss_of();
    loss.backward();
    opt.step();
  }
  double end = loss_of().item<double>();
  EXPECT_LT(end, tolerance * start) << opt.name() << ": " << start << " -> " << end;
}

TEST(Optim, EachOptimizerMinimisesAQuadratic) {
  auto start = [] { return tensor(std::vector<double>{3.0, 2.0, -1.0}).requires_grad_(); };
  Tensor p1 = start(), p2 = start(), p3 = start(), p4 = start(), p5 = start(), p6 = start(),
         p7 = start();
  RMSprop rmsprop({p1}, RMSpropOptions{0.01});
  expect_minimises(rmsprop, p1, 500, 1e-3);
  RMSprop centered({p2}, RMSpropOptions{0.01, 0.9, 1e-8, 0.0, 0.5, true});
  expect_minimises(centered, p2, 500, 1e-3);
  Adagrad adagrad({p3}, AdagradOptions{0.5});
  expect_minimises(adagrad, p3, 300, 1e-3);
  Adadelta adadelta({p4}, AdadeltaOptions{10.0});
  expect_minimises(adadelta, p4, 500, 1e-2);
  Adamax adamax({p5}, AdamaxOptions{0.1});
  expect_minimises(adamax, p5, 300, 1e-3);
  NAdam nadam({p6}, NAdamOptions{0.1});
  expect_minimises(nadam, p6, 300, 1e-3);
  RAdam radam({p7}, RAdamOptions{0.1});
  expect_minimises(radam, p7, 300, 1e-3);
}

TEST(Optim, OptionsAreChecked) {
  Tensor p = full({2}, 1.0).requires_grad_();
  expect_error<std::invalid_argument>([&] { RMSprop({p}, RMSpropOptions{-1.0}); },
                                      "[RMSprop] invalid learning rate -1");
  expect_error<std::invalid_argument>(
      [&] {
        Adadelta({p}, AdadeltaOptions{1.0, 1.5});
      },
      "[Adadelta] rho must be in [0, 1]; got 1.5");
  expect_error<std::invalid_argument>(
      [&] {
        Adagrad({p}, AdagradOptions{0.1, -0.5});
      },
      "[Adagrad] invalid lr_decay -0.5");
  expect_error<std::invalid_argument>(
      [&] {
        NAdam({p}, NAdamOptions{0.1, 1.0});
      },
      "[NAdam] betas must be in [0, 1); got (1, 0.999)");
  expect_error<std::invalid_argument>(
      [&] {
        NAdam({p}, NAdamOptions{0.1, 0.9, 0.999, 1e-8, 0.0, -1.0});
      },
      "[NAdam] invalid momentum_decay -1");
  Adamax adamax({p});
  expect_error<std::invalid_argument>(
      [&] {
        adamax.add_param_group({{full({1}, 0.0).requires_grad_()}, {{"eps", -1.0}}});
      },
      "[Adamax] group 1: invalid epsilon -1");
}

TEST(Optim, StateDictRoundTripContinuesIdentically) {
  FirstStep a, b;
  NAdam first({a.p}), second({b.p}, NAdamOptions{0.5});
  a.step(first);
  a.step(first);
  second.load_state_dict(first.state_dict());
  b.p.set_data(a.p.detach().clone());
  EXPECT_EQ(second.param_groups()[0].options.at("lr"), 2e-3);
  a.step(first);
  b.step(second);
  expect_close(b.p, a.p, 0, 0);
  // RMSprop's optional entries: a state dict with momentum_buffer loads; one without square_avg
  // does not.
  FirstStep c;
  RMSprop rmsprop({c.p}, RMSpropOptions{0.01, 0.99, 1e-8, 0.0, 0.9});
  c.step(rmsprop);
  StateDict sd = rmsprop.state_dict();
  EXPECT_EQ(sd.count("state.0.momentum_buffer"), 1u);
  EXPECT_EQ(sd.count("state.0.grad_avg"), 0u);
  rmsprop.load_state_dict(sd);
  sd.erase("state.0.square_avg");
  expect_error<std::invalid_argument>([&] { rmsprop.load_state_dict(sd); },
                                      "the state of parameter 0 has no 'square_avg'");
}

// ---- L-BFGS ----

TEST(Optim, LBFGSMinimisesRosenbrock) {
  for (bool wolfe : {false, true}) {
    Tensor x = tensor(std::vector<double>{-1.5, 2.0}).requires_grad_();
    LBFGSOptions o;
    o.lr = wolfe ? 1.0 : 0.1;
    o.max_iter = 200;
    o.max_eval = 400;
    o.strong_wolfe = wolfe;
    LBFGS opt({x}, o);
    auto closure = [&] {
      opt.zero_grad();
      Tensor a = 1 - x[0], b = x[1] - x[0] * x[0];
      Tensor loss = a * a + b * b * 100;
      loss.backward();
      return loss.item<double>();
    };
    double first = opt.step(closure);
    for (int i = 1; i < 5; ++i) opt.step(closure);
    EXPECT_NEAR(first, 2.5 * 2.5 + 100 * 0.25 * 0.25, 1e-12);  // the loss at the start
    if (wolfe) {
      expect_close(x.detach(), std::vector<double>{1.0, 1.0}, {2}, 1e-5);
    } else {
      EXPECT_LT(closure(), 1e-3 * first);
    }
    EXPECT_GT(opt.func_evals(), 5);
  }
  Tensor p = full({2}, 1.0).requires_grad_();
  LBFGS opt({p});
  expect_error<std::invalid_argument>([&] { opt.step(); }, "[LBFGS] step() needs a closure");
}

TEST(Optim, LBFGSFirstStepIsScaledSteepestDescent) {
  // One iteration with no line search: x <- x - min(1, 1 / |g|_1) lr g
  Tensor x = tensor(std::vector<double>{1.0, -2.0}).requires_grad_();
  LBFGSOptions o;
  o.max_iter = 1;
  LBFGS opt({x}, o);
  opt.step([&] {
    opt.zero_grad();
    Tensor loss = (x * x).sum();  // gradient 2x = (2, -4), |g|_1 = 6
    loss.backward();
    return loss.item<double>();
  });
  expect_close(x.detach(), std::vector<double>{1.0 - 2.0 / 6, -2.0 + 4.0 / 6}, {2}, 1e-12);
}

}  // namespace
}  // namespace wick::optim
