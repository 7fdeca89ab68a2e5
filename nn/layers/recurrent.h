// Recurrent layers with PyTorch's names, parameters and semantics: RNN (tanh or relu), LSTM, GRU
// and their cells. Parameters are weight_ih_l{k}[_reverse], weight_hh_l{k}[_reverse],
// bias_ih_l{k}[_reverse], bias_hh_l{k}[_reverse], so a PyTorch state_dict loads. Each layer and
// direction runs as one node (Note [recurrent layer] in core/ops/rnn.cpp).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/ops/rnn.h"
#include "nn/module.h"

namespace wick::nn {

// Every layer and direction of a recurrent network over a sequence. `input` is [T, B, I]
// (time-major) when batch_sizes is empty, else packed data [N, I] with those batch sizes. hx
// (and cx, LSTM only) are [num_layers * D, B, H] and required. `weights` holds, per layer and
// direction (forward first), w_ih, w_hh and, when has_biases, b_ih, b_hh. Dropout applies to the
// outputs of every layer but the last, in training only. Returns output ([T, B, D*H] or
// [N, D*H]), h_n and c_n (undefined but for the LSTM).
struct RnnOutput {
  Tensor output, h_n, c_n;
};
RnnOutput rnn(RnnMode mode, const Tensor& input, const std::vector<int64_t>& batch_sizes,
              const Tensor& hx, const Tensor& cx, const std::vector<Tensor>& weights,
              bool has_biases, int64_t num_layers, double dropout, bool training,
              bool bidirectional);

struct RNNOptions {
  int64_t input_size = 0, hidden_size = 0, num_layers = 1;
  bool bias = true, batch_first = false, bidirectional = false;
  double dropout = 0.0;
  std::string nonlinearity = "tanh";  // RNN only: "tanh" or "relu"
};

// The common part of RNN, LSTM and GRU (torch.nn.RNNBase).
class RNNBase : public Module {
 public:
  RNNBase(RnnMode mode, const char* type_name, RNNOptions options);
  // input [T, B, I] ([B, T, I] with batch_first) or unbatched [T, I]; hx [L*D, B, H] (or
  // [L*D, H] unbatched) or undefined for zeros. Returns (output, h_n, c_n).
  RnnOutput forward_full(const Tensor& input, const Tensor& hx = Tensor(),
                         const Tensor& cx = Tensor());
  Tensor forward(const Tensor& input) override { return forward_full(input).output; }
  std::string extra_repr() const override;
  void reset_parameters();
  const RNNOptions& options() const { return options_; }
  std::vector<Tensor> flat_weights() const { return weights_; }

 protected:
  RnnMode mode_;
  RNNOptions options_;
  std::vector<Tensor> weights_;
};

class RNN : public RNNBase {
 public:
  explicit RNN(RNNOptions options);
};
class LSTM : public RNNBase {
 public:
  explicit LSTM(RNNOptions options) : RNNBase(RnnMode::kLstm, "LSTM", std::move(options)) {}
};
class GRU : public RNNBase {
 public:
  explicit GRU(RNNOptions options) : RNNBase(RnnMode::kGru, "GRU", std::move(options)) {}
};

// One step (torch.nn.RNNCell, LSTMCell, GRUCell): input [B, I] or [I], states [B, H] or [H].
class RNNCellBase : public Module {
 public:
  RNNCellBase(RnnMode mode, const char* type_name, int64_t input_size, int64_t hidden_size,
              bool bias);
  void reset_parameters();
  std::string extra_repr() const override;
  Tensor weight_ih, weight_hh, bias_ih, bias_hh;

 protected:
  // The input and state made 2-d (zeros for an undefined state), and whether they were 1-d.
  bool batched(const Tensor& input, Tensor& hx, const char* op) const;
  RnnMode mode_;
  int64_t input_size_, hidden_size_;
};

class RNNCell : public RNNCellBase {
 public:
  RNNCell(int64_t input_size, int64_t hidden_size, bool bias = true,
          const std::string& nonlinearity = "tanh");
  Tensor forward(const Tensor& input) override { return forward(input, Tensor()); }
  Tensor forward(const Tensor& input, const Tensor& hx);
};
class LSTMCell : public RNNCellBase {
 public:
  LSTMCell(int64_t input_size, int64_t hidden_size, bool bias = true)
      : RNNCellBase(RnnMode::kLstm, "LSTMCell", input_size, hidden_size, bias) {}
  Tensor forward(const Tensor& input) override { return forward(input, Tensor(), Tensor()).first; }
  std::pair<Tensor, Tensor> forward(const Tensor& input, const Tensor& hx, const Tensor& cx);
};
class GRUCell : public RNNCellBase {
 public:
  GRUCell(int64_t input_size, int64_t hidden_size, bool bias = true)
      : RNNCellBase(RnnMode::kGru, "GRUCell", input_size, hidden_size, bias) {}
  Tensor forward(const Tensor& input) override { return forward(input, Tensor()); }
  Tensor forward(const Tensor& input, const Tensor& hx);
};

}  // namespace wick::nn
