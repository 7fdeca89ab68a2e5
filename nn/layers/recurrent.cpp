#include "nn/layers/recurrent.h"

#include <cmath>
#include <sstream>

#include "core/error.h"
#include "core/grad_mode.h"
#include "nn/init.h"
#include "nn/layers/dropout.h"

namespace wick::nn {

namespace {

std::string shape_text(const Shape& s, bool parens) {
  std::ostringstream os;
  os << (parens ? "(" : "[");
  for (int64_t i = 0; i < s.size(); ++i) os << (i ? ", " : "") << s[i];
  os << (parens ? ")" : "]");
  return os.str();
}

}  // namespace

RnnOutput rnn(RnnMode mode, const Tensor& input, const std::vector<int64_t>& batch_sizes,
              const Tensor& hx, const Tensor& cx, const std::vector<Tensor>& weights,
              bool has_biases, int64_t num_layers, double dropout, bool training,
              bool bidirectional) {
  const char* op = rnn_mode_name(mode);
  const bool lstm = mode == RnnMode::kLstm, packed = !batch_sizes.empty();
  const int64_t D = bidirectional ? 2 : 1, per = has_biases ? 4 : 2;
  check_value(num_layers >= 1, op, "num_layers must be at least 1; got ", num_layers);
  check_state(static_cast<int64_t>(weights.size()) == num_layers * D * per, op, "expected ",
              num_layers * D * per, " weights for ", num_layers, " layer(s), ", D, " direction(s)",
              has_biases ? " with biases" : "", "; got ", weights.size());
  check_state(input.defined() && input.dim() == (packed ? 2 : 3), op, "expected ",
              packed ? "2-d packed data [N, input_size]" : "a 3-d input [T, B, input_size]",
              "; got ", input.defined() ? input.dim() : 0, "-d");
  const int64_t input_size = weights[0].size(1), H = weights[1].size(1);
  check_state(input.size(-1) == input_size, op,
              "input.size(-1) must be equal to input_size. Expected ", input_size, ", got ",
              input.size(-1));
  const int64_t T = packed ? static_cast<int64_t>(batch_sizes.size()) : input.size(0);
  const int64_t B = packed ? batch_sizes[0] : input.size(1);
  check_value(T > 0 && B > 0, op, "expected a non-empty sequence and batch; got ", T,
              " step(s) of batch ", B);
  const Shape hshape{num_layers * D, B, H};
  check_state(hx.defined() && hx.shape() == hshape, op, "Expected hidden size ",
              shape_text(hshape, true), ", got ",
              hx.defined() ? shape_text(hx.shape(), false) : std::string("None"));
  if (lstm) {
    check_state(cx.defined() && cx.shape() == hshape, op, "Expected hidden size ",
                shape_text(hshape, true), ", got ",
                cx.defined() ? shape_text(cx.shape(), false) : std::string("None"));
  }
  std::vector<int64_t> sizes = batch_sizes;
  if (!packed) sizes.assign(T, B);  // a padded sequence is packed data with every batch full

  Tensor layer_in = packed ? input : input.reshape({T * B, input_size});
  std::vector<Tensor> hs, cs;
  for (int64_t l = 0; l < num_layers; ++l) {
    std::vector<Tensor> outs;
    for (int64_t d = 0; d < D; ++d) {
      const int64_t idx = l * D + d;
      const Tensor* w = &weights[idx * per];
      Tensor b_ih = has_biases ? w[2] : Tensor(), b_hh = has_biases ? w[3] : Tensor();
      RnnLayerOutput r =
          rnn_layer(mode, layer_in, sizes, hx.select(0, idx), lstm ? cx.select(0, idx) : Tensor(),
                    w[0], w[1], b_ih, b_hh, d == 1);
      outs.push_back(r.output);
      hs.push_back(r.h_n);
      if (lstm) cs.push_back(r.c_n);
    }
    layer_in = D == 2 ? cat(outs, 1) : outs[0];
    // Between layers only, as PyTorch: the last layer's output is never dropped out.
    if (dropout > 0 && training && l + 1 < num_layers) {
      layer_in = functional::dropout(layer_in, dropout, true);
    }
  }
  RnnOutput out;
  out.output = packed ? layer_in : layer_in.reshape({T, B, D * H});
  out.h_n = stack(hs, 0);
  if (lstm) out.c_n = stack(cs, 0);
  return out;
}

RNNBase::RNNBase(RnnMode mode, const char* type_name, RNNOptions options)
    : Module(type_name), mode_(mode), options_(std::move(options)) {
  const RNNOptions& o = options_;
  check_value(o.input_size >= 0 && o.hidden_size > 0, type_name,
              "hidden_size must be greater than zero and input_size non-negative; got ",
              o.hidden_size, " and ", o.input_size);
  check_value(o.num_layers >= 1, type_name, "num_layers must be at least 1; got ", o.num_layers);
  check_value(o.dropout >= 0 && o.dropout <= 1, type_name,
              "dropout should be a number in range [0, 1] representing the probability of an "
              "element being zeroed; got ",
              o.dropout);
  const int64_t G = rnn_gate_count(mode), D = o.bidirectional ? 2 : 1;
  for (int64_t l = 0; l < o.num_layers; ++l) {
    for (int64_t d = 0; d < D; ++d) {
      const int64_t in = l == 0 ? o.input_size : o.hidden_size * D;
      std::string suffix = "_l" + std::to_string(l) + (d == 1 ? "_reverse" : "");
      weights_.push_back(register_parameter("weight_ih" + suffix, empty({G * o.hidden_size, in})));
      weights_.push_back(
          register_parameter("weight_hh" + suffix, empty({G * o.hidden_size, o.hidden_size})));
      if (o.bias) {
        weights_.push_back(register_parameter("bias_ih" + suffix, empty({G * o.hidden_size})));
        weights_.push_back(register_parameter("bias_hh" + suffix, empty({G * o.hidden_size})));
      }
    }
  }
  reset_parameters();
}

void RNNBase::reset_parameters() {
  // PyTorch: every weight and bias uniform in +-1/sqrt(hidden_size).
  const double bound = 1.0 / std::sqrt(static_cast<double>(options_.hidden_size));
  NoGradGuard no_grad;
  for (Tensor& w : weights_) init::uniform_(w, -bound, bound);
}

RnnOutput RNNBase::forward_full(const Tensor& input, const Tensor& hx, const Tensor& cx) {
  const char* op = type_name().c_str();
  const RNNOptions& o = options_;
  check_state(input.defined(), op, "input is undefined");
  check_value(input.dim() == 2 || input.dim() == 3, op,
              "Expected input to be 2-D or 3-D but received ", input.dim(), "-D tensor");
  const bool batched = input.dim() == 3;
  const bool lstm = mode_ == RnnMode::kLstm;
  Tensor x = batched ? (o.batch_first ? input.transpose(0, 1) : input) : input.unsqueeze(1);
  const int64_t D = o.bidirectional ? 2 : 1, B = x.size(1);
  auto state = [&](const Tensor& s) {
    if (!s.defined()) return zeros({o.num_layers * D, B, o.hidden_size}, options_of(x));
    check_state(s.dim() == (batched ? 3 : 2), op, "For ", batched ? "batched 3-D" : "unbatched 2-D",
                " input, hx should also be ", batched ? 3 : 2, "-D but got ", s.dim(), "-D tensor");
    return batched ? s : s.unsqueeze(1);
  };
  Tensor h0 = state(hx), c0 = lstm ? state(cx) : Tensor();
  RnnOutput r = rnn(mode_, x, {}, h0, c0, weights_, o.bias, o.num_layers, o.dropout, is_training(),
                    o.bidirectional);
  if (!batched) {
    r.output = r.output.squeeze(1);
    r.h_n = r.h_n.squeeze(1);
    if (lstm) r.c_n = r.c_n.squeeze(1);
  } else if (o.batch_first) {
    r.output = r.output.transpose(0, 1);
  }
  return r;
}

std::string RNNBase::extra_repr() const {
  const RNNOptions& o = options_;
  std::ostringstream os;
  os << o.input_size << ", " << o.hidden_size;
  if (o.num_layers != 1) os << ", num_layers=" << o.num_layers;
  if (mode_ == RnnMode::kRelu) os << ", nonlinearity='relu'";
  if (!o.bias) os << ", bias=False";
  if (o.batch_first) os << ", batch_first=True";
  if (o.dropout != 0) os << ", dropout=" << o.dropout;
  if (o.bidirectional) os << ", bidirectional=True";
  return os.str();
}

namespace {
RnnMode rnn_mode_of(const std::string& nonlinearity, const char* op) {
  check_value(nonlinearity == "tanh" || nonlinearity == "relu", op, "Unknown nonlinearity '",
              nonlinearity, "'. Select from 'tanh' or 'relu'.");
  return nonlinearity == "tanh" ? RnnMode::kTanh : RnnMode::kRelu;
}
}  // namespace

RNN::RNN(RNNOptions options) : RNNBase(rnn_mode_of(options.nonlinearity, "RNN"), "RNN", options) {}

RNNCellBase::RNNCellBase(RnnMode mode, const char* type_name, int64_t input_size,
                         int64_t hidden_size, bool bias)
    : Module(type_name), mode_(mode), input_size_(input_size), hidden_size_(hidden_size) {
  check_value(input_size >= 0 && hidden_size > 0, type_name,
              "hidden_size must be greater than zero and input_size non-negative; got ",
              hidden_size, " and ", input_size);
  const int64_t G = rnn_gate_count(mode);
  weight_ih = register_parameter("weight_ih", empty({G * hidden_size, input_size}));
  weight_hh = register_parameter("weight_hh", empty({G * hidden_size, hidden_size}));
  if (bias) {
    bias_ih = register_parameter("bias_ih", empty({G * hidden_size}));
    bias_hh = register_parameter("bias_hh", empty({G * hidden_size}));
  }
  reset_parameters();
}

void RNNCellBase::reset_parameters() {
  const double bound = 1.0 / std::sqrt(static_cast<double>(hidden_size_));
  NoGradGuard no_grad;
  for (Tensor* w : {&weight_ih, &weight_hh, &bias_ih, &bias_hh}) {
    if (w->defined()) init::uniform_(*w, -bound, bound);
  }
}

std::string RNNCellBase::extra_repr() const {
  std::ostringstream os;
  os << input_size_ << ", " << hidden_size_;
  if (!bias_ih.defined()) os << ", bias=False";
  if (mode_ == RnnMode::kRelu) os << ", nonlinearity='relu'";
  return os.str();
}

bool RNNCellBase::batched(const Tensor& input, Tensor& hx, const char* op) const {
  check_state(input.defined(), op, "input is undefined");
  check_value(input.dim() == 1 || input.dim() == 2, op,
              "Expected input to be 1-D or 2-D but received ", input.dim(), "-D tensor");
  const bool is_batched = input.dim() == 2;
  if (!hx.defined()) {
    hx = zeros(is_batched ? Shape{input.size(0), hidden_size_} : Shape{hidden_size_},
               options_of(input));
  }
  check_state(hx.dim() == input.dim(), op, "hx should have the same number of dimensions as ",
              "input (", input.dim(), "-D); got ", hx.dim(), "-D");
  return is_batched;
}

Tensor RNNCell::forward(const Tensor& input, const Tensor& hx_in) {
  Tensor hx = hx_in;
  const bool b = batched(input, hx, "RNNCell");
  Tensor x = b ? input : input.unsqueeze(0), h = b ? hx : hx.unsqueeze(0);
  Tensor y = mode_ == RnnMode::kTanh ? rnn_tanh_cell(x, h, weight_ih, weight_hh, bias_ih, bias_hh)
                                     : rnn_relu_cell(x, h, weight_ih, weight_hh, bias_ih, bias_hh);
  return b ? y : y.squeeze(0);
}

RNNCell::RNNCell(int64_t input_size, int64_t hidden_size, bool bias,
                 const std::string& nonlinearity)
    : RNNCellBase(rnn_mode_of(nonlinearity, "RNNCell"), "RNNCell", input_size, hidden_size, bias) {}

std::pair<Tensor, Tensor> LSTMCell::forward(const Tensor& input, const Tensor& hx_in,
                                            const Tensor& cx_in) {
  Tensor hx = hx_in, cx = cx_in;
  const bool b = batched(input, hx, "LSTMCell");
  if (!cx.defined()) cx = zeros_like(hx);
  Tensor x = b ? input : input.unsqueeze(0);
  auto [h, c] = lstm_cell(x, b ? hx : hx.unsqueeze(0), b ? cx : cx.unsqueeze(0), weight_ih,
                          weight_hh, bias_ih, bias_hh);
  if (!b) return {h.squeeze(0), c.squeeze(0)};
  return {h, c};
}

Tensor GRUCell::forward(const Tensor& input, const Tensor& hx_in) {
  Tensor hx = hx_in;
  const bool b = batched(input, hx, "GRUCell");
  Tensor x = b ? input : input.unsqueeze(0), h = b ? hx : hx.unsqueeze(0);
  Tensor y = gru_cell(x, h, weight_ih, weight_hh, bias_ih, bias_hh);
  return b ? y : y.squeeze(0);
}

}  // namespace wick::nn
