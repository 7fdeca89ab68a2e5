// libFuzzer, structure-aware: starts from a valid checkpoint of a small model, optimizer (SGD with
// momentum, Adam or AdamW, after two steps so every state entry exists) and StepLR, mutates its
// entries as FuzzedDataProvider directs - a missing entry, a wrong shape or dtype, NaN, infinite,
// negative or huge values in hyperparameters, steps and indices, an unexpected or renamed entry,
// bad metadata - writes it, and resumes into fresh objects, then trains two steps. A clean error is
// fine; a crash, sanitizer report or leak is a finding. Byte-level fuzzing (fuzz_checkpoint) rarely
// gets past the format checks to these semantic ones.
#include <fuzzer/FuzzedDataProvider.h>

#include <cmath>
#include <limits>
#include <stdexcept>

#include "nn/serialization.h"
#include "tests/fuzz/checkpoint_model.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

using wick::Shape;
using wick::StateDict;
using wick::Tensor;

// A valid checkpoint's tensors and metadata for optimizer `kind`, made once per kind.
const wick::SafetensorsFile& valid_checkpoint(int kind) {
  static wick::SafetensorsFile files[3];
  static bool made[3] = {};
  if (!made[kind]) {
    wick::fuzz::Training training(kind);
    training.step();
    training.step();
    std::string path = wick::fuzz::scratch_dir() + "/valid.safetensors";
    wick::nn::save_checkpoint(path, *training.model, *training.optimizer, training.scheduler.get(),
                              wick::nn::TrainingState{2, 2, {}, {}});
    files[kind] = wick::load_safetensors(path);
    made[kind] = true;
  }
  return files[kind];
}

double special_value(FuzzedDataProvider& in) {
  constexpr double kValues[] = {std::numeric_limits<double>::quiet_NaN(),
                                std::numeric_limits<double>::infinity(),
                                -std::numeric_limits<double>::infinity(),
                                -1.0,
                                -5.0,
                                0.0,
                                1.0,
                                1e30,
                                -1e30,
                                2.0,
                                9.2e18,
                                -9.3e18};
  return in.ConsumeBool() ? in.PickValueInArray(kValues) : in.ConsumeFloatingPoint<double>();
}

Tensor random_shape_like(FuzzedDataProvider& in, const Tensor& t) {
  Shape shape;
  int rank = in.ConsumeIntegralInRange(0, 3);
  for (int i = 0; i < rank; ++i) shape.push_back(in.ConsumeIntegralInRange(0, 5));
  return wick::zeros(shape, t.dtype());
}

// One mutation of the checkpoint's tensors or metadata.
void mutate(FuzzedDataProvider& in, StateDict& tensors, std::map<std::string, std::string>& meta) {
  if (tensors.empty()) return;
  auto it = tensors.begin();
  std::advance(it, in.ConsumeIntegralInRange<size_t>(0, tensors.size() - 1));
  switch (in.ConsumeIntegralInRange(0, 6)) {
    case 0:  // a missing entry
      tensors.erase(it);
      break;
    case 1:  // a wrong shape
      it->second = random_shape_like(in, it->second);
      break;
    case 2: {  // a bad value: NaN, infinite, negative, huge (converted to the entry's dtype)
      double v = special_value(in);
      Tensor t = it->second.clone();
      if (t.is_floating_point()) {
        t.fill_(v);
      } else if (std::isfinite(v) && std::fabs(v) < 9.2e18) {
        t.fill_(static_cast<double>(static_cast<int64_t>(v)));
      } else {
        t.fill_(static_cast<double>(in.ConsumeIntegral<int64_t>()));
      }
      it->second = t;
      break;
    }
    case 3: {  // another dtype
      constexpr wick::DType kDTypes[] = {wick::kFloat32, wick::kFloat64, wick::kInt64,
                                         wick::kInt32,   wick::kUInt8,   wick::kBool,
                                         wick::kFloat16};
      it->second = it->second.to(in.PickValueInArray(kDTypes));
      break;
    }
    case 4: {  // an unexpected entry, or an existing one under another name
      std::string name = in.ConsumeRandomLengthString(40);
      if (name.empty() || name == "__metadata__") break;
      Tensor t = it->second;
      if (in.ConsumeBool()) tensors.erase(it);
      tensors[name] = t;
      break;
    }
    case 5: {  // bad metadata
      constexpr const char* kKeys[] = {"epoch", "global_step", "format"};
      const char* key = in.PickValueInArray(kKeys);
      if (in.ConsumeBool()) {
        meta.erase(key);
      } else {
        meta[key] = in.ConsumeRandomLengthString(24);
      }
      break;
    }
    case 6:  // an entry swapped with another's value
      it->second =
          std::next(tensors.begin(), in.ConsumeIntegralInRange<size_t>(0, tensors.size() - 1))
              ->second;
      break;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = wick::fuzz::scratch_dir() + "/mutated.safetensors";
  FuzzedDataProvider in(data, size);
  int kind = in.ConsumeIntegralInRange(0, 2);
  wick::SafetensorsFile file = valid_checkpoint(kind);  // a copy of the maps; tensors shared
  int mutations = in.ConsumeIntegralInRange(1, 4);
  for (int i = 0; i < mutations; ++i) mutate(in, file.tensors, file.metadata);
  try {
    wick::save_safetensors(path, file.tensors, file.metadata);
  } catch (const std::invalid_argument&) {
    return 0;  // a mutation the writer refuses (a name that is not UTF-8): nothing to resume from
  }

  wick::fuzz::Training training(kind);
  wick::fuzz::expect_clean([&] {
    wick::nn::load_checkpoint(path, *training.model, *training.optimizer, training.scheduler.get());
    training.step();
    training.step();
  });
  return 0;
}
