// ImageFolder: torchvision's layout, root/<class>/<image file>, one folder per class. Classes are
// the sub-folder names in sorted order (their index is the label); files with the extensions
// .png, .jpg or .jpeg are the examples, sorted by path. Each get() reads and decodes its file
// (data/image_decode.h), so decoding costs what it costs in real training - the point of a
// folder of images, against a record file of raw pixels.
#pragma once

#include <string>
#include <vector>

#include "data/dataset.h"
#include "data/image_decode.h"

namespace wick::data {

class ImageFolder : public Dataset {
 public:
  explicit ImageFolder(const std::string& root, ImageMode mode = ImageMode::kRGB,
                       Transform transform = {});

  int64_t size() const override { return static_cast<int64_t>(samples_.size()); }
  // input: float32 [C, H, W] in [0, 1] (then transformed); target: int64 scalar class index.
  Example get(int64_t index) const override;
  Example get_seeded(int64_t index, const SampleSeed& s) const override;

  const std::vector<std::string>& classes() const { return classes_; }
  const std::string& path(int64_t index) const;
  int64_t label(int64_t index) const;

 private:
  struct Sample {
    std::string path;
    int64_t label;
  };
  std::vector<std::string> classes_;
  std::vector<Sample> samples_;
  ImageMode mode_;
  Transform transform_;
};

}  // namespace wick::data
