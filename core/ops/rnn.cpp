#include "core/ops/rnn.h"

#include "autograd/functions/rnn.h"
#include "core/grad_mode.h"
#include "core/ops.h"
#include "core/ops/op_utils.h"

namespace wick {

const char* rnn_mode_name(RnnMode mode) {
  switch (mode) {
    case RnnMode::kTanh:
      return "RNN_TANH";
    case RnnMode::kRelu:
      return "RNN_RELU";
    case RnnMode::kLstm:
      return "LSTM";
    case RnnMode::kGru:
      return "GRU";
  }
  return "?";
}

int64_t rnn_gate_count(RnnMode mode) {
  return mode == RnnMode::kLstm ? 4 : mode == RnnMode::kGru ? 3 : 1;
}

namespace {

// The fused steps take tensors the front function made contiguous, of one floating dtype and
// device, with [B, G*H] gates and [B, H] states.
void check_step(const char* op, const Tensor& igates, const Tensor& hgates, const Tensor& state,
                int64_t gates) {
  detail::check_defined(op, igates);
  detail::check_defined(op, hgates);
  detail::check_defined(op, state);
  check_type(is_floating(state.dtype()), op, "expected a floating-point state; got ",
             state.dtype());
  check_state(igates.dtype() == state.dtype() && hgates.dtype() == state.dtype(), op,
              "expected igates, hgates and the state of one dtype; got ", igates.dtype(), ", ",
              hgates.dtype(), " and ", state.dtype());
  check_state(igates.device() == state.device() && hgates.device() == state.device(), op,
              "expected igates, hgates and the state on one device");
  check_state(state.dim() == 2, op, "expected a 2-d state [batch, hidden]; got shape ",
              state.shape());
  Shape gshape{state.size(0), gates * state.size(1)};
  check_state(igates.shape() == gshape && hgates.shape() == gshape, op, "expected gates of shape ",
              gshape, "; got igates ", igates.shape(), " and hgates ", hgates.shape());
}

}  // namespace

std::pair<Tensor, Tensor> fused_lstm_cell(const Tensor& igates, const Tensor& hgates,
                                          const Tensor& cx) {
  check_step("lstm_cell", igates, hgates, cx, 4);
  Tensor ig = igates.contiguous().detach(), hg = hgates.contiguous().detach();
  Tensor c = cx.contiguous().detach();
  const int64_t B = c.size(0), H = c.size(1);
  // h' and c' are the two halves of one output: autograd nodes have one output (Note
  // [single-output nodes]), and each half is a contiguous view the kernel writes directly.
  Tensor hc = empty({2, B, H}, options_of(c));
  Tensor hy = hc.select(0, 0), cy = hc.select(0, 1);
  Tensor workspace = empty({B, 4 * H}, options_of(c));
  if (hc.numel() > 0) {
    dispatch<LstmCellKernel>(OpKey::lstm_cell, c.device(), ig, hg, c, hy, cy, workspace);
  }
  if (needs_grad(igates, hgates, cx)) {
    auto node = make_node<LstmCellBackward>({&igates, &hgates, &cx});
    // The inputs themselves (not detached copies): a create_graph backward recomputes the
    // gates from them, and its result must reach back through their history.
    node->igates = SavedTensor(igates);
    node->hgates = SavedTensor(hgates);
    node->cx = SavedTensor(cx);
    node->workspace = SavedTensor(workspace);
    node->cy = SavedTensor(cy);
    set_history(hc, node);
  }
  return {hc.select(0, 0), hc.select(0, 1)};
}

Tensor fused_gru_cell(const Tensor& igates, const Tensor& hgates, const Tensor& hx) {
  check_step("gru_cell", igates, hgates, hx, 3);
  Tensor ig = igates.contiguous().detach(), hg = hgates.contiguous().detach();
  Tensor h = hx.contiguous().detach();
  const int64_t B = h.size(0), H = h.size(1);
  Tensor hy = empty({B, H}, options_of(h));
  Tensor workspace = empty({B, 4 * H}, options_of(h));
  if (hy.numel() > 0) {
    dispatch<GruCellKernel>(OpKey::gru_cell, h.device(), ig, hg, h, hy, workspace);
  }
  if (needs_grad(igates, hgates, hx)) {
    auto node = make_node<GruCellBackward>({&igates, &hgates, &hx});
    node->igates = SavedTensor(igates);  // undetached, as in fused_lstm_cell
    node->hgates = SavedTensor(hgates);
    node->hx = SavedTensor(hx);
    node->workspace = SavedTensor(workspace);
    set_history(hy, node);
  }
  return hy;
}

namespace {

// PyTorch's checks of a cell's arguments (check_rnn_cell_forward_input / _hidden), RuntimeError
// with its wording, then the two projections.
void check_cell(const char* op, const Tensor& input, const Tensor& hx, const Tensor& w_ih,
                const Tensor& w_hh, int64_t gates) {
  detail::check_defined(op, input);
  detail::check_defined(op, hx);
  detail::check_defined(op, w_ih);
  detail::check_defined(op, w_hh);
  check_state(w_ih.dim() == 2 && w_hh.dim() == 2 && w_hh.size(0) == gates * w_hh.size(1) &&
                  w_ih.size(0) == w_hh.size(0),
              op, "expected weight_ih [", gates, "*hidden_size, input_size] and weight_hh [", gates,
              "*hidden_size, hidden_size]; got ", w_ih.shape(), " and ", w_hh.shape());
  check_state(input.dim() == 2, op, "expected input to be 2-d [batch, input_size]; got shape ",
              input.shape());
  check_state(input.size(1) == w_ih.size(1), op, "input has inconsistent input_size: got ",
              input.size(1), " expected ", w_ih.size(1));
  check_state(hx.dim() == 2 && hx.size(0) == input.size(0), op, "Input batch size ", input.size(0),
              " doesn't match hidden batch size ", hx.dim() > 0 ? hx.size(0) : 0);
  check_state(hx.size(1) == w_hh.size(1), op, "hidden has inconsistent hidden_size: got ",
              hx.size(1), ", expected ", w_hh.size(1));
}

}  // namespace

std::pair<Tensor, Tensor> lstm_cell(const Tensor& input, const Tensor& hx, const Tensor& cx,
                                    const Tensor& w_ih, const Tensor& w_hh, const Tensor& b_ih,
                                    const Tensor& b_hh) {
  check_cell("lstm_cell", input, hx, w_ih, w_hh, 4);
  detail::check_defined("lstm_cell", cx);
  check_state(cx.shape() == hx.shape(), "lstm_cell", "expected cx of shape ", hx.shape(), "; got ",
              cx.shape());
  return fused_lstm_cell(linear(input, w_ih, b_ih), linear(hx, w_hh, b_hh), cx);
}

Tensor gru_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                const Tensor& b_ih, const Tensor& b_hh) {
  check_cell("gru_cell", input, hx, w_ih, w_hh, 3);
  return fused_gru_cell(linear(input, w_ih, b_ih), linear(hx, w_hh, b_hh), hx);
}

