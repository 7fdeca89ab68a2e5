// libFuzzer: the MNIST IDX reader. An input is a 4-byte little-endian length n, then n bytes of
// the image file (train-images-idx3-ubyte), then the label file (train-labels-idx1-ubyte); either
// may be gzip-compressed. Every input must load or raise a clean error.
#include <cstring>

#include "data/mnist.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string dir = wick::fuzz::scratch_dir();
  if (size < 4) return 0;
  uint32_t n;
  std::memcpy(&n, data, 4);
  data += 4, size -= 4;
  size_t images = n < size ? n : size;
  wick::fuzz::write_file(dir + "/train-images-idx3-ubyte", data, images);
  wick::fuzz::write_file(dir + "/train-labels-idx1-ubyte", data + images, size - images);
  wick::fuzz::expect_clean([&] {
    wick::data::MNIST mnist(dir, /*train=*/true);
    if (mnist.size() > 0) {
      mnist.get(0);
      mnist.get(mnist.size() - 1);
    }
  });
  return 0;
}
