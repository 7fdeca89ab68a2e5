// Eigen's GEMM behind the same strided interface as gemm_packed.
#include <Eigen/Core>

#include "core/cpu/gemm.h"

namespace wick::cpu {

namespace {

template <class T>
using RowMajor = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using Outer = Eigen::OuterStride<Eigen::Dynamic>;
using General = Eigen::Stride<Eigen::Dynamic, Eigen::Dynamic>;

// A row-major matrix with unit column stride, which Eigen's fast GEMM path needs: a view of the
// operand when it already is one, else a compact copy.
template <class T>
Eigen::Map<const RowMajor<T>, 0, Outer> compact(MatrixRef m, int64_t rows, int64_t cols,
                                                RowMajor<T>& storage) {
  if (m.col_stride == 1) {
    return {static_cast<const T*>(m.data), rows, cols, Outer(m.row_stride)};
  }
  // Eigen's row-major Stride is (outer = row stride, inner = column stride).
  storage = Eigen::Map<const RowMajor<T>, 0, General>(static_cast<const T*>(m.data), rows, cols,
                                                      General(m.row_stride, m.col_stride));
  return {storage.data(), rows, cols, Outer(cols)};
}

}  // namespace

template <class T>
void gemm_eigen(int64_t m, int64_t n, int64_t k, T alpha, MatrixRef a, MatrixRef b, T beta,
                MutableMatrixRef c) {
  RowMajor<T> a_copy, b_copy;
  auto A = compact<T>(a, m, k, a_copy);
  auto B = compact<T>(b, k, n, b_copy);
  Eigen::Map<RowMajor<T>, 0, General> C(static_cast<T*>(c.data), m, n,
                                        General(c.row_stride, c.col_stride));
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