Tensor rnn_tanh_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                     const Tensor& b_ih, const Tensor& b_hh) {
  check_cell("rnn_tanh_cell", input, hx, w_ih, w_hh, 1);
  return tanh(linear(input, w_ih, b_ih) + linear(hx, w_hh, b_hh));
}

Tensor rnn_relu_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                     const Tensor& b_ih, const Tensor& b_hh) {
  check_cell("rnn_relu_cell", input, hx, w_ih, w_hh, 1);
  return relu(linear(input, w_ih, b_ih) + linear(hx, w_hh, b_hh));
}

// Note [recurrent layer]
// A layer is one node, not a graph of per-step ops, as cuDNN does it:
// - forward: ONE GEMM projects the whole sequence (x W_ih^T + b_ih, [N, G*H]); each step then
//   does one GEMM (h W_hh^T) and one fused pointwise kernel on its slice of that projection;
// - backward: each step, in reverse order, one fused backward kernel and one GEMM (the gradient
//   of h); the gradients of x, W_ih, W_hh and the biases are then two big GEMMs and two sums over
//   all steps at once.
// Recording each step as ops would also work, but a step's slice of the projection is a narrow()
// whose backward materialises a gradient the size of the whole projection: T steps would cost
// O(T^2) memory traffic. Packed sequences shrink the batch per step instead of masking, as
// PyTorch does: sequences are sorted longest first, so the active ones are always the first
// batch_sizes[t] rows, finished rows keep their final h (= h_n) untouched in place, and no flops
// are spent on padding.
RnnLayerOutput rnn_layer(RnnMode mode, const Tensor& x, const std::vector<int64_t>& batch_sizes,
                         const Tensor& h0, const Tensor& c0, const Tensor& w_ih, const Tensor& w_hh,
                         const Tensor& b_ih, const Tensor& b_hh, bool reverse) {
  const char* op = rnn_mode_name(mode);
  const bool lstm = mode == RnnMode::kLstm, gru = mode == RnnMode::kGru;
  for (const Tensor* t : {&x, &h0, &w_ih, &w_hh}) detail::check_defined(op, *t);
  check_type(is_floating(x.dtype()), op, "expected a floating-point input; got ", x.dtype());
  for (const Tensor* t : {&h0, &c0, &w_ih, &w_hh, &b_ih, &b_hh}) {
    if (!t->defined()) continue;
    check_state(t->dtype() == x.dtype() && t->device() == x.device(), op,
                "expected the states and weights to have the input's dtype ", x.dtype(),
                " and device ", x.device(), "; got ", t->dtype(), " on ", t->device());
  }
  check_state(!lstm || c0.defined(), op, "the LSTM needs an initial cell state c0");
  check_state(x.dim() == 2 && h0.dim() == 2, op,
              "expected 2-d x [N, input_size] and h0 [B, H]; "
              "got shapes ",
              x.shape(), " and ", h0.shape());
  const int64_t B = h0.size(0), H = h0.size(1), N = x.size(0), G = rnn_gate_count(mode);
  // The kernels index by these sizes, so every shape is checked before any runs.
  check_state(w_ih.shape() == Shape{G * H, x.size(1)} && w_hh.shape() == Shape{G * H, H}, op,
              "expected weight_ih [", G * H, ", ", x.size(1), "] and weight_hh [", G * H, ", ", H,
              "]; got ", w_ih.shape(), " and ", w_hh.shape());
  // The message parts are evaluated before the check, so an undefined (absent) tensor's shape
  // must not be among them: each check is reached only for a tensor that is there.
  for (const Tensor* b : {&b_ih, &b_hh}) {
    if (!b->defined()) continue;
    check_state(b->shape() == Shape{G * H}, op, "expected biases of shape [", G * H, "]; got ",
                b->shape());
  }
  if (lstm) {
    check_state(c0.shape() == h0.shape(), op, "expected c0 of h0's shape ", h0.shape(), "; got ",
                c0.shape());
  }
  std::vector<int64_t> offsets(batch_sizes.size());
  int64_t total = 0;
  for (size_t t = 0; t < batch_sizes.size(); ++t) {
    check_value(batch_sizes[t] > 0 && batch_sizes[t] <= B &&
                    (t == 0 || batch_sizes[t] <= batch_sizes[t - 1]),
                op, "batch_sizes must be positive, non-increasing and at most ", B, "; got ",
                batch_sizes[t], " at step ", t);
    offsets[t] = total;
    total += batch_sizes[t];
  }
  check_state(total == N, op, "batch_sizes add up to ", total, " but the input has ", N, " rows");

  Tensor result;  // [N + B (+ B), H]: the output, h_n, c_n (Note [single-output nodes])
  auto node = needs_grad(x, h0, c0, w_ih, w_hh, b_ih, b_hh)
                  ? make_node<RnnLayerBackward>({&x, &h0, &c0, &w_ih, &w_hh, &b_ih, &b_hh})
                  : nullptr;
  {
    NoGradGuard no_grad;
    Tensor xd = x.detach(), wi = w_ih.detach(), wh = w_hh.detach();
    // The GRU keeps b_hh on the hidden side: its n gate multiplies (h W_hn^T + b_hn) by r. The
    // other cells only ever add the two biases, so they are folded into the big GEMM.
    Tensor bias_i = b_ih.defined() ? b_ih.detach() : Tensor();
    Tensor bias_h = b_hh.defined() ? b_hh.detach() : Tensor();
    if (!gru && bias_h.defined()) bias_i = bias_i.defined() ? bias_i + bias_h : bias_h;
    Tensor proj = linear(xd, wi, bias_i).contiguous();
    Tensor wh_t = wh.t();

    const int64_t states = lstm ? 2 : 1;
    result = empty({N + states * B, H}, options_of(xd));
    Tensor out = result.narrow(0, 0, N), hbuf = result.narrow(0, N, B);
    hbuf.copy_(h0.detach());
    Tensor cbuf = lstm ? result.narrow(0, N + B, B) : Tensor();
    if (lstm) cbuf.copy_(c0.detach());
    Tensor hprev = empty({N, H}, options_of(xd));
    Tensor cprev = lstm ? empty({N, H}, options_of(xd)) : Tensor();
    Tensor cnew = lstm ? empty({N, H}, options_of(xd)) : Tensor();
    Tensor workspace = (lstm || gru) ? empty({N, 4 * H}, options_of(xd)) : Tensor();

    const int64_t T = static_cast<int64_t>(batch_sizes.size());
    for (int64_t s = 0; s < T; ++s) {
      const int64_t t = reverse ? T - 1 - s : s, off = offsets[t], bs = batch_sizes[t];
      Tensor h = hbuf.narrow(0, 0, bs);
      hprev.narrow(0, off, bs).copy_(h);
      Tensor hg = gru ? linear(h, wh, bias_h) : mm(h, wh_t);
      Tensor ig = proj.narrow(0, off, bs), y = out.narrow(0, off, bs);
      if (lstm) {
        Tensor c = cbuf.narrow(0, 0, bs), cp = cprev.narrow(0, off, bs);
        Tensor cn = cnew.narrow(0, off, bs), ws = workspace.narrow(0, off, bs);
        cp.copy_(c);
        dispatch<LstmCellKernel>(OpKey::lstm_cell, xd.device(), ig, hg, cp, y, cn, ws);
        c.copy_(cn);
      } else if (gru) {
        Tensor ws = workspace.narrow(0, off, bs), hp = hprev.narrow(0, off, bs);
        dispatch<GruCellKernel>(OpKey::gru_cell, xd.device(), ig, hg, hp, y, ws);
      } else {
        y.copy_(mode == RnnMode::kTanh ? tanh(ig + hg) : relu(ig + hg));
      }
      h.copy_(y);
    }
    if (node) {
      node->mode = mode;
      node->batch_sizes = batch_sizes;
      node->offsets = offsets;
      node->reverse = reverse;
      node->batch = B;
      node->hidden = H;
      node->x = SavedTensor(xd);
      node->w_ih = SavedTensor(wi);
      node->w_hh = SavedTensor(wh);
      node->hprev = SavedTensor(hprev);
      node->output = SavedTensor(out.contiguous());
      if (lstm || gru) node->workspace = SavedTensor(workspace);
      if (lstm) node->cprev = SavedTensor(cprev), node->cnew = SavedTensor(cnew);
    }
  }
  if (node) set_history(result, node);
  RnnLayerOutput r;
  r.output = result.narrow(0, 0, N);
  r.h_n = result.narrow(0, N, B);
  if (lstm) r.c_n = result.narrow(0, N + B, B);
  return r;
}

}  // namespace wick
