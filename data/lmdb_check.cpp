#include "data/lmdb_check.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "core/error.h"

namespace wick::data {

namespace {

// LMDB's on-disk layout (liblmdb's mdb.c: MDB_page, MDB_node, MDB_meta, MDB_db) as 64-bit
// little-endian liblmdb writes it, with 8-byte page numbers and sizes.
static_assert(sizeof(void*) == 8, "the layout below is 64-bit liblmdb's");
constexpr uint64_t kPageHeader = 16;  // pgno u64, pad u16, flags u16, lower u16, upper u16
constexpr uint64_t kNodeHeader = 8;   // lo u16, hi u16, flags u16, ksize u16, then key, data
constexpr uint64_t kMetaBytes = kPageHeader + 136;  // what liblmdb reads of each meta page
constexpr uint16_t kBranch = 0x01, kLeaf = 0x02, kOverflow = 0x04, kMeta = 0x08;
constexpr uint16_t kBigData = 0x01;                    // a leaf's value is on overflow pages
constexpr uint64_t kNoPage = ~uint64_t{0};             // P_INVALID: an empty tree's root
constexpr uint32_t kMagic = 0xBEEFC0DE, kVersion = 1;  // MDB_MAGIC, MDB_DATA_VERSION
constexpr int kMaxDepth = 32;                          // liblmdb's CURSOR_STACK
// Within a meta page: psize = dbs[FREE].md_pad; the main database's MDB_db (48 bytes) at 88.
constexpr uint64_t kMagicAt = 16, kVersionAt = 20, kPageSizeAt = 40, kMainDbAt = 88,
                   kLastPageAt = 136, kTxnAt = 144;

uint64_t le(const uint8_t* p, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = v << 8 | p[i];
  return v;
}

std::string hex(uint64_t v) {
  char s[24];
  std::snprintf(s, sizeof(s), "0x%llx", static_cast<unsigned long long>(v));
  return s;
}

}  // namespace

std::string quote_key(const std::string& bytes) {
  std::string out = "\"";
  for (size_t i = 0; i < bytes.size() && i < 40; ++i) {
    unsigned char c = static_cast<unsigned char>(bytes[i]);
    char escaped[8];
    std::snprintf(escaped, sizeof(escaped), "\\x%02x", c);
    bool plain = c >= 0x20 && c < 0x7f && c != '"' && c != '\\';
    out += plain ? std::string(1, static_cast<char>(c)) : std::string(escaped);
  }
  return out + (bytes.size() > 40 ? "...\"" : "\"");
}

namespace {

struct Walk {
  Walk(const char* op, const std::string& path, int fd, std::vector<std::string>* keys)
      : op(op), path(path), fd(fd), keys(keys) {}
  const char* op;
  const std::string& path;
  int fd;
  uint64_t psize = 0, pages = 0;  // pages: last page + 1, all inside the file
  int depth = 0;
  std::vector<uint8_t> seen;
  uint64_t branch = 0, leaf = 0, overflow = 0;
  std::vector<std::string>* keys;  // the leaves' keys, in order

  template <class... Parts>
  [[noreturn]] void fail(const Parts&... parts) const {
    throw std::runtime_error(error_message(op, path, ": ", parts...));
  }

  std::vector<uint8_t> read(uint64_t offset, uint64_t bytes) const {
    std::vector<uint8_t> out(bytes);
    for (uint64_t done = 0; done < bytes;) {
      ssize_t n = ::pread(fd, out.data() + done, bytes - done, static_cast<off_t>(offset + done));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) fail("cannot read: ", std::strerror(errno));
      if (n == 0) fail("the file ended at byte ", offset + done, " while it was being checked");
      done += static_cast<uint64_t>(n);
    }
    return out;
  }

  void claim(uint64_t pgno, const char* what) {
    if (pgno < 2 || pgno >= pages)
      fail(what, " page ", pgno, " out of range (pages 2..", pages - 1, " hold data)");
    if (seen[pgno]) fail("page ", pgno, " is reached twice (a cycle or a shared page)");
    seen[pgno] = 1;
  }

