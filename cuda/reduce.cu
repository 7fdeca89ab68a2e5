// CUDA reductions: sum over any dims, max/min with indices along one dim, softmax and
// log_softmax, and the integer batched matmul (a dot product per output).
//
// Note [GPU reductions]
// The input's dims split into kept dims (one output each) and reduced dims, as on the CPU. A
// block of threads reduces one output: each thread sums a strided share, then the block combines
// the threads' partial results in shared memory. When there are few outputs but much to reduce
// (a full sum), each output is also split across a grid dimension of blocks that write partial
// sums, and a second small kernel adds them in a fixed order, so the result is deterministic
// (no atomics).
#include "core/reduce_dims.h"
#include "cuda/allocator.h"
#include "cuda/kernels.h"
#include "cuda/loops.cuh"

namespace wick::cuda {

namespace {

constexpr int kMaxBlock = 512;

struct Dims {
  int n = 0;
  bool narrow = false;  // set by prepare(): indices below 2**31, 32-bit division
  int64_t shape[kMaxDims];
  int64_t stride[kMaxDims];  // elements
  FastDivider dividers[kMaxDims];
  int64_t numel() const {
    int64_t p = 1;
    for (int i = 0; i < n; ++i) p *= shape[i];
    return p;
  }
  // Note [32-bit index division] in loops.cuh; called on the host once the dims are set.
  void prepare() {
    narrow = numel() <= (int64_t{1} << 31);
    for (int d = 0; narrow && d < n; ++d)
      dividers[d] = FastDivider(static_cast<uint32_t>(shape[d]));
  }
  __host__ __device__ int64_t offset_of(int64_t i) const {
    if (narrow) {
      uint32_t rest = static_cast<uint32_t>(i);
      int64_t off = 0;
      for (int d = n - 1; d >= 0; --d) {
        uint32_t quotient = dividers[d].div(rest);
        off += static_cast<int64_t>(rest - quotient * dividers[d].divisor) * stride[d];
        rest = quotient;
      }
      return off;
    }
    int64_t off = 0;
    for (int d = n - 1; d >= 0; --d) {
      off += (i % shape[d]) * stride[d];
      i /= shape[d];
    }
    return off;
  }
};

// core/reduce_dims.h's split, then the fast dividers.
void split_prepared(const Tensor& in, const DimVec& dims, Dims& kept, Dims& reduced) {
  wick::split_dims(in, dims, kept, reduced);
  kept.prepare();
  reduced.prepare();
}

// Threads per block for reducing `length` elements: a power of two from 32 to kMaxBlock.
int block_for(int64_t length) {
  int threads = 32;
  while (threads < kMaxBlock && threads < length) threads *= 2;
  return threads;
}

// Sums `value` over the block (blockDim.x a power of two); the result is valid in thread 0.
template <class Acc>
__device__ Acc block_sum(Acc value, Acc* shared) {
  shared[threadIdx.x] = value;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) shared[threadIdx.x] += shared[threadIdx.x + s];
    __syncthreads();
  }
  Acc total = shared[0];
  __syncthreads();  // the buffer may be reused right after
  return total;
}

template <class T, class Acc>
__global__ void sum_kernel(const T* in, T* out, Acc* partial, Dims kept, Dims reduced,
                           int64_t length, int64_t chunk) {
  __shared__ Acc shared[kMaxBlock];
  int64_t m = blockIdx.x;
  int64_t begin = blockIdx.y * chunk, end = min(length, begin + chunk);
  const T* base = in + kept.offset_of(m);
  Acc acc = 0;
  for (int64_t r = begin + threadIdx.x; r < end; r += blockDim.x) {
    acc += Acc(compute_t<T>(base[reduced.offset_of(r)]));
  }
  acc = block_sum(acc, shared);
  if (threadIdx.x == 0) {
    if (gridDim.y == 1) {
      out[m] = T(static_cast<compute_t<T>>(acc));
    } else {
      partial[m * gridDim.y + blockIdx.y] = acc;
    }
  }
}

template <class T, class Acc>
__global__ void sum_partials_kernel(const Acc* partial, T* out, int64_t outputs, int splits) {
  int64_t m = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (m >= outputs) return;
  Acc acc = 0;
  for (int s = 0; s < splits; ++s) acc += partial[m * splits + s];
  out[m] = T(static_cast<compute_t<T>>(acc));
}

