// The CUDA copy kernel: copies within a GPU, between GPUs, and between host and GPU, with dtype
// conversion and any strides (core/ops/view.cpp runs it whenever either side is on a GPU).
//
// Note [host-device copies]
// A transfer moves contiguous bytes, so a strided or differently typed side is first made
// contiguous where it is cheapest: on the device (launch_copy) for device tensors, on the host for
// host tensors. Host-to-device copies are queued on the device's current stream. From pinned
// memory they wait for the copy before returning, as PyTorch's do, unless the caller asked for a
// non-blocking copy (NonBlockingCopies; Python's non_blocking=True): then they return at once,
// the pinned allocator is told (so the block is not reused before the copy has run), and writing
// the pinned tensor before the stream has caught up races with the copy - the caller's promise.
// From pageable memory CUDA stages them before returning. Device-to-host copies wait for the
// stream, so the host can read the result immediately.
#include "core/ops.h"
#include "cuda/allocator.h"
#include "cuda/kernels.h"
#include "cuda/runtime.h"

namespace wick::cuda {

namespace {

bool plain(const Tensor& src, const Tensor& dst) {
  return src.dtype() == dst.dtype() && src.shape() == dst.shape() && src.is_contiguous() &&
         dst.is_contiguous();
}

Tensor empty_on(const Tensor& like_shape, DType dtype, Device device) {
  return empty(like_shape.shape(), TensorOptions(dtype).with_device(device));
}

void host_to_device(const Tensor& src, Tensor& dst) {
  // The host side contiguous and of its own dtype; the cast and any strides happen on the GPU.
  Tensor host = src.is_contiguous() ? src : src.detach().contiguous();
  Tensor target = dst;
  bool direct = plain(host, dst);
  if (!direct) target = empty_on(host, host.dtype(), dst.device());
  LaunchContext ctx(dst);
  WICK_CUDA_CHECK(cudaMemcpyAsync(target.data_ptr(), host.data_ptr(), host.nbytes(),
                                  cudaMemcpyHostToDevice, ctx.stream()));
  if (!direct) launch_copy(target, dst);
  if (is_pinned(host)) {
    if (NonBlockingCopies::active()) {
      record_pinned_use(host.storage()->data(), ctx.stream());
    } else {
      WICK_CUDA_CHECK(cudaStreamSynchronize(ctx.stream()));
    }
  }
}

void device_to_host(const Tensor& src, Tensor& dst) {
  // The device side in dst's dtype and shape, contiguous; then one transfer.
  Tensor source = src;
  if (!(src.dtype() == dst.dtype() && src.shape() == dst.shape() && src.is_contiguous())) {
    source = empty_on(dst, dst.dtype(), src.device());
    launch_copy(src, source);
  }
  Tensor target = dst.is_contiguous() ? dst : empty_on(dst, dst.dtype(), Device(kCPU));
  LaunchContext ctx(src);
  WICK_CUDA_CHECK(cudaMemcpyAsync(target.data_ptr(), source.data_ptr(), source.nbytes(),
                                  cudaMemcpyDeviceToHost, ctx.stream()));
  WICK_CUDA_CHECK(cudaStreamSynchronize(ctx.stream()));
  if (!target.is_same(dst)) kernel_registry().find<CopyKernel>(OpKey::copy, kCPU)(target, dst);
}

void device_to_device(const Tensor& src, Tensor& dst) {
  if (src.device() == dst.device()) {
    launch_copy(src, dst);
    return;
  }
  // Between GPUs: make the source contiguous in dst's dtype on its own device, wait for that,
  // then a peer copy queued on the destination's stream.
  Tensor source = src;
  if (!(src.dtype() == dst.dtype() && src.shape() == dst.shape() && src.is_contiguous())) {
    source = empty_on(dst, dst.dtype(), src.device());
    launch_copy(src, source);
  }
  {
    LaunchContext src_ctx(src);
    WICK_CUDA_CHECK(cudaStreamSynchronize(src_ctx.stream()));
  }
  Tensor target = dst.is_contiguous() ? dst : empty_on(dst, dst.dtype(), dst.device());
  LaunchContext ctx(dst);
  WICK_CUDA_CHECK(cudaMemcpyPeerAsync(target.data_ptr(), dst.device().index, source.data_ptr(),
                                      src.device().index, source.nbytes(), ctx.stream()));
  if (!target.is_same(dst)) launch_copy(target, dst);
  // The source may be freed once we return; the copy must not read a reused block.
  WICK_CUDA_CHECK(cudaStreamSynchronize(ctx.stream()));
}

void copy(const Tensor& src, Tensor& dst) {
  if (dst.numel() == 0) return;
  bool src_gpu = src.device().is_cuda(), dst_gpu = dst.device().is_cuda();
  if (src_gpu && dst_gpu) return device_to_device(src, dst);
  if (dst_gpu) return host_to_device(src, dst);
  if (src_gpu) return device_to_host(src, dst);
  throw_value_error("copy", "the CUDA copy kernel got two host tensors");
}

thread_local bool t_non_blocking = false;

}  // namespace

NonBlockingCopies::NonBlockingCopies(bool enable) : previous_(t_non_blocking) {
  t_non_blocking = enable;
}
NonBlockingCopies::~NonBlockingCopies() { t_non_blocking = previous_; }
bool NonBlockingCopies::active() { return t_non_blocking; }

void register_copy_kernels(KernelRegistry& r) {
  r.add<CopyKernel>(OpKey::copy, kCUDA, copy);
  register_random_and_fill_kernels(r);
}

}  // namespace wick::cuda
