#include "autograd/functions/rnn.h"

#include "core/dispatch.h"
#include "core/grad_mode.h"
#include "core/ops.h"
#include "core/ops/op_utils.h"

namespace wick {

TensorList LstmCellBackward::apply(const Tensor& grad) {
  Tensor c = cx.unpack(*this);
  Tensor ghy = grad.select(0, 0), gcy = grad.select(0, 1);
  if (GradMode::is_enabled()) {
    // create_graph: the same formulas as the kernel (core/ops/rnn_math.h), in differentiable ops.
    std::vector<Tensor> pre = chunk(igates.unpack(*this) + hgates.unpack(*this), 4, 1);
    Tensor i = sigmoid(pre[0]), f = sigmoid(pre[1]), g = tanh(pre[2]), o = sigmoid(pre[3]);
    Tensor tc = tanh(f * c + i * g);
    Tensor gc = gcy + ghy * o * (1.0 - tc * tc);
    Tensor gates = cat({gc * g * i * (1.0 - i), gc * c * f * (1.0 - f), gc * i * (1.0 - g * g),
                        ghy * tc * o * (1.0 - o)},
                       1);
    return {gates, gates, gc * f};
  }
  Tensor ws = workspace.unpack(*this), c1 = cy.unpack(*this);
  Tensor gh = ghy.contiguous(), gc = gcy.contiguous();
  c = c.contiguous();
  Tensor gates = empty(ws.shape(), options_of(ws)), gcx = empty(c.shape(), options_of(c));
  if (gates.numel() > 0) {
    dispatch<LstmCellBackwardKernel>(OpKey::lstm_cell_backward, c.device(), gh, gc, ws, c, c1,
                                     gates, gcx);
  }
  return {gates, gates, gcx};
}

TensorList GruCellBackward::apply(const Tensor& grad) {
  Tensor h = hx.unpack(*this);
  if (GradMode::is_enabled()) {
    std::vector<Tensor> ip = chunk(igates.unpack(*this), 3, 1);
    std::vector<Tensor> hp = chunk(hgates.unpack(*this), 3, 1);
    Tensor r = sigmoid(ip[0] + hp[0]), z = sigmoid(ip[1] + hp[1]);
    Tensor n = tanh(ip[2] + r * hp[2]);
    Tensor gn = grad * (1.0 - z) * (1.0 - n * n);
    Tensor gz = grad * (h - n) * z * (1.0 - z);
    Tensor gr = gn * hp[2] * r * (1.0 - r);
    return {cat({gr, gz, gn}, 1), cat({gr, gz, gn * r}, 1), grad * z};
  }
  Tensor ws = workspace.unpack(*this), g = grad.contiguous();
  h = h.contiguous();
  const int64_t B = h.size(0), H = h.size(1);
  Tensor gi = empty({B, 3 * H}, options_of(h)), gh = empty({B, 3 * H}, options_of(h));
  Tensor ghx = empty({B, H}, options_of(h));
  if (ghx.numel() > 0) {
    dispatch<GruCellBackwardKernel>(OpKey::gru_cell_backward, h.device(), g, ws, h, gi, gh, ghx);
  }
  return {gi, gh, ghx};
}

const char* RnnLayerBackward::name() const { return "RnnLayerBackward"; }

TensorList RnnLayerBackward::apply(const Tensor& grad) {
  const char* op = rnn_mode_name(mode);
  // The loop below calls kernels that record nothing; a create_graph backward would return a
  // gradient without a graph, i.e. a silently wrong second derivative.
  check_state(!GradMode::is_enabled(), op,
              "double backward (create_graph=True) through a whole recurrent layer is not "
              "supported; run the cell (nn.LSTMCell, nn.GRUCell, nn.RNNCell) in a loop instead");
  const bool lstm = mode == RnnMode::kLstm, gru = mode == RnnMode::kGru;
  const int64_t B = batch, H = hidden, N = grad.size(0) - (lstm ? 2 : 1) * B;
  Tensor xd = x.unpack(*this), wi = w_ih.unpack(*this), wh = w_hh.unpack(*this);
  Tensor hp = hprev.unpack(*this), y = output.unpack(*this);
  Tensor ws = (lstm || gru) ? workspace.unpack(*this) : Tensor();
  Tensor cp = lstm ? cprev.unpack(*this) : Tensor(), cn = lstm ? cnew.unpack(*this) : Tensor();
  const int64_t G = rnn_gate_count(mode);

  Tensor g = grad.contiguous();
  Tensor gy = g.narrow(0, 0, N);
  Tensor gh = g.narrow(0, N, B).clone();  // becomes d(h0) as the loop walks back
  Tensor gc = lstm ? g.narrow(0, N + B, B).clone() : Tensor();
  Tensor gi = empty({N, G * H}, options_of(g));              // d(igates), all steps
  Tensor ghg = gru ? empty({N, G * H}, options_of(g)) : gi;  // d(hgates); equal but for the GRU
  Tensor tmp = empty({B, H}, options_of(g));

  const int64_t T = static_cast<int64_t>(batch_sizes.size());
  for (int64_t s = T - 1; s >= 0; --s) {
    const int64_t t = reverse ? T - 1 - s : s, off = offsets[t], bs = batch_sizes[t];
    Tensor h = gh.narrow(0, 0, bs);
    h.add_(gy.narrow(0, off, bs));
    Tensor gig = gi.narrow(0, off, bs), dh = tmp.narrow(0, 0, bs);
    if (lstm) {
      Tensor c = gc.narrow(0, 0, bs);
      dispatch<LstmCellBackwardKernel>(OpKey::lstm_cell_backward, g.device(), h, c,
                                       ws.narrow(0, off, bs), cp.narrow(0, off, bs),
                                       cn.narrow(0, off, bs), gig, dh);
      c.copy_(dh);
      h.copy_(mm(gig, wh));
    } else if (gru) {
      Tensor ghh = ghg.narrow(0, off, bs);
      dispatch<GruCellBackwardKernel>(OpKey::gru_cell_backward, g.device(), h,
                                      ws.narrow(0, off, bs), hp.narrow(0, off, bs), gig, ghh, dh);
      h.copy_(dh + mm(ghh, wh));
    } else {
      Tensor yt = y.narrow(0, off, bs);
      gig.copy_(mode == RnnMode::kTanh ? tanh_backward(h, yt) : relu_backward(h, yt));
      h.copy_(mm(gig, wh));
    }
  }
  // Inputs: x, h0, c0, w_ih, w_hh, b_ih, b_hh.
  TensorList grads(7);
  if (next[0]) grads[0] = mm(gi, wi);
  if (next[1]) grads[1] = gh;
  if (next[2]) grads[2] = gc;
  if (next[3]) grads[3] = mm(gi.t(), xd);
  if (next[4]) grads[4] = mm(ghg.t(), hp);
  if (next[5]) grads[5] = gi.sum({0});
  if (next[6]) grads[6] = ghg.sum({0});
  return grads;
}

}  // namespace wick
