// Tests of safetensors saving and loading (nn/serialization.h): round trips of every dtype and
// layout, the exact bytes of a small file, a file written by tests/fixtures/safetensors_io.py,
// corrupt files that must each raise a clear error (and never crash), and the atomic write.
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include "nn/serialization.h"
#include "tests/cpp/test_util.h"

namespace wick {
namespace {

namespace fs = std::filesystem;
using testing::expect_error;

// ---- helpers -----------------------------------------------------------------------------------

std::string bytes_of(const Tensor& t) {
  Tensor c = t.contiguous();
  return std::string(static_cast<const char*>(c.data_ptr()), c.nbytes());
}

// Same dtype, shape and bytes (so NaNs and -0.0 compare exactly).
void expect_same(const Tensor& actual, const Tensor& expected, const std::string& name) {
  SCOPED_TRACE(name);
  ASSERT_TRUE(actual.defined());
  EXPECT_EQ(actual.dtype(), expected.dtype());
  EXPECT_EQ(actual.shape(), expected.shape());
  EXPECT_EQ(bytes_of(actual), bytes_of(expected));
  // (wick calls some empty tensors non-contiguous, e.g. shape (2, 0, 3); their layout is moot.)
  if (actual.numel() > 0) {
    EXPECT_TRUE(actual.is_contiguous());
  }
  EXPECT_TRUE(actual.device().is_cpu());
  EXPECT_FALSE(actual.requires_grad());
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Removes any old file first: truncating one in place makes ext4 flush it to disk on close, which
// made the thousands of writes below slow.
void write_file(const fs::path& path, const std::string& bytes) {
  fs::remove(path);
  std::ofstream(path, std::ios::binary).write(bytes.data(), bytes.size());
}

// A safetensors file from header text (unpadded, as given) and a data buffer.
std::string make_file(const std::string& header, const std::string& data) {
  std::string file(8, '\0');
  for (int i = 0; i < 8; ++i) file[i] = static_cast<char>(uint64_t(header.size()) >> (8 * i));
  return file + header + data;
}

fs::path fixture(const std::string& name) {
  return wick::testing::source_path("tests/fixtures/" + name);
}

class SafetensorsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "wick-safetensors-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path path(const std::string& name) const { return dir_ / name; }
  std::vector<std::string> files() const {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(dir_)) {
      names.push_back(entry.path().filename().string());
    }
    std::sort(names.begin(), names.end());
    return names;
  }
  // Writes `bytes` and expects loading them to raise E with `fragment` in its message.
  template <class E = std::invalid_argument>
  void expect_load_error(const std::string& bytes, const std::string& fragment) {
    write_file(path("bad.safetensors"), bytes);
    expect_error<E>([&] { load_safetensors(path("bad.safetensors").string()); }, fragment);
  }

