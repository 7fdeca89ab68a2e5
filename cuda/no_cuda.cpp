// The CUDA entry points of a build without CUDA: no kernels to register, and every question about
// devices answers "none".
#include "core/dispatch.h"

namespace wick {

void register_cuda_kernels(KernelRegistry&) {}

}  // namespace wick
