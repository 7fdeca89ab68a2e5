#include "data/records/tfrecord.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "core/error.h"
#include "data/records/crc32c.h"

namespace wick::data {

namespace {

constexpr const char* kOp = "tfrecord";
constexpr size_t kWriteChunk = 1 << 20;

void put_le(std::vector<uint8_t>& out, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<uint8_t>(value >> (8 * i)));
}

uint64_t get_le(const uint8_t* p, int bytes) {
  uint64_t value = 0;
  for (int i = 0; i < bytes; ++i) value |= uint64_t{p[i]} << (8 * i);
  return value;
}

void write_all(int fd, const uint8_t* data, size_t size, const std::string& path) {
  while (size > 0) {
    ssize_t n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    check_state(n > 0, kOp, "cannot write ", path, ": ", std::strerror(errno));
    data += n;
    size -= static_cast<size_t>(n);
  }
}

}  // namespace

TFRecordWriter::TFRecordWriter(const std::string& path) : path_(path) {
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  check_state(fd_ >= 0, kOp, "cannot create ", path, ": ", std::strerror(errno));
}

TFRecordWriter::~TFRecordWriter() {
  try {
    close();
  } catch (const std::exception&) {  // a destructor must not throw; close() is the checked path
  }
}

void TFRecordWriter::write(const void* data, uint64_t size) {
  check_state(fd_ >= 0, kOp, "write to ", path_, " after close()");
  const uint8_t* bytes = static_cast<const uint8_t*>(data);
  size_t start = buffer_.size();
  put_le(buffer_, size, 8);
  put_le(buffer_, mask_crc(crc32c(buffer_.data() + start, 8)), 4);
  buffer_.insert(buffer_.end(), bytes, bytes + size);
  put_le(buffer_, mask_crc(crc32c(bytes, size)), 4);
  ++records_;
  if (buffer_.size() >= kWriteChunk) flush();
}

void TFRecordWriter::flush() {
  check_state(fd_ >= 0, kOp, "flush of ", path_, " after close()");
  write_all(fd_, buffer_.data(), buffer_.size(), path_);
  buffer_.clear();
}

void TFRecordWriter::close() {
  if (fd_ < 0) return;
  int fd = fd_;
  try {
    flush();
  } catch (...) {
    ::close(fd);
    fd_ = -1;
    throw;
  }
  fd_ = -1;
  check_state(::close(fd) == 0, kOp, "cannot close ", path_, ": ", std::strerror(errno));
}

TFRecordFile::TFRecordFile(const std::string& path) : path_(path) {
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  check_state(fd_ >= 0, kOp, "cannot open ", path, ": ", std::strerror(errno));
  struct stat info;
  if (::fstat(fd_, &info) != 0 || !S_ISREG(info.st_mode)) {
    ::close(fd_);
    throw std::runtime_error(error_message(kOp, path, " is not a regular file"));
  }
  size_ = static_cast<uint64_t>(info.st_size);
}

TFRecordFile::~TFRecordFile() {
  if (fd_ >= 0) ::close(fd_);
}

