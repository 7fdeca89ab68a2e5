// Lab 06: single-precision GEMM in four steps, each faster than the last. All matrices are
// row-major and dense: C[m x n] = A[m x k] @ B[k x n], overwriting C.
//
//   1. gemm_naive     three loops, i-j-k: every C element is a dot product (B read by column).
//   2. gemm_blocked   i-k-j loop order (unit stride in B and C) over cache-sized tiles.
//   3. gemm_packed    BLIS's five loops around a micro-kernel: B's kc x nc block and A's mc x kc
//                     block are copied ("packed") into the order the kernel reads them.
//   4. the same with kernel_micro, which keeps an MR x NR tile of C in vector registers.
#pragma once

#include <cstdint>

namespace lab06 {

// The register tile: MR rows of C by NR columns (two vector registers per row).
#ifdef __AVX512F__
constexpr int NR = 32;
#else
constexpr int NR = 16;
#endif
constexpr int MR = 6;
// Cache blocking (BLIS's names): a kc x nc block of B stays in L3/L2, an mc x kc block of A in L2.
constexpr int KC = 256, MC = 72, NC = 1024;

void gemm_naive(int m, int n, int k, const float* A, const float* B, float* C);
void gemm_blocked(int m, int n, int k, const float* A, const float* B, float* C);

// Packs rows [0, mc) x columns [0, kc) of A (row stride lda) into panels of MR rows: panel p
// holds, for each kk in [0, kc), the MR values A[p*MR + r][kk], r = 0..MR-1; rows past mc are 0.
void pack_a(int mc, int kc, const float* A, int lda, float* packed);
// Packs rows [0, kc) x columns [0, nc) of B (row stride ldb) into panels of NR columns: panel p
// holds, for each kk, the NR values B[kk][p*NR + c], c = 0..NR-1; columns past nc are 0.
void pack_b(int kc, int nc, const float* B, int ldb, float* packed);

// tile[MR x NR] = sum over kk < kc of a[kk*MR + r] * b[kk*NR + c] (one packed panel of each).
void kernel_scalar(int kc, const float* a, const float* b, float* tile);  // given
void kernel_micro(int kc, const float* a, const float* b, float* tile);

// The five loops; use_micro selects kernel_micro instead of kernel_scalar.
void gemm_packed(int m, int n, int k, const float* A, const float* B, float* C, bool use_micro);

}  // namespace lab06