// Note [column sums]
// Summing over the leading dims of a row-major tensor (a Linear layer's bias gradient: grad
// [batch, features] summed over the batch) gives outputs that are adjacent in memory, each
// reducing a strided column. A block per output would have its threads read one column, each
// load a separate memory transaction. Here a block takes 32 adjacent columns (a warp reads 32
// adjacent elements of one row: one transaction) and kColumnRows rows at a time; the rows'
// partial sums are added in a fixed order, so the result stays deterministic.
constexpr int kColumnRows = 16;

template <class T, class Acc>
__global__ void column_sum_kernel(const T* in, T* out, Dims reduced, int64_t outputs,
                                  int64_t length) {
  __shared__ Acc shared[kColumnRows][33];
  int64_t column = blockIdx.x * int64_t{32} + threadIdx.x;
  Acc acc = 0;
  if (column < outputs) {
    if (reduced.n == 1) {
      for (int64_t r = threadIdx.y; r < length; r += kColumnRows) {
        acc += Acc(compute_t<T>(in[r * reduced.stride[0] + column]));
      }
    } else {
      for (int64_t r = threadIdx.y; r < length; r += kColumnRows) {
        acc += Acc(compute_t<T>(in[reduced.offset_of(r) + column]));
      }
    }
  }
  shared[threadIdx.y][threadIdx.x] = acc;
  __syncthreads();
  if (threadIdx.y == 0 && column < outputs) {
    Acc total = 0;
    for (int y = 0; y < kColumnRows; ++y) total += shared[y][threadIdx.x];
    out[column] = T(static_cast<compute_t<T>>(total));
  }
}

// True when the outputs are one run of adjacent elements (kept: one dim of stride 1) and every
// reduced dim steps over whole rows of them, so column_sum_kernel reads coalesced.
bool is_column_sum(const Dims& kept, const Dims& reduced, int64_t outputs) {
  if (kept.n != 1 || kept.stride[0] != 1 || outputs < 32 || reduced.n == 0) return false;
  for (int d = 0; d < reduced.n; ++d) {
    if (reduced.stride[d] < outputs) return false;
  }
  return true;
}

void sum(const Tensor& in, Tensor& out, const DimVec& dims) {
  Dims kept, reduced;
  split_prepared(in, dims, kept, reduced);
  int64_t outputs = kept.numel(), length = reduced.numel();
  if (outputs == 0) return;
  LaunchContext ctx(out);
  if (is_column_sum(kept, reduced, outputs) && out.is_contiguous()) {  // Note [column sums]
    visit_dtype(in.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using Acc = gpu_acc_t<T>;
      column_sum_kernel<T, Acc>
          <<<static_cast<unsigned>((outputs + 31) / 32), dim3(32, kColumnRows), 0, ctx.stream()>>>(
              static_cast<const T*>(in.data_ptr()), static_cast<T*>(out.data_ptr()), reduced,
              outputs, length);
    });
    WICK_KERNEL_CHECK();
    return;
  }
  int sms = multiprocessor_count(ctx.device());
  // Split each output's range when the outputs alone cannot fill the GPU.
  int64_t splits = 1;
  if (outputs < 2 * sms && length > 16 * kMaxBlock) {
    splits = std::min<int64_t>((4 * sms + outputs - 1) / outputs, length / (8 * kMaxBlock));
    splits = std::max<int64_t>(1, std::min<int64_t>(splits, 65535));
  }
  int64_t chunk = (length + splits - 1) / splits;
  int threads = block_for(chunk);
  visit_dtype(in.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using Acc = gpu_acc_t<T>;
    const T* src = static_cast<const T*>(in.data_ptr());
    T* dst = static_cast<T*>(out.data_ptr());
    std::unique_ptr<DeviceBuffer> partial;
    if (splits > 1) partial = std::make_unique<DeviceBuffer>(outputs * splits * sizeof(Acc));
    Acc* partial_ptr = partial ? static_cast<Acc*>(partial->data()) : nullptr;
    dim3 grid(static_cast<unsigned>(outputs), static_cast<unsigned>(splits));
    sum_kernel<T, Acc>
        <<<grid, threads, 0, ctx.stream()>>>(src, dst, partial_ptr, kept, reduced, length, chunk);
    WICK_KERNEL_CHECK();
    if (splits > 1) {
      sum_partials_kernel<T, Acc><<<(outputs + 255) / 256, 256, 0, ctx.stream()>>>(
          partial_ptr, dst, outputs, static_cast<int>(splits));
      WICK_KERNEL_CHECK();
    }
  });
}

