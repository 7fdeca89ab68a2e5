// Eigen's GEMM behind the same strided interface as gemm_packed.
#include <Eigen/Core>

#include "core/cpu/gemm.h"

namespace wick::cpu {

template <class T>
void gemm_eigen(int64_t m, int64_t n, int64_t k, T alpha, MatrixRef a, MatrixRef b, T beta,
                MutableMatrixRef c) {
  using Matrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  using Stride = Eigen::Stride<Eigen::Dynamic, Eigen::Dynamic>;
  // Eigen's row-major Stride is (outer = row stride, inner = column stride).
  Eigen::Map<const Matrix, 0, Stride> A(static_cast<const T*>(a.data), m, k,
                                        Stride(a.row_stride, a.col_stride));
  Eigen::Map<const Matrix, 0, Stride> B(static_cast<const T*>(b.data), k, n,
                                        Stride(b.row_stride, b.col_stride));
  Eigen::Map<Matrix, 0, Stride> C(static_cast<T*>(c.data), m, n,
                                  Stride(c.row_stride, c.col_stride));
  if (beta == T(0)) {
    C.noalias() = alpha * (A * B);
  } else {
    C *= beta;
    C.noalias() += alpha * (A * B);
  }
}

template void gemm_eigen<float>(int64_t, int64_t, int64_t, float, MatrixRef, MatrixRef, float,
                                MutableMatrixRef);
template void gemm_eigen<double>(int64_t, int64_t, int64_t, double, MatrixRef, MatrixRef, double,
                                 MutableMatrixRef);

}  // namespace wick::cpu
