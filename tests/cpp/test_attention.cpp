// Attention from C++: the blocked kernel against the explicit formula (forward and gradients),
// its memory footprint by the host allocator's statistics, and the modules (MultiheadAttention,
// TransformerEncoderLayer, TransformerEncoder). tests/python/test_attention.py compares all of it
// with PyTorch.
#include <cstdio>
#include <limits>

#include "autograd/gradcheck.h"
#include "test_util.h"

namespace wick {
namespace {

using testing::expect_close;

// Forward and the gradients of q, k, v under a random weighting, both ways.
void expect_kernel_matches_formula(const Tensor& q, const Tensor& k, const Tensor& v,
                                   const Tensor& mask, bool causal, double atol) {
  auto run = [&](bool blocked) {
    Tensor qq = q.detach().requires_grad_(), kk = k.detach().requires_grad_(),
           vv = v.detach().requires_grad_();
    Tensor out = blocked ? scaled_dot_product_attention(qq, kk, vv, mask, causal)
                         : scaled_dot_product_attention_math(qq, kk, vv, mask, causal).output;
    manual_seed(3);
    (out * randn(out.shape(), TensorOptions(out.dtype()))).sum().backward();
    return std::vector<Tensor>{out.detach(), qq.grad(), kk.grad(), vv.grad()};
  };
  auto blocked = run(true), math = run(false);
  for (size_t i = 0; i < blocked.size(); ++i) {
    SCOPED_TRACE(i);
    expect_close(blocked[i], math[i], atol, 1e-6);
  }
}

TEST(Attention, BlockedKernelMatchesTheFormulaAcrossTiles) {
  manual_seed(0);
  TensorOptions f64(kFloat64);
  // 150 queries and 90 keys: several 64-row tiles, with partial ones at the ends.
  Tensor q = randn({2, 3, 150, 8}, f64), k = randn({2, 3, 90, 8}, f64),
         v = randn({2, 3, 90, 5}, f64);
  for (bool causal : {false, true}) expect_kernel_matches_formula(q, k, v, Tensor(), causal, 1e-10);
  Tensor keep = rand({150, 90}, f64) > 0.2;
  keep.narrow(1, 0, 1).fill_(Scalar(true));
  expect_kernel_matches_formula(q, k, v, keep, false, 1e-10);
  expect_kernel_matches_formula(q, k, v, randn({3, 1, 90}, f64), false, 1e-10);
  expect_kernel_matches_formula(q.to(kFloat32), k.to(kFloat32), v.to(kFloat32), Tensor(), true,
                                2e-5);
}

TEST(Attention, GradcheckAndGradgradcheck) {
  manual_seed(1);
  TensorOptions f64 = TensorOptions(kFloat64).with_requires_grad();
  TensorList in = {randn({2, 3, 4}, f64), randn({2, 5, 4}, f64), randn({2, 5, 3}, f64)};
  for (bool causal : {false, true}) {
    auto f = [causal](const TensorList& t) {
      return scaled_dot_product_attention(t[0], t[1], t[2], Tensor(), causal);
    };
    EXPECT_TRUE(gradcheck(f, in));
    EXPECT_TRUE(gradgradcheck(f, in));
  }
}

// Note [blocked attention]: the forward and backward hold O(L d) extra memory, never the L x S
// scores. At L = S = 4096 one head's float32 scores alone are 64 MiB; the blocked forward and
// backward stay under 2 MiB beyond their inputs, outputs and gradients.
TEST(Attention, PeakMemoryIsLinearInTheSequenceLength) {
  const int64_t L = 4096, d = 16;
  const int64_t scores_bytes = L * L * 4;
  manual_seed(2);
  Tensor q = randn({1, L, d}).requires_grad_(), k = randn({1, L, d}).requires_grad_(),
         v = randn({1, L, d}).requires_grad_();
  Allocator* host = cpu_allocator();
  const int64_t before = host->stats().allocated_bytes;
  host->reset_peak();
  Tensor out = scaled_dot_product_attention(q, k, v, Tensor(), /*is_causal=*/true);
  const int64_t forward_peak = host->stats().peak_allocated_bytes - before;
  // out [L, d] and the log-sum-exp [L]; the rest is the per-thread tile scratch.
  EXPECT_LT(forward_peak, 2 * 1024 * 1024) << "forward peak " << forward_peak;
  Tensor g = randn({1, L, d});
  const int64_t before_backward = host->stats().allocated_bytes;
  host->reset_peak();
  out.backward(g);
  const int64_t backward_peak = host->stats().peak_allocated_bytes - before_backward;
  // dq, dk, dv [L, d] each, plus per-thread scratch of L (d + 1) floats.
  EXPECT_LT(backward_peak, 2 * 1024 * 1024) << "backward peak " << backward_peak;
  EXPECT_LT(backward_peak * 30, scores_bytes);

  // The explicit formula, for contrast, holds the scores and the probabilities.
  host->reset_peak();
  const int64_t before_math = host->stats().allocated_bytes;
  {
    NoGradGuard no_grad;
    Tensor math = scaled_dot_product_attention_math(q, k, v).output;
  }
  const int64_t math_peak = host->stats().peak_allocated_bytes - before_math;
  EXPECT_GT(math_peak, scores_bytes);
  // The numbers docs/architecture.md quotes.
  std::printf(
      "[attention] L=%lld d=%lld causal: blocked forward %lld KiB, backward %lld KiB; "
      "explicit forward %lld KiB\n",
      static_cast<long long>(L), static_cast<long long>(d),
      static_cast<long long>(forward_peak / 1024), static_cast<long long>(backward_peak / 1024),
      static_cast<long long>(math_peak / 1024));
}

TEST(Attention, BadInputsNameTheOpAndTheShapes) {
  Tensor q = randn({2, 5, 4}), k = randn({2, 7, 4}), v = randn({2, 7, 6});
  EXPECT_THROW(scaled_dot_product_attention(q, randn({2, 7, 3}), v), std::runtime_error);
  EXPECT_THROW(scaled_dot_product_attention(q, k, randn({2, 6, 6})), std::runtime_error);
  EXPECT_THROW(scaled_dot_product_attention(q, k, v, ones({4, 7})), std::runtime_error);
  EXPECT_THROW(scaled_dot_product_attention(q, k, v, ones({5, 7}), true), std::runtime_error);
  try {
    scaled_dot_product_attention(q, randn({2, 7, 3}), v);
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("[scaled_dot_product_attention]"), std::string::npos);
  }
  EXPECT_THROW(nn::MultiheadAttention(10, 3), std::invalid_argument);
}

TEST(Attention, MultiheadAttentionSelfAttentionUsesTheKernelPath) {
  manual_seed(4);
  nn::MultiheadAttention mha(8, 2, 0.0, true, false, false, 0, 0, /*batch_first=*/true);
  EXPECT_EQ(mha.state_dict().count("in_proj_weight"), 1u);
  EXPECT_EQ(mha.state_dict().count("out_proj.bias"), 1u);
  Tensor x = randn({3, 5, 8});
  Tensor kpm = zeros({3, 5}, TensorOptions(kBool));
  kpm.narrow(1, 3, 2).fill_(Scalar(true));
  // need_weights=false (blocked kernel) and true (explicit formula) agree.
  auto [fast, none] = mha.forward(x, x, x, kpm, false);
  auto [slow, weights] = mha.forward(x, x, x, kpm, true);
  EXPECT_FALSE(none.defined());
  expect_close(fast, slow, 1e-5);
  ASSERT_EQ(weights.shape(), (Shape{3, 5, 5}));
  // Padded keys get no weight.
  expect_close(weights.narrow(2, 3, 2).abs().sum(), {0.0}, Shape{}, 1e-7);
}

TEST(Attention, TransformerEncoderStacksIndependentCopies) {
  manual_seed(5);
  nn::TransformerEncoderLayer layer(8, 2, 16, 0.0, "gelu", 1e-5, /*batch_first=*/true,
                                    /*norm_first=*/true);
  nn::TransformerEncoder encoder(layer, 2, std::make_shared<nn::LayerNorm>(Shape{8}));
  auto state = encoder.state_dict();
  EXPECT_EQ(state.count("layers.1.self_attn.in_proj_weight"), 1u);
  EXPECT_EQ(state.count("layers.0.linear1.weight"), 1u);
  EXPECT_EQ(state.count("norm.weight"), 1u);
  expect_close(state.at("layers.0.linear1.weight"), state.at("layers.1.linear1.weight"), 0.0);
  Tensor x = randn({2, 6, 8}).requires_grad_();
  Tensor mask = nn::generate_square_subsequent_mask(6);
  Tensor y = encoder.forward(x, mask);
  ASSERT_EQ(y.shape(), x.shape());
  // Causal: the first position's output depends on nothing after it.
  Tensor x2 = x.detach().clone();
  x2.narrow(1, 5, 1).fill_(Scalar(7.0));
  expect_close(encoder.forward(x2, mask).narrow(1, 0, 5), y.detach().narrow(1, 0, 5), 1e-5);
  y.sum().backward();
  EXPECT_TRUE(x.grad().defined());
  auto p0 = encoder.named_parameters();
  for (auto& [name, p] : p0) EXPECT_TRUE(p.grad().defined()) << name;
}

}  // namespace
}  // namespace wick
