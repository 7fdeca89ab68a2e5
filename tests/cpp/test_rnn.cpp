// Recurrent layers from C++: the fused layers (one input GEMM, then one GEMM and one fused kernel
// per step, Note [recurrent layer]) against the same recurrence written step by step with plain
// ops, forward and backward; gradcheck of every mode, packed or not; parameter names; errors.
// tests/python/test_rnn.py compares the same layers with PyTorch.
#include "nn/layers/recurrent.h"
#include "test_util.h"

namespace wick {
namespace {

using testing::expect_close;
using testing::expect_error;
using testing::input;

// One direction of one layer, step by step from ops: the textbook equations of each cell.
Tensor naive_step(RnnMode mode, const Tensor& x, Tensor& h, Tensor& c, const Tensor* w, bool bias) {
  Tensor gi = linear(x, w[0], bias ? w[2] : Tensor());
  Tensor gh = linear(h, w[1], bias ? w[3] : Tensor());
  if (mode == RnnMode::kLstm) {
    std::vector<Tensor> g = chunk(gi + gh, 4, 1);
    c = sigmoid(g[1]) * c + sigmoid(g[0]) * tanh(g[2]);
    h = sigmoid(g[3]) * tanh(c);
  } else if (mode == RnnMode::kGru) {
    std::vector<Tensor> a = chunk(gi, 3, 1), b = chunk(gh, 3, 1);
    Tensor r = sigmoid(a[0] + b[0]), z = sigmoid(a[1] + b[1]);
    Tensor n = tanh(a[2] + r * b[2]);
    h = (1.0 - z) * n + z * h;
  } else {
    h = mode == RnnMode::kTanh ? tanh(gi + gh) : relu(gi + gh);
  }
  return h;
}

// The whole network over a [T, B, I] input, layer by layer, direction by direction.
std::vector<Tensor> naive_rnn(RnnMode mode, const Tensor& x, const Tensor& h0, const Tensor& c0,
                              const std::vector<Tensor>& w, int64_t layers, bool bidirectional,
                              bool bias) {
  const int64_t D = bidirectional ? 2 : 1, per = bias ? 4 : 2, T = x.size(0);
  Tensor in = x;
  std::vector<Tensor> hs, cs;
  for (int64_t l = 0; l < layers; ++l) {
    std::vector<Tensor> outs;
    for (int64_t d = 0; d < D; ++d) {
      Tensor h = h0.select(0, l * D + d), c = c0.select(0, l * D + d);
      std::vector<Tensor> steps(T);
      for (int64_t s = 0; s < T; ++s) {
        int64_t t = d == 1 ? T - 1 - s : s;
        steps[t] = naive_step(mode, in.select(0, t), h, c, &w[(l * D + d) * per], bias);
      }
      outs.push_back(stack(steps, 0));
      hs.push_back(h);
      cs.push_back(c);
    }
    in = D == 2 ? cat(outs, 2) : outs[0];
  }
  return {in, stack(hs, 0), stack(cs, 0)};
}

struct Case {
  RnnMode mode;
  int64_t layers;
  bool bidirectional, bias;
};

class RnnLayers : public ::testing::TestWithParam<Case> {};

TEST_P(RnnLayers, FusedLayerMatchesStepByStepOpsForwardAndBackward) {
  const Case p = GetParam();
  const int64_t T = 5, B = 3, I = 4, H = 6, D = p.bidirectional ? 2 : 1;
  nn::RNNOptions o;
  o.input_size = I, o.hidden_size = H, o.num_layers = p.layers, o.bias = p.bias;
  o.bidirectional = p.bidirectional;
  if (p.mode == RnnMode::kRelu) o.nonlinearity = "relu";
  std::shared_ptr<nn::RNNBase> net;
  if (p.mode == RnnMode::kLstm) net = std::make_shared<nn::LSTM>(o);
  if (p.mode == RnnMode::kGru) net = std::make_shared<nn::GRU>(o);
  if (!net) net = std::make_shared<nn::RNN>(o);
  net->to(kFloat64);
  std::vector<Tensor> w;
  for (auto& [name, t] : net->named_parameters()) w.push_back(t);

  Tensor x = input({T, B, I}, 1), h0 = input({p.layers * D, B, H}, 2);
  Tensor c0 = input({p.layers * D, B, H}, 3);
  nn::RnnOutput fused = net->forward_full(x, h0, p.mode == RnnMode::kLstm ? c0 : Tensor());
  std::vector<Tensor> ref = naive_rnn(p.mode, x, h0, c0, w, p.layers, p.bidirectional, p.bias);
  expect_close(fused.output, ref[0], 1e-10);
  expect_close(fused.h_n, ref[1], 1e-10);
  if (p.mode == RnnMode::kLstm) expect_close(fused.c_n, ref[2], 1e-10);

  // Gradients of everything, through every output, fused vs step by step.
  auto loss = [&](const std::vector<Tensor>& outs) {
    Tensor l = (outs[0] * outs[0]).sum() + outs[1].sin().sum();
    return p.mode == RnnMode::kLstm ? l + outs[2].cos().sum() : l;
  };
  TensorList leaves = w;
  leaves.push_back(x);
  leaves.push_back(h0);
  if (p.mode == RnnMode::kLstm) leaves.push_back(c0);
  TensorList g1 = autograd::grad({loss({fused.output, fused.h_n, fused.c_n})}, leaves);
  TensorList g2 = autograd::grad({loss(ref)}, leaves);
  for (size_t i = 0; i < leaves.size(); ++i) {
    SCOPED_TRACE("gradient " + std::to_string(i));
    expect_close(g1[i], g2[i], 1e-9);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Modes, RnnLayers,
    ::testing::Values(Case{RnnMode::kLstm, 1, false, true}, Case{RnnMode::kLstm, 2, true, true},
                      Case{RnnMode::kGru, 1, false, true}, Case{RnnMode::kGru, 2, true, false},
                      Case{RnnMode::kTanh, 2, true, true}, Case{RnnMode::kRelu, 2, false, true}));

TEST(Rnn, GradcheckOfPackedLayersInEveryMode) {
  for (RnnMode mode : {RnnMode::kTanh, RnnMode::kRelu, RnnMode::kLstm, RnnMode::kGru}) {
    SCOPED_TRACE(rnn_mode_name(mode));
    const int64_t G = rnn_gate_count(mode), H = 2;
    const std::vector<int64_t> sizes{3, 2, 1};  // packed: 6 rows
    TensorList in{input({6, 2}, 1), input({2, 3, H}, 2), input({2, 3, H}, 3)};
    for (int64_t d = 0; d < 2; ++d) {
      for (const Shape& s : {Shape{G * H, 2}, Shape{G * H, H}, Shape{G * H}, Shape{G * H}}) {
        in.push_back(input(s, 10 + in.size()));
      }
    }
    auto fn = [&](const TensorList& t) {
      std::vector<Tensor> weights(t.begin() + 3, t.end());
      nn::RnnOutput r = nn::rnn(mode, t[0], sizes, t[1], mode == RnnMode::kLstm ? t[2] : Tensor(),
                                weights, true, 1, 0.0, false, true);
      Tensor out = r.output.sum({1}) + 0.0;
      Tensor all = cat({out.reshape({-1}), r.h_n.reshape({-1})}, 0);
      return mode == RnnMode::kLstm ? cat({all, r.c_n.reshape({-1})}, 0) : all;
    };
    EXPECT_TRUE(gradcheck(fn, in));
  }
}

TEST(Rnn, FusedCellsPassGradcheckAndGradgradcheck) {
  TensorList lstm{input({3, 8}, 1), input({3, 8}, 2), input({3, 2}, 3)};
  auto f = [](const TensorList& t) {
    auto [h, c] = fused_lstm_cell(t[0], t[1], t[2]);
    return cat({h, c * 0.5}, 1);
  };
  EXPECT_TRUE(gradcheck(f, lstm));
  EXPECT_TRUE(gradgradcheck(f, lstm));
  TensorList gru{input({3, 6}, 4), input({3, 6}, 5), input({3, 2}, 6)};
  auto g = [](const TensorList& t) { return fused_gru_cell(t[0], t[1], t[2]); };
  EXPECT_TRUE(gradcheck(g, gru));
  EXPECT_TRUE(gradgradcheck(g, gru));
}

TEST(Rnn, ParameterNamesAreTorchs) {
  nn::RNNOptions o;
  o.input_size = 3, o.hidden_size = 4, o.num_layers = 2, o.bidirectional = true;
  nn::GRU gru(o);
  std::vector<std::string> names;
  for (auto& [name, t] : gru.named_parameters()) names.push_back(name);
  ASSERT_EQ(names.size(), 16u);
  EXPECT_EQ(names[0], "weight_ih_l0");
  EXPECT_EQ(names[3], "bias_hh_l0");
  EXPECT_EQ(names[4], "weight_ih_l0_reverse");
  EXPECT_EQ(names[15], "bias_hh_l1_reverse");
  EXPECT_EQ(gru.named_parameters()[8].second.shape(), (Shape{12, 8}));  // layer 1 sees 2H
  nn::LSTMCell cell(3, 4);
  EXPECT_EQ(cell.weight_ih.shape(), (Shape{16, 3}));
}

TEST(Rnn, BadInputsRaise) {
  nn::RNNOptions o;
  o.input_size = 3, o.hidden_size = 4;
  nn::LSTM lstm(o);
  expect_error<std::runtime_error>(
      [&] {
        lstm.forward_full(zeros({5, 2, 7}));
      },
      "input.size(-1) must be equal to input_size. Expected 3, got 7");
  expect_error<std::runtime_error>(
      [&] {
        lstm.forward_full(zeros({5, 2, 3}), zeros({2, 2, 4}), zeros({1, 2, 4}));
      },
      "Expected hidden size (1, 2, 4), got [2, 2, 4]");
  expect_error<std::invalid_argument>(
      [&] {
        lstm.forward_full(zeros({5, 2, 3, 1}));
      },
      "Expected input to be 2-D or 3-D but received 4-D");
  expect_error<std::invalid_argument>(
      [&] {
        nn::rnn(RnnMode::kGru, zeros({4, 3}), {2, 3}, zeros({1, 2, 4}), Tensor(),
                nn::GRU(o).flat_weights(), true, 1, 0.0, false, false);
      },
      "batch_sizes must be positive, non-increasing");
  o.nonlinearity = "sigmoid";
  expect_error<std::invalid_argument>([&] { nn::RNN bad(o); }, "Unknown nonlinearity");
  nn::GRUCell cell(3, 4);
  expect_error<std::runtime_error>(
      [&] {
        cell.forward(zeros({2, 5}));
      },
      "input has inconsistent input_size: got 5 expected 3");
}

TEST(Rnn, UnbatchedAndBatchFirstAgreeWithTimeMajor) {
  nn::RNNOptions o;
  o.input_size = 3, o.hidden_size = 4;
  nn::GRU gru(o);
  Tensor x = randn({5, 2, 3});
  nn::RnnOutput full = gru.forward_full(x);
  nn::RnnOutput one = gru.forward_full(x.select(1, 1));
  expect_close(one.output, full.output.select(1, 1));
  expect_close(one.h_n, full.h_n.select(1, 1));
}

}  // namespace
}  // namespace wick
