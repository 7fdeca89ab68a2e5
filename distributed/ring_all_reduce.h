// wick's own ring all-reduce, built from point-to-point messages, for study beside MPI's and
// NCCL's (benchmarks/ring_all_reduce.py measures the three; tutorials/17-sharded-optimizer reads
// it). ProcessGroup::all_reduce runs it when the group's algorithm is AllReduceAlgorithm::Ring
// (InitOptions or WICK_ALL_REDUCE_ALGORITHM=ring), so DDP and FSDP can run on it unchanged.
//
// Note [ring all-reduce]
// The N ranks stand in a ring; rank r sends to r+1 and receives from r-1. The tensor is cut into
// N chunks. Reduce-scatter: in step s (s = 0..N-2) rank r sends chunk (r-s) and adds what it
// receives into chunk (r-s-1); after N-1 steps rank r holds chunk (r+1) summed over all ranks.
// All-gather: in step s rank r sends its finished chunk (r+1-s) and receives the finished chunk
// (r-s) in place. Each rank sends 2(N-1)/N of the tensor in all, whatever N is - the bandwidth
// optimum that made Baidu's and Horovod's ring the standard (design-facts: NCCL rings and trees).
// Every step is one send_recv, so neighbours never wait for each other to post.
//
// The ring is a Work whose poll() moves it on: when a step's messages are done it reduces the
// received chunk and posts the next step. On MPI the group's progress thread polls it, so the
// ring advances while the caller computes (DDP's overlap); elsewhere the waiter's polls do.
#pragma once

#include <memory>

#include "distributed/process_group.h"

namespace wick::distributed {

// In place on a contiguous tensor, like ProcessGroup::all_reduce; every rank calls it in the
// same order as its other collectives.
std::shared_ptr<Work> ring_all_reduce(ProcessGroup& group, const Tensor& tensor,
                                      ReduceOp op = ReduceOp::Sum);

}  // namespace wick::distributed
