// ProcessGroupNCCL: collectives on CUDA tensors with NCCL (design-facts 4).
//
// Bootstrap: rank 0 calls ncclGetUniqueId, an opaque 128-byte blob holding the address of its
// bootstrap socket, and the id reaches the other ranks over MPI (an MPI group made for that, on
// the CPU). Each rank then makes its GPU current and calls ncclCommInitRank(size, id, rank), which
// returns when all ranks have joined (Note [bounded NCCL set-up]). One rank per GPU: the GPU is
// local_rank unless InitOptions::device says otherwise, and two ranks on one GPU are refused up
// front (NCCL itself fails with "Duplicate GPU detected" or hangs).
//
// Note [NCCL streams]
// NCCL kernels run on the group's own stream, so communication can overlap with compute on the
// current stream. Before each collective the NCCL stream waits for an event recorded on the
// current stream (the tensor's producer must finish first); after it, an event recorded on the
// NCCL stream marks completion. Work::wait() polls that event on the host with a deadline (Note
// [bounded waits]) and also asks ncclCommGetAsyncError, so a broken peer surfaces as an error,
// never a hang; on a timeout the communicator is aborted (ncclCommAbort), which is the only way to
// stop NCCL kernels that wait for a rank that will never come. PyTorch's Work::wait() instead
// makes the current stream wait on the event and returns without blocking the host; wick blocks,
// which is simpler and costs nothing in DDP, where the host waits once at the end of backward.
//
// Note [NCCL buffers stay alive]
// A tensor that a collective reads or writes must not be freed, and its memory reused, before the
// collective is done. The Work holds the tensors, and the group holds every Work until a poll has
// seen it done, so a Work the caller drops without waiting still keeps its tensors (PyTorch's
// TORCH_NCCL_AVOID_RECORD_STREAMS approach, instead of record_stream on the caching allocator).
#include <cuda_runtime.h>
#include <nccl.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include "core/error.h"
#include "core/ops.h"
#include "cuda/api.h"
#include "cuda/check.h"
#include "distributed/backends.h"
#include "distributed/ring_all_reduce.h"

namespace wick::distributed::detail {

namespace {

// Every NCCL call is checked; a failure throws naming the op, the call, the file and line and
// NCCL's own message (Note [why macros] in cuda/check.h).
void check_nccl(ncclResult_t result, const char* op, const char* call, const char* file, int line) {
  if (result == ncclSuccess) return;
  throw std::runtime_error(error_message(op, call, " failed at ", file, ":", line, ": ",
                                         ncclGetErrorString(result),
                                         " (NCCL_DEBUG=WARN shows "
                                         "NCCL's reason)"));
}
#define WICK_NCCL_CHECK(op, call) check_nccl((call), op, #call, __FILE__, __LINE__)

// NCCL found at run time, e.g. 22304 for 2.23.4 (the library may be older than nccl.h).
int nccl_runtime_version() {
  static const int version = [] {
    int v = 0;
    return ncclGetVersion(&v) == ncclSuccess ? v : 0;
  }();
  return version;
}

// bfloat16 and ncclAvg arrived in NCCL 2.10; an older library fails at the call with
// "invalid argument", so the requirement is checked first and said plainly.
void check_nccl_at_least(const char* op, int needed, const char* what) {
  int have = nccl_runtime_version();
  check_state(have >= needed, op, what, " needs NCCL ", needed / 10000, ".", needed / 100 % 100,
              " or newer; the NCCL library loaded is ", have / 10000, ".", have / 100 % 100, ".",
              have % 100);
}
constexpr int kNcclBf16AndAvg = 21000;

ncclDataType_t nccl_type(const char* op, DType dtype) {
  if (dtype == kBFloat16) check_nccl_at_least(op, kNcclBf16AndAvg, "bfloat16");
  switch (dtype) {
    case kFloat32:
      return ncclFloat32;
    case kFloat64:
      return ncclFloat64;
    case kFloat16:
      return ncclFloat16;
    case kBFloat16:
      return ncclBfloat16;
    case kInt32:
      return ncclInt32;
    case kInt64:
      return ncclInt64;
    case kUInt8:
      return ncclUint8;
    case kInt8:
      return ncclInt8;
    case kBool:
      return ncclUint8;  // max/min of 0/1 bytes are logical or/and
  }
  throw TypeError(error_message(op, "the nccl backend has no type for ", dtype));
}

ncclRedOp_t nccl_op(const char* op, DType dtype, ReduceOp reduce) {
  check_type(dtype != kBool || reduce == ReduceOp::Max || reduce == ReduceOp::Min, op,
             "bool tensors can only be reduced with max (any) or min (all); got ",
             reduce_op_name(reduce));
  check_type(reduce != ReduceOp::Avg || is_floating(dtype), op,
             "avg needs a floating-point tensor; got ", dtype);
  switch (reduce) {
    case ReduceOp::Sum:
      return ncclSum;
    case ReduceOp::Avg:
      check_nccl_at_least(op, kNcclBf16AndAvg, "ReduceOp.AVG");
      return ncclAvg;
    case ReduceOp::Max:
      return ncclMax;
    case ReduceOp::Min:
      return ncclMin;
  }
  return ncclSum;
}

// The communicator, shared by the group and its Works, aborted at most once.
struct NcclComm {
  ncclComm_t comm = nullptr;
  int device = 0;
  std::mutex mutex;
  bool aborted = false;

