// CUDA kernels for the fused LSTM and GRU steps (core/kernels.h): one thread per (row, unit)
// pair, the gate math of core/ops/rnn_math.h shared with the CPU kernels. The tensors are
// contiguous (the front functions make them so), so indexing is plain row * width + unit.
#include "core/ops/rnn_math.h"
#include "cuda/kernels.h"
#include "cuda/loops.cuh"

namespace wick::cuda {

namespace {

template <class T>
__global__ void lstm_forward_kernel(int64_t n, int64_t H, const T* ig, const T* hg, const T* cx,
                                    T* hy, T* cy, T* ws) {
  for (int64_t i = thread_index(); i < n; i += grid_stride()) {
    rnn_math::lstm_forward<T, compute_t<T>>(ig, hg, cx, hy, cy, ws, i / H, i % H, H);
  }
}

template <class T>
__global__ void lstm_backward_kernel(int64_t n, int64_t H, const T* ghy, const T* gcy, const T* ws,
                                     const T* cx, const T* cy, T* gg, T* gcx) {
  for (int64_t i = thread_index(); i < n; i += grid_stride()) {
    rnn_math::lstm_backward<T, compute_t<T>>(ghy, gcy, ws, cx, cy, gg, gcx, i / H, i % H, H);
  }
}

template <class T>
__global__ void gru_forward_kernel(int64_t n, int64_t H, const T* ig, const T* hg, const T* hx,
                                   T* hy, T* ws) {
  for (int64_t i = thread_index(); i < n; i += grid_stride()) {
    rnn_math::gru_forward<T, compute_t<T>>(ig, hg, hx, hy, ws, i / H, i % H, H);
  }
}

template <class T>
__global__ void gru_backward_kernel(int64_t n, int64_t H, const T* ghy, const T* ws, const T* hx,
                                    T* gig, T* ghg, T* ghx) {
  for (int64_t i = thread_index(); i < n; i += grid_stride()) {
    rnn_math::gru_backward<T, compute_t<T>>(ghy, ws, hx, gig, ghg, ghx, i / H, i % H, H);
  }
}

void lstm_cell(const Tensor& igates, const Tensor& hgates, const Tensor& cx, Tensor& hy, Tensor& cy,
               Tensor& workspace) {
  const int64_t n = cx.numel(), H = cx.size(1);
  if (n == 0) return;
  LaunchContext ctx(hy);
  visit_floating("lstm_cell", cx.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    lstm_forward_kernel<T><<<ctx.blocks_for(n, kThreads), kThreads, 0, ctx.stream()>>>(
        n, H, igates.data<T>(), hgates.data<T>(), cx.data<T>(), hy.data<T>(), cy.data<T>(),
        workspace.data<T>());
  });
  WICK_KERNEL_CHECK();
}

void lstm_cell_backward(const Tensor& grad_hy, const Tensor& grad_cy, const Tensor& workspace,
                        const Tensor& cx, const Tensor& cy, Tensor& grad_gates, Tensor& grad_cx) {
  const int64_t n = cx.numel(), H = cx.size(1);
  if (n == 0) return;
  LaunchContext ctx(grad_cx);
  visit_floating("lstm_cell_backward", cx.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    lstm_backward_kernel<T><<<ctx.blocks_for(n, kThreads), kThreads, 0, ctx.stream()>>>(
        n, H, grad_hy.data<T>(), grad_cy.data<T>(), workspace.data<T>(), cx.data<T>(), cy.data<T>(),
        grad_gates.data<T>(), grad_cx.data<T>());
  });
  WICK_KERNEL_CHECK();
}

void gru_cell(const Tensor& igates, const Tensor& hgates, const Tensor& hx, Tensor& hy,
              Tensor& workspace) {
  const int64_t n = hx.numel(), H = hx.size(1);
  if (n == 0) return;
  LaunchContext ctx(hy);
  visit_floating("gru_cell", hx.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    gru_forward_kernel<T><<<ctx.blocks_for(n, kThreads), kThreads, 0, ctx.stream()>>>(
        n, H, igates.data<T>(), hgates.data<T>(), hx.data<T>(), hy.data<T>(), workspace.data<T>());
  });
  WICK_KERNEL_CHECK();
}

void gru_cell_backward(const Tensor& grad_hy, const Tensor& workspace, const Tensor& hx,
                       Tensor& grad_igates, Tensor& grad_hgates, Tensor& grad_hx) {
  const int64_t n = hx.numel(), H = hx.size(1);
  if (n == 0) return;
  LaunchContext ctx(grad_hx);
  visit_floating("gru_cell_backward", hx.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    gru_backward_kernel<T><<<ctx.blocks_for(n, kThreads), kThreads, 0, ctx.stream()>>>(
        n, H, grad_hy.data<T>(), workspace.data<T>(), hx.data<T>(), grad_igates.data<T>(),
        grad_hgates.data<T>(), grad_hx.data<T>());
  });
  WICK_KERNEL_CHECK();
}

}  // namespace

void register_rnn_kernels(KernelRegistry& r) {
  r.add<LstmCellKernel>(OpKey::lstm_cell, kCUDA, lstm_cell);
  r.add<LstmCellBackwardKernel>(OpKey::lstm_cell_backward, kCUDA, lstm_cell_backward);
  r.add<GruCellKernel>(OpKey::gru_cell, kCUDA, gru_cell);
  r.add<GruCellBackwardKernel>(OpKey::gru_cell_backward, kCUDA, gru_cell_backward);
}

}  // namespace wick::cuda
