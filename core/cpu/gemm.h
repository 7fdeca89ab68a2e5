// Matrix multiplication on the CPU: C = alpha * A @ B + beta * C.
//
// Every matrix is a pointer plus a row stride and a column stride, in elements, so transposed and
// sliced operands need no copy: A^T is A with its two strides swapped.
//
// Two implementations sit behind this interface:
//   gemm_packed - wick's own float32 GEMM, written the way BLIS and OpenBLAS are (cpu/gemm.cpp
//                 explains it); it is what matmul uses for float32 and the 16-bit types.
//   gemm_eigen  - Eigen's GEMM, used for float64 (and by the benchmark as a second reference).
// Note [why wick has its own sgemm]: Eigen 3.4's float kernel reached 70% of OpenBLAS on this
// project's reference machine (2 AVX-512 cores); the packed kernel reaches 85-100%, and it is
// ~250 lines a student can read, which no BLAS is.
#pragma once

#include <cstdint>
#include <memory>
#include <type_traits>
#include <vector>

#include "core/half.h"
#include "core/memory/host_cache.h"

namespace wick::cpu {

struct MatrixRef {
  const void* data;
  int64_t row_stride;
  int64_t col_stride;
};

struct MutableMatrixRef {
  void* data;
  int64_t row_stride;
  int64_t col_stride;
};

// C[m x n] = alpha * A[m x k] @ B[k x n] + beta * C. With beta == 0, C is not read.
void gemm_packed(int64_t m, int64_t n, int64_t k, float alpha, MatrixRef a, MatrixRef b, float beta,
                 MutableMatrixRef c);

// The same over float16 / bfloat16 inputs (TA, TB) with float32 accumulation, into a C of the
// same 16-bit type or of float32. Instantiated for (Half, Half, Half|float) and
// (BFloat16, BFloat16, BFloat16|float).
template <class TA, class TB, class TC>
void gemm_mixed(int64_t m, int64_t n, int64_t k, float alpha, MatrixRef a, MatrixRef b, float beta,
                MutableMatrixRef c);

class PanelSource;

// A float32 A packed once for many products with different B and C: a convolution multiplies the
// same weight by every image's im2col matrix, and repacking the weight per image cost as much as
// packing the image when both have 64 channels (Note [a weight packed once] in cpu/gemm.cpp).
class PackedA {
 public:
  PackedA(int64_t m, int64_t k, MatrixRef a);
  int64_t rows() const { return m_; }
  int64_t depth() const { return k_; }

 private:
  friend void gemm_prepacked(const PackedA& a, int64_t n, float alpha, MatrixRef b, float beta,
                             MutableMatrixRef c);
  friend void gemm_prepacked(const PackedA& a, int64_t n, float alpha, const PanelSource& b,
                             float beta, MutableMatrixRef c);
  int64_t m_, k_;
  int tile_rows_;  // the micro-tile height the panels were packed for
  // Not a std::vector: its zero-filling of every float before the packing overwrote it cost a
  // fifth of the packing (a 512 x 4608 weight is 9 MB); from the host cache, because an eager
  // convolution packs its weight on every call (Note [host block cache]).
  memory::HostBuffer<float> panels_;
};

// C[m x n] = alpha * A @ B[k x n] + beta * C, A as packed; the same result as gemm_packed.
void gemm_prepacked(const PackedA& a, int64_t n, float alpha, MatrixRef b, float beta,
                    MutableMatrixRef c);

// A B matrix that is never stored whole: the GEMM asks it for one panel at a time, in the
// order the micro-kernel reads it. A convolution's im2col matrix is one (Note [im2col inside
// the packing] in conv_kernels.cpp): writing it out and then packing it copied every value twice.
class PanelSource {
 public:
  virtual ~PanelSource() = default;
  // Writes rows [p0, p0 + kc) and columns [j0, j0 + cols) of B to dst as kc rows of `width`
  // floats, dst[(p - p0) * width + (j - j0)], with columns cols..width-1 set to 0. Called from
  // several threads at once for different panels; must not throw.
  virtual void pack(int64_t p0, int64_t kc, int64_t j0, int64_t cols, int64_t width,
                    float* dst) const = 0;
};

// C[m x n] = alpha * A @ B + beta * C with B given by its panels.
void gemm_prepacked(const PackedA& a, int64_t n, float alpha, const PanelSource& b, float beta,
                    MutableMatrixRef c);

template <class T>
void gemm_eigen(int64_t m, int64_t n, int64_t k, T alpha, MatrixRef a, MatrixRef b, T beta,
                MutableMatrixRef c);

// C = alpha * A @ B + beta * C with A and B of type T and C of type TC: float and the 16-bit
// types through the packed kernel, double through Eigen.
template <class T, class TC = T>
void gemm(int64_t m, int64_t n, int64_t k, double alpha, MatrixRef a, MatrixRef b, double beta,
          MutableMatrixRef c) {
  if constexpr (std::is_same_v<T, double>) {
    gemm_eigen<double>(m, n, k, alpha, a, b, beta, c);
  } else if constexpr (std::is_same_v<T, float>) {
    gemm_packed(m, n, k, float(alpha), a, b, float(beta), c);
  } else {
    gemm_mixed<T, T, TC>(m, n, k, float(alpha), a, b, float(beta), c);
  }
}

}  // namespace wick::cpu
