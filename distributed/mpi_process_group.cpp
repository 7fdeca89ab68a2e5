// ProcessGroupMPI: collectives on CPU tensors with MPI's non-blocking collectives
// (MPI_Iallreduce, MPI_Ibcast, ...), polled so that every wait can time out.
//
// Note [MPI threads]
// MPI is initialised with MPI_Init_thread asking for MPI_THREAD_MULTIPLE, and wick needs at least
// MPI_THREAD_SERIALIZED: two threads call MPI - the one that launches collectives (the training
// loop, and DDP's hooks inside backward) and the group's progress thread - and every MPI call is
// made under one process-wide mutex, so they never call MPI at the same time.
//
// Note [progress thread]
// A non-blocking MPI collective advances only while some thread is inside an MPI call: Open MPI's
// shared-memory and TCP transports have no thread of their own that moves data, and a collective
// is a schedule of sends and receives whose next round starts only when a call notices that the
// previous one finished. If nothing called MPI between DDP launching a bucket's all-reduce and
// waiting for it, the all-reduce would run entirely at the wait, and nothing would overlap with
// backward. So each group has a progress thread that calls MPI_Test on the pending collectives
// every 50 us while there are any, and sleeps on a condition variable when there are none.
// PyTorch's ProcessGroupMPI gets the same effect differently: a worker thread runs blocking MPI
// calls one after another.
//
// Note [finalize]
// MPI_Finalize is collective in practice: Open MPI's waits for every rank (a PMIx fence). A rank
// that finalises while another is stuck would hang with it. So wick finalises only in
// destroy_process_group(), which a program calls at its normal end, and never after a group broke
// (a timeout). A rank that leaves through an error path exits without MPI_Finalize; mpirun sees
// that and stops the other ranks at once ("exited without calling finalize" / "returned a
// non-zero exit code"), which is the fast, clear failure a job wants. MPI cannot be initialised
// again after MPI_Finalize, so a process has one MPI session.
#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <limits>
#include <thread>
#include <vector>

#include "core/error.h"
#include "core/grad_mode.h"
#include "distributed/backends.h"
#include "distributed/ring_all_reduce.h"

namespace wick::distributed::detail {

namespace {

// ---- the MPI session (one per process) ----------------------------------------------------------

class ProcessGroupMPI;

struct MpiSession {
  std::mutex call_mutex;  // held around every MPI call (Note [MPI threads])
  std::mutex state_mutex;
  bool initialized_by_us = false;
  bool finalized = false;
  std::vector<std::weak_ptr<ProcessGroupMPI>> groups;  // live groups, shut down at finalize
};

// Never destroyed: groups may outlive static destruction (the default group is a static too).
MpiSession& session() {
  static MpiSession* s = new MpiSession();
  return *s;
}

void check_mpi(int rc, const char* op, const char* call) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(rc, text, &length);
  throw std::runtime_error(error_message(op, call, " failed: ", std::string(text, length)));
}

// Initialises MPI once per process (Note [MPI threads]).
void ensure_initialized(const char* op) {
  MpiSession& s = session();
  std::lock_guard<std::mutex> lock(s.state_mutex);
  check_state(!s.finalized, op,
              "MPI was finalised by destroy_process_group and cannot be initialised again in the "
              "same process");
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized) return;
  int provided = 0;
  std::lock_guard<std::mutex> call(s.call_mutex);
  check_mpi(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided), op,
            "MPI_Init_thread");
  s.initialized_by_us = true;
  check_state(provided >= MPI_THREAD_SERIALIZED, op, "the MPI library supports only thread level ",
              provided, "; wick needs MPI_THREAD_SERIALIZED (", MPI_THREAD_SERIALIZED,
              ") or better (Note [MPI threads])");
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
}

// ---- dtypes -------------------------------------------------------------------------------------

// The MPI type a reduction runs on, or MPI_DATATYPE_NULL when MPI cannot reduce this dtype.
MPI_Datatype reduction_type(DType dtype) {
  switch (dtype) {
    case kFloat32:
      return MPI_FLOAT;
    case kFloat64:
      return MPI_DOUBLE;
    case kInt32:
      return MPI_INT32_T;
    case kInt64:
      return MPI_INT64_T;
    case kUInt8:
      return MPI_UINT8_T;
    case kInt8:
      return MPI_INT8_T;
    case kBool:
      return MPI_UINT8_T;  // max/min of 0/1 bytes are logical or/and
    default:
      return MPI_DATATYPE_NULL;
  }
}

