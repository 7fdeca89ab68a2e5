// data/records/: CRC-32C, TFRecord framing, tf.train.Example encoding and the TFRecord image
// dataset, against files TensorFlow wrote (tests/fixtures/tfrecord/).
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <random>

#include "data/data.h"
#include "data/records/crc32c.h"
#include "tests/cpp/test_util.h"

namespace wick::data {
namespace {

using wick::testing::expect_error;
using wick::testing::source_path;

std::string digits_path() { return source_path("tests/fixtures/tfrecord/digits.tfrecord"); }

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// A file under the test's temporary directory, removed at the end of the test.
class TempFile {
 public:
  explicit TempFile(const std::string& name)
      : path_(::testing::TempDir() + "wick_records_" + std::to_string(getpid()) + "_" + name) {}
  ~TempFile() {
    std::remove(path_.c_str());
    std::remove((path_ + ".idx").c_str());
  }
  const std::string& path() const { return path_; }
  void write(const std::string& bytes) const {
    std::ofstream(path_, std::ios::binary | std::ios::trunc) << bytes;
  }

 private:
  std::string path_;
};

TEST(Crc32c, KnownValuesAndBothPathsAgree) {
  EXPECT_EQ(crc32c("123456789", 9), 0xE3069283u);
  std::string zeros(32, '\0');
  EXPECT_EQ(crc32c(zeros.data(), zeros.size()), 0x8A9136AAu);
  std::mt19937 rng(1);
  std::string data(1000, '\0');
  for (char& c : data) c = static_cast<char>(rng());
  for (size_t start : {0, 1, 3, 7}) {
    for (size_t size : {0, 1, 7, 8, 9, 63, 500, 993}) {
      uint32_t whole = crc32c(data.data() + start, size);
      EXPECT_EQ(whole, crc32c_extend_tables(0, data.data() + start, size)) << start << " " << size;
      size_t half = size / 2;
      EXPECT_EQ(whole, crc32c_extend(crc32c(data.data() + start, half), data.data() + start + half,
                                     size - half));
    }
  }
  for (uint32_t v : {0u, 1u, 0xE3069283u, 0xFFFFFFFFu}) EXPECT_EQ(unmask_crc(mask_crc(v)), v);
}

TEST(TFRecord, WritesAndReadsBackWithAnIndex) {
  TempFile file("roundtrip.tfrecord");
  std::vector<std::string> payloads = {"", "a", std::string(3000, 'z'), "\x00\x01\x02"};
  {
    TFRecordWriter writer(file.path());
    for (const std::string& p : payloads) writer.write(p);
    EXPECT_EQ(writer.records_written(), 4);
    writer.close();
  }
  TFRecordFile reader(file.path());
  std::string record;
  for (const std::string& p : payloads) {
    ASSERT_TRUE(reader.next(record));
    EXPECT_EQ(record, p);
  }
  EXPECT_FALSE(reader.next(record));
  std::vector<RecordLocation> index = reader.record_index();
  ASSERT_EQ(index.size(), 4u);
  EXPECT_EQ(reader.read(index[2], 2), payloads[2]);
  write_record_index(file.path() + ".idx", index);
  EXPECT_EQ(read_record_index(file.path() + ".idx", reader), index);
}

TEST(TFRecord, DamagedFilesNameTheRecord) {
  std::string digits = read_bytes(digits_path());
  TFRecordFile original(digits_path());
  RecordLocation third = original.record_index()[3];
  auto read_all = [](const std::string& path) {
    TFRecordFile f(path);
    std::string record;
    while (f.next(record)) {
    }
  };
  TempFile file("damaged.tfrecord");
  std::string flipped = digits;
  flipped[third.offset + 12 + 50] ^= 1;
  file.write(flipped);
  expect_error<std::runtime_error>([&] { read_all(file.path()); },
                                   "record 3 at byte " + std::to_string(third.offset) +
                                       " is corrupt: its data checksum does not match");
  flipped = digits;
  flipped[third.offset + 7] ^= 0x20;
  file.write(flipped);
  expect_error<std::runtime_error>([&] { read_all(file.path()); }, "has a corrupt length");
  file.write(digits.substr(0, digits.size() - 3));
  expect_error<std::runtime_error>([&] { read_all(file.path()); }, "is truncated: record 63");
  expect_error<std::runtime_error>([&] { TFRecordFile(file.path()).record_index(); },
                                   "is truncated: record 63");
  expect_error<std::runtime_error>([&] { TFRecordFile("/nonexistent/x.tfrecord"); },
                                   "cannot open /nonexistent/x.tfrecord");
}

TEST(TFRecord, ExampleEncodingMatchesTensorFlowsBytes) {
  TFRecordFile reader(digits_path());
  std::string record;
  int64_t count = 0;
  while (reader.next(record)) {
    Features features = decode_example(record.data(), record.size());
    ASSERT_EQ(features.size(), 2u);
    EXPECT_EQ(features.at("image").kind, Feature::Kind::kBytes);
    EXPECT_EQ(features.at("image").bytes_list.at(0).size(), 784u);
    EXPECT_EQ(encode_example(features), record);
    ++count;
  }
  EXPECT_EQ(count, 64);
  Features awkward = {{"ab", Feature::int64s({-1, 0, INT64_MAX})},
                      {"a", Feature::floats({0.5f, -0.0f})},
                      {"", Feature::bytes({"", "x"})},
                      {"unset", Feature{}}};
  std::string encoded = encode_example(awkward);
  EXPECT_EQ(decode_example(encoded.data(), encoded.size()), awkward);
  expect_error<std::runtime_error>([] { decode_example("\x0a\x05\x0a", 3); },
                                   "[tf.train.Example] Example at byte 2 has a field of 5 bytes");
}

TEST(TFRecord, ImageDatasetGivesTheMnistDigits) {
  MNIST mnist(source_path("assets/mnist"), /*train=*/false);
  auto dataset = std::make_shared<TFRecordDataset>(std::vector<std::string>{digits_path()},
                                                   TFRecordImageFormat{Shape{1, 28, 28}});
  ASSERT_EQ(dataset->size(), 64);
  DataLoaderOptions options;
  options.batch_size = 10;
  options.num_workers = 2;
  DataLoader loader(dataset, options);
  int64_t seen = 0;
  for (Batch& b : loader) {
    for (int64_t i = 0; i < b.input.size(0); ++i, ++seen) {
      Example expected = mnist.get(seen);
      EXPECT_TRUE(equal(b.input.select(0, i), expected.input));
      EXPECT_EQ(b.target.select(0, i).item<int64_t>(), expected.target.item<int64_t>());
    }
  }
  EXPECT_EQ(seen, 64);
  expect_error<std::runtime_error>(
      [&] {
        TFRecordDataset wrong({digits_path()}, TFRecordImageFormat{Shape{3, 32, 32}});
        wrong.get(0);
      },
      "record 0: feature \"image\" must hold 3072 pixels");
  expect_error<std::out_of_range>([&] { dataset->get(64); }, "TFRecordDataset");
}

TEST(LoaderTimeline, RecordsWhereEachBatchsTimeWent) {
  auto dataset = std::make_shared<TFRecordDataset>(std::vector<std::string>{digits_path()},
                                                   TFRecordImageFormat{Shape{1, 28, 28}});
  for (int64_t workers : {0, 2}) {
    auto timeline = std::make_shared<LoaderTimeline>();
    DataLoaderOptions options;
    options.batch_size = 16;
    options.num_workers = workers;
    options.timeline = timeline;
    DataLoader loader(dataset, options);
    for (Batch& b : loader) {
      LoaderSpan step("train step");  // the training loop's own span lands on the consumer lane
      (void)b;
    }
    std::map<std::string, int64_t> counts;
    for (const LoaderEvent& e : timeline->events()) {
      ++counts[e.stage];
      EXPECT_LE(e.start_us, e.end_us);
      EXPECT_GE(e.batch, 0);
      if (e.stage == "train step" || e.stage == "wait") {
        EXPECT_EQ(e.lane, 0);
      }
      if (workers > 0 && e.stage == "decode") {
        EXPECT_GE(e.lane, 1);
      }
    }
    EXPECT_EQ(counts["read"], 64) << workers;
    EXPECT_EQ(counts["decode"], 64);
    EXPECT_EQ(counts["build batch"], 4);
    EXPECT_EQ(counts["collate"], 4);
    EXPECT_EQ(counts["train step"], 4);
    EXPECT_EQ(counts["wait"], workers > 0 ? 4 : 0);
    EXPECT_NE(timeline->summary().find("decode"), std::string::npos);
  }
  // Outside a loader nothing is recorded, and a full timeline counts what it dropped.
  { LoaderSpan alone("read"); }
  LoaderTimeline small(2);
  LoaderTimelineScope scope(&small, 0, 0);
  for (int i = 0; i < 5; ++i) LoaderSpan s("x");
  EXPECT_EQ(small.events().size(), 2u);
  EXPECT_EQ(small.dropped(), 3);
  TempFile svg("timeline.svg"), trace("timeline.json");
  small.write_svg(svg.path(), "two spans");
  small.write_chrome_trace(trace.path());
  EXPECT_NE(read_bytes(svg.path()).find("<svg"), std::string::npos);
  EXPECT_NE(read_bytes(trace.path()).find("\"traceEvents\""), std::string::npos);
}

}  // namespace
}  // namespace wick::data
