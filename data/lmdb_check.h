// A structural check of an LMDB data file, done with pread before liblmdb maps it.
//
// Note [checking LMDB files before liblmdb]
// liblmdb trusts its file. It mmaps it and follows page numbers, node offsets and sizes straight
// from the map: it checks that a page number is below the meta page's last page, but not that the
// file is that long, nor that a node lies inside its page. A store cut short by an interrupted
// copy therefore dies with SIGBUS inside liblmdb, and a damaged page with SIGSEGV or an assert -
// the process ends, no exception. So LMDBDataset reads the file first, without mapping it, and
// refuses it with an error naming the file and what is wrong unless everything liblmdb's read
// path will follow is sound: both meta pages (flag, magic, version, page size), the file's length
// against the last page, and the main database's B-tree - every page number in range and reached
// once (no cycles), the page type expected at its depth, all leaves at one depth (at most 32,
// liblmdb's cursor stack), free-space bounds and node offsets, key and value sizes inside the
// page, overflow runs inside the file, and the meta page's counts matching the tree. Only plain
// key -> value stores are accepted (main database flags 0, no sub-databases or duplicates), which
// is what LMDBWriter and Caffe's convert_imageset write. The walk reads each page once and yields
// the keys in order, so the dataset lists its keys from it instead of walking the tree again.
// The two meta pages hold the last two commits, and liblmdb reads the one with the larger
// transaction id; a damaged id that makes the older one look newer is refused when the ids are
// not one apart or the "newer" snapshot ends before the older one. Past that (a last commit that
// did not grow the file) the older snapshot - intact, LMDB keeps it - is what gets read.
//
// A file that changes after the check would undo it: LMDBDataset compares the file liblmdb opened
// with the one checked (device, inode, size, mtime) before any read transaction, and again before
// every read (one fstat), refusing a store that was truncated or rewritten in place. What this
// cannot catch is a change between that fstat and the copy out of the map; a file replaced by a
// new one (rename, or LMDBWriter, which removes the old file) is harmless, since the map keeps
// the old file. Values themselves are not checksummed by LMDB; the Example decoder checks them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace wick::data {

// What identifies a file's contents cheaply: a truncation or an in-place rewrite changes it.
struct FileStamp {
  uint64_t device = 0, inode = 0, bytes = 0;
  int64_t mtime_ns = 0;
  bool operator==(const FileStamp& o) const {
    return device == o.device && inode == o.inode && bytes == o.bytes && mtime_ns == o.mtime_ns;
  }
  bool operator!=(const FileStamp& o) const { return !(*this == o); }
};
FileStamp file_stamp(int fd);  // fstat; an all-zero stamp if that fails

struct LMDBFileCheck {
  uint32_t page_size = 0;
  FileStamp stamp;                // of the file as checked
  std::vector<std::string> keys;  // the main database's keys, in LMDB's order
};

// `bytes` in double quotes, at most 40 of them, with anything but printable ASCII as \xNN: keys
// come from the file, and an error message must stay one line of valid UTF-8.
std::string quote_key(const std::string& bytes);

// Checks the LMDB data file at `path` (Note [checking LMDB files before liblmdb]); throws
// std::runtime_error "[op] path: what is wrong" if liblmdb could not read it safely.
LMDBFileCheck check_lmdb_file(const char* op, const std::string& path);

}  // namespace wick::data