  void overflow_run(uint64_t first, uint64_t value_bytes, const std::string& key) {
    claim(first, "overflow");
    uint64_t needed = (kPageHeader - 1 + value_bytes) / psize + 1;  // liblmdb's OVPAGES
    std::vector<uint8_t> h = read(first * psize, kPageHeader);
    uint64_t run = le(&h[12], 4);
    if (le(&h[0], 8) != first || le(&h[10], 2) != kOverflow || run < needed)
      fail("overflow page ", first, " of key ", quote_key(key), " has page number ", le(&h[0], 8),
           ", flags ", hex(le(&h[10], 2)), ", ", run, " pages (", needed, " hold its ", value_bytes,
           " bytes)");
    if (run > pages - first)
      fail("overflow pages ", first, "..", first + run - 1, " of key ", quote_key(key),
           " run past the last page ", pages - 1);
    for (uint64_t p = first + 1; p < first + run; ++p) claim(p, "overflow");
    overflow += run;
  }

  void visit(uint64_t pgno, int level) {
    claim(pgno, level == 1 ? "root" : "child");
    std::vector<uint8_t> page = read(pgno * psize, psize);
    const bool is_leaf = level == depth;
    uint64_t flags = le(&page[10], 2), lower = le(&page[12], 2), upper = le(&page[14], 2);
    if (le(&page[0], 8) != pgno) fail("page ", pgno, " says it is page ", le(&page[0], 8));
    if (flags != (is_leaf ? kLeaf : kBranch))
      fail("page ", pgno, " has flags ", hex(flags), " where a ", is_leaf ? "leaf" : "branch",
           " page belongs (level ", level, " of ", depth, ")");
    if (lower < kPageHeader || (lower - kPageHeader) % 2 != 0 || lower > upper || upper > psize)
      fail("page ", pgno, " has free-space bounds ", lower, "..", upper, " (page size ", psize,
           ")");
    uint64_t count = (lower - kPageHeader) / 2, least = is_leaf ? 1 : 2;
    if (count < least) fail("page ", pgno, " holds ", count, " nodes (at least ", least, ")");
    (is_leaf ? leaf : branch) += 1;
    for (uint64_t i = 0; i < count; ++i) {
      uint64_t at = le(&page[kPageHeader + 2 * i], 2);
      if (at < upper || at + kNodeHeader > psize)
        fail("page ", pgno, ": node ", i, " at offset ", at, " lies outside the node area ", upper,
             "..", psize);
      const uint8_t* node = &page[at];
      uint64_t lo_hi = le(node, 4), node_flags = le(node + 4, 2), key_bytes = le(node + 6, 2);
      uint64_t key_end = at + kNodeHeader + key_bytes;
      if (key_end > psize)
        fail("page ", pgno, ": node ", i, "'s ", key_bytes, "-byte key ends past the page");
      if (!is_leaf) {
        visit(lo_hi | node_flags << 32, level + 1);  // a branch node's child: 48-bit pgno
        continue;
      }
      std::string key(reinterpret_cast<const char*>(node + kNodeHeader), key_bytes);
      if ((node_flags & ~uint64_t{kBigData}) != 0)
        fail("page ", pgno, ": node ", i, " has flags ", hex(node_flags),
             " (sub-databases and duplicate keys are not read)");
      uint64_t data_end = key_end + (node_flags == kBigData ? 8 : lo_hi);
      if (data_end > psize)
        fail("page ", pgno, ": node ", i, "'s value ends at byte ", data_end, ", past the page");
      if (node_flags == kBigData) overflow_run(le(&page[key_end], 8), lo_hi, key);
      keys->push_back(std::move(key));
    }
  }
};

}  // namespace

FileStamp file_stamp(int fd) {
  struct stat st;
  if (::fstat(fd, &st) != 0) return {};
  return {static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino),
          static_cast<uint64_t>(st.st_size),
          static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec};
}

