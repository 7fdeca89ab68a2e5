// Lab 08: data parallelism from its two parts.
//
//  1. ring_all_reduce: the bandwidth-optimal all-reduce NCCL and Horovod use, written with
//     point-to-point messages only. N ranks, data cut into N chunks. Reduce-scatter: in N-1
//     steps each rank sends one chunk to its right neighbour and adds the chunk arriving from
//     its left, so rank r ends holding the full sum of chunk (r + 1) % N. All-gather: N-1 more
//     steps pass the finished chunks around the ring. Each rank sends 2 (N-1)/N of the data,
//     whatever N is (nccl-tests' "bus bandwidth" factor).
//  2. GradBucketer: PyTorch DDP's reducer in miniature (distributed/reducer.h is wick's full
//     one). Parameters are grouped in reverse order (the order backward produces gradients)
//     into flat buckets of about cap bytes; a post-accumulate-grad hook copies each gradient into
//     its bucket the moment it is final, and when a bucket is full its all-reduce is launched,
//     asynchronously, while backward computes the earlier layers' gradients.
#pragma once

#include <mpi.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/tensor.h"
#include "distributed/process_group.h"

namespace lab08 {

// In place: every rank ends with the elementwise sum over ranks of data[0, n).
void ring_all_reduce(float* data, int64_t n, MPI_Comm comm);

// Chunk c of n elements cut into `parts` (the first n % parts chunks one element longer):
// returns {offset, length}.
std::pair<int64_t, int64_t> chunk(int64_t n, int parts, int c);

// Buckets of parameter indices, visiting parameters last to first; a bucket closes once it holds
// at least its limit in bytes: first_cap for the first bucket, cap for the others. Parameters are
// never split.
std::vector<std::vector<size_t>> assign_buckets(const std::vector<size_t>& bytes, size_t cap,
                                                size_t first_cap);

using Clock = std::chrono::steady_clock;

struct BucketTimes {
  // Since start_step(): all gradients in, all-reduce launched, seen complete by finish().
  double ready_ms = 0, launched_ms = 0, done_ms = 0;
};

class GradBucketer {
 public:
  GradBucketer(std::vector<wick::Tensor> params, size_t cap, size_t first_cap);
  void start_step() { t0_ = Clock::now(); }
  // Called by the hook of parameter `index` once its .grad is final.
  void on_grad_ready(size_t index);
  // After backward: waits for every all-reduce and writes the averages into the .grad tensors.
  void finish();

  double ms_since_start() const {
    return std::chrono::duration<double, std::milli>(Clock::now() - t0_).count();
  }

  std::vector<wick::Tensor> params;
  std::vector<std::vector<size_t>> buckets;  // parameter indices, in launch order
  std::vector<wick::Tensor> flat;            // one float32 buffer per bucket
  std::vector<size_t> bucket_of;             // parameter -> its bucket
  std::vector<int64_t> offset_of;            // parameter -> its first element in flat[bucket]
  std::vector<size_t> pending;               // per bucket: gradients not yet arrived
  std::vector<std::shared_ptr<wick::distributed::Work>> works;  // per bucket, once launched
  size_t next_to_launch = 0;  // buckets launch strictly in index order
  std::vector<BucketTimes> times;

 private:
  Clock::time_point t0_ = Clock::now();
};

}  // namespace lab08
