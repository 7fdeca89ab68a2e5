// CUDA kernels that read or write through an index tensor: index_select, gather, scatter_add.
//
// Note [index bounds on the GPU]
// The CPU checks every index before it starts. A GPU kernel cannot throw, and PyTorch's device
// assert poisons the whole CUDA context, so here each kernel skips an out-of-range index and
// records the first one it saw in a small device buffer; the launcher copies that buffer back
// (one stream synchronization) and throws the same std::out_of_range the CPU would. Correct
// errors cost one sync per indexing op - the price of "errors are exceptions, never crashes".
//
// scatter_add adds with atomics, so the order of additions into one element varies from run to
// run, as in PyTorch: float results may differ in the last bits between runs.
#include "cuda/allocator.h"
#include "cuda/index_checks.h"
#include "cuda/kernels.h"
#include "cuda/loops.cuh"

namespace wick::cuda {

namespace {

using IndexError = IndexErrorRecord;

__device__ __forceinline__ bool in_range(int64_t i, int64_t size, IndexError* error) {
  if (index_in_range(i, size)) return true;  // Note [index bounds]
  if (atomicCAS(&error->flag, 0, 1) == 0) error->value = i;
  return false;
}

// Checked indices are never negative (Note [index bounds]), so they are used as they are.
__device__ __forceinline__ int64_t wrap(int64_t i, int64_t) { return i; }

// A zeroed error record for one launch; check() throws if a kernel wrote to it.
class IndexErrorBuffer {
 public:
  explicit IndexErrorBuffer(cudaStream_t stream)
      : buffer_(std::make_shared<DeviceBuffer>(sizeof(IndexError))), stream_(stream) {
    WICK_CUDA_CHECK(cudaMemsetAsync(buffer_->data(), 0, sizeof(IndexError), stream_));
  }
  IndexError* get() const { return static_cast<IndexError*>(buffer_->data()); }
  void check(const char* op, int64_t dim, int64_t size) const {
    // Note [index checks in a captured graph]
    if (defer_index_check(stream_, {buffer_, op, dim, size})) return;
    IndexError host{};
    WICK_CUDA_CHECK(
        cudaMemcpyAsync(&host, buffer_->data(), sizeof(host), cudaMemcpyDeviceToHost, stream_));
    WICK_CUDA_CHECK(cudaStreamSynchronize(stream_));
    check_index(host.flag == 0, op, "index ", host.value, " is out of bounds for dimension ", dim,
                " with size ", size);
  }

 private:
  std::shared_ptr<DeviceBuffer> buffer_;  // shared with a capture that defers the check
  cudaStream_t stream_;
};

// in, index and out contiguous: out[o, j, i] = in[o, index[j], i] (rows of `inner` elements).
template <class S>
__global__ void index_select_kernel(const S* in, const int64_t* index, S* out, int64_t count,
                                    int64_t size, int64_t inner, int64_t total, IndexError* error) {
  for (int64_t e = thread_index(); e < total; e += grid_stride()) {
    int64_t i = e % inner, j = (e / inner) % count, o = e / (inner * count);
    int64_t at = index[j];
    if (!in_range(at, size, error)) continue;
    out[e] = in[(o * size + wrap(at, size)) * inner + i];
  }
}

void index_select(const Tensor& in, int64_t dim, const Tensor& index, Tensor& out) {
  int64_t size = in.size(dim), outer = 1, inner = 1, count = index.numel();
  for (int64_t d = 0; d < dim; ++d) outer *= in.size(d);
  for (int64_t d = dim + 1; d < in.dim(); ++d) inner *= in.size(d);
  int64_t total = outer * count * inner;
  if (total == 0) return;
  LaunchContext ctx(out);
  IndexErrorBuffer error(ctx.stream());
  visit_size(in.dtype(), [&](auto tag) {
    using S = typename decltype(tag)::type;
    index_select_kernel<S><<<ctx.blocks_for(total), kThreads, 0, ctx.stream()>>>(
        static_cast<const S*>(in.data_ptr()), index.data<int64_t>(),
        static_cast<S*>(out.data_ptr()), count, size, inner, total, error.get());
  });
  WICK_KERNEL_CHECK();
  error.check("index_select", dim, size);
}

// The shape of `index` and a tensor's strides, to turn a linear position of `index` into an
// element offset with coordinate `dim` replaced (core/cpu/index_kernels.cpp's offset_with).
struct Geometry {
  int n;
  int64_t shape[kMaxDims];
  int64_t strides[kMaxDims];

