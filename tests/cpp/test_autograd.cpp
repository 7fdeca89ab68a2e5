// Autograd semantics: the graph, the engine, accumulation, retain_graph, grad mode, leaves and
// non-leaves, hooks, the version check, autograd::grad, and in-place ops under autograd.
#include <vector>

#include "autograd/meta.h"
#include "tests/cpp/test_util.h"

namespace wick {
namespace {

using testing::expect_close;
using testing::expect_error;

TEST(Autograd, SimpleChainAndGradientsMeetingAtANode) {
  Tensor x = tensor({2.0, 3.0}, kFloat64).requires_grad_();
  Tensor y = x * x + x * 3.0;  // two paths from x meet at the add
  y.sum().backward();
  expect_close(x.grad(), {2 * 2 + 3, 2 * 3 + 3}, {2});
  EXPECT_TRUE(x.is_leaf());
  EXPECT_FALSE(y.is_leaf());
  EXPECT_STREQ(y.grad_fn()->name(), "AddBackward");
}

TEST(Autograd, AccumulatesAcrossBackwardCalls) {
  Tensor w = tensor({1.0, -1.0}).requires_grad_();
  (w * 2.0).sum().backward();
  (w * 3.0).sum().backward();
  expect_close(w.grad(), {5, 5}, {2});
  w.grad().zero_();
  (w * w).sum().backward();
  expect_close(w.grad(), {2, -2}, {2});
}

TEST(Autograd, RetainGraphAllowsASecondBackward) {
  Tensor x = tensor({1.5}).requires_grad_();
  Tensor y = (x * x).sum();
  y.backward({}, /*retain_graph=*/true);
  y.backward();
  expect_close(x.grad(), {6}, {1});
  expect_error<std::runtime_error>([&] { y.backward(); },
                                   "backward through the graph a second time");
}

TEST(Autograd, NoGradGuardAndDetach) {
  Tensor x = ones({2}).requires_grad_();
  {
    NoGradGuard no_grad;
    Tensor y = x * 2;
    EXPECT_FALSE(y.requires_grad());
    {
      EnableGradGuard enable;
      EXPECT_TRUE((x * 2).requires_grad());
    }
    EXPECT_FALSE(GradMode::is_enabled());
  }
  EXPECT_TRUE(GradMode::is_enabled());
  Tensor d = (x * 2).detach();
  EXPECT_FALSE(d.requires_grad());
  EXPECT_TRUE(d.is_leaf());
}

TEST(Autograd, LeafAndNonLeafSemantics) {
  Tensor x = ones({2}).requires_grad_();
  Tensor y = x * 2;
  Tensor z = (y * y).sum();
  y.retain_grad();
  z.backward();
  expect_close(y.grad(), {4, 4}, {2});  // non-leaf kept its gradient because it asked
  expect_close(x.grad(), {8, 8}, {2});
  Tensor w = x * 3;
  (w * 1.0).sum().backward();
  EXPECT_FALSE(w.grad().defined());  // non-leaves do not keep gradients by default
  EXPECT_THROW(y.requires_grad_(false), std::runtime_error);
  EXPECT_THROW(tensor({1, 2}).requires_grad_(), TypeError);  // integers cannot require grad
}

TEST(Autograd, NonScalarBackwardNeedsAGradient) {
  Tensor x = ones({3}).requires_grad_();
  Tensor y = x * 2;
  expect_error<std::runtime_error>([&] { y.backward(); }, "only for outputs with one element");
  y.backward(tensor({1.0, 2.0, 3.0}));
  expect_close(x.grad(), {2, 4, 6}, {3});
  expect_error<std::invalid_argument>([&] { (x * 2).backward(ones({2})); }, "has shape");
  expect_error<std::runtime_error>([&] { ones({2}).sum().backward(); }, "does not require grad");
}

TEST(Autograd, TensorHooksSeeAndReplaceGradients) {
  Tensor x = ones({2}).requires_grad_();
  std::vector<double> seen;
  x.register_hook([&](const Tensor& g) {
    seen = g.to(kFloat64).to_vector<double>();
    return g * 10.0;  // the leaf accumulates the replaced gradient
  });
  Tensor y = x * 3;
  y.register_hook([](const Tensor& g) { return g + 1.0; });  // on a non-leaf
  y.sum().backward();
  EXPECT_EQ(seen, (std::vector<double>{6, 6}));
  expect_close(x.grad(), {60, 60}, {2});
}

TEST(Autograd, PostAccumulateGradHooksRunAfterTheUpdate) {
  Tensor a = ones({2}).requires_grad_();
  Tensor b = ones({2}).requires_grad_();
  std::vector<std::string> order;
  a.register_post_accumulate_grad_hook([&](const Tensor& leaf) {
    EXPECT_TRUE(leaf.grad().defined());
    order.push_back("a");
  });
  b.register_post_accumulate_grad_hook([&](const Tensor&) { order.push_back("b"); });
  Tensor h = (a * 2).sum();  // a is used first, so its gradient is ready last
  Tensor loss = h * (b * 3).sum();
  loss.backward();
  EXPECT_EQ(order, (std::vector<std::string>{"b", "a"}));
  expect_close(a.grad(), {12, 12}, {2});
}

TEST(Autograd, InPlaceChangeOfASavedTensorIsAnError) {
  Tensor x = ones({2}).requires_grad_();
  Tensor y = x * 2;
  Tensor z = y * y;  // saves y
  {
    NoGradGuard no_grad;
    y.add_(1.0);  // changes a saved tensor
  }
  expect_error<std::runtime_error>([&] { z.sum().backward(); },
                                   "modified by an in-place operation");
}

TEST(Autograd, InPlaceOpsAreRecorded) {
  Tensor x = tensor({1.0, 2.0}, kFloat64).requires_grad_();
  Tensor b = tensor({3.0, 4.0}, kFloat64).requires_grad_();
  Tensor y = x * 1.0;
  y.mul_(b);  // needs y's old value for b's gradient: kept by the clone
  y.add_(x);
  EXPECT_STREQ(y.grad_fn()->name(), "AddBackward");
  y.sum().backward();
  expect_close(x.grad(), {3 + 1, 4 + 1}, {2});
  expect_close(b.grad(), {1, 2}, {2});
  expect_error<std::runtime_error>([&] { x.add_(1.0); }, "leaf tensor that requires grad");
  expect_error<std::runtime_error>([&] { (x * 1.0).reshape({1, 2}).mul_(2.0); }, "views");
  {
    NoGradGuard no_grad;
    x.add_(1.0);  // optimizers do this
  }
  expect_close(x, {2, 3}, {2});
}

TEST(Autograd, GradFunctionLeavesDotGradAlone) {
  Tensor x = tensor({1.0, 2.0}, kFloat64).requires_grad_();
  Tensor w = tensor({3.0, 4.0}, kFloat64).requires_grad_();
  Tensor h = x * w;
  Tensor y = (h * h).sum();
  TensorList g = autograd::grad({y}, {x, h});
  expect_close(g[0], {2 * 9 * 1, 2 * 16 * 2}, {2});  // d/dx (xw)^2 = 2 x w^2
  expect_close(g[1], {6, 16}, {2});                  // d/dh h^2 = 2h
  EXPECT_FALSE(x.grad().defined());
  EXPECT_FALSE(w.grad().defined());
  Tensor unused = ones({1}).requires_grad_();
  EXPECT_THROW(autograd::grad({(x * 2).sum()}, {unused}), std::invalid_argument);
  TensorList maybe = autograd::grad({(x * 2).sum()}, {unused}, {}, false, /*allow_unused=*/true);
  EXPECT_FALSE(maybe[0].defined());
}

TEST(Autograd, GradientDTypeFollowsTheInput) {
  Tensor x = ones({2}, kFloat32).requires_grad_();
  Tensor y = (x * ones({2}, kFloat64)).sum();  // computed in float64
  EXPECT_EQ(y.dtype(), kFloat64);
  y.backward();
  EXPECT_EQ(x.grad().dtype(), kFloat32);
}

TEST(Autograd, GraphIsFreedWithItsOutput) {
  std::weak_ptr<Node> node;
  {
    Tensor x = ones({2}).requires_grad_();
    Tensor y = x.exp();  // saves its own output: must not form a cycle
    node = y.grad_fn();
    EXPECT_FALSE(node.expired());
  }
  EXPECT_TRUE(node.expired());
}

TEST(Autograd, BroadcastGradientsAreSummed) {
  Tensor a = ones({3, 1}).requires_grad_();
  Tensor b = ones({4}).requires_grad_();
  (a * b).sum().backward();
  expect_close(a.grad(), {4, 4, 4}, {3, 1});
  expect_close(b.grad(), {3, 3, 3, 3}, {4});
}

}  // namespace
}  // namespace wick
