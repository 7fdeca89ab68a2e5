// libFuzzer: arbitrary bytes as an LMDB store. LMDBDataset opens it, lists its keys and decodes
// every value; and whatever the structural check accepts is also read by liblmdb directly - a
// cursor forwards and backwards over the whole tree, then mdb_get for every key - since the check
// promises that liblmdb can follow all of it (Note [checking LMDB files before liblmdb]). Every
// input must read or raise a clean error; a SIGBUS or SIGSEGV inside liblmdb is a finding.
//
// The custom mutator works on what LMDB is made of: it truncates at and near page boundaries,
// rewrites page header fields, node offsets and node fields, and meta page fields with edge
// values, zeroes pages and copies one page over another (a shared page, a cycle), and otherwise
// hands over to libFuzzer's own byte mutations. tests/fuzz/fuzz_lmdb.dict adds LMDB's tokens.
#include <lmdb.h>

#include <cstring>
#include <fstream>
#include <random>

#include "data/lmdb_check.h"
#include "data/lmdb_store.h"
#include "data/records/example_proto.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

namespace {

// liblmdb on a store the check accepted: it must not crash, and its key order must be the walk's.
void read_with_liblmdb(const std::string& path, const wick::data::LMDBFileCheck& checked) {
  MDB_env* env = nullptr;
  if (mdb_env_create(&env) != 0) return;
  mdb_env_set_mapsize(env, checked.stamp.bytes);
  MDB_txn* txn = nullptr;
  MDB_dbi dbi = 0;
  MDB_cursor* cursor = nullptr;
  if (mdb_env_open(env, path.c_str(), MDB_RDONLY | MDB_NOSUBDIR | MDB_NOLOCK | MDB_NOTLS, 0) == 0 &&
      mdb_txn_begin(env, nullptr, MDB_RDONLY, &txn) == 0 &&
      mdb_dbi_open(txn, nullptr, 0, &dbi) == 0 && mdb_cursor_open(txn, dbi, &cursor) == 0) {
    MDB_val key, value;
    size_t n = 0;
    for (int rc = mdb_cursor_get(cursor, &key, &value, MDB_FIRST); rc == 0;
         rc = mdb_cursor_get(cursor, &key, &value, MDB_NEXT), ++n) {
      if (n >= checked.keys.size() ||
          std::string(static_cast<const char*>(key.mv_data), key.mv_size) != checked.keys[n]) {
        std::fprintf(stderr, "finding: liblmdb's key %zu differs from the check's walk\n", n);
        std::abort();
      }
      volatile char touch = value.mv_size > 0 ? static_cast<const char*>(value.mv_data)[0] : 0;
      (void)touch;
    }
    for (int rc = mdb_cursor_get(cursor, &key, &value, MDB_LAST); rc == 0;
         rc = mdb_cursor_get(cursor, &key, &value, MDB_PREV)) {
    }
    mdb_cursor_close(cursor);
    for (const std::string& k : checked.keys) {
      MDB_val kv{k.size(), const_cast<char*>(k.data())};
      if (mdb_get(txn, dbi, &kv, &value) == 0 && value.mv_size > 0) {
        volatile char last = static_cast<const char*>(value.mv_data)[value.mv_size - 1];
        (void)last;
      }
    }
  }
  if (txn != nullptr) mdb_txn_abort(txn);
  mdb_env_close(env);
}

std::string tiny_example(int label, size_t padding) {
  using wick::data::Feature;
  wick::data::Features features{{"image", Feature::bytes({std::string(16, char(label * 7))})},
                                {"label", Feature::int64s({label})}};
  if (padding > 0) features["pad"] = Feature::bytes({std::string(padding, 'p')});
  return wick::data::encode_example(features);
}

}  // namespace

// With WICK_FUZZ_WRITE_SEEDS=<dir>, writes the seed corpus first: small valid stores written by
// liblmdb itself (tests/fuzz/make_corpus.py runs this).
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  const char* dir = std::getenv("WICK_FUZZ_WRITE_SEEDS");
  if (dir == nullptr) return 0;
  struct Seed {
    const char* name;
    int entries;
    size_t padding;
  };
  // empty: meta pages only; one_entry: a root leaf; overflow: a value on a 2-page overflow run;
  // two_leaves: a branch root over two leaves.
  for (Seed seed : {Seed{"empty", 0, 0}, Seed{"one_entry", 1, 0}, Seed{"overflow", 1, 5000},
                    Seed{"two_leaves", 40, 100}}) {
    std::string file = wick::fuzz::scratch_dir() + "/seed.lmdb";
    {
      wick::data::LMDBWriter writer(file);
      for (int i = 0; i < seed.entries; ++i)
        writer.put(wick::data::LMDBDataset::key_of(i), tiny_example(i % 10, seed.padding));
      writer.commit();
    }
    std::ifstream in(file, std::ios::binary);
    std::ofstream(std::string(dir) + "/" + seed.name, std::ios::binary) << in.rdbuf();
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = wick::fuzz::scratch_dir() + "/store.lmdb";
  wick::fuzz::write_file(path, data, size);
  wick::fuzz::expect_clean([&] {
    wick::data::LMDBDataset dataset(path, {wick::Shape{1, 4, 4}});
    for (int64_t i = 0; i < dataset.size(); ++i) {
      wick::fuzz::expect_clean([&] { dataset.get(i); });
    }
  });
  wick::fuzz::expect_clean(
      [&] { read_with_liblmdb(path, wick::data::check_lmdb_file("fuzz_lmdb", path)); });
  return 0;
}

