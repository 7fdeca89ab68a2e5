// Data-parallel training: process groups (MPI for CPU tensors, NCCL for CUDA tensors), the
// gradient Reducer, DistributedDataParallel and the DDP timeline. The DistributedSampler that
// shards a dataset across ranks is in data/distributed_sampler.h.
#pragma once

#include "data/distributed_sampler.h"
#include "distributed/ddp.h"
#include "distributed/process_group.h"
#include "distributed/reducer.h"
#include "distributed/timeline.h"
