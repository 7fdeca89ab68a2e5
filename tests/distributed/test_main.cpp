// main() of the multi-process tests: every rank runs the same GoogleTest suite inside one MPI
// process group (tests/distributed/CMakeLists.txt starts them with mpirun -np 2 and -np 3).
// Rank 0 prints the usual report; the other ranks print only their failures, prefixed with the
// rank. A test that leaves the ranks out of step fails by timeout (20 s here), never by a hang.
#include <gtest/gtest.h>

#include <cstdio>

#include "distributed/process_group.h"

namespace {

class FailurePrinter : public testing::EmptyTestEventListener {
 public:
  explicit FailurePrinter(int rank) : rank_(rank) {}
  void OnTestPartResult(const testing::TestPartResult& result) override {
    if (!result.failed()) return;
    std::fprintf(stderr, "[rank %d] %s:%d: failure\n%s\n", rank_,
                 result.file_name() ? result.file_name() : "?", result.line_number(),
                 result.message());
  }

 private:
  int rank_;
};

}  // namespace

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  namespace dist = wick::distributed;
  dist::InitOptions options;
  options.timeout = dist::Seconds(20);
  try {
    dist::init_process_group("mpi", options);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
  int rank = dist::get_rank();
  if (rank != 0) {
    testing::TestEventListeners& listeners = testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new FailurePrinter(rank));
  }
  int result = RUN_ALL_TESTS();
  // A broken group (a timeout) must not finalise (Note [finalize]): exiting without it makes
  // mpirun stop the other ranks.
  if (dist::any_group_failed()) return 1;
  dist::destroy_process_group();
  return result;
}
