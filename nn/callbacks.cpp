#include "nn/callbacks.h"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>

#include "core/error.h"
#include "nn/checkpoint.h"
#include "nn/serialization.h"

namespace wick::nn {

namespace {

std::string resolve_mode(const char* owner, const std::string& mode, const std::string& monitor) {
  check_value(mode == "auto" || mode == "min" || mode == "max", owner,
              "mode must be 'auto', 'min' or 'max'; got '", mode, "'");
  if (mode != "auto") return mode;
  auto ends_with = [&](const std::string& end) {
    return monitor.size() >= end.size() &&
           monitor.compare(monitor.size() - end.size(), end.size(), end) == 0;
  };
  return ends_with("acc") || ends_with("accuracy") ? "max" : "min";
}

// logs[monitor], or nullptr after a warning naming what the logs do have (as Keras warns).
const double* monitored(const char* owner, const std::string& monitor, const Logs& logs) {
  auto it = logs.find(monitor);
  if (it != logs.end()) return &it->second;
  std::string have;
  for (const auto& [k, v] : logs) have += (have.empty() ? "" : ", ") + k;
  std::fprintf(stderr,
               "[%s] warning: the metric '%s' is not in the logs, which have: %s; is "
               "validation_data missing?\n",
               owner, monitor.c_str(), have.c_str());
  return nullptr;
}

StateDict snapshot(const Module& module) {
  StateDict copy;
  for (const auto& [name, t] : module.state_dict()) copy[name] = t.detach().clone();
  return copy;
}

void make_parent_dirs(const std::string& path) {
  std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent);
}

// Shortest text that reads back as the same double (Python's repr, which CSVLogger's twin uses).
std::string exact(double value) {
  char text[32];
  auto result = std::to_chars(text, text + sizeof(text), value);
  return std::string(text, result.ptr);
}

// One "{name}" or "{name:spec}" field of a checkpoint path; spec is a printf conversion without
// the '%' ("02d", ".4f"), d for integers and f, e or g for reals.
std::string format_field(const std::string& field, int64_t epoch, const Logs& logs,
                         const std::string& filepath) {
  size_t colon = field.find(':');
  std::string name = field.substr(0, colon),
              spec = colon == std::string::npos ? "" : field.substr(colon + 1);
  bool is_epoch = name == "epoch";
  auto it = logs.find(name);
  std::string have = "epoch";
  for (const auto& [k, v] : logs) have += ", " + k;
  check_value(is_epoch || it != logs.end(), "ModelCheckpoint", "cannot format filepath '", filepath,
              "': '", name, "' is neither epoch nor a log (", have, ")");
  char conversion = spec.empty() ? (is_epoch ? 'd' : 'g') : spec.back();
  std::string flags = spec.empty() ? "" : spec.substr(0, spec.size() - 1);
  bool ok = std::strchr(is_epoch ? "d" : "feg", conversion) != nullptr &&
            flags.find_first_not_of("0123456789.+-") == std::string::npos;
  check_value(ok, "ModelCheckpoint", "cannot format filepath '", filepath, "': the format '", spec,
              "' of '", name, "' is not ", is_epoch ? "d (\"02d\")" : "f, e or g (\".4f\")");
  char text[64];
  std::string format = "%" + flags + (is_epoch ? "lld" : std::string(1, conversion));
  if (is_epoch) {
    std::snprintf(text, sizeof(text), format.c_str(), static_cast<long long>(epoch + 1));
  } else {
    std::snprintf(text, sizeof(text), format.c_str(), it->second);
  }
  return text;
}

}  // namespace

// ---- EarlyStopping ------------------------------------------------------------------------------

