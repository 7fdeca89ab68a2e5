// libFuzzer: the TFRecord reader on arbitrary bytes as a shard - reading front to back, indexing,
// and the image dataset's decoding of every record. Every input must read or raise a clean error.
#include "data/records/tfrecord_dataset.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = wick::fuzz::scratch_dir() + "/shard.tfrecord";
  wick::fuzz::write_file(path, data, size);
  wick::fuzz::expect_clean([&] {
    wick::data::TFRecordFile file(path);
    std::string record;
    while (file.next(record)) {
    }
  });
  wick::fuzz::expect_clean([&] {
    wick::data::TFRecordDataset dataset({path}, {wick::Shape{1, 4, 4}});
    for (int64_t i = 0; i < dataset.size(); ++i) {
      wick::fuzz::expect_clean([&] { dataset.get(i); });
    }
  });
  return 0;
}
