// Mixed precision: the dtype each op runs in under autocast (design-facts §5's lists), the cast
// cache, nesting, backward, the debug record, and GradScaler.
#include <cmath>

#include "core/autocast.h"
#include "nn/functional.h"
#include "nn/grad_scaler.h"
#include "nn/layers.h"
#include "tests/cpp/test_util.h"

namespace wick {
namespace {

using testing::expect_close;
using testing::expect_error;
namespace F = nn::functional;

struct Case {
  const char* name;
  std::function<Tensor()> op;
  DType expected;  // under CPU autocast with lower dtype `lower`
};

std::vector<Case> cases(DType lower, const Tensor& x, const Tensor& w, const Tensor& low) {
  Tensor img = randn({2, 3, 6, 6}), kernel = randn({4, 3, 3, 3});
  Tensor labels = tensor({0, 2, 5, 1});
  return {
      // lower precision: the ops that run on matrix units
      {"matmul", [=] { return matmul(x, w.t()); }, lower},
      {"bmm", [=] { return bmm(x.unsqueeze(0), w.t().unsqueeze(0)); }, lower},
      {"linear", [=] { return linear(x, w, w.select(1, 0)); }, lower},
      {"conv2d", [=] { return conv2d(img, kernel); }, lower},
      // float32, even for lower-precision inputs
      {"softmax", [=] { return softmax(low, 1); }, kFloat32},
      {"log_softmax", [=] { return log_softmax(low, 1); }, kFloat32},
      {"cross_entropy", [=] { return F::cross_entropy(low, labels); }, kFloat32},
      {"nll_loss", [=] { return F::nll_loss(low, labels); }, kFloat32},
      {"mse_loss", [=] { return F::mse_loss(low, low.detach()); }, kFloat32},
      {"l1_loss", [=] { return F::l1_loss(low, low.detach()); }, kFloat32},
      {"bce_with_logits",
       [=] { return F::binary_cross_entropy_with_logits(low, (low > 0).to(low.dtype())); },
       kFloat32},
      {"layer_norm", [=] { return F::layer_norm(low, {6}); }, kFloat32},
      {"exp", [=] { return exp(low); }, kFloat32},
      {"log", [=] { return log(abs(low) + 1.0); }, kFloat32},
      {"pow", [=] { return pow(low, 2); }, kFloat32},
      {"sum", [=] { return low.sum(); }, kFloat32},
      {"mean", [=] { return low.mean({1}); }, kFloat32},
      // everything else follows its inputs
      {"relu", [=] { return relu(low); }, lower},
      {"add", [=] { return low + low; }, lower},
      {"add_mixed", [=] { return low + x.narrow(1, 0, 6); }, kFloat32},
      {"max_pool2d", [=] { return max_pool2d(img.to(lower), 2); }, lower},
      {"batch_norm", [=] { return batch_norm(img.to(lower), {}, {}, {}, {}, true); }, lower},
  };
}

TEST(Autocast, EachOpRunsInItsListedDType) {
  for (DType lower : {kBFloat16, kFloat16}) {
    Tensor x = randn({4, 8}), w = randn({6, 8}).requires_grad_();
    AutocastGuard autocast(kCPU, lower);
    Tensor low = linear(x, w);  // a lower-precision activation, as a network makes them
    ASSERT_EQ(low.dtype(), lower);
    for (const Case& c : cases(lower, x, w, low)) {
      EXPECT_EQ(c.op().dtype(), c.expected) << c.name << " under " << lower;
    }
  }
  // Outside autocast nothing is cast.
  EXPECT_EQ(matmul(randn({2, 3}), randn({3, 2})).dtype(), kFloat32);
  EXPECT_EQ(softmax(randn({2, 3}).to(kBFloat16), 1).dtype(), kBFloat16);
}

TEST(Autocast, NestingAndDisablingInside) {
  Tensor a = randn({2, 3}), b = randn({3, 2});
  AutocastGuard outer(kCPU, kBFloat16);
  EXPECT_EQ(matmul(a, b).dtype(), kBFloat16);
  {
    AutocastGuard off(kCPU, kBFloat16, /*enabled=*/false);
    EXPECT_EQ(matmul(a, b).dtype(), kFloat32);
    {
      AutocastGuard half(kCPU, kFloat16);
      EXPECT_EQ(matmul(a, b).dtype(), kFloat16);
    }
    EXPECT_EQ(matmul(a, b).dtype(), kFloat32);
  }
  EXPECT_EQ(matmul(a, b).dtype(), kBFloat16);
  EXPECT_EQ(matmul(a.to(kFloat64), b.to(kFloat64)).dtype(), kFloat64);  // float64 is not cast
  EXPECT_THROW(AutocastGuard(kCPU, kFloat32), TypeError);
}

TEST(Autocast, CastsOfAParameterAreCachedPerScope) {
  Tensor w = randn({4, 4}).requires_grad_();
  Tensor first, second;
  {
    AutocastGuard autocast(kCPU, kBFloat16);
    first = autocast::cast(AutocastPolicy::LowerPrecision, w);
    second = autocast::cast(AutocastPolicy::LowerPrecision, w);
    EXPECT_TRUE(first.is_same(second));
    Tensor activation = randn({4, 4});  // not a parameter: cast each time
    EXPECT_FALSE(autocast::cast(AutocastPolicy::LowerPrecision, activation)
                     .is_same(autocast::cast(AutocastPolicy::LowerPrecision, activation)));
  }
  AutocastGuard again(kCPU, kBFloat16);
  EXPECT_FALSE(autocast::cast(AutocastPolicy::LowerPrecision, w).is_same(first));  // new scope
}

TEST(Autocast, BackwardKeepsParametersFloat32) {
  manual_seed(0);
  nn::Linear fc(8, 4);
  Tensor x = randn({16, 8});
  Tensor labels = randint(0, 4, {16});
  Tensor reference_grad;
  {
    F::cross_entropy(fc(x), labels).backward();
    reference_grad = fc.weight.grad().clone();
    fc.zero_grad();
  }
  {
    AutocastGuard autocast(kCPU, kBFloat16);
    Tensor loss = F::cross_entropy(fc(x), labels);
    EXPECT_EQ(loss.dtype(), kFloat32);
    loss.backward();
  }
  EXPECT_EQ(fc.weight.dtype(), kFloat32);
  EXPECT_EQ(fc.weight.grad().dtype(), kFloat32);
  expect_close(fc.weight.grad(), reference_grad, 2e-2, 5e-2);  // bfloat16 has 8 mantissa bits
}

TEST(Autocast, RecordsWhatRanInWhichDType) {
  autocast::clear_recorded();
  autocast::set_recording(true);
  {
    AutocastGuard autocast(kCPU, kBFloat16);
    log_softmax(matmul(randn({2, 3}), randn({3, 4})), 1);
  }
  matmul(randn({2, 3}), randn({3, 4}));  // outside a scope: not recorded
  autocast::set_recording(false);
  auto records = autocast::recorded();
  auto ran_in = [&](const std::string& op) {
    for (auto& [name, dtype] : records) {
      if (name == op) return dtype;
    }
    return kBool;  // not found
  };
  EXPECT_EQ(ran_in("bmm"), kBFloat16);
  EXPECT_EQ(ran_in("log_softmax"), kFloat32);
  int bmm_count = 0;
  for (auto& r : records) bmm_count += r.first == "bmm";
  EXPECT_EQ(bmm_count, 1);
}

TEST(GradScaler, OverflowHalvesTheScaleAndSkipsTheStep) {
  Tensor w = ones({3}).requires_grad_();
  optim::SGD sgd({w}, optim::SGDOptions{0.1});
  amp::GradScaler scaler;
  EXPECT_EQ(scaler.get_scale(), 65536.0);
  w.set_grad(tensor({1.0, INFINITY, 2.0}));
  EXPECT_FALSE(scaler.step(sgd));
  scaler.update();
  EXPECT_EQ(scaler.get_scale(), 32768.0);
  EXPECT_EQ(scaler.skipped_steps(), 1);
  expect_close(w, {1, 1, 1}, {3});  // untouched
  w.set_grad(tensor({NAN, 0.0, 0.0}));
  EXPECT_FALSE(scaler.step(sgd));
  scaler.update();
  EXPECT_EQ(scaler.get_scale(), 16384.0);
}

TEST(GradScaler, GrowsAfterCleanStepsAndUnscales) {
  Tensor w = zeros({2}).requires_grad_();
  optim::SGD sgd({w}, optim::SGDOptions{1.0});
  amp::GradScalerOptions options;
  options.init_scale = 4.0;
  amp::GradScaler scaler(options);
  for (int i = 0; i < 2000; ++i) {
    w.set_grad(full({2}, scaler.get_scale()));  // gradient 1 after unscaling
    EXPECT_TRUE(scaler.step(sgd));
    scaler.update();
  }
  EXPECT_EQ(scaler.get_scale(), 8.0);
  EXPECT_EQ(scaler.growth_tracker(), 0);
  expect_close(w, {-2000, -2000}, {2});
  // unscale_ exposes the true gradient (for clipping), and only once per step.
  w.set_grad(full({2}, 8.0 * 3));
  scaler.unscale_(sgd);
  expect_close(w.grad(), {3, 3}, {2});
  expect_error<std::runtime_error>([&] { scaler.unscale_(sgd); }, "already called");
  scaler.step(sgd);
  expect_error<std::runtime_error>([&] { scaler.step(sgd); }, "already called");
  scaler.update();
  amp::GradScaler restored;
  restored.load_state_dict(scaler.state_dict());
  EXPECT_EQ(restored.get_scale(), scaler.get_scale());
  Tensor h = zeros({1}, kFloat16).requires_grad_();
  optim::SGD half_sgd({h}, optim::SGDOptions{1.0});
  h.set_grad(ones({1}, kFloat16));
  expect_error<TypeError>([&] { restored.unscale_(half_sgd); }, "float16 gradients");
}

TEST(GradScaler, Float16TrainingRecoversFromAnInjectedOverflow) {
  manual_seed(1);
  nn::Linear fc(10, 3);
  optim::SGD sgd(fc.parameters(), optim::SGDOptions{0.1});
  amp::GradScaler scaler;
  Tensor x = randn({32, 10}), labels = randint(0, 3, {32});
  std::vector<double> losses;
  for (int step = 0; step < 60; ++step) {
    Tensor loss;
    {
      AutocastGuard autocast(kCPU, kFloat16);
      loss = F::cross_entropy(fc(x), labels);
    }
    sgd.zero_grad();
    Tensor scaled = scaler.scale(loss);
    if (step == 20) {  // a gradient overflows at step 20
      scaled.register_hook([](const Tensor& g) { return g * INFINITY; });
    }
    scaled.backward();
    bool stepped = scaler.step(sgd);
    EXPECT_EQ(stepped, step != 20) << step;
    scaler.update();
    losses.push_back(loss.item<double>());
  }
  EXPECT_EQ(scaler.skipped_steps(), 1);
  EXPECT_EQ(scaler.get_scale(), 32768.0);
  EXPECT_LT(losses.back(), 0.8 * losses.front());
  for (double l : losses) EXPECT_TRUE(std::isfinite(l));
}

}  // namespace
}  // namespace wick