// The MPI type a copy (broadcast, gather) moves: any dtype, as elements of its size.
MPI_Datatype copy_type(DType dtype) {
  switch (element_size(dtype)) {
    case 1:
      return MPI_UINT8_T;
    case 2:
      return MPI_UINT16_T;
    case 4:
      return MPI_UINT32_T;
    default:
      return MPI_UINT64_T;
  }
}

MPI_Op mpi_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::Max:
      return MPI_MAX;
    case ReduceOp::Min:
      return MPI_MIN;
    default:
      return MPI_SUM;  // Avg is a sum divided by the world size in finish()
  }
}

void check_reduction(const char* op, DType dtype, ReduceOp reduce) {
  check_type(reduction_type(dtype) != MPI_DATATYPE_NULL, op, "the mpi backend cannot reduce ",
             dtype, " tensors (MPI has no 16-bit float type); convert to float32 first");
  check_type(dtype != kBool || reduce == ReduceOp::Max || reduce == ReduceOp::Min, op,
             "bool tensors can only be reduced with max (any) or min (all); got ",
             reduce_op_name(reduce));
  check_type(reduce != ReduceOp::Avg || is_floating(dtype), op,
             "avg needs a floating-point tensor; got ", dtype);
}

int mpi_count(const char* op, int64_t n) {
  check_value(n <= std::numeric_limits<int>::max(), op, "a tensor of ", n,
              " elements is more than one MPI call can move (2^31 - 1); split it");
  return static_cast<int>(n);
}

// ---- Work ---------------------------------------------------------------------------------------

class MpiWork : public Work {
 public:
  MpiWork(const char* op, Seconds timeout, std::shared_ptr<GroupHealth> health,
          std::vector<Tensor> keep_alive, Tensor divide, int world_size)
      : Work(op, timeout, std::move(health)),
        keep_alive_(std::move(keep_alive)),
        divide_(std::move(divide)),
        world_size_(world_size) {}
  // A collective has one request; a send_recv two.
  MPI_Request* requests(int count) {
    requests_.assign(static_cast<size_t>(count), MPI_REQUEST_NULL);
    return requests_.data();
  }

 protected:
  bool poll() override {
    int done = 0;
    {
      std::lock_guard<std::mutex> lock(session().call_mutex);
      check_mpi(MPI_Testall(static_cast<int>(requests_.size()), requests_.data(), &done,
                            MPI_STATUSES_IGNORE),
                op().c_str(), "MPI_Testall");
    }
    return done != 0;
  }

  void finish() override {
    if (divide_.defined()) {  // ReduceOp::Avg: MPI summed, the mean divides by the world size
      NoGradGuard no_grad;
      divide_.div_(Scalar(static_cast<double>(world_size_)));
    }
    keep_alive_.clear();  // MPI is done with the buffers
  }

 private:
  std::vector<MPI_Request> requests_;
  std::vector<Tensor> keep_alive_;  // the buffers MPI reads and writes until it is done
  Tensor divide_;
  int world_size_;
};

// ---- the group ----------------------------------------------------------------------------------

// How long the progress thread sleeps between polls (Note [progress thread]): WICK_MPI_POLL_US
// microseconds, 50 by default.
std::chrono::microseconds progress_poll_interval() {
  const char* text = std::getenv("WICK_MPI_POLL_US");
  long us = text ? std::strtol(text, nullptr, 10) : 50;
  return std::chrono::microseconds(us > 0 ? us : 50);
}

class ProcessGroupMPI : public ProcessGroup {
 public:
  ProcessGroupMPI(MPI_Comm comm, int rank, int size, int local_rank, int local_size,
                  Seconds timeout)
      : ProcessGroup(rank, size, local_rank, local_size, timeout), comm_(comm) {
    progress_ = std::thread([this] { progress_loop(); });
  }
  ~ProcessGroupMPI() override { shutdown(); }

  std::string backend() const override { return "mpi"; }
  Device device() const override { return Device(kCPU); }

