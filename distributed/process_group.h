// ProcessGroup: the ranks of a data-parallel job and the collectives they run together.
//
// A job is N processes started by `mpirun -np N`; each is one rank (0..N-1). A ProcessGroup is
// the communicator they share. Every collective is called by every rank, in the same order, on
// tensors of the same shape and dtype, and returns at once with a Work handle; wait() blocks until
// this rank's part is done. PyTorch's c10d ProcessGroup has the same shape (design-facts 3).
//
//   distributed::init_process_group("mpi");           // CPU tensors; "nccl" for CUDA tensors
//   Tensor x = full({4}, distributed::get_rank() + 1.0);
//   distributed::all_reduce(x);                       // every rank now holds 1 + 2 + ... + N
//   distributed::destroy_process_group();             // at the normal end (Note [finalize])
//
// Backends: ProcessGroupMPI (distributed/mpi_process_group.cpp) for CPU tensors and
// ProcessGroupNCCL (distributed/nccl_process_group.cpp) for CUDA tensors. A build without MPI or
// NCCL has stubs that throw "wick was built without ...".
//
// Note [bounded waits]
// A collective finishes only when every rank has joined it. If a rank died, hung, or called a
// different collective, the others would wait forever - the classic distributed hang. Every
// wait here has a deadline (InitOptions::timeout, 30 s by default, or the wait(timeout) argument):
// past it, wait() throws CommTimeoutError naming the op, the rank and the time, and the group is
// marked broken, so every later collective throws at once instead of hanging on a half-finished
// one. The program then exits with an error, and mpirun stops the remaining ranks. This is what
// PyTorch's NCCL watchdog and TORCH_NCCL_ASYNC_ERROR_HANDLING do; here it is the polling loop in
// Work::wait().
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>

#include "core/tensor.h"

namespace wick::distributed {

using Clock = std::chrono::steady_clock;
using Seconds = std::chrono::duration<double>;

enum class ReduceOp { Sum, Avg, Max, Min };
const char* reduce_op_name(ReduceOp op);

// How all_reduce runs: the library's own algorithm (MPI's, NCCL's) or wick's ring
// (distributed/ring_all_reduce.h), there to be read and measured against them.
enum class AllReduceAlgorithm { Native, Ring };
const char* all_reduce_algorithm_name(AllReduceAlgorithm algorithm);
// "native" or "ring"; throws std::invalid_argument naming `op` for anything else.
AllReduceAlgorithm parse_all_reduce_algorithm(const std::string& name, const char* op);

// A collective that did not finish in time (Note [bounded waits]). Python sees RuntimeError.
class CommTimeoutError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// What a group remembers after a failure, shared by the group and its Work handles.
class GroupHealth {
 public:
  int rank = 0, size = 1;  // whose group, for messages

  // Throws "[op] the process group is unusable after an earlier failure: ..." once broken.
  void check(const char* op) const;
  void mark_broken(const std::string& reason);
  bool broken() const;

 private:
  mutable std::mutex mutex_;
  std::string reason_;
};

// The handle of one launched collective.
class Work {
 public:
  Work(std::string op, Seconds timeout, std::shared_ptr<GroupHealth> health);
  virtual ~Work() = default;
  Work(const Work&) = delete;
  Work& operator=(const Work&) = delete;

  // Polls once, without blocking: true when this rank's part is done (the output is ready).
  // Rethrows the collective's error, if it failed.
  bool is_completed();
  // Blocks until done; throws CommTimeoutError after the group's timeout (Note [bounded waits]).
  void wait();
  void wait(Seconds timeout);

  const std::string& op() const { return op_; }
  Clock::time_point started_at() const { return started_at_; }
  // When a poll first saw the collective done (for timelines); started_at() before that.
  Clock::time_point completed_at() const;

 protected:
  // Backend: checks the collective once; true when it is done; throws if it failed.
  virtual bool poll() = 0;
  // Backend: runs once, on the thread that first sees the collective done (e.g. AVG's division).
  virtual void finish() {}
  // Backend: called when a wait timed out, before the error is thrown (e.g. abort a communicator).
  virtual void abort() {}

