// What the CUDA part of this build was compiled against, for environment reports (envreport/):
// the toolkit's runtime version, the GPU architectures, the cuDNN headers, and the CUDA version
// the loaded cuDNN library was built for. Separate from cuda/api.h so that changing it does not
// recompile the kernels. A build without CUDA returns zeros and an empty architecture list.
#pragma once
#include <string>

namespace wick::cuda {

struct BuildInfo {
  int toolkit_version = 0;       // CUDART_VERSION, e.g. 13000 for 13.0
  std::string architectures;     // CMake's CUDA_ARCHITECTURES, e.g. "80;90"
  int cudnn_header_version = 0;  // CUDNN_VERSION of the headers, e.g. 91900 for 9.19.0
};
BuildInfo build_info();

// The CUDA runtime version the loaded cuDNN library was built for (cudnnGetCudartVersion), or 0.
int cudnn_cudart_version();

}  // namespace wick::cuda
