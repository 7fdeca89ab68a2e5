// Fused CUDA nodes compiled and launched through the backend's hooks (Note [backend hooks for
// static graphs] in core/backend.h): this file binds a node's tensors to its generated kernel's
// arguments (fused_cuda_source.cpp writes the kernel); the CUDA backend compiles, loads and
// launches it.
#include <string>
#include <vector>

#include "core/backend.h"
#include "core/error.h"
#include "jit/fused_cpu.h"
#include "jit/fused_cuda.h"

namespace wick::jit {

namespace {

// fused_cuda_source.cpp's wick_fused_layout, field for field.
struct FusedLayout {
  int64_t dims;
  int64_t sizes[kMaxDims];
  int64_t strides[kMaxDims];
};

// The CUDA backend, checked to have the run-time compilation hooks.
const Backend& compiling_backend(const char* what) {
  const Backend* cuda = find_backend(kCUDA);
  check_state(cuda_fusion_available(), what,
              "this build cannot compile CUDA kernels at run time (wick was built without CUDA); "
              "rebuild with the CUDA toolkit installed and -DWICK_CUDA=ON");
  return *cuda;
}

}  // namespace

bool cuda_fusion_available() {
  const Backend* cuda = find_backend(kCUDA);
  return cuda != nullptr && cuda->compile_source != nullptr && cuda->load_kernel != nullptr &&
         cuda->launch_kernel != nullptr;
}

std::string nvrtc_compile(const std::string& source, const std::string& arch) {
  return compiling_backend("jit.nvrtc_compile").compile_source(source, arch);
}

struct FusedCudaKernel::Impl {
  std::string source;
  std::vector<OperandAccess> access;
  const void* kernel = nullptr;
  void (*launch)(const void* kernel, int device, int64_t n, void** args) = nullptr;
};

FusedCudaKernel::FusedCudaKernel(const Node& node, const Graph& graph)
    : impl_(std::make_unique<Impl>()) {
  check_state(node.device.type == kCUDA, "jit.FusedCudaKernel",
              "needs a node on a CUDA device; got ", node.device.str());
  const Backend& cuda = compiling_backend("jit.FusedCudaKernel");
  impl_->access = fused_operand_access(node, graph);
  impl_->source = fused_cuda_source(node.steps, impl_->access);
  impl_->kernel = cuda.load_kernel(impl_->source, "wick_fused", node.device.index);
  impl_->launch = cuda.launch_kernel;
}

FusedCudaKernel::~FusedCudaKernel() = default;

const std::string& FusedCudaKernel::source() const { return impl_->source; }

void FusedCudaKernel::run(Tensor* const* args) const {
  const size_t inputs = impl_->access.size();
  Tensor& out = *args[inputs];
  check_state(out.dtype() == kFloat32 && out.is_contiguous() && out.device().type == kCUDA,
              "jit.FusedCudaKernel", "the output must be contiguous float32 on a CUDA device");
  const int64_t n = out.numel();
  if (n == 0) return;
  float* out_data = out.data<float>();
  long long count = n;
  std::vector<const float*> data(inputs);
  std::vector<FusedLayout> layouts(inputs);
  std::vector<void*> params{&out_data, &count};
  for (size_t k = 0; k < inputs; ++k) {
    const Tensor& t = *args[k];
    check_state(t.dtype() == kFloat32 && t.device() == out.device(), "jit.FusedCudaKernel",
                "input ", k, " must be float32 on ", out.device().str(), "; got ",
                dtype_name(t.dtype()), " on ", t.device().str());
    check_state(operand_access(t.shape(), t.strides(), out.shape()) == impl_->access[k],
                "jit.FusedCudaKernel", "input ", k, " has another layout than it was compiled for");
    data[k] = t.data<float>();
    params.push_back(&data[k]);
    if (impl_->access[k] != OperandAccess::Strided) continue;
    FusedLayout& l = layouts[k];
    l.dims = out.dim();
    const Strides strides = broadcast_strides(t, out.shape());
    for (int64_t d = 0; d < out.dim(); ++d) {
      l.sizes[d] = out.size(d);
      l.strides[d] = strides[d];
    }
    params.push_back(&l);
  }
  impl_->launch(impl_->kernel, out.device().index, n, params.data());
}

}  // namespace wick::jit