  fs::path dir_;
};

// A state dict with one tensor of every dtype in several shapes, including 0-d and empty ones.
StateDict every_dtype() {
  Generator g(7);
  StateDict sd;
  for (DType dtype : {kFloat64, kFloat32, kFloat16, kBFloat16, kInt64, kInt32, kUInt8, kBool}) {
    std::string name = dtype_name(dtype);
    Tensor base = dtype == kBool       ? randn({2, 3}, kFloat32, g).gt(zeros({2, 3}))
                  : is_floating(dtype) ? randn({2, 3}, dtype, g)
                                       : randint(0, 200, {2, 3}, dtype, g);
    sd[name + ".matrix"] = base;
    sd[name + ".scalar"] = base.select(0, 1).select(0, 2);  // 0-d, at an offset in its storage
    sd[name + ".empty"] = empty({0}, dtype);
    sd[name + ".empty_2d"] = empty({2, 0, 3}, dtype);
  }
  return sd;
}

// ---- round trips -------------------------------------------------------------------------------

TEST_F(SafetensorsTest, RoundTripsEveryDtypeWithMetadata) {
  StateDict sd = every_dtype();
  std::map<std::string, std::string> metadata = {
      {"format", "pt"}, {"empty", ""}, {"quotes \"\\\n", "tab\t"}, {"unicode", "épsilon ε"}};
  save_safetensors(path("all.safetensors").string(), sd, metadata);
  SafetensorsFile loaded = load_safetensors(path("all.safetensors").string());
  EXPECT_EQ(loaded.metadata, metadata);
  ASSERT_EQ(loaded.tensors.size(), sd.size());
  for (const auto& [name, t] : sd) expect_same(loaded.tensors.at(name), t, name);
  EXPECT_EQ(files(), std::vector<std::string>{"all.safetensors"});  // no temporary left behind
}

TEST_F(SafetensorsTest, RoundTripsNonContiguousTensorsAsTheirValues) {
  Generator g(3);
  Tensor base = randn({4, 6}, kFloat32, g).requires_grad_();
  StateDict sd = {
      {"transposed", base.t()},
      {"strided", base.slice(1, 1, 6, 2)},
      {"broadcast", randn({3}, kFloat64, g).expand({4, 3})},  // stride 0
      {"selected", base.select(1, 4)},
      {"computed", base * 2},  // has a grad_fn; saved as its values
  };
  save_safetensors(path("views.safetensors").string(), sd);
  SafetensorsFile loaded = load_safetensors(path("views.safetensors").string());
  EXPECT_TRUE(loaded.metadata.empty());
  for (const auto& [name, t] : sd) expect_same(loaded.tensors.at(name), t.detach(), name);
}

TEST_F(SafetensorsTest, RoundTripsEmptyStateDictAndOverwrites) {
  std::string file = path("empty.safetensors").string();
  save_safetensors(file, {{"x", ones({2})}});
  save_safetensors(file, {});
  EXPECT_EQ(read_file(file), make_file("{}      ", ""));
  SafetensorsFile loaded = load_safetensors(file);
  EXPECT_TRUE(loaded.tensors.empty());
  EXPECT_TRUE(loaded.metadata.empty());
  EXPECT_EQ(files(), std::vector<std::string>{"empty.safetensors"});
}

// The exact bytes, worked out by hand: the header JSON is 133 bytes, padded with 3 spaces to 136
// (0x88); then float32 1.0 and 2.0 (0x3f800000, 0x40000000 little-endian) and the byte 7.
TEST_F(SafetensorsTest, WritesTheExpectedBytes) {
  StateDict sd = {{"a", tensor({1.0, 2.0})}, {"b", tensor(std::vector<uint8_t>{7}, Shape{1, 1})}};
  save_safetensors(path("small.safetensors").string(), sd, {{"k", "v"}});
  std::string expected = std::string("\x88\0\0\0\0\0\0\0", 8) +
                         "{\"__metadata__\":{\"k\":\"v\"},"
                         "\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
                         "\"b\":{\"dtype\":\"U8\",\"shape\":[1,1],\"data_offsets\":[8,9]}}   " +
                         std::string("\0\0\x80\x3f\0\0\0\x40\x07", 9);
  EXPECT_EQ(read_file(path("small.safetensors")), expected);
}

// tests/fixtures/reference.safetensors comes from make_safetensors_fixture.py (PyTorch tensors
// written by safetensors_io.py): tensors ordered by element size, not name, and a zero-byte
// tensor sharing its offset with the next one.
TEST(SafetensorsFixture, ReadsAFileWrittenByPython) {
  SafetensorsFile f = load_safetensors(fixture("reference.safetensors").string());
  EXPECT_EQ(f.metadata.at("format"), "pt");
  EXPECT_EQ(f.metadata.at("unicode"), "épsilon ε");
  ASSERT_EQ(f.tensors.size(), 11u);
  auto& t = f.tensors;
  double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(t["f64"].to_vector<double>(), (std::vector<double>{0.1, -2.5, 1e300, -0.0, inf, 3.0}));
  EXPECT_EQ(t["f64"].shape(), (Shape{2, 3}));
  EXPECT_EQ(t["f32"].to_vector<float>(), (std::vector<float>{1.0f, -0.5f, 3.4028234663852886e38f}));
  EXPECT_EQ(t["f16"].to_vector<float>(),
            (std::vector<float>{1, -2, 65504, std::ldexp(1.0f, -14), std::ldexp(1.0f, -24), 0}));
  EXPECT_EQ(t["f16"].shape(), (Shape{3, 2}));
  EXPECT_EQ(t["bf16"].dtype(), kBFloat16);
  EXPECT_EQ(t["bf16"].to_vector<float>(),
            (std::vector<float>{1.0f, -3.140625f, 256.0f, 0.0078125f}));
  EXPECT_EQ(t["i64"].to_vector<int64_t>(), (std::vector<int64_t>{INT64_MIN, INT64_MAX, 0, -1}));
  EXPECT_EQ(t["i32"].to_vector<int32_t>(), (std::vector<int32_t>{INT32_MIN, INT32_MAX, 7}));
  EXPECT_EQ(t["u8"].to_vector<int>(), (std::vector<int>{0, 255, 128}));
  EXPECT_EQ(t["u8"].shape(), (Shape{3, 1}));
  EXPECT_EQ(t["bool"].to_vector<int>(), (std::vector<int>{1, 0, 1}));
  EXPECT_EQ(t["scalar"].dim(), 0);
  EXPECT_EQ(t["scalar"].item<float>(), 42.0f);
  EXPECT_EQ(t["empty"].shape(), (Shape{0, 3}));
  EXPECT_EQ(t["layer.0.weight"].to_vector<float>(), (std::vector<float>{0, 3, 1, 4, 2, 5}));
}

// ---- corrupt files -----------------------------------------------------------------------------

TEST_F(SafetensorsTest, MissingFileAndDirectoryRaise) {
  expect_error<std::runtime_error>([&] { load_safetensors(path("missing.safetensors").string()); },
                                   "missing.safetensors: cannot open: No such file or directory");
  expect_error<std::runtime_error>([&] { load_safetensors(dir_.string()); },
                                   "cannot read: Is a directory");
  // The errno and the path travel with the error, for Python's FileNotFoundError and friends.
  try {
    load_safetensors(path("missing.safetensors").string());
    ADD_FAILURE() << "no error";
  } catch (const FileError& e) {
    EXPECT_EQ(e.error_number(), ENOENT);
    EXPECT_EQ(e.path(), path("missing.safetensors").string());
  }
}

TEST_F(SafetensorsTest, EveryTruncationRaises) {
  save_safetensors(path("good.safetensors").string(),
                   {{"w", randn({3, 2})}, {"b", zeros({2}, kFloat64)}, {"s", tensor({true})}},
                   {{"epoch", "3"}});
  std::string good = read_file(path("good.safetensors"));
  for (size_t n = 0; n < good.size(); ++n) {
    SCOPED_TRACE("prefix of " + std::to_string(n) + " bytes");
    expect_load_error(good.substr(0, n), "[load_safetensors]");
  }
  expect_load_error(good.substr(0, 5), "5 bytes, too short for the 8-byte header length");
  expect_load_error(good.substr(0, 20), "runs past the end of the file");
  expect_load_error(good.substr(0, good.size() - 1), "lie outside the");
}

TEST_F(SafetensorsTest, HugeHeaderLengthsRaiseBeforeAllocating) {
  std::string tail = "{}      ";
  for (uint64_t n : {uint64_t(100'000'001), uint64_t(1) << 40, ~uint64_t(0)}) {
    std::string file(8, '\0');
    for (int i = 0; i < 8; ++i) file[i] = static_cast<char>(n >> (8 * i));
    expect_load_error(file + tail, "exceeds the 100000000-byte limit");
  }
  std::string file = make_file(tail, "");
  file[0] = 9;  // one byte past the end
  expect_load_error(file, "header length 9 runs past the end of the file (8 bytes follow");
}

TEST(EscapeNonUtf8, KeepsValidUtf8AndEscapesEveryOtherByte) {
  EXPECT_EQ(escape_non_utf8("plain ascii"), "plain ascii");
  EXPECT_EQ(escape_non_utf8("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"),
            "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");  // 2-, 3- and 4-byte sequences
  EXPECT_EQ(escape_non_utf8("a\xff"
                            "b"),
            "a\\xffb");
  EXPECT_EQ(escape_non_utf8("\xc3"), "\\xc3");                    // a sequence cut short
  EXPECT_EQ(escape_non_utf8("\xc0\xaf"), "\\xc0\\xaf");           // an overlong '/'
  EXPECT_EQ(escape_non_utf8("\xed\xa0\x80"), "\\xed\\xa0\\x80");  // a surrogate
}

struct BadHeader {
  std::string header;
  std::string fragment;
};

TEST_F(SafetensorsTest, MalformedHeadersRaiseClearErrors) {
  const std::string f32 = R"("dtype":"F32","shape":[2],"data_offsets":[0,8])";
  std::string zeros_list = "0";
  for (int i = 0; i < 64; ++i) zeros_list += ",0";  // 65 elements
  const std::vector<BadHeader> cases = {
      {"", "header does not start with '{'"},
      {"  {}", "header does not start with '{'"},
      {"[1, 2]", "header does not start with '{'"},
      {"{", "header is not valid JSON"},
      {"{\"a\": 1,}", "header is not valid JSON"},
      {"{} trailing", "header is not valid JSON"},
      {"{/* comment */}", "header is not valid JSON"},
      {std::string("{\"\xff\": 1}"), "header is not valid JSON"},  // not UTF-8
      // ... and the byte is quoted escaped, so the message survives the trip to Python.
      {std::string("{\"a\xfe\": 1}"), "last read: '\"a\\xfe'"},
      {std::string("{}\0\0\0", 5), "header is not valid JSON: it holds a NUL byte at offset 2"},
      {std::string("{\"a\0\": 1}", 9), "holds a NUL byte"},
      {R"({"x": 1})", "entry 'x' is not an object"},
      {R"({"x": {"shape":[2],"data_offsets":[0,8]}})", "tensor 'x' has no \"dtype\""},
      {R"({"x": {"dtype":32,"shape":[2],"data_offsets":[0,8]}})", "dtype is not a string"},
      {R"({"x": {"dtype":"F32","data_offsets":[0,8]}})", "tensor 'x' has no \"shape\""},
      {R"({"x": {"dtype":"F32","shape":2,"data_offsets":[0,8]}})", "shape is not an array"},
      {R"({"x": {"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})", "-2, not a non-negative"},
      {R"({"x": {"dtype":"F32","shape":[2.0],"data_offsets":[0,8]}})", "not a non-negative"},
      {R"({"x": {"dtype":"F32","shape":["2"],"data_offsets":[0,8]}})", "not a non-negative"},
      {R"({"x": {"dtype":"F32","shape":[1,1,1,1,1,1,1,1,2],"data_offsets":[0,8]}})",
       "tensor 'x' has 9 dimensions; wick supports at most 8"},
      {R"({"x": {"dtype":"F32","data_offsets":[0,8],"shape":[)" + zeros_list + "]}}",
       "header has an array longer than 64 elements"},
      {R"({"x": {"dtype":"F32","shape":[[[[[[[[[2]]]]]]]]],"data_offsets":[0,8]}})",
       "nests deeper"},
      {R"({"x": {"dtype":"F32","shape":[4294967296,4294967296,4],"data_offsets":[0,8]}})",
       "too large to exist"},
      {R"({"x": {"dtype":"F32","shape":[0,4611686018427387904,4],"data_offsets":[0,0]}})",
       "too large to exist"},
      {R"({"x": {"dtype":"U8","shape":[9223372036854775808],"data_offsets":[0,8]}})",
       "too large to exist"},
      {R"({"x": {"dtype":"F32","shape":[18446744073709551616],"data_offsets":[0,8]}})",
       "not a non-negative integer"},
      {R"({"x": {"dtype":"F32","shape":[2]}})", "tensor 'x' has no \"data_offsets\""},
      {R"({"x": {"dtype":"F32","shape":[2],"data_offsets":[0,8,9]}})", "not [begin, end]"},
      {R"({"x": {"dtype":"F32","shape":[2],"data_offsets":[-1,8]}})", "not a non-negative"},
      {R"({"x": {"dtype":"F32","shape":[2],"data_offsets":[8,0]}})", "end before they begin"},
      {R"({"x": {"dtype":"F32","shape":[2],"data_offsets":[0,16]}})",
       "[0,16] lie outside the 8-byte data buffer"},
      {R"({"x": {"dtype":"F32","shape":[3],"data_offsets":[0,8]}})",
       "shape [3] and dtype F32 (12 bytes) but data_offsets [0,8] span 8 bytes"},
      {R"({"x": {"dtype":"F32","shape":[],"data_offsets":[0,8]}})", "(4 bytes) but data_offsets"},
      {R"({"x": {"dtype":"F32","shape":[1],"data_offsets":[0,4]}, "y": {"dtype":"F32","shape":[1],"data_offsets":[2,6]}})",
       "tensor 'y' (bytes 2..6) overlaps tensor 'x' (bytes 0..4)"},
      {R"({"x": {"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
       "bytes 0..4 of the data buffer belong to no tensor"},
      {R"({"x": {"dtype":"F32","shape":[1],"data_offsets":[0,4]}})",
       "bytes 4..8 of the data buffer belong to no tensor"},
      {"{\"x\": {" + f32 + "}, \"x\": {" + f32 + "}}", "header has the key 'x' twice"},
      {R"({"x": {"dtype":"F32","dtype":"F32","shape":[2],"data_offsets":[0,8]}})",
       "key 'dtype' twice"},
      {R"({"__metadata__": {"k":"a","k":"b"}})", "key 'k' twice"},
      {R"({"__metadata__": {"epoch": 3}})", "__metadata__ value of 'epoch' is 3, not a string"},
      {R"({"__metadata__": ["a"]})", "__metadata__ is not an object"},
      {R"({"__metadata__": "a"})", "__metadata__ is not an object"},
  };
  for (const BadHeader& c : cases) {
    SCOPED_TRACE(c.header);
    expect_load_error(make_file(c.header, std::string(8, '\0')), c.fragment);
  }
}

