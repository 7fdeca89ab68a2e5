// CIFAR-10: 32 x 32 colour images in 10 classes, read from the "binary version" of the data set
// (https://www.cs.toronto.edu/~kriz/cifar.html): data_batch_1.bin ... data_batch_5.bin for
// training, test_batch.bin for testing. Each file is a sequence of 3073-byte records: one label
// byte (0-9), then 1024 red, 1024 green and 1024 blue bytes, each plane row-major (CHW).
//
// `root` is the directory holding those files, or the one holding the archive's
// cifar-10-batches-bin/ folder. Files are checked (whole records only, labels 0-9) and problems
// are std::runtime_error "[cifar10] <file>: <what is wrong>". A .bin file that is gzip-compressed
// is decompressed as it is read.
#pragma once

#include <string>

#include "data/dataset.h"

namespace wick::data {

class CIFAR10 : public Dataset {
 public:
  explicit CIFAR10(const std::string& root, bool train = true, Transform transform = {});

  int64_t size() const override { return labels_.size(0); }
  // input: float32 [3, 32, 32] in [0, 1] (then transformed); target: int64 scalar label.
  Example get(int64_t index) const override;
  Example get_seeded(int64_t index, const SampleSeed& s) const override;

  // The whole set: uint8 [N, 3, 32, 32] and int64 [N] labels.
  const Tensor& images() const { return images_; }
  const Tensor& labels() const { return labels_; }

  // "airplane", "automobile", ..., "truck", indexed by label.
  static const char* class_name(int64_t label);

  static constexpr int64_t kChannels = 3, kRows = 32, kCols = 32;
  static constexpr int64_t kRecordBytes = 1 + kChannels * kRows * kCols;  // 3073

 private:
  Tensor images_, labels_;
  Transform transform_;
};

}  // namespace wick::data
