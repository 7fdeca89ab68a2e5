// Lab 06: fill in each gap; my_gemm.h says what each function computes.
#include "my_gemm.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "lab.h"

namespace lab06 {

void gemm_naive(int m, int n, int k, const float* A, const float* B, float* C) {
  // BEGIN SOLUTION: gemm_naive: C[i][j] = sum over p of A[i][p] * B[p][j]
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < n; ++j) {
      float sum = 0;
      for (int p = 0; p < k; ++p) sum += A[int64_t(i) * k + p] * B[int64_t(p) * n + j];
      C[int64_t(i) * n + j] = sum;
    }
  }
  // END SOLUTION
}

void gemm_blocked(int m, int n, int k, const float* A, const float* B, float* C) {
  // BEGIN SOLUTION: gemm_blocked: zero C; tiles of MC x KC x NC; i-k-j order inside a tile
  std::fill(C, C + int64_t(m) * n, 0.0f);
  for (int jc = 0; jc < n; jc += NC) {
    int je = std::min(n, jc + NC);
    for (int pc = 0; pc < k; pc += KC) {
      int pe = std::min(k, pc + KC);
      for (int ic = 0; ic < m; ic += MC) {
        int ie = std::min(m, ic + MC);
        for (int i = ic; i < ie; ++i) {
          float* c = C + int64_t(i) * n;
          for (int p = pc; p < pe; ++p) {
            float a = A[int64_t(i) * k + p];
            const float* b = B + int64_t(p) * n;
            for (int j = jc; j < je; ++j) c[j] += a * b[j];
          }
        }
      }
    }
  }
  // END SOLUTION
}

void pack_a(int mc, int kc, const float* A, int lda, float* packed) {
  // BEGIN SOLUTION: pack_a: for each MR-row panel, for each kk, MR values (0 past row mc)
  for (int p = 0; p < mc; p += MR) {
    for (int kk = 0; kk < kc; ++kk) {
      for (int r = 0; r < MR; ++r) *packed++ = p + r < mc ? A[int64_t(p + r) * lda + kk] : 0.0f;
    }
  }
  // END SOLUTION
}

void pack_b(int kc, int nc, const float* B, int ldb, float* packed) {
  // BEGIN SOLUTION: pack_b: for each NR-column panel, for each kk, NR values (0 past column nc)
  for (int p = 0; p < nc; p += NR) {
    for (int kk = 0; kk < kc; ++kk) {
      for (int c = 0; c < NR; ++c) *packed++ = p + c < nc ? B[int64_t(kk) * ldb + p + c] : 0.0f;
    }
  }
  // END SOLUTION
}

void kernel_scalar(int kc, const float* a, const float* b, float* tile) {
  std::fill(tile, tile + MR * NR, 0.0f);
  for (int kk = 0; kk < kc; ++kk)
    for (int r = 0; r < MR; ++r)
      for (int c = 0; c < NR; ++c) tile[r * NR + c] += a[kk * MR + r] * b[kk * NR + c];
}

void kernel_micro(int kc, const float* a, const float* b, float* tile) {
  // BEGIN SOLUTION: kernel_micro: a local float acc[MR][NR] the compiler keeps in registers
  float acc[MR][NR] = {};
  for (int kk = 0; kk < kc; ++kk) {
    const float* bk = b + kk * NR;
    const float* ak = a + kk * MR;
#pragma GCC unroll 6
    for (int r = 0; r < MR; ++r) {
      float ar = ak[r];
#pragma GCC unroll 32
      for (int c = 0; c < NR; ++c) acc[r][c] += ar * bk[c];
    }
  }
  std::memcpy(tile, acc, sizeof acc);
  // END SOLUTION
}

void gemm_packed(int m, int n, int k, const float* A, const float* B, float* C, bool use_micro) {
  std::vector<float> pa(size_t(MC + MR) * KC), pb(size_t(NC + NR) * KC);
  alignas(64) float tile[MR * NR];
  auto kernel = use_micro ? kernel_micro : kernel_scalar;
  // BEGIN SOLUTION: gemm_packed: loops jc (NC), pc (KC): pack_b, ic (MC): pack_a, jr, ir: kernel
  std::fill(C, C + int64_t(m) * n, 0.0f);
  for (int jc = 0; jc < n; jc += NC) {
    int nc = std::min(NC, n - jc);
    for (int pc = 0; pc < k; pc += KC) {
      int kc = std::min(KC, k - pc);
      pack_b(kc, nc, B + int64_t(pc) * n + jc, n, pb.data());
      for (int ic = 0; ic < m; ic += MC) {
        int mc = std::min(MC, m - ic);
        pack_a(mc, kc, A + int64_t(ic) * k + pc, k, pa.data());
        for (int jr = 0; jr < nc; jr += NR) {
          for (int ir = 0; ir < mc; ir += MR) {
            kernel(kc, pa.data() + ir * kc, pb.data() + jr * kc, tile);
            int rows = std::min(MR, mc - ir), cols = std::min(NR, nc - jr);
            for (int r = 0; r < rows; ++r) {
              float* c = C + int64_t(ic + ir + r) * n + jc + jr;
              for (int j = 0; j < cols; ++j) c[j] += tile[r * NR + j];
            }
          }
        }
      }
    }
  }
  // END SOLUTION
}

}  // namespace lab06