TEST_F(SafetensorsTest, UnsupportedDtypesRaiseTypeError) {
  for (std::string dtype : {"I16", "U16", "U32", "U64", "F8_E4M3", "F8_E5M2", "f32", ""}) {
    SCOPED_TRACE(dtype);
    expect_load_error<TypeError>(
        make_file(R"({"w": {"dtype":")" + dtype + R"(","shape":[1],"data_offsets":[0,1]}})",
                  std::string(1, '\0')),
        "tensor 'w' has dtype '" + dtype + "', which wick does not support");
  }
}

TEST_F(SafetensorsTest, AcceptsWhatTheFormatAllows) {
  // Padding with spaces, data in a different order from the names, null metadata, unknown fields.
  std::string header =
      R"({"__metadata__":null,"b":{"dtype":"U8","shape":[2],"data_offsets":[0,2],"extra":1},)"
      R"("a":{"shape":[],"data_offsets":[2,3],"dtype":"BOOL"}})";
  write_file(path("ok.safetensors"), make_file(header + "      ", "\x05\x06\x01"));
  SafetensorsFile f = load_safetensors(path("ok.safetensors").string());
  EXPECT_TRUE(f.metadata.empty());
  EXPECT_EQ(f.tensors.at("b").to_vector<int>(), (std::vector<int>{5, 6}));
  EXPECT_EQ(f.tensors.at("a").item<bool>(), true);
  // ... but a bool byte other than 0 or 1 is corrupt (and undefined behaviour to read as bool).
  expect_load_error(make_file(header, "\x05\x06\x02"), "BOOL tensor 'a' holds byte 2");
}