void TFRecordFile::read_exactly(void* out, uint64_t size, uint64_t offset, const char* what,
                                int64_t number) const {
  auto* p = static_cast<uint8_t*>(out);
  while (size > 0) {
    ssize_t n = ::pread(fd_, p, size, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    check_state(n >= 0, kOp, "cannot read ", path_, ": ", std::strerror(errno));
    check_state(n > 0, kOp, path_, " is truncated: record ", number, " ends inside its ", what,
                " at byte ", offset, " of ", size_);
    p += n;
    size -= static_cast<uint64_t>(n);
    offset += static_cast<uint64_t>(n);
  }
}

uint64_t TFRecordFile::read_header(uint64_t offset, int64_t number) const {
  uint8_t header[kRecordHeaderBytes];
  read_exactly(header, sizeof(header), offset, "header", number);
  uint64_t length = get_le(header, 8);
  uint32_t stored = unmask_crc(static_cast<uint32_t>(get_le(header + 8, 4)));
  check_state(crc32c(header, 8) == stored, kOp, path_, ": record ", number, " at byte ", offset,
              " has a corrupt length (its checksum does not match)");
  // Checked before any allocation: a length is only trusted once the file is known to hold it.
  uint64_t room = size_ - offset - kRecordHeaderBytes;
  check_state(length <= room && room - length >= kRecordFooterBytes, kOp, path_,
              " is truncated: record ", number, " at byte ", offset, " says ", length,
              " bytes, but the file ends ", room, " bytes after its header");
  return length;
}

std::string TFRecordFile::read(const RecordLocation& where, int64_t number) const {
  check_state(where.offset <= size_ && size_ - where.offset >= kRecordHeaderBytes, kOp, path_,
              ": record ", number, " at byte ", where.offset, " lies past the end of the file (",
              size_, " bytes)");
  uint64_t length = read_header(where.offset, number);
  check_state(length == where.length, kOp, path_, ": record ", number, " at byte ", where.offset,
              " has ", length, " bytes, but the index says ", where.length);
  std::string record(length, '\0');
  read_exactly(record.data(), length, where.offset + kRecordHeaderBytes, "data", number);
  uint8_t footer[kRecordFooterBytes];
  read_exactly(footer, sizeof(footer), where.offset + kRecordHeaderBytes + length, "checksum",
               number);
  check_state(crc32c(record.data(), length) == unmask_crc(static_cast<uint32_t>(get_le(footer, 4))),
              kOp, path_, ": record ", number, " at byte ", where.offset,
              " is corrupt: its data checksum does not match");
  return record;
}

bool TFRecordFile::next(std::string& record) {
  if (position_ == size_) return false;
  check_state(size_ - position_ >= kRecordHeaderBytes, kOp, path_, " is truncated: record ",
              next_number_, " at byte ", position_, " ends inside its header");
  uint64_t length = read_header(position_, next_number_);
  record = read({position_, length}, next_number_);
  position_ += kRecordHeaderBytes + length + kRecordFooterBytes;
  ++next_number_;
  return true;
}

std::vector<RecordLocation> TFRecordFile::record_index() const {
  std::vector<RecordLocation> index;
  uint64_t offset = 0;
  while (offset < size_) {
    auto number = static_cast<int64_t>(index.size());
    check_state(size_ - offset >= kRecordHeaderBytes, kOp, path_, " is truncated: record ", number,
                " at byte ", offset, " ends inside its header");
    uint64_t length = read_header(offset, number);
    index.push_back({offset, length});
    offset += kRecordHeaderBytes + length + kRecordFooterBytes;
  }
  return index;
}

void write_record_index(const std::string& index_path, const std::vector<RecordLocation>& index) {
  std::ofstream out(index_path, std::ios::trunc);
  check_state(out.is_open(), kOp, "cannot create ", index_path, ": ", std::strerror(errno));
  for (const RecordLocation& r : index) out << r.offset << ' ' << r.length << '\n';
  out.close();
  check_state(!out.fail(), kOp, "cannot write ", index_path);
}

std::vector<RecordLocation> read_record_index(const std::string& index_path,
                                              const TFRecordFile& shard) {
  std::ifstream in(index_path);
  check_state(in.is_open(), kOp, "cannot open ", index_path, ": ", std::strerror(errno));
  std::vector<RecordLocation> index;
  std::string line;
  uint64_t expected = 0;  // where the next record must start
  for (int64_t number = 0; std::getline(in, line); ++number) {
    std::istringstream fields(line);
    RecordLocation r;
    std::string rest;
    bool parsed = static_cast<bool>(fields >> r.offset >> r.length) && !(fields >> rest) &&
                  line.find('-') == std::string::npos;
    check_state(parsed, kOp, index_path, ": line ", number + 1, " is not \"offset length\": \"",
                line.substr(0, 80), "\"");
    check_state(r.offset == expected, kOp, index_path, ": record ", number, " starts at byte ",
                r.offset, ", but the previous record ends at byte ", expected,
                " (an index of another file?)");
    check_state(r.length <= shard.size() && r.offset <= shard.size() - r.length &&
                    shard.size() - r.offset - r.length >= kRecordHeaderBytes + kRecordFooterBytes,
                kOp, index_path, ": record ", number, " (", r.length, " bytes at byte ", r.offset,
                ") lies past the end of ", shard.path(), " (", shard.size(), " bytes)");
    expected = r.offset + kRecordHeaderBytes + r.length + kRecordFooterBytes;
    index.push_back(r);
  }
  check_state(expected == shard.size(), kOp, index_path, " is stale: its records end at byte ",
              expected, " but ", shard.path(), " has ", shard.size(), " bytes");
  return index;
}

}  // namespace wick::data