EarlyStopping::EarlyStopping(std::string monitor, int64_t patience, double min_delta,
                             std::string mode, bool restore_best_weights, int verbose)
    : monitor_(std::move(monitor)),
      mode_(resolve_mode("EarlyStopping", mode, monitor_)),
      patience_(patience),
      min_delta_(std::fabs(min_delta)),
      restore_best_weights_(restore_best_weights),
      verbose_(verbose) {
  check_value(patience >= 0, "EarlyStopping", "patience must be >= 0; got ", patience);
  check_value(std::isfinite(min_delta), "EarlyStopping", "min_delta must be finite; got ",
              min_delta);
}

void EarlyStopping::on_train_begin(KerasModel&) {
  wait_ = stopped_epoch_ = best_epoch_ = 0;
  has_best_ = false;
  best_weights_.clear();
}

bool EarlyStopping::improved(double current) const {
  if (!has_best_) return true;
  return mode_ == "min" ? current + min_delta_ < best_ : current - min_delta_ > best_;
}

void EarlyStopping::on_epoch_end(KerasModel& model, int64_t epoch, Logs& logs) {
  const double* current = monitored("EarlyStopping", monitor_, logs);
  if (!current) return;
  ++wait_;
  if (improved(*current)) {
    best_ = *current, best_epoch_ = epoch, has_best_ = true, wait_ = 0;
    if (restore_best_weights_) best_weights_ = snapshot(model.module());
    return;
  }
  if (wait_ >= patience_ && epoch > 0) {
    stopped_epoch_ = epoch;
    model.stop_training = true;
  }
}

void EarlyStopping::on_train_end(KerasModel& model, const Logs&) {
  if (stopped_epoch_ > 0 && verbose_ > 0) {
    std::printf("Epoch %lld: early stopping\n", static_cast<long long>(stopped_epoch_ + 1));
  }
  if (restore_best_weights_ && !best_weights_.empty()) {
    if (verbose_ > 0) {
      std::printf("Restoring model weights from the end of the best epoch: %lld.\n",
                  static_cast<long long>(best_epoch_ + 1));
    }
    model.module().load_state_dict(best_weights_);
  }
}

// ---- ModelCheckpoint ----------------------------------------------------------------------------

ModelCheckpoint::ModelCheckpoint(std::string filepath, std::string monitor, bool save_best_only,
                                 bool save_weights_only, std::string mode, int verbose)
    : filepath_(std::move(filepath)),
      monitor_(std::move(monitor)),
      mode_(resolve_mode("ModelCheckpoint", mode, monitor_)),
      save_best_only_(save_best_only),
      save_weights_only_(save_weights_only),
      verbose_(verbose) {
  check_value(!filepath_.empty(), "ModelCheckpoint", "filepath is empty");
}

std::string ModelCheckpoint::path_for(int64_t epoch, const Logs& logs) const {
  std::string path;
  for (size_t i = 0; i < filepath_.size(); ++i) {
    char c = filepath_[i];
    if ((c == '{' || c == '}') && i + 1 < filepath_.size() && filepath_[i + 1] == c) {
      path += c, ++i;  // "{{" and "}}" are literal braces, as in Python's str.format
    } else if (c == '{') {
      size_t end = filepath_.find('}', i);
      check_value(end != std::string::npos, "ModelCheckpoint", "filepath '", filepath_,
                  "' has a '{' without its '}'");
      path += format_field(filepath_.substr(i + 1, end - i - 1), epoch, logs, filepath_);
      i = end;
    } else {
      path += c;
    }
  }
  return path;
}

void ModelCheckpoint::on_epoch_end(KerasModel& model, int64_t epoch, Logs& logs) {
  if (save_best_only_) {
    const double* current = monitored("ModelCheckpoint", monitor_, logs);
    if (!current) return;
    bool better = !has_best_ || (mode_ == "min" ? *current < best_ : *current > best_);
    if (!better) return;
    best_ = *current, has_best_ = true;
  }
  std::string path = path_for(epoch, logs);
  make_parent_dirs(path);
  if (save_weights_only_) {
    save_safetensors(path, model.module().state_dict());
  } else {
    TrainingState state;
    state.epoch = epoch + 1;
    save_checkpoint(path, model.module(), model.optimizer(), nullptr, state);
  }
  if (verbose_ > 0) {
    std::printf("Epoch %lld: saved the model to %s\n", static_cast<long long>(epoch + 1),
                path.c_str());
  }
}

