// MNIST: 28 x 28 grey-scale handwritten digits with labels 0-9, read from the four files of the
// standard IDX distribution (http://yann.lecun.com/exdb/mnist/):
//
//   train-images-idx3-ubyte   train-labels-idx1-ubyte    (train = true)
//   t10k-images-idx3-ubyte    t10k-labels-idx1-ubyte     (train = false)
//
// each either raw or gzip-compressed with ".gz" appended (the raw file wins if both exist). The
// repository ships a 10,000-digit subset in assets/mnist/ (8,000 train, 2,000 test; see its
// README); a directory with the official 60,000 + 10,000 files loads the same way.
//
// Everything in the files is checked - magic numbers (2051 images, 2049 labels), 28 x 28 images,
// the file lengths the headers imply, labels 0-9, equal counts - and any problem is a
// std::runtime_error "[mnist] <file>: <what is wrong>". The whole set is held in memory as bytes
// (47 MB for the full training set); get() converts one image at a time.
#pragma once

#include <string>

#include "data/dataset.h"

namespace wick::data {

class MNIST : public Dataset {
 public:
  // `transform` runs on each image as it is fetched (Note [reproducible transforms]).
  explicit MNIST(const std::string& root, bool train = true, Transform transform = {});

  int64_t size() const override { return labels_.size(0); }
  // input: float32 [1, 28, 28] in [0, 1] (then transformed); target: int64 scalar label.
  Example get(int64_t index) const override;
  Example get_seeded(int64_t index, const SampleSeed& s) const override;

  // The whole set: uint8 [N, 28, 28] grey levels and int64 [N] labels.
  const Tensor& images() const { return images_; }
  const Tensor& labels() const { return labels_; }

  static constexpr int64_t kRows = 28, kCols = 28;
  static constexpr uint32_t kImageMagic = 2051, kLabelMagic = 2049;

 private:
  Tensor images_, labels_;
  Transform transform_;
};

}  // namespace wick::data
