// The parts of ProcessGroup every backend shares: Work's bounded wait, argument checks, and the
// default group behind init_process_group() and the free collective functions.
#include "distributed/process_group.h"

#include <atomic>
#include <cstdlib>
#include <sstream>
#include <thread>

#include "core/error.h"
#include "distributed/backends.h"

namespace wick::distributed {

const char* reduce_op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum:
      return "sum";
    case ReduceOp::Avg:
      return "avg";
    case ReduceOp::Max:
      return "max";
    case ReduceOp::Min:
      return "min";
  }
  return "?";
}

const char* all_reduce_algorithm_name(AllReduceAlgorithm algorithm) {
  return algorithm == AllReduceAlgorithm::Ring ? "ring" : "native";
}

AllReduceAlgorithm parse_all_reduce_algorithm(const std::string& name, const char* op) {
  if (name == "native") return AllReduceAlgorithm::Native;
  if (name == "ring") return AllReduceAlgorithm::Ring;
  throw std::invalid_argument(
      error_message(op, "all_reduce algorithm must be 'native' or 'ring'; got '", name, "'"));
}

// ---- GroupHealth --------------------------------------------------------------------------------

void GroupHealth::check(const char* op) const {
  std::lock_guard<std::mutex> lock(mutex_);
  check_state(reason_.empty(), op,
              "the process group is unusable after an earlier failure: ", reason_);
}

namespace {
std::atomic<bool> g_any_group_failed{false};
}  // namespace

bool any_group_failed() { return g_any_group_failed.load(); }

void GroupHealth::mark_broken(const std::string& reason) {
  g_any_group_failed = true;
  std::lock_guard<std::mutex> lock(mutex_);
  if (reason_.empty()) reason_ = reason;
}

bool GroupHealth::broken() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return !reason_.empty();
}

// ---- Work ---------------------------------------------------------------------------------------

Work::Work(std::string op, Seconds timeout, std::shared_ptr<GroupHealth> health)
    : op_(std::move(op)),
      timeout_(timeout),
      health_(std::move(health)),
      started_at_(Clock::now()),
      completed_at_(started_at_) {}

bool Work::is_completed() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (done_) return true;
  if (!poll()) return false;
  completed_at_ = Clock::now();
  finish();
  done_ = true;
  return true;
}

Clock::time_point Work::completed_at() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return completed_at_;
}

void Work::wait() { wait(timeout_); }

void Work::wait(Seconds timeout) {
  // Note [polling waits]
  // Waiting is a loop of non-blocking polls, never a blocking MPI_Wait or cudaEventSynchronize:
  // only a loop can give up at a deadline (Note [bounded waits]). It spins briefly (a collective
  // that is nearly done costs no sleep latency), then yields the core in 50 us naps, which
  // matters when ranks share cores, as they do in CI.
  Clock::time_point deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(timeout);
  for (int spins = 0; !is_completed(); ++spins) {
    health_->check(op_.c_str());  // another wait timed out: this one would too, so stop now
    if (Clock::now() > deadline) {
      std::ostringstream reason;
      reason << op_ << " timed out after " << timeout.count()
             << " s: a rank may have died, hung, or called a different collective";
      health_->mark_broken(reason.str());
      abort();
      throw CommTimeoutError(
          error_message(op_.c_str(), "rank ", health_->rank, " of ", health_->size,
                        " timed out after ", timeout.count(),
                        " s waiting for the other ranks; a rank may have died, hung, or called a "
                        "different collective (every rank must call the same collectives in the "
                        "same order). The process group is now unusable."));
    }
    if (spins < 100) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }
}

namespace {
class CompletedWork : public Work {
 public:
  explicit CompletedWork(const std::string& op)
      : Work(op, Seconds(0), std::make_shared<GroupHealth>()) {}

 protected:
  bool poll() override { return true; }
};
}  // namespace

std::shared_ptr<Work> completed_work(const std::string& op) {
  auto work = std::make_shared<CompletedWork>(op);
  work->is_completed();
  return work;
}

// ---- ProcessGroup -------------------------------------------------------------------------------

ProcessGroup::ProcessGroup(int rank, int size, int local_rank, int local_size, Seconds timeout)
    : rank_(rank),
      size_(size),
      local_rank_(local_rank),
      local_size_(local_size),
      timeout_(timeout) {
  health_->rank = rank;
  health_->size = size;
  check_value(timeout.count() > 0, "init_process_group", "timeout must be positive; got ",
              timeout.count(), " s");
}

std::shared_ptr<Work> ProcessGroup::send_recv(const Tensor&, int, const Tensor&, int, int) {
  throw std::runtime_error(
      error_message("send_recv", "the ", backend(), " backend has no point-to-point messages"));
}

int ProcessGroup::next_collective_tag() {
  return next_tag_.fetch_add(1) & 0x7fff;  // MPI guarantees tags up to 32767
}