// Flips random bytes of a valid file: each load either fails with an exception or gives tensors
// whose sizes agree with the file. A crash or a sanitizer report fails the test.
TEST_F(SafetensorsTest, RandomMutationsNeverCrash) {
  save_safetensors(path("good.safetensors").string(),
                   {{"w", randn({3, 4})},
                    {"i", tensor({1, 2, 3})},
                    {"m", tensor({true, false})},
                    {"h", randn({2}).to(kFloat16)},
                    {"s", scalar_tensor(1.5)}},
                   {{"epoch", "7"}});
  const std::string good = read_file(path("good.safetensors"));
  std::mt19937_64 rng(12345);
  int loaded = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    std::string bad = good;
    int flips = 1 + static_cast<int>(rng() % 4);
    for (int i = 0; i < flips; ++i) {
      size_t at = rng() % (trial % 2 ? bad.size() : 40);  // half the trials hit the first bytes
      bad[at] = static_cast<char>(trial % 3 ? bad[at] ^ (1 << (rng() % 8)) : rng() % 256);
    }
    write_file(path("bad.safetensors"), bad);
    try {
      SafetensorsFile f = load_safetensors(path("bad.safetensors").string());
      size_t total = 0;
      for (const auto& [name, t] : f.tensors) total += t.nbytes();
      EXPECT_LE(total, bad.size());
      ++loaded;
    } catch (const std::exception& e) {
      EXPECT_NE(std::string(e.what()).find("[load_safetensors]"), std::string::npos) << e.what();
    }
  }
  EXPECT_GT(loaded, 0);  // flips inside tensor data still load
}