 private:
  std::string op_;
  Seconds timeout_;
  std::shared_ptr<GroupHealth> health_;
  Clock::time_point started_at_;
  mutable std::mutex mutex_;  // poll() and finish() run on one thread at a time
  bool done_ = false;
  Clock::time_point completed_at_;
};

// True once any group of this process broke (a timeout or a failed collective).
bool any_group_failed();

// A Work that is done at creation (a collective over one rank, or an empty tensor).
std::shared_ptr<Work> completed_work(const std::string& op);

class ProcessGroup {
 public:
  ProcessGroup(int rank, int size, int local_rank, int local_size, Seconds timeout);
  virtual ~ProcessGroup() = default;
  ProcessGroup(const ProcessGroup&) = delete;
  ProcessGroup& operator=(const ProcessGroup&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  // This rank's index among the ranks on its machine, and how many there are (for GPU choice).
  int local_rank() const { return local_rank_; }
  int local_size() const { return local_size_; }
  Seconds timeout() const { return timeout_; }
  virtual std::string backend() const = 0;  // "mpi" or "nccl"
  // Where this group's tensors live: the CPU for mpi, this rank's GPU for nccl.
  virtual Device device() const = 0;
  bool broken() const { return health_->broken(); }
  const std::shared_ptr<GroupHealth>& health() const { return health_; }

  // In place on a contiguous tensor: every rank ends with the elementwise sum (mean, max, min)
  // of all ranks' tensors.
  virtual std::shared_ptr<Work> all_reduce(const Tensor& tensor, ReduceOp op = ReduceOp::Sum) = 0;
  // In place: every rank ends with `root`'s tensor.
  virtual std::shared_ptr<Work> broadcast(const Tensor& tensor, int root = 0) = 0;
  // output[r * n : (r + 1) * n] (along dim 0) receives rank r's input, whose dim 0 is n: PyTorch's
  // all_gather_into_tensor. The output holds size() inputs.
  virtual std::shared_ptr<Work> all_gather(const Tensor& output, const Tensor& input) = 0;
  // Reduces `input` (size() chunks along dim 0) over ranks and leaves chunk r on rank r in
  // `output`: PyTorch's reduce_scatter_tensor.
  virtual std::shared_ptr<Work> reduce_scatter(const Tensor& output, const Tensor& input,
                                               ReduceOp op = ReduceOp::Sum) = 0;
  // Done when every rank has called it.
  virtual std::shared_ptr<Work> barrier() = 0;

  // One step of a message-passing algorithm (MPI_Sendrecv): sends `send` to rank `dst` and
  // receives `recv` from rank `src`, both at once, so two ranks exchanging never wait on each
  // other. Messages between two ranks with the same tag arrive in the order they were sent; a
  // collective built from these takes its own tag from next_collective_tag(). Only the two ranks
  // involved call it. Backends without point-to-point messages throw.
  virtual std::shared_ptr<Work> send_recv(const Tensor& send, int dst, const Tensor& recv, int src,
                                          int tag);
  // Every rank draws tags in the same order (as it launches collectives), so they agree.
  int next_collective_tag();

  AllReduceAlgorithm all_reduce_algorithm() const { return all_reduce_algorithm_; }
  void set_all_reduce_algorithm(AllReduceAlgorithm algorithm) { all_reduce_algorithm_ = algorithm; }
  // Keeps polling `work` on the backend's progress thread until it is done (MPI); by default
  // nothing, and the waiter's polls advance it.
  virtual void progress_in_background(const std::shared_ptr<Work>& work) { (void)work; }

 protected:
  // The argument checks every backend shares; they throw naming `op` and the offending values.
  void check_tensor(const char* op, const Tensor& t, DeviceType device) const;
  void check_root(const char* op, int root) const;
  void check_gather_shapes(const char* op, const Tensor& big, const Tensor& small) const;

  std::shared_ptr<GroupHealth> health_ = std::make_shared<GroupHealth>();

 private:
  int rank_, size_, local_rank_, local_size_;
  Seconds timeout_;
  AllReduceAlgorithm all_reduce_algorithm_ = AllReduceAlgorithm::Native;
  std::atomic<int> next_tag_{0};
};

// ---- the default group, PyTorch's torch.distributed functions ----------------------------------

struct InitOptions {
  // Every wait's deadline (Note [bounded waits]).
  Seconds timeout{30.0};
  // The world size the program expects; -1 accepts whatever mpirun started. Without mpirun only
  // 1 is accepted (a one-process group), so a forgotten mpirun is an error, not a silent N=1 run.
  int world_size = -1;
  // NCCL: the GPU of this rank; -1 picks local_rank (one rank per GPU).
  int device = -1;
  // all_reduce's algorithm; the environment variable WICK_ALL_REDUCE_ALGORITHM ("native" or
  // "ring"), when set, overrides it, so a program can be switched without changing it.
  AllReduceAlgorithm all_reduce_algorithm = AllReduceAlgorithm::Native;
};

// Creates the default group. backend: "mpi" (CPU tensors) or "nccl" (CUDA tensors). Throws if
// the launch is wrong (no mpirun, world size not the expected one, fewer GPUs than local ranks)
// or if a group exists already.
void init_process_group(const std::string& backend, const InitOptions& options = {});
// Drops the default group and finalises MPI (Note [finalize] in mpi_process_group.cpp). Call it
// at the normal end of a program; MPI cannot be initialised again in the same process.
void destroy_process_group();
bool is_initialized();
// True when this process was started by mpirun (or another MPI launcher).
bool is_launched_by_mpi();
int get_rank();        // the default group's rank; throws if there is none
int get_world_size();  // its size
ProcessGroup& default_group();
std::shared_ptr<ProcessGroup> default_group_ptr();

// The collectives on the default group. With async_op false they wait before returning (and
// return a completed Work); with true they return at once, like PyTorch's async_op=True.
std::shared_ptr<Work> all_reduce(const Tensor& tensor, ReduceOp op = ReduceOp::Sum,
                                 bool async_op = false);
std::shared_ptr<Work> broadcast(const Tensor& tensor, int src = 0, bool async_op = false);
std::shared_ptr<Work> all_gather(const Tensor& output, const Tensor& input, bool async_op = false);
std::shared_ptr<Work> reduce_scatter(const Tensor& output, const Tensor& input,
                                     ReduceOp op = ReduceOp::Sum, bool async_op = false);
std::shared_ptr<Work> barrier(bool async_op = false);

}  // namespace wick::distributed