  // Stops the progress thread and frees the communicator; later collectives throw.
  void shutdown() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (stopped_) return;
      stopped_ = true;
    }
    wake_.notify_all();
    if (progress_.joinable()) progress_.join();
    // A broken group may have collectives that never finish; freeing its communicator could
    // wait for them.
    if (!broken()) {
      std::lock_guard<std::mutex> lock(session().call_mutex);
      MPI_Comm_free(&comm_);
    }
  }

  std::shared_ptr<Work> all_reduce(const Tensor& tensor, ReduceOp op) override {
    const char* name = "all_reduce";
    check_tensor(name, tensor, kCPU);
    if (all_reduce_algorithm() == AllReduceAlgorithm::Ring) {
      return ring_all_reduce(*this, tensor, op);
    }
    check_reduction(name, tensor.dtype(), op);
    int count = mpi_count(name, tensor.numel());
    auto work = make_work(name, {tensor}, op == ReduceOp::Avg ? tensor : Tensor());
    launch(work, [&](MPI_Request* r) {
      return MPI_Iallreduce(MPI_IN_PLACE, tensor.data_ptr(), count, reduction_type(tensor.dtype()),
                            mpi_op(op), comm_, r);
    });
    return work;
  }

  std::shared_ptr<Work> broadcast(const Tensor& tensor, int root) override {
    const char* name = "broadcast";
    check_tensor(name, tensor, kCPU);
    check_root(name, root);
    int count = mpi_count(name, tensor.numel());
    auto work = make_work(name, {tensor}, Tensor());
    launch(work, [&](MPI_Request* r) {
      return MPI_Ibcast(tensor.data_ptr(), count, copy_type(tensor.dtype()), root, comm_, r);
    });
    return work;
  }

  std::shared_ptr<Work> all_gather(const Tensor& output, const Tensor& input) override {
    const char* name = "all_gather";
    check_tensor(name, output, kCPU);
    check_tensor(name, input, kCPU);
    check_gather_shapes(name, output, input);
    int count = mpi_count(name, input.numel());
    // An input that is already this rank's slot of the output is gathered in place.
    const char* slot = static_cast<const char*>(output.data_ptr()) + rank() * input.nbytes();
    const void* send = input.data_ptr() == slot ? MPI_IN_PLACE : input.data_ptr();
    auto work = make_work(name, {output, input}, Tensor());
    launch(work, [&](MPI_Request* r) {
      MPI_Datatype type = copy_type(input.dtype());
      return MPI_Iallgather(send, count, type, output.data_ptr(), count, type, comm_, r);
    });
    return work;
  }

  std::shared_ptr<Work> reduce_scatter(const Tensor& output, const Tensor& input,
                                       ReduceOp op) override {
    const char* name = "reduce_scatter";
    check_tensor(name, output, kCPU);
    check_tensor(name, input, kCPU);
    check_gather_shapes(name, input, output);
    check_reduction(name, input.dtype(), op);
    int count = mpi_count(name, output.numel());
    auto work = make_work(name, {output, input}, op == ReduceOp::Avg ? output : Tensor());
    launch(work, [&](MPI_Request* r) {
      return MPI_Ireduce_scatter_block(input.data_ptr(), output.data_ptr(), count,
                                       reduction_type(input.dtype()), mpi_op(op), comm_, r);
    });
    return work;
  }

  std::shared_ptr<Work> send_recv(const Tensor& send, int dst, const Tensor& recv, int src,
                                  int tag) override {
    const char* name = "send_recv";
    check_tensor(name, send, kCPU);
    check_tensor(name, recv, kCPU);
    check_root(name, dst);
    check_root(name, src);
    check_type(send.dtype() == recv.dtype(), name,
               "the tensors have different dtypes: ", send.dtype(), " and ", recv.dtype());
    int send_count = mpi_count(name, send.numel()), recv_count = mpi_count(name, recv.numel());
    auto work = make_work(name, {send, recv}, Tensor());
    MPI_Datatype type = copy_type(send.dtype());
    launch(
        work,
        [&](MPI_Request* r) {
          int rc = MPI_Irecv(recv.data_ptr(), recv_count, type, src, tag, comm_, &r[0]);
          return rc != MPI_SUCCESS
                     ? rc
                     : MPI_Isend(send.data_ptr(), send_count, type, dst, tag, comm_, &r[1]);
        },
        2);
    return work;
  }

  void progress_in_background(const std::shared_ptr<Work>& work) override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      check_state(!stopped_, work->op().c_str(), "the process group was destroyed");
      pending_.push_back(work);
    }
    wake_.notify_one();
  }

  std::shared_ptr<Work> barrier() override {
    health_->check("barrier");
    auto work = make_work("barrier", {}, Tensor());
    launch(work, [&](MPI_Request* r) { return MPI_Ibarrier(comm_, r); });
    return work;
  }

 private:
  std::shared_ptr<MpiWork> make_work(const char* op, std::vector<Tensor> keep, Tensor divide) {
    return std::make_shared<MpiWork>(op, timeout(), health_, std::move(keep), std::move(divide),
                                     size());
  }

  // Starts the collective and hands it to the progress thread.
  template <class Start>
  void launch(const std::shared_ptr<MpiWork>& work, Start start, int requests = 1) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      check_state(!stopped_, work->op().c_str(), "the process group was destroyed");
    }
    {
      std::lock_guard<std::mutex> lock(session().call_mutex);
      check_mpi(start(work->requests(requests)), work->op().c_str(), "starting the MPI call");
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      pending_.push_back(work);
    }
    wake_.notify_one();
  }

  void progress_loop() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (true) {
      wake_.wait(lock, [&] { return stopped_ || !pending_.empty(); });
      if (stopped_) return;
      std::vector<std::shared_ptr<Work>> polling(pending_.begin(), pending_.end());
      lock.unlock();
      std::vector<Work*> finished;
      for (auto& work : polling) {
        try {
          if (work->is_completed()) finished.push_back(work.get());
        } catch (const std::exception&) {
          // The error stays with the request: the waiting thread sees it again and rethrows.
          finished.push_back(work.get());
        }
      }
      std::this_thread::sleep_for(poll_interval_);
      lock.lock();
      // Works of a broken group leave the list too: nobody will finish them.
      bool broken = health_->broken();
      pending_.erase(std::remove_if(pending_.begin(), pending_.end(),
                                    [&](const std::shared_ptr<Work>& w) {
                                      return broken || std::find(finished.begin(), finished.end(),
                                                                 w.get()) != finished.end();
                                    }),
                     pending_.end());
    }
  }

  MPI_Comm comm_;
  std::chrono::microseconds poll_interval_ = progress_poll_interval();
  std::thread progress_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::shared_ptr<Work>> pending_;  // MPI calls, and rings built on them
  bool stopped_ = false;
};

}  // namespace