  void abort() {
    std::lock_guard<std::mutex> lock(mutex);
    if (aborted || comm == nullptr) return;
    aborted = true;
    ncclCommAbort(comm);  // best effort: we are already reporting a failure
  }
};

class NcclWork : public Work {
 public:
  NcclWork(const char* op, Seconds timeout, std::shared_ptr<GroupHealth> health,
           std::shared_ptr<NcclComm> comm, cudaEvent_t done, std::vector<Tensor> keep_alive)
      : Work(op, timeout, std::move(health)),
        comm_(std::move(comm)),
        done_(done),
        keep_alive_(std::move(keep_alive)) {}
  ~NcclWork() override {
    cuda::DeviceGuard guard(comm_->device);
    cudaEventDestroy(done_);
  }

 protected:
  bool poll() override {
    cuda::DeviceGuard guard(comm_->device);
    cudaError_t state = cudaEventQuery(done_);
    if (state == cudaSuccess) return true;
    if (state != cudaErrorNotReady) WICK_CUDA_CHECK(state);
    (void)cudaGetLastError();  // cudaErrorNotReady is not an error; clear it
    ncclResult_t async = ncclSuccess;
    WICK_NCCL_CHECK(op().c_str(), ncclCommGetAsyncError(comm_->comm, &async));
    if (async != ncclSuccess && async != ncclInProgress) {
      check_nccl(async, op().c_str(), "the NCCL communicator (asynchronous error)", __FILE__,
                 __LINE__);
    }
    return false;
  }
  void finish() override { keep_alive_.clear(); }
  void abort() override { comm_->abort(); }

 private:
  std::shared_ptr<NcclComm> comm_;
  cudaEvent_t done_;
  std::vector<Tensor> keep_alive_;
};

class ProcessGroupNCCL : public ProcessGroup {
 public:
  ProcessGroupNCCL(std::shared_ptr<ProcessGroup> bootstrap, int rank, int size, int local_rank,
                   int local_size, Seconds timeout, int device, const ncclUniqueId& id)
      : ProcessGroup(rank, size, local_rank, local_size, timeout),
        bootstrap_(std::move(bootstrap)),
        comm_(std::make_shared<NcclComm>()) {
    comm_->device = device;
    cuda::DeviceGuard guard(device);
    init_communicator(size, id, rank, timeout);
    stream_ = cuda::Stream::create(device);
  }

  ~ProcessGroupNCCL() override {
    cuda::DeviceGuard guard(comm_->device);
    if (broken()) {
      comm_->abort();
    } else {
      for (auto& work : outstanding_) {
        try {
          work->wait();
        } catch (const std::exception&) {
        }
      }
      if (!broken()) ncclCommDestroy(comm_->comm);
    }
  }

  std::string backend() const override { return "nccl"; }
  Device device() const override { return Device(kCUDA, comm_->device); }

  std::shared_ptr<Work> all_reduce(const Tensor& tensor, ReduceOp op) override {
    const char* name = "all_reduce";
    check(name, tensor);
    if (all_reduce_algorithm() == AllReduceAlgorithm::Ring) {
      return ring_all_reduce(*this, tensor, op);
    }
    ncclRedOp_t red = nccl_op(name, tensor.dtype(), op);
    return launch(name, {tensor}, [&](cudaStream_t s) {
      return ncclAllReduce(tensor.data_ptr(), tensor.data_ptr(), tensor.numel(),
                           nccl_type(name, tensor.dtype()), red, comm_->comm, s);
    });
  }