// ---- atomic writes -----------------------------------------------------------------------------

TEST_F(SafetensorsTest, FailedSaveLeavesTargetUntouchedAndNoTemporaryFile) {
  std::string file = path("model.safetensors").string();
  save_safetensors(file, {{"w", ones({2})}});
  const std::string before = read_file(file);

  expect_error<std::invalid_argument>(
      [&] {
        save_safetensors(file, {{"a", ones({3})}, {"b", Tensor()}});
      },
      "model.safetensors: tensor 'b' is undefined");
  expect_error<std::invalid_argument>(
      [&] {
        save_safetensors(file, {{"__metadata__", ones({1})}});
      },
      "\"__metadata__\" is reserved");
  expect_error<std::invalid_argument>(
      [&] {
        save_safetensors(file, {{"ok", ones({1})}}, {{"k", "\xff"}});
      },
      "not valid UTF-8");
  EXPECT_EQ(read_file(file), before);
  EXPECT_EQ(files(), std::vector<std::string>{"model.safetensors"});
}

TEST_F(SafetensorsTest, FileSystemErrorsNameThePathAndReason) {
  std::string missing_dir = path("no-such-dir/model.safetensors").string();
  expect_error<std::runtime_error>(
      [&] {
        save_safetensors(missing_dir, {{"w", ones({1})}});
      },
      missing_dir + ": cannot create temporary file");
  expect_error<std::runtime_error>(
      [&] {
        save_safetensors(missing_dir, {{"w", ones({1})}});
      },
      "No such file or directory");
  // A directory where the file should go: refused before any temporary file is made.
  fs::create_directory(path("taken"));
  expect_error<FileError>(
      [&] {
        save_safetensors(path("taken").string(), {{"w", ones({1})}});
      },
      "taken: cannot write: Is a directory");
  EXPECT_EQ(files(), std::vector<std::string>{"taken"});
  EXPECT_TRUE(fs::is_directory(path("taken")));
}

}  // namespace
}  // namespace wick
