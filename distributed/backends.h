// The seam between the ProcessGroup interface and its backends. Each factory is defined by its
// backend's file (mpi_process_group.cpp, nccl_process_group.cpp) or, in a build without that
// library, by a stub that throws "[init_process_group] wick was built without ...".
#pragma once

#include <memory>

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

}  // namespace wick::distributed::detail
