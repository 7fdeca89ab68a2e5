// libFuzzer: load_checkpoint on arbitrary bytes, into a small model, optimizer and schedule, then
// two training steps. Every input must resume and train, or raise a clean error.
#include <cstdlib>
#include <fstream>
#include <iterator>

#include "tests/fuzz/checkpoint_model.h"
#include "tests/fuzz/fuzz_util.h"

// With WICK_FUZZ_WRITE_SEEDS=<dir>, writes the seed corpus first: a valid checkpoint for each
// optimizer after two steps, prefixed with the byte that picks that optimizer
// (tests/fuzz/make_corpus.py runs this).
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  const char* dir = std::getenv("WICK_FUZZ_WRITE_SEEDS");
  if (dir == nullptr) return 0;
  for (int kind = 0; kind < 3; ++kind) {
    wick::fuzz::Training training(kind);
    training.step();
    training.step();
    std::string file = wick::fuzz::scratch_dir() + "/seed.safetensors";
    wick::nn::save_checkpoint(file, *training.model, *training.optimizer, training.scheduler.get(),
                              wick::nn::TrainingState{2, 2, {}, {}});
    std::ifstream in(file, std::ios::binary);
    std::string bytes(std::istreambuf_iterator<char>(in), {});
    std::ofstream out(std::string(dir) + "/valid_optimizer" + std::to_string(kind),
                      std::ios::binary);
    out << static_cast<char>(kind) << bytes;
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = wick::fuzz::scratch_dir() + "/checkpoint.safetensors";
  if (size < 1) return 0;
  wick::fuzz::write_file(path, data + 1, size - 1);
  wick::fuzz::Training training(data[0] % 3);  // the first byte picks the optimizer
  wick::fuzz::expect_clean([&] {
    wick::nn::load_checkpoint(path, *training.model, *training.optimizer, training.scheduler.get());
    training.step();
    training.step();
  });
  return 0;
}