  std::shared_ptr<Work> broadcast(const Tensor& tensor, int root) override {
    const char* name = "broadcast";
    check(name, tensor);
    check_root(name, root);
    return launch(name, {tensor}, [&](cudaStream_t s) {
      return ncclBroadcast(tensor.data_ptr(), tensor.data_ptr(), tensor.numel(),
                           nccl_type(name, tensor.dtype()), root, comm_->comm, s);
    });
  }

  std::shared_ptr<Work> all_gather(const Tensor& output, const Tensor& input) override {
    const char* name = "all_gather";
    check(name, output);
    check(name, input);
    check_gather_shapes(name, output, input);
    return launch(name, {output, input}, [&](cudaStream_t s) {
      return ncclAllGather(input.data_ptr(), output.data_ptr(), input.numel(),
                           nccl_type(name, input.dtype()), comm_->comm, s);
    });
  }

  std::shared_ptr<Work> reduce_scatter(const Tensor& output, const Tensor& input,
                                       ReduceOp op) override {
    const char* name = "reduce_scatter";
    check(name, output);
    check(name, input);
    check_gather_shapes(name, input, output);
    ncclRedOp_t red = nccl_op(name, input.dtype(), op);
    return launch(name, {output, input}, [&](cudaStream_t s) {
      return ncclReduceScatter(input.data_ptr(), output.data_ptr(), output.numel(),
                               nccl_type(name, input.dtype()), red, comm_->comm, s);
    });
  }

  // Both halves in one NCCL group: queued one after the other on one stream, two ranks sending
  // to each other first would each wait for the other's receive.
  std::shared_ptr<Work> send_recv(const Tensor& send, int dst, const Tensor& recv, int src,
                                  int /*tag: one stream keeps the order*/) override {
    const char* name = "send_recv";
    check(name, send);
    check(name, recv);
    check_root(name, dst);
    check_root(name, src);
    check_type(send.dtype() == recv.dtype(), name,
               "the tensors have different dtypes: ", send.dtype(), " and ", recv.dtype());
    ncclDataType_t type = nccl_type(name, send.dtype());
    return launch(name, {send, recv}, [&](cudaStream_t s) {
      ncclResult_t rc = ncclGroupStart();
      if (rc == ncclSuccess)
        rc = ncclSend(send.data_ptr(), send.numel(), type, dst, comm_->comm, s);
      if (rc == ncclSuccess)
        rc = ncclRecv(recv.data_ptr(), recv.numel(), type, src, comm_->comm, s);
      ncclResult_t end = ncclGroupEnd();
      return rc != ncclSuccess ? rc : end;
    });
  }

  // NCCL has no barrier: an all-reduce of one element is one (PyTorch does the same).
  std::shared_ptr<Work> barrier() override {
    Tensor one = zeros({1}, Device(kCUDA, comm_->device));
    return all_reduce(one, ReduceOp::Sum);
  }

 private:
  void check(const char* op, const Tensor& t) const {
    check_tensor(op, t, kCUDA);
    check_value(t.device().index == comm_->device, op,
                "this rank's NCCL communicator is on cuda:", comm_->device, "; got a tensor on ",
                t.device());
  }

