// The NCCL backend in a build without it (no CUDA, no NCCL, or no MPI to bootstrap it): creating
// a group throws a clear error.
#include "core/error.h"
#include "distributed/backends.h"

namespace wick::distributed::detail {

std::shared_ptr<ProcessGroup> make_nccl_process_group(const InitOptions&) {
  throw std::runtime_error(
      error_message("init_process_group",
                    "wick was built without NCCL: the nccl backend needs a CUDA build "
                    "(-DWICK_CUDA=ON) with NCCL 2 (nccl.h, libnccl) and MPI "
                    "(-DWICK_DISTRIBUTED=ON); use the mpi backend for CPU tensors"));
}

bool nccl_built() { return false; }
int nccl_runtime_version_code() { return 0; }
int nccl_header_version_code() { return 0; }

}  // namespace wick::distributed::detail
