// A small program for tests/distributed/test_failures.sh: launched right or wrong, with a rank
// that hangs or dies, it shows that the others fail with a clear error in bounded time.
//   failure_probe plain         init and destroy (run without mpirun: a launch error)
//   failure_probe world N       init expecting a world size of N
//   failure_probe hang S        rank 1 never joins the all-reduce; the others time out after S s
//   failure_probe exit          rank 1 exits with an error; mpirun stops the others
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "distributed/process_group.h"
#include "wick.h"

using namespace wick;
namespace dist = wick::distributed;

int main(int argc, char** argv) try {
  std::string mode = argc > 1 ? argv[1] : "plain";
  dist::InitOptions options;
  if (mode == "world") options.world_size = std::atoi(argv[2]);
  if (mode == "hang") options.timeout = dist::Seconds(std::atof(argv[2]));
  if (mode == "exit") options.timeout = dist::Seconds(120);
  dist::init_process_group("mpi", options);
  int rank = dist::get_rank();
  if ((mode == "hang" || mode == "exit") && rank == 1) {
    if (mode == "exit") throw std::runtime_error("rank 1 failed on purpose");
    std::this_thread::sleep_for(std::chrono::seconds(300));  // stopped by mpirun long before
  }
  Tensor x = ones({4});
  dist::all_reduce(x);
  std::printf("rank %d: all_reduce gave %g\n", rank, x[0].item<double>());
  dist::destroy_process_group();
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "error: %s\n", e.what());
  return 3;  // without destroy_process_group: mpirun stops the other ranks (Note [finalize])
}