LMDBFileCheck check_lmdb_file(const char* op, const std::string& path) {
  LMDBFileCheck out;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  check_state(fd >= 0, op, "cannot open ", path, ": ", std::strerror(errno));
  struct Close {
    int fd;
    ~Close() { ::close(fd); }
  } close_on_exit{fd};
  struct stat st;
  check_state(::fstat(fd, &st) == 0 && S_ISREG(st.st_mode), op, path, " is not a regular file");
  out.stamp = file_stamp(fd);
  Walk w(op, path, fd, &out.keys);
  const uint64_t size = out.stamp.bytes;
  if (size < kMetaBytes)
    w.fail("file is ", size, " bytes, too short for an LMDB meta page (", kMetaBytes, ")");
  std::vector<uint8_t> meta[2];
  for (int m = 0; m < 2; ++m) {
    meta[m] = w.read(m * w.psize, kMetaBytes);  // liblmdb finds meta 1 at meta 0's page size
    const uint8_t* p = meta[m].data();
    if (le(p, 8) != static_cast<uint64_t>(m) || le(p + 10, 2) != kMeta)
      w.fail("page ", m, " is not a meta page (page number ", le(p, 8), ", flags ",
             hex(le(p + 10, 2)), ")");
    if (le(p + kMagicAt, 4) != kMagic)
      w.fail("not an LMDB file (meta page ", m, " has magic ", hex(le(p + kMagicAt, 4)), ")");
    if (le(p + kVersionAt, 4) != kVersion)
      w.fail("LMDB data format version ", le(p + kVersionAt, 4), " in meta page ", m,
             "; liblmdb 0.9 reads version 1");
    uint64_t psize = le(p + kPageSizeAt, 4);
    if (psize < 512 || psize > 32768 || (psize & (psize - 1)) != 0 || (m == 1 && psize != w.psize))
      w.fail("meta page ", m, " says the page size is ", psize, " (a power of two from 512 to ",
             "32768, the same in both meta pages)");
    w.psize = psize;
    if (m == 0 && size < 2 * psize)
      w.fail("file is ", size, " bytes, shorter than its two meta pages (page size ", psize, ")");
  }
  // liblmdb reads the meta page with the larger transaction id (meta 0 on a tie). Commit t writes
  // meta t % 2, so the two hold the last two commits, and the file never shrinks: a damaged id
  // that makes the older snapshot look newer shows as ids not one apart, or as a newer snapshot
  // ending before the older one.
  uint64_t txn0 = le(&meta[0][kTxnAt], 8), txn1 = le(&meta[1][kTxnAt], 8);
  if (txn0 % 2 != 0 || (txn0 + 1 != txn1 && txn1 + 1 != txn0 && (txn0 | txn1) != 0))
    w.fail("its meta pages' transaction ids ", txn0, " and ", txn1, " are not two successive ",
           "commits (meta 0 holds the even one)");
  const uint8_t* m = meta[txn1 > txn0].data();
  uint64_t last = le(m + kLastPageAt, 8), older_last = le(&meta[txn1 <= txn0][kLastPageAt], 8);
  if (last < older_last)
    w.fail("its newer meta page ends at page ", last, ", before the older one's last page ",
           older_last);
  if (last < 1 || last >= size / w.psize)
    w.fail("file is ", size, " bytes but its meta page says the last page is ", last,
           " (page size ", w.psize, ")");
  const uint8_t* db = m + kMainDbAt;
  uint64_t flags = le(db + 4, 2), depth = le(db + 6, 2), root = le(db + 40, 8);
  if (flags != 0)
    w.fail("the main database has flags ", hex(flags),
           "; only plain key -> value stores are read (no duplicates, integer or reverse keys)");
  w.pages = last + 1;
  w.seen.assign(w.pages, 0);
  w.depth = static_cast<int>(depth);
  if (root == kNoPage ? depth != 0 : (depth < 1 || depth > kMaxDepth))
    w.fail("the main database's depth is ", depth, " (root page ", root, ")");
  if (root != kNoPage) w.visit(root, 1);
  uint64_t counts[4] = {le(db + 8, 8), le(db + 16, 8), le(db + 24, 8), le(db + 32, 8)};
  if (counts[0] != w.branch || counts[1] != w.leaf || counts[2] != w.overflow ||
      counts[3] != out.keys.size())
    w.fail("its meta page counts ", counts[0], " branch, ", counts[1], " leaf, ", counts[2],
           " overflow pages and ", counts[3], " entries; the tree has ", w.branch, ", ", w.leaf,
           ", ", w.overflow, " and ", out.keys.size());
  out.page_size = static_cast<uint32_t>(w.psize);
  return out;
}

}  // namespace wick::data
