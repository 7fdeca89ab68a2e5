// LMDB image stores: a memory-mapped B+tree of key -> value (liblmdb, Debian's liblmdb-dev), the
// format Caffe fed ImageNet from. Values here are serialized tf.train.Example records, decoded as
// TFRecordDataset decodes them, so one converter serves both formats; keys are the example's
// number as 8 decimal digits, so LMDB's key order is the dataset's order.
//
// Reads go through the page cache with no copy until decoding (mdb_get returns a pointer into
// the map), and any number of threads read at once (MDB_NOTLS: a read transaction per get()).
// liblmdb trusts its file, so a store is checked page by page before liblmdb maps it
// (data/lmdb_check.h, Note [checking LMDB files before liblmdb]): a truncated or damaged store
// is an error naming the file, never a crash. LMDB keeps no checksums, so a flipped byte inside a
// value is caught only by the Example decoder; wick's errors name the file and the key. Optional
// at build time (WICK_HAVE_LMDB); without it the constructors raise.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "data/dataset.h"
#include "data/records/tfrecord_dataset.h"

namespace wick::data {

bool has_lmdb();

// Writes a new store at `path` (a single file; an existing one is replaced) in one transaction.
class LMDBWriter {
 public:
  explicit LMDBWriter(const std::string& path, uint64_t map_bytes = uint64_t{1} << 30);
  ~LMDBWriter();
  LMDBWriter(const LMDBWriter&) = delete;
  LMDBWriter& operator=(const LMDBWriter&) = delete;

  void put(const std::string& key, const std::string& value);
  void commit();  // makes the store durable; put() after commit() is an error
  int64_t entries() const { return entries_; }

 private:
  struct State;
  std::unique_ptr<State> state_;
  std::string path_;
  int64_t entries_ = 0;
};

class LMDBDataset : public Dataset {
 public:
  LMDBDataset(const std::string& path, TFRecordImageFormat format, Transform transform = {});
  ~LMDBDataset() override;

  int64_t size() const override { return static_cast<int64_t>(keys_.size()); }
  Example get(int64_t index) const override;
  Example get_seeded(int64_t index, const SampleSeed& s) const override;
  std::string value(int64_t index) const;  // the raw value stored under key `index`

  static std::string key_of(int64_t index);  // "00000042"

 private:
  struct State;
  std::unique_ptr<State> state_;
  std::string path_;
  std::vector<std::string> keys_;
  TFRecordImageFormat format_;
  Transform transform_;
};

}  // namespace wick::data
