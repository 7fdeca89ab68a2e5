// gradcheck for every differentiable op: float64 central differences against autograd, on
// contiguous inputs, non-contiguous inputs, and broadcast shapes.
#include <functional>
#include <string>
#include <vector>

#include "tests/cpp/test_util.h"

namespace wick {
namespace {

using testing::input;
using testing::noncontiguous_input;

struct Case {
  std::string name;
  std::vector<Shape> shapes;
  std::function<Tensor(const TensorList&)> fn;
  // Maps raw random inputs into the op's domain (e.g. positive for log).
  std::function<Tensor(const Tensor&)> domain = nullptr;
};

Tensor positive(const Tensor& x) { return x.abs().detach() + 0.5; }
// Values kept away from kinks (relu at 0, clamp at its bounds, max ties).
Tensor away_from_kinks(const Tensor& x) {
  Tensor d = x.detach();
  return where(d.abs() < 0.05, d + 0.2, d);
}

std::vector<Case> cases() {
  using L = const TensorList&;
  return {
      // elementwise, binary (with broadcasting in the shapes)
      {"add", {{3, 4}, {4}}, [](L t) { return t[0] + t[1]; }},
      {"sub", {{3, 1}, {3, 4}}, [](L t) { return t[0] - t[1]; }},
      {"mul", {{2, 3, 4}, {3, 1}}, [](L t) { return t[0] * t[1]; }},
      {"div", {{3, 4}, {4}}, [](L t) { return t[0] / (t[1].abs() + 0.5); }},
      {"pow", {{3, 4}, {3, 4}}, [](L t) { return pow(t[0].abs() + 0.5, t[1]); }},
      {"pow_scalar", {{3, 4}}, [](L t) { return pow(t[0], 3); }},
      {"pow_fraction", {{3, 4}}, [](L t) { return pow(t[0], 1.5); }, positive},
      {"maximum", {{3, 4}, {4}}, [](L t) { return maximum(t[0], t[1]); }},
      {"minimum", {{3, 4}, {3, 4}}, [](L t) { return minimum(t[0], t[1]); }},
      {"where", {{3, 4}, {4}}, [](L t) { return where(t[0].detach() > 0, t[0], t[1]); }},
      {"masked_fill", {{3, 4}}, [](L t) { return t[0].masked_fill(t[0].detach() > 0.5, 2.0); }},
      // elementwise, unary
      {"neg", {{3, 4}}, [](L t) { return -t[0]; }},
      {"abs", {{3, 4}}, [](L t) { return t[0].abs(); }, away_from_kinks},
      {"exp", {{3, 4}}, [](L t) { return t[0].exp(); }},
      {"log", {{3, 4}}, [](L t) { return t[0].log(); }, positive},
      {"sqrt", {{3, 4}}, [](L t) { return t[0].sqrt(); }, positive},
      {"rsqrt", {{3, 4}}, [](L t) { return t[0].rsqrt(); }, positive},
      {"sin", {{3, 4}}, [](L t) { return t[0].sin(); }},
      {"cos", {{3, 4}}, [](L t) { return t[0].cos(); }},
      {"tanh", {{3, 4}}, [](L t) { return t[0].tanh(); }},
      {"sigmoid", {{3, 4}}, [](L t) { return t[0].sigmoid(); }},
      {"relu", {{3, 4}}, [](L t) { return t[0].relu(); }, away_from_kinks},
      {"gelu", {{3, 4}}, [](L t) { return gelu(t[0]); }},
      {"gelu_tanh", {{3, 4}}, [](L t) { return gelu(t[0], "tanh"); }},
      {"silu", {{3, 4}}, [](L t) { return silu(t[0]); }},
      {"leaky_relu", {{3, 4}}, [](L t) { return leaky_relu(t[0], 0.2); }, away_from_kinks},
      {"clamp", {{3, 4}}, [](L t) { return t[0].clamp(-0.5, 0.5); }, away_from_kinks},
      // reductions
      {"sum", {{2, 3, 4}}, [](L t) { return t[0].sum(); }},
      {"sum_dims",
       {{2, 3, 4}},
       [](L t) {
         return t[0].sum({0, 2});
       }},
      {"sum_keepdim", {{2, 3, 4}}, [](L t) { return t[0].sum({1}, true); }},
      {"mean", {{2, 3, 4}}, [](L t) { return t[0].mean({-1}); }},
      {"max_all", {{3, 4}}, [](L t) { return t[0].max(); }},
      {"max_dim", {{3, 4}}, [](L t) { return t[0].max(1).values; }},
      {"min_dim_keepdim", {{3, 4}}, [](L t) { return t[0].min(0, true).values; }},
      {"amax",
       {{2, 3, 4}},
       [](L t) {
         return amax(t[0], {0, 2});
       }},
      {"var", {{3, 4}}, [](L t) { return t[0].var({1}); }},
      {"std", {{3, 4}}, [](L t) { return t[0].std(); }},
      {"logsumexp", {{3, 4}}, [](L t) { return t[0].logsumexp({1}); }},
      // matrix products
      {"matmul_2d", {{3, 4}, {4, 5}}, [](L t) { return matmul(t[0], t[1]); }},
      {"matmul_1d", {{4}, {4, 2}}, [](L t) { return matmul(t[0], t[1]); }},
      {"matmul_dot", {{4}, {4}}, [](L t) { return matmul(t[0], t[1]); }},
      {"matmul_batched", {{2, 1, 3, 4}, {3, 4, 2}}, [](L t) { return matmul(t[0], t[1]); }},
      {"bmm", {{2, 3, 4}, {2, 4, 2}}, [](L t) { return bmm(t[0], t[1]); }},
      {"linear", {{5, 4}, {3, 4}, {3}}, [](L t) { return linear(t[0], t[1], t[2]); }},
      // views and copies
      {"reshape",
       {{3, 4}},
       [](L t) {
         return t[0].reshape({2, 6}) * 2.0;
       }},
      {"view_flatten", {{2, 3, 4}}, [](L t) { return t[0].flatten(1) * 2.0; }},
      {"permute",
       {{2, 3, 4}},
       [](L t) {
         return t[0].permute({2, 0, 1}) * 2.0;
       }},
      {"transpose", {{3, 4}}, [](L t) { return t[0].t() * 2.0; }},
      {"squeeze_unsqueeze", {{3, 1, 4}}, [](L t) { return t[0].squeeze(1).unsqueeze(0) * 2.0; }},
      {"expand",
       {{3, 1}},
       [](L t) {
         return t[0].expand({2, 3, 4}) * 2.0;
       }},
      {"slice", {{5, 4}}, [](L t) { return t[0].slice(0, 1, 5, 2) * 2.0; }},
      {"narrow", {{5, 4}}, [](L t) { return t[0].narrow(1, 1, 2) * 2.0; }},
      {"select", {{5, 4}}, [](L t) { return t[0].select(1, 2) * 2.0; }},
      {"as_strided",
       {{3, 4}},
       [](L t) {
         return t[0].contiguous().as_strided({2, 2}, {1, 2}, 1);
       }},
      {"contiguous_clone", {{3, 4}}, [](L t) { return t[0].t().contiguous().clone() * 2.0; }},
      {"cat",
       {{2, 3}, {4, 3}},
       [](L t) {
         return cat({t[0], t[1] * 2.0}, 0);
       }},
      {"stack",
       {{2, 3}, {2, 3}},
       [](L t) {
         return stack({t[0], t[1]}, 1);
       }},
      {"split", {{5, 3}}, [](L t) { return t[0].split(2)[2] * 3.0 + t[0].split(2)[0].sum(); }},
      {"chunk", {{4, 6}}, [](L t) { return t[0].chunk(3, 1)[1] * 3.0; }},
      // indexing and softmax
      {"index_select",
       {{4, 3}},
       [](L t) {
         return t[0].index_select(0, tensor({3, 0, 3}));
       }},
      {"gather",
       {{3, 4}},
       [](L t) {
         return t[0].gather(1, tensor({0, 3, 1, 1, 2, 2}).reshape({3, 2}));
       }},
      {"scatter_add",
       {{3, 2}, {2, 2}},
       [](L t) {
         return t[0].scatter_add(0, tensor({0, 2, 0, 1}).reshape({2, 2}), t[1]);
       }},
      {"softmax", {{3, 4}}, [](L t) { return t[0].softmax(1); }},
      {"softmax_dim0", {{3, 4}}, [](L t) { return t[0].softmax(0); }},
      {"log_softmax", {{3, 4}}, [](L t) { return t[0].log_softmax(-1); }},
  };
}

enum class Order { First, Second };

void run_case(const Case& c, bool contiguous, Order order = Order::First) {
  TensorList inputs;
  uint64_t seed = 11;
  for (const Shape& s : c.shapes) {
    Tensor raw = contiguous ? input(s, seed++) : noncontiguous_input(s, seed++);
    if (c.domain) {
      // Map the values into the op's domain in place, keeping the layout.
      NoGradGuard no_grad;
      Tensor mapped = c.domain(raw);
      raw.detach().copy_(mapped);
    }
    inputs.push_back(raw);
  }
  try {
    if (order == Order::First) {
      gradcheck(c.fn, inputs);
    } else {
      gradgradcheck(c.fn, inputs);
    }
  } catch (const std::exception& e) {
    ADD_FAILURE() << c.name << (contiguous ? "" : " (non-contiguous)")
                  << (order == Order::Second ? " (second derivatives)" : "") << ": " << e.what();
  }
}

TEST(Gradcheck, EveryOpContiguous) {
  for (const Case& c : cases()) run_case(c, true);
}

TEST(Gradcheck, EveryOpNonContiguous) {
  for (const Case& c : cases()) run_case(c, false);
}

// create_graph through every op: the gradient's own gradient against finite differences.
TEST(Gradgradcheck, EveryOpContiguous) {
  for (const Case& c : cases()) run_case(c, true, Order::Second);
}

TEST(Gradgradcheck, EveryOpNonContiguous) {
  for (const Case& c : cases()) run_case(c, false, Order::Second);
}

TEST(Gradgradcheck, DetectsACutSecondDerivative) {
  // x^2 as 2 x c - c^2 with c = x.detach(): right value and first derivative, but the first
  // derivative has no graph back to x, so the second derivative reads 0 instead of 2.
  auto cut = [](const TensorList& t) {
    Tensor c = t[0].detach();
    return t[0] * c * 2.0 - c * c;
  };
  Tensor x = input({3});
  EXPECT_TRUE(gradcheck(cut, {x}));
  EXPECT_THROW(gradgradcheck(cut, {x}), GradcheckError);
}

TEST(Gradcheck, InPlaceOpsUnderAutograd) {
  Tensor x = input({3, 4}), b = input({4}, 2);
  EXPECT_TRUE(gradcheck(
      [](const TensorList& t) {
        Tensor y = t[0] * 1.0;
        y.mul_(t[1]);
        y.add_(t[0]);
        return y;
      },
      {x, b}));
}

TEST(Gradcheck, DetectsAWrongGradient) {
  // A deliberately wrong backward (a hook that doubles the gradient) must be caught.
  Tensor x = input({3});
  EXPECT_THROW(gradcheck(
                   [](const TensorList& t) {
                     Tensor y = t[0] * 1.0;
                     if (y.requires_grad())
                       y.register_hook([](const Tensor& g) { return g * 2.0; });
                     return y.exp();
                   },
                   {x}),
               GradcheckError);
}

}  // namespace
}  // namespace wick
