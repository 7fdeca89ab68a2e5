// CPU kernels for the fused LSTM and GRU steps (core/kernels.h): one pass over the batch computes
// every gate, the new states and the workspace the backward needs, instead of the dozen
// elementwise ops (and temporaries) a step takes when written with tensor ops. The math is
// core/ops/rnn_math.h, shared with the CUDA kernels.
#include "core/cpu/loops.h"
#include "core/cpu/register.h"
#include "core/ops/rnn_math.h"

namespace wick::cpu {

namespace {

// Rows per thread chunk: a row is H units of several transcendental functions each.
int64_t row_grain(int64_t H) { return std::max<int64_t>(1, 4096 / std::max<int64_t>(H, 1)); }

void lstm_cell_kernel(const Tensor& igates, const Tensor& hgates, const Tensor& cx, Tensor& hy,
                      Tensor& cy, Tensor& workspace) {
  const int64_t B = cx.size(0), H = cx.size(1);
  visit_floating("lstm_cell", cx.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    const T *ig = igates.data<T>(), *hg = hgates.data<T>(), *c0 = cx.data<T>();
    T *h1 = hy.data<T>(), *c1 = cy.data<T>(), *ws = workspace.data<T>();
    parallel_for(B, row_grain(H), [&](int64_t begin, int64_t end) {
      for (int64_t b = begin; b < end; ++b) {
        for (int64_t j = 0; j < H; ++j)
          rnn_math::lstm_forward<T, C>(ig, hg, c0, h1, c1, ws, b, j, H);
      }
    });
  });
}

void lstm_cell_backward_kernel(const Tensor& grad_hy, const Tensor& grad_cy,
                               const Tensor& workspace, const Tensor& cx, const Tensor& cy,
                               Tensor& grad_gates, Tensor& grad_cx) {
  const int64_t B = cx.size(0), H = cx.size(1);
  visit_floating("lstm_cell_backward", cx.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    const T *ghy = grad_hy.data<T>(), *gcy = grad_cy.data<T>(), *ws = workspace.data<T>();
    const T *c0 = cx.data<T>(), *c1 = cy.data<T>();
    T *gg = grad_gates.data<T>(), *gc0 = grad_cx.data<T>();
    parallel_for(B, row_grain(H), [&](int64_t begin, int64_t end) {
      for (int64_t b = begin; b < end; ++b) {
        for (int64_t j = 0; j < H; ++j) {
          rnn_math::lstm_backward<T, C>(ghy, gcy, ws, c0, c1, gg, gc0, b, j, H);
        }
      }
    });
  });
}

void gru_cell_kernel(const Tensor& igates, const Tensor& hgates, const Tensor& hx, Tensor& hy,
                     Tensor& workspace) {
  const int64_t B = hx.size(0), H = hx.size(1);
  visit_floating("gru_cell", hx.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    const T *ig = igates.data<T>(), *hg = hgates.data<T>(), *h0 = hx.data<T>();
    T *h1 = hy.data<T>(), *ws = workspace.data<T>();
    parallel_for(B, row_grain(H), [&](int64_t begin, int64_t end) {
      for (int64_t b = begin; b < end; ++b) {
        for (int64_t j = 0; j < H; ++j) rnn_math::gru_forward<T, C>(ig, hg, h0, h1, ws, b, j, H);
      }
    });
  });
}

void gru_cell_backward_kernel(const Tensor& grad_hy, const Tensor& workspace, const Tensor& hx,
                              Tensor& grad_igates, Tensor& grad_hgates, Tensor& grad_hx) {
  const int64_t B = hx.size(0), H = hx.size(1);
  visit_floating("gru_cell_backward", hx.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    const T *ghy = grad_hy.data<T>(), *ws = workspace.data<T>(), *h0 = hx.data<T>();
    T *gig = grad_igates.data<T>(), *ghg = grad_hgates.data<T>(), *gh0 = grad_hx.data<T>();
    parallel_for(B, row_grain(H), [&](int64_t begin, int64_t end) {
      for (int64_t b = begin; b < end; ++b) {
        for (int64_t j = 0; j < H; ++j) {
          rnn_math::gru_backward<T, C>(ghy, ws, h0, gig, ghg, gh0, b, j, H);
        }
      }
    });
  });
}

}  // namespace

void register_rnn_kernels(KernelRegistry& r) {
  r.add<LstmCellKernel>(OpKey::lstm_cell, kCPU, lstm_cell_kernel);
  r.add<LstmCellBackwardKernel>(OpKey::lstm_cell_backward, kCPU, lstm_cell_backward_kernel);
  r.add<GruCellKernel>(OpKey::gru_cell, kCPU, gru_cell_kernel);
  r.add<GruCellBackwardKernel>(OpKey::gru_cell_backward, kCPU, gru_cell_backward_kernel);
}

}  // namespace wick::cpu