std::shared_ptr<ProcessGroup> make_mpi_process_group(const InitOptions& options) {
  const char* op = "init_process_group";
  check_state(is_launched_by_mpi() || options.world_size == 1, op,
              "this process was not started by mpirun (no OMPI_COMM_WORLD_SIZE, PMI_SIZE or "
              "PMIX_RANK in its environment): launch the ranks with `mpirun -np N <program>` "
              "(as root add --allow-run-as-root; with more ranks than cores add --oversubscribe), "
              "or ask for world_size 1 to run a one-process group");
  ensure_initialized(op);
  MPI_Comm comm = MPI_COMM_NULL, local = MPI_COMM_NULL;
  int rank = 0, size = 0, local_rank = 0, local_size = 0;
  {
    std::lock_guard<std::mutex> lock(session().call_mutex);
    // A private communicator, so wick's collectives never match a user's MPI calls.
    check_mpi(MPI_Comm_dup(MPI_COMM_WORLD, &comm), op, "MPI_Comm_dup");
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    // The ranks that share this machine's memory: local_rank picks this rank's GPU.
    check_mpi(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &local), op,
              "MPI_Comm_split_type");
    MPI_Comm_rank(local, &local_rank);
    MPI_Comm_size(local, &local_size);
    MPI_Comm_free(&local);
  }
  if (options.world_size != -1 && size != options.world_size) {
    // Every rank sees the same size and fails here together, so finalising cannot hang.
    {
      std::lock_guard<std::mutex> lock(session().call_mutex);
      MPI_Comm_free(&comm);
    }
    finalize_mpi();
    throw std::invalid_argument(
        error_message(op, "this program expects a world size of ", options.world_size,
                      " but mpirun started ", size, " process", size == 1 ? "" : "es",
                      "; run it with `mpirun -np ", options.world_size, " ...`"));
  }
  auto group =
      std::make_shared<ProcessGroupMPI>(comm, rank, size, local_rank, local_size, options.timeout);
  std::lock_guard<std::mutex> lock(session().state_mutex);
  session().groups.push_back(group);
  return group;
}

void finalize_mpi() {
  MpiSession& s = session();
  std::vector<std::shared_ptr<ProcessGroupMPI>> live;
  {
    std::lock_guard<std::mutex> lock(s.state_mutex);
    if (!s.initialized_by_us || s.finalized) return;
    for (auto& weak : s.groups) {
      if (auto group = weak.lock()) live.push_back(group);
    }
    s.groups.clear();
  }
  for (auto& group : live) group->shutdown();  // groups still held elsewhere (a DDP model)
  std::lock_guard<std::mutex> lock(s.state_mutex);
  if (any_group_failed()) return;  // Note [finalize]: never finalise after a failure
  std::lock_guard<std::mutex> call(s.call_mutex);
  MPI_Finalize();
  s.finalized = true;
}

bool mpi_built() { return true; }

std::string mpi_library_version() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  MPI_Get_library_version(text, &length);
  std::string version(text, static_cast<size_t>(length));
  return version.substr(
      0, version.find_first_of(",\n"));  // "Open MPI v4.1.4" without the build details
}

}  // namespace wick::distributed::detail
