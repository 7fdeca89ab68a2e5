// libFuzzer: the tf.train.Example decoder on arbitrary bytes. Whatever decodes must survive a
// round trip: encoding the features and decoding them again gives the same features.
#include <cstdio>
#include <cstdlib>

#include "data/records/example_proto.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  wick::fuzz::expect_clean([&] {
    wick::data::Features features = wick::data::decode_example(data, size);
    std::string again = wick::data::encode_example(features);
    if (!(wick::data::decode_example(again.data(), again.size()) == features)) {
      std::fprintf(stderr, "finding: encode(decode(x)) does not decode to the same features\n");
      std::abort();
    }
  });
  return 0;
}
