#include "data/image_folder.h"

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "core/error.h"
#include "core/ops.h"
#include "data/file_io.h"
#include "data/loader_timeline.h"

namespace wick::data {

namespace {

constexpr const char* kOp = "ImageFolder";

bool is_image_file(const std::filesystem::path& p) {
  std::string ext = p.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return ext == ".png" || ext == ".jpg" || ext == ".jpeg";
}

}  // namespace

ImageFolder::ImageFolder(const std::string& root, ImageMode mode, Transform transform)
    : mode_(mode), transform_(std::move(transform)) {
  namespace fs = std::filesystem;
  std::error_code ec;
  check_state(fs::is_directory(root, ec), kOp, root, " is not a directory");
  for (const fs::directory_entry& entry : fs::directory_iterator(root, ec))
    if (entry.is_directory()) classes_.push_back(entry.path().filename().string());
  check_state(!ec, kOp, "cannot list ", root, ": ", ec.message());
  std::sort(classes_.begin(), classes_.end());
  check_state(!classes_.empty(), kOp, root,
              " has no class folders (expected root/<class>/<image>)");
  for (size_t label = 0; label < classes_.size(); ++label) {
    std::vector<std::string> files;
    fs::path dir = fs::path(root) / classes_[label];
    for (const fs::directory_entry& entry : fs::recursive_directory_iterator(dir, ec))
      if (entry.is_regular_file() && is_image_file(entry.path()))
        files.push_back(entry.path().string());
    check_state(!ec, kOp, "cannot list ", dir.string(), ": ", ec.message());
    std::sort(files.begin(), files.end());
    for (std::string& f : files) samples_.push_back({std::move(f), static_cast<int64_t>(label)});
  }
  check_state(!samples_.empty(), kOp, root, " has no .png, .jpg or .jpeg files in its ",
              classes_.size(), " class folders");
}

const std::string& ImageFolder::path(int64_t index) const {
  check_example_index(kOp, index, size());
  return samples_[static_cast<size_t>(index)].path;
}

int64_t ImageFolder::label(int64_t index) const {
  check_example_index(kOp, index, size());
  return samples_[static_cast<size_t>(index)].label;
}

Example ImageFolder::get(int64_t index) const { return get_seeded(index, {0, 0, index}); }

Example ImageFolder::get_seeded(int64_t index, const SampleSeed& s) const {
  check_example_index(kOp, index, size());
  const Sample& sample = samples_[static_cast<size_t>(index)];
  std::vector<uint8_t> bytes;
  {
    LoaderSpan read("read");
    bytes = read_file(sample.path, kOp);
  }
  Tensor image;
  {
    LoaderSpan decode("decode");
    image = decode_image(bytes, mode_, sample.path);
  }
  return {apply_transform(transform_, image, s), scalar_tensor(sample.label, kInt64)};
}

}  // namespace wick::data
