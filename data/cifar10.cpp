#include "data/cifar10.h"

#include <cstring>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/ops.h"
#include "data/file_io.h"

namespace wick::data {

namespace {

constexpr const char* kOp = "cifar10";
constexpr int64_t kImageBytes = CIFAR10::kRecordBytes - 1;

std::string join(const std::string& dir, const std::string& name) {
  return dir.empty() || dir.back() == '/' ? dir + name : dir + "/" + name;
}

// The directory holding the .bin files: `root` itself or the archive's folder inside it.
std::string find_directory(const std::string& root, const std::string& probe) {
  if (file_exists(join(root, probe))) return root;
  std::string nested = join(root, "cifar-10-batches-bin");
  if (file_exists(join(nested, probe))) return nested;
  throw std::runtime_error(error_message(kOp, "cannot find ", probe, " in '", root, "' or in '",
                                         nested, "' (expected the CIFAR-10 binary version there)"));
}

}  // namespace

CIFAR10::CIFAR10(const std::string& root, bool train, Transform transform)
    : transform_(std::move(transform)) {
  std::vector<std::string> names;
  if (train) {
    for (int i = 1; i <= 5; ++i) names.push_back("data_batch_" + std::to_string(i) + ".bin");
  } else {
    names.push_back("test_batch.bin");
  }
  std::string dir = find_directory(root, names[0]);
  std::vector<std::vector<uint8_t>> files;
  int64_t count = 0;
  for (const std::string& name : names) {
    std::string path = join(dir, name);
    check_state(file_exists(path), kOp, "cannot find ", path);
    std::vector<uint8_t> bytes = read_file(path, kOp);
    int64_t size = static_cast<int64_t>(bytes.size());
    check_state(size > 0 && size % kRecordBytes == 0, kOp, path, ": file has ", size,
                " bytes, not a whole number of ", kRecordBytes, "-byte records (1 label byte + ",
                kImageBytes, " pixel bytes)");
    count += size / kRecordBytes;
    files.push_back(std::move(bytes));
  }
  images_ = empty(Shape{count, kChannels, kRows, kCols}, kUInt8);
  labels_ = empty(Shape{count}, kInt64);
  uint8_t* image = images_.data<uint8_t>();
  int64_t* label = labels_.data<int64_t>();
  for (size_t f = 0; f < files.size(); ++f) {
    const std::vector<uint8_t>& bytes = files[f];
    for (size_t offset = 0; offset < bytes.size(); offset += kRecordBytes) {
      check_state(bytes[offset] <= 9, kOp, join(dir, names[f]), ": label ", int{bytes[offset]},
                  " of record ", offset / kRecordBytes, " is not a class 0-9");
      *label++ = bytes[offset];
      std::memcpy(image, bytes.data() + offset + 1, kImageBytes);
      image += kImageBytes;
    }
  }
}

Example CIFAR10::get(int64_t index) const { return get_seeded(index, {0, 0, index}); }

Example CIFAR10::get_seeded(int64_t index, const SampleSeed& s) const {
  check_example_index(kOp, index, size());
  const uint8_t* pixels = images_.data<uint8_t>() + index * kImageBytes;
  Tensor image = image_from_bytes(pixels, Shape{kChannels, kRows, kCols});
  int64_t label = labels_.data<int64_t>()[index];
  return {apply_transform(transform_, image, s), scalar_tensor(label, kInt64)};
}

const char* CIFAR10::class_name(int64_t label) {
  static const char* const kNames[10] = {"airplane", "automobile", "bird",  "cat",  "deer",
                                         "dog",      "frog",       "horse", "ship", "truck"};
  check_index(label >= 0 && label < 10, kOp, "class label must be 0-9; got ", label);
  return kNames[label];
}

}  // namespace wick::data
