// Training checkpoints: everything needed to resume training exactly where it stopped - the
// model's parameters and buffers, the optimizer's state and hyperparameters, the learning-rate
// schedule's position, the random generator's state, and the epoch - in one safetensors file.
//
// Tensors are stored under "model.", "optimizer.", "scheduler." and "extra." prefixes and
// "rng.seed" / "rng.offset"; the epoch, step and free-form info go in the file's metadata, with
// "format": "wick-training-checkpoint". Writing is atomic (nn/serialization.h), and loading checks
// every part against the objects it restores into before changing any of them.
#pragma once

#include <map>
#include <string>

#include "nn/module.h"
#include "nn/optim.h"

namespace wick::nn {

struct TrainingState {
  int64_t epoch = 0;                        // epochs completed
  int64_t global_step = 0;                  // optimizer steps taken
  std::map<std::string, std::string> info;  // anything else worth recording (command line, ...)
  StateDict extra;  // other state to restore, e.g. a GradScaler's (saved under "extra.")
};

// `scheduler` may be null.
void save_checkpoint(const std::string& path, const Module& model,
                     const optim::Optimizer& optimizer, const optim::LRScheduler* scheduler,
                     const TrainingState& state);

// Restores model, optimizer, scheduler (may be null) and the default generator; returns the
// saved TrainingState. Throws, leaving everything unchanged, if the file is not a training
// checkpoint or does not fit these objects.
TrainingState load_checkpoint(const std::string& path, Module& model, optim::Optimizer& optimizer,
                              optim::LRScheduler* scheduler);

}  // namespace wick::nn
