// The gate math of one LSTM or GRU step for one (row, unit) pair, written once for both devices:
// the CPU kernels (core/cpu/rnn_kernels.cpp) and the CUDA kernels (cuda/rnn_kernels.cu) call these
// over their own loops, so the two cannot drift apart. Everything is computed in the compute type
// C (float for half and bfloat16) and goes through the wick::math overloads.
//
// Layouts (rows of the batch are contiguous, H units each):
//   LSTM  igates, hgates, grad_gates: [i | f | g | o] (4H per row), PyTorch's gate order
//         workspace: the activated gates, same layout
//   GRU   igates, hgates, grad_igates, grad_hgates: [r | z | n] (3H per row)
//         workspace: [r | z | n | hn] (4H per row), hn = the hidden projection of the n gate,
//         which the backward needs because n = tanh(in + r * hn)
#pragma once

#include <cstdint>

#include "core/ops/scalar_math.h"

namespace wick::rnn_math {

template <class C>
WICK_HOST_DEVICE inline C sigmoid(C x) {
  return C(1) / (C(1) + math::exp(-x));
}

// One unit j of row b: reads the gates' pre-activations, writes h', c' and the workspace.
template <class T, class C>
WICK_HOST_DEVICE inline void lstm_forward(const T* ig, const T* hg, const T* cx, T* hy, T* cy,
                                          T* ws, int64_t b, int64_t j, int64_t H) {
  const int64_t g4 = b * 4 * H, h1 = b * H + j;
  C i = sigmoid(C(ig[g4 + j]) + C(hg[g4 + j]));
  C f = sigmoid(C(ig[g4 + H + j]) + C(hg[g4 + H + j]));
  C g = math::tanh(C(ig[g4 + 2 * H + j]) + C(hg[g4 + 2 * H + j]));
  C o = sigmoid(C(ig[g4 + 3 * H + j]) + C(hg[g4 + 3 * H + j]));
  C c = f * C(cx[h1]) + i * g;
  cy[h1] = T(c);
  hy[h1] = T(o * math::tanh(c));
  ws[g4 + j] = T(i);
  ws[g4 + H + j] = T(f);
  ws[g4 + 2 * H + j] = T(g);
  ws[g4 + 3 * H + j] = T(o);
}

// The gradient of the pre-activation gates and of c from those of h' and c'.
template <class T, class C>
WICK_HOST_DEVICE inline void lstm_backward(const T* ghy, const T* gcy, const T* ws, const T* cx,
                                           const T* cy, T* ggates, T* gcx, int64_t b, int64_t j,
                                           int64_t H) {
  const int64_t g4 = b * 4 * H, h1 = b * H + j;
  C i = C(ws[g4 + j]), f = C(ws[g4 + H + j]), g = C(ws[g4 + 2 * H + j]);
  C o = C(ws[g4 + 3 * H + j]);
  C tc = math::tanh(C(cy[h1]));
  C gh = C(ghy[h1]);
  C gc = C(gcy[h1]) + gh * o * (C(1) - tc * tc);
  ggates[g4 + j] = T(gc * g * i * (C(1) - i));
  ggates[g4 + H + j] = T(gc * C(cx[h1]) * f * (C(1) - f));
  ggates[g4 + 2 * H + j] = T(gc * i * (C(1) - g * g));
  ggates[g4 + 3 * H + j] = T(gh * tc * o * (C(1) - o));
  gcx[h1] = T(gc * f);
}

template <class T, class C>
WICK_HOST_DEVICE inline void gru_forward(const T* ig, const T* hg, const T* hx, T* hy, T* ws,
                                         int64_t b, int64_t j, int64_t H) {
  const int64_t g3 = b * 3 * H, g4 = b * 4 * H, h1 = b * H + j;
  C r = sigmoid(C(ig[g3 + j]) + C(hg[g3 + j]));
  C z = sigmoid(C(ig[g3 + H + j]) + C(hg[g3 + H + j]));
  C hn = C(hg[g3 + 2 * H + j]);
  C n = math::tanh(C(ig[g3 + 2 * H + j]) + r * hn);
  hy[h1] = T((C(1) - z) * n + z * C(hx[h1]));
  ws[g4 + j] = T(r);
  ws[g4 + H + j] = T(z);
  ws[g4 + 2 * H + j] = T(n);
  ws[g4 + 3 * H + j] = T(hn);
}

// The gradients of both projections and of h from that of h'. The r and z gates add their two
// projections, so their gradients are equal; n's differ by the factor r on the hidden side.
template <class T, class C>
WICK_HOST_DEVICE inline void gru_backward(const T* ghy, const T* ws, const T* hx, T* gig, T* ghg,
                                          T* ghx, int64_t b, int64_t j, int64_t H) {
  const int64_t g3 = b * 3 * H, g4 = b * 4 * H, h1 = b * H + j;
  C r = C(ws[g4 + j]), z = C(ws[g4 + H + j]), n = C(ws[g4 + 2 * H + j]);
  C hn = C(ws[g4 + 3 * H + j]);
  C gh = C(ghy[h1]);
  C gn = gh * (C(1) - z) * (C(1) - n * n);
  C gz = gh * (C(hx[h1]) - n) * z * (C(1) - z);
  C gr = gn * hn * r * (C(1) - r);
  gig[g3 + j] = T(gr);
  ghg[g3 + j] = T(gr);
  gig[g3 + H + j] = T(gz);
  ghg[g3 + H + j] = T(gz);
  gig[g3 + 2 * H + j] = T(gn);
  ghg[g3 + 2 * H + j] = T(gn * r);
  ghx[h1] = T(gh * z);
}

}  // namespace wick::rnn_math
