// The training loop that train_mnist and train_resnet share, so the two programs differ only in
// their model, data and optimizer: the common flags, mixed precision (--amp), data-parallel set-up
// (--ddp), the epoch loop with its progress bar, the metrics CSV and SVG chart, checkpoints and
// --resume, a one-step timeline (--timeline), and the closing summary. examples/common/training.py
// is the same loop for the Python twins. Nothing here is part of the library.
//
//   examples::Flags flags("train_x", "...");
//   examples::add_training_flags(flags, {"3", "64", "0.001", "runs/x_metrics.csv"});
//   ...program's own flags...
//   if (!examples::parse_training_flags(flags, argc, argv)) return 0;
//   examples::Trainer trainer("train_x", flags);        // threads, device, --ddp's process group
//   manual_seed(seed); model = ...; optimizer = ...;     // the program's own
//   data::DataLoader train(train_set, trainer.train_loader_options(train_set->size()));
//   data::DataLoader test(test_set, trainer.test_loader_options(500));
//   trainer.fit(model, *optimizer, scheduler.get(), train, test, "resnet20");
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "core/device.h"
#include "data/dataloader.h"
#include "examples/common/cli.h"
#include "nn/module.h"
#include "nn/optim.h"

namespace wick::examples {

// The defaults that differ between the training programs.
struct TrainingDefaults {
  std::string epochs = "3", batch_size = "64", lr = "0.001", metrics = "runs/metrics.csv";
};

// --epochs --batch-size --lr --workers --seed --save --resume --metrics --threads --device --amp
// --json --ddp --bucket-cap-mb --ddp-single-bucket --timeout --timeline --timeline-step.
void add_training_flags(Flags& flags, const TrainingDefaults& defaults);

// Flags::parse, letting a bare "--ddp" mean "--ddp mpi". Returns false after --help.
bool parse_training_flags(Flags& flags, int argc, char** argv);

class Trainer {
 public:
  // Applies --threads and --device, checks --amp, and under --ddp joins the process group (so the
  // rank is known before the data is sharded); only rank 0 keeps its stdout.
  Trainer(std::string program, const Flags& flags);
  ~Trainer();
  Trainer(const Trainer&) = delete;
  Trainer& operator=(const Trainer&) = delete;

  Device device() const;  // where the model and batches live (this rank's GPU under --ddp nccl)
  int rank() const;
  int world_size() const;

  // Loader options: --batch-size and --workers, shuffled (or each rank's shard of every epoch
  // under --ddp), pinned for a GPU. Each call draws the loader's seed from wick's default
  // generator, as a Python DataLoader does, so a program and its Python twin that seed and build
  // their model alike get the same batches and the same crops and flips.
  data::DataLoaderOptions train_loader_options(size_t dataset_size) const;
  data::DataLoaderOptions test_loader_options(int64_t batch_size) const;
  // Optimizer steps in an epoch of `batches` batches: one per --accumulate batches (a schedule's
  // length counts these).
  int64_t optimizer_steps(int64_t batches) const;

  // Resumes from --resume, wraps the model in DDP under --ddp, then trains --epochs epochs:
  // cross-entropy on the logits, the optimizer and then the scheduler (if any) stepped every
  // batch, so a schedule counts steps, not epochs; evaluates on `test` after each epoch; writes the
  // CSV, the chart and --save's checkpoints; ends with the summary (and the JSON line under
  // --json).
  void fit(std::shared_ptr<nn::Module> model, optim::Optimizer& optimizer,
           optim::LRScheduler* scheduler, data::DataLoader& train, data::DataLoader& test,
           const std::string& model_name);

  struct State;  // the run's settings and counters (trainer.cpp)

 private:
  std::unique_ptr<State> state_;
};

}  // namespace wick::examples