namespace {

uint64_t get(const uint8_t* p, int bytes) {
  uint64_t v = 0;
  std::memcpy(&v, p, bytes);  // little-endian, as LMDB writes on this machine
  return v;
}

void put(uint8_t* p, int bytes, uint64_t v) { std::memcpy(p, &v, bytes); }

}  // namespace

// Mutations that break LMDB's structure where it matters (see the top of this file).
extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size,
                                          unsigned int seed) {
  std::minstd_rand rng(seed);
  auto pick = [&](uint64_t n) { return n == 0 ? 0 : rng() % n; };
  uint64_t psize = size >= 44 ? get(data + 40, 4) : 0;
  if (psize < 512 || psize > 32768 || (psize & (psize - 1)) != 0) psize = 4096;
  const uint64_t pages = size / psize;
  // Edge values for a field, given the store's page count and page size.
  auto edge = [&](int bytes) -> uint64_t {
    const uint64_t values[] = {
        0,           1,         2,      pages - 1,  pages,        pages + 1,         psize - 1,
        psize,       psize + 1, 0xffff, 0x7fffffff, ~uint64_t{0}, uint64_t{1} << 32, pick(pages),
        pick(psize), rng()};
    uint64_t v = values[pick(sizeof(values) / sizeof(values[0]))];
    return bytes == 8 ? v : v & ((uint64_t{1} << (8 * bytes)) - 1);
  };
  switch (pages < 1 ? 7 : pick(10)) {
    case 0:  // truncate at a page boundary
      return std::min<size_t>(size, pick(pages + 1) * psize);
    case 1: {  // truncate near a page boundary, or inside the meta page
      uint64_t at = pick(pages + 1) * psize + pick(64) - 32;
      return pick(4) == 0 ? pick(160) : std::min<size_t>(size, at);
    }
    case 2: {  // a page header field: pgno, flags, lower, upper (or an overflow page's count)
      static const int at[] = {0, 10, 12, 14, 12}, width[] = {8, 2, 2, 2, 4};
      int f = static_cast<int>(pick(5));
      uint64_t flag = uint64_t{1} << pick(16),
               v = f == 1 ? flag | (pick(2) ? 0 : 1) : edge(width[f]);
      put(data + pick(pages) * psize + at[f], width[f], v);
      return size;
    }
    case 3: {  // a node's offset or a node field (lo, hi, flags, key size) on a branch or leaf page
      if (pages < 3) return LLVMFuzzerMutate(data, size, max_size);
      uint8_t* page = data + (2 + pick(pages - 2)) * psize;
      uint64_t lower = get(page + 12, 2), nodes = lower >= 16 ? (lower - 16) / 2 : 0;
      if (nodes == 0 || 16 + 2 * nodes > psize) return LLVMFuzzerMutate(data, size, max_size);
      uint8_t* ptr = page + 16 + 2 * pick(nodes);
      uint64_t node = get(ptr, 2);
      if (pick(3) == 0 || node + 8 > psize) {
        put(ptr, 2, edge(2));
      } else {
        put(page + node + 2 * pick(4), 2, edge(2));
      }
      return size;
    }
    case 4: {  // a meta page field: page size, a main database field, last page, transaction id
      static const int at[] = {40, 92, 94, 96, 104, 112, 120, 128, 136, 144};
      static const int width[] = {4, 2, 2, 8, 8, 8, 8, 8, 8, 8};
      int f = static_cast<int>(pick(10));
      put(data + pick(std::min<uint64_t>(pages, 2)) * psize + at[f], width[f], edge(width[f]));
      return size;
    }
    case 5:  // a page zeroed or filled
      std::memset(data + pick(pages) * psize, pick(2) ? 0 : 0xff, psize);
      return size;
    case 6:  // one page copied over another
      std::memmove(data + pick(pages) * psize, data + pick(pages) * psize, psize);
      return size;
    default:
      return LLVMFuzzerMutate(data, size, max_size);
  }
}
