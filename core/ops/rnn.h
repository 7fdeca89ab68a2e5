// Recurrent steps and layers: the fused LSTM and GRU steps, PyTorch's cell functions
// (torch.lstm_cell, gru_cell, rnn_tanh_cell, rnn_relu_cell) and one direction of one recurrent
// layer over a whole (possibly packed) sequence. nn/layers/recurrent.h stacks layers and
// directions.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "core/tensor.h"

namespace wick {

enum class RnnMode { kTanh, kRelu, kLstm, kGru };

const char* rnn_mode_name(RnnMode mode);  // "RNN_TANH", "RNN_RELU", "LSTM", "GRU"
int64_t rnn_gate_count(RnnMode mode);     // 1, 1, 4, 3

// The fused pointwise part of one step (one kernel each way). igates = x W_ih^T + b_ih and
// hgates = h W_hh^T + b_hh, [B, 4H] for the LSTM (gates i, f, g, o) and [B, 3H] for the GRU
// (r, z, n). Returns (h', c') for the LSTM and h' for the GRU.
std::pair<Tensor, Tensor> fused_lstm_cell(const Tensor& igates, const Tensor& hgates,
                                          const Tensor& cx);
Tensor fused_gru_cell(const Tensor& igates, const Tensor& hgates, const Tensor& hx);

// torch.lstm_cell and friends: one step of the cell from the weights. input [B, I] (or [I]),
// hx/cx [B, H]; biases may be undefined.
std::pair<Tensor, Tensor> lstm_cell(const Tensor& input, const Tensor& hx, const Tensor& cx,
                                    const Tensor& w_ih, const Tensor& w_hh,
                                    const Tensor& b_ih = Tensor(), const Tensor& b_hh = Tensor());
Tensor gru_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                const Tensor& b_ih = Tensor(), const Tensor& b_hh = Tensor());
Tensor rnn_tanh_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                     const Tensor& b_ih = Tensor(), const Tensor& b_hh = Tensor());
Tensor rnn_relu_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                     const Tensor& b_ih = Tensor(), const Tensor& b_hh = Tensor());

// One direction of one layer. `x` is packed, time-major: the rows of step t are
// x[offset_t : offset_t + batch_sizes[t]], the sequences sorted longest first, so a padded
// [T, B, I] input is the case batch_sizes = {B, ..., B} reshaped to [T*B, I]. h0 and c0 (LSTM
// only) are [batch_sizes[0], H]. `reverse` runs from the last step to the first.
// Returns output [N, H], h_n and c_n [B, H] (c_n undefined except for the LSTM).
struct RnnLayerOutput {
  Tensor output, h_n, c_n;
};
RnnLayerOutput rnn_layer(RnnMode mode, const Tensor& x, const std::vector<int64_t>& batch_sizes,
                         const Tensor& h0, const Tensor& c0, const Tensor& w_ih, const Tensor& w_hh,
                         const Tensor& b_ih, const Tensor& b_hh, bool reverse);

}  // namespace wick