// ---- CSVLogger ----------------------------------------------------------------------------------

CSVLogger::CSVLogger(std::string filename, char separator, bool append)
    : filename_(std::move(filename)), separator_(separator), append_(append) {
  check_value(!filename_.empty(), "CSVLogger", "filename is empty");
}

CSVLogger::~CSVLogger() { close(); }

void CSVLogger::close() {
  if (file_) std::fclose(file_);
  file_ = nullptr;
}

void CSVLogger::on_train_begin(KerasModel&) {
  close();
  make_parent_dirs(filename_);
  std::error_code error;
  header_written_ = append_ && std::filesystem::file_size(filename_, error) > 0 && !error;
  file_ = std::fopen(filename_.c_str(), append_ ? "a" : "w");
  if (!file_) {
    int e = errno;
    throw FileError("[CSVLogger] cannot open " + filename_ + ": " + std::strerror(e), e, filename_);
  }
  keys_.clear();
}

void CSVLogger::on_epoch_end(KerasModel&, int64_t epoch, Logs& logs) {
  if (!file_) return;
  if (keys_.empty()) {
    for (const auto& [k, v] : logs) keys_.push_back(k);  // a std::map: sorted
    if (!header_written_) {
      std::fprintf(file_, "epoch");
      for (const std::string& k : keys_) std::fprintf(file_, "%c%s", separator_, k.c_str());
      std::fprintf(file_, "\n");
      header_written_ = true;
    }
  }
  std::fprintf(file_, "%lld", static_cast<long long>(epoch));
  for (const std::string& k : keys_) {
    auto it = logs.find(k);
    std::fprintf(file_, "%c%s", separator_, it == logs.end() ? "NA" : exact(it->second).c_str());
  }
  std::fprintf(file_, "\n");
  std::fflush(file_);
}

void CSVLogger::on_train_end(KerasModel&, const Logs&) { close(); }

// ---- LearningRateScheduler ----------------------------------------------------------------------

LearningRateScheduler::LearningRateScheduler(Schedule schedule, int verbose)
    : schedule_(std::move(schedule)), verbose_(verbose) {
  check_value(static_cast<bool>(schedule_), "LearningRateScheduler", "the schedule is empty");
}

LearningRateScheduler::LearningRateScheduler(std::shared_ptr<optim::LRScheduler> scheduler,
                                             bool per_batch)
    : scheduler_(std::move(scheduler)), per_batch_(per_batch) {
  check_value(scheduler_ != nullptr, "LearningRateScheduler", "the scheduler is null");
}

void LearningRateScheduler::on_epoch_begin(KerasModel& model, int64_t epoch) {
  if (!schedule_) return;
  auto& groups = model.optimizer().param_groups();
  double lr = schedule_(epoch, groups.at(0).options.at("lr"));
  check_value(std::isfinite(lr) && lr >= 0, "LearningRateScheduler",
              "the schedule returned lr=", lr, " for epoch ", epoch,
              "; it must be finite and >= 0");
  for (optim::ParamGroup& group : groups) group.options["lr"] = lr;
  if (verbose_ > 0) {
    std::printf("Epoch %lld: LearningRateScheduler setting learning rate to %g.\n",
                static_cast<long long>(epoch + 1), lr);
  }
}

void LearningRateScheduler::on_batch_end(KerasModel&, int64_t, const Logs&) {
  if (scheduler_ && per_batch_) scheduler_->step();
}

void LearningRateScheduler::on_epoch_end(KerasModel& model, int64_t, Logs& logs) {
  logs["learning_rate"] = model.optimizer().param_groups().at(0).options.at("lr");
  if (scheduler_ && !per_batch_) scheduler_->step();
}

}  // namespace wick::nn
