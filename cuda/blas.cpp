// The CUDA bmm kernel: cuBLAS's strided batched GEMM for floating dtypes, a plain kernel for
// integers (cuBLAS has no integer GEMM).
//
// Note [row-major GEMM with cuBLAS]
// cuBLAS is column-major; wick's matrices are row-major. A row-major matrix read as column-major
// is its transpose, so C = A B is computed as C^T = B^T A^T: cuBLAS gets B then A, and writes C^T
// in column-major order, which is C in row-major order. A transposed operand (stride 1 along its
// rows) needs no copy either: it is passed with op T. Only a matrix with no unit stride is copied.
//
// Note [precision of GEMM]
// float32 uses CUBLAS_COMPUTE_32F (exact fp32 FMAs) unless set_allow_tf32(true), which lets
// tensor cores round the inputs to TF32 (10-bit mantissa) for several times the throughput -
// PyTorch's torch.backends.cuda.matmul.allow_tf32. float16 and bfloat16 inputs always accumulate
// in float32 (CUBLAS_COMPUTE_32F), as autocast expects.
#include <cublas_v2.h>

#include <atomic>
#include <climits>
#include <sstream>
#include <vector>

#include "core/error.h"
#include "core/ops.h"
#include "cuda/kernels.h"
#include "cuda/runtime.h"

namespace wick::cuda {

namespace {

std::atomic<bool> g_allow_tf32{false};

void check_cublas(cublasStatus_t status, const char* call, const char* file, int line) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  std::ostringstream os;
  os << "[cublas] " << call << " failed at " << file << ":" << line << ": "
     << cublasGetStatusName(status) << ": " << cublasGetStatusString(status);
  throw std::runtime_error(os.str());
}
#define WICK_CUBLAS_CHECK(call) check_cublas((call), #call, __FILE__, __LINE__)

// One handle per device and thread: a handle carries its stream, and threads use different ones.
cublasHandle_t handle(int device, cudaStream_t stream) {
  thread_local std::vector<cublasHandle_t> handles;
  if (static_cast<int>(handles.size()) <= device) handles.resize(device + 1, nullptr);
  if (handles[device] == nullptr) WICK_CUBLAS_CHECK(cublasCreate(&handles[device]));
  WICK_CUBLAS_CHECK(cublasSetStream(handles[device], stream));
  return handles[device];
}

// One side of the product as cuBLAS sees it (Note [row-major GEMM with cuBLAS]).
struct Operand {
  Tensor tensor;  // keeps a contiguous copy alive when one was needed
  cublasOperation_t op = CUBLAS_OP_N;
  int64_t ld = 0;
  int64_t batch_stride = 0;
};

Operand describe(const Tensor& t) {
  int64_t rows = t.size(1), cols = t.size(2), sr = t.stride(1), sc = t.stride(2);
  Operand o;
  o.tensor = t;
  if ((sc == 1 || cols == 1) && (rows == 1 || sr >= std::max<int64_t>(1, cols))) {
    o.op = CUBLAS_OP_N;  // row-major: its column-major reading is the transpose we want
    o.ld = rows == 1 ? std::max<int64_t>(1, cols) : sr;
  } else if ((sr == 1 || rows == 1) && (cols == 1 || sc >= std::max<int64_t>(1, rows))) {
    o.op = CUBLAS_OP_T;  // column-major already: ask cuBLAS to transpose it
    o.ld = cols == 1 ? std::max<int64_t>(1, rows) : sc;
  } else {
    o.tensor = t.detach().contiguous();
    o.op = CUBLAS_OP_N;
    o.ld = std::max<int64_t>(1, cols);
  }
  o.batch_stride = t.size(0) > 1 ? o.tensor.stride(0) : 0;
  return o;
}

int as_int(const char* what, int64_t v) {
  check_value(v <= INT_MAX, "matmul", what, " = ", v, " is too large for cuBLAS (at most ", INT_MAX,
              ")");
  return static_cast<int>(v);
}

void bmm(const Tensor& a, const Tensor& b, Tensor& out) {
  int64_t batches = a.size(0), m = a.size(1), k = a.size(2), n = b.size(2);
  if (batches * m * n == 0) return;
  if (!is_floating(a.dtype())) return launch_integer_bmm(a, b, out);
  LaunchContext ctx(out);
  if (k == 0) {  // an empty sum: zeros
    WICK_CUDA_CHECK(cudaMemsetAsync(out.data_ptr(), 0, out.nbytes(), ctx.stream()));
    return;
  }
  Operand A = describe(a), B = describe(b);
  cudaDataType type;
  cublasComputeType_t compute;
  float alpha_f = 1.0f, beta_f = 0.0f;
  double alpha_d = 1.0, beta_d = 0.0;
  const void *alpha = &alpha_f, *beta = &beta_f;
  switch (a.dtype()) {
    case kFloat32:
      type = CUDA_R_32F;
      compute = g_allow_tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
      break;
    case kFloat64:
      type = CUDA_R_64F;
      compute = CUBLAS_COMPUTE_64F;
      alpha = &alpha_d, beta = &beta_d;
      break;
    case kFloat16:
      type = CUDA_R_16F;
      compute = CUBLAS_COMPUTE_32F;
      break;
    default:  // kBFloat16
      type = CUDA_R_16BF;
      compute = CUBLAS_COMPUTE_32F;
      break;
  }
  // C^T (n x m) = B^T (n x k) * A^T (k x m), column-major.
  WICK_CUBLAS_CHECK(cublasGemmStridedBatchedEx(
      handle(ctx.device(), ctx.stream()), B.op, A.op, as_int("n", n), as_int("m", m),
      as_int("k", k), alpha, B.tensor.data_ptr(), type, as_int("ldb", B.ld), B.batch_stride,
      A.tensor.data_ptr(), type, as_int("lda", A.ld), A.batch_stride, beta, out.data_ptr(), type,
      as_int("n", n), m * n, as_int("batch", batches), compute, CUBLAS_GEMM_DEFAULT));
}

}  // namespace

void set_allow_tf32(bool allow) { g_allow_tf32 = allow; }
bool allow_tf32() { return g_allow_tf32; }

void register_blas_kernels(KernelRegistry& r) { r.add<BmmKernel>(OpKey::bmm, kCUDA, bmm); }

}  // namespace wick::cuda
