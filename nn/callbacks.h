// The callbacks of KerasModel::fit (nn/fit.h), with Keras's names, arguments and behaviour - the
// C++ twins of python/wick/keras/callbacks.py. Epochs count from 0 in the hooks and in the CSV,
// from 1 in the progress line and in ModelCheckpoint's "{epoch}", as in Keras.
#pragma once

#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "nn/fit.h"
#include "nn/optim.h"

namespace wick::nn {

// Stops training once `monitor` has not improved by more than min_delta for `patience` epochs.
// mode: "min", "max", or "auto" (max for names ending in acc / accuracy, else min). With
// restore_best_weights the module gets back the weights of its best epoch when training ends.
// A monitor missing from the logs (no validation data?) is reported on stderr and ignored.
class EarlyStopping : public Callback {
 public:
  explicit EarlyStopping(std::string monitor = "val_loss", int64_t patience = 0,
                         double min_delta = 0.0, std::string mode = "auto",
                         bool restore_best_weights = false, int verbose = 0);
  void on_train_begin(KerasModel& model) override;
  void on_epoch_end(KerasModel& model, int64_t epoch, Logs& logs) override;
  void on_train_end(KerasModel& model, const Logs& logs) override;
  int64_t stopped_epoch() const { return stopped_epoch_; }  // 0 if it never stopped training
  int64_t best_epoch() const { return best_epoch_; }
  double best() const { return best_; }

 private:
  bool improved(double current) const;
  std::string monitor_, mode_;
  int64_t patience_;
  double min_delta_;
  bool restore_best_weights_;
  int verbose_;
  int64_t wait_ = 0, stopped_epoch_ = 0, best_epoch_ = 0;
  double best_ = 0;
  bool has_best_ = false;
  StateDict best_weights_;
};

// Saves after every epoch to filepath with "{epoch}" (1-based; "{epoch:02d}" pads) and
// "{<log>}" / "{<log>:.4f}" replaced ("ckpt-{epoch:02d}-{val_loss:.3f}.safetensors"); with
// save_best_only, only when `monitor` improves. save_weights_only: the module's state dict
// (save_safetensors); otherwise a training checkpoint of module and optimizer (save_checkpoint,
// nn/checkpoint.h), which load_checkpoint resumes.
class ModelCheckpoint : public Callback {
 public:
  explicit ModelCheckpoint(std::string filepath, std::string monitor = "val_loss",
                           bool save_best_only = false, bool save_weights_only = true,
                           std::string mode = "auto", int verbose = 0);
  void on_epoch_end(KerasModel& model, int64_t epoch, Logs& logs) override;
  // The path `filepath` names for this epoch and these logs.
  std::string path_for(int64_t epoch, const Logs& logs) const;

 private:
  std::string filepath_, monitor_, mode_;
  bool save_best_only_, save_weights_only_;
  int verbose_;
  bool has_best_ = false;
  double best_ = 0;
};

// One row per epoch: "epoch" (from 0) and every log, in sorted order (Keras's columns).
class CSVLogger : public Callback {
 public:
  explicit CSVLogger(std::string filename, char separator = ',', bool append = false);
  ~CSVLogger() override;
  void on_train_begin(KerasModel& model) override;
  void on_epoch_end(KerasModel& model, int64_t epoch, Logs& logs) override;
  void on_train_end(KerasModel& model, const Logs& logs) override;

 private:
  void close();
  std::string filename_;
  char separator_;
  bool append_, header_written_ = false;
  std::vector<std::string> keys_;
  std::FILE* file_ = nullptr;
};

// Sets every parameter group's rate at the start of each epoch to schedule(epoch, lr), or steps
// an optim::LRScheduler built on the compiled optimizer after every epoch (every batch with
// per_batch). Adds the rate in use at the end of the epoch to the logs as "learning_rate".
class LearningRateScheduler : public Callback {
 public:
  using Schedule = std::function<double(int64_t epoch, double lr)>;
  explicit LearningRateScheduler(Schedule schedule, int verbose = 0);
  explicit LearningRateScheduler(std::shared_ptr<optim::LRScheduler> scheduler,
                                 bool per_batch = false);
  void on_epoch_begin(KerasModel& model, int64_t epoch) override;
  void on_batch_end(KerasModel& model, int64_t batch, const Logs& logs) override;
  void on_epoch_end(KerasModel& model, int64_t epoch, Logs& logs) override;

 private:
  Schedule schedule_;
  std::shared_ptr<optim::LRScheduler> scheduler_;
  bool per_batch_ = false;
  int verbose_ = 0;
};

}  // namespace wick::nn