void ProcessGroup::check_tensor(const char* op, const Tensor& t, DeviceType device) const {
  health_->check(op);
  check_value(t.defined(), op, "got an undefined tensor");
  check_value(t.device().type == device, op, "the ", backend(), " backend works on ",
              device_type_name(device), " tensors; got a tensor on ", t.device(),
              device == kCUDA ? " (use the mpi backend for CPU tensors)"
                              : " (use the nccl backend for CUDA tensors)");
  check_value(t.is_contiguous(), op, "the tensor must be contiguous; got shape ", t.shape(),
              " with strides ", t.strides(), " (call .contiguous() first)");
}

void ProcessGroup::check_root(const char* op, int root) const {
  check_index(root >= 0 && root < size_, op, "root rank ", root, " is not in the group of size ",
              size_);
}

void ProcessGroup::check_gather_shapes(const char* op, const Tensor& big,
                                       const Tensor& small) const {
  check_type(big.dtype() == small.dtype(), op, "the tensors have different dtypes: ", big.dtype(),
             " and ", small.dtype());
  check_value(big.device() == small.device(), op,
              "the tensors are on different devices: ", big.device(), " and ", small.device());
  check_value(big.numel() == small.numel() * size_, op, "the gathered tensor must hold ", size_,
              " (world size) times the elements of the per-rank tensor: got shapes ", big.shape(),
              " and ", small.shape());
}

// ---- the default group --------------------------------------------------------------------------

namespace {
std::shared_ptr<ProcessGroup>& default_slot() {
  static std::shared_ptr<ProcessGroup> group;
  return group;
}
}  // namespace

bool is_launched_by_mpi() {
  // OpenMPI sets OMPI_COMM_WORLD_SIZE; MPICH and Intel MPI (Hydra) set PMI_SIZE; PMIx-based
  // launchers (srun --mpi=pmix) set PMIX_RANK.
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"}) {
    if (std::getenv(name) != nullptr) return true;
  }
  return false;
}

void init_process_group(const std::string& backend, const InitOptions& options) {
  check_value(backend == "mpi" || backend == "nccl", "init_process_group",
              "backend must be 'mpi' (CPU tensors) or 'nccl' (CUDA tensors); got '", backend, "'");
  check_state(default_slot() == nullptr, "init_process_group",
              "the default process group is already initialised (backend ",
              default_slot() ? default_slot()->backend() : "",
              "); call destroy_process_group "
              "first");
  check_value(options.world_size == -1 || options.world_size >= 1, "init_process_group",
              "world_size must be -1 (any) or positive; got ", options.world_size);
  check_value(options.timeout.count() > 0, "init_process_group", "timeout must be positive; got ",
              options.timeout.count(), " s");
  AllReduceAlgorithm algorithm = options.all_reduce_algorithm;
  if (const char* chosen = std::getenv("WICK_ALL_REDUCE_ALGORITHM")) {
    algorithm = parse_all_reduce_algorithm(chosen, "init_process_group");
  }
  if (backend == "mpi") {
    default_slot() = detail::make_mpi_process_group(options);
  } else {
    default_slot() = detail::make_nccl_process_group(options);
  }
  default_slot()->set_all_reduce_algorithm(algorithm);
}

void destroy_process_group() {
  check_state(default_slot() != nullptr, "destroy_process_group",
              "no process group is initialised");
  default_slot().reset();
  detail::finalize_mpi();
}

bool is_initialized() { return default_slot() != nullptr; }

std::shared_ptr<ProcessGroup> default_group_ptr() {
  check_state(default_slot() != nullptr, "distributed",
              "no process group: call init_process_group(\"mpi\") (or \"nccl\") first, in a "
              "program started by mpirun");
  return default_slot();
}

ProcessGroup& default_group() { return *default_group_ptr(); }
int get_rank() { return default_group().rank(); }
int get_world_size() { return default_group().size(); }

namespace {
std::shared_ptr<Work> finish(std::shared_ptr<Work> work, bool async_op) {
  if (!async_op) work->wait();
  return work;
}
}  // namespace

std::shared_ptr<Work> all_reduce(const Tensor& tensor, ReduceOp op, bool async_op) {
  return finish(default_group().all_reduce(tensor, op), async_op);
}

std::shared_ptr<Work> broadcast(const Tensor& tensor, int src, bool async_op) {
  return finish(default_group().broadcast(tensor, src), async_op);
}

std::shared_ptr<Work> all_gather(const Tensor& output, const Tensor& input, bool async_op) {
  return finish(default_group().all_gather(output, input), async_op);
}

std::shared_ptr<Work> reduce_scatter(const Tensor& output, const Tensor& input, ReduceOp op,
                                     bool async_op) {
  return finish(default_group().reduce_scatter(output, input, op), async_op);
}

std::shared_ptr<Work> barrier(bool async_op) { return finish(default_group().barrier(), async_op); }

}  // namespace wick::distributed
