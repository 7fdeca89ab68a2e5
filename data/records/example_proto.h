// tf.train.Example, the record payload TensorFlow's input pipelines use, encoded and decoded in
// protobuf's wire format (tensorflow/core/example/example.proto and feature.proto):
//
//   message Example   { Features features = 1; }
//   message Features  { map<string, Feature> feature = 1; }
//   message Feature   { oneof kind { BytesList bytes_list = 1; FloatList float_list = 2;
//                                    Int64List int64_list = 3; } }
//   message BytesList { repeated bytes value = 1; }
//   message FloatList { repeated float value = 1 [packed = true]; }
//   message Int64List { repeated int64 value = 1 [packed = true]; }
//
// Three small messages do not justify a protobuf dependency in the data loader (the ONNX exporter,
// with hundreds of fields, does use the protobuf library). Encoding is protobuf's deterministic
// form - map entries sorted, repeated scalars packed - so wick writes the same bytes as
// TensorFlow's SerializeToString(deterministic=True) from Python. Decoding accepts what any
// protobuf writer may produce: unpacked repeated scalars, fields in any order, a repeated map key
// (the last wins), unknown fields (skipped). Corrupt input is a std::runtime_error naming the
// message and byte.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace wick::data {

struct Feature {
  enum class Kind { kNone, kBytes, kFloat, kInt64 };  // kNone: the oneof is unset
  Kind kind = Kind::kNone;
  std::vector<std::string> bytes_list;
  std::vector<float> float_list;
  std::vector<int64_t> int64_list;

  static Feature bytes(std::vector<std::string> v);
  static Feature floats(std::vector<float> v);
  static Feature int64s(std::vector<int64_t> v);
  bool operator==(const Feature& o) const;
};

using Features = std::map<std::string, Feature>;

std::string encode_example(const Features& features);
Features decode_example(const void* data, size_t size);

}  // namespace wick::data
