// The seam between the ProcessGroup interface and its backends. Each factory is defined by its
// backend's file (mpi_process_group.cpp, nccl_process_group.cpp) or, in a build without that
// library, by a stub that throws "[init_process_group] wick was built without ...".
#pragma once

#include <memory>
#include <string>

#include "distributed/process_group.h"

namespace wick::distributed::detail {

// A group over every rank mpirun started (MPI_COMM_WORLD), for CPU tensors. Initialises MPI on
// first use. Throws if the world size is not options.world_size (when that is set).
std::shared_ptr<ProcessGroup> make_mpi_process_group(const InitOptions& options);
// A group of NCCL communicators for CUDA tensors, bootstrapped over MPI (or, for a one-process
// group started without mpirun, over nothing).
std::shared_ptr<ProcessGroup> make_nccl_process_group(const InitOptions& options);
// Finalises MPI if this process initialised it and no group broke (Note [finalize]).
void finalize_mpi();
bool mpi_built();
bool nccl_built();
// Versions for environment reports (envreport/): NCCL found at run time and NCCL's headers, e.g.
// 22304 for 2.23.4, and MPI's library string (MPI_Get_library_version, callable before
// MPI_Init); 0 and "" in a build without that backend.
int nccl_runtime_version_code();
int nccl_header_version_code();
std::string mpi_library_version();

}  // namespace wick::distributed::detail
