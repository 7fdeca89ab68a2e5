#include "data/records/example_proto.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "core/error.h"

namespace wick::data {

namespace {

constexpr const char* kOp = "tf.train.Example";

// Protobuf wire types (the low 3 bits of a field's tag).
enum WireType : uint32_t { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5 };

void put_varint(std::string& out, uint64_t value) {
  while (value >= 0x80) {
    out.push_back(static_cast<char>((value & 0x7F) | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<char>(value));
}

void put_tag(std::string& out, uint32_t field, WireType type) {
  put_varint(out, field << 3 | type);
}

void put_bytes_field(std::string& out, uint32_t field, const std::string& bytes) {
  put_tag(out, field, kLengthDelimited);
  put_varint(out, bytes.size());
  out += bytes;
}

std::string encode_feature(const Feature& f) {
  std::string list;
  switch (f.kind) {
    case Feature::Kind::kNone:
      return {};
    case Feature::Kind::kBytes:
      for (const std::string& v : f.bytes_list) put_bytes_field(list, 1, v);
      break;
    case Feature::Kind::kFloat:
      if (!f.float_list.empty()) {  // proto3 omits an empty packed field
        std::string packed(f.float_list.size() * 4, '\0');
        std::memcpy(packed.data(), f.float_list.data(), packed.size());  // little-endian IEEE
        put_bytes_field(list, 1, packed);
      }
      break;
    case Feature::Kind::kInt64:
      if (!f.int64_list.empty()) {
        std::string packed;
        for (int64_t v : f.int64_list) put_varint(packed, static_cast<uint64_t>(v));
        put_bytes_field(list, 1, packed);
      }
      break;
  }
  std::string feature;
  put_bytes_field(feature, static_cast<uint32_t>(f.kind), list);  // field number == Kind value
  return feature;
}

// A bounds-checked reader over one message's bytes; `what` names the message for errors.
class Reader {
 public:
  Reader(const uint8_t* begin, const uint8_t* end, const char* what, size_t base)
      : p_(begin), begin_(begin), end_(end), what_(what), base_(base) {}

  bool done() const { return p_ == end_; }
  size_t offset() const { return base_ + static_cast<size_t>(p_ - begin_); }

  uint64_t varint() {
    uint64_t value = 0;
    for (int shift = 0; shift < 70; shift += 7) {
      check(p_ < end_, "ends inside a varint");
      uint8_t byte = *p_++;
      check(shift < 63 || byte <= 1, "has a varint longer than 64 bits");
      value |= uint64_t{byte & 0x7Fu} << shift;
      if (byte < 0x80) return value;
    }
    fail("has a varint longer than 10 bytes");
  }
  // A length-delimited field's body, as a reader of its own.
  Reader sub(const char* what) {
    uint64_t length = varint();
    check(length <= static_cast<uint64_t>(end_ - p_),
          "has a field of " + std::to_string(length) + " bytes that runs past the end");
    Reader inner(p_, p_ + length, what, offset());
    p_ += length;
    return inner;
  }
  uint32_t fixed32() {
    check(end_ - p_ >= 4, "ends inside a 32-bit field");
    uint32_t v;
    std::memcpy(&v, p_, 4);
    p_ += 4;
    return v;
  }
  void skip(uint32_t type) {
    switch (type) {
      case kVarint:
        varint();
        return;
      case kFixed64:
        check(end_ - p_ >= 8, "ends inside a 64-bit field");
        p_ += 8;
        return;
      case kLengthDelimited:
        sub(what_);
        return;
      case kFixed32:
        fixed32();
        return;
      default:
        fail("has a field of wire type " + std::to_string(type) +
             " (groups and unknown wire types are not valid here)");
    }
  }
  // The next field's number and wire type.
  std::pair<uint32_t, uint32_t> tag() {
    uint64_t tag = varint();
    check(tag >> 3 != 0 && tag >> 3 <= 0x1FFFFFFF, "has field number 0 or one out of range");
    return {static_cast<uint32_t>(tag >> 3), static_cast<uint32_t>(tag & 7)};
  }
  void expect(uint32_t type, uint32_t wanted, uint32_t field) {
    check(type == wanted, "field " + std::to_string(field) + " has wire type " +
                              std::to_string(type) + ", expected " + std::to_string(wanted));
  }
  const uint8_t* data() const { return p_; }
  size_t remaining() const { return static_cast<size_t>(end_ - p_); }
  void check(bool ok, const std::string& problem) const {
    if (!ok) fail(problem);
  }
  [[noreturn]] void fail(const std::string& problem) const {
    throw std::runtime_error(error_message(kOp, what_, " at byte ", offset(), " ", problem));
  }

 private:
  const uint8_t* p_;
  const uint8_t* begin_;
  const uint8_t* end_;
  const char* what_;
  size_t base_;
};

void decode_list(Reader list, Feature& f) {
  while (!list.done()) {
    auto [field, type] = list.tag();
    if (field != 1) {
      list.skip(type);
      continue;
    }
    if (f.kind == Feature::Kind::kBytes) {
      list.expect(type, kLengthDelimited, field);
      Reader value = list.sub("BytesList");
      f.bytes_list.emplace_back(reinterpret_cast<const char*>(value.data()), value.remaining());
    } else if (f.kind == Feature::Kind::kFloat) {
      if (type == kFixed32) {  // unpacked: one float per field
        uint32_t bits = list.fixed32();
        float v;
        std::memcpy(&v, &bits, 4);
        f.float_list.push_back(v);
        continue;
      }
      list.expect(type, kLengthDelimited, field);
      Reader packed = list.sub("FloatList");
      packed.check(packed.remaining() % 4 == 0, "has a packed float list whose length " +
                                                    std::to_string(packed.remaining()) +
                                                    " is not a multiple of 4");
      size_t n = packed.remaining() / 4, old = f.float_list.size();
      if (n == 0) continue;  // an empty packed field (memcpy into a null data() is undefined)
      f.float_list.resize(old + n);
      std::memcpy(f.float_list.data() + old, packed.data(), n * 4);
    } else {
      if (type == kVarint) {
        f.int64_list.push_back(static_cast<int64_t>(list.varint()));
        continue;
      }
      list.expect(type, kLengthDelimited, field);
      Reader packed = list.sub("Int64List");
      while (!packed.done()) f.int64_list.push_back(static_cast<int64_t>(packed.varint()));
    }
  }
}

Feature decode_feature(Reader r) {
  Feature f;
  while (!r.done()) {
    auto [field, type] = r.tag();
    if (field < 1 || field > 3) {
      r.skip(type);
      continue;
    }
    r.expect(type, kLengthDelimited, field);
    // A oneof set twice keeps the last; a list message repeated for the same kind merges.
    auto kind = static_cast<Feature::Kind>(field);
    if (kind != f.kind) f = Feature{kind, {}, {}, {}};
    decode_list(r.sub(field == 1 ? "BytesList" : field == 2 ? "FloatList" : "Int64List"), f);
  }
  return f;
}

}  // namespace

Feature Feature::bytes(std::vector<std::string> v) { return {Kind::kBytes, std::move(v), {}, {}}; }
Feature Feature::floats(std::vector<float> v) { return {Kind::kFloat, {}, std::move(v), {}}; }
Feature Feature::int64s(std::vector<int64_t> v) { return {Kind::kInt64, {}, {}, std::move(v)}; }

bool Feature::operator==(const Feature& o) const {
  return kind == o.kind && bytes_list == o.bytes_list && int64_list == o.int64_list &&
         float_list.size() == o.float_list.size() &&
         // Bit patterns, not ==: NaN equals itself here and -0.0 differs from 0.0. (memcmp of
         // an empty vector's null data() is undefined, hence the empty() test.)
         (float_list.empty() ||
          std::memcmp(float_list.data(), o.float_list.data(), float_list.size() * 4) == 0);
}

// Python's protobuf (upb, what tf.train.Example.SerializeToString(deterministic=True) runs)
// orders map keys by their bytes, except that of two keys where one is a prefix of the other the
// longer comes first ("ab" before "a"; C++ protobuf puts "a" first). Matching it makes wick's
// files byte-identical to those TensorFlow's Python API writes; readers do not care.
bool upb_key_order(const std::string& a, const std::string& b) {
  size_t common = std::min(a.size(), b.size());
  int cmp = std::memcmp(a.data(), b.data(), common);
  if (cmp != 0) return cmp < 0;
  return a.size() > b.size();
}

std::string encode_example(const Features& features) {
  std::vector<const Features::value_type*> entries;
  for (const auto& entry : features) entries.push_back(&entry);
  std::sort(entries.begin(), entries.end(),
            [](auto* a, auto* b) { return upb_key_order(a->first, b->first); });
  std::string map;
  for (const auto* entry : entries) {
    std::string bytes;
    put_bytes_field(bytes, 1, entry->first);
    put_bytes_field(bytes, 2, encode_feature(entry->second));
    put_bytes_field(map, 1, bytes);
  }
  // The features field is written even when empty, as tf.train.Example(features=...) sets it.
  std::string example;
  put_bytes_field(example, 1, map);
  return example;
}

Features decode_example(const void* data, size_t size) {
  const auto* begin = static_cast<const uint8_t*>(data);
  Reader example(begin, begin + size, "Example", 0);
  Features features;
  while (!example.done()) {
    auto [field, type] = example.tag();
    if (field != 1) {
      example.skip(type);
      continue;
    }
    example.expect(type, kLengthDelimited, field);
    Reader map = example.sub("Features");  // a repeated message field merges: keep adding
    while (!map.done()) {
      auto [map_field, map_type] = map.tag();
      if (map_field != 1) {
        map.skip(map_type);
        continue;
      }
      map.expect(map_type, kLengthDelimited, map_field);
      Reader entry = map.sub("feature map entry");
      std::string key;
      Feature value;
      while (!entry.done()) {
        auto [entry_field, entry_type] = entry.tag();
        if (entry_field == 1 || entry_field == 2)
          entry.expect(entry_type, kLengthDelimited, entry_field);
        if (entry_field == 1) {
          Reader k = entry.sub("feature name");
          key.assign(reinterpret_cast<const char*>(k.data()), k.remaining());
        } else if (entry_field == 2) {
          value = decode_feature(entry.sub("Feature"));
        } else {
          entry.skip(entry_type);
        }
      }
      features[key] = std::move(value);
    }
  }
  return features;
}

}  // namespace wick::data