// ---- max / min with indices ----

// The better of two (value, index) candidates: NaN wins (the first NaN), then the larger (or
// smaller) value, then the smaller index - the CPU's sequential scan gives the same answer.
template <bool kMax, class C>
__device__ bool better(C v, int64_t i, C best, int64_t best_i) {
  bool v_nan = d_isnan(v), best_nan = d_isnan(best);
  if (v_nan || best_nan) return v_nan && (!best_nan || i < best_i);
  if (v != best) return kMax ? v > best : v < best;
  return i < best_i;
}

// Note [multi-block max]: a global max or argmax (one output over every element) in one block
// would leave all but one of the GPU's multiprocessors idle. Like sum, few outputs over long
// ranges are split over a grid dimension of blocks; each writes its chunk's best (value, index),
// and a second kernel picks the best of those in chunk order. better() breaks ties by index, so
// the answer is the CPU's whatever the split.
template <class T, bool kMax>
__global__ void arg_reduce_kernel(const T* in, T* values, int64_t* indices,
                                  compute_t<T>* partial_values, int64_t* partial_indices, Dims kept,
                                  int64_t length, int64_t stride, int64_t chunk) {
  using C = compute_t<T>;
  __shared__ C shared_v[kMaxBlock];
  __shared__ int64_t shared_i[kMaxBlock];
  int64_t m = blockIdx.x;
  int64_t begin = blockIdx.y * chunk, end = min(length, begin + chunk);
  const T* base = in + kept.offset_of(m);
  C best = C(base[begin * stride]);
  int64_t best_i = begin;
  for (int64_t i = begin + threadIdx.x; i < end; i += blockDim.x) {
    C v = C(base[i * stride]);
    if (better<kMax>(v, i, best, best_i) || i == begin + threadIdx.x) best = v, best_i = i;
  }
  if (begin + threadIdx.x >= end) best = C(base[begin * stride]), best_i = begin;
  shared_v[threadIdx.x] = best;
  shared_i[threadIdx.x] = best_i;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s && better<kMax>(shared_v[threadIdx.x + s], shared_i[threadIdx.x + s],
                                        shared_v[threadIdx.x], shared_i[threadIdx.x])) {
      shared_v[threadIdx.x] = shared_v[threadIdx.x + s];
      shared_i[threadIdx.x] = shared_i[threadIdx.x + s];
    }
    __syncthreads();
  }
  if (threadIdx.x != 0) return;
  if (gridDim.y == 1) {
    values[m] = T(shared_v[0]);
    indices[m] = shared_i[0];
  } else {
    partial_values[m * gridDim.y + blockIdx.y] = shared_v[0];
    partial_indices[m * gridDim.y + blockIdx.y] = shared_i[0];
  }
}

template <class T, bool kMax>
__global__ void arg_reduce_partials_kernel(const compute_t<T>* partial_values,
                                           const int64_t* partial_indices, T* values,
                                           int64_t* indices, int64_t outputs, int splits) {
  int64_t m = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (m >= outputs) return;
  compute_t<T> best = partial_values[m * splits];
  int64_t best_i = partial_indices[m * splits];
  for (int s = 1; s < splits; ++s) {
    compute_t<T> v = partial_values[m * splits + s];
    int64_t i = partial_indices[m * splits + s];
    if (better<kMax>(v, i, best, best_i)) best = v, best_i = i;
  }
  values[m] = T(best);
  indices[m] = best_i;
}

