#include "nn/checkpoint.h"

#include <cstring>

#include "core/generator.h"
#include "core/ops.h"
#include "nn/serialization.h"

namespace wick::nn {

namespace {

constexpr const char* kFormat = "wick-training-checkpoint";

void add_prefixed(StateDict& out, const std::string& prefix, const StateDict& part) {
  for (const auto& [name, t] : part) out[prefix + name] = t;
}

StateDict strip_prefix(const StateDict& all, const std::string& prefix) {
  StateDict part;
  for (const auto& [name, t] : all) {
    if (name.compare(0, prefix.size(), prefix) == 0) part[name.substr(prefix.size())] = t;
  }
  return part;
}

int64_t parse_int(const std::string& path, const std::map<std::string, std::string>& metadata,
                  const std::string& key) {
  auto it = metadata.find(key);
  check_value(it != metadata.end(), "load_checkpoint", path, ": metadata has no '", key, "'");
  try {
    size_t used = 0;
    int64_t value = std::stoll(it->second, &used);
    if (used == it->second.size()) return value;
  } catch (const std::exception&) {
  }
  throw_value_error("load_checkpoint", path, ": metadata '", key, "' is not an integer: '",
                    it->second, "'");
}

// Generator seeds are unsigned 64-bit; tensors hold int64, so the bits are stored as they are.
Tensor u64_tensor(uint64_t value) {
  int64_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return scalar_tensor(bits);
}

uint64_t u64_value(const Tensor& t) {
  int64_t bits = t.item<int64_t>();
  uint64_t value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

}  // namespace

void save_checkpoint(const std::string& path, const Module& model,
                     const optim::Optimizer& optimizer, const optim::LRScheduler* scheduler,
                     const TrainingState& state) {
  StateDict tensors;
  add_prefixed(tensors, "model.", model.state_dict());
  add_prefixed(tensors, "optimizer.", optimizer.state_dict());
  if (scheduler != nullptr) add_prefixed(tensors, "scheduler.", scheduler->state_dict());
  add_prefixed(tensors, "extra.", state.extra);
  PhiloxState rng = default_generator().state();
  tensors["rng.seed"] = u64_tensor(rng.seed);
  tensors["rng.offset"] = u64_tensor(rng.offset);
  std::map<std::string, std::string> metadata = state.info;
  metadata["format"] = kFormat;
  metadata["epoch"] = std::to_string(state.epoch);
  metadata["global_step"] = std::to_string(state.global_step);
  save_safetensors(path, tensors, metadata);
}

TrainingState load_checkpoint(const std::string& path, Module& model, optim::Optimizer& optimizer,
                              optim::LRScheduler* scheduler) {
  SafetensorsFile file = load_safetensors(path);
  auto format = file.metadata.find("format");
  check_value(format != file.metadata.end() && format->second == kFormat, "load_checkpoint", path,
              ": not a wick training checkpoint (metadata 'format' is '",
              format == file.metadata.end() ? std::string("missing") : format->second, "')");
  TrainingState state;
  state.epoch = parse_int(path, file.metadata, "epoch");
  state.global_step = parse_int(path, file.metadata, "global_step");
  check_value(state.epoch >= 0 && state.global_step >= 0, "load_checkpoint", path, ": epoch ",
              state.epoch, " and global_step ", state.global_step, " must not be negative");
  for (const auto& [key, value] : file.metadata) {
    if (key != "format" && key != "epoch" && key != "global_step") state.info[key] = value;
  }
  StateDict model_state = strip_prefix(file.tensors, "model.");
  StateDict optimizer_state = strip_prefix(file.tensors, "optimizer.");
  StateDict scheduler_state = strip_prefix(file.tensors, "scheduler.");
  state.extra = strip_prefix(file.tensors, "extra.");
  auto seed = file.tensors.find("rng.seed"), offset = file.tensors.find("rng.offset");
  check_value(seed != file.tensors.end() && offset != file.tensors.end(), "load_checkpoint", path,
              ": the random generator's state is missing");
  for (auto rng : {seed, offset}) {
    check_value(rng->second.dtype() == kInt64 && rng->second.numel() == 1, "load_checkpoint", path,
                ": '", rng->first, "' must be one int64; it is ", rng->second.dtype(), " of shape ",
                rng->second.shape());
  }
  check_value(scheduler == nullptr || !scheduler_state.empty(), "load_checkpoint", path,
              ": a scheduler was given but the checkpoint has no scheduler state");

  // Every part is checked against the object it restores into before any of them changes, so
  // that a checkpoint of another model, or one with a missing or out-of-range entry, leaves
  // everything as it was (all or nothing).
  try {
    model.check_state_dict(model_state);
    optimizer.check_state_dict(optimizer_state);
    if (scheduler != nullptr) scheduler->check_state_dict(scheduler_state);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(error_message("load_checkpoint", path, ": ", e.what()));
  } catch (const TypeError& e) {
    throw TypeError(error_message("load_checkpoint", path, ": ", e.what()));
  }
  optimizer.load_state_dict(optimizer_state);
  model.load_state_dict(model_state);
  if (scheduler != nullptr) scheduler->load_state_dict(scheduler_state);
  default_generator().set_state(
      {u64_value(seed->second.reshape({})), u64_value(offset->second.reshape({}))});
  return state;
}

}  // namespace wick::nn
