// Backward nodes of the fused LSTM/GRU steps and of a whole recurrent layer (core/ops/rnn.cpp).
#pragma once

#include <vector>

#include "autograd/node.h"
#include "core/op_table.h"
#include "core/ops/rnn.h"

namespace wick {

// (h', c') = fused_lstm_cell(igates, hgates, cx), as one [2, B, H] output. The gradient of the
// gates goes to both igates and hgates (they are added). A create_graph backward recomputes the
// gates with differentiable ops instead of calling the fused backward kernel.
struct LstmCellBackward : Node {
  SavedTensor igates, hgates, cx, workspace, cy;
  const char* name() const override { return op_info(OpKey::lstm_cell).backward; }
  TensorList apply(const Tensor& grad) override;
  void release_saved() override {
    igates.reset(), hgates.reset(), cx.reset(), workspace.reset(), cy.reset();
  }
};

// h' = fused_gru_cell(igates, hgates, hx).
struct GruCellBackward : Node {
  SavedTensor igates, hgates, hx, workspace;
  const char* name() const override { return op_info(OpKey::gru_cell).backward; }
  TensorList apply(const Tensor& grad) override;
  void release_saved() override { igates.reset(), hgates.reset(), hx.reset(), workspace.reset(); }
};

// One direction of one layer over a sequence (Note [recurrent layer] in core/ops/rnn.cpp). Inputs:
// x, h0, c0, w_ih, w_hh, b_ih, b_hh; the output is [N + B (+ B), H]: output rows, h_n, c_n.
struct RnnLayerBackward : Node {
  RnnMode mode = RnnMode::kLstm;
  std::vector<int64_t> batch_sizes, offsets;
  bool reverse = false;
  int64_t batch = 0, hidden = 0;
  SavedTensor x, w_ih, w_hh, hprev, output, workspace, cprev, cnew;
  const char* name() const override;
  TensorList apply(const Tensor& grad) override;
  void release_saved() override {
    x.reset(), w_ih.reset(), w_hh.reset(), hprev.reset(), output.reset(), workspace.reset();
    cprev.reset(), cnew.reset();
  }
};

}  // namespace wick
