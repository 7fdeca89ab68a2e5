#include "data/lmdb_store.h"

#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "core/error.h"
#include "data/lmdb_check.h"
#include "data/loader_timeline.h"

#ifdef WICK_HAVE_LMDB
#include <lmdb.h>
#endif

namespace wick::data {

namespace {

constexpr const char* kWriterOp = "LMDBWriter";
constexpr const char* kOp = "LMDBDataset";

}  // namespace

bool has_lmdb() {
#ifdef WICK_HAVE_LMDB
  return true;
#else
  return false;
#endif
}

std::string LMDBDataset::key_of(int64_t index) {
  char key[24];
  std::snprintf(key, sizeof(key), "%08lld", static_cast<long long>(index));
  return key;
}

#ifdef WICK_HAVE_LMDB

namespace {

void check_mdb(int rc, const char* op, const std::string& path, const char* what) {
  if (rc != MDB_SUCCESS)
    throw std::runtime_error(error_message(op, path, ": ", what, ": ", mdb_strerror(rc)));
}

}  // namespace

struct LMDBWriter::State {
  MDB_env* env = nullptr;
  MDB_txn* txn = nullptr;
  MDB_dbi dbi = 0;
  ~State() {
    if (txn != nullptr) mdb_txn_abort(txn);
    if (env != nullptr) mdb_env_close(env);
  }
};

LMDBWriter::LMDBWriter(const std::string& path, uint64_t map_bytes)
    : state_(std::make_unique<State>()), path_(path) {
  std::remove(path.c_str());  // a new store, as TFRecordWriter truncates
  std::remove((path + "-lock").c_str());
  check_mdb(mdb_env_create(&state_->env), kWriterOp, path, "cannot create the environment");
  check_mdb(mdb_env_set_mapsize(state_->env, map_bytes), kWriterOp, path, "map size");
  // MDB_NOSUBDIR: the store is one file (plus path-lock), not a directory of two.
  check_mdb(mdb_env_open(state_->env, path.c_str(), MDB_NOSUBDIR, 0644), kWriterOp, path,
            "cannot open for writing");
  check_mdb(mdb_txn_begin(state_->env, nullptr, 0, &state_->txn), kWriterOp, path, "begin");
  check_mdb(mdb_dbi_open(state_->txn, nullptr, 0, &state_->dbi), kWriterOp, path, "open the db");
}

LMDBWriter::~LMDBWriter() { std::remove((path_ + "-lock").c_str()); }

void LMDBWriter::put(const std::string& key, const std::string& value) {
  check_state(state_->txn != nullptr, kWriterOp, "put into ", path_, " after commit()");
  check_value(!key.empty() && key.size() <= 511, kWriterOp, "keys are 1-511 bytes; got ",
              key.size());
  MDB_val k{key.size(), const_cast<char*>(key.data())};
  MDB_val v{value.size(), const_cast<char*>(value.data())};
  check_mdb(mdb_put(state_->txn, state_->dbi, &k, &v, 0), kWriterOp, path_,
            ("cannot store key " + key).c_str());
  ++entries_;
}

void LMDBWriter::commit() {
  check_state(state_->txn != nullptr, kWriterOp, path_, " was already committed");
  MDB_txn* txn = state_->txn;
  state_->txn = nullptr;  // mdb_txn_commit frees it, whatever it returns
  check_mdb(mdb_txn_commit(txn), kWriterOp, path_, "commit");
  check_mdb(mdb_env_sync(state_->env, 1), kWriterOp, path_, "sync");
}

struct LMDBDataset::State {
  MDB_env* env = nullptr;
  MDB_dbi dbi = 0;
  FileStamp stamp;  // the file as checked (Note [checking LMDB files before liblmdb])
  ~State() {
    if (env != nullptr) mdb_env_close(env);
  }
  // Refuses a file that changed since it was checked: liblmdb's map would show the change.
  void check_unchanged(const std::string& path, const char* when) const {
    int fd = -1;
    mdb_env_get_fd(env, &fd);
    FileStamp now = file_stamp(fd);
    check_state(now == stamp, kOp, path, ": the file changed ", when, " (", stamp.bytes,
                " bytes then, ", now.bytes, " now); open the store again");
  }
};

LMDBDataset::LMDBDataset(const std::string& path, TFRecordImageFormat format, Transform transform)
    : state_(std::make_unique<State>()),
      path_(path),
      format_(std::move(format)),
      transform_(std::move(transform)) {
  check_value(!format_.shape.empty(), kOp, "needs the images' shape");
  // The structural check reads the file before liblmdb maps it, and its walk lists the keys.
  LMDBFileCheck checked = check_lmdb_file(kOp, path);
  state_->stamp = checked.stamp;
  check_mdb(mdb_env_create(&state_->env), kOp, path, "cannot create the environment");
  // Map exactly the file that was checked, whatever map size its meta page asks for.
  check_mdb(mdb_env_set_mapsize(state_->env, checked.stamp.bytes), kOp, path, "map size");
  // Read-only, no lock file, and read transactions not bound to threads: loader workers read
  // concurrently, and nothing writes while a dataset is open.
  int rc = mdb_env_open(state_->env, path.c_str(),
                        MDB_RDONLY | MDB_NOSUBDIR | MDB_NOLOCK | MDB_NOTLS, 0);
  check_mdb(rc, kOp, path, "not a readable LMDB store");
  state_->check_unchanged(path, "while it was being opened");
  MDB_txn* txn = nullptr;
  check_mdb(mdb_txn_begin(state_->env, nullptr, MDB_RDONLY, &txn), kOp, path, "begin");
  rc = mdb_dbi_open(txn, nullptr, 0, &state_->dbi);
  mdb_txn_abort(txn);
  check_mdb(rc, kOp, path, "open the db");
  keys_ = std::move(checked.keys);
  for (size_t i = 0; i < keys_.size(); ++i) {
    std::string expected = key_of(static_cast<int64_t>(i));
    if (keys_[i] != expected)
      throw std::runtime_error(error_message(kOp, path, ": key ", quote_key(keys_[i]), " where ",
                                             expected,
                                             " was expected (keys are 0-based example numbers)"));
  }
}

LMDBDataset::~LMDBDataset() = default;

std::string LMDBDataset::value(int64_t index) const {
  check_example_index(kOp, index, size());
  const std::string& key = keys_[static_cast<size_t>(index)];
  state_->check_unchanged(path_, "since it was opened");
  MDB_txn* txn = nullptr;
  check_mdb(mdb_txn_begin(state_->env, nullptr, MDB_RDONLY, &txn), kOp, path_, "begin");
  MDB_val k{key.size(), const_cast<char*>(key.data())}, v;
  int rc = mdb_get(txn, state_->dbi, &k, &v);
  std::string out;
  if (rc == MDB_SUCCESS) out.assign(static_cast<const char*>(v.mv_data), v.mv_size);
  mdb_txn_abort(txn);
  check_mdb(rc, kOp, path_, ("cannot read key " + key).c_str());
  return out;
}

#else  // !WICK_HAVE_LMDB

struct LMDBWriter::State {};
struct LMDBDataset::State {};

LMDBWriter::LMDBWriter(const std::string& path, uint64_t) : path_(path) {
  throw std::runtime_error(error_message(kWriterOp, path, ": wick was built without liblmdb"));
}
LMDBWriter::~LMDBWriter() = default;
void LMDBWriter::put(const std::string&, const std::string&) {}
void LMDBWriter::commit() {}

LMDBDataset::LMDBDataset(const std::string& path, TFRecordImageFormat format, Transform transform)
    : path_(path), format_(std::move(format)), transform_(std::move(transform)) {
  throw std::runtime_error(error_message(kOp, path, ": wick was built without liblmdb"));
}
LMDBDataset::~LMDBDataset() = default;
std::string LMDBDataset::value(int64_t) const { return {}; }

#endif

Example LMDBDataset::get(int64_t index) const { return get_seeded(index, {0, 0, index}); }

Example LMDBDataset::get_seeded(int64_t index, const SampleSeed& s) const {
  std::string payload;
  {
    LoaderSpan read("read");
    payload = value(index);
  }
  Example example =
      image_example_from_record(kOp, payload, format_, path_ + ": key " + key_of(index));
  return {apply_transform(transform_, example.input, s), example.target};
}

}  // namespace wick::data
