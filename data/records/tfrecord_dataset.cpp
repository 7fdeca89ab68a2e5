#include "data/records/tfrecord_dataset.h"

#include <cstring>

#include "core/error.h"
#include "core/ops.h"
#include "data/file_io.h"
#include "data/loader_timeline.h"
#include "data/records/example_proto.h"

namespace wick::data {

namespace {

constexpr const char* kOp = "TFRecordDataset";

}  // namespace

TFRecordDataset::TFRecordDataset(const std::vector<std::string>& shards, TFRecordImageFormat format,
                                 Transform transform)
    : format_(std::move(format)), transform_(std::move(transform)) {
  check_value(!shards.empty(), kOp, "needs at least one shard file");
  check_value(!format_.shape.empty(), kOp, "needs the images' shape");
  for (int64_t d : format_.shape)
    check_value(d > 0, kOp, "image shape ", format_.shape, " has a dimension < 1");
  for (size_t s = 0; s < shards.size(); ++s) {
    auto file = std::make_unique<TFRecordFile>(shards[s]);
    std::string index_path = shards[s] + ".idx";
    std::vector<RecordLocation> index =
        file_exists(index_path) ? read_record_index(index_path, *file) : file->record_index();
    for (size_t i = 0; i < index.size(); ++i)
      records_.push_back({static_cast<int>(s), static_cast<int64_t>(i), index[i]});
    shards_.push_back(std::move(file));
  }
}

std::string TFRecordDataset::record(int64_t index) const {
  check_example_index(kOp, index, size());
  const Entry& e = records_[static_cast<size_t>(index)];
  return shards_[static_cast<size_t>(e.shard)]->read(e.where, e.number);
}

Example TFRecordDataset::get(int64_t index) const { return get_seeded(index, {0, 0, index}); }

Example TFRecordDataset::get_seeded(int64_t index, const SampleSeed& s) const {
  std::string payload;
  {
    LoaderSpan read("read");
    payload = record(index);
  }
  const Entry& e = records_[static_cast<size_t>(index)];
  const std::string& path = shards_[static_cast<size_t>(e.shard)]->path();
  Example example = image_example_from_record(kOp, payload, format_,
                                              path + ": record " + std::to_string(e.number));
  return {apply_transform(transform_, example.input, s), example.target};
}

Example image_example_from_record(const char* op, const std::string& payload,
                                  const TFRecordImageFormat& format, const std::string& where) {
  LoaderSpan decode("decode");
  Features features;
  try {
    features = decode_example(payload.data(), payload.size());
  } catch (const std::runtime_error& error) {
    throw std::runtime_error(
        error_message(op, where, " is not a valid tf.train.Example: ", error.what()));
  }
  auto image_it = features.find(format.image_key);
  auto label_it = features.find(format.label_key);
  check_state(image_it != features.end() && label_it != features.end(), op, where,
              " has no feature \"",
              image_it == features.end() ? format.image_key : format.label_key, "\"");
  const Feature& label = label_it->second;
  check_state(label.kind == Feature::Kind::kInt64 && label.int64_list.size() == 1, op, where,
              ": feature \"", format.label_key, "\" must hold one int64 (the class)");
  const Feature& pixels = image_it->second;
  int64_t numel = 1;
  for (int64_t d : format.shape) numel *= d;
  Tensor image;
  if (pixels.kind == Feature::Kind::kBytes && pixels.bytes_list.size() == 1 &&
      static_cast<int64_t>(pixels.bytes_list[0].size()) == numel) {
    image = image_from_bytes(reinterpret_cast<const uint8_t*>(pixels.bytes_list[0].data()),
                             format.shape);
  } else if (pixels.kind == Feature::Kind::kFloat &&
             static_cast<int64_t>(pixels.float_list.size()) == numel) {
    image = empty(format.shape, kFloat32);
    std::memcpy(image.data<float>(), pixels.float_list.data(), static_cast<size_t>(numel) * 4);
  } else {
    throw std::runtime_error(error_message(op, where, ": feature \"", format.image_key,
                                           "\" must hold ", numel, " pixels for shape ",
                                           format.shape, " as one bytes value or a float list"));
  }
  return {image, scalar_tensor(label.int64_list[0], kInt64)};
}

void index_tfrecord_shard(const std::string& shard) {
  TFRecordFile file(shard);
  write_record_index(shard + ".idx", file.record_index());
}

}  // namespace wick::data