  __device__ int64_t offset_with(int64_t i, int64_t dim, int64_t at) const {
    int64_t off = 0;
    for (int d = n - 1; d >= 0; --d) {
      int64_t coord = i % shape[d];
      i /= shape[d];
      off += (d == dim ? at : coord) * strides[d];
    }
    return off;
  }
};

Geometry geometry(const Shape& shape, const Strides& strides) {
  Geometry g;
  g.n = static_cast<int>(shape.size());
  for (int d = 0; d < g.n; ++d) g.shape[d] = shape[d], g.strides[d] = strides[d];
  return g;
}

// out[i..] = in[i.. with coordinate dim = index[i..]]; index and out contiguous.
template <class S>
__global__ void gather_kernel(const S* in, const int64_t* index, S* out, Geometry in_geo,
                              int64_t dim, int64_t size, int64_t total, IndexError* error) {
  for (int64_t i = thread_index(); i < total; i += grid_stride()) {
    int64_t at = index[i];
    if (!in_range(at, size, error)) continue;
    out[i] = in[in_geo.offset_with(i, dim, wrap(at, size))];
  }
}

void gather(const Tensor& in, int64_t dim, const Tensor& index, Tensor& out) {
  int64_t size = in.size(dim), total = index.numel();
  if (total == 0) return;
  LaunchContext ctx(out);
  IndexErrorBuffer error(ctx.stream());
  visit_size(in.dtype(), [&](auto tag) {
    using S = typename decltype(tag)::type;
    gather_kernel<S><<<ctx.blocks_for(total), kThreads, 0, ctx.stream()>>>(
        static_cast<const S*>(in.data_ptr()), index.data<int64_t>(),
        static_cast<S*>(out.data_ptr()), geometry(index.shape(), in.strides()), dim, size, total,
        error.get());
  });
  WICK_KERNEL_CHECK();
  error.check("gather", dim, size);
}

// target += value atomically. 32- and 64-bit types have hardware atomics; narrower ones update
// their aligned 32-bit word with compare-and-swap.
template <class T>
__device__ void atomic_add(T* target, T value) {
  using C = compute_t<T>;
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double> ||
                std::is_same_v<T, int32_t>) {
    atomicAdd(target, value);
  } else if constexpr (std::is_same_v<T, int64_t>) {
    // Two's complement: adding as unsigned wraps exactly like signed addition.
    atomicAdd(reinterpret_cast<unsigned long long*>(target),
              static_cast<unsigned long long>(value));
  } else {
    static_assert(sizeof(T) <= 2, "narrow types only");
    auto address = reinterpret_cast<uintptr_t>(target);
    auto* word = reinterpret_cast<unsigned int*>(address & ~uintptr_t{3});
    unsigned shift = static_cast<unsigned>(address & 3) * 8;
    unsigned mask = (sizeof(T) == 1 ? 0xffu : 0xffffu) << shift;
    unsigned old = *word, assumed;
    do {
      assumed = old;
      T current;
      auto bits = static_cast<std::conditional_t<sizeof(T) == 1, uint8_t, uint16_t>>(
          (assumed & mask) >> shift);
      memcpy(&current, &bits, sizeof(T));
      T sum = T(static_cast<C>(C(current) + C(value)));
      decltype(bits) sum_bits;
      memcpy(&sum_bits, &sum, sizeof(T));
      unsigned updated = (assumed & ~mask) | (static_cast<unsigned>(sum_bits) << shift);
      old = atomicCAS(word, assumed, updated);
    } while (old != assumed);
  }
}

template <class T>
__global__ void scatter_add_kernel(T* self, const int64_t* index, const T* src, Geometry self_geo,
                                   Geometry src_geo, int64_t dim, int64_t size, int64_t total,
                                   IndexError* error) {
  for (int64_t i = thread_index(); i < total; i += grid_stride()) {
    int64_t at = index[i];
    if (!in_range(at, size, error)) continue;
    atomic_add(self + self_geo.offset_with(i, dim, wrap(at, size)),
               src[src_geo.offset_with(i, -1, 0)]);
  }
}

void scatter_add(Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  int64_t size = self.size(dim), total = index.numel();
  if (total == 0) return;
  LaunchContext ctx(self);
  IndexErrorBuffer error(ctx.stream());
  visit_dtype(self.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    scatter_add_kernel<T><<<ctx.blocks_for(total), kThreads, 0, ctx.stream()>>>(
        static_cast<T*>(self.data_ptr()), index.data<int64_t>(),
        static_cast<const T*>(src.data_ptr()), geometry(index.shape(), self.strides()),
        geometry(index.shape(), src.strides()), dim, size, total, error.get());
  });
  WICK_KERNEL_CHECK();
  error.check("scatter_add", dim, size);
}

}  // namespace

void register_index_kernels(KernelRegistry& r) {
  r.add<IndexKernel>(OpKey::index_select, kCUDA, index_select);
  r.add<IndexKernel>(OpKey::gather, kCUDA, gather);
  r.add<ScatterAddKernel>(OpKey::scatter_add, kCUDA, scatter_add);
}

}  // namespace wick::cuda