  template <class Call>
  std::shared_ptr<Work> launch(const char* op, std::vector<Tensor> keep, Call call) {
    cuda::DeviceGuard guard(comm_->device);
    // Note [NCCL streams]: the collective waits for the work queued on the current stream.
    cudaStream_t compute = static_cast<cudaStream_t>(cuda::Stream::current(comm_->device).handle());
    cudaStream_t nccl = static_cast<cudaStream_t>(stream_.handle());
    cudaEvent_t ready = nullptr, done = nullptr;
    WICK_CUDA_CHECK(cudaEventCreateWithFlags(&ready, cudaEventDisableTiming));
    WICK_CUDA_CHECK(cudaEventRecord(ready, compute));
    WICK_CUDA_CHECK(cudaStreamWaitEvent(nccl, ready, 0));
    WICK_CUDA_CHECK(cudaEventDestroy(ready));  // released once the wait has passed
    WICK_NCCL_CHECK(op, call(nccl));
    WICK_CUDA_CHECK(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
    WICK_CUDA_CHECK(cudaEventRecord(done, nccl));
    auto work = std::make_shared<NcclWork>(op, timeout(), health_, comm_, done, std::move(keep));
    // Note [NCCL buffers stay alive]: keep unfinished works; drop the ones seen done.
    outstanding_.erase(std::remove_if(outstanding_.begin(), outstanding_.end(),
                                      [](const std::shared_ptr<NcclWork>& w) {
                                        try {
                                          return w->is_completed();
                                        } catch (const std::exception&) {
                                          return false;  // its waiter will see the error
                                        }
                                      }),
                       outstanding_.end());
    outstanding_.push_back(work);
    return work;
  }

  // Note [bounded NCCL set-up]: ncclCommInitRank blocks until every rank has joined, so a rank
  // that never comes would hang this one for ever. The communicator is created non-blocking
  // (ncclConfig_t::blocking = 0) and polled with ncclCommGetAsyncError until it is ready, an
  // error, or the group's timeout passes; then it is aborted and the error says which.
  void init_communicator(int size, const ncclUniqueId& id, int rank, Seconds timeout) {
    const char* op = "init_process_group";
    if (nccl_runtime_version() < 21400) {  // no non-blocking set-up before NCCL 2.14
      WICK_NCCL_CHECK(op, ncclCommInitRank(&comm_->comm, size, id, rank));
      return;
    }
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;
    ncclUniqueId unique = id;
    ncclResult_t result = ncclCommInitRankConfig(&comm_->comm, size, unique, rank, &config);
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (result == ncclInProgress) {
      if (std::chrono::steady_clock::now() > deadline) {
        comm_->abort();
        throw CommTimeoutError(error_message(
            op, "NCCL communicator set-up did not finish within ", timeout.count(), " s (rank ",
            rank, " of ", size, "); did every rank start and reach init_process_group?"));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      WICK_NCCL_CHECK(op, ncclCommGetAsyncError(comm_->comm, &result));
    }
    if (result != ncclSuccess) {
      comm_->abort();
      check_nccl(result, op, "ncclCommInitRankConfig", __FILE__, __LINE__);
    }
  }

  std::shared_ptr<ProcessGroup> bootstrap_;  // MPI on the CPU; null for a one-process group
  std::shared_ptr<NcclComm> comm_;
  cuda::Stream stream_;
  std::vector<std::shared_ptr<NcclWork>> outstanding_;
};

}  // namespace

std::shared_ptr<ProcessGroup> make_nccl_process_group(const InitOptions& options) {
  const char* op = "init_process_group";
  int count = cuda::device_count();
  check_state(count > 0, op,
              "the nccl backend needs a CUDA device and none is available; use the mpi backend "
              "for CPU tensors");
  // A one-process group started without mpirun needs no bootstrap; otherwise MPI carries the id.
  std::shared_ptr<ProcessGroup> bootstrap;
  int rank = 0, size = 1, local_rank = 0, local_size = 1;
  if (!(options.world_size == 1 && !is_launched_by_mpi())) {
    bootstrap = make_mpi_process_group(options);
    rank = bootstrap->rank(), size = bootstrap->size();
    local_rank = bootstrap->local_rank(), local_size = bootstrap->local_size();
  }
  int device = options.device >= 0 ? options.device : local_rank;
  check_state(options.device >= 0 || local_size <= count, op, local_size,
              " ranks run on this machine but it has ", count, " GPU", count == 1 ? "" : "s",
              "; NCCL needs one GPU per rank (two ranks on one GPU fail with 'Duplicate GPU "
              "detected' or hang). Start at most ",
              count, " ranks per machine");
  check_index(device < count, op, "device ", device, " does not exist; this machine has ", count,
              " GPU", count == 1 ? "" : "s");

  // This rank's GPU becomes its current device (PyTorch's scripts call
  // torch.cuda.set_device(local_rank)): tensors made with .to("cuda") or device "cuda" then land
  // on the GPU the communicator uses, not on device 0 in every rank.
  cuda::set_device(device);
  ncclUniqueId id{};
  if (rank == 0) WICK_NCCL_CHECK(op, ncclGetUniqueId(&id));
  if (bootstrap) {
    Tensor blob = zeros({static_cast<int64_t>(sizeof(id))}, kUInt8);
    std::memcpy(blob.data_ptr(), &id, sizeof(id));
    bootstrap->broadcast(blob, 0)->wait();
    std::memcpy(&id, blob.data_ptr(), sizeof(id));
  }
  return std::make_shared<ProcessGroupNCCL>(bootstrap, rank, size, local_rank, local_size,
                                            options.timeout, device, id);
}

bool nccl_built() { return true; }
int nccl_runtime_version_code() { return nccl_runtime_version(); }
int nccl_header_version_code() { return NCCL_VERSION_CODE; }

}  // namespace wick::distributed::detail
