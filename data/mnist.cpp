#include "data/mnist.h"

#include <cstring>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/ops.h"
#include "data/file_io.h"

namespace wick::data {

namespace {

constexpr const char* kOp = "mnist";

// `root`/`name`, or `root`/`name`.gz when only that exists.
std::string find_file(const std::string& root, const std::string& name) {
  std::string base = root.empty() || root.back() == '/' ? root + name : root + "/" + name;
  if (file_exists(base)) return base;
  if (file_exists(base + ".gz")) return base + ".gz";
  throw std::runtime_error(error_message(kOp, "cannot find ", name, " or ", name, ".gz in '", root,
                                         "' (expected the MNIST IDX files there)"));
}

// The IDX header: a big-endian magic number, whose low byte is the number of dims (0x08 in the
// third byte means unsigned bytes), then one big-endian uint32 per dim.
void check_magic(const std::vector<uint8_t>& bytes, const std::string& path, uint32_t expected,
                 const char* kind) {
  check_state(bytes.size() >= 4, kOp, path, ": file is too short for an IDX header (", bytes.size(),
              " bytes)");
  uint32_t magic = read_be32(bytes.data());
  if (magic == expected) return;
  const char* hint = "";
  if (magic == MNIST::kImageMagic) hint = " (2051 is an image file's magic: files swapped?)";
  if (magic == MNIST::kLabelMagic) hint = " (2049 is a label file's magic: files swapped?)";
  throw std::runtime_error(error_message(kOp, path, ": bad magic number ", magic, "; expected ",
                                         expected, " for an IDX ", kind, " file", hint));
}

// Checks that the file holds exactly the header and `data_bytes` bytes after it.
void check_length(const std::vector<uint8_t>& bytes, const std::string& path, size_t header,
                  size_t data_bytes, const char* what) {
  size_t expected = header + data_bytes;
  check_state(bytes.size() >= expected, kOp, path, ": file is truncated: its header announces ",
              what, ", ", expected, " bytes in all, but the file has ", bytes.size());
  check_state(bytes.size() == expected, kOp, path, ": file has ", bytes.size() - expected,
              " bytes after the ", what, " its header announces");
}

Tensor read_images(const std::string& path) {
  std::vector<uint8_t> bytes = read_file(path, kOp);
  check_magic(bytes, path, MNIST::kImageMagic, "image");
  check_state(bytes.size() >= 16, kOp, path, ": file is truncated inside its header (",
              bytes.size(), " of 16 bytes)");
  int64_t count = read_be32(bytes.data() + 4);
  int64_t rows = read_be32(bytes.data() + 8), cols = read_be32(bytes.data() + 12);
  check_state(rows == MNIST::kRows && cols == MNIST::kCols, kOp, path, ": images are ", rows, " x ",
              cols, "; MNIST images are 28 x 28");
  std::string what = std::to_string(count) + " images of 28 x 28";
  check_length(bytes, path, 16, static_cast<size_t>(count * rows * cols), what.c_str());
  Tensor images = empty(Shape{count, rows, cols}, kUInt8);
  if (count > 0) std::memcpy(images.data<uint8_t>(), bytes.data() + 16, count * rows * cols);
  return images;
}

Tensor read_labels(const std::string& path) {
  std::vector<uint8_t> bytes = read_file(path, kOp);
  check_magic(bytes, path, MNIST::kLabelMagic, "label");
  check_state(bytes.size() >= 8, kOp, path, ": file is truncated inside its header (", bytes.size(),
              " of 8 bytes)");
  int64_t count = read_be32(bytes.data() + 4);
  std::string what = std::to_string(count) + " labels";
  check_length(bytes, path, 8, static_cast<size_t>(count), what.c_str());
  Tensor labels = empty(Shape{count}, kInt64);
  int64_t* out = labels.data<int64_t>();
  for (int64_t i = 0; i < count; ++i) {
    uint8_t label = bytes[8 + i];
    check_state(label <= 9, kOp, path, ": label ", int{label}, " at index ", i,
                " is not a digit 0-9");
    out[i] = label;
  }
  return labels;
}

}  // namespace

MNIST::MNIST(const std::string& root, bool train, Transform transform)
    : transform_(std::move(transform)) {
  std::string prefix = train ? "train" : "t10k";
  std::string image_path = find_file(root, prefix + "-images-idx3-ubyte");
  std::string label_path = find_file(root, prefix + "-labels-idx1-ubyte");
  images_ = read_images(image_path);
  labels_ = read_labels(label_path);
  check_state(images_.size(0) == labels_.size(0), kOp, image_path, " holds ", images_.size(0),
              " images but ", label_path, " holds ", labels_.size(0), " labels");
}

Example MNIST::get(int64_t index) const { return get_seeded(index, {0, 0, index}); }

Example MNIST::get_seeded(int64_t index, const SampleSeed& s) const {
  check_example_index(kOp, index, size());
  const uint8_t* pixels = images_.data<uint8_t>() + index * kRows * kCols;
  Tensor image = image_from_bytes(pixels, Shape{1, kRows, kCols});
  int64_t label = labels_.data<int64_t>()[index];
  return {apply_transform(transform_, image, s), scalar_tensor(label, kInt64)};
}

}  // namespace wick::data
