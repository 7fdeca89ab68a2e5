// What the cuDNN files share (cudnn_conv.cpp, cudnn_nn.cpp): the checked-call macro and one
// cuDNN handle per device and thread.
#pragma once

#include <cuda_runtime.h>
#include <cudnn.h>

namespace wick::cuda {

// Throws std::runtime_error "[cudnn] <call> failed at file:line: <status> (<cuDNN's detail>)".
void check_cudnn(cudnnStatus_t status, const char* call, const char* file, int line);

// This thread's handle for `device`, set to queue work on `stream`. The first call checks that
// the cuDNN found at run time can be used (cudnn_version_problem()).
cudnnHandle_t cudnn_handle(int device, cudaStream_t stream);

// The hand-written kernels' switch to cuDNN (wick.backends.cudnn.enabled): true when enabled
// and the cuDNN found at run time can be used.
bool cudnn_usable();

}  // namespace wick::cuda

#define WICK_CUDNN_CHECK(call) ::wick::cuda::check_cudnn((call), #call, __FILE__, __LINE__)