template <bool kMax>
void arg_reduce(const Tensor& in, Tensor& values, Tensor& indices, int64_t dim) {
  Dims kept;
  for (int64_t d = 0; d < in.dim(); ++d) {
    if (d == dim) continue;
    kept.shape[kept.n] = in.size(d);
    kept.stride[kept.n] = in.stride(d);
    ++kept.n;
  }
  kept.prepare();
  int64_t length = in.dim() == 0 ? 1 : in.size(dim);
  int64_t stride = in.dim() == 0 ? 0 : in.stride(dim);
  int64_t outputs = kept.numel();
  if (outputs == 0 || length == 0) return;
  LaunchContext ctx(values);
  int sms = multiprocessor_count(ctx.device());
  int64_t splits = 1;  // Note [multi-block max]
  if (outputs < 2 * sms && length > 16 * kMaxBlock) {
    splits = std::min<int64_t>((4 * sms + outputs - 1) / outputs, length / (8 * kMaxBlock));
    splits = std::max<int64_t>(1, std::min<int64_t>(splits, 65535));
  }
  int64_t chunk = (length + splits - 1) / splits;
  splits = (length + chunk - 1) / chunk;  // no empty chunk
  visit_dtype(in.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    std::unique_ptr<DeviceBuffer> partial;
    C* partial_values = nullptr;
    int64_t* partial_indices = nullptr;
    if (splits > 1) {
      partial = std::make_unique<DeviceBuffer>(outputs * splits * (sizeof(C) + sizeof(int64_t)));
      partial_indices = static_cast<int64_t*>(partial->data());  // 8-byte aligned first
      partial_values = reinterpret_cast<C*>(partial_indices + outputs * splits);
    }
    dim3 grid(static_cast<unsigned>(outputs), static_cast<unsigned>(splits));
    arg_reduce_kernel<T, kMax><<<grid, block_for(chunk), 0, ctx.stream()>>>(
        static_cast<const T*>(in.data_ptr()), static_cast<T*>(values.data_ptr()),
        indices.data<int64_t>(), partial_values, partial_indices, kept, length, stride, chunk);
    WICK_KERNEL_CHECK();
    if (splits > 1) {
      arg_reduce_partials_kernel<T, kMax><<<(outputs + 255) / 256, 256, 0, ctx.stream()>>>(
          partial_values, partial_indices, static_cast<T*>(values.data_ptr()),
          indices.data<int64_t>(), outputs, static_cast<int>(splits));
      WICK_KERNEL_CHECK();
    }
  });
}

// ---- softmax ----

// Rows along the last dim (inner == 1): a block per row, three passes (max, sum, write).
template <class T, bool kLog>
__global__ void softmax_rows_kernel(const T* in, T* out, int64_t size) {
  using C = compute_t<T>;
  __shared__ C shared[kMaxBlock];
  const T* x = in + blockIdx.x * size;
  T* y = out + blockIdx.x * size;
  C max = C(x[0]);
  for (int64_t i = threadIdx.x; i < size; i += blockDim.x) max = fmax(max, C(x[i]));
  shared[threadIdx.x] = max;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) shared[threadIdx.x] = fmax(shared[threadIdx.x], shared[threadIdx.x + s]);
    __syncthreads();
  }
  max = shared[0];
  __syncthreads();
  C sum = 0;
  for (int64_t i = threadIdx.x; i < size; i += blockDim.x) sum += d_exp(C(x[i]) - max);
  sum = block_sum(sum, shared);
  C log_sum = d_log(sum), scale = C(1) / sum;
  for (int64_t i = threadIdx.x; i < size; i += blockDim.x) {
    y[i] = kLog ? T(C(x[i]) - max - log_sum) : T(d_exp(C(x[i]) - max) * scale);
  }
}

// Softmax over a middle dim: a thread per (outer, inner) column; neighbouring threads read
// neighbouring memory.
template <class T, bool kLog>
__global__ void softmax_columns_kernel(const T* in, T* out, int64_t outer, int64_t size,
                                       int64_t inner) {
  using C = compute_t<T>;
  for (int64_t r = thread_index(); r < outer * inner; r += grid_stride()) {
    const T* x = in + (r / inner) * size * inner + r % inner;
    T* y = out + (r / inner) * size * inner + r % inner;
    C max = C(x[0]);
    for (int64_t i = 1; i < size; ++i) max = fmax(max, C(x[i * inner]));
    C sum = 0;
    for (int64_t i = 0; i < size; ++i) sum += d_exp(C(x[i * inner]) - max);
    C log_sum = d_log(sum), scale = C(1) / sum;
    for (int64_t i = 0; i < size; ++i) {
      C v = C(x[i * inner]);
      y[i * inner] = kLog ? T(v - max - log_sum) : T(d_exp(v - max) * scale);
    }
  }
}

