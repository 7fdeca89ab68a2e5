// The MPI backend in a build without MPI (WICK_DISTRIBUTED=OFF, or MPI not found): creating a
// group throws a clear error; everything that does not need MPI (DDP's bucketing, samplers,
// timelines) still builds and works.
#include "core/error.h"
#include "distributed/backends.h"

namespace wick::distributed::detail {

std::shared_ptr<ProcessGroup> make_mpi_process_group(const InitOptions&) {
  throw std::runtime_error(
      error_message("init_process_group",
                    "wick was built without MPI: install Open MPI (libopenmpi-dev, "
                    "openmpi-bin; scripts/setup.sh) and configure with "
                    "-DWICK_DISTRIBUTED=ON"));
}

void finalize_mpi() {}
bool mpi_built() { return false; }
std::string mpi_library_version() { return ""; }

}  // namespace wick::distributed::detail
