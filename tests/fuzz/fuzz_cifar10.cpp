// libFuzzer: the CIFAR-10 binary reader on arbitrary bytes as test_batch.bin (raw or gzip).
// Every input must load or raise a clean error.
#include "data/cifar10.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string dir = wick::fuzz::scratch_dir();
  wick::fuzz::write_file(dir + "/test_batch.bin", data, size);
  wick::fuzz::expect_clean([&] {
    wick::data::CIFAR10 cifar(dir, /*train=*/false);
    if (cifar.size() > 0) {
      cifar.get(0);
      cifar.get(cifar.size() - 1);
    }
  });
  return 0;
}
