// A map-style dataset over TFRecord shards of tf.train.Example images, the layout TensorFlow's
// image pipelines write: one Example per image, the pixels under `image_key` (raw uint8 bytes, one
// bytes_list entry, or a float_list) and the class under `label_key` (one int64). Random access,
// which TFRecord lacks, comes from an index per shard: `<shard>.idx` (tfrecord.h's format) when it
// exists, otherwise one scan of the shard's headers at construction.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "data/dataset.h"
#include "data/records/tfrecord.h"

namespace wick::data {

struct TFRecordImageFormat {
  Shape shape;  // each image's shape, e.g. {1, 28, 28}
  std::string image_key = "image";
  std::string label_key = "label";
};

class TFRecordDataset : public Dataset {
 public:
  TFRecordDataset(const std::vector<std::string>& shards, TFRecordImageFormat format,
                  Transform transform = {});

  int64_t size() const override { return static_cast<int64_t>(records_.size()); }
  // input: float32 of format.shape (bytes / 255, or the floats as stored); target: int64 scalar.
  Example get(int64_t index) const override;
  Example get_seeded(int64_t index, const SampleSeed& s) const override;

  // The raw payload of record `index` (a serialized Example).
  std::string record(int64_t index) const;

 private:
  struct Entry {
    int shard;
    int64_t number;  // the record's number within its shard, for error messages
    RecordLocation where;
  };
  std::vector<std::unique_ptr<TFRecordFile>> shards_;
  std::vector<Entry> records_;
  TFRecordImageFormat format_;
  Transform transform_;
};

// The (image, label) example in a serialized tf.train.Example laid out as `format` says; `where`
// names the record in errors ("<file>: record 12"). Shared by TFRecordDataset and LMDBDataset.
Example image_example_from_record(const char* op, const std::string& payload,
                                  const TFRecordImageFormat& format, const std::string& where);

// Writes `<shard>.idx` for a shard (scanning it), so later datasets open without a scan.
void index_tfrecord_shard(const std::string& shard);

}  // namespace wick::data
