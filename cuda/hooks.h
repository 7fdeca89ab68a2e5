// The CUDA backend's hooks for static graphs (Note [backend hooks for static graphs] in
// core/backend.h), installed by register.cpp: graph capture (graph.cpp) and kernels compiled at
// run time by NVRTC (nvrtc.cpp).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "core/backend.h"

namespace wick::cuda {

std::unique_ptr<CapturedGraph> capture_graph(int device, const std::function<void()>& work);
std::string compile_source(const std::string& source, const std::string& arch);
const void* load_kernel(const std::string& source, const char* name, int device);
void launch_kernel(const void* kernel, int device, int64_t n, void** args);

}  // namespace wick::cuda
