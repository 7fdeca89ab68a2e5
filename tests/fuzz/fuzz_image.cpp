// libFuzzer: decode_image (libpng, libjpeg-turbo and wick's wrapping of them: the size bound,
// libjpeg's longjmp error path) on arbitrary bytes, as grey and as RGB. Every input must decode
// or raise a clean error.
#include "data/image_decode.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<uint8_t> bytes(data, data + size);
  for (auto mode : {wick::data::ImageMode::kGray, wick::data::ImageMode::kRGB}) {
    wick::fuzz::expect_clean([&] { wick::data::decode_image(bytes, mode, "fuzz input"); });
  }
  return 0;
}
