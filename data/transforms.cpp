#include "data/transforms.h"

#include <cmath>
#include <utility>

#include "core/error.h"
#include "core/ops.h"
#include "data/loader_timeline.h"

namespace wick::data {

namespace {

// splitmix64's finaliser (Steele et al., 2014): a bijection that spreads every input bit over
// the whole word, so nearby (seed, epoch, index) triples give unrelated Generator seeds.
uint64_t mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// A uniform double in [0, 1) and a uniform integer in [low, high), drawn with wick's own random
// ops so that a transform written by a student looks the same.
double uniform(Generator& generator) { return rand(Shape{}, kFloat64, generator).item<double>(); }

int64_t uniform_int(Generator& generator, int64_t low, int64_t high) {
  return randint(low, high, Shape{}, {}, generator).item<int64_t>();
}

void check_image(const char* op, const Tensor& input, int64_t min_dims) {
  check_value(input.defined(), op, "expected an input tensor; got an undefined one");
  check_value(input.dim() >= min_dims, op, "expected an image with at least ", min_dims,
              " dims ([..., H, W]); got shape ", input.shape());
}

}  // namespace

uint64_t sample_generator_seed(const SampleSeed& s) {
  uint64_t h = mix(s.seed);
  h = mix(h ^ static_cast<uint64_t>(s.epoch));
  return mix(h ^ static_cast<uint64_t>(s.index));
}

Tensor apply_transform(const Transform& transform, const Tensor& input, const SampleSeed& s) {
  if (!transform) return input;
  LoaderSpan span("transform");
  Generator generator(sample_generator_seed(s));
  return transform(input, generator);
}

Normalize::Normalize(std::vector<double> mean, std::vector<double> std)
    : mean_(std::move(mean)), std_(std::move(std)) {
  check_value(!mean_.empty() && mean_.size() == std_.size(), "Normalize",
              "mean and std must be non-empty and of one length; got ", mean_.size(), " and ",
              std_.size(), " values");
  for (double s : std_) {
    check_value(s > 0 && std::isfinite(s), "Normalize", "std must be positive; got ", s);
  }
}

Tensor Normalize::operator()(const Tensor& input, Generator& /*generator*/) const {
  check_image("Normalize", input, mean_.size() == 1 ? 0 : 3);
  check_type(input.is_floating_point(), "Normalize", "expected a floating-point image; got ",
             input.dtype());
  int64_t channels = static_cast<int64_t>(mean_.size());
  if (channels == 1) return (input - mean_[0]) / std_[0];
  check_value(input.size(-3) == channels, "Normalize", "expected ", channels,
              " channels (one per mean); got shape ", input.shape());
  // [C, 1, 1] broadcasts over H and W (and over any leading dims).
  TensorOptions options(input.dtype());
  Tensor mean = tensor(mean_, Shape{channels, 1, 1}, options);
  Tensor std = tensor(std_, Shape{channels, 1, 1}, options);
  return (input - mean) / std;
}

namespace {
Tensor zero_pad(const Tensor& input, int64_t padding) {
  if (padding == 0) return input;
  Shape shape = input.shape();
  shape[shape.size() - 2] += 2 * padding;
  shape[shape.size() - 1] += 2 * padding;
  Tensor padded = zeros(shape, input.dtype());
  padded.narrow(-2, padding, input.size(-2)).narrow(-1, padding, input.size(-1)).copy_(input);
  return padded;
}
}  // namespace

Pad::Pad(int64_t padding) : padding_(padding) {
  check_value(padding >= 0, "Pad", "padding must be non-negative; got ", padding);
}

Tensor Pad::operator()(const Tensor& input, Generator&) const {
  check_image("Pad", input, 2);
  return zero_pad(input, padding_);
}

RandomCrop::RandomCrop(int64_t size, int64_t padding) : size_(size), padding_(padding) {
  check_value(size > 0, "RandomCrop", "size must be positive; got ", size);
  check_value(padding >= 0, "RandomCrop", "padding must be non-negative; got ", padding);
}

Tensor RandomCrop::operator()(const Tensor& input, Generator& generator) const {
  check_image("RandomCrop", input, 2);
  int64_t height = input.size(-2) + 2 * padding_, width = input.size(-1) + 2 * padding_;
  check_value(size_ <= height && size_ <= width, "RandomCrop", "crop size ", size_,
              " is larger than the padded image (", height, " x ", width, "); got shape ",
              input.shape(), " with padding ", padding_);
  Tensor padded = zero_pad(input, padding_);
  // Draw the row first, then the column, as torchvision does.
  int64_t top = uniform_int(generator, 0, height - size_ + 1);
  int64_t left = uniform_int(generator, 0, width - size_ + 1);
  return padded.narrow(-2, top, size_).narrow(-1, left, size_).contiguous();
}

RandomHorizontalFlip::RandomHorizontalFlip(double p) : p_(p) {
  check_value(p >= 0 && p <= 1, "RandomHorizontalFlip", "p must be in [0, 1]; got ", p);
}

Tensor RandomHorizontalFlip::operator()(const Tensor& input, Generator& generator) const {
  check_image("RandomHorizontalFlip", input, 1);
  // Always draw, so the numbers later transforms see do not depend on this one's outcome.
  if (uniform(generator) >= p_) return input;
  int64_t width = input.size(-1);
  return input.index_select(-1, arange(width - 1, -1, -1));
}

Compose::Compose(std::vector<Transform> transforms) : transforms_(std::move(transforms)) {}

Tensor Compose::operator()(const Tensor& input, Generator& generator) const {
  Tensor x = input;
  for (const Transform& t : transforms_) {
    if (t) x = t(x, generator);
  }
  return x;
}

}  // namespace wick::data
