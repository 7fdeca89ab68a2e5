// libFuzzer: load_safetensors on arbitrary bytes. Every input must load or raise a clean error.
#include "nn/serialization.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = wick::fuzz::scratch_dir() + "/input.safetensors";
  wick::fuzz::write_file(path, data, size);
  wick::fuzz::expect_clean([&] {
    wick::SafetensorsFile file = wick::load_safetensors(path);
    // Touch every tensor: a loaded tensor must be as big as its shape says.
    for (const auto& [name, t] : file.tensors) {
      if (t.nbytes() > 0) {
        volatile uint8_t last = static_cast<const uint8_t*>(t.data_ptr())[t.nbytes() - 1];
        (void)last;
      }
    }
  });
  return 0;
}
