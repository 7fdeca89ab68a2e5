// Lab 06: fill in each gap; my_gemm.h says what each function computes.
#include "my_gemm.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "lab.h"

namespace lab06 {

void gemm_naive(int m, int n, int k, const float* A, const float* B, float* C) {
  // TODO(06): gemm_naive: C[i][j] = sum over p of A[i][p] * B[p][j]
  throw lab::NotImplemented("gemm_naive: C[i][j] = sum over p of A[i][p] * B[p][j]");
}

void gemm_blocked(int m, int n, int k, const float* A, const float* B, float* C) {
  // TODO(06): gemm_blocked: zero C; tiles of MC x KC x NC; i-k-j order inside a tile
  throw lab::NotImplemented(
      "gemm_blocked: zero C; tiles of MC x KC x NC; i-k-j order inside a tile");
}

void pack_a(int mc, int kc, const float* A, int lda, float* packed) {
  // TODO(06): pack_a: for each MR-row panel, for each kk, MR values (0 past row mc)
  throw lab::NotImplemented(
      "pack_a: for each MR-row panel, for each kk, MR values (0 past row mc)");
}

void pack_b(int kc, int nc, const float* B, int ldb, float* packed) {
  // TODO(06): pack_b: for each NR-column panel, for each kk, NR values (0 past column nc)
  throw lab::NotImplemented(
      "pack_b: for each NR-column panel, for each kk, NR values (0 past column nc)");
}

void kernel_scalar(int kc, const float* a, const float* b, float* tile) {
  std::fill(tile, tile + MR * NR, 0.0f);
  for (int kk = 0; kk < kc; ++kk)
    for (int r = 0; r < MR; ++r)
      for (int c = 0; c < NR; ++c) tile[r * NR + c] += a[kk * MR + r] * b[kk * NR + c];
}

void kernel_micro(int kc, const float* a, const float* b, float* tile) {
  // TODO(06): kernel_micro: a local float acc[MR][NR] the compiler keeps in registers
  throw lab::NotImplemented(
      "kernel_micro: a local float acc[MR][NR] the compiler keeps in registers");
}

void gemm_packed(int m, int n, int k, const float* A, const float* B, float* C, bool use_micro) {
  std::vector<float> pa(size_t(MC + MR) * KC), pb(size_t(NC + NR) * KC);
  alignas(64) float tile[MR * NR];
  auto kernel = use_micro ? kernel_micro : kernel_scalar;
  // TODO(06): gemm_packed: loops jc (NC), pc (KC): pack_b, ic (MC): pack_a, jr, ir: kernel
  throw lab::NotImplemented(
      "gemm_packed: loops jc (NC), pc (KC): pack_b, ic (MC): pack_a, jr, ir: kernel");
}

}  // namespace lab06
