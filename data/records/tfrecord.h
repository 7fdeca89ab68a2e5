// TFRecord files, byte-compatible with TensorFlow's tf.io.TFRecordWriter and
// tf.data.TFRecordDataset.
//
// A TFRecord file is records back to back, each framed as
//   uint64 length            little-endian
//   uint32 masked CRC-32C    of the 8 length bytes
//   byte   data[length]
//   uint32 masked CRC-32C    of the data
// (tensorflow/core/lib/io/record_writer.h). The length's own checksum lets a reader refuse a
// corrupt length before trusting it to size a read; the data's checksum catches flipped payload
// bytes. There is no file header and no index: a reader finds record i by walking the lengths,
// which is why record_index() exists and why an index can be saved beside a shard.
//
// Errors are std::runtime_error naming the op, the file, the record's number and its byte offset.
// Compressed TFRecord files (TF's "GZIP"/"ZLIB" options) are not read: random access needs raw
// ones.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace wick::data {

// Where a record sits: `offset` is the byte offset of its header, `length` its payload's size.
struct RecordLocation {
  uint64_t offset = 0;
  uint64_t length = 0;
  bool operator==(const RecordLocation& o) const {
    return offset == o.offset && length == o.length;
  }
};

constexpr uint64_t kRecordHeaderBytes = 12;  // length + its CRC
constexpr uint64_t kRecordFooterBytes = 4;   // the data's CRC

// Appends framed records to a new file (an existing one is truncated). close() reports a failed
// write or flush; the destructor closes quietly, so call close() where an error must not be lost.
class TFRecordWriter {
 public:
  explicit TFRecordWriter(const std::string& path);
  ~TFRecordWriter();
  TFRecordWriter(const TFRecordWriter&) = delete;
  TFRecordWriter& operator=(const TFRecordWriter&) = delete;

  void write(const void* data, uint64_t size);
  void write(const std::string& record) { write(record.data(), record.size()); }
  void flush();
  void close();
  int64_t records_written() const { return records_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int fd_ = -1;
  int64_t records_ = 0;
  std::vector<uint8_t> buffer_;  // records are gathered here and written in large pieces
};

// An open record file. read(location) is safe from several threads at once (it uses pread), so
// the DataLoader's workers can share one; next() reads the file front to back.
class TFRecordFile {
 public:
  explicit TFRecordFile(const std::string& path);
  ~TFRecordFile();
  TFRecordFile(const TFRecordFile&) = delete;
  TFRecordFile& operator=(const TFRecordFile&) = delete;

  // The next record's payload into `record`; false at the end of the file. A file that ends
  // inside a record, or a checksum that does not match, is an error.
  bool next(std::string& record);
  // The record at `where` (from record_index()), its data checksum verified. `number` is only
  // for the error message.
  std::string read(const RecordLocation& where, int64_t number) const;
  // Every record's location, checking each length's checksum and that the payloads fit in the
  // file, without reading the payloads.
  std::vector<RecordLocation> record_index() const;

  uint64_t size() const { return size_; }
  const std::string& path() const { return path_; }

 private:
  // Reads and checks the header at `offset`: the payload's length. `number` names the record.
  uint64_t read_header(uint64_t offset, int64_t number) const;
  void read_exactly(void* out, uint64_t size, uint64_t offset, const char* what,
                    int64_t number) const;

  std::string path_;
  int fd_ = -1;
  uint64_t size_ = 0;
  uint64_t position_ = 0;    // next()'s offset
  int64_t next_number_ = 0;  // next()'s record number
};

// An index file beside a shard: one line "offset length" per record, the layout of NVIDIA DALI's
// tfrecord2idx, so the two tools' indexes are interchangeable.
void write_record_index(const std::string& index_path, const std::vector<RecordLocation>& index);
// Reads an index and checks it against the shard: in order, no overlaps, inside the file, and
// ending where the file ends (a shard appended to after indexing has a stale index).
std::vector<RecordLocation> read_record_index(const std::string& index_path,
                                              const TFRecordFile& shard);

}  // namespace wick::data