template <bool kLog>
void softmax(const Tensor& in, Tensor& out, int64_t dim) {
  int64_t size = in.dim() == 0 ? 1 : in.size(dim), outer = 1, inner = 1;
  for (int64_t d = 0; d < dim; ++d) outer *= in.size(d);
  for (int64_t d = dim + 1; d < in.dim(); ++d) inner *= in.size(d);
  if (outer * inner == 0 || size == 0) return;
  if (cudnn_softmax(in, out, dim, kLog)) return;  // Note [cuDNN or hand-written]
  LaunchContext ctx(out);
  visit_floating(kLog ? "log_softmax" : "softmax", in.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = static_cast<const T*>(in.data_ptr());
    T* y = static_cast<T*>(out.data_ptr());
    if (inner == 1) {
      softmax_rows_kernel<T, kLog>
          <<<static_cast<unsigned>(outer), block_for(size), 0, ctx.stream()>>>(x, y, size);
    } else {
      softmax_columns_kernel<T, kLog>
          <<<ctx.blocks_for(outer * inner), kThreads, 0, ctx.stream()>>>(x, y, outer, size, inner);
    }
  });
  WICK_KERNEL_CHECK();
}

// ---- integer bmm ----

template <class T>
__global__ void integer_bmm_kernel(const T* a, const T* b, T* out, int64_t batches, int64_t m,
                                   int64_t k, int64_t n, int64_t sa0, int64_t sa1, int64_t sa2,
                                   int64_t sb0, int64_t sb1, int64_t sb2) {
  int64_t total = batches * m * n;
  for (int64_t o = thread_index(); o < total; o += grid_stride()) {
    int64_t i = o / (m * n), r = (o / n) % m, c = o % n;
    int64_t acc = 0;
    for (int64_t p = 0; p < k; ++p) {
      acc += int64_t(a[i * sa0 + r * sa1 + p * sa2]) * int64_t(b[i * sb0 + p * sb1 + c * sb2]);
    }
    out[o] = static_cast<T>(acc);
  }
}

}  // namespace

void launch_integer_bmm(const Tensor& a, const Tensor& b, Tensor& out) {
  int64_t batches = a.size(0), m = a.size(1), k = a.size(2), n = b.size(2);
  if (batches * m * n == 0) return;
  LaunchContext ctx(out);
  auto run = [&](auto tag) {
    using T = typename decltype(tag)::type;
    integer_bmm_kernel<T><<<ctx.blocks_for(batches * m * n), kThreads, 0, ctx.stream()>>>(
        static_cast<const T*>(a.data_ptr()), static_cast<const T*>(b.data_ptr()),
        static_cast<T*>(out.data_ptr()), batches, m, k, n, a.stride(0), a.stride(1), a.stride(2),
        b.stride(0), b.stride(1), b.stride(2));
  };
  switch (a.dtype()) {
    case kInt64:
      run(TypeTag<int64_t>{});
      break;
    case kInt32:
      run(TypeTag<int32_t>{});
      break;
    case kUInt8:
      run(TypeTag<uint8_t>{});
      break;
    case kInt8:
      run(TypeTag<int8_t>{});
      break;
    default:
      throw TypeError(error_message("matmul", "no CUDA kernel for ", a.dtype()));
  }
  WICK_KERNEL_CHECK();
}

void register_reduce_kernels(KernelRegistry& r) {
  r.add<ReduceKernel>(OpKey::sum, kCUDA, sum);
  r.add<ArgReduceKernel>(OpKey::max_dim, kCUDA, arg_reduce<true>);
  r.add<ArgReduceKernel>(OpKey::min_dim, kCUDA, arg_reduce<false>);
  r.add<SoftmaxKernel>(OpKey::softmax, kCUDA, softmax<false>);
  r.add<SoftmaxKernel>(OpKey::log_softmax, kCUDA, softmax<true>);
}

}  // namespace wick::cuda
